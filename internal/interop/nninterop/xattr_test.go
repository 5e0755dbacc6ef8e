package nninterop

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	hdfs "github.com/colinmarc/hdfs/v2"
)

// TestXAttrStockClient drives the stock client's xattr calls against the
// NameNode, with the error cases its own suite checks.
func TestXAttrStockClient(t *testing.T) {
	_, super, c := setup(t)
	if err := c.CreateEmptyFile("/_test/x"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetXAttr("/_test/x", "user.color", "blue"); err != nil {
		t.Fatalf("SetXAttr: %v", err)
	}
	if err := c.SetXAttr("/_test/x", "user.color", "red"); err != nil {
		t.Fatalf("SetXAttr again (replace): %v", err)
	}
	if err := c.SetXAttr("/_test/x", "user.empty", ""); err != nil {
		t.Fatalf("SetXAttr empty: %v", err)
	}
	m, err := c.ListXAttrs("/_test/x")
	if err != nil || !reflect.DeepEqual(m, map[string]string{"user.color": "red", "user.empty": ""}) {
		t.Fatalf("ListXAttrs = %v, %v", m, err)
	}
	m, err = c.GetXAttrs("/_test/x", "user.color")
	if err != nil || !reflect.DeepEqual(m, map[string]string{"user.color": "red"}) {
		t.Fatalf("GetXAttrs = %v, %v", m, err)
	}
	if _, err := c.GetXAttrs("/_test/x", "user.nope"); err == nil || !strings.Contains(err.Error(), "one or more keys not found") {
		t.Fatalf("GetXAttrs missing key: %v", err)
	}
	if _, err := c.ListXAttrs("/_test/nope"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ListXAttrs missing file: %v", err)
	}
	if _, err := c.GetXAttrs("/_test/nope", "user.a"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("GetXAttrs missing file: %v", err)
	}
	if err := c.SetXAttr("/_test/nope", "user.a", "b"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("SetXAttr missing file: %v", err)
	}
	if err := c.SetXAttr("/_test/x", "trusted.a", "b"); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("SetXAttr trusted as a user: %v", err)
	}
	if _, err := c.GetXAttrs("/_test/x", "trusted.a"); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("GetXAttrs trusted as a user: %v", err)
	}
	if err := super.SetXAttr("/_test/x", "trusted.a", "b"); err != nil {
		t.Fatalf("SetXAttr trusted as the superuser: %v", err)
	}
	if m, _ := c.ListXAttrs("/_test/x"); len(m) != 2 {
		t.Fatalf("a user sees %v", m)
	}
	if m, _ := super.ListXAttrs("/_test/x"); m["trusted.a"] != "b" {
		t.Fatalf("the superuser sees %v", m)
	}
	if err := super.MkdirAll("/_test/private", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := c.SetXAttr("/_test/private", "user.a", "b"); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("SetXAttr without permission: %v", err)
	}
	if _, err := c.ListXAttrs("/_test/private"); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("ListXAttrs without permission: %v", err)
	}
	if err := c.RemoveXAttr("/_test/x", "user.color"); err != nil {
		t.Fatalf("RemoveXAttr: %v", err)
	}
	if err := c.RemoveXAttr("/_test/x", "user.color"); err == nil || !strings.Contains(err.Error(), "one or more keys not found") {
		t.Fatalf("RemoveXAttr twice: %v", err)
	}
	if err := c.RemoveXAttr("/_test/nope", "user.color"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("RemoveXAttr missing file: %v", err)
	}
	if m, _ := c.ListXAttrs("/_test/x"); !reflect.DeepEqual(m, map[string]string{"user.empty": ""}) {
		t.Fatalf("after remove: %v", m)
	}
}

// TestSnapshotCallsAnswered: the stock client allows snapshots on a
// directory (superusers only), takes one (its owner may too, another user
// may not), is refused a second of the same name and a disallow while one
// exists, stats and reads xattrs through .snapshot, and deletes it.
func TestSnapshotCallsAnswered(t *testing.T) {
	_, super, c := setup(t)
	if err := super.AllowSnapshots("/_test"); err != nil {
		t.Fatalf("AllowSnapshots: %v", err)
	}
	if err := c.AllowSnapshots("/_test"); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("AllowSnapshots as a user: %v", err)
	}
	fi, err := super.Stat("/_test")
	if err != nil || fi.Sys().(*hdfs.FileStatus).GetFlags()&8 == 0 {
		t.Fatalf("Stat of a snapshottable directory: %v, flags %d", err, fi.Sys().(*hdfs.FileStatus).GetFlags())
	}
	if err := c.CreateEmptyFile("/_test/sx"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetXAttr("/_test/sx", "user.k", "v1"); err != nil {
		t.Fatalf("SetXAttr: %v", err)
	}
	if p, err := super.CreateSnapshot("/_test", "s1"); err != nil || p != "/_test/.snapshot/s1" {
		t.Fatalf("CreateSnapshot: %q, %v", p, err)
	}
	// The snapshot keeps the attribute's value when it was taken.
	if err := c.SetXAttr("/_test/sx", "user.k", "v2"); err != nil {
		t.Fatalf("SetXAttr after the snapshot: %v", err)
	}
	for p, want := range map[string]string{"/_test/sx": "v2", "/_test/.snapshot/s1/sx": "v1"} {
		if m, err := c.ListXAttrs(p); err != nil || !reflect.DeepEqual(m, map[string]string{"user.k": want}) {
			t.Fatalf("ListXAttrs %s = %v, %v; want user.k=%s", p, m, err, want)
		}
	}
	if err := c.SetXAttr("/_test/.snapshot/s1/sx", "user.k", "v3"); err == nil {
		t.Fatal("SetXAttr in a snapshot succeeded")
	}
	if _, err := c.CreateSnapshot("/_test", "s2"); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("CreateSnapshot by a user who does not own the directory: %v", err)
	}
	if _, err := super.CreateSnapshot("/_test", "s1"); err == nil || !strings.Contains(err.Error(), "SnapshotException") {
		t.Fatalf("second s1: %v", err)
	}
	if err := super.DisallowSnapshots("/_test"); err == nil || !strings.Contains(err.Error(), "SnapshotException") {
		t.Fatalf("DisallowSnapshots with a snapshot: %v", err)
	}
	if fi, err := c.Stat("/_test/.snapshot/s1"); err != nil || !fi.IsDir() || fi.Name() != "s1" {
		t.Fatalf("Stat of the snapshot: %v, %v", fi, err)
	}
	if err := super.DeleteSnapshot("/_test", "s1"); err != nil {
		t.Fatalf("DeleteSnapshot: %v", err)
	}
	if _, err := c.Stat("/_test/.snapshot/s1"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Stat of a deleted snapshot: %v", err)
	}
	if err := super.DisallowSnapshots("/_test"); err != nil {
		t.Fatalf("DisallowSnapshots: %v", err)
	}
}
