package secinterop

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	stock "github.com/colinmarc/hdfs/v2"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/minicluster"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/security/blocktoken"
)

// TestBlockAccessTokens runs a cluster with dfs.block.access.token.enable:
// the stock Go client writes and reads with the tokens the NameNode hands
// out; ops with a missing, forged, widened, expired or other block's token
// are answered ERROR_ACCESS_TOKEN; after the NameNode rolls its key, the
// DataNodes learn the new one from a heartbeat (DNA_ACCESSKEYUPDATE).
func TestBlockAccessTokens(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), DataNodes: 2, Conf: []conf.KeyValue{
		{Key: conf.DFSReplication, Value: "2"},
		{Key: conf.DFSHeartbeatInterval, Value: "1"},
		{Key: conf.DFSBlockAccessTokenEnable, Value: "true"},
		{Key: conf.DFSBlockAccessKeyUpdateInterval, Value: "4s"},
		{Key: conf.DFSBlockAccessTokenLifetime, Value: "3s"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	super := c.NameNode().SuperUser()
	sc, err := stock.NewClient(stock.ClientOptions{Addresses: []string{c.NameNodeAddr()}, User: super})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	data := make([]byte, 1<<20+777)
	rand.Read(data)
	w, err := sc.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := sc.ReadFile("/f"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("stock client read %d bytes: %v", len(got), err)
	}

	nn := ipc.NewClient(ipc.ClientConfig{Addresses: []string{c.NameNodeAddr()}, User: super,
		Protocol: "org.apache.hadoop.hdfs.protocol.ClientProtocol"})
	defer nn.Close()
	locate := func() *hdfs.LocatedBlockProto {
		t.Helper()
		var resp hdfs.GetBlockLocationsResponseProto
		if err := nn.Call(ctx, "getBlockLocations", &hdfs.GetBlockLocationsRequestProto{Src: proto.String("/f"),
			Offset: proto.Uint64(0), Length: proto.Uint64(1)}, &resp); err != nil {
			t.Fatal(err)
		}
		lb := resp.GetLocations().GetBlocks()[0]
		if lb.GetBlockToken().GetKind() != blocktoken.Kind {
			t.Fatalf("located block carries token kind %q", lb.GetBlockToken().GetKind())
		}
		return lb
	}
	send := func(lb *hdfs.LocatedBlockProto, op datatransfer.Op, m proto.Message) (hdfs.Status, string) {
		t.Helper()
		id := lb.GetLocs()[0].GetId()
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(id.GetIpAddr(), strconv.Itoa(int(id.GetXferPort()))), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if err := datatransfer.WriteOp(conn, op, m); err != nil {
			t.Fatal(err)
		}
		var resp hdfs.BlockOpResponseProto
		if err := datatransfer.ReadDelimited(bufio.NewReader(conn), 1<<20, &resp); err != nil {
			t.Fatal(err)
		}
		return resp.GetStatus(), resp.GetMessage()
	}
	read := func(lb *hdfs.LocatedBlockProto, tok *common.TokenProto) (hdfs.Status, string) {
		t.Helper()
		return send(lb, datatransfer.OpReadBlock, &hdfs.OpReadBlockProto{
			Header: &hdfs.ClientOperationHeaderProto{BaseHeader: &hdfs.BaseHeaderProto{Block: lb.GetB(), Token: tok},
				ClientName: proto.String("secinterop")},
			Offset: proto.Uint64(0), Len: proto.Uint64(100)})
	}
	lb := locate()
	if st, msg := read(lb, lb.GetBlockToken()); st != hdfs.Status_SUCCESS {
		t.Fatalf("read with the NameNode's token: %v %s", st, msg)
	}
	refused := func(name string, tok *common.TokenProto, b *hdfs.LocatedBlockProto, want string) {
		t.Helper()
		st, msg := read(b, tok)
		if st != hdfs.Status_ERROR_ACCESS_TOKEN || !strings.Contains(msg, want) {
			t.Errorf("%s: %v %q, want ERROR_ACCESS_TOKEN %q", name, st, msg, want)
		}
	}
	empty := &common.TokenProto{Identifier: []byte{}, Password: []byte{}, Kind: proto.String(""), Service: proto.String("")}
	refused("no token", empty, lb, "is missing")
	forged := proto.Clone(lb.GetBlockToken()).(*common.TokenProto)
	forged.Password[3] ^= 0x40
	refused("forged password", forged, lb, "doesn't have the correct token password")
	id, err := blocktoken.Unmarshal(lb.GetBlockToken().GetIdentifier())
	if err != nil {
		t.Fatal(err)
	}
	id.ExpiryDate += int64(time.Hour / time.Millisecond)
	longer := proto.Clone(lb.GetBlockToken()).(*common.TokenProto)
	longer.Identifier = id.Marshal()
	refused("lifetime stretched", longer, lb, "doesn't have the correct token password")
	other := proto.Clone(lb).(*hdfs.LocatedBlockProto)
	other.B.BlockId = proto.Uint64(lb.GetB().GetBlockId() + 1)
	refused("another block's token", lb.GetBlockToken(), other, "doesn't apply to block")

	// A read token does not let a client write, replace or checksum
	// another block.
	if st, msg := send(lb, datatransfer.OpWriteBlock, &hdfs.OpWriteBlockProto{
		Header: &hdfs.ClientOperationHeaderProto{BaseHeader: &hdfs.BaseHeaderProto{Block: lb.GetB(), Token: lb.GetBlockToken()},
			ClientName: proto.String("secinterop")},
		Stage: hdfs.OpWriteBlockProto_PIPELINE_SETUP_APPEND.Enum(), PipelineSize: proto.Uint32(1),
		MinBytesRcvd: proto.Uint64(0), MaxBytesRcvd: proto.Uint64(0), LatestGenerationStamp: proto.Uint64(lb.GetB().GetGenerationStamp()),
		RequestedChecksum: &hdfs.ChecksumProto{Type: hdfs.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(), BytesPerChecksum: proto.Uint32(512)},
	}); st != hdfs.Status_ERROR_ACCESS_TOKEN || !strings.Contains(msg, "doesn't have WRITE permission") {
		t.Errorf("write with a read token: %v %q", st, msg)
	}
	if st, msg := send(lb, datatransfer.OpReplaceBlock, &hdfs.OpReplaceBlockProto{
		Header: &hdfs.BaseHeaderProto{Block: lb.GetB(), Token: lb.GetBlockToken()}, DelHint: proto.String("x"),
		Source: lb.GetLocs()[1]}); st != hdfs.Status_ERROR_ACCESS_TOKEN || !strings.Contains(msg, "doesn't have REPLACE permission") {
		t.Errorf("replace with a read token: %v %q", st, msg)
	}
	if st, msg := send(other, datatransfer.OpBlockChecksum, &hdfs.OpBlockChecksumProto{
		Header: &hdfs.BaseHeaderProto{Block: other.GetB(), Token: lb.GetBlockToken()}}); st != hdfs.Status_ERROR_ACCESS_TOKEN {
		t.Errorf("checksum of another block: %v %q", st, msg)
	}

	// Expiry: the token lives 3 s.
	time.Sleep(3500 * time.Millisecond)
	refused("expired", lb.GetBlockToken(), lb, "is expired.")

	// The key rolls every 4 s; a fresh token (new key) works once the
	// DataNodes have had their key update.
	deadline := time.Now().Add(30 * time.Second)
	for {
		fresh := locate()
		fid, _ := blocktoken.Unmarshal(fresh.GetBlockToken().GetIdentifier())
		st, msg := read(fresh, fresh.GetBlockToken())
		if fid.KeyID != id.KeyID && st == hdfs.Status_SUCCESS {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no read with a rolled key within 30 s: key %d (first %d): %v %s", fid.KeyID, id.KeyID, st, msg)
		}
		time.Sleep(300 * time.Millisecond)
	}
	// And the stock client still reads and writes.
	if got, err := sc.ReadFile("/f"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("stock client read after the roll: %d bytes, %v", len(got), err)
	}

	// A DataNode's own transfer (re-replication to a new node) carries a
	// token the DataNode issued with the current key.
	if err := c.StartDataNode(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := nn.Call(ctx, "setReplication", &hdfs.SetReplicationRequestProto{Src: proto.String("/f"), Replication: proto.Uint32(3)},
		&hdfs.SetReplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(60 * time.Second)
	for len(locate().GetLocs()) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("no third replica within 60 s: %d", len(locate().GetLocs()))
		}
		time.Sleep(300 * time.Millisecond)
	}
}
