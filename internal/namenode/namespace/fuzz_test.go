package namespace

import (
	"bytes"
	"io"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/fsimage"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// FuzzPlans feeds client-supplied paths to the plans: none may panic or change
// the tree, and whatever a plan returns must apply.
func FuzzPlans(f *testing.F) {
	for _, s := range []struct {
		sel  uint8
		p, q string
	}{
		{0, "/_test/u1/x/y", ""}, {1, "/_test/u1/file", ""}, {2, "/_test/u1/dir", "/_test/u1/empty"},
		{3, "/_test/u1/dir/", "/_test/u1/empty/"}, {4, "//a//", "/b"}, {5, "/_test/u1/../x", "."},
		{6, "/_test/u1/dir", ""}, {7, "/", "/"}, {8, "/_test/u1/file", "/_test/u1/open"},
	} {
		f.Add(s.sel, s.p, s.q, true)
	}
	f.Fuzz(func(t *testing.T, sel uint8, p, q string, flag bool) {
		tr := fixture(t)
		tr.detachMin = int64(sel >> 7) // every deleted directory detached in half the inputs
		before := dump(t, tr)
		c := []Caller{super, u1, u2}[sel%3]
		var ops []op.Op
		var err error
		switch (sel / 3) % 10 {
		case 0:
			ops, err = tr.PlanMkdirs(c, p, 0o755, flag, 1)
		case 1:
			ops, err = tr.PlanCreate(c, p, 0o644, "c", "m", CreateFlags{Create: true, Overwrite: flag}, flag, 3, 1024, 1)
		case 2:
			_, ops, err = tr.PlanRename(c, p, q, 1)
		case 3:
			ops, err = tr.PlanRename2(c, p, q, flag, 1)
		case 4:
			_, ops, err = tr.PlanDelete(c, p, flag, 1)
		case 5:
			ops, err = tr.PlanSetOwner(c, p, q, "")
		case 6:
			_, _, err = tr.List(c, p, []byte(q), 2)
		case 7:
			ops, err = tr.PlanConcat(c, p, []string{q}, 1)
		case 8:
			_, err = tr.ContentSummary(c, p)
		case 9:
			ops, err = tr.PlanSetTimes(c, p, 5, -1)
		}
		if dump(t, tr) != before {
			t.Fatal("plan changed the tree")
		}
		if err != nil {
			return
		}
		for _, o := range ops {
			if err := tr.Apply(o); err != nil {
				t.Fatalf("planned op %+v does not apply: %v", o, err)
			}
		}
		checkDirUsage(t, tr)
		checkReleased(t, tr)
	})
}

// snapshotFixture is a small tree with two snapshots of /d, taken around
// a delete, an overwrite, a rename out of /d and a block-boundary truncate,
// with xattrs and an ACL that change after the first.
func snapshotFixture(tb testing.TB) *Tree {
	tb.Helper()
	tr := New(testCfg())
	step := func(ops []op.Op, err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		for _, o := range ops {
			if err := tr.Apply(o); err != nil {
				tb.Fatal(err)
			}
		}
	}
	file := func(p string, nBlocks int) {
		step(tr.PlanCreate(super, p, 0o644, "c", "m", CreateFlags{Create: true}, true, 3, 1024, 10))
		var blocks []op.Block
		for k := 0; k < nBlocks; k++ {
			b := op.Block{ID: tr.NextBlockID(), NumBytes: 100, GenStamp: tr.NextGenStamp()}
			step([]op.Op{&op.AllocateBlockID{BlockID: b.ID}, &op.SetGenstamp{GenStamp: b.GenStamp}}, nil)
			blocks = append(blocks, b)
		}
		step([]op.Op{&op.Close{Path: p, Mtime: 20, Atime: 20, Blocks: blocks}}, nil)
	}
	snap := func(name string, now int64) {
		_, ops, err := tr.PlanCreateSnapshot(super, "/d", name, 0, now)
		step(ops, err)
	}
	step(tr.PlanMkdirs(super, "/d/x", 0o755, true, 1))
	step(tr.PlanMkdirs(super, "/e", 0o755, true, 1))
	file("/d/f", 2)
	file("/d/x/g", 1)
	step(tr.PlanSetXAttr(super, "/d/f", op.XAttr{NS: op.XAttrUser, Name: "a", Value: []byte("1")}, XAttrCreate))
	step(tr.PlanSetXAttr(super, "/d/x/g", op.XAttr{NS: op.XAttrTrusted, Name: "b", Value: []byte{}}, XAttrCreate))
	step(tr.PlanSetACL(super, "/d/x/g", []op.ACLEntry{
		{Type: op.ACLUser, Perm: 6}, {Type: op.ACLUser, Name: "bob", Perm: 4},
		{Type: op.ACLGroup, Perm: 4}, {Type: op.ACLMask, Perm: 4}, {Type: op.ACLOther}}))
	step(tr.PlanAllowSnapshot(super, "/d"))
	snap("s1", 100)
	step(tr.PlanRemoveACL(super, "/d/x/g"))
	_, ops, err := tr.PlanDelete(super, "/d/f", false, 110)
	step(ops, err)
	file("/d/f", 2)
	step(tr.PlanRename2(super, "/d/x", "/e/x", false, 120))
	snap("s2", 130)
	_, ops, err = tr.PlanTruncate(super, "/d/f", 100, "c", "m", 140)
	step(ops, err)
	return tr
}

// FuzzSnapshotState feeds bytes to the decoder of the snapshot state of an
// image, on a tree whose live part loads: it must reject what does not
// fit without panicking, allocate no more than its input allows, and a
// state it accepts must show and encode again.
func FuzzSnapshotState(f *testing.F) {
	base := snapshotFixture(f)
	f.Add(base.encodeSnapshots())
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 0, 0})
	var recs []fsimage.Inode
	if err := base.Export(func(r *fsimage.Inode) error {
		c := *r
		c.Name = append([]byte(nil), r.Name...)
		c.Blocks = append([]op.Block(nil), r.Blocks...)
		recs = append(recs, c)
		return nil
	}); err != nil {
		f.Fatal(err)
	}
	h := base.ImageHeader(1)
	f.Fuzz(func(t *testing.T, state []byte) {
		hh := h
		hh.Snapshots = state
		i := 0
		tr, err := NewFromImage(base.Config(), hh, func() (*fsimage.Inode, error) {
			if i == len(recs) {
				return nil, io.EOF
			}
			i++
			return &recs[i-1], nil
		})
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := tr.Dump(&b); err != nil {
			t.Fatal(err)
		}
		// What the state keeps is counted against quotas: any accepted
		// state must count.
		if _, err := tr.QuotaUsage(super, "/"); err != nil {
			t.Fatal(err)
		}
		again := New(base.Config())
		again.root = tr.root
		again.lastInodeID = tr.lastInodeID
		again.feats = tr.feats
		if err := again.decodeSnapshots(tr.encodeSnapshots()); err != nil {
			t.Fatalf("an accepted state does not encode and decode again: %v", err)
		}
	})
}

// FuzzSnapshotDiffListing pages the diff report of a snapshot fixture from
// any cursor a client may send: a cursor that does not fit is refused, and
// one that fits returns at most limit entries of the full report.
func FuzzSnapshotDiffListing(f *testing.F) {
	base := snapshotFixture(f)
	f.Add("", int32(-1), uint8(2), "s1", "")
	f.Add("", int32(2), uint8(1), "s1", "s2")
	f.Add("x", int32(1), uint8(0), "s2", "s1")
	f.Add("", int32(1<<30), uint8(3), "", "s1")
	f.Fuzz(func(t *testing.T, start string, index int32, limit uint8, from, to string) {
		_, all, err := base.SnapshotDiff(super, "/d", from, to)
		l, err2 := base.SnapshotDiffListing(super, "/d", from, to, start, index, int(limit))
		if err != nil {
			if err2 == nil {
				t.Fatalf("the listing answers where the report fails: %v", err)
			}
			return
		}
		if err2 != nil {
			return
		}
		if len(l.Entries) > max(int(limit), 1) || len(l.Entries) > len(all) {
			t.Fatalf("%d entries for a limit of %d out of %d", len(l.Entries), limit, len(all))
		}
		if l.LastIndex != -1 && (l.LastIndex <= 0 || int(l.LastIndex) > len(all)) {
			t.Fatalf("cursor index %d out of %d", l.LastIndex, len(all))
		}
	})
}
