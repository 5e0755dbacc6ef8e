package namespace

import (
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// parseSpec reads "user:bob:r-x,default:group::rwx" for tests.
func parseSpec(t *testing.T, s string) []op.ACLEntry {
	t.Helper()
	var out []op.ACLEntry
	for _, part := range strings.Split(s, ",") {
		f := strings.Split(part, ":")
		e := op.ACLEntry{}
		if f[0] == "default" {
			e.Scope = op.ACLDefault
			f = f[1:]
		}
		e.Type = map[string]uint8{"user": op.ACLUser, "group": op.ACLGroup, "mask": op.ACLMask, "other": op.ACLOther}[f[0]]
		e.Name = f[1]
		if len(f) > 2 && len(f[2]) == 3 {
			for i, ch := range "rwx" {
				if f[2][i] == byte(ch) {
					e.Perm |= 4 >> i
				}
			}
		}
		out = append(out, e)
	}
	return out
}

func aclText(es []op.ACLEntry) string {
	var s []string
	for _, e := range es {
		s = append(s, ACLEntryString(e))
	}
	return strings.Join(s, ",")
}

// TestACLTransformations checks modify, remove, setAcl, removeDefaultAcl
// and removeAcl against results worked out from HDFS's documented rules.
func TestACLTransformations(t *testing.T) {
	tr := fixture(t)
	const d = "/_test/u1/dir"
	run := func(ops []op.Op, err error) error {
		if err == nil {
			applyAll(t, tr, ops)
		}
		return err
	}
	logical := func(p string) string {
		w := tr.lookup(p)
		return aclText(tr.logicalACL(w.last()))
	}
	checkErr(t, run(tr.PlanModifyACLEntries(u1, d, parseSpec(t, "user:bob:rwx"))), nil, "")
	// A named entry brings a mask: the union of the group class.
	if got := logical(d); got != "user::rwx,user:bob:rwx,group::r-x,mask::rwx,other::r-x" {
		t.Fatalf("after modify: %s", got)
	}
	if fi, _ := tr.Stat(u1, d); !fi.HasACL || fi.Perm.Mode != 0o775 {
		t.Fatalf("stat after modify: acl %v mode %o", fi.HasACL, fi.Perm.Mode)
	}
	// chmod changes the mask through the group bits.
	chmod(t, tr, u1, d, 0o755)
	if got := logical(d); got != "user::rwx,user:bob:rwx,group::r-x,mask::r-x,other::r-x" {
		t.Fatalf("after chmod: %s", got)
	}
	// Default entries get the base entries copied from the access ACL.
	checkErr(t, run(tr.PlanModifyACLEntries(u1, d, parseSpec(t, "default:user:carol:r-x"))), nil, "")
	if got := logical(d); got != "user::rwx,user:bob:rwx,group::r-x,mask::r-x,other::r-x,default:user::rwx,default:user:carol:r-x,default:group::r-x,default:mask::r-x,default:other::r-x" {
		t.Fatalf("after default: %s", got)
	}
	checkErr(t, run(tr.PlanRemoveACLEntries(u1, d, parseSpec(t, "mask::"))), ErrACL, "Invalid ACL: mask is required and cannot be deleted if the ACL has named entries.")
	checkErr(t, run(tr.PlanModifyACLEntries(u1, d, parseSpec(t, "user:bob:rwx,user:bob:r--"))), ErrACL, "Invalid ACL: multiple entries with same scope, type and name.")
	checkErr(t, run(tr.PlanModifyACLEntries(u1, d, parseSpec(t, "mask:m:rwx"))), ErrACL, "Invalid ACL: this entry type must not have a name: mask:m:rwx.")
	checkErr(t, run(tr.PlanSetACL(u1, d, parseSpec(t, "user::rwx,other::---"))), ErrACL, "Invalid ACL: the user, group and other entries are required.")
	checkErr(t, run(tr.PlanModifyACLEntries(u1, "/_test/u1/file", parseSpec(t, "default:user:bob:rwx"))), ErrACL,
		"Invalid ACL: only directories may have a default ACL. Path: /_test/u1/file")
	checkErr(t, run(tr.PlanModifyACLEntries(u2, d, parseSpec(t, "user:bob:rwx"))), ErrPermission, "Permission denied. user=gohdfs2 is not the owner of inode=/_test/u1/dir")
	checkErr(t, run(tr.PlanModifyACLEntries(u1, "/_test/u1/nope", parseSpec(t, "user:bob:rwx"))), ErrNotFound, "cannot find /_test/u1/nope")

	// New children inherit the default ACL, filtered by their mode.
	mkdir(t, tr, u1, d+"/child", 0o750)
	if got := logical(d + "/child"); got != "user::rwx,user:carol:r-x,group::r-x,mask::r-x,other::---,default:user::rwx,default:user:carol:r-x,default:group::r-x,default:mask::r-x,default:other::r-x" {
		t.Fatalf("inherited by a directory: %s", got)
	}
	create(t, tr, u1, d+"/f", 0, false) // mode 0644
	if got := logical(d + "/f"); got != "user::rw-,user:carol:r-x,group::r-x,mask::r--,other::r--" {
		t.Fatalf("inherited by a file: %s", got)
	}
	if a, b := dump(t, tr), dump(t, roundTrip(t, tr)); a != b {
		t.Fatalf("image round trip differs:\n%s\n---\n%s", a, b)
	}

	checkErr(t, run(tr.PlanRemoveDefaultACL(u1, d)), nil, "")
	if got := logical(d); got != "user::rwx,user:bob:rwx,group::r-x,mask::r-x,other::r-x" {
		t.Fatalf("after removeDefaultAcl: %s", got)
	}
	checkErr(t, run(tr.PlanSetACL(u1, d, parseSpec(t, "user::rwx,group::r--,other::---,user:dave:rw-"))), nil, "")
	if got := logical(d); got != "user::rwx,user:dave:rw-,group::r--,mask::rw-,other::---" {
		t.Fatalf("after setAcl: %s", got)
	}
	checkErr(t, run(tr.PlanRemoveACL(u1, d)), nil, "")
	if got := logical(d); got != "user::rwx,group::r--,other::---" {
		t.Fatalf("after removeAcl: %s", got)
	}
	// Identical ACLs are shared.
	before := tr.NumACLs()
	for _, f := range []string{"/_test/u1/dir/sub", "/_test/u1/empty"} {
		checkErr(t, run(tr.PlanModifyACLEntries(u1, f, parseSpec(t, "user:zed:r--"))), nil, "")
	}
	if got := tr.NumACLs(); got != before+1 {
		t.Fatalf("%d distinct ACLs after giving two inodes the same one, want %d", got, before+1)
	}
}

// TestACLPermissionChecks is a table of access decisions with ACLs: owner,
// named user, owning group, named group, mask, other, superuser.
func TestACLPermissionChecks(t *testing.T) {
	tr := New(testCfg())
	mkdir(t, tr, super, "/a", 0o777)
	ops, err := tr.PlanCreate(super, "/a/f", 0o640, "c", "m", CreateFlags{Create: true}, false, 1, 1024, 1)
	must(t, tr, ops, err)
	ops, err = tr.PlanSetOwner(super, "/a/f", "owner", "staff")
	must(t, tr, ops, err)
	// owner rw-, named user bob rwx, group staff r--, named group ops rw-,
	// mask r--, other ---.
	ops, err = tr.PlanSetACL(super, "/a/f", parseSpec(t, "user::rw-,user:bob:rwx,group::r--,group:ops:rw-,mask::r--,other::---"))
	must(t, tr, ops, err)
	for _, tc := range []struct {
		who    Caller
		access Access
		ok     bool
	}{
		{Caller{User: "owner"}, Read | Write, true},
		{Caller{User: "owner", Groups: []string{"ops"}}, Execute, false}, // the owner entry decides alone
		{Caller{User: "bob"}, Read, true},
		{Caller{User: "bob"}, Write, false}, // masked
		{Caller{User: "bob", Groups: []string{"ops"}}, Write, false},
		{Caller{User: "x", Groups: []string{"staff"}}, Read, true},
		{Caller{User: "x", Groups: []string{"staff"}}, Write, false},
		{Caller{User: "x", Groups: []string{"ops"}}, Write, false}, // rw- masked to r--
		{Caller{User: "x", Groups: []string{"ops"}}, Read, true},
		{Caller{User: "x", Groups: []string{"staff", "ops"}}, Read, true},
		{Caller{User: "x"}, Read, false}, // other ---
		{super, Read | Write | Execute, true},
	} {
		err := tr.CheckAccess(tc.who, "/a/f", tc.access)
		if (err == nil) != tc.ok {
			t.Errorf("%v %v: %v, want ok=%v", tc.who, tc.access, err, tc.ok)
		}
	}
	// Raising the mask through chmod widens bob and ops.
	chmod(t, tr, super, "/a/f", 0o670)
	if err := tr.CheckAccess(Caller{User: "bob"}, "/a/f", Write); err != nil {
		t.Fatalf("bob after chmod g+w: %v", err)
	}
	if err := tr.CheckAccess(Caller{User: "x", Groups: []string{"staff"}}, "/a/f", Write); err == nil {
		t.Fatal("the owning group's entry r-- must still deny write")
	}
	cfg := testCfg()
	cfg.ACLsEnabled = false
	_, err = New(cfg).PlanSetACL(super, "/", parseSpec(t, "user::rwx,group::r-x,other::r-x"))
	checkErr(t, err, ErrACL, "The ACL operation has been rejected.  Support for ACLs has been disabled by setting dfs.namenode.acls.enabled to false.")
}

func TestInheritsDefaultACL(t *testing.T) {
	tr := fixture(t)
	const d = "/_test/u1/dir"
	if tr.InheritsDefaultACL(d + "/x") {
		t.Fatal("no default ACL yet")
	}
	ops, err := tr.PlanModifyACLEntries(u1, d, parseSpec(t, "default:user:bob:rwx"))
	must(t, tr, ops, err)
	for p, want := range map[string]bool{d + "/x": true, d + "/x/y/z": true, d + "/sub": true, d: false, "/": false, "/_test/u1/file": false} {
		if got := tr.InheritsDefaultACL(p); got != want {
			t.Errorf("InheritsDefaultACL(%s) = %v, want %v", p, got, want)
		}
	}
}
