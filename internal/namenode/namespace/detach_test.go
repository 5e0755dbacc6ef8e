package namespace

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// TestDeleteDetachesBigDirectory deletes a directory of more than
// detachMin inodes, with open files, xattrs and a nested directory, and
// checks what the op changes at once (counters, usage up to the root, open
// files) and what the slices release later (blocks, side table), with an
// image taken while the subtree is pending.
func TestDeleteDetachesBigDirectory(t *testing.T) {
	tr := New(testCfg())
	perm := op.Perm{User: "u", Group: "g", Mode: 0o755}
	apply := func(o op.Op) {
		t.Helper()
		if err := tr.Apply(o); err != nil {
			t.Fatalf("%v: %v", o.Code(), err)
		}
	}
	apply(&op.Mkdir{InodeID: tr.NextInodeID(), Path: "/keep", Mtime: 1, Perm: perm})
	apply(&op.Mkdir{InodeID: tr.NextInodeID(), Path: "/big", Mtime: 1, Perm: perm})
	apply(&op.Mkdir{InodeID: tr.NextInodeID(), Path: "/big/sub", Mtime: 1, Perm: perm})
	apply(&op.SetQuota{Path: "/keep", NsQuota: 100, DsQuota: -1})
	const files = 2 * detachMin
	var want []int64
	for i := range files {
		dir := "/big"
		if i%2 == 1 {
			dir = "/big/sub"
		}
		p := fmt.Sprintf("%s/f%05d", dir, i)
		apply(&op.Add{InodeID: tr.NextInodeID(), Path: p, Replication: 3, Mtime: 2, Atime: 2, BlockSize: 1 << 20, Perm: perm, ClientName: "c", ClientMachine: "m"})
		if i%1000 == 7 {
			continue // left open
		}
		id := int64(FirstBlockID) + 1 + int64(i)
		want = append(want, id)
		apply(&op.Close{Path: p, Mtime: 3, Atime: 2, Blocks: []op.Block{{ID: id, NumBytes: 10, GenStamp: 1001}}})
		if i%100 == 0 {
			apply(&op.SetXAttr{Path: p, XAttrs: []op.XAttr{{NS: op.XAttrUser, Name: "a", Value: []byte("v")}}})
		}
	}
	apply(&op.Add{InodeID: tr.NextInodeID(), Path: "/keep/open", Replication: 1, Mtime: 2, Atime: 2, BlockSize: 1 << 20, Perm: perm, ClientName: "c", ClientMachine: "m"})
	featsBefore := tr.NumWithFeatures()

	var eff Effects
	if err := tr.ApplyEffects(&op.Delete{Path: "/big", Mtime: 9}, &eff); err != nil {
		t.Fatal(err)
	}
	if len(eff.FreedBlocks) != 0 {
		t.Fatalf("the op freed %d blocks itself; the subtree should be detached", len(eff.FreedBlocks))
	}
	if len(eff.RemovedUC) != files/1000+1 {
		t.Fatalf("open files removed with the op: %d, want %d", len(eff.RemovedUC), files/1000+1)
	}
	if _, _, ok := tr.FileByID(eff.RemovedUC[0]); ok {
		t.Fatal("an open file of the deleted tree is still found by id")
	}
	if _, _, ok := tr.FileByID(tr.LastInodeID()); !ok {
		t.Fatal("the open file outside the deleted tree was dropped")
	}
	// Counters and usage are the tree's after the delete already.
	if tr.NumInodes() != 3 || tr.NumDirs() != 2 || tr.Detached() != files+2 {
		t.Fatalf("inodes %d, dirs %d, detached %d", tr.NumInodes(), tr.NumDirs(), tr.Detached())
	}
	checkDirUsage(t, tr)
	// An image taken now is the tree after the delete.
	back := roundTrip(t, tr)
	if got, live := dump(t, back), dump(t, tr); got != live {
		t.Fatalf("image with a subtree pending differs:\n%s\n---\n%s", live, got)
	}

	// Released in slices: each stops when over says so, and together they
	// free every closed file's block once and drop the side table's entries.
	var freed []int64
	slicesTaken := 0
	for {
		calls := 0
		var e Effects
		more := tr.ReleaseDetached(func() bool { calls++; return calls == 3 }, &e)
		slicesTaken++
		for _, b := range e.FreedBlocks {
			freed = append(freed, b.ID)
		}
		if !more {
			break
		}
		if slicesTaken > files {
			t.Fatal("release does not end")
		}
	}
	if slicesTaken < files/(3*64) {
		t.Fatalf("released in %d slices; the budget allows 192 inodes a slice", slicesTaken)
	}
	slices.Sort(freed)
	if !slices.Equal(freed, want) {
		t.Fatalf("freed %d blocks, want %d", len(freed), len(want))
	}
	if tr.Detached() != 0 || tr.NumWithFeatures() != 0 {
		t.Fatalf("after release: detached %d, side table %d (was %d)", tr.Detached(), tr.NumWithFeatures(), featsBefore)
	}
	if u, err := tr.QuotaUsage(super, "/"); err != nil || u.FileAndDirectoryCount != 3 {
		t.Fatalf("usage of / after the delete: %+v %v", u, err)
	}
}

// TestDeleteWalksWithSnapshots: a directory a snapshot sees is walked, not
// detached, so its versions are saved.
func TestDeleteWalksWithSnapshots(t *testing.T) {
	tr := New(testCfg())
	tr.detachMin = 1
	perm := op.Perm{User: "u", Group: "g", Mode: 0o755}
	for _, o := range []op.Op{
		&op.Mkdir{InodeID: tr.NextInodeID(), Path: "/s", Mtime: 1, Perm: perm},
		&op.Mkdir{InodeID: tr.NextInodeID() + 1, Path: "/s/d", Mtime: 1, Perm: perm},
		&op.AllowSnapshot{Path: "/s"},
		&op.CreateSnapshot{Root: "/s", Name: "one", Mtime: 2},
	} {
		if err := tr.Apply(o); err != nil {
			t.Fatalf("%v: %v", o.Code(), err)
		}
	}
	if err := tr.Apply(&op.Delete{Path: "/s/d", Mtime: 3}); err != nil {
		t.Fatal(err)
	}
	if tr.Detached() != 0 {
		t.Fatal("a directory a snapshot sees was detached")
	}
	if _, err := tr.Stat(super, "/s/.snapshot/one/d"); err != nil {
		t.Fatalf("the snapshot lost the deleted directory: %v", err)
	}
}
