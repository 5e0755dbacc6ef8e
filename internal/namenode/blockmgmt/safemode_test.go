package blockmgmt

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSafeModeThresholdAndExtension(t *testing.T) {
	h := newHarness(t, DefaultConfig(), 31, "a1", "a2")
	var blks []Block
	for i := range 5 {
		b := Block{ID: int64(10 + i), NumBytes: 100, GenStamp: 1}
		blks = append(blks, b)
		if err := h.m.AddBlock(1, b, 2, Complete, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The last block of an open file does not count.
	if err := h.m.AddBlock(2, Block{ID: 99, GenStamp: 1}, 2, UnderConstruction, nil); err != nil {
		t.Fatal(err)
	}
	h.m.Activate(h.now)
	// (long)(5 × 0.999f) = 4 blocks needed.
	h.fbr("a1", fin(blks[0]), fin(blks[1]), fin(blks[2]))
	h.m.Tick(h.now)
	on, msg := h.m.SafeModeStatus(h.now)
	want := "Safe mode is ON. The reported blocks 3 needs additional 1 blocks to reach the threshold 0.9990 of total blocks 5.\n" +
		"The number of live datanodes 2 has reached the minimum number 0. " +
		"Safe mode will be turned off automatically once the thresholds have been reached."
	if !on || msg != want {
		t.Fatalf("status %v\n%q\nwant\n%q", on, msg, want)
	}
	if w := h.m.ComputeWork(h.now); w != (WorkResult{}) {
		t.Fatalf("work in safe mode: %+v", w)
	}
	h.fbr("a2", fin(blks[3]))
	h.advance(29 * time.Second)
	h.m.Tick(h.now)
	on, msg = h.m.SafeModeStatus(h.now)
	if !on || !strings.Contains(msg, "has reached the threshold 0.9990 of total blocks 5. ") ||
		!strings.HasSuffix(msg, "In safe mode extension. Safe mode will be turned off automatically in 1 seconds.") {
		t.Fatalf("extension status %v %q", on, msg)
	}
	h.advance(time.Second)
	h.m.Tick(h.now)
	if on, msg := h.m.SafeModeStatus(h.now); on || msg != "" {
		t.Fatalf("still on: %q", msg)
	}
	// Leaving builds the queues: blk 14 has no replica (missing), the others
	// have one of two.
	s := h.m.Stats(h.now)
	if s.MissingBlocks != 1 || s.UnderReplicated != 4 {
		t.Fatalf("stats %+v", s)
	}
	h.check()
}

func TestSafeModeEmptyAndManual(t *testing.T) {
	h := newHarness(t, DefaultConfig(), 32)
	if !h.m.InSafeMode() {
		t.Fatal("a new manager starts in safe mode")
	}
	h.m.Activate(h.now)
	if h.m.InSafeMode() {
		t.Fatal("empty namespace: safe mode must end at once")
	}
	h.m.EnterSafeMode()
	h.advance(time.Hour)
	h.m.Tick(h.now)
	on, msg := h.m.SafeModeStatus(h.now)
	if !on || !strings.Contains(msg, "turned on manually") {
		t.Fatalf("manual: %v %q", on, msg)
	}
	if err := h.m.LeaveSafeMode(false); err != nil || h.m.InSafeMode() {
		t.Fatalf("leave: %v", err)
	}
}

func TestSafeModeMinDatanodes(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SafeModeMinDataNodes = 2
	cfg.SafeModeExtension = 0
	h := newHarness(t, cfg, 33, "a1")
	h.m.Activate(h.now)
	on, msg := h.m.SafeModeStatus(h.now)
	if !on || !strings.Contains(msg, "The number of live datanodes 1 needs an additional 1 live datanodes to reach the minimum number 2.") {
		t.Fatalf("%v %q", on, msg)
	}
	h.addNode("a2", "10.0.0.2")
	if h.m.InSafeMode() {
		t.Fatal("still in safe mode with enough nodes and no extension")
	}
}

func TestSafeModeFutureBlocks(t *testing.T) {
	h := newHarness(t, DefaultConfig(), 34, "a1")
	h.m.SetMaxGenStamp(1000)
	h.m.Activate(h.now)
	if h.m.InSafeMode() {
		t.Fatal("empty namespace in safe mode")
	}
	h.m.EnterSafeMode()
	h.fbr("a1", fin(Block{ID: 5, NumBytes: 123, GenStamp: 2000}))
	if s := h.m.Stats(h.now); s.BlocksInFuture != 123 || s.PendingDeletion != 0 {
		t.Fatalf("stats %+v", s)
	}
	if err := h.m.LeaveSafeMode(false); !errors.Is(err, ErrBytesInFuture) {
		t.Fatalf("leave: %v", err)
	}
	if err := h.m.LeaveSafeMode(true); err != nil || h.m.InSafeMode() {
		t.Fatalf("force leave: %v", err)
	}
}

// TestQueuesPopulatedInSlices: leaving safe mode judges popAtOnce blocks at
// once and the rest in PopulateFor's slices, each ended by its Over; a
// block removed before its turn is skipped, and every block left ends up
// in the queues.
func TestQueuesPopulatedInSlices(t *testing.T) {
	h := newHarness(t, DefaultConfig(), 32, "a1", "a2")
	const blocks = popAtOnce + 3*5*clockStride + 7
	for i := range blocks {
		if err := h.m.AddBlock(int64(1+i), Block{ID: int64(1000 + i), NumBytes: 1, GenStamp: 1}, 2, Complete, nil); err != nil {
			t.Fatal(err)
		}
	}
	h.m.Activate(h.now)
	if err := h.m.LeaveSafeMode(false); err != nil {
		t.Fatal(err)
	}
	if !h.m.Populating() {
		t.Fatal("all blocks judged at once")
	}
	// popAtOnce, rounded up to whole strides between two questions to Over.
	atOnce := (popAtOnce + clockStride - 1) / clockStride * clockStride
	if s := h.m.Stats(h.now); s.MissingBlocks != int64(atOnce) {
		t.Fatalf("%d missing blocks after leaving, want the first %d", s.MissingBlocks, atOnce)
	}
	h.m.RemoveBlocks([]int64{1000 + blocks - 1}) // not judged yet
	slicesTaken := 0
	for more := true; more; slicesTaken++ {
		calls := 0
		more = h.m.PopulateFor(func() bool { calls++; return calls == 5 })
	}
	if want := (blocks - atOnce + 5*clockStride - 1) / (5 * clockStride); slicesTaken != want {
		t.Fatalf("%d slices, want %d", slicesTaken, want)
	}
	if s := h.m.Stats(h.now); s.MissingBlocks != blocks-1 {
		t.Fatalf("%d missing blocks after the slices, want %d", s.MissingBlocks, blocks-1)
	}
	h.check()
	// A standby drops its queues and stops populating; becoming active
	// again starts over, in slices again.
	h.m.SetStandby(true, h.now)
	if h.m.Populating() {
		t.Fatal("a standby goes on populating")
	}
	h.m.SetStandby(false, h.now)
	if !h.m.Populating() {
		t.Fatal("becoming active judged every block at once")
	}
	for h.m.PopulateFor(func() bool { return false }) {
	}
	if s := h.m.Stats(h.now); s.MissingBlocks != blocks-1 {
		t.Fatalf("%d missing blocks after becoming active, want %d", s.MissingBlocks, blocks-1)
	}
	h.check()
}
