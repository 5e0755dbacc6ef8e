package namespace

import (
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
)

// attrView is what the xattr and ACL reads answer for path as c, in one
// line: the listed xattrs, the ACL status, or the errors.
func attrView(tr *Tree, c Caller, path string) string {
	var b strings.Builder
	xs, err := tr.ListXAttrs(c, path)
	if err != nil {
		fmt.Fprintf(&b, "xattrs: %v", err)
	} else {
		b.WriteString("xattrs:")
		for _, x := range xs {
			fmt.Fprintf(&b, " %s=%q", XAttrName(x), x.Value)
		}
	}
	st, err := tr.GetACLStatus(c, path)
	if err != nil {
		fmt.Fprintf(&b, " | acl: %v", err)
	} else {
		fmt.Fprintf(&b, " | acl: %s:%s:%04o %s", st.Owner, st.Group, st.Mode, aclText(st.Entries))
	}
	return b.String()
}

// snapAttrTree runs the scenario of TestSnapshotKeepsXAttrsAndACLs and
// returns the tree and every op it applied.
func snapAttrTree(t *testing.T) (*Tree, []op.Op) {
	t.Helper()
	tr := New(testCfg())
	var log []op.Op
	step := func(ops []op.Op, err error) {
		t.Helper()
		must(t, tr, ops, err)
		log = append(log, ops...)
	}
	xattr := func(p, name, val string, flag uint32) {
		t.Helper()
		x, err := ParseXAttrName(name)
		if err != nil {
			t.Fatal(err)
		}
		x.Value = []byte(val)
		step(tr.PlanSetXAttr(super, p, x, flag))
	}
	step(tr.PlanMkdirs(super, "/d", 0o755, true, 10))
	step(tr.PlanCreate(super, "/d/f", 0o600, "c", "m", CreateFlags{Create: true}, true, 3, 1024, 20))
	step([]op.Op{&op.Close{Path: "/d/f", Mtime: 20, Atime: 20}}, nil)
	step(tr.PlanCreate(super, "/d/g", 0o644, "c", "m", CreateFlags{Create: true}, true, 3, 1024, 20))
	step([]op.Op{&op.Close{Path: "/d/g", Mtime: 20, Atime: 20}}, nil)
	xattr("/d/f", "user.a", "1", XAttrCreate)
	xattr("/d/g", "user.keep", "k", XAttrCreate)
	step(tr.PlanSetACL(super, "/d/f", parseSpec(t, "user::rw-,user:gohdfs1:r--,group::---,other::---")))
	step(tr.PlanAllowSnapshot(super, "/d"))
	_, ops, err := tr.PlanCreateSnapshot(super, "/d", "s1", 0, 100)
	step(ops, err)
	// After s1: replace and add on f, drop its ACL; remove g's only
	// attribute and give the directory an ACL.
	xattr("/d/f", "user.a", "2", XAttrReplace)
	xattr("/d/f", "user.b", "3", XAttrCreate)
	step(tr.PlanRemoveACL(super, "/d/f"))
	x, _ := ParseXAttrName("user.keep")
	step(tr.PlanRemoveXAttr(super, "/d/g", x))
	step(tr.PlanSetACL(super, "/d", parseSpec(t, "user::rwx,group::r-x,other::r-x,default:user:gohdfs2:rwx,default:user::rwx,default:group::r-x,default:other::r-x")))
	_, ops, err = tr.PlanCreateSnapshot(super, "/d", "s2", 0, 200)
	step(ops, err)
	// After s2: g goes; both snapshots keep what they saw of it.
	xattr("/d/g", "user.late", "L", XAttrCreate)
	_, ops, err = tr.PlanDelete(super, "/d/g", false, 210)
	step(ops, err)
	return tr, log
}

var snapAttrWant = map[string]string{
	"/d/f":              "xattrs: user.a=\"2\" user.b=\"3\" | acl: root:supergroup:0600 ",
	"/d/.snapshot/s1/f": "xattrs: user.a=\"1\" | acl: root:supergroup:0640 user:gohdfs1:r--,group::---",
	"/d/.snapshot/s2/f": "xattrs: user.a=\"2\" user.b=\"3\" | acl: root:supergroup:0600 ",
	"/d/.snapshot/s1/g": "xattrs: user.keep=\"k\" | acl: root:supergroup:0644 ",
	"/d/.snapshot/s2/g": "xattrs: | acl: root:supergroup:0644 ",
	"/d/.snapshot/s1":   "xattrs: | acl: root:supergroup:0755 ",
	"/d/.snapshot/s2":   "xattrs: | acl: root:supergroup:0755 default:user::rwx,default:user:gohdfs2:rwx,default:group::r-x,default:mask::rwx,default:other::r-x",
	"/d/g":              "xattrs: File does not exist: /d/g | acl: cannot find /d/g",
}

func checkSnapAttrs(t *testing.T, tr *Tree, when string) {
	t.Helper()
	for p, want := range snapAttrWant {
		got := attrView(tr, super, p)
		if strings.Contains(want, "does not exist") {
			if !strings.Contains(got, "does not exist") && !strings.Contains(got, "cannot find") {
				t.Errorf("%s: %s: %s, want it missing", when, p, got)
			}
			continue
		}
		if got != want {
			t.Errorf("%s: %s:\n got %s\nwant %s", when, p, got, want)
		}
	}
	// gohdfs1 reads f only through s1's ACL: the live file and s2 deny.
	if _, err := tr.GetXAttrs(u1, "/d/.snapshot/s1/f", nil); err != nil {
		t.Errorf("%s: gohdfs1 reading s1's f: %v", when, err)
	}
	for _, p := range []string{"/d/f", "/d/.snapshot/s2/f"} {
		_, err := tr.GetXAttrs(u1, p, nil)
		if err == nil || !strings.Contains(err.Error(), "Permission denied") {
			t.Errorf("%s: gohdfs1 reading %s: %v, want permission denied", when, p, err)
		}
	}
	if err := tr.CheckAccess(u1, "/d/.snapshot/s1/f", Read); err != nil {
		t.Errorf("%s: gohdfs1 access to s1's f: %v", when, err)
	}
	xs, err := tr.GetXAttrs(super, "/d/.snapshot/s1/f", []op.XAttr{{NS: op.XAttrUser, Name: "b"}})
	if err == nil || !strings.Contains(err.Error(), "At least one of the attributes provided was not found") {
		t.Errorf("%s: user.b in s1: %v %v", when, xs, err)
	}
	if _, err := tr.PlanSetXAttr(super, "/d/.snapshot/s1/f", op.XAttr{NS: op.XAttrUser, Name: "c", Value: []byte{}}, XAttrCreate); err == nil {
		t.Errorf("%s: setXAttr in a snapshot succeeded", when)
	}
	fis, _, err := tr.List(super, "/d/.snapshot/s1", nil, 10)
	if err != nil || len(fis) != 2 || !fis[0].HasACL || fis[1].HasACL {
		t.Errorf("%s: listing of s1: %+v %v, want f with an ACL and g without", when, fis, err)
	}
}

// TestSnapshotKeepsXAttrsAndACLs: a snapshot shows the xattrs and ACL an
// inode had when it was taken, after changes, removals and the inode's
// deletion, and again after a restart from the image and from the edits.
func TestSnapshotKeepsXAttrsAndACLs(t *testing.T) {
	tr, log := snapAttrTree(t)
	checkSnapAttrs(t, tr, "live")
	d := dump(t, tr)
	if !strings.Contains(d, "./f id=") || !strings.Contains(d, `xattr=user.a:"1"`) {
		t.Errorf("the dump lacks the snapshot's xattrs:\n%s", d)
	}
	img := roundTrip(t, tr)
	checkSnapAttrs(t, img, "from the image")
	replay := New(testCfg())
	applyAll(t, replay, log)
	checkSnapAttrs(t, replay, "from the edits")
	for what, other := range map[string]*Tree{"replayed": replay, "loaded": img} {
		if d2 := dump(t, other); d != d2 {
			t.Errorf("%s tree differs:\n%s\n%s", what, d, d2)
		}
		if n := other.NumACLs(); n != tr.NumACLs() {
			t.Errorf("%s tree: %d ACLs, want %d", what, n, tr.NumACLs())
		}
	}
	// Deleting the snapshots lets the saved ACLs go: only live ones stay.
	for _, x := range []*Tree{tr, img} {
		for _, s := range []string{"s1", "s2"} {
			ops, err := x.PlanDeleteSnapshot(super, "/d", s, 300)
			must(t, x, ops, err)
		}
		if n := x.NumACLs(); n != 1 {
			t.Errorf("%d ACLs in use after deleting the snapshots, want 1 (/d's)", n)
		}
	}
}

// snapStateFormat1 is the snapshot state of an image written before
// versions kept xattrs and ACLs (format 1), for the tree
// oldSnapFormatTree builds: /d/f's mode changed and /d/g created after s1.
const snapStateFormat1 = "0101018280010101027331c80183800100000282800100010182800101016404726f6f740a737570657267726f7570ed03c80100018480010083800100010183800100016604726f6f740a737570657267726f7570a4033c2803801000000000"

// TestLoadsSnapshotStateFormat1: an image's snapshot state in the old
// format still loads and shows the same views.
func TestLoadsSnapshotStateFormat1(t *testing.T) {
	tr := New(testCfg())
	mkdir(t, tr, super, "/d", 0o755)
	create(t, tr, super, "/d/f", 0, false)
	ops, err := tr.PlanAllowSnapshot(super, "/d")
	must(t, tr, ops, err)
	_, ops, err = tr.PlanCreateSnapshot(super, "/d", "s1", 0, 100)
	must(t, tr, ops, err)
	chmod(t, tr, super, "/d/f", 0o600)
	create(t, tr, super, "/d/g", 0, false)
	var recs []*fsimage.Inode
	if err := tr.Export(func(r *fsimage.Inode) error {
		c := *r
		c.Name = append([]byte(nil), r.Name...)
		recs = append(recs, &c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h := tr.ImageHeader(42)
	old, err := hex.DecodeString(snapStateFormat1)
	if err != nil {
		t.Fatal(err)
	}
	if h.Snapshots[0] == old[0] {
		t.Fatalf("the writer still writes format %d", old[0])
	}
	h.Snapshots = old
	i := 0
	got, err := NewFromImage(tr.Config(), h, func() (*fsimage.Inode, error) {
		if i == len(recs) {
			return nil, io.EOF
		}
		i++
		return recs[i-1], nil
	})
	if err != nil {
		t.Fatalf("format 1 snapshot state: %v", err)
	}
	if d1, d2 := dump(t, tr), dump(t, got); d1 != d2 {
		t.Errorf("format 1 state loads differently:\n%s\n%s", d1, d2)
	}
	if fi, err := got.Stat(super, "/d/.snapshot/s1/f"); err != nil || fi.Perm.Mode != 0o644 {
		t.Errorf("s1's f: %+v %v", fi, err)
	}
}
