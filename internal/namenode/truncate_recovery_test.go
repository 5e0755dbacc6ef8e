package namenode_test

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/blocklist"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// TestTruncateInPlaceRecoveryRetryKeepsCut: an in-place truncate (the new
// end inside a block no snapshot holds) leaves the file open while block
// recovery cuts the replicas. When that recovery does not finish and is
// started again — recoverLease after the recovery timeout, after a restart
// that replays the edit log, after a restart from an image saved while
// truncating — DNA_RECOVERBLOCK must still carry the cut length as its
// truncate block; without it the DataNodes agree on the replicas' old
// length and the truncated bytes come back.
func TestTruncateInPlaceRecoveryRetryKeepsCut(t *testing.T) {
	const full, cut = 1000, 400
	cfg := nntest.Config(t, 1, conf.KeyValue{Key: conf.DFSNameNodeSafeModeExtension, Value: "0"})
	cfg.Testing.RecoveryTimeout = 200 * time.Millisecond
	nntest.Format(t, cfg)
	nn := nntest.Start(t, cfg)
	dn := rpcClient(t, nn.Addr, "dn", namenode.DatanodeProtocolName)
	reg := registerFakeDatanode(t, dn)
	var ver hdfs.VersionResponseProto
	if err := call(t, dn, "versionRequest", &hdfs.VersionRequestProto{}, &ver); err != nil {
		t.Fatal(err)
	}
	pool := ver.GetInfo().GetBlockPoolID()
	c := rpcClient(t, nn.Addr, cfg.SuperUser, namenode.ClientProtocolName)

	blk := closedOneBlockFile(t, c, dn, reg, pool, full)

	var tr hdfs.TruncateResponseProto
	if err := call(t, c, "truncate", &hdfs.TruncateRequestProto{Src: proto.String("/f"), NewLength: proto.Uint64(cut),
		ClientName: proto.String("truncator")}, &tr); err != nil || tr.GetResult() {
		t.Fatalf("truncate inside the block: result %v, err %v (want false: recovery under way)", tr.GetResult(), err)
	}
	// The truncate's own recovery; the fake node never reports it done.
	expectCut(t, dn, reg, blk.GetBlockId(), cut, "the truncate")

	// Retried by recoverLease once the first recovery has timed out.
	time.Sleep(3 * cfg.Testing.RecoveryTimeout / 2)
	recoverLease(t, c)
	expectCut(t, dn, reg, blk.GetBlockId(), cut, "recoverLease after the recovery timed out")

	replica := &dnpb.BlockReportRequestProto{Registration: reg, BlockPoolId: proto.String(pool),
		Reports: []*dnpb.StorageBlockReportProto{{Storage: &hdfs.DatanodeStorageProto{StorageUuid: proto.String("DS-1")},
			Blocks: blocklist.EncodeLongs([]blocklist.Replica{{ID: int64(blk.GetBlockId()), NumBytes: full, GenStamp: int64(blk.GetGenerationStamp())}})}}}
	restart := func(how string) {
		t.Helper()
		nn.Close()
		nn = nntest.Start(t, cfg)
		dn = rpcClient(t, nn.Addr, "dn", namenode.DatanodeProtocolName)
		reg = registerFakeDatanode(t, dn)
		replica.Registration = reg
		if err := call(t, dn, "blockReport", replica, &dnpb.BlockReportResponseProto{}); err != nil {
			t.Fatal(err)
		}
		c = rpcClient(t, nn.Addr, cfg.SuperUser, namenode.ClientProtocolName)
		waitSafeModeOff(t, c)
		recoverLease(t, c)
		expectCut(t, dn, reg, blk.GetBlockId(), cut, "recoverLease after a restart "+how)
	}
	restart("replaying the edit log")

	for _, a := range []hdfs.SafeModeActionProto{hdfs.SafeModeActionProto_SAFEMODE_ENTER, hdfs.SafeModeActionProto_SAFEMODE_LEAVE} {
		if a == hdfs.SafeModeActionProto_SAFEMODE_LEAVE {
			if err := call(t, c, "saveNamespace", &hdfs.SaveNamespaceRequestProto{}, &hdfs.SaveNamespaceResponseProto{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := call(t, c, "setSafeMode", &hdfs.SetSafeModeRequestProto{Action: a.Enum()}, &hdfs.SetSafeModeResponseProto{}); err != nil {
			t.Fatal(err)
		}
	}
	restart("from an image saved while truncating")
}

func recoverLease(t *testing.T, c *ipc.Client) {
	t.Helper()
	var rl hdfs.RecoverLeaseResponseProto
	if err := call(t, c, "recoverLease", &hdfs.RecoverLeaseRequestProto{Src: proto.String("/f"), ClientName: proto.String("other")}, &rl); err != nil {
		t.Fatal(err)
	}
	if rl.GetResult() {
		t.Fatal("recoverLease closed the file: the cut block was never recovered")
	}
}

func waitSafeModeOff(t *testing.T, c *ipc.Client) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var sm hdfs.SetSafeModeResponseProto
		if err := call(t, c, "setSafeMode", &hdfs.SetSafeModeRequestProto{Action: hdfs.SafeModeActionProto_SAFEMODE_GET.Enum()}, &sm); err != nil {
			t.Fatal(err)
		}
		if !sm.GetResult() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("still in safe mode 10 s after the block report")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// expectCut heartbeats (for at most 10 s) until the NameNode hands out
// DNA_RECOVERBLOCK for block id and checks that it cuts to length n.
func expectCut(t *testing.T, dn *ipc.Client, reg *dnpb.DatanodeRegistrationProto, id uint64, n uint64, when string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var hb dnpb.HeartbeatResponseProto
		if err := call(t, dn, "sendHeartbeat", &dnpb.HeartbeatRequestProto{Registration: reg}, &hb); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range hb.GetCmds() {
			if cmd.GetCmdType() != dnpb.DatanodeCommandProto_BlockRecoveryCommand {
				continue
			}
			for _, rb := range cmd.GetRecoveryCmd().GetBlocks() {
				if rb.GetBlock().GetB().GetBlockId() != id {
					continue
				}
				tb := rb.GetTruncateBlock()
				if tb == nil {
					t.Fatalf("%s: DNA_RECOVERBLOCK of blk_%d has no truncate block: the replicas would keep their old length", when, id)
				}
				if tb.GetBlockId() != id || tb.GetNumBytes() != n || tb.GetGenStamp() != rb.GetNewGenStamp() {
					t.Fatalf("%s: truncate block %v (new stamp %d), want blk_%d cut to %d bytes", when, tb, rb.GetNewGenStamp(), id, n)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no DNA_RECOVERBLOCK for blk_%d within 10 s", when, id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// closedOneBlockFile creates /f through c, a closed file of one block of
// size bytes whose replica the fake DataNode dn (registered as reg) reports
// received, and returns the block.
func closedOneBlockFile(t *testing.T, c, dn *ipc.Client, reg *dnpb.DatanodeRegistrationProto, pool string, size uint64) *hdfs.ExtendedBlockProto {
	t.Helper()
	var cr hdfs.CreateResponseProto
	if err := call(t, c, "create", createReq("/f", "writer"), &cr); err != nil {
		t.Fatal(err)
	}
	var ab hdfs.AddBlockResponseProto
	if err := call(t, c, "addBlock", &hdfs.AddBlockRequestProto{Src: proto.String("/f"), ClientName: proto.String("writer"),
		FileId: proto.Uint64(cr.GetFs().GetFileId())}, &ab); err != nil {
		t.Fatal(err)
	}
	blk := ab.GetBlock().GetB()
	blk.NumBytes = proto.Uint64(size)
	received := &dnpb.BlockReceivedAndDeletedRequestProto{Registration: reg, BlockPoolId: proto.String(pool),
		Blocks: []*dnpb.StorageReceivedDeletedBlocksProto{{StorageUuid: proto.String("DS-1"),
			Blocks: []*dnpb.ReceivedDeletedBlockInfoProto{{
				Block:  &hdfs.BlockProto{BlockId: blk.BlockId, GenStamp: blk.GenerationStamp, NumBytes: proto.Uint64(size)},
				Status: dnpb.ReceivedDeletedBlockInfoProto_RECEIVED.Enum()}}}}}
	if err := call(t, dn, "blockReceivedAndDeleted", received, &dnpb.BlockReceivedAndDeletedResponseProto{}); err != nil {
		t.Fatal(err)
	}
	var done hdfs.CompleteResponseProto
	if err := call(t, c, "complete", &hdfs.CompleteRequestProto{Src: proto.String("/f"), ClientName: proto.String("writer"),
		Last: blk, FileId: proto.Uint64(cr.GetFs().GetFileId())}, &done); err != nil || !done.GetResult() {
		t.Fatalf("complete: %v %v", done.GetResult(), err)
	}
	return blk
}

// TestTruncateRecoveryWaitsForSync: the DataNodes cut their replicas when
// DNA_RECOVERBLOCK reaches them, so it may leave only once the truncate
// that asked for it is durable: a NameNode killed before the sync comes
// back with the file at its old length, and its replicas must still hold
// it. The edits' fsync is held while the truncate is applied; the
// heartbeat that carries the recovery is not answered until it is let go.
func TestTruncateRecoveryWaitsForSync(t *testing.T) {
	const full, cut = 1000, 400
	cfg := nntest.Config(t, 1)
	nntest.Format(t, cfg)
	nn, g := startWithSyncGate(t, cfg)
	addr := nn.RPCAddr().String()
	dn := rpcClient(t, addr, "dn", namenode.DatanodeProtocolName)
	reg := registerFakeDatanode(t, dn)
	var ver hdfs.VersionResponseProto
	if err := call(t, dn, "versionRequest", &hdfs.VersionRequestProto{}, &ver); err != nil {
		t.Fatal(err)
	}
	c := rpcClient(t, addr, cfg.SuperUser, namenode.ClientProtocolName)
	blk := closedOneBlockFile(t, c, dn, reg, ver.GetInfo().GetBlockPoolID(), full)

	g.held.Store(true)
	truncator := rpcClient(t, addr, cfg.SuperUser, namenode.ClientProtocolName)
	go func() {
		_ = call(t, truncator, "truncate", &hdfs.TruncateRequestProto{Src: proto.String("/f"), NewLength: proto.Uint64(cut),
			ClientName: proto.String("truncator")}, &hdfs.TruncateResponseProto{})
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var fi hdfs.GetFileInfoResponseProto
		if err := call(t, c, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/f")}, &fi); err != nil {
			t.Fatal(err)
		}
		if fi.GetFs().GetLength() == cut {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the truncate was not applied while its fsync is held")
		}
		time.Sleep(time.Millisecond)
	}

	replies := make(chan error, 1)
	var resp dnpb.HeartbeatResponseProto
	go func() {
		replies <- call(t, dn, "sendHeartbeat", &dnpb.HeartbeatRequestProto{Registration: reg}, &resp)
	}()
	select {
	case err := <-replies:
		t.Fatalf("heartbeat answered while the truncate is not durable: %v, commands %v", err, resp.GetCmds())
	case <-time.After(time.Second):
	}
	g.open()
	select {
	case err := <-replies:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("heartbeat not answered after the fsync was let go")
	}
	for _, cmd := range resp.GetCmds() {
		for _, rb := range cmd.GetRecoveryCmd().GetBlocks() {
			if rb.GetBlock().GetB().GetBlockId() == blk.GetBlockId() && rb.GetTruncateBlock().GetNumBytes() == cut {
				return
			}
		}
	}
	t.Fatalf("the heartbeat after the sync carries %v, want DNA_RECOVERBLOCK cutting blk_%d to %d", resp.GetCmds(), blk.GetBlockId(), cut)
}
