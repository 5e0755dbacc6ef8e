package namespace

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

func TestSnapshottableDirs(t *testing.T) {
	tr := fixture(t)
	run := func(c Caller, allow bool, p string) error {
		var err error
		if allow {
			ops, e := tr.PlanAllowSnapshot(c, p)
			if err = e; e == nil {
				applyAll(t, tr, ops)
			}
		} else {
			ops, e := tr.PlanDisallowSnapshot(c, p)
			if err = e; e == nil {
				applyAll(t, tr, ops)
			}
		}
		return err
	}
	checkErr(t, run(u1, true, "/_test/u1"), ErrPermission, "Access denied for user gohdfs1. Superuser privilege is required")
	checkErr(t, run(super, true, "/_test/u1/dir"), nil, "")
	checkErr(t, run(super, true, "/_test/u1/dir"), nil, "") // again: no error, as in HDFS
	checkErr(t, run(super, true, "/_test/u1/dir/sub"), ErrSnapshot,
		"Nested snapshottable directories not allowed: path=/_test/u1/dir/sub, the ancestor /_test/u1/dir is already a snapshottable directory.")
	checkErr(t, run(super, true, "/_test"), ErrSnapshot,
		"Nested snapshottable directories not allowed: path=/_test, the subdirectory /_test/u1/dir is already a snapshottable directory.")
	checkErr(t, run(super, true, "/_test/u1/file"), ErrNotDir, "`/_test/u1/file': Is not a directory")
	checkErr(t, run(super, true, "/_test/nope"), ErrNotFound, "Directory does not exist: /_test/nope")
	checkErr(t, run(super, true, "/_test/private"), nil, "")
	if fi, _ := tr.Stat(super, "/_test/u1/dir"); !fi.Snapshottable {
		t.Fatal("status lacks snapshottable")
	}
	if got := tr.SnapshottableDirs(u1); len(got) != 2 || got[0].Path != "/_test/private" || got[1].Path != "/_test/u1/dir" {
		t.Fatalf("listing for the owner: %+v", got)
	}
	if got := tr.SnapshottableDirs(u2); len(got) != 0 {
		t.Fatalf("listing for another user: %+v", got)
	}
	if a, b := dump(t, tr), dump(t, roundTrip(t, tr)); a != b {
		t.Fatalf("image round trip differs:\n%s\n---\n%s", a, b)
	}
	checkErr(t, run(super, false, "/_test/u1/dir"), nil, "")
	checkErr(t, run(super, false, "/_test/u1/dir"), ErrSnapshot, "Directory is not a snapshottable directory: /_test/u1/dir")
	if got := tr.SnapshottableDirs(super); len(got) != 1 {
		t.Fatalf("after disallow: %+v", got)
	}
}

// randomSnapshotOp plans a create, delete or rename of a snapshot of a
// random snapshottable directory, by c or (mostly) the superuser.
func randomSnapshotOp(tr *Tree, r *rand.Rand, c Caller, now int64) ([]op.Op, error) {
	dirs := tr.SnapshottableDirs(super)
	if len(dirs) == 0 {
		return nil, nil
	}
	if r.Intn(3) > 0 {
		c = super
	}
	d := dirs[r.Intn(len(dirs))].Path
	name := fmt.Sprint("s", r.Intn(4))
	switch r.Intn(4) {
	case 0, 1:
		if r.Intn(4) == 0 {
			name = ""
		}
		_, ops, err := tr.PlanCreateSnapshot(c, d, name, 0, now)
		return ops, err
	case 2:
		return tr.PlanDeleteSnapshot(c, d, name, now)
	default:
		return tr.PlanRenameSnapshot(c, d, name, fmt.Sprint("s", r.Intn(4)), now)
	}
}

// TestSnapshotDiff checks the report of creates, deletes, renames within
// and across directories, and modifications, both ways and against the
// live tree.
func TestSnapshotDiff(t *testing.T) {
	tr := New(testCfg())
	mkdir(t, tr, super, "/d/x", 0o755)
	mkdir(t, tr, super, "/d/y", 0o755)
	create(t, tr, super, "/d/f", 1, false)
	create(t, tr, super, "/d/x/g", 1, false)
	create(t, tr, super, "/d/x/h", 0, false)
	ops, err := tr.PlanAllowSnapshot(super, "/d")
	must(t, tr, ops, err)
	snap := func(name string) {
		t.Helper()
		_, ops, err := tr.PlanCreateSnapshot(super, "/d", name, 0, 100)
		must(t, tr, ops, err)
	}
	snap("s1")
	create(t, tr, super, "/d/new", 0, false)
	_, ops, err = tr.PlanDelete(super, "/d/x/h", false, 200)
	must(t, tr, ops, err)
	ops, err = tr.PlanRename2(super, "/d/f", "/d/f2", false, 210)
	must(t, tr, ops, err)
	ops, err = tr.PlanRename2(super, "/d/x/g", "/d/y/g", false, 220)
	must(t, tr, ops, err)
	ops, err = tr.PlanSetPermission(super, "/d/y", 0o700)
	must(t, tr, ops, err)
	snap("s2")
	show := func(from, to string) string {
		t.Helper()
		root, entries, err := tr.SnapshotDiff(super, "/d", from, to)
		if err != nil {
			t.Fatal(err)
		}
		var b []string
		for _, e := range entries {
			l := string(e.Type) + " " + e.Source
			if e.Target != "" {
				l += " -> " + e.Target
			}
			b = append(b, l)
		}
		return root + ": " + strings.Join(b, ", ")
	}
	want := "/d: M , + new, R f -> f2, M x, R x/g -> y/g, - x/h, M y"
	if got := show("s1", "s2"); got != want {
		t.Fatalf("s1 to s2:\n got %s\nwant %s", got, want)
	}
	if got := show("s1", ""); got != want {
		t.Fatalf("s1 to now:\n got %s\nwant %s", got, want)
	}
	if got := show("s2", "s1"); got != "/d: M , R f2 -> f, - new, M x, + x/h, M y, R y/g -> x/g" {
		t.Fatalf("s2 to s1: %s", got)
	}
	if got := show("s2", ""); got != "/d: " {
		t.Fatalf("s2 to now: %s", got)
	}
	_, _, err = tr.SnapshotDiff(super, "/d", "s1", "nope")
	checkErr(t, err, ErrSnapshot, "Cannot find the snapshot of directory /d with name nope")
	_, _, err = tr.SnapshotDiff(super, "/d/x", "s1", "")
	checkErr(t, err, ErrSnapshot, "Directory is not a snapshottable directory: /d/x")
}

// TestSnapshotContentSummary: a directory's summary counts what only its
// snapshots keep until the snapshot goes, as HDFS does: a deleted file and
// directory in the totals and in the snapshot figures; the blocks a
// truncate cut off a live file in its space consumed only.
func TestSnapshotContentSummary(t *testing.T) {
	tr := New(testCfg())
	mkdir(t, tr, super, "/d/x", 0o755)
	create(t, tr, super, "/d/x/g", 2, false) // 200 bytes, replication 3
	create(t, tr, super, "/d/f", 3, false)   // 300 bytes
	ops, err := tr.PlanAllowSnapshot(super, "/d")
	must(t, tr, ops, err)
	before, _ := tr.ContentSummary(super, "/d")
	_, ops, err = tr.PlanCreateSnapshot(super, "/d", "s1", 0, 100)
	must(t, tr, ops, err)
	_, ops, err = tr.PlanDelete(super, "/d/x", true, 110)
	must(t, tr, ops, err)
	_, ops, err = tr.PlanTruncate(super, "/d/f", 100, "c", "m", 120)
	must(t, tr, ops, err)
	got, err := tr.ContentSummary(super, "/d")
	if err != nil {
		t.Fatal(err)
	}
	want := Summary{Length: 300, FileCount: 2, DirectoryCount: 2, Quota: -1, SpaceConsumed: 1500, SpaceQuota: -1,
		SnapshotLength: 200, SnapshotFileCount: 1, SnapshotDirectoryCount: 1, SnapshotSpaceConsumed: 600}
	if got != want {
		t.Fatalf("summary with the snapshot:\n got %+v\nwant %+v (before: %+v)", got, want, before)
	}
	ops, err = tr.PlanDeleteSnapshot(super, "/d", "s1", 130)
	must(t, tr, ops, err)
	got, _ = tr.ContentSummary(super, "/d")
	if want := (Summary{Length: 100, FileCount: 1, DirectoryCount: 1, Quota: -1, SpaceConsumed: 300, SpaceQuota: -1}); got != want {
		t.Fatalf("summary after deleting the snapshot: %+v", got)
	}
}

// TestSnapshotPathReads: checkAccess looks through .snapshot paths; the
// reads that snapshots do not keep data for say so instead of calling the
// path a modification.
func TestSnapshotPathReads(t *testing.T) {
	tr := New(testCfg())
	mkdir(t, tr, super, "/d", 0o755)
	create(t, tr, super, "/d/f", 0, false)
	ops, err := tr.PlanAllowSnapshot(super, "/d")
	must(t, tr, ops, err)
	_, ops, err = tr.PlanCreateSnapshot(super, "/d", "s1", 0, 100)
	must(t, tr, ops, err)
	checkErr(t, tr.CheckAccess(u1, "/d/.snapshot/s1/f", Read), nil, "")
	checkErr(t, tr.CheckAccess(u1, "/d/.snapshot/s1/f", Write), ErrSnapshotAccess, "Modification on a read-only snapshot is disallowed")
	checkErr(t, tr.CheckAccess(u1, "/d/.snapshot/s1/nope", Read), ErrNotFound, "File does not exist: /d/.snapshot/s1/nope")
	xs, err := tr.GetXAttrs(u1, "/d/.snapshot/s1/f", nil)
	if err != nil || len(xs) != 0 {
		t.Fatalf("getXAttrs in a snapshot: %v %v", xs, err)
	}
	_, err = tr.GetStoragePolicy(u1, "/d/.snapshot/s1/f")
	checkErr(t, err, ErrIO, "getStoragePolicy of a path in a snapshot is not supported yet: /d/.snapshot/s1/f")
	_, err = tr.PlanSetPermission(super, "/d/.snapshot/s1/f", 0o600)
	checkErr(t, err, ErrSnapshotAccess, "Modification on a read-only snapshot is disallowed")
}
