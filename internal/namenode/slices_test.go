package namenode_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/blocklist"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// TestFullReportYieldsTheLock: a full block report is processed in slices
// that end at the slice budget (here 1 ns: one stride of replicas per
// hold of the write lock), and a client's getFileInfo, sent while the
// report is being processed, is answered before the report ends.
func TestFullReportYieldsTheLock(t *testing.T) {
	const replicas = 50_000
	cfg := nntest.Config(t, 1)
	cfg.LockSliceBudget = time.Nanosecond
	nntest.Format(t, cfg)
	nn := nntest.Start(t, cfg)
	dn := rpcClient(t, nn.Addr, "dn", namenode.DatanodeProtocolName)
	var ver hdfs.VersionResponseProto
	if err := call(t, dn, "versionRequest", &hdfs.VersionRequestProto{}, &ver); err != nil {
		t.Fatal(err)
	}
	reg := fakeRegistration(ver.GetInfo(), "dn-uuid")
	if err := call(t, dn, "registerDatanode", &dnpb.RegisterDatanodeRequestProto{Registration: reg}, &dnpb.RegisterDatanodeResponseProto{}); err != nil {
		t.Fatal(err)
	}
	// Replicas of blocks the NameNode does not know: each is judged and
	// queued for deletion.
	reps := make([]blocklist.Replica, replicas)
	for i := range reps {
		reps[i] = blocklist.Replica{ID: int64(1<<40 + i), NumBytes: 1, GenStamp: 1001}
	}
	bufs, n := blocklist.EncodeBuffers(reps)
	req := &dnpb.BlockReportRequestProto{Registration: reg, BlockPoolId: proto.String(ver.GetInfo().GetBlockPoolID()),
		Reports: []*dnpb.StorageBlockReportProto{{
			Storage:        &hdfs.DatanodeStorageProto{StorageUuid: proto.String("DS-1")},
			NumberOfBlocks: proto.Uint64(n),
			BlocksBuffers:  bufs,
		}}}

	reader := rpcClient(t, nn.Addr, "alice", namenode.ClientProtocolName)
	stat := func() {
		var resp hdfs.GetFileInfoResponseProto
		if err := call(t, reader, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/")}, &resp); err != nil {
			t.Error(err)
		}
	}
	stat() // connected before the report starts

	_, holds0 := nn.WriteLockHoldMax(true)
	var reporting atomic.Bool
	var inside atomic.Int64 // reads sent and answered while the report ran
	reporting.Store(true)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			select {
			case <-done:
				return
			default:
			}
			if !reporting.Load() {
				return
			}
			stat()
			if reporting.Load() {
				inside.Add(1)
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := dn.Call(ctx, "blockReport", req, &dnpb.BlockReportResponseProto{})
	reporting.Store(false)
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	_, holds1 := nn.WriteLockHoldMax(false)
	if got, want := holds1-holds0, int64(replicas/64); got < want {
		t.Fatalf("the report took %d holds of the write lock, want at least %d (one per 64 replicas)", got, want)
	}
	if inside.Load() == 0 {
		t.Fatal("no getFileInfo was answered while the report was processed")
	}
	t.Logf("%d holds of the write lock, %d reads answered during the report", holds1-holds0, inside.Load())
}
