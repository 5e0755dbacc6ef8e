package blockmgmt

import (
	"slices"
	"testing"
)

// TestStandbyPostponesWhatItCannotJudge: a standby's block map lags the
// edit log. A report of a block it has not read yet, or of a newer stamp,
// waits in the queue (no deletion, no corrupt mark) and is processed once
// the edits that explain it are applied; a report of a deleted block (an
// older stamp) is dropped; the standby gives no orders; leaving standby
// processes what is still queued as an active would.
func TestStandbyPostponesWhatItCannotJudge(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 1, "a1", "a2", "b1")
	h.m.SetMaxGenStamp(1000)
	h.m.SetStandby(true, h.now)

	known := Block{ID: 1, NumBytes: 10, GenStamp: 1000}
	h.addComplete(7, known, 3, "a1")
	// A block the standby's edits have not reached yet, and a newer stamp
	// of a known one (a pipeline recovery the standby has not read).
	future := Block{ID: 2, NumBytes: 20, GenStamp: 1001}
	newer := Block{ID: 1, NumBytes: 10, GenStamp: 1002}
	h.ibr("a2", ReceivedDeleted{Block: future, Status: Received})
	h.ibr("b1", ReceivedDeleted{Block: newer, Status: Received})
	// A replica of a long-deleted block: the active deletes it; the
	// standby neither deletes nor queues it.
	h.ibr("b1", ReceivedDeleted{Block: Block{ID: 99, NumBytes: 5, GenStamp: 10}, Status: Received})
	if n := h.m.NumQueued(); n != 2 {
		t.Fatalf("queued %d reports, want 2", n)
	}
	if got := h.holders(1); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("holders of blk_1 before the edits: %v (the newer stamp must not be judged yet)", got)
	}
	for n, cmds := range h.heartbeatAll() {
		if len(cmds) > 0 {
			t.Fatalf("the standby gave %s orders: %v", n, cmds)
		}
	}
	if w := h.m.ComputeWork(h.now); w != (WorkResult{}) {
		t.Fatalf("the standby scheduled work: %+v", w)
	}

	// The tailer applies the edits: blk_2 is added, blk_1 gets stamp 1002.
	if err := h.m.AddBlock(8, future, 3, Complete, nil); err != nil {
		t.Fatal(err)
	}
	h.m.ProcessQueued(h.now)
	if got := h.holders(2); !slices.Equal(got, []string{"a2"}) {
		t.Fatalf("holders of blk_2 after its edit: %v", got)
	}
	if n := h.m.NumQueued(); n != 1 {
		t.Fatalf("queued %d after the first edit, want 1 (blk_1's stamp is still older)", n)
	}
	if err := h.m.AddBlock(7, newer, 3, Complete, nil); err != nil {
		t.Fatal(err)
	}
	h.m.ProcessQueued(h.now)
	if n := h.m.NumQueued(); n != 0 {
		t.Fatalf("queued %d after the edits, want 0", n)
	}
	if got := h.holders(1); !slices.Contains(got, "b1") {
		t.Fatalf("holders of blk_1 after its new stamp: %v, want b1 among them", got)
	}
	h.check()

	// Becoming active: nothing left queued; orders flow again.
	h.m.SetStandby(false, h.now)
	if h.m.InStandby() {
		t.Fatal("still in standby mode")
	}
}

// TestStandbyQueueBounded: a DataNode cannot make a standby queue more than
// maxQueuedMessages reports.
func TestStandbyQueueBounded(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 1, "a1")
	h.m.SetStandby(true, h.now)
	var items []ReceivedDeleted
	for i := range maxQueuedMessages + 100 {
		items = append(items, ReceivedDeleted{Block: Block{ID: int64(1000 + i), GenStamp: 5}, Status: Received})
	}
	if _, err := h.m.ProcessIncremental(h.id("a1").UUID, stID("a1"), items, h.now); err != nil {
		t.Fatal(err)
	}
	if n := h.m.NumQueued(); n > maxQueuedMessages {
		t.Fatalf("queued %d, over the bound %d", n, maxQueuedMessages)
	}
}

// TestStandbyAppendRace: a standby hears the DataNodes of an appended
// block in any order relative to the edits: a full report made before the
// append, the new stamp's replicas before the edit that gives the stamp.
// None of it marks a good replica corrupt — not when the edits are applied,
// not at failover; a replica that stays stale is marked corrupt at
// failover, as the active marks it; a newer report supersedes a queued
// older one.
func TestStandbyAppendRace(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 1, "a1", "a2", "b1")
	h.m.SetMaxGenStamp(1000)
	h.m.SetStandby(true, h.now)
	old := Block{ID: 1, NumBytes: 10, GenStamp: 1000}
	h.addComplete(7, old, 3, "a1", "a2", "b1")

	// The edits of the append: the block reopened...
	if err := h.m.ReopenForAppend(1); err != nil {
		t.Fatal(err)
	}
	// ...a full report that a1 made before the append arrives late...
	h.fbr("a1", fin(old))
	// ...and the replicas of the new stamp, before the standby reads it.
	appended := Block{ID: 1, NumBytes: 30, GenStamp: 1001}
	for _, n := range []string{"a1", "a2"} {
		h.ibr(n, ReceivedDeleted{Block: Block{ID: 1, NumBytes: 0, GenStamp: 1001}, Status: Receiving})
		h.ibr(n, ReceivedDeleted{Block: appended, Status: Received})
	}
	// The edits with the new stamp, then the commit (the next block's
	// allocation), in one tailing pass.
	h.m.UpdateBlock(Block{ID: 1, NumBytes: 0, GenStamp: 1001})
	if _, err := h.m.CommitBlock(appended); err != nil {
		t.Fatal(err)
	}
	h.check()
	if info, _ := h.m.BlockInfo(1); info.Corrupt != 0 {
		t.Fatalf("the standby marked %d replicas corrupt: %+v", info.Corrupt, info)
	}
	if got := h.holders(1); !slices.Equal(got, []string{"a1", "a2", "b1"}) {
		t.Fatalf("holders after the commit: %v", got)
	}
	// b1 missed the append: its replica is stale, and stays queued; a2
	// sends a stale report again, then the good one, which supersedes it.
	h.ibr("b1", ReceivedDeleted{Block: old, Status: Received})
	h.ibr("a2", ReceivedDeleted{Block: old, Status: Received})
	h.ibr("a2", ReceivedDeleted{Block: appended, Status: Received})
	if n := h.m.NumQueued(); n != 1 {
		t.Fatalf("queued %d reports, want b1's stale one only", n)
	}
	h.m.SetStandby(false, h.now)
	h.check()
	info, _ := h.m.BlockInfo(1)
	if info.Corrupt != 1 || info.Live != 2 {
		t.Fatalf("after failover: %+v, want b1 corrupt and two live", info)
	}
}
