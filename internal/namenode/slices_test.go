package namenode_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/blocklist"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
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
	dn, req := reportOfUnknownReplicas(t, nn.Addr, replicas)

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

// TestLongOperationsPause: a full block report processed in slices pauses
// between them while two calls besides it wait for an answer (two creates
// held behind their edits' fsync), and does not while nothing but full
// reports is in flight.
func TestLongOperationsPause(t *testing.T) {
	cfg := nntest.Config(t, 1)
	cfg.LockSliceBudget = time.Nanosecond
	nntest.Format(t, cfg)
	nn, gate := startWithSyncGate(t, cfg)
	addr := nn.RPCAddr().String()
	dn, report := reportOfUnknownReplicas(t, addr, 5_000)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Two reports at once: the second waits for the first, and neither
	// counts as another call.
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- dn.Call(ctx, "blockReport", report, &dnpb.BlockReportResponseProto{}) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := nn.SlicePauses(); n != 0 {
		t.Fatalf("%d pauses with nothing but full reports in flight", n)
	}

	gate.held.Store(true)
	done := make(chan error, 2)
	for i := range 2 {
		go func() {
			c := rpcClient(t, addr, cfg.SuperUser, namenode.ClientProtocolName)
			done <- call(t, c, "create", createReq(fmt.Sprintf("/held%d", i), fmt.Sprintf("DFSClient_held%d", i)), &hdfs.CreateResponseProto{})
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	lister := rpcClient(t, addr, "alice", namenode.ClientProtocolName)
	for {
		var resp hdfs.GetListingResponseProto
		if err := call(t, lister, "getListing", &hdfs.GetListingRequestProto{Src: proto.String("/"), StartAfter: []byte{}, NeedLocation: proto.Bool(false)}, &resp); err != nil {
			t.Fatal(err)
		}
		if len(resp.GetDirList().GetPartialListing()) == 2 {
			break // both applied, neither answered: their fsync is held
		}
		if time.Now().After(deadline) {
			t.Fatalf("the creates were never applied: / holds %d entries", len(resp.GetDirList().GetPartialListing()))
		}
		select {
		case err := <-done:
			t.Fatalf("a create answered while its fsync was held: %v", err)
		default:
		}
		time.Sleep(time.Millisecond)
	}
	if err := dn.Call(ctx, "blockReport", report, &dnpb.BlockReportResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if n, _ := nn.SlicePauses(); n == 0 {
		t.Fatal("the report never paused while two creates were in flight")
	}
	gate.open()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// reportOfUnknownReplicas registers a DataNode with the NameNode at addr
// and returns its client and a full report of n replicas of blocks the
// NameNode does not know (each is judged and queued for deletion).
func reportOfUnknownReplicas(t *testing.T, addr string, n int) (*ipc.Client, *dnpb.BlockReportRequestProto) {
	t.Helper()
	dn := rpcClient(t, addr, "dn", namenode.DatanodeProtocolName)
	var ver hdfs.VersionResponseProto
	if err := call(t, dn, "versionRequest", &hdfs.VersionRequestProto{}, &ver); err != nil {
		t.Fatal(err)
	}
	reg := fakeRegistration(ver.GetInfo(), "dn-uuid")
	if err := call(t, dn, "registerDatanode", &dnpb.RegisterDatanodeRequestProto{Registration: reg}, &dnpb.RegisterDatanodeResponseProto{}); err != nil {
		t.Fatal(err)
	}
	reps := make([]blocklist.Replica, n)
	for i := range reps {
		reps[i] = blocklist.Replica{ID: int64(1<<40 + i), NumBytes: 1, GenStamp: 1001}
	}
	bufs, k := blocklist.EncodeBuffers(reps)
	return dn, &dnpb.BlockReportRequestProto{Registration: reg, BlockPoolId: proto.String(ver.GetInfo().GetBlockPoolID()),
		Reports: []*dnpb.StorageBlockReportProto{{
			Storage:        &hdfs.DatanodeStorageProto{StorageUuid: proto.String("DS-1")},
			NumberOfBlocks: proto.Uint64(k),
			BlocksBuffers:  bufs,
		}}}
}
