package namespace

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

func snapshotOf(t *testing.T, tr *Tree, dir, name string) {
	t.Helper()
	_, ops, err := tr.PlanCreateSnapshot(super, dir, name, 0, 50)
	must(t, tr, ops, err)
}

func deleteSnapshotOf(t *testing.T, tr *Tree, dir, name string) {
	t.Helper()
	ops, err := tr.PlanDeleteSnapshot(super, dir, name, 60)
	must(t, tr, ops, err)
}

func remove(t *testing.T, tr *Tree, p string) {
	t.Helper()
	_, ops, err := tr.PlanDelete(super, p, true, 40)
	must(t, tr, ops, err)
}

func usageOf(t *testing.T, tr *Tree, p string) (int64, int64) {
	t.Helper()
	u, err := tr.QuotaUsage(super, p)
	if err != nil {
		t.Fatal(err)
	}
	return u.FileAndDirectoryCount, u.SpaceConsumed
}

// A file a snapshot holds keeps counting against the namespace and space
// quotas after it is deleted, until the snapshot goes, as in HDFS.
func TestQuotaCountsSnapshotData(t *testing.T) {
	tr := fixture(t)
	ops, err := tr.PlanAllowSnapshot(super, "/_test/u1")
	must(t, tr, ops, err)
	// /_test/u1: itself, file, open, dir, dir/sub, dir/sub/f, empty.
	ops, err = tr.PlanSetQuota(super, "/_test/u1", 7, 3500)
	must(t, tr, ops, err)
	if ns, ds := usageOf(t, tr, "/_test/u1"); ns != 7 || ds != 600 {
		t.Fatalf("usage %d names %d bytes, want 7 and 600", ns, ds)
	}
	snapshotOf(t, tr, "/_test/u1", "s1")
	remove(t, tr, "/_test/u1/file")
	for i, x := range []*Tree{tr, roundTrip(t, tr)} {
		if ns, ds := usageOf(t, x, "/_test/u1"); ns != 7 || ds != 600 {
			t.Fatalf("tree %d: usage after the delete %d names %d bytes, want 7 and 600 (the snapshot holds the file)", i, ns, ds)
		}
		if ns, ds := usageOf(t, x, "/_test"); ns != 12 || ds != 600 {
			t.Fatalf("tree %d: usage of /_test %d names %d bytes, want 12 and 600", i, ns, ds)
		}
		ops, err = x.PlanMkdirs(super, "/_test/u1/x", 0o755, true, 70)
		checkErr(t, err, ErrNSQuotaExceeded, "The NameSpace quota (directories and files) of directory /_test/u1 is exceeded: quota=7 file count=8")
		// A block reserves 1024 B × 3 replicas: 600 + 3072 > 3500.
		_, err = addBlockTo(x, "/_test/u1/open", nil)
		checkErr(t, err, ErrDSQuotaExceeded, "The DiskSpace quota of /_test/u1 is exceeded: quota = 3500 B = 3.42 KB but diskspace consumed = 3672 B = 3.59 KB")
	}
	deleteSnapshotOf(t, tr, "/_test/u1", "s1")
	if ns, ds := usageOf(t, tr, "/_test/u1"); ns != 6 || ds != 0 {
		t.Fatalf("usage after deleteSnapshot %d names %d bytes, want 6 and 0", ns, ds)
	}
	mkdir(t, tr, super, "/_test/u1/x", 0o755)
	if _, err := addBlockTo(tr, "/_test/u1/open", nil); err != nil {
		t.Fatalf("addBlock after deleteSnapshot: %v", err)
	}
}

// Blocks cut by a truncate after a snapshot, and a replication lowered
// after it, keep counting; a deleted directory counts with its subtree.
func TestQuotaCountsTruncatedAndDeletedDirs(t *testing.T) {
	tr := fixture(t)
	ops, err := tr.PlanAllowSnapshot(super, "/_test/u1")
	must(t, tr, ops, err)
	ops, err = tr.PlanSetQuota(super, "/_test/u1", op.QuotaDontSet, 1<<20)
	must(t, tr, ops, err)
	snapshotOf(t, tr, "/_test/u1", "s1")
	ok, ops, err := tr.PlanTruncate(u1, "/_test/u1/file", 100, "c", "h", 80)
	if !ok {
		t.Fatalf("truncate on a block boundary not done at once: %v", err)
	}
	must(t, tr, ops, err)
	_, ops, err = tr.PlanSetReplication(u1, "/_test/u1/file", 1)
	must(t, tr, ops, err)
	// Live: 100 B × 1; HDFS counts both blocks at the largest replication.
	if ns, ds := usageOf(t, tr, "/_test/u1"); ns != 7 || ds != 600 {
		t.Fatalf("usage after truncate %d names %d bytes, want 7 and 600", ns, ds)
	}
	remove(t, tr, "/_test/u1/dir")
	if ns, ds := usageOf(t, tr, "/_test/u1"); ns != 7 || ds != 600 {
		t.Fatalf("usage after deleting dir %d names %d bytes, want 7 and 600", ns, ds)
	}
	x := roundTrip(t, tr)
	if ns, ds := usageOf(t, x, "/_test/u1"); ns != 7 || ds != 600 {
		t.Fatalf("usage after a restart %d names %d bytes, want 7 and 600", ns, ds)
	}
	deleteSnapshotOf(t, tr, "/_test/u1", "s1")
	if ns, ds := usageOf(t, tr, "/_test/u1"); ns != 4 || ds != 100 {
		t.Fatalf("usage after deleteSnapshot %d names %d bytes, want 4 and 100", ns, ds)
	}
}

// getSnapshotDiffReportListing's pages: the report's entries limit at a
// time, each with its inode ids, the cursor naming where the next page
// starts, and a cursor that no longer fits refused.
func TestSnapshotDiffListingPages(t *testing.T) {
	tr := fixture(t)
	ops, err := tr.PlanAllowSnapshot(super, "/_test/u1")
	must(t, tr, ops, err)
	snapshotOf(t, tr, "/_test/u1", "s1")
	mkdir(t, tr, super, "/_test/u1/n", 0o755)
	remove(t, tr, "/_test/u1/file")
	_, ops, err = tr.PlanRename(super, "/_test/u1/empty", "/_test/u1/dir/e2", 90)
	must(t, tr, ops, err)
	_, all, err := tr.SnapshotDiff(super, "/_test/u1", "s1", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []DiffEntry
	start, index := "", int32(-1)
	for page := 0; ; page++ {
		if page > len(all) {
			t.Fatalf("no last page after %d pages", page)
		}
		l, err := tr.SnapshotDiffListing(super, "/_test/u1", "s1", "", start, index, 2)
		if err != nil {
			t.Fatal(err)
		}
		if !l.FromEarlier || len(l.Entries) > 2 {
			t.Fatalf("page %d: %+v", page, l)
		}
		got = append(got, l.Entries...)
		if l.LastIndex == -1 {
			if l.LastPath != "" {
				t.Fatalf("last page with a path %q", l.LastPath)
			}
			break
		}
		start, index = l.LastPath, l.LastIndex
	}
	if len(got) != len(all) || len(all) != 5 {
		t.Fatalf("pages hold %d entries, the report %d: %+v", len(got), len(all), all)
	}
	root := fileID(t, tr, "/_test/u1")
	want := []struct {
		typ         byte
		src, target string
		file, dir   uint64
	}{
		{DiffModify, "", "", root, root},
		{DiffCreate, "n", "", fileID(t, tr, "/_test/u1/n"), root},
		{DiffRename, "empty", "dir/e2", fileID(t, tr, "/_test/u1/dir/e2"), root},
		{DiffDelete, "file", "", got[3].FileID, root},
		{DiffModify, "dir", "", fileID(t, tr, "/_test/u1/dir"), fileID(t, tr, "/_test/u1/dir")},
	}
	for i, w := range want {
		e := got[i]
		if e.Type != w.typ || e.Source != w.src || e.Target != w.target || e.FileID != w.file || e.DirID != w.dir {
			t.Errorf("entry %d: %+v, want %+v", i, e, w)
		}
	}
	if got[2].TargetDirID != fileID(t, tr, "/_test/u1/dir") {
		t.Errorf("rename target's directory %d", got[2].TargetDirID)
	}
	_, err = tr.SnapshotDiffListing(super, "/_test/u1", "s1", "", "elsewhere", 2, 2)
	checkErr(t, err, ErrSnapshot, `The snapshot diff listing of /_test/u1 from s1 to  changed: no entry 2 after "elsewhere"; start again`)
}

func fileID(t *testing.T, tr *Tree, p string) uint64 {
	t.Helper()
	fi, err := tr.Stat(super, p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ID
}

// What only snapshots keep counts against quotas by storage type too.
func TestTypeQuotaCountsSnapshotData(t *testing.T) {
	tr := fixture(t)
	mkdir(t, tr, u1, "/_test/u1/q", 0o755)
	setPolicy(t, tr, "/_test/u1/q", "ALL_SSD")
	create(t, tr, u1, "/_test/u1/q/f", 2, false) // 200 bytes × 3 on SSD
	ops, err := tr.PlanAllowSnapshot(super, "/_test/u1/q")
	must(t, tr, ops, err)
	setTypeQuota(t, tr, "/_test/u1/q", ssd, 3500)
	snapshotOf(t, tr, "/_test/u1/q", "s1")
	remove(t, tr, "/_test/u1/q/f")
	create(t, tr, u1, "/_test/u1/q/g", 0, true)
	// 600 kept + a block's 3 × 1024 > 3500.
	_, err = addBlockTo(tr, "/_test/u1/q/g", nil)
	checkErr(t, err, ErrTypeQuotaExceeded, "Quota by storage type : SSD on path : /_test/u1/q is exceeded. quota = 3.42 KB but space consumed = 3.59 KB")
	u, err := tr.QuotaUsage(super, "/_test/u1/q")
	if err != nil {
		t.Fatal(err)
	}
	if ti := u.TypeQuotas[slices.Index(QuotaStorageTypes, ssd)]; ti.Consumed != 600 {
		t.Fatalf("SSD used with the file only in the snapshot: %+v", ti)
	}
	deleteSnapshotOf(t, tr, "/_test/u1/q", "s1")
	if _, err := addBlockTo(tr, "/_test/u1/q/g", nil); err != nil {
		t.Fatalf("addBlock after deleteSnapshot: %v", err)
	}
}

// BenchmarkAddBlockSnapshotKept is the cost of planning addBlock under a
// space quota on a snapshottable directory whose snapshot keeps files
// deleted since: with the usage of what snapshots keep computed already
// (kept), after one more such file was deleted (deleteEach, the delete
// included; deleteEachRaw is the same without a snapshot), and computed
// afresh for the check (recomputed: after a change that recounts it all).
func BenchmarkAddBlockSnapshotKept(b *testing.B) {
	for _, files := range []int{1000, 10000} {
		for _, mode := range []string{"none", "kept", "deleteEachRaw", "deleteEach", "recomputed"} {
			b.Run(fmt.Sprintf("deleted=%d/%s", files, mode), func(b *testing.B) {
				tr := buildFiles(b, 1, files+b.N)
				apply := func(ops []op.Op, err error) {
					if err != nil {
						b.Fatal(err)
					}
					for _, o := range ops {
						if err := tr.Apply(o); err != nil {
							b.Fatal(err)
						}
					}
				}
				if mode != "none" && mode != "deleteEachRaw" {
					apply(tr.PlanAllowSnapshot(super, "/d0000"))
					_, ops, err := tr.PlanCreateSnapshot(super, "/d0000", "s1", 0, 5)
					apply(ops, err)
				}
				for f := 0; f < files; f++ {
					apply([]op.Op{&op.Delete{Path: fmt.Sprintf("/d0000/f%07d", f), Mtime: 6}}, nil)
				}
				apply(tr.PlanSetQuota(super, "/d0000", op.QuotaDontSet, 1<<50))
				apply(tr.PlanCreate(super, "/d0000/open", 0o644, "c", "h", CreateFlags{Create: true}, false, 3, 1024, 20))
				tr.heldUsage()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					switch mode {
					case "recomputed":
						tr.heldStale()
					case "deleteEach", "deleteEachRaw":
						apply([]op.Op{&op.Delete{Path: fmt.Sprintf("/d0000/f%07d", files+i), Mtime: 7}}, nil)
					}
					if _, _, err := tr.PlanAddBlock(super, "/d0000/open", "c", 0, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// Readers run at once under the NameNode's read lock, so none may keep the
// usage of what snapshots keep that it computes: each computes its own
// while it is stale (run with -race: they used to store it, and race).
func TestHeldUsageConcurrentReaders(t *testing.T) {
	tr := fixture(t)
	ops, err := tr.PlanAllowSnapshot(super, "/_test/u1")
	must(t, tr, ops, err)
	ops, err = tr.PlanSetQuota(super, "/_test/u1", 100, 1<<20)
	must(t, tr, ops, err)
	snapshotOf(t, tr, "/_test/u1", "s1")
	for round := range 3 {
		switch round {
		case 1:
			remove(t, tr, "/_test/u1/file") // the whole usage is dropped
		case 2:
			tr.heldUsage()                       // a writer's quota check keeps the usage
			remove(t, tr, "/_test/u1/dir/sub/f") // then one file's part is marked
		}
		// The expected figures from a copy, so that tr's readers find the
		// usage still to compute (rounds 0 and 1) or one file's part
		// marked (round 2).
		want, err := roundTrip(t, tr).QuotaUsage(super, "/_test")
		if err != nil {
			t.Fatal(err)
		}
		if round == 2 && len(tr.snap.dirty) == 0 {
			t.Fatal("no part marked for recounting")
		}
		done := make(chan QuotaUsage, 8)
		for range cap(done) {
			go func() {
				u, err := tr.QuotaUsage(super, "/_test")
				if err != nil {
					t.Error(err)
				}
				done <- u
			}()
		}
		for range cap(done) {
			if u := <-done; u.FileAndDirectoryCount != want.FileAndDirectoryCount || u.SpaceConsumed != want.SpaceConsumed {
				t.Fatalf("round %d: a reader got %+v, want %+v", round, u, want)
			}
		}
		// Readers change nothing: what they computed was for them alone.
		if round < 2 && tr.snap.held != nil || round == 2 && len(tr.snap.dirty) == 0 {
			t.Fatalf("round %d: readers changed the kept usage", round)
		}
	}
}
