package namenode

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// startWith is startForTest with extra configuration.
func startWith(t *testing.T, kvs ...conf.KeyValue) (*NameNode, *ipc.Client) {
	t.Helper()
	kvs = append([]conf.KeyValue{
		{Key: conf.DFSNameNodeNameDir, Value: filepath.Join(t.TempDir(), "name")},
		{Key: conf.DFSNameNodeRPCAddress, Value: "127.0.0.1:0"},
		{Key: conf.DFSNameNodeHTTPAddress, Value: "127.0.0.1:0"},
	}, kvs...)
	cfg, err := ConfigFrom(conf.Defaults().With(kvs...))
	if err != nil {
		t.Fatal(err)
	}
	if err := Format(context.Background(), cfg, Deps{}, FormatOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nn, err := Start(context.Background(), cfg, Deps{Listener: l})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nn.Close() })
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{nn.RPCAddr().String()}, User: cfg.SuperUser,
		Protocol: ClientProtocolName, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return nn, c
}

// createClosed creates and completes an empty file.
func createClosed(t *testing.T, c *ipc.Client, path string) {
	t.Helper()
	ctx := context.Background()
	var cr hdfs.CreateResponseProto
	if err := c.Call(ctx, "create", &hdfs.CreateRequestProto{
		Src: proto.String(path), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o644)},
		ClientName: proto.String("readpath-test"), CreateFlag: proto.Uint32(1), CreateParent: proto.Bool(true),
		Replication: proto.Uint32(1), BlockSize: proto.Uint64(1 << 20),
	}, &cr); err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
	var done hdfs.CompleteResponseProto
	if err := c.Call(ctx, "complete", &hdfs.CompleteRequestProto{
		Src: proto.String(path), ClientName: proto.String("readpath-test"), FileId: cr.GetFs().FileId,
	}, &done); err != nil || !done.GetResult() {
		t.Fatalf("complete %s: %v %v", path, done.GetResult(), err)
	}
}

func accessTime(t *testing.T, c *ipc.Client, path string) uint64 {
	t.Helper()
	var resp hdfs.GetFileInfoResponseProto
	if err := c.Call(context.Background(), "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(path)}, &resp); err != nil || resp.Fs == nil {
		t.Fatalf("getFileInfo %s: %v %v", path, resp.Fs, err)
	}
	return resp.Fs.GetAccessTime()
}

func getBlockLocations(ctx context.Context, c *ipc.Client, path string) error {
	var resp hdfs.GetBlockLocationsResponseProto
	return c.Call(ctx, "getBlockLocations", &hdfs.GetBlockLocationsRequestProto{
		Src: proto.String(path), Offset: proto.Uint64(0), Length: proto.Uint64(1 << 20),
	}, &resp)
}

// TestOpenWithFreshAccessTimeIsAReader: getBlockLocations of a file whose
// access time is within the precision takes only the read lock, so it is
// answered while another reader holds the lock (it used to queue for the
// write lock on every call, behind that reader, and make every reader
// after it wait too).
func TestOpenWithFreshAccessTimeIsAReader(t *testing.T) {
	nn, c := startWith(t) // precision: the default hour
	createClosed(t, c, "/fresh")
	nn.ns.mu.RLock()
	done := make(chan error, 1)
	go func() { done <- getBlockLocations(context.Background(), c, "/fresh") }()
	select {
	case err := <-done:
		nn.ns.mu.RUnlock()
		if err != nil {
			t.Fatalf("getBlockLocations: %v", err)
		}
	case <-time.After(10 * time.Second):
		nn.ns.mu.RUnlock()
		<-done
		t.Fatal("getBlockLocations waited for the write lock although the access time was fresh")
	}
}

// TestOpenLogsStaleAccessTime: with a precision of 1 ms, an open after the
// precision has passed still logs the new access time (the write path the
// read-lock check leads to).
func TestOpenLogsStaleAccessTime(t *testing.T) {
	_, c := startWith(t, conf.KeyValue{Key: conf.DFSNameNodeAccessTimePrecision, Value: "1"})
	createClosed(t, c, "/stale")
	before := accessTime(t, c, "/stale")
	time.Sleep(20 * time.Millisecond)
	if err := getBlockLocations(context.Background(), c, "/stale"); err != nil {
		t.Fatalf("getBlockLocations: %v", err)
	}
	if after := accessTime(t, c, "/stale"); after <= before {
		t.Fatalf("access time %d after the open, want later than %d", after, before)
	}
}
