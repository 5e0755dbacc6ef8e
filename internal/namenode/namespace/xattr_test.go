package namespace

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

func ux(name, value string) op.XAttr {
	return op.XAttr{NS: op.XAttrUser, Name: name, Value: []byte(value)}
}

// TestXAttrRules runs setXAttr, getXAttrs, listXAttrs and removeXAttr
// through HDFS's rules, with its messages, against the fixture tree.
func TestXAttrRules(t *testing.T) {
	tr := fixture(t)
	set := func(c Caller, p string, x op.XAttr, flag uint32) error {
		ops, err := tr.PlanSetXAttr(c, p, x, flag)
		if err == nil {
			applyAll(t, tr, ops)
		}
		return err
	}
	rm := func(c Caller, p string, x op.XAttr) error {
		ops, err := tr.PlanRemoveXAttr(c, p, x)
		if err == nil {
			applyAll(t, tr, ops)
		}
		return err
	}
	const f = "/_test/u1/file"
	both := XAttrCreate | XAttrReplace
	checkErr(t, set(u1, f, ux("a", "1"), XAttrCreate), nil, "")
	checkErr(t, set(u1, f, ux("a", "2"), XAttrCreate), ErrIO, "XAttr: a already exists. The REPLACE flag must be specified.")
	checkErr(t, set(u1, f, ux("b", "2"), XAttrReplace), ErrIO, "XAttr: b does not exist. The CREATE flag must be specified.")
	checkErr(t, set(u1, f, ux("a", "2"), XAttrReplace), nil, "")
	checkErr(t, set(u1, f, ux("b", ""), both), nil, "")
	checkErr(t, set(u1, f, ux("c", "x"), 0), ErrIO, "A flag must be specified.")
	checkErr(t, set(u2, f, ux("c", "x"), both), ErrPermission, "")
	checkErr(t, set(u1, "/_test/u1/nope", ux("c", "x"), both), ErrNotFound, "cannot find /_test/u1/nope")
	checkErr(t, set(u1, f, op.XAttr{NS: op.XAttrTrusted, Name: "t", Value: []byte("v")}, both), ErrPermission, "User doesn't have permission for xattr: trusted.t")
	checkErr(t, set(super, f, op.XAttr{NS: op.XAttrTrusted, Name: "t", Value: []byte("v")}, both), nil, "")
	checkErr(t, set(u1, f, op.XAttr{NS: op.XAttrSystem, Name: "s"}, both), ErrPermission, "User doesn't have permission for xattr: system.s")
	checkErr(t, set(super, f, op.XAttr{NS: op.XAttrRaw, Name: "r"}, both), ErrPermission, "User doesn't have permission for xattr: raw.r")
	checkErr(t, set(u1, ReservedRawPrefix+f, op.XAttr{NS: op.XAttrRaw, Name: "r"}, both), ErrPermission, "Access denied for user gohdfs1. Superuser privilege is required")
	checkErr(t, set(super, ReservedRawPrefix+f, op.XAttr{NS: op.XAttrRaw, Name: "r", Value: []byte{0, 1}}, both), nil, "")
	checkErr(t, set(u1, f, ux("big", strings.Repeat("v", 16384)), both), ErrIllegalArgument,
		"The XAttr is too big. The maximum combined size of the name and value is 16384, but the total size is 16387")

	// What each caller sees.
	got, err := tr.ListXAttrs(u1, f)
	checkErr(t, err, nil, "")
	if want := []op.XAttr{ux("a", "2"), ux("b", "")}; !reflect.DeepEqual(got, want) {
		t.Fatalf("list as owner = %+v, want %+v", got, want)
	}
	got, _ = tr.ListXAttrs(super, f)
	if len(got) != 3 || XAttrName(got[2]) != "trusted.t" {
		t.Fatalf("list as superuser = %+v", got)
	}
	got, _ = tr.ListXAttrs(super, ReservedRawPrefix+f)
	if len(got) != 4 || XAttrName(got[3]) != "raw.r" {
		t.Fatalf("list under /.reserved/raw = %+v", got)
	}
	got, err = tr.GetXAttrs(u2, f, []op.XAttr{{NS: op.XAttrUser, Name: "b"}})
	if err != nil || len(got) != 1 || got[0].Value == nil || len(got[0].Value) != 0 {
		t.Fatalf("get b = %+v, %v", got, err)
	}
	_, err = tr.GetXAttrs(u1, f, []op.XAttr{{NS: op.XAttrUser, Name: "zz"}})
	checkErr(t, err, ErrIO, "At least one of the attributes provided was not found.")
	_, err = tr.GetXAttrs(u1, f, []op.XAttr{{NS: op.XAttrTrusted, Name: "t"}})
	checkErr(t, err, ErrPermission, "User doesn't have permission for xattr: trusted.t")
	_, err = tr.ListXAttrs(u2, "/_test/private/f")
	checkErr(t, err, ErrPermission, "")

	// The per-inode limit counts user. and trusted. attributes.
	for i := 0; i < 29; i++ {
		checkErr(t, set(u1, f, ux("n"+string(rune('A'+i)), ""), both), nil, "")
	}
	checkErr(t, set(u1, f, ux("one-more", ""), both), ErrIO, "Cannot add additional XAttr to inode, would exceed limit of 32")

	checkErr(t, rm(u1, f, ux("a", "")), nil, "")
	checkErr(t, rm(u1, f, ux("a", "")), ErrIO, "No matching attributes found for remove operation")
	checkErr(t, rm(u2, f, ux("b", "")), ErrPermission, "")

	// Sticky directory: only the owner changes user. attributes.
	checkErr(t, set(u1, "/_test/sticky", ux("s", ""), both), ErrPermission, "Permission denied. user=gohdfs1 is not the owner of inode=/_test/sticky")

	// Image and replay keep them; deletion forgets them.
	if a, b := dump(t, tr), dump(t, roundTrip(t, tr)); a != b {
		t.Fatalf("image round trip differs:\n%s\n---\n%s", a, b)
	}
	_, ops, err := tr.PlanDelete(u1, f, false, 50)
	must(t, tr, ops, err)
	if n := tr.NumWithFeatures(); n != 0 {
		t.Fatalf("%d inodes with features after the delete", n)
	}
}

// TestXAttrDisabled: with dfs.namenode.xattrs.enabled false every call is
// refused with HDFS's message.
func TestXAttrDisabled(t *testing.T) {
	cfg := testCfg()
	cfg.XAttrsEnabled = false
	tr := New(cfg)
	_, err := tr.PlanSetXAttr(super, "/", ux("a", ""), XAttrCreate)
	checkErr(t, err, ErrIO, "The XAttr operation has been rejected.  Support for XAttrs has been disabled by setting dfs.namenode.xattrs.enabled to false.")
	_, err = tr.ListXAttrs(super, "/")
	checkErr(t, err, ErrIO, "")
}

func TestParseXAttrName(t *testing.T) {
	for in, want := range map[string]string{"user.a": "user.a", "USER.b.c": "user.b.c", "trusted.x": "trusted.x", "raw.r": "raw.r"} {
		x, err := ParseXAttrName(in)
		if err != nil || XAttrName(x) != want {
			t.Errorf("%q: %v %v", in, XAttrName(x), err)
		}
	}
	for _, in := range []string{"a", "user.", "foo.a", ".a", ""} {
		if _, err := ParseXAttrName(in); err == nil {
			t.Errorf("%q parsed", in)
		}
	}
}

// TestConcatDropsSourceFeatures: the sources a concat deletes take their
// xattrs with them.
func TestConcatDropsSourceFeatures(t *testing.T) {
	tr := fixture(t)
	create(t, tr, u1, "/_test/u1/dir/a", 1, false)
	create(t, tr, u1, "/_test/u1/dir/b", 1, false)
	ops, err := tr.PlanSetXAttr(u1, "/_test/u1/dir/b", ux("k", "v"), XAttrCreate)
	must(t, tr, ops, err)
	applyAll(t, tr, []op.Op{&op.Concat{Target: "/_test/u1/dir/a", Srcs: []string{"/_test/u1/dir/b"}, Mtime: 40}})
	if n := tr.NumWithFeatures(); n != 0 {
		t.Fatalf("%d inodes with features after the concat", n)
	}
}
