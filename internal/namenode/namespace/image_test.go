package namespace

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
)

// roundTrip exports tr and loads the records into a new tree.
func roundTrip(t *testing.T, tr *Tree) *Tree {
	t.Helper()
	var recs []*fsimage.Inode
	err := tr.Export(func(r *fsimage.Inode) error {
		c := *r
		c.Name = append([]byte(nil), r.Name...)
		c.Blocks = append([]op.Block(nil), r.Blocks...)
		if r.UC != nil {
			uc := *r.UC
			c.UC = &uc
		}
		recs = append(recs, &c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h := tr.ImageHeader(42)
	if h.NumInodes != uint64(len(recs)) || h.TxID != 42 {
		t.Fatalf("header %+v, %d records", h, len(recs))
	}
	i := 0
	got, err := NewFromImage(tr.Config(), h, func() (*fsimage.Inode, error) {
		if i == len(recs) {
			return nil, io.EOF
		}
		i++
		return recs[i-1], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestImageRoundTrip(t *testing.T) {
	tr := fixture(t)
	ops, err := tr.PlanSetQuota(super, "/_test/u1", 100, 1<<30)
	must(t, tr, ops, err)
	got := roundTrip(t, tr)
	if a, b := dump(t, tr), dump(t, got); a != b {
		t.Fatalf("dumps differ:\n%s\n---\n%s", a, b)
	}
	// The under-construction index is rebuilt.
	fi, _ := tr.Stat(u1, "/_test/u1/open")
	if p, _, ok := got.FileByID(fi.ID); !ok || p != "/_test/u1/open" {
		t.Fatal("uc index")
	}
}

func TestImageRejects(t *testing.T) {
	root := fsimage.Inode{ID: RootInodeID, IsDir: true, NsQuota: -1, DsQuota: -1}
	h := fsimage.Header{LastInodeID: 20000}
	cases := map[string][]fsimage.Inode{
		"empty":          {},
		"no root first":  {{ID: 16386, ParentID: RootInodeID, Name: []byte("a")}},
		"unknown parent": {root, {ID: 16386, ParentID: 999, Name: []byte("a")}},
		"parent is file": {root, {ID: 16386, ParentID: RootInodeID, Name: []byte("f")}, {ID: 16387, ParentID: 16386, Name: []byte("x")}},
		"duplicate name": {root, {ID: 16386, ParentID: RootInodeID, Name: []byte("f")}, {ID: 16387, ParentID: RootInodeID, Name: []byte("f")}},
		"bad name":       {root, {ID: 16386, ParentID: RootInodeID, Name: []byte("a/b")}},
		"id too large":   {root, {ID: 30000, ParentID: RootInodeID, Name: []byte("a")}},
	}
	for name, recs := range cases {
		b := NewBuilder(testCfg(), h)
		var err error
		for i := range recs {
			if err = b.Add(&recs[i]); err != nil {
				break
			}
		}
		if err == nil {
			_, err = b.Finish()
		}
		if !errors.Is(err, ErrImage) {
			t.Errorf("%s: %v", name, err)
		}
	}
	b := NewBuilder(testCfg(), fsimage.Header{LastInodeID: 20000, NumInodes: 3})
	if err := b.Add(&root); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Finish(); !errors.Is(err, ErrImage) {
		t.Fatalf("count mismatch: %v", err)
	}
}

// TestRandomOpsModel drives random plans, applies what they return, and checks
// that (a) replaying the ops on a new tree, and (b) an image round trip, both
// give the same tree as the live one, quota usage included.
func TestRandomOpsModel(t *testing.T) {
	seeds := 40
	steps := 600
	if testing.Short() {
		seeds = 4
	}
	for seed := 0; seed < seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			runModel(t, rand.New(rand.NewSource(int64(seed))), steps)
		})
	}
}

func runModel(t *testing.T, r *rand.Rand, steps int) {
	runModelOn(t, New(testCfg()), r, steps)
}

// runModelOn drives random plans against tr, continuing midway on an
// image-loaded copy, and checks that replaying every applied op on the starting
// state (a fresh tree, or an image of tr) and an image round trip both give the
// live tree. It returns the live tree.
func runModelOn(t *testing.T, tr *Tree, r *rand.Rand, steps int) *Tree {
	var replayed *Tree
	if tr.NumInodes() == 1 {
		replayed = New(tr.Config())
	} else {
		replayed = roundTrip(t, tr)
	}
	// Half the runs take no snapshots, detach every deleted directory
	// (detach.go) and release them at random later steps, so that ops,
	// images and replay meet trees with detached subtrees pending.
	detachAll := r.Intn(2) == 0
	if detachAll {
		tr.detachMin, replayed.detachMin = 1, 1
	}
	var log []op.Op
	apply := func(ops []op.Op) {
		for _, o := range ops {
			if err := tr.Apply(o); err != nil {
				t.Fatalf("apply %T %+v: %v", o, o, err)
			}
			log = append(log, o)
		}
	}
	names := []string{"a", "b", "c"}
	randPath := func() string {
		if r.Intn(2) == 0 {
			if all := allPaths(tr); len(all) > 0 {
				return all[r.Intn(len(all))]
			}
		}
		p := ""
		for d := r.Intn(4); d >= 0; d-- {
			p += "/" + names[r.Intn(len(names))]
		}
		return p
	}
	callers := []Caller{super, u1, u2}
	now := int64(1000)
	// Open everything up for the plain users most of the time.
	ops, _ := tr.PlanSetPermission(super, "/", 0o777)
	apply(ops)
	for i := 0; i < steps; i++ {
		now += int64(r.Intn(5000000))
		c := callers[r.Intn(len(callers))]
		p, q := randPath(), randPath()
		var ops []op.Op
		var err error
		switch r.Intn(26) {
		case 23, 24, 25:
			if detachAll {
				continue // a snapshot would keep every delete walking
			}
			ops, err = randomSnapshotOp(tr, r, c, now)
		case 0, 1:
			ops, err = tr.PlanMkdirs(c, p, uint16(0o700+r.Intn(0o100)), r.Intn(3) > 0, now)
		case 2, 3:
			ops, err = tr.PlanCreate(c, p, 0o644, fmt.Sprint("cl", r.Intn(2)), "m", CreateFlags{Create: true, Overwrite: r.Intn(2) == 0}, r.Intn(2) == 0, uint16(1+r.Intn(3)), 1024, now)
		case 4:
			_, ops, err = tr.PlanDelete(c, p, r.Intn(2) == 0, now)
		case 5:
			_, ops, err = tr.PlanRename(c, p, q, now)
		case 6:
			ops, err = tr.PlanRename2(c, p, q, r.Intn(2) == 0, now)
		case 7:
			ops, err = tr.PlanSetPermission(c, p, uint16(r.Intn(0o2000)))
		case 8:
			ops, err = tr.PlanSetOwner(c, p, []string{"", "gohdfs1", "gohdfs2"}[r.Intn(3)], []string{"", "g1", "g2"}[r.Intn(3)])
		case 9:
			ops, err = tr.PlanSetTimes(c, p, int64(r.Intn(3))-1, now)
		case 10:
			_, ops, err = tr.PlanSetReplication(c, p, uint16(1+r.Intn(4)))
		case 11:
			if r.Intn(3) == 0 {
				ops, err = tr.PlanSetQuotaByStorageType(c, p, op.QuotaDontSet, []int64{op.QuotaReset, 3000, 100000}[r.Intn(3)], []uint8{1, 2, 3}[r.Intn(3)])
				break
			}
			ops, err = tr.PlanSetQuota(c, p, []int64{op.QuotaDontSet, op.QuotaReset, 3, 10}[r.Intn(4)], []int64{op.QuotaDontSet, op.QuotaReset, 5000, 100000}[r.Intn(4)])
		case 12: // write a block to some open file
			var ids []uint64
			var clients []string
			tr.UnderConstruction(func(id uint64, _, cl string) { ids = append(ids, id); clients = append(clients, cl) })
			if len(ids) == 0 {
				continue
			}
			k := r.Intn(len(ids))
			path, _, _ := tr.FileByID(ids[k])
			blocks, _ := tr.Blocks(path)
			var prev *op.Block
			if n := len(blocks); n > 0 && r.Intn(4) > 0 {
				p := blocks[n-1]
				p.NumBytes = int64(1 + r.Intn(1024))
				prev = &p
			}
			_, ops, err = tr.PlanAddBlock(c, path, clients[k], ids[k], prev)
		case 13: // complete some open file
			var ids []uint64
			var clients []string
			tr.UnderConstruction(func(id uint64, _, cl string) { ids = append(ids, id); clients = append(clients, cl) })
			if len(ids) == 0 {
				continue
			}
			k := r.Intn(len(ids))
			path, _, _ := tr.FileByID(ids[k])
			blocks, _ := tr.Blocks(path)
			var last *op.Block
			if n := len(blocks); n > 0 {
				lb := blocks[n-1]
				lb.NumBytes = int64(r.Intn(1025))
				last = &lb
			}
			_, ops, err = tr.PlanComplete(c, path, clients[k], ids[k], last, now)
		case 14:
			ops, err = tr.PlanAppend(c, p, "cl9", "m", r.Intn(2) == 0)
		case 15:
			ops, err = tr.PlanConcat(c, p, []string{q}, now)
		case 16:
			_, ops, err = tr.PlanTruncate(c, p, int64(r.Intn(3000)), "cl8", "m", now)
		case 17:
			x := op.XAttr{NS: uint8(r.Intn(2)), Name: names[r.Intn(len(names))], Value: []byte(fmt.Sprint(r.Intn(9)))}
			ops, err = tr.PlanSetXAttr(c, p, x, uint32(1+r.Intn(3)))
		case 19:
			if r.Intn(3) == 0 {
				ops, err = tr.PlanUnsetStoragePolicy(c, p)
			} else {
				ops, err = tr.PlanSetStoragePolicy(c, p, []string{"HOT", "COLD", "ALL_SSD"}[r.Intn(3)])
			}
		case 20:
			spec := []op.ACLEntry{{Type: op.ACLUser, Name: names[r.Intn(len(names))], Perm: uint8(r.Intn(8))}}
			if r.Intn(2) == 0 {
				spec = append(spec, op.ACLEntry{Scope: op.ACLDefault, Type: op.ACLGroup, Name: "g1", Perm: uint8(r.Intn(8))})
			}
			ops, err = tr.PlanModifyACLEntries(c, p, spec)
		case 21:
			if r.Intn(2) == 0 {
				ops, err = tr.PlanRemoveACL(c, p)
			} else {
				ops, err = tr.PlanRemoveDefaultACL(c, p)
			}
		case 22:
			if r.Intn(2) == 0 {
				ops, err = tr.PlanAllowSnapshot(super, p)
			} else {
				ops, err = tr.PlanDisallowSnapshot(super, p)
			}
		case 18:
			ops, err = tr.PlanRemoveXAttr(c, p, op.XAttr{NS: uint8(r.Intn(2)), Name: names[r.Intn(len(names))]})
		}
		if err != nil {
			var ne *nsError
			if !errors.As(err, &ne) || len(ne.kinds) == 0 {
				t.Fatalf("error without sentinel: %v", err)
			}
			continue
		}
		apply(ops)
		if o := tr.PlanAccess(p, now); o != nil {
			apply([]op.Op{o})
		}
		checkTypeUsage(t, tr)
		checkDirUsage(t, tr)
		if tr.Detached() > 0 && r.Intn(3) == 0 {
			tr.ReleaseDetached(func() bool { return true }, nil)
		}
		if i == steps/2 {
			// Continue from a loaded image: the rest must apply to it alike.
			tr = roundTrip(t, tr)
			if detachAll {
				tr.detachMin = 1
			}
		}
	}
	checkReleased(t, tr)
	checkReleased(t, replayed)
	for _, o := range log {
		if err := replayed.Apply(o); err != nil {
			t.Fatalf("replay %T %+v: %v", o, o, err)
		}
	}
	live := dump(t, tr)
	if got := dump(t, replayed); got != live {
		t.Fatalf("replay differs:\n%s\n---\n%s", live, got)
	}
	if got := dump(t, roundTrip(t, tr)); got != live {
		t.Fatalf("image differs:\n%s\n---\n%s", live, got)
	}
	return tr
}

// allPaths lists every path below "/" (walked as the superuser).
func allPaths(tr *Tree) []string {
	var out []string
	var walk func(dir string)
	walk = func(dir string) {
		l, _, err := tr.List(super, dir, nil, 0)
		if err != nil {
			return
		}
		for _, e := range l {
			p := joinPath(dir, string(e.Name))
			out = append(out, p)
			if e.IsDir {
				walk(p)
			}
		}
	}
	walk("/")
	return out
}

// checkDirUsage compares the usage every directory keeps (dirData.sub)
// with a fresh count of its subtree.
func checkDirUsage(t *testing.T, tr *Tree) {
	t.Helper()
	var walk func(n *inode) subUsage
	walk = func(n *inode) subUsage {
		d := n.dir()
		if d == nil {
			return subUsage{ns: 1, ds: n.space(), length: n.length()}
		}
		u := subUsage{ns: 1, dirs: 1}
		for c := range d.children.all() {
			if c.isDir() && c.dir().parent != n {
				t.Fatalf("%s/%s: parent pointer is not its directory", dirPath(n), c.name)
			}
			u = u.plus(walk(c))
		}
		if u != d.sub {
			t.Fatalf("%s keeps usage %+v, its subtree takes %+v", dirPath(n), d.sub, u)
		}
		return u
	}
	u := walk(tr.root)
	if u.ns != tr.NumInodes() || u.dirs != tr.NumDirs() {
		t.Fatalf("the tree holds %+v, the counters say %d inodes, %d directories", u, tr.NumInodes(), tr.NumDirs())
	}
	if !tr.snapActive() {
		s, err := tr.ContentSummary(super, "/")
		if err != nil || s.Length != u.length || s.FileCount != u.ns-u.dirs || s.DirectoryCount != u.dirs || s.SpaceConsumed != u.ds {
			t.Fatalf("summary of /: %+v %v; the tree holds %+v", s, err, u)
		}
	}
}

// checkReleased releases what deletes detached and checks that the side
// table then names live inodes only, each once.
func checkReleased(t *testing.T, tr *Tree) {
	t.Helper()
	for tr.ReleaseDetached(func() bool { return false }, nil) {
	}
	if tr.Detached() != 0 || len(tr.detached) != 0 {
		t.Fatalf("%d detached inodes left after releasing all", tr.Detached())
	}
	live := 0
	var walk func(n *inode)
	walk = func(n *inode) {
		if tr.feats[n] != nil {
			live++
		}
		if d := n.dir(); d != nil {
			for c := range d.children.all() {
				walk(c)
			}
		}
	}
	walk(tr.root)
	if !tr.snapActive() && live != len(tr.feats) {
		t.Fatalf("side table holds %d inodes, %d of them live", len(tr.feats), live)
	}
}

// checkTypeUsage compares the usage by storage type every quota directory
// keeps with a fresh sum over its subtree.
func checkTypeUsage(t *testing.T, tr *Tree) {
	t.Helper()
	if !tr.hasTypeQuotas {
		return
	}
	var walk func(n *inode, inherited uint8)
	walk = func(n *inode, inherited uint8) {
		if p := tr.ownPolicy(n); p != op.StoragePolicyUnspecified {
			inherited = p
		}
		if !n.isDir() {
			return
		}
		if q := n.dir().quota; q != nil {
			var fresh typeSpaces
			tr.typeUsage(n, inherited, &fresh)
			if fresh != q.tsUsed {
				t.Fatalf("%s keeps usage by type %v, its subtree takes %v", dirPath(n), q.tsUsed, fresh)
			}
		}
		for c := range n.dir().children.all() {
			walk(c, inherited)
		}
	}
	walk(tr.root, op.StoragePolicyUnspecified)
}
