package namenode_test

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/blocklist"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
	"github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// TestInvalidateWaitsForSync: a replica deletion leaves in a heartbeat
// reply only once every op appended before it was taken is durable (a
// block freed by an op not yet synced would come back after a crash, and
// its replicas must still exist). The fsync of the edits is held while a
// write is applied; a heartbeat whose reply carries DNA_INVALIDATE is not
// answered until the fsync is let go.
func TestInvalidateWaitsForSync(t *testing.T) {
	cfg := nntest.Config(t, 1, conf.KeyValue{Key: conf.DFSNameNodeRedundancyInterval, Value: "50ms"})
	nntest.Format(t, cfg)
	nn, g := startWithSyncGate(t, cfg)
	addr := nn.RPCAddr().String()
	dn := rpcClient(t, addr, "dn", namenode.DatanodeProtocolName)
	reg := registerFakeDatanode(t, dn)
	var ver hdfs.VersionResponseProto
	if err := call(t, dn, "versionRequest", &hdfs.VersionRequestProto{}, &ver); err != nil {
		t.Fatal(err)
	}
	// A replica of a block the NameNode does not know: it is to be deleted.
	const stray = 1<<30 + 777
	rep := &datanode.BlockReportRequestProto{Registration: reg, BlockPoolId: proto.String(ver.GetInfo().GetBlockPoolID()),
		Reports: []*datanode.StorageBlockReportProto{{Storage: &hdfs.DatanodeStorageProto{StorageUuid: proto.String("DS-1")},
			Blocks: blocklist.EncodeLongs([]blocklist.Replica{{ID: stray, NumBytes: 10, GenStamp: 1001}})}}}
	if err := call(t, dn, "blockReport", rep, &datanode.BlockReportResponseProto{}); err != nil {
		t.Fatal(err)
	}
	// The redundancy monitor (every 50 ms here) readies the deletion for
	// the DataNode's next heartbeat.
	time.Sleep(500 * time.Millisecond)

	g.held.Store(true)
	writer := rpcClient(t, addr, cfg.SuperUser, namenode.ClientProtocolName)
	go func() { _ = mkdir(t, writer, "/unsynced", 0o755) }()
	reader := rpcClient(t, addr, cfg.SuperUser, namenode.ClientProtocolName)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var fi hdfs.GetFileInfoResponseProto
		if err := call(t, reader, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/unsynced")}, &fi); err != nil {
			t.Fatal(err)
		}
		if fi.Fs != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the mkdir was not applied while its fsync is held")
		}
		time.Sleep(time.Millisecond)
	}

	type reply struct {
		cmds []*datanode.DatanodeCommandProto
		err  error
	}
	replies := make(chan reply, 1)
	go func() {
		var resp datanode.HeartbeatResponseProto
		err := call(t, dn, "sendHeartbeat", &datanode.HeartbeatRequestProto{Registration: reg}, &resp)
		replies <- reply{resp.GetCmds(), err}
	}()
	select {
	case r := <-replies:
		t.Fatalf("heartbeat answered while an appended op is not durable: %d commands, %v (invalidates %v)", len(r.cmds), r.err, invalidated(r.cmds))
	case <-time.After(time.Second):
	}
	g.open()
	select {
	case r := <-replies:
		if r.err != nil {
			t.Fatal(r.err)
		}
		if got := invalidated(r.cmds); len(got) != 1 || got[0] != stray {
			t.Fatalf("heartbeat after the sync invalidates %v, want [%d]", got, stray)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("heartbeat not answered after the fsync was let go")
	}
}

func invalidated(cmds []*datanode.DatanodeCommandProto) []uint64 {
	var ids []uint64
	for _, c := range cmds {
		if c.GetCmdType() == datanode.DatanodeCommandProto_BlockCommand && c.GetBlkCmd().GetAction() == datanode.BlockCommandProto_INVALIDATE {
			for _, b := range c.GetBlkCmd().GetBlocks() {
				ids = append(ids, b.GetBlockId())
			}
		}
	}
	return ids
}
