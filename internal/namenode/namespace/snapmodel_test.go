package namespace

import (
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// viewLine formats one inode of a snapshot view (or of the live tree, as a
// snapshot taken now would show it).
func viewLine(rel string, fi FileInfo, blocks []op.Block) string {
	var b strings.Builder
	fmt.Fprintf(&b, ".%s id=%d dir=%v %s:%s:%04o mtime=%d atime=%d", rel, fi.ID, fi.IsDir, fi.Perm.User, fi.Perm.Group, fi.Perm.Mode, fi.Mtime, fi.Atime)
	if !fi.IsDir {
		fmt.Fprintf(&b, " repl=%d bsize=%d len=%d blocks=", fi.Replication, fi.BlockSize, fi.Length)
		for _, x := range blocks {
			fmt.Fprintf(&b, "%d:%d,", x.ID, x.NumBytes)
		}
	}
	return b.String()
}

// liveView is what a snapshot of dir taken now at ctime shows.
func liveView(tr *Tree, dir, name string, ctime int64) []string {
	w := tr.lookup(dir)
	var out []string
	var walkLive func(n *inode, rel string)
	walkLive = func(n *inode, rel string) {
		fi := tr.info(n)
		if rel == "" {
			fi.Mtime = ctime
		}
		var blocks []op.Block
		if !n.isDir() {
			blocks = n.blocks()
		}
		out = append(out, viewLine(rel, fi, blocks))
		if n.isDir() {
			for c := range n.dir().children.all() {
				walkLive(c, rel+"/"+c.name)
			}
		}
	}
	walkLive(w.last(), "")
	return out
}

func snapView(t *testing.T, tr *Tree, dir, name string) []string {
	t.Helper()
	var out []string
	if !tr.SnapshotView(dir, name, func(rel string, fi FileInfo, blocks []op.Block) {
		out = append(out, viewLine(rel, fi, blocks))
	}) {
		t.Fatalf("snapshot %s of %s is missing", name, dir)
	}
	return out
}

// TestSnapshotViewsModel mixes snapshot ops with creates, appends,
// truncates, renames (into, out of and within the snapshotted directory),
// deletes, attribute changes and image reloads, and checks after every
// step that every snapshot still shows exactly the tree recorded when it
// was taken, that no block a snapshot or the live tree holds was freed,
// and, at the end, that deleting everything frees every block once.
func TestSnapshotViewsModel(t *testing.T) {
	seeds, steps := int64(6), 400
	if os.Getenv("HDFSGO_LONG") == "1" {
		seeds, steps = 60, 2000
	}
	for seed := int64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runSnapshotModel(t, seed, steps) })
	}
}

func runSnapshotModel(t *testing.T, seed int64, steps int) {
	r := rand.New(rand.NewSource(seed))
	tr := New(testCfg())
	replayed := New(testCfg())
	var log []op.Op
	freed := map[int64]int{}
	allocated := map[int64]bool{}
	apply := func(ops []op.Op) {
		t.Helper()
		for _, o := range ops {
			var eff Effects
			if err := tr.ApplyEffects(o, &eff); err != nil {
				t.Fatalf("apply %T %+v: %v", o, o, err)
			}
			for _, b := range eff.FreedBlocks {
				freed[b.ID]++
			}
			if a, ok := o.(*op.AddBlock); ok {
				allocated[a.Last.ID] = true
			}
			log = append(log, o)
		}
	}
	now := int64(1700000000000)
	mustOps := func(ops []op.Op, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		apply(ops)
	}
	mustOps(tr.PlanMkdirs(super, "/d", 0o777, true, now))
	mustOps(tr.PlanMkdirs(super, "/e", 0o777, true, now))
	mustOps(tr.PlanAllowSnapshot(super, "/d"))
	// Quotas no step reaches, so that what snapshots keep is charged to
	// quota directories that the snapshottable directory moves between.
	mustOps(tr.PlanSetQuota(super, "/d", 1<<40, 1<<50))
	mustOps(tr.PlanSetQuota(super, "/e", 1<<40, 1<<50))
	// dir is where the snapshottable directory is now: it moves between
	// /d and /e/moved (its snapshots go with it).
	dir := "/d"

	type want struct {
		name string
		view []string
	}
	var snaps []want
	names := []string{"a", "b", "c"}
	randPath := func() string {
		p := []string{dir, "/e"}[r.Intn(3)%2]
		for k := r.Intn(2); k >= 0; k-- {
			p += "/" + names[r.Intn(len(names))]
		}
		return p
	}
	writeBlocks := func(p string, n int) {
		id, ok := tr.InodeID(p)
		if !ok {
			return
		}
		for ; n > 0; n-- {
			blocks, _ := tr.Blocks(p)
			var prev *op.Block
			if k := len(blocks); k > 0 {
				x := blocks[k-1]
				x.NumBytes = int64(50 + r.Intn(50))
				prev = &x
			}
			bid, gs := tr.NextBlockID(), tr.NextGenStamp()
			apply([]op.Op{&op.AllocateBlockID{BlockID: bid}, &op.SetGenstamp{GenStamp: gs}})
			_, ops, err := tr.PlanAddBlock(super, p, "cl", id, prev)
			if err != nil {
				t.Fatalf("add block to %s: %v", p, err)
			}
			apply(ops)
		}
		blocks, _ := tr.Blocks(p)
		var last *op.Block
		if k := len(blocks); k > 0 {
			x := blocks[k-1]
			x.NumBytes += int64(1 + r.Intn(100))
			last = &x
		}
		ok, ops, err := tr.PlanComplete(super, p, "cl", id, last, now)
		if err != nil || !ok {
			t.Fatalf("complete %s: %v", p, err)
		}
		apply(ops)
	}
	check := func(step int) {
		t.Helper()
		for _, s := range snaps {
			got := snapView(t, tr, dir, s.name)
			if strings.Join(got, "\n") != strings.Join(s.view, "\n") {
				t.Fatalf("step %d: snapshot %s changed:\n%s\n--- want\n%s", step, s.name, strings.Join(got, "\n"), strings.Join(s.view, "\n"))
			}
		}
		held := map[int64]bool{}
		tr.EachFileWithBlocks(func(_ uint64, _ uint16, _ uint8, blocks []op.Block, _ bool) {
			for _, b := range blocks {
				held[b.ID] = true
			}
		})
		for _, s := range snaps {
			tr.SnapshotView(dir, s.name, func(_ string, _ FileInfo, blocks []op.Block) {
				for _, b := range blocks {
					if !held[b.ID] {
						t.Fatalf("step %d: block %d of snapshot %s is not reported to the block map", step, b.ID, s.name)
					}
				}
			})
		}
		for id := range held {
			if freed[id] > 0 {
				t.Fatalf("step %d: block %d was freed but is still held", step, id)
			}
		}
	}
	for i := 0; i < steps; i++ {
		now += int64(1 + r.Intn(100000))
		p, q := randPath(), randPath()
		var ops []op.Op
		var err error
		switch r.Intn(17) {
		case 16:
			// Move the snapshottable directory itself.
			to := map[string]string{"/d": "/e/moved", "/e/moved": "/d"}[dir]
			ops, err = tr.PlanRename2(super, dir, to, false, now)
			if err == nil {
				dir = to
			}
		case 14:
			_, ops, err = tr.PlanSetReplication(super, p, uint16(1+r.Intn(3)))
		case 15:
			ops, err = tr.PlanConcat(super, p, []string{q}, now)
		case 0:
			ops, err = tr.PlanMkdirs(super, p, 0o755, true, now)
		case 1, 2:
			ops, err = tr.PlanCreate(super, p, 0o644, "cl", "m", CreateFlags{Create: true, Overwrite: r.Intn(2) == 0}, true, 3, 1024, now)
			if err == nil {
				apply(ops)
				writeBlocks(p, r.Intn(3))
				continue
			}
		case 3:
			ops, err = tr.PlanAppend(super, p, "cl", "m", false)
			if err == nil {
				apply(ops)
				writeBlocks(p, r.Intn(2))
				continue
			}
		case 4:
			var done bool
			done, ops, err = tr.PlanTruncate(super, p, int64(r.Intn(300)), "cl", "m", now)
			if err == nil && !done {
				// Block recovery finishes the truncate: the file closes with
				// the recorded truncate block.
				apply(ops)
				id, _ := tr.InodeID(p)
				blocks, _ := tr.Blocks(p)
				ops, err = tr.PlanCloseUnderConstruction(id, blocks, now)
			}
		case 5, 6:
			ops, err = tr.PlanRename2(super, p, q, r.Intn(2) == 0, now)
		case 7:
			_, ops, err = tr.PlanDelete(super, p, true, now)
		case 8:
			ops, err = tr.PlanSetPermission(super, p, uint16(0o700+r.Intn(0o100)))
		case 9:
			ops, err = tr.PlanSetTimes(super, p, now, now)
		case 10, 11:
			name := fmt.Sprint("s", r.Intn(1000))
			var path string
			path, ops, err = tr.PlanCreateSnapshot(super, dir, name, 0, now)
			if err == nil {
				if path != dir+"/.snapshot/"+name {
					t.Fatalf("snapshot path %q", path)
				}
				snaps = append(snaps, want{name, liveView(tr, dir, name, now)})
			}
		case 12:
			if len(snaps) == 0 {
				continue
			}
			k := r.Intn(len(snaps))
			ops, err = tr.PlanDeleteSnapshot(super, dir, snaps[k].name, now)
			if err == nil {
				snaps = append(snaps[:k], snaps[k+1:]...)
			}
		case 13:
			if len(snaps) == 0 {
				continue
			}
			k := r.Intn(len(snaps))
			nn := fmt.Sprint("r", r.Intn(1000))
			ops, err = tr.PlanRenameSnapshot(super, dir, snaps[k].name, nn, now)
			if err == nil {
				snaps[k].name = nn
			}
		}
		if err != nil {
			continue
		}
		apply(ops)
		// The usage of what snapshots keep is kept between ops: it must
		// equal a fresh computation, and survive a restart.
		cached, cachedHeld := quotaUsages(t, tr, dir), heldText(tr)
		tr.heldStale()
		if fresh, freshHeld := quotaUsages(t, tr, dir), heldText(tr); fresh != cached || freshHeld != cachedHeld {
			t.Fatalf("step %d: quota usage kept %v %s, computed afresh %v %s", i, cached, cachedHeld, fresh, freshHeld)
		}
		if i%97 == 96 {
			tr = roundTrip(t, tr)
			if again, againHeld := quotaUsages(t, tr, dir), heldText(tr); again != cached || againHeld != cachedHeld {
				t.Fatalf("step %d: quota usage %v %s before an image round trip, %v %s after", i, cached, cachedHeld, again, againHeld)
			}
		}
		check(i)
	}
	for _, o := range log {
		if err := replayed.Apply(o); err != nil {
			t.Fatalf("replay %T %+v: %v", o, o, err)
		}
	}
	if a, b := dump(t, tr), dump(t, replayed); a != b {
		t.Fatalf("replay differs:\n%s\n---\n%s", a, b)
	}
	if a, b := quotaUsages(t, tr, dir), quotaUsages(t, replayed, dir); a != b {
		t.Fatalf("quota usage %v live, %v replayed", a, b)
	}
	t.Logf("%d ops, %d snapshots kept, %d versions, %d blocks written, %d freed so far", len(log), len(snaps), tr.NumSnapshotVersions(), len(allocated), len(freed))
	// Delete everything: every block ever written is freed exactly once.
	sort.Slice(snaps, func(i, j int) bool { return snaps[i].name < snaps[j].name })
	for _, s := range snaps {
		ops, err := tr.PlanDeleteSnapshot(super, dir, s.name, now)
		mustOps(ops, err)
	}
	for _, p := range []string{dir, "/e"} {
		_, ops, err := tr.PlanDelete(super, p, true, now)
		mustOps(ops, err)
	}
	if n := tr.NumSnapshotVersions(); n != 0 {
		t.Fatalf("%d versions left after deleting every snapshot", n)
	}
	for id := range allocated {
		if freed[id] != 1 {
			t.Errorf("block %d freed %d times", id, freed[id])
		}
	}
}

// quotaUsages is getQuotaUsage's counts of / and dir.
func quotaUsages(t *testing.T, tr *Tree, dir string) [4]int64 {
	t.Helper()
	a, err := tr.QuotaUsage(super, "/")
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.QuotaUsage(super, dir)
	if err != nil {
		t.Fatal(err)
	}
	return [4]int64{a.FileAndDirectoryCount, a.SpaceConsumed, b.FileAndDirectoryCount, b.SpaceConsumed}
}

// heldText renders what only snapshots keep, by quota directory.
func heldText(tr *Tree) string {
	hc := tr.heldUsage()
	if hc == nil {
		return "{}"
	}
	var lines []string
	for d, u := range hc.byQuota {
		lines = append(lines, fmt.Sprintf("%s:%d/%d/%v", dirPath(d), u.ns, u.ds, u.types))
	}
	sort.Strings(lines)
	return "{" + strings.Join(lines, " ") + "}"
}
