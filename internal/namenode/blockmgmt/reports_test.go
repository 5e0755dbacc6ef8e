package blockmgmt

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestFullBlockReportReconciles(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 11, "a1", "a2", "a3", "b1")
	good := Block{ID: 100, NumBytes: 4096, GenStamp: 1005}
	gone := Block{ID: 101, NumBytes: 10, GenStamp: 1006}
	h.addComplete(1, good, 3, "a2", "b1")
	h.addComplete(1, gone, 2, "a1", "b1")

	res := h.fbr("a1",
		fin(good), // a new location
		fin(Block{ID: 999, NumBytes: 5, GenStamp: 1}), // unknown → delete
	)
	// "gone" was on a1 but is not in the report: dropped and queued.
	if got := h.holders(gone.ID); !slices.Equal(got, []string{"b1"}) {
		t.Fatalf("gone holders %v", got)
	}
	if res.Invalidated != 1 || res.Removed != 1 {
		t.Fatalf("result %+v", res)
	}
	if s := h.m.Stats(h.now); s.PendingDeletion != 1 || s.UnderReplicated != 1 || s.CorruptBlocks != 0 {
		t.Fatalf("stats %+v", s)
	}
	if got := h.holders(good.ID); !slices.Equal(got, []string{"a1", "a2", "b1"}) {
		t.Fatalf("good holders %v", got)
	}
	h.m.ComputeWork(h.now)
	if got := invalidated(h.heartbeat("a1")); !slices.Equal(got, []int64{999}) {
		t.Fatalf("a1 deletes %v", got)
	}
}

func TestStaleReplicaCorruptThenDeleted(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 12, "a1", "a2", "a3", "a4")
	b := Block{ID: 200, NumBytes: 1000, GenStamp: 2000}
	h.addComplete(1, b, 3, "a1", "a2")
	// a3 holds a copy from before a pipeline recovery.
	res := h.fbr("a3", fin(Block{ID: b.ID, NumBytes: 1000, GenStamp: 1999}))
	if res.Corrupt != 1 {
		t.Fatalf("result %+v", res)
	}
	info, _ := h.m.BlockInfo(b.ID)
	if info.Live != 2 || info.Corrupt != 1 {
		t.Fatalf("info %+v", info)
	}
	if s := h.m.Stats(h.now); s.CorruptBlocks != 1 || s.UnderReplicated != 1 {
		t.Fatalf("stats %+v", s)
	}
	// Not deleted yet: only two good copies of three.
	if s := h.m.Stats(h.now); s.PendingDeletion != 0 {
		t.Fatalf("corrupt replica deleted too early: %+v", s)
	}
	h.m.ComputeWork(h.now)
	tr := transfers(h.heartbeatAll())
	var target string
	for _, ts := range tr {
		target = h.name(ts[0].Targets[0].UUID)
	}
	if target != "a4" {
		t.Fatalf("transfers %+v", tr)
	}
	h.ibr("a4", ReceivedDeleted{Block: b, Status: Received})
	info, _ = h.m.BlockInfo(b.ID)
	if info.Live != 3 || info.Corrupt != 0 {
		t.Fatalf("after re-replication %+v", info)
	}
	h.m.ComputeWork(h.now)
	// The deletion names the stale replica's own stamp.
	if cmds := h.heartbeat("a3"); len(cmds) != 1 ||
		!slices.Equal(cmds[0].(Invalidate).Blocks, []Block{{ID: b.ID, NumBytes: 1000, GenStamp: 1999}}) {
		t.Fatalf("a3 commands %+v", cmds)
	}
	if s := h.m.Stats(h.now); s.CorruptBlocks != 0 || s.UnderReplicated != 0 {
		t.Fatalf("stats %+v", s)
	}
	// A wrong length for a COMPLETE block is corrupt too.
	if res := h.fbr("a3", fin(Block{ID: b.ID, NumBytes: 999, GenStamp: 2000})); res.Corrupt != 1 {
		t.Fatalf("short replica: %+v", res)
	}
	// Three good copies exist: the short one is dropped at once.
	if s := h.m.Stats(h.now); s.CorruptBlocks != 0 || s.PendingDeletion != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestAllCorruptIsMissingAndReturned(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 13, "a1", "a2")
	b := Block{ID: 300, NumBytes: 1, GenStamp: 1}
	h.addComplete(1, b, 1, "a1")
	if err := h.m.ReportBadBlocks(b, []string{"uuid-a1"}); err != nil {
		t.Fatal(err)
	}
	h.check()
	s := h.m.Stats(h.now)
	if s.MissingBlocks != 1 || s.MissingReplOneBlocks != 1 || s.CorruptBlocks != 1 {
		t.Fatalf("stats %+v", s)
	}
	lbs, err := h.m.GetBlockLocations([]int64{b.ID}, "10.0.0.2", h.now)
	if err != nil {
		t.Fatal(err)
	}
	if !lbs[0].Corrupt || len(lbs[0].Locations) != 1 {
		t.Fatalf("located %+v", lbs[0])
	}
	if w := h.m.ComputeWork(h.now); w.Transfers != 0 {
		t.Fatalf("replicated from a corrupt source: %+v", w)
	}
}

func TestIncrementalCompletesBlock(t *testing.T) {
	for _, finalizedFirst := range []bool{false, true} {
		h := activeHarness(t, DefaultConfig(), 14, "a1", "a2", "a3")
		b := Block{ID: 400, NumBytes: 0, GenStamp: 3000}
		targets := h.m.ChooseTargets(3, "10.0.0.1", nil, nil, 128*mib, h.now)
		if len(targets) != 3 || targets[0].UUID != "uuid-a1" {
			t.Fatalf("targets %v", h.names(targets))
		}
		if err := h.m.AddBlock(1, b, 3, UnderConstruction, targets); err != nil {
			t.Fatal(err)
		}
		// Before any report, readers see the pipeline.
		lbs, _ := h.m.GetBlockLocations([]int64{b.ID}, "10.0.0.1", h.now)
		if !lbs[0].UnderConstruction || len(lbs[0].Locations) != 3 {
			t.Fatalf("uc located %+v", lbs[0])
		}
		for _, n := range []string{"a1", "a2", "a3"} {
			h.ibr(n, ReceivedDeleted{Block: b, Status: Receiving})
		}
		if h.m.IsMinimallyReplicated(b.ID) {
			t.Fatal("RBW replicas counted as live")
		}
		final := Block{ID: b.ID, NumBytes: 5000, GenStamp: 3000}
		if finalizedFirst {
			// The DataNode reports the finalized replica before the client's
			// complete: complete succeeds on its first call.
			h.ibr("a1", ReceivedDeleted{Block: final, Status: Received})
			st, err := h.m.CommitBlock(final)
			if err != nil || st != Complete {
				t.Fatalf("commit = %v, %v; want COMPLETE", st, err)
			}
		} else {
			st, err := h.m.CommitBlock(final)
			if err != nil || st != Committed {
				t.Fatalf("commit = %v, %v; want COMMITTED", st, err)
			}
			h.check()
			if h.m.IsComplete(b.ID) {
				t.Fatal("complete without replicas")
			}
			h.ibr("a1", ReceivedDeleted{Block: final, Status: Received})
		}
		if !h.m.IsComplete(b.ID) || !h.m.IsMinimallyReplicated(b.ID) {
			t.Fatal("not complete after a finalized replica")
		}
		h.ibr("a2", ReceivedDeleted{Block: final, Status: Received})
		// A replica with the wrong length is corrupt.
		if res := h.ibr("a3", ReceivedDeleted{Block: Block{ID: b.ID, NumBytes: 4999, GenStamp: 3000}, Status: Received}); res.Corrupt != 1 {
			t.Fatalf("short replica %+v", res)
		}
		if got := h.holders(b.ID); !slices.Equal(got, []string{"a1", "a2"}) {
			t.Fatalf("holders %v", got)
		}
		// Re-commit with the same values is fine, different ones not.
		if _, err := h.m.CommitBlock(final); err != nil {
			t.Fatal(err)
		}
		if _, err := h.m.CommitBlock(Block{ID: b.ID, NumBytes: 1, GenStamp: 3000}); !errors.Is(err, ErrBadState) {
			t.Fatalf("conflicting commit: %v", err)
		}
		// DELETED drops the location.
		h.ibr("a2", ReceivedDeleted{Block: final, Status: Deleted})
		if got := h.holders(b.ID); !slices.Equal(got, []string{"a1"}) {
			t.Fatalf("holders %v", got)
		}
	}
}

func TestCommitChecksEarlyReplicas(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 15, "a1", "a2")
	b := Block{ID: 500, GenStamp: 10}
	if err := h.m.AddBlock(1, b, 2, UnderConstruction, nil); err != nil {
		t.Fatal(err)
	}
	h.ibr("a1", ReceivedDeleted{Block: Block{ID: 500, NumBytes: 77, GenStamp: 10}, Status: Received})
	h.ibr("a2", ReceivedDeleted{Block: Block{ID: 500, NumBytes: 100, GenStamp: 10}, Status: Received})
	if _, err := h.m.CommitBlock(Block{ID: 500, NumBytes: 100, GenStamp: 9}); !errors.Is(err, ErrGenStamp) {
		t.Fatalf("old stamp commit: %v", err)
	}
	st, err := h.m.CommitBlock(Block{ID: 500, NumBytes: 100, GenStamp: 10})
	if err != nil || st != Complete {
		t.Fatalf("commit %v %v", st, err)
	}
	h.check()
	if info, _ := h.m.BlockInfo(500); info.Live != 1 || info.Corrupt != 1 {
		t.Fatalf("info %+v", info)
	}
}

func TestUpdatePipeline(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 16, "a1", "a2", "a3")
	b := Block{ID: 600, GenStamp: 10}
	if err := h.m.AddBlock(1, b, 2, UnderConstruction, []DatanodeID{h.id("a1"), h.id("a2")}); err != nil {
		t.Fatal(err)
	}
	h.ibr("a1", ReceivedDeleted{Block: b, Status: Receiving})
	h.ibr("a2", ReceivedDeleted{Block: b, Status: Receiving})
	if err := h.m.UpdatePipeline(600, 10, 0, nil); !errors.Is(err, ErrGenStamp) {
		t.Fatalf("same stamp: %v", err)
	}
	if err := h.m.UpdatePipeline(600, 11, 512, []DatanodeID{h.id("a1"), h.id("a3")}); err != nil {
		t.Fatal(err)
	}
	h.check()
	lbs, _ := h.m.GetBlockLocations([]int64{600}, "", h.now)
	got := h.names(func() []DatanodeID {
		var ids []DatanodeID
		for _, l := range lbs[0].Locations {
			ids = append(ids, l.ID)
		}
		return ids
	}())
	slices.Sort(got)
	if !slices.Equal(got, []string{"a1", "a3"}) || lbs[0].GenStamp != 11 {
		t.Fatalf("locations %v %+v", got, lbs[0].Block)
	}
	// The dropped node's old replica, reported later, is corrupt.
	if res := h.fbr("a2", ReportedReplica{Block: Block{ID: 600, NumBytes: 512, GenStamp: 10}, State: Finalized}); res.Corrupt != 1 {
		t.Fatalf("old replica %+v", res)
	}
}

func TestExcessAfterSetReplication(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 17, "a1", "a2", "b1")
	h.space["a2"] = 10 * gib // least free space on the crowded rack
	h.heartbeatAll()
	b := Block{ID: 700, NumBytes: 1, GenStamp: 1}
	h.addComplete(1, b, 3, "a1", "a2", "b1")
	h.m.SetReplication([]int64{b.ID}, 2)
	h.check()
	if got := h.holders(b.ID); !slices.Equal(got, []string{"a1", "b1"}) {
		t.Fatalf("holders %v", got)
	}
	h.m.ComputeWork(h.now)
	if got := invalidated(h.heartbeat("a2")); !slices.Equal(got, []int64{b.ID}) {
		t.Fatalf("a2 deletes %v", got)
	}
	// Raising it again queues a reconstruction.
	h.m.SetReplication([]int64{b.ID}, 3)
	if s := h.m.Stats(h.now); s.UnderReplicated != 1 {
		t.Fatalf("stats %+v", s)
	}
	// The replica a2 re-reports before deleting it is not counted.
	h.m.SetReplication([]int64{b.ID}, 2)
	h.ibr("a2", ReceivedDeleted{Block: b, Status: Deleted})
	if got := h.holders(b.ID); !slices.Equal(got, []string{"a1", "b1"}) {
		t.Fatalf("holders %v", got)
	}
}

func TestBadlyDistributedGetsAnotherRack(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 18, "a1", "a2", "b1")
	b := Block{ID: 710, NumBytes: 1, GenStamp: 1}
	h.addComplete(1, b, 2, "a1", "a2")
	if lv := h.m.needed.level(b.ID); lv != levelBadlyDistributed {
		t.Fatalf("level %d", lv)
	}
	h.m.ComputeWork(h.now)
	tr := transfers(h.heartbeatAll())
	if len(tr) != 1 {
		t.Fatalf("transfers %v", tr)
	}
	h.ibr("b1", ReceivedDeleted{Block: b, Status: Received})
	got := h.holders(b.ID)
	if len(got) != 2 || !slices.Contains(got, "b1") {
		t.Fatalf("holders %v", got)
	}
}

func TestPendingTimeoutRequeues(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 19, "a1", "a2", "a3")
	b := Block{ID: 800, NumBytes: 1, GenStamp: 1}
	h.addComplete(1, b, 2, "a1")
	if w := h.m.ComputeWork(h.now); w.Transfers != 1 {
		t.Fatalf("work %+v", w)
	}
	h.heartbeatAll()
	h.advance(5*time.Minute - time.Second)
	if w := h.m.ComputeWork(h.now); w.Transfers != 0 || w.TimedOut != 0 {
		t.Fatalf("before timeout %+v", w)
	}
	h.advance(time.Second)
	if w := h.m.ComputeWork(h.now); w.TimedOut != 1 || w.Transfers != 1 {
		t.Fatalf("after timeout %+v", w)
	}
	h.check()
}

func TestStreamLimits(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 20, "a1", "a2", "a3", "a4", "a5", "a6")
	for i := range 10 {
		h.addComplete(1, Block{ID: int64(900 + i), NumBytes: 1, GenStamp: 1}, 3, "a1", "a2")
	}
	// Both sources fill to max-streams (2) each: 4 transfers.
	if w := h.m.ComputeWork(h.now); w.Transfers != 4 {
		t.Fatalf("work %+v", w)
	}
	cmds := h.heartbeat("a1")
	if n := len(transfers(map[string][]Command{"a1": cmds})["a1"]); n != 2 {
		t.Fatalf("a1 got %d transfers", n)
	}
	// xmitsInProgress at the limit: nothing more is sent.
	h.m.ComputeWork(h.now)
	c, err := h.m.Heartbeat("uuid-a1", nil, 0, 2, h.now)
	if err != nil || len(c) != 0 {
		t.Fatalf("busy node got %v, %v", c, err)
	}
}

func TestInvalidateLimitPerHeartbeat(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BlocksInvalidatePerHeartbeat = 3
	h := activeHarness(t, cfg, 21, "a1")
	var reps []ReportedReplica
	for i := range 7 {
		reps = append(reps, fin(Block{ID: int64(5000 + i), GenStamp: 1}))
	}
	h.fbr("a1", reps...)
	var got []int64
	for range 3 {
		h.m.ComputeWork(h.now)
		d := invalidated(h.heartbeat("a1"))
		if len(d) > 3 {
			t.Fatalf("%d deletions in one heartbeat", len(d))
		}
		got = append(got, d...)
	}
	if len(got) != 7 {
		t.Fatalf("deleted %v", got)
	}
}

func TestGetBlockLocationsOrder(t *testing.T) {
	cfg := DefaultConfig()
	cfg.AvoidStaleForRead = true
	h := activeHarness(t, cfg, 22, "a1", "a2", "b1", "b2", "b3")
	b := Block{ID: 1000, NumBytes: 1, GenStamp: 1}
	h.addComplete(1, b, 5, "a1", "a2", "b1", "b2", "b3")
	if err := h.m.ReportBadBlocks(b, []string{"uuid-b3"}); err != nil {
		t.Fatal(err)
	}
	// b2 goes stale.
	h.advance(31 * time.Second)
	h.heartbeatAll("b2")
	for range 10 { // ties are shuffled: the order must hold every time
		lbs, err := h.m.GetBlockLocations([]int64{b.ID}, h.id("b1").IPAddr, h.now)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range lbs[0].Locations {
			got = append(got, l.ID.Hostname)
		}
		// b1 itself, then nothing else healthy on rack b, then rack a, stale b2
		// last, corrupt b3 left out.
		if len(got) != 4 || got[0] != "b1" || rackOf(got[1]) != 'a' || rackOf(got[2]) != 'a' || got[3] != "b2" {
			t.Fatalf("order %v", got)
		}
		if lbs[0].Corrupt || lbs[0].StorageIDs[0] != stID("b1") {
			t.Fatalf("located %+v", lbs[0])
		}
	}
	// An off-cluster reader on rack a (resolved by the topology).
	h.m.cfg.Topology = func(ip string) string {
		if strings.HasPrefix(ip, "172.") {
			return "/a"
		}
		return "/b"
	}
	lbs, _ := h.m.GetBlockLocations([]int64{b.ID}, "172.16.0.1", h.now)
	if l := lbs[0].Locations; rackOf(l[0].ID.Hostname) != 'a' || rackOf(l[1].ID.Hostname) != 'a' {
		t.Fatalf("off-cluster order %+v", l)
	}
	if _, err := h.m.GetBlockLocations([]int64{12345}, "", h.now); !errors.Is(err, ErrUnknownBlock) {
		t.Fatalf("unknown block: %v", err)
	}
}

func TestRemoveBlocks(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 23, "a1", "a2")
	b := Block{ID: 1100, NumBytes: 1, GenStamp: 1}
	h.addComplete(1, b, 2, "a1", "a2")
	h.m.RemoveBlocks([]int64{b.ID, 424242})
	h.check()
	if h.m.NumBlocks() != 0 {
		t.Fatal("block kept")
	}
	for _, n := range []string{"a1", "a2"} {
		// 32% of two live nodes: one node gets its deletions per pass.
		h.m.ComputeWork(h.now)
		if got := invalidated(h.heartbeat(n)); !slices.Equal(got, []int64{b.ID}) {
			t.Fatalf("%s deletes %v", n, got)
		}
	}
	if err := h.m.AddBlock(2, Block{ID: 1, GenStamp: 1}, 1, Complete, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.m.AddBlock(3, Block{ID: 1, GenStamp: 1}, 1, Complete, nil); !errors.Is(err, ErrBlockExists) {
		t.Fatalf("duplicate id: %v", err)
	}
}

func TestExcessChoice(t *testing.T) {
	for _, c := range []struct {
		name  string
		hint  string
		stale bool
		want  []string
	}{
		{name: "least remaining on the crowded rack", want: []string{"a1", "b1"}},
		{name: "deletion hint", hint: "uuid-a1", want: []string{"a2", "b1"}},
		{name: "hint that would lose a rack is ignored", hint: "uuid-b1", want: []string{"a1", "b1"}},
		{name: "stale node first", stale: true, want: []string{"a2", "b1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := activeHarness(t, DefaultConfig(), 24, "a1", "a2", "b1")
			h.space["a2"] = 10 * gib
			h.heartbeatAll()
			b := Block{ID: 1200, NumBytes: 1, GenStamp: 1}
			h.addComplete(1, b, 2, "a1", "b1")
			if c.stale {
				h.advance(time.Minute)
				h.heartbeatAll("a1")
			}
			h.ibr("a2", ReceivedDeleted{Block: b, Status: Received, DeleteHint: c.hint})
			if got := h.holders(b.ID); !slices.Equal(got, c.want) {
				t.Fatalf("holders %v, want %v", got, c.want)
			}
		})
	}
}

// TestFullReportInSlices: other calls between the slices of a full report
// change what they change, and the report does not undo them.
func TestFullReportInSlices(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 13, "a1", "a2")
	blk := func(id int64) Block { return Block{ID: id, NumBytes: 10, GenStamp: 1001} }
	for id := int64(1); id <= 10; id++ {
		h.addComplete(1, blk(id), 1, "a1")
	}
	// The node's report, taken before the calls below: 1..8 and an
	// unknown 20; 9 and 10 are gone from the node.
	var reps []ReportedReplica
	for _, id := range []int64{1, 2, 3, 4, 5, 6, 7, 8, 20} {
		reps = append(reps, fin(blk(id)))
	}
	fr, err := h.m.StartFullReport(h.id("a1").UUID, stID("a1"), h.now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.m.StartFullReport(h.id("a2").UUID, stID("a2"), h.now); !errors.Is(err, ErrReportInProgress) {
		t.Fatalf("second report started: %v", err)
	}
	if err := h.m.ReportSlice(fr, reps[:2], h.now); err != nil {
		t.Fatal(err)
	}
	h.check()
	// Between slices: a new block written to a1, block 3 deleted on a1 by
	// the node (its report still lists it), block 5's file deleted.
	if err := h.m.AddBlock(2, blk(11), 1, UnderConstruction, []DatanodeID{h.id("a1")}); err != nil {
		t.Fatal(err)
	}
	h.ibr("a1", ReceivedDeleted{Block: blk(11), Status: Received}, ReceivedDeleted{Block: blk(3), Status: Deleted})
	h.m.RemoveBlocks([]int64{5})
	h.check()
	for k := 2; k < len(reps); k += 3 {
		if err := h.m.ReportSlice(fr, reps[k:min(k+3, len(reps))], h.now); err != nil {
			t.Fatal(err)
		}
		h.check()
	}
	for n := 0; ; n++ {
		done, err := h.m.SweepSlice(fr, 2, h.now)
		if err != nil {
			t.Fatal(err)
		}
		h.check()
		if done {
			break
		}
		if n > 100 {
			t.Fatal("sweep does not end")
		}
		if n == 1 { // a removal during the sweep moves entries about
			h.m.RemoveBlocks([]int64{1})
		}
	}
	var on []int64
	for id := int64(1); id <= 20; id++ {
		if slices.Equal(h.holders(id), []string{"a1"}) {
			on = append(on, id)
		}
	}
	if want := []int64{2, 4, 6, 7, 8, 11}; !slices.Equal(on, want) {
		t.Fatalf("a1 holds %v, want %v", on, want)
	}
	res := fr.Result()
	if res.Removed != 2 || res.Invalidated != 1 {
		t.Fatalf("result %+v, want 2 removed (9, 10) and 1 invalidated (20; 5 was by its deletion)", res)
	}
	h.m.ComputeWork(h.now)
	got := invalidated(h.heartbeat("a1"))
	slices.Sort(got)
	if !slices.Equal(got, []int64{1, 5, 20}) {
		t.Fatalf("a1 deletes %v, want [1 5 20]", got)
	}
	if _, err := h.m.StartFullReport(h.id("a2").UUID, stID("a2"), h.now); err != nil {
		t.Fatalf("next report after the end: %v", err)
	}
}

// TestReportForStopsAtBudget: with a budget always spent, ReportFor and
// SweepFor do one stride of work per call and leave the rest to the next;
// the report done so is the same as in one call.
func TestReportForStopsAtBudget(t *testing.T) {
	const n = 1000
	blk := func(id int64) Block { return Block{ID: id, NumBytes: 10, GenStamp: 1001} }
	build := func() (*harness, []ReportedReplica) {
		h := activeHarness(t, DefaultConfig(), 31, "a1")
		var reps []ReportedReplica
		for id := int64(1); id <= n; id++ {
			h.addComplete(1, blk(id), 1)
			if id%10 != 1 { // every tenth is missing from the node
				reps = append(reps, fin(blk(id)))
			}
		}
		for id := int64(1); id <= n; id += 2 { // odd ones were recorded before
			h.ibr("a1", ReceivedDeleted{Block: blk(id), Status: Received})
		}
		reps = append(reps, fin(blk(5000)), fin(blk(5001))) // unknown
		return h, reps
	}
	want := func() ReportResult {
		h, reps := build()
		return h.fbr("a1", reps...)
	}()

	h, reps := build()
	spent := func() bool { return true } // a slice's time is always up
	fr, err := h.m.StartFullReport(h.id("a1").UUID, stID("a1"), h.now)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for rest := reps; len(rest) > 0; calls++ {
		k, err := h.m.ReportFor(fr, rest, h.now, spent)
		if err != nil {
			t.Fatal(err)
		}
		if k != min(clockStride, len(rest)) {
			t.Fatalf("ReportFor past its budget did %d of %d replicas, want one stride (%d)", k, len(rest), clockStride)
		}
		rest = rest[k:]
		if calls > n {
			t.Fatal("ReportFor does not end")
		}
	}
	if want := (len(reps) + clockStride - 1) / clockStride; calls != want {
		t.Fatalf("%d calls, want %d", calls, want)
	}
	h.check()
	sweeps := 0
	for done := false; !done; sweeps++ {
		if done, err = h.m.SweepFor(fr, spent, h.now); err != nil {
			t.Fatal(err)
		}
		h.check()
		if sweeps > 2*n {
			t.Fatal("SweepFor does not end")
		}
	}
	// Two walks a stride at a time: the sweep of n replicas, the clearing
	// of those it kept.
	if min := (2*n - n/10) / clockStride; sweeps < min {
		t.Fatalf("swept in %d calls, want at least %d", sweeps, min)
	}
	if got := fr.Result(); got != want {
		t.Fatalf("result in slices %+v, in one call %+v", got, want)
	}
	if want.Removed != n/10 || want.Invalidated != 2 || want.Added != n/2 {
		t.Fatalf("result %+v", want)
	}
	if _, err := h.m.StartFullReport(h.id("a1").UUID, stID("a1"), h.now); err != nil {
		t.Fatalf("next report after the end: %v", err)
	}
}

// TestDeletedBlockNotResurrected: a block marked deleted (its file gone,
// its removal queued) leaves the counters and queues at once, and a report
// of one of its replicas, full or incremental, orders the replica deleted
// instead of recording it; the removal then forgets it.
func TestDeletedBlockNotResurrected(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 32, "a1", "a2", "a3")
	b := Block{ID: 700, NumBytes: 10, GenStamp: 1001}
	keep := Block{ID: 701, NumBytes: 10, GenStamp: 1001}
	h.addComplete(1, b, 3, "a1")
	h.addComplete(2, keep, 2, "a1")
	if s := h.m.Stats(h.now); s.UnderReplicated != 2 {
		t.Fatalf("stats %+v", s)
	}
	if k := h.m.MarkDeleted([]int64{b.ID, 424242}, nil); k != 2 {
		t.Fatalf("MarkDeleted handled %d of 2", k)
	}
	h.check()
	if s := h.m.Stats(h.now); s.UnderReplicated != 1 {
		t.Fatalf("a deleted block is still queued for copies: %+v", s)
	}
	// The balancer is not offered it to move.
	bs, err := h.m.GetBlocks(h.id("a1"), 1<<40, 0)
	if err != nil || len(bs) != 1 || bs[0].ID != keep.ID {
		t.Fatalf("getBlocks on a1: %+v, %v; want only blk_%d", bs, err, keep.ID)
	}
	res := h.fbr("a2", fin(b), fin(keep))
	if res.Invalidated != 1 || res.Added != 1 {
		t.Fatalf("full report %+v, want the deleted block's replica invalidated and keep's added", res)
	}
	res = h.ibr("a3", ReceivedDeleted{Block: b, Status: Received})
	if res.Invalidated != 1 {
		t.Fatalf("incremental report %+v, want the replica invalidated", res)
	}
	if got := h.holders(b.ID); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("the deleted block gained replicas: %v", got)
	}
	got := map[string][]int64{}
	for range 10 { // a pass gives some of the nodes their deletions
		h.m.ComputeWork(h.now)
		for _, n := range []string{"a2", "a3"} {
			got[n] = append(got[n], invalidated(h.heartbeat(n))...)
		}
	}
	for _, n := range []string{"a2", "a3"} {
		if !slices.Equal(got[n], []int64{b.ID}) {
			t.Fatalf("%s deletes %v, want [%d]", n, got[n], b.ID)
		}
	}
	if k := h.m.RemoveBlocksFor([]int64{b.ID}, nil); k != 1 {
		t.Fatalf("RemoveBlocksFor handled %d of 1", k)
	}
	h.check()
	if h.m.NumBlocks() != 1 {
		t.Fatalf("%d blocks, want 1", h.m.NumBlocks())
	}
	var a1 []int64
	for range 10 {
		h.m.ComputeWork(h.now)
		a1 = append(a1, invalidated(h.heartbeat("a1"))...)
	}
	if !slices.Equal(a1, []int64{b.ID}) {
		t.Fatalf("a1 deletes %v, want [%d]", a1, b.ID)
	}
}
