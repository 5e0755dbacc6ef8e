package namenode_test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// TestFailedCreateSyncsTheTakeOver: a create of a file another client
// abandoned (its soft limit passed) closes the file first, then fails with
// FileAlreadyExistsException, as in HDFS. The close is in the edit log
// before that answer goes out: a crash right after it keeps the file
// closed.
func TestFailedCreateSyncsTheTakeOver(t *testing.T) {
	fsys := vfs.NewMem()
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	cfg, err := namenode.ConfigFrom(conf.Defaults().With(
		conf.KeyValue{Key: conf.DFSNameNodeNameDir, Value: "/nn/name"},
		conf.KeyValue{Key: conf.DFSNameNodeRPCAddress, Value: "127.0.0.1:0"},
		conf.KeyValue{Key: conf.DFSNameNodeHTTPAddress, Value: "127.0.0.1:0"},
	))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Testing.LeaseSoftLimit = time.Second
	start := func(fs vfs.FS) *namenode.NameNode {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		nn, err := namenode.Start(context.Background(), cfg, namenode.Deps{FS: fs, Clock: clk, Logger: quietLogger(), Listener: l})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nn.Close() })
		return nn
	}
	if err := namenode.Format(context.Background(), cfg, namenode.Deps{FS: fsys, Clock: clk, Logger: quietLogger()}, namenode.FormatOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	nn := start(fsys)
	c := rpcClient(t, nn.RPCAddr().String(), cfg.SuperUser, namenode.ClientProtocolName)
	if err := call(t, c, "create", createReq("/f", "DFSClient_gone"), &hdfs.CreateResponseProto{}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Second)
	err = call(t, c, "create", createReq("/f", "DFSClient_other"), &hdfs.CreateResponseProto{})
	expectRemote(t, err, remoteerr.ClassFileAlreadyExists, "already exists")

	crashed := fsys.CrashClone() // only what was synced
	nn.Close()
	nn2 := start(crashed)
	c2 := rpcClient(t, nn2.RPCAddr().String(), cfg.SuperUser, namenode.ClientProtocolName)
	var resp hdfs.IsFileClosedResponseProto
	if err := call(t, c2, "isFileClosed", &hdfs.IsFileClosedRequestProto{Src: proto.String("/f")}, &resp); err != nil {
		t.Fatal(err)
	}
	if !resp.GetResult() {
		t.Fatal("after a crash right after the failed create, the abandoned file is open again: the close was answered before it was durable")
	}
}
