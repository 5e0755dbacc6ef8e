package namenode_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// Requests a hostile peer can send with nothing but a socket. Each is
// answered with an error naming what was wrong, and the NameNode keeps
// serving everyone else.

func rpcClient(t *testing.T, addr, user, protocol string) *ipc.Client {
	t.Helper()
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{addr}, User: user, Protocol: protocol, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

func call(t *testing.T, c *ipc.Client, method string, req, resp proto.Message) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := c.Call(ctx, method, req, resp)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s did not answer within 30 s: the NameNode hangs", method)
	}
	return err
}

// expectRemote checks that err is a RemoteException of class whose message
// contains text.
func expectRemote(t *testing.T, err error, class, text string) {
	t.Helper()
	var re *remoteerr.Error
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want a %s", err, class)
	}
	if re.Class != class || !strings.Contains(re.Message, text) {
		t.Fatalf("got %s: %q, want %s containing %q", re.Class, re.Message, class, text)
	}
}

// stillServes checks that the NameNode answers an ordinary call.
func stillServes(t *testing.T, nn *nntest.NameNode) {
	t.Helper()
	c := rpcClient(t, nn.Addr, "alice", namenode.ClientProtocolName)
	var resp hdfs.GetFileInfoResponseProto
	if err := call(t, c, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/")}, &resp); err != nil || resp.Fs == nil {
		t.Fatalf("getFileInfo / after the attack: %v %v", resp.Fs, err)
	}
	if err := nn.Err(); err != nil {
		t.Fatalf("the NameNode failed: %v", err)
	}
}

func mkdir(t *testing.T, c *ipc.Client, path string, perm uint32) error {
	return call(t, c, "mkdirs", &hdfs.MkdirsRequestProto{Src: proto.String(path),
		Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(perm)}, CreateParent: proto.Bool(true)}, &hdfs.MkdirsResponseProto{})
}

func createReq(path, client string) *hdfs.CreateRequestProto {
	return &hdfs.CreateRequestProto{Src: proto.String(path), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o644)},
		ClientName: proto.String(client), CreateFlag: proto.Uint32(1), CreateParent: proto.Bool(false),
		Replication: proto.Uint32(1), BlockSize: proto.Uint64(128 << 20)}
}

// TestBlockReportFromImpostor: a 133-byte block report from a DataNode that
// never registered, claiming 2^26 replicas, used to make the NameNode reserve
// 2 GiB per call. It is refused before any decoding, and a registered node's
// inflated claim is refused by the bytes it sent.
func TestBlockReportFromImpostor(t *testing.T) {
	nn := nntest.New(t)
	dn := rpcClient(t, nn.Addr, "dn", namenode.DatanodeProtocolName)
	var ver hdfs.VersionResponseProto
	if err := call(t, dn, "versionRequest", &hdfs.VersionRequestProto{}, &ver); err != nil {
		t.Fatal(err)
	}
	pool := ver.GetInfo().GetBlockPoolID()
	reg := fakeRegistration(ver.GetInfo(), "impostor-uuid")
	report := func() *dnpb.BlockReportRequestProto {
		return &dnpb.BlockReportRequestProto{Registration: reg, BlockPoolId: proto.String(pool),
			Reports: []*dnpb.StorageBlockReportProto{{
				Storage:        &hdfs.DatanodeStorageProto{StorageUuid: proto.String("DS-1")},
				NumberOfBlocks: proto.Uint64(1 << 26),
				BlocksBuffers:  [][]byte{{2, 1, 1, 0}},
			}}}
	}
	testtool.AllocBound(t, 200, 0, 16<<20, func() {
		err := call(t, dn, "blockReport", report(), &dnpb.BlockReportResponseProto{})
		expectRemote(t, err, "org.apache.hadoop.hdfs.protocol.UnregisteredNodeException", "not registered")
	})
	err := call(t, dn, "blockReceivedAndDeleted", &dnpb.BlockReceivedAndDeletedRequestProto{Registration: reg, BlockPoolId: proto.String(pool)},
		&dnpb.BlockReceivedAndDeletedResponseProto{})
	expectRemote(t, err, "org.apache.hadoop.hdfs.protocol.UnregisteredNodeException", "not registered")
	var hb dnpb.HeartbeatResponseProto
	if err := call(t, dn, "sendHeartbeat", &dnpb.HeartbeatRequestProto{Registration: reg}, &hb); err != nil {
		t.Fatal(err)
	}
	if len(hb.GetCmds()) != 1 || hb.GetCmds()[0].GetCmdType() != dnpb.DatanodeCommandProto_RegisterCommand {
		t.Fatalf("heartbeat of an unregistered node answered %v, want one RegisterCommand", hb.GetCmds())
	}

	if err := call(t, dn, "registerDatanode", &dnpb.RegisterDatanodeRequestProto{Registration: reg}, &dnpb.RegisterDatanodeResponseProto{}); err != nil {
		t.Fatal(err)
	}
	testtool.AllocBound(t, 200, 0, 16<<20, func() {
		err := call(t, dn, "blockReport", report(), &dnpb.BlockReportResponseProto{})
		expectRemote(t, err, remoteerr.ClassIOException, "hold at most 1")
	})
	stillServes(t, nn)
}

// TestHugeClientName: a create whose 2 MiB client name cannot be an edit
// record used to panic with the namesystem lock held and hang every later
// call. It is refused at the edge, and a record too large for the log in
// any other way is an error to its caller, never a panic.
func TestHugeClientName(t *testing.T) {
	nn := nntest.New(t)
	super := rpcClient(t, nn.Addr, nn.Config.SuperUser, namenode.ClientProtocolName)
	if err := mkdir(t, super, "/tmp", 0o1777); err != nil {
		t.Fatal(err)
	}
	if err := call(t, super, "setPermission", &hdfs.SetPermissionRequestProto{Src: proto.String("/tmp"),
		Permission: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o1777)}}, &hdfs.SetPermissionResponseProto{}); err != nil {
		t.Fatal(err)
	}
	alice := rpcClient(t, nn.Addr, "alice", namenode.ClientProtocolName)
	err := call(t, alice, "create", createReq("/tmp/f", strings.Repeat("x", 2<<20)), &hdfs.CreateResponseProto{})
	expectRemote(t, err, remoteerr.ClassIOException, "client name too long")
	stillServes(t, nn)

}

// TestDeepMkdirs: mkdirs of a path 20,000 levels deep used to hold the lock
// for seconds and write hundreds of MB of edits. Hadoop's path limits refuse
// it; a path right at the limits still works.
func TestDeepMkdirs(t *testing.T) {
	nn := nntest.New(t)
	c := rpcClient(t, nn.Addr, nn.Config.SuperUser, namenode.ClientProtocolName)
	deep := strings.Repeat("/a", 20000)
	testtool.AllocBound(t, len(deep), 64, 16<<20, func() {
		err := mkdir(t, c, deep, 0o755)
		expectRemote(t, err, remoteerr.ClassIOException, "mkdirs: Pathname too long.  Limit 8000 characters, 1000 levels.")
	})
	long := "/" + strings.Repeat("b", 8000)
	err := mkdir(t, c, long, 0o755)
	expectRemote(t, err, remoteerr.ClassIOException, "Pathname too long")

	atLimit := strings.Repeat("/c", 1000)
	if err := mkdir(t, c, atLimit, 0o755); err != nil {
		t.Fatalf("mkdirs 1000 levels deep: %v", err)
	}
	var resp hdfs.GetFileInfoResponseProto
	if err := call(t, c, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(atLimit)}, &resp); err != nil || resp.Fs == nil {
		t.Fatalf("getFileInfo of the deep dir: %v %v", resp.Fs, err)
	}
	if err := call(t, c, "rename2", &hdfs.Rename2RequestProto{Src: proto.String(atLimit), Dst: proto.String(atLimit + "/x" + deep), OverwriteDest: proto.Bool(false)},
		&hdfs.Rename2ResponseProto{}); err == nil || !strings.Contains(err.Error(), "Pathname too long") {
		t.Fatalf("rename2 to a path beyond the limits: %v", err)
	}
	stillServes(t, nn)
}

// TestMaxBlocksPerFile: a file cannot grow past
// dfs.namenode.fs-limits.max-blocks-per-file, whose records (OP_CLOSE lists
// every block) would otherwise outgrow the edit log's record limit.
func TestMaxBlocksPerFile(t *testing.T) {
	cfg := nntest.Config(t, 1)
	cfg.MaxBlocksPerFile = 2
	nntest.Format(t, cfg)
	nn := nntest.Start(t, cfg)
	dn := rpcClient(t, nn.Addr, "dn", namenode.DatanodeProtocolName)
	registerFakeDatanode(t, dn)
	c := rpcClient(t, nn.Addr, nn.Config.SuperUser, namenode.ClientProtocolName)
	var cr hdfs.CreateResponseProto
	if err := call(t, c, "create", createReq("/f", "writer"), &cr); err != nil {
		t.Fatal(err)
	}
	var prev *hdfs.ExtendedBlockProto
	for i := range 3 {
		var resp hdfs.AddBlockResponseProto
		err := call(t, c, "addBlock", &hdfs.AddBlockRequestProto{Src: proto.String("/f"), ClientName: proto.String("writer"),
			Previous: prev, FileId: proto.Uint64(cr.GetFs().GetFileId())}, &resp)
		if i == 2 {
			expectRemote(t, err, remoteerr.ClassIOException, "File has reached the limit on maximum number of blocks (dfs.namenode.fs-limits.max-blocks-per-file): 2 >= 2")
			break
		}
		if err != nil {
			t.Fatalf("addBlock %d: %v", i, err)
		}
		prev = resp.GetBlock().GetB()
		prev.NumBytes = proto.Uint64(1)
	}
	stillServes(t, nn)
}

// registerFakeDatanode registers a DataNode with one roomy storage, so
// that the NameNode can place blocks on it.
func registerFakeDatanode(t *testing.T, dn *ipc.Client) *dnpb.DatanodeRegistrationProto {
	t.Helper()
	var ver hdfs.VersionResponseProto
	if err := call(t, dn, "versionRequest", &hdfs.VersionRequestProto{}, &ver); err != nil {
		t.Fatal(err)
	}
	reg := fakeRegistration(ver.GetInfo(), "fake-uuid")
	if err := call(t, dn, "registerDatanode", &dnpb.RegisterDatanodeRequestProto{Registration: reg}, &dnpb.RegisterDatanodeResponseProto{}); err != nil {
		t.Fatal(err)
	}
	hb := &dnpb.HeartbeatRequestProto{Registration: reg, Reports: []*hdfs.StorageReportProto{{
		StorageUuid: proto.String("DS-1"), Storage: &hdfs.DatanodeStorageProto{StorageUuid: proto.String("DS-1")},
		Capacity: proto.Uint64(100 << 30), DfsUsed: proto.Uint64(0), Remaining: proto.Uint64(100 << 30), BlockPoolUsed: proto.Uint64(0),
	}}}
	if err := call(t, dn, "sendHeartbeat", hb, &dnpb.HeartbeatResponseProto{}); err != nil {
		t.Fatal(err)
	}
	rep := &dnpb.BlockReportRequestProto{Registration: reg, BlockPoolId: proto.String(ver.GetInfo().GetBlockPoolID()),
		Reports: []*dnpb.StorageBlockReportProto{{Storage: &hdfs.DatanodeStorageProto{StorageUuid: proto.String("DS-1")}}}}
	if err := call(t, dn, "blockReport", rep, &dnpb.BlockReportResponseProto{}); err != nil {
		t.Fatal(err)
	}
	return reg
}

func fakeRegistration(info *hdfs.NamespaceInfoProto, uuid string) *dnpb.DatanodeRegistrationProto {
	return &dnpb.DatanodeRegistrationProto{
		DatanodeID: &hdfs.DatanodeIDProto{IpAddr: proto.String("127.0.0.1"), HostName: proto.String(uuid),
			DatanodeUuid: proto.String(uuid), XferPort: proto.Uint32(9866), InfoPort: proto.Uint32(9864), IpcPort: proto.Uint32(9867)},
		StorageInfo: info.GetStorageInfo(),
		Keys: &hdfs.ExportedBlockKeysProto{IsBlockTokenEnabled: proto.Bool(false), KeyUpdateInterval: proto.Uint64(0),
			TokenLifeTime: proto.Uint64(0), CurrentKey: &hdfs.BlockKeyProto{KeyId: proto.Uint32(0), ExpiryDate: proto.Uint64(0)}},
		SoftwareVersion: proto.String("3.3.6"),
	}
}

// TestPanicWithLockHeldStopsTheNameNode: a bug that panics while the
// namesystem lock is held must not leave a half-alive NameNode. The call
// gets an error, the NameNode stops with an error, and after a restart
// every acknowledged op is there and the half-applied one is not.
func TestPanicWithLockHeldStopsTheNameNode(t *testing.T) {
	cfg := nntest.Config(t, 1)
	cfg.Testing.BeforeApply = func(o op.Op) {
		if m, ok := o.(*op.Mkdir); ok && m.Path == "/boom" {
			panic("planted bug")
		}
	}
	nntest.Format(t, cfg)
	nn := nntest.Start(t, cfg)
	c := rpcClient(t, nn.Addr, nn.Config.SuperUser, namenode.ClientProtocolName)
	if err := mkdir(t, c, "/acked", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mkdir(t, c, "/boom", 0o755); err == nil {
		t.Fatal("mkdirs through the planted panic succeeded")
	}
	select {
	case <-nn.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the NameNode did not stop after a panic with its lock held")
	}
	if nn.Err() == nil || !strings.Contains(nn.Err().Error(), "planted bug") {
		t.Fatalf("NameNode error = %v, want the panic", nn.Err())
	}

	cfg.Testing.BeforeApply = nil
	nn2 := nntest.Start(t, cfg)
	c2 := rpcClient(t, nn2.Addr, nn2.Config.SuperUser, namenode.ClientProtocolName)
	for path, want := range map[string]bool{"/acked": true, "/boom": false} {
		var resp hdfs.GetFileInfoResponseProto
		if err := call(t, c2, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(path)}, &resp); err != nil {
			t.Fatal(err)
		}
		if got := resp.Fs != nil; got != want {
			t.Errorf("after restart, %s exists = %v, want %v", path, got, want)
		}
	}
}
