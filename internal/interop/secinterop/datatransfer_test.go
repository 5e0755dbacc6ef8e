package secinterop

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	stock "github.com/colinmarc/hdfs/v2"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/minicluster"
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
			fsys, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, User: c.NameNode().SuperUser(),
				DataTransferProtection: prot})
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
