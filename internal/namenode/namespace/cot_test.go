package namespace

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
)

// TestCopyOnTruncate follows a truncate inside a block a snapshot holds
// through plan, apply, replay, the image, the close after recovery and the
// snapshot's deletion (the "Copy-on-truncate" transitions of the package
// doc).
func TestCopyOnTruncate(t *testing.T) {
	tr := New(testCfg())
	mkdir(t, tr, super, "/d", 0o755)
	create(t, tr, super, "/d/f", 2, false) // blocks of 100 bytes
	orig, _ := tr.Blocks("/d/f")
	ops, err := tr.PlanAllowSnapshot(super, "/d")
	must(t, tr, ops, err)
	_, ops, err = tr.PlanCreateSnapshot(super, "/d", "s1", 0, 100)
	must(t, tr, ops, err)
	base := roundTrip(t, tr) // the state a replay starts from

	done, ops, err := tr.PlanTruncate(super, "/d/f", 150, "cl", "m", 110)
	if err != nil || done {
		t.Fatalf("truncate: done=%v err=%v", done, err)
	}
	if len(ops) != 3 {
		t.Fatalf("ops %+v", ops)
	}
	alloc, ok1 := ops[0].(*op.AllocateBlockID)
	gs, ok2 := ops[1].(*op.SetGenstamp)
	trunc, ok3 := ops[2].(*op.Truncate)
	if !ok1 || !ok2 || !ok3 || trunc.TruncateBlock == nil {
		t.Fatalf("ops %+v", ops)
	}
	want := op.Block{ID: tr.LastBlockID() + 1, NumBytes: 50, GenStamp: tr.GenStamp() + 1}
	if alloc.BlockID != want.ID || gs.GenStamp != want.GenStamp || *trunc.TruncateBlock != want {
		t.Fatalf("truncate block %+v (alloc %d, gs %d), want %+v", *trunc.TruncateBlock, alloc.BlockID, gs.GenStamp, want)
	}
	var freed []op.Block
	for _, o := range ops {
		var eff Effects
		if err := tr.ApplyEffects(o, &eff); err != nil {
			t.Fatal(err)
		}
		freed = append(freed, eff.FreedBlocks...)
	}
	if len(freed) != 0 {
		t.Fatalf("the snapshot's block was freed: %+v", freed)
	}
	id, _ := tr.InodeID("/d/f")
	if src, ok := tr.TruncateSource(id); !ok || src != orig[1].ID {
		t.Fatalf("truncate source %d %v, want %d", src, ok, orig[1].ID)
	}
	live, _ := tr.Blocks("/d/f")
	if len(live) != 2 || live[0] != orig[0] || live[1] != want {
		t.Fatalf("live blocks %+v", live)
	}
	if _, holder, _, _, uc := tr.UnderConstructionFile(id); !uc || holder != "cl" {
		t.Fatalf("file not open for the truncating client: %q %v", holder, uc)
	}
	fi, snapBlocks, err := tr.FileBlocks(super, "/d/.snapshot/s1/f")
	if err != nil || fi.Length != 200 || len(snapBlocks) != 2 || snapBlocks[1] != orig[1] {
		t.Fatalf("snapshot view: %+v %+v %v", fi, snapBlocks, err)
	}
	// The block map keeps the old block: only the version holds it.
	held := map[int64]bool{}
	tr.EachFileWithBlocks(func(_ uint64, _ uint16, _ uint8, blocks []op.Block, _ bool) {
		for _, b := range blocks {
			held[b.ID] = true
		}
	})
	if !held[orig[1].ID] || !held[want.ID] {
		t.Fatalf("blocks reported for the block map: %v", held)
	}

	// Replay and the image rebuild the same tree, the copy source included.
	applyAll(t, base, ops)
	if a, b := dump(t, tr), dump(t, base); a != b {
		t.Fatalf("replay differs:\n%s\n---\n%s", a, b)
	}
	img := roundTrip(t, tr)
	if a, b := dump(t, tr), dump(t, img); a != b {
		t.Fatalf("image round trip differs:\n%s\n---\n%s", a, b)
	}
	if src, ok := img.TruncateSource(id); !ok || src != orig[1].ID {
		t.Fatalf("after the image: truncate source %d %v", src, ok)
	}

	// Recovery commits the new block; the file closes, the old block stays.
	final := want
	final.GenStamp++
	cl, err := tr.PlanCloseUnderConstruction(id, []op.Block{orig[0], final}, 120)
	must(t, tr, cl, err)
	if _, ok := tr.TruncateSource(id); ok {
		t.Fatal("closed file still has a truncate source")
	}
	if fi, _, err := tr.FileBlocks(super, "/d/.snapshot/s1/f"); err != nil || fi.Length != 200 {
		t.Fatalf("snapshot view after close: %+v %v", fi, err)
	}
	if fi, _ := tr.Stat(super, "/d/f"); fi.Length != 150 {
		t.Fatalf("live length %d", fi.Length)
	}

	// Deleting the snapshot frees the old block, and only it.
	ops, err = tr.PlanDeleteSnapshot(super, "/d", "s1", 130)
	if err != nil {
		t.Fatal(err)
	}
	freed = nil
	for _, o := range ops {
		var eff Effects
		if err := tr.ApplyEffects(o, &eff); err != nil {
			t.Fatal(err)
		}
		freed = append(freed, eff.FreedBlocks...)
	}
	if len(freed) != 1 || freed[0].ID != orig[1].ID {
		t.Fatalf("freed %+v, want blk_%d", freed, orig[1].ID)
	}
}

// TestTruncateWithoutSnapshotInPlace: with no snapshot holding the block,
// the cut keeps the block id (in-place truncate recovery); the file is
// marked as truncating in place (not as a copy) through apply, replay and
// the image, its cut block keeps the replicas' stamp until the recovery
// commits, and the mark goes when the file closes or is deleted.
func TestTruncateWithoutSnapshotInPlace(t *testing.T) {
	tr := New(testCfg())
	mkdir(t, tr, super, "/d", 0o755)
	create(t, tr, super, "/d/f", 2, false)
	orig, _ := tr.Blocks("/d/f")
	base := roundTrip(t, tr)
	_, ops, err := tr.PlanTruncate(super, "/d/f", 150, "cl", "m", 110)
	if err != nil || len(ops) != 2 {
		t.Fatalf("ops %+v, %v", ops, err)
	}
	tb := ops[1].(*op.Truncate).TruncateBlock
	if tb == nil || tb.ID != orig[1].ID || tb.NumBytes != 50 || tb.GenStamp <= orig[1].GenStamp {
		t.Fatalf("truncate block %+v", tb)
	}
	applyAll(t, tr, ops)
	id, _ := tr.InodeID("/d/f")
	if _, ok := tr.TruncateSource(id); ok {
		t.Fatal("an in-place truncate has a copy source")
	}
	if !tr.TruncatingInPlace(id) {
		t.Fatal("the file is not marked as truncating in place")
	}
	cut := op.Block{ID: orig[1].ID, NumBytes: 50, GenStamp: orig[1].GenStamp}
	if live, _ := tr.Blocks("/d/f"); len(live) != 2 || live[1] != cut {
		t.Fatalf("live blocks %+v, want the last %+v", live, cut)
	}
	applyAll(t, base, ops)
	if a, b := dump(t, tr), dump(t, base); a != b || !strings.Contains(a, " truncating") {
		t.Fatalf("replay differs or lacks the mark:\n%s\n---\n%s", a, b)
	}
	img := roundTrip(t, tr)
	if a, b := dump(t, tr), dump(t, img); a != b {
		t.Fatalf("image round trip differs:\n%s\n---\n%s", a, b)
	}
	if !img.TruncatingInPlace(id) {
		t.Fatal("after the image: not truncating in place")
	}
	if _, ok := img.TruncateSource(id); ok {
		t.Fatal("after the image: an in-place truncate has a copy source")
	}
	if _, _, _, _, uc := img.UnderConstructionFile(id); !uc {
		t.Fatal("after the image: the file is not open")
	}

	// The recovery's commit closes the file: no mark left.
	final := cut
	final.GenStamp = tb.GenStamp
	cl, err := tr.PlanCloseUnderConstruction(id, []op.Block{orig[0], final}, 120)
	must(t, tr, cl, err)
	if tr.TruncatingInPlace(id) {
		t.Fatal("closed file still truncating")
	}
	if fi, _ := tr.Stat(super, "/d/f"); fi.Length != 150 {
		t.Fatalf("live length %d", fi.Length)
	}
	// A file deleted while truncating leaves no mark behind either.
	_, ops, err = img.PlanDelete(super, "/d/f", false, 130)
	must(t, img, ops, err)
	if img.TruncatingInPlace(id) {
		t.Fatal("deleted file still truncating")
	}
}

// TestImageTruncateSourceWithoutBlocks: an image naming a truncate source
// for an open file without blocks is refused with an error naming it.
func TestImageTruncateSourceWithoutBlocks(t *testing.T) {
	tr := New(testCfg())
	mkdir(t, tr, super, "/d", 0o755)
	create(t, tr, super, "/d/f", 1, false)
	_, ops, err := tr.PlanTruncate(super, "/d/f", 50, "cl", "m", 110)
	must(t, tr, ops, err)
	var recs []*fsimage.Inode
	if err := tr.Export(func(r *fsimage.Inode) error {
		c := *r
		c.Name = append([]byte(nil), r.Name...)
		c.Blocks = append([]op.Block(nil), r.Blocks...)
		if r.UC != nil {
			uc := *r.UC
			c.UC = &uc
			c.Blocks = nil
		}
		recs = append(recs, &c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	i := 0
	_, err = NewFromImage(tr.Config(), tr.ImageHeader(1), func() (*fsimage.Inode, error) {
		if i == len(recs) {
			return nil, io.EOF
		}
		i++
		return recs[i-1], nil
	})
	if !errors.Is(err, ErrImage) || !strings.Contains(err.Error(), "truncate source") {
		t.Fatalf("load: %v, want an image error naming the truncate source", err)
	}
}

// TestCopyOnTruncateCorruptOps: apply refuses a truncate block with an id
// that was never allocated, or a copy no snapshot asks for.
func TestCopyOnTruncateCorruptOps(t *testing.T) {
	tr := New(testCfg())
	mkdir(t, tr, super, "/d", 0o755)
	create(t, tr, super, "/d/f", 2, false)
	last := tr.LastBlockID()
	gs := tr.NextGenStamp()
	applyAll(t, tr, []op.Op{&op.SetGenstamp{GenStamp: gs}})
	bad := &op.Truncate{Path: "/d/f", NewLength: 150, ClientName: "c", TruncateBlock: &op.Block{ID: last + 5, NumBytes: 50, GenStamp: gs}}
	if err := tr.Apply(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("unallocated id: %v", err)
	}
	applyAll(t, tr, []op.Op{&op.AllocateBlockID{BlockID: last + 1}})
	noSnap := &op.Truncate{Path: "/d/f", NewLength: 150, ClientName: "c", TruncateBlock: &op.Block{ID: last + 1, NumBytes: 50, GenStamp: gs}}
	if err := tr.Apply(noSnap); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("copy without a snapshot: %v", err)
	}
	wrongLen := &op.Truncate{Path: "/d/f", NewLength: 150, ClientName: "c", TruncateBlock: &op.Block{ID: last, NumBytes: 40, GenStamp: gs}}
	if err := tr.Apply(wrongLen); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("wrong length: %v", err)
	}
	if fi, _ := tr.Stat(super, "/d/f"); fi.Length != 200 || fi.UnderConstruction {
		t.Fatalf("a refused op changed the file: %+v", fi)
	}
}

// TestCopyOnTruncateSnapshotDeletedDuringCopy: deleting the snapshot while
// the copy runs keeps the block being copied (as HDFS keeps a truncate
// block under recovery), through the image too; the file's close then frees
// it. A file deleted during the copy frees it with its own blocks.
func TestCopyOnTruncateSnapshotDeletedDuringCopy(t *testing.T) {
	for _, end := range []string{"close", "delete"} {
		t.Run(end, func(t *testing.T) {
			tr := New(testCfg())
			mkdir(t, tr, super, "/d", 0o755)
			create(t, tr, super, "/d/f", 2, false)
			orig, _ := tr.Blocks("/d/f")
			ops, err := tr.PlanAllowSnapshot(super, "/d")
			must(t, tr, ops, err)
			_, ops, err = tr.PlanCreateSnapshot(super, "/d", "s1", 0, 100)
			must(t, tr, ops, err)
			_, ops, err = tr.PlanTruncate(super, "/d/f", 150, "cl", "m", 110)
			must(t, tr, ops, err)
			freedBy := func(ops []op.Op) []op.Block {
				t.Helper()
				var freed []op.Block
				for _, o := range ops {
					var eff Effects
					if err := tr.ApplyEffects(o, &eff); err != nil {
						t.Fatal(err)
					}
					freed = append(freed, eff.FreedBlocks...)
				}
				return freed
			}
			ops, err = tr.PlanDeleteSnapshot(super, "/d", "s1", 120)
			if err != nil {
				t.Fatal(err)
			}
			if freed := freedBy(ops); len(freed) != 0 {
				t.Fatalf("the block being copied was freed with the snapshot: %+v", freed)
			}
			held := false
			tr.EachFileWithBlocks(func(_ uint64, _ uint16, _ uint8, blocks []op.Block, _ bool) {
				held = held || hasBlock(blocks, orig[1].ID)
			})
			if !held {
				t.Fatal("the block being copied is not reported to the block map")
			}
			if a, b := dump(t, tr), dump(t, roundTrip(t, tr)); a != b {
				t.Fatalf("image round trip differs:\n%s\n---\n%s", a, b)
			}
			id, _ := tr.InodeID("/d/f")
			live, _ := tr.Blocks("/d/f")
			if end == "close" {
				ops, err = tr.PlanCloseUnderConstruction(id, live, 130)
			} else {
				_, ops, err = tr.PlanDelete(super, "/d/f", false, 130)
			}
			if err != nil {
				t.Fatal(err)
			}
			freed := freedBy(ops)
			want := 1
			if end == "delete" {
				want = 3
			}
			if len(freed) != want || !hasBlock(freed, orig[1].ID) {
				t.Fatalf("%s freed %+v, want the copied block blk_%d among %d", end, freed, orig[1].ID, want)
			}
			if a, b := dump(t, tr), dump(t, roundTrip(t, tr)); a != b {
				t.Fatalf("image round trip differs:\n%s\n---\n%s", a, b)
			}
		})
	}
}
