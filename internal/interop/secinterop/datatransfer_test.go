package secinterop

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	stock "github.com/colinmarc/hdfs/v2"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/client/webhdfs"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/minicluster"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// TestDataTransferProtection runs a cluster with block access tokens
// and each data transfer protection: the stock Go client and this
// module's client write (a two-DataNode pipeline, so the DataNodes make
// the handshake with each other too) and read a file; with privacy or
// encryption, a capture of the client's traffic to the DataNodes holds
// none of the file's plaintext; a client that makes no handshake, or
// asks for a weaker level, is refused.
func TestDataTransferProtection(t *testing.T) {
	if testing.Short() {
		t.Skip("runs clusters")
	}
	for _, tc := range []struct {
		name      string
		keys      []conf.KeyValue
		stockProt string // the stock client's DataTransferProtection
		ours      client.Options
		encrypted bool
	}{
		{"authentication", []conf.KeyValue{{Key: conf.DFSDataTransferProtection, Value: "authentication"}},
			"authentication", client.Options{DataTransferProtection: "authentication"}, false},
		{"integrity", []conf.KeyValue{{Key: conf.DFSDataTransferProtection, Value: "integrity"}},
			"integrity", client.Options{DataTransferProtection: "integrity"}, false},
		{"privacy", []conf.KeyValue{{Key: conf.DFSDataTransferProtection, Value: "privacy"}},
			"privacy", client.Options{DataTransferProtection: "privacy"}, true},
		{"privacy with AES", []conf.KeyValue{{Key: conf.DFSDataTransferProtection, Value: "privacy"},
			{Key: conf.DFSEncryptDataTransferCipherSuites, Value: "AES/CTR/NoPadding"}},
			"privacy", client.Options{DataTransferProtection: "privacy", DataTransferCipherSuites: "AES/CTR/NoPadding"}, true},
		{"encrypt data transfer", []conf.KeyValue{{Key: conf.DFSEncryptDataTransfer, Value: "true"},
			{Key: conf.DFSEncryptDataTransferCipherSuites, Value: "AES/CTR/NoPadding"}},
			"privacy", client.Options{EncryptDataTransfer: true, DataTransferCipherSuites: "AES/CTR/NoPadding"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			keys := append([]conf.KeyValue{
				{Key: conf.DFSReplication, Value: "2"},
				{Key: conf.DFSBlockAccessTokenEnable, Value: "true"},
			}, tc.keys...)
			c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), DataNodes: 2, Conf: keys})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			super := c.NameNode().SuperUser()
			data := make([]byte, 1<<20+4321)
			rand.Read(data)
			marker := []byte("plaintext marker that must not travel in the clear")
			for i := 0; i+len(marker) < len(data); i += 8192 {
				copy(data[i:], marker)
			}

			cap1 := &testtool.Capture{}
			sc, err := stock.NewClient(stock.ClientOptions{Addresses: []string{c.NameNodeAddr()}, User: super,
				DataTransferProtection: tc.stockProt, DatanodeDialFunc: cap1.Dial})
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			w, err := sc.Create("/stock")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(data); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got, err := sc.ReadFile("/stock"); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("stock client read %d bytes: %v", len(got), err)
			}
			if cap1.Len() < len(data) {
				t.Fatalf("the capture holds %d bytes, less than the file", cap1.Len())
			}
			if leaked := cap1.Contains(marker); leaked == tc.encrypted {
				t.Errorf("stock client: plaintext in the capture: %v, want %v", leaked, !tc.encrypted)
			}

			opts := tc.ours
			opts.Addresses, opts.User = []string{c.NameNodeAddr()}, super
			fsys, err := client.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer fsys.Close()
			if err := fsys.WriteFile(ctx, "/ours", data, false); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{"/ours", "/stock"} {
				if got, err := fsys.ReadFile(ctx, p); err != nil || !bytes.Equal(got, data) {
					t.Fatalf("our client read %s: %d bytes: %v", p, len(got), err)
				}
			}
			if _, err := fsys.Checksum(ctx, "/stock"); err != nil {
				t.Errorf("checksum: %v", err)
			}

			if tc.name == "privacy" {
				// Re-replication: the NameNode has the DataNode holding
				// the only replica transfer it to the other, which makes
				// the handshake as a client (DNA_TRANSFER).
				w, err := fsys.CreateFile(ctx, "/one", client.CreateOptions{Replication: 1, Perm: 0o644})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.Write(data[:100000]); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				// WebHDFS: the DataNode's own client makes the handshake.
				wfs, err := webhdfs.New("webhdfs://"+c.NameNode().HTTPAddr().String(), super)
				if err != nil {
					t.Fatal(err)
				}
				if err := wfs.Create(ctx, "/web", bytes.NewReader(data[:200000]), webhdfs.CreateOptions{}); err != nil {
					t.Fatalf("WebHDFS create under privacy: %v", err)
				}
				rc, err := wfs.Open(ctx, "/web", 0, -1)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(rc)
				rc.Close()
				if err != nil || !bytes.Equal(got, data[:200000]) {
					t.Fatalf("WebHDFS read under privacy: %d bytes, %v", len(got), err)
				}
				if _, err := fsys.SetReplication(ctx, "/one", 2); err != nil {
					t.Fatal(err)
				}
				deadline := time.Now().Add(30 * time.Second)
				for {
					locs, err := fsys.BlockLocations(ctx, "/one", 0, 1)
					if err == nil && len(locs) == 1 && len(locs[0].Hosts) == 2 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("re-replication under privacy: %v %v", locs, err)
					}
					time.Sleep(200 * time.Millisecond)
				}
			}

			if tc.name == "encrypt data transfer" {
				// A client configured with dfs.data.transfer.protection
				// only follows the NameNode's server defaults and uses a
				// data encryption key.
				other, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, User: super, DataTransferProtection: "privacy"})
				if err != nil {
					t.Fatal(err)
				}
				defer other.Close()
				if got, err := other.ReadFile(ctx, "/stock"); err != nil || !bytes.Equal(got, data) {
					t.Fatalf("a client with protection only, against an encrypting cluster: %d bytes, %v", len(got), err)
				}
			}

			// Refusals: no handshake at all; a weaker level. (The reader
			// would try the replicas again for a while: a short deadline.)
			rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
			defer rcancel()
			plain, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, User: super})
			if err != nil {
				t.Fatal(err)
			}
			defer plain.Close()
			if _, err := plain.ReadFile(rctx, "/stock"); err == nil {
				t.Error("a client without the SASL handshake read the file")
			}
			if tc.name == "privacy" {
				weak, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, User: super, DataTransferProtection: "authentication"})
				if err != nil {
					t.Fatal(err)
				}
				defer weak.Close()
				if _, err := weak.ReadFile(rctx, "/stock"); err == nil {
					t.Errorf("a client accepting only authentication: %v", err)
				}
			}
		})
	}
}

// TestDataTransferNoHandshakeRefused sends an op without the handshake
// to a DataNode that requires it: the DataNode closes the connection
// without serving it.
func TestDataTransferNoHandshakeRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), DataNodes: 1, Conf: []conf.KeyValue{
		{Key: conf.DFSBlockAccessTokenEnable, Value: "true"},
		{Key: conf.DFSDataTransferProtection, Value: "integrity"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.DataNodes()[0].XferAddr().String()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	req := &hdfs.OpBlockChecksumProto{Header: &hdfs.BaseHeaderProto{Block: &hdfs.ExtendedBlockProto{PoolId: new(string), BlockId: new(uint64), GenerationStamp: new(uint64)}}}
	if err := datatransfer.WriteOp(conn, datatransfer.OpBlockChecksum, req); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(conn)
	var ne net.Error
	if len(b) != 0 || (err != nil && errors.As(err, &ne) && ne.Timeout()) {
		t.Errorf("the DataNode answered %d bytes (%v) to an op without the handshake; want the connection closed", len(b), err)
	}
}

// TestExpiredTokenRefetched opens a file, lets the block tokens the
// NameNode gave with its locations expire, then reads: the DataNode
// refuses the token (in the SASL handshake with protection on, with
// ERROR_ACCESS_TOKEN without), and the reader asks the NameNode for the
// locations again and reads with the new token.
func TestExpiredTokenRefetched(t *testing.T) {
	if testing.Short() {
		t.Skip("runs clusters")
	}
	for _, prot := range []string{"", "privacy"} {
		t.Run("protection="+prot, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			keys := []conf.KeyValue{
				{Key: conf.DFSBlockAccessTokenEnable, Value: "true"},
				{Key: conf.DFSBlockAccessTokenLifetime, Value: "1s"},
			}
			if prot != "" {
				keys = append(keys, conf.KeyValue{Key: conf.DFSDataTransferProtection, Value: prot})
			}
			c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), DataNodes: 1, Conf: keys})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// A retry window far beyond the test's deadline: only the
			// reader's immediate refetch of a refused token can finish
			// the read in time (its ordinary retry rounds would wait).
			fsys, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, User: c.NameNode().SuperUser(),
				DataTransferProtection: prot, RetryWindowBase: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			defer fsys.Close()
			data := bytes.Repeat([]byte("token"), 100000)
			if err := fsys.WriteFile(ctx, "/f", data, false); err != nil {
				t.Fatal(err)
			}
			r, err := fsys.Open(ctx, "/f")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			time.Sleep(1500 * time.Millisecond) // the tokens of the open expire
			got, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read after the token expired: %d bytes, %v", len(got), err)
			}
		})
	}
}

// TestVisibleLengthBlockToken: with block tokens on (SIMPLE
// authentication), ClientDatanodeProtocol's getReplicaVisibleLength takes
// the block token as the connection's credential (SASL TOKEN, offered
// beside SIMPLE as Hadoop's DataNode does) and checks it: the block's own
// token is answered, no token or another block's token refused. Our
// reader of a file being written gets the DataNode's visible length.
func TestVisibleLengthBlockToken(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), DataNodes: 1, Conf: []conf.KeyValue{
		{Key: conf.DFSBlockAccessTokenEnable, Value: "true"},
		{Key: conf.DFSBlockSize, Value: "1m"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	super := c.NameNode().SuperUser()
	fsys, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, User: super})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	data := bytes.Repeat([]byte("v"), 1<<20+5000) // two blocks
	if err := fsys.WriteFile(ctx, "/f", data, false); err != nil {
		t.Fatal(err)
	}
	nn := ipc.NewClient(ipc.ClientConfig{Addresses: []string{c.NameNodeAddr()}, User: super, Protocol: "org.apache.hadoop.hdfs.protocol.ClientProtocol"})
	defer nn.Close()
	var resp hdfs.GetBlockLocationsResponseProto
	if err := nn.Call(ctx, "getBlockLocations", &hdfs.GetBlockLocationsRequestProto{Src: proto.String("/f"),
		Offset: proto.Uint64(0), Length: proto.Uint64(uint64(len(data)))}, &resp); err != nil {
		t.Fatal(err)
	}
	blocks := resp.GetLocations().GetBlocks()
	if len(blocks) != 2 {
		t.Fatalf("%d blocks", len(blocks))
	}
	dn := c.DataNodes()[0].IPCAddr().String()
	const cdp = "org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol"
	call := func(tok *common.TokenProto) (int64, error) {
		cfg := ipc.ClientConfig{Addresses: []string{dn}, User: super, Protocol: cdp}
		if tok != nil {
			cfg.Token, cfg.TokenUser = tok, super
		}
		cl := ipc.NewClient(cfg)
		defer cl.Close()
		var r hdfs.GetReplicaVisibleLengthResponseProto
		err := cl.Call(ctx, "getReplicaVisibleLength", &hdfs.GetReplicaVisibleLengthRequestProto{Block: blocks[0].GetB()}, &r)
		return int64(r.GetLength()), err
	}
	if n, err := call(blocks[0].GetBlockToken()); err != nil || n != 1<<20 {
		t.Errorf("with the block's token: %d, %v", n, err)
	}
	if _, err := call(nil); err == nil || !strings.Contains(err.Error(), "BlockTokenIdentifier") {
		t.Errorf("without a token: %v", err)
	}
	if _, err := call(blocks[1].GetBlockToken()); err == nil || !strings.Contains(err.Error(), "doesn't apply to block") {
		t.Errorf("with another block's token: %v", err)
	}

	// A reader of a file being written asks the DataNode for the length
	// of the last block (past what the NameNode knows).
	w, err := fsys.CreateFile(ctx, "/uc", client.CreateOptions{Replication: 1, Perm: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write(data[:300000]); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	// The NameNode hears of the block's length at its first flush only.
	if _, err := w.Write(data[300000:500000]); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := fsys.Open(ctx, "/uc")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != 500000 {
		t.Errorf("reader of the file being written sees %d bytes, want 500000 (the DataNode's visible length)", r.Size())
	}
}
