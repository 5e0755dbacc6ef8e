package minicluster

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/webhdfs"
)

// TestWebHDFSFeatureOps: the extended-attribute, storage-policy and ACL
// operations over /webhdfs/v1, their JSON answers, and their errors as
// Hadoop's RemoteException.
func TestWebHDFSFeatureOps(t *testing.T) {
	c, err := Start(context.Background(), Options{Dir: t.TempDir(), DataNodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := newWebClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	super := c.NameNode().SuperUser()
	mustOp(t, w, "PUT", "/f", "op=MKDIRS&user.name="+super)
	mustOp(t, w, "PUT", "/f", "op=SETOWNER&owner=alice&user.name="+super)
	mustOp(t, w, "PUT", "/f", "op=SETPERMISSION&permission=755&user.name=alice")

	// Extended attributes.
	empty := func(what string, code int, b []byte) {
		t.Helper()
		if code != http.StatusOK || len(b) != 0 {
			t.Fatalf("%s: %d %s", what, code, b)
		}
	}
	code, b := w.op("PUT", "/f", "op=SETXATTR&xattr.name=user.a&xattr.value=%22one%22&flag=CREATE&user.name=alice")
	empty("SETXATTR", code, b)
	code, b = w.op("PUT", "/f", "op=SETXATTR&xattr.name=user.b&xattr.value=0x0aff&flag=create&user.name=alice")
	empty("SETXATTR hex", code, b)
	code, b = w.op("PUT", "/f", "op=SETXATTR&xattr.name=user.a&xattr.value=0sdHdv&flag=REPLACE&user.name=alice")
	empty("SETXATTR replace", code, b)
	code, b = w.op("PUT", "/f", "op=SETXATTR&xattr.name=user.a&xattr.value=x&flag=CREATE&user.name=alice")
	if e := wantRemote(t, "SETXATTR create of an existing one", code, b, 403, "IOException"); !strings.Contains(e.Message, "The REPLACE flag must be specified") {
		t.Fatalf("SETXATTR create: %s", b)
	}
	code, b = w.op("PUT", "/f", "op=SETXATTR&xattr.name=user.c&flag=CREATE,BOGUS&user.name=alice")
	if e := wantRemote(t, "SETXATTR bad flag", code, b, 400, "IllegalArgumentException"); !strings.Contains(e.Message, "XAttrSetFlag.BOGUS") {
		t.Fatalf("bad flag: %s", b)
	}
	code, b = w.op("PUT", "/f", "op=SETXATTR&xattr.name=user.c&flag=CREATE&user.name=bob")
	wantRemote(t, "SETXATTR by another user", code, b, 403, "AccessControlException")
	code, b = w.op("PUT", "/f", "op=SETXATTR&xattr.name=nope&flag=CREATE&user.name=alice")
	wantRemote(t, "SETXATTR unprefixed name", code, b, 400, "HadoopIllegalArgumentException")

	code, b = w.op("GET", "/f", "op=GETXATTRS&user.name=alice")
	got := decode[webhdfs.XAttrsBody](t, "GETXATTRS", code, b)
	if len(got.XAttrs) != 2 || got.XAttrs[0].Name != "user.a" || got.XAttrs[0].Value == nil || *got.XAttrs[0].Value != `"two"` ||
		got.XAttrs[1].Name != "user.b" {
		t.Fatalf("GETXATTRS: %s", b)
	}
	code, b = w.op("GET", "/f", "op=GETXATTRS&xattr.name=user.b&xattr.name=user.a&encoding=hex&user.name=alice")
	got = decode[webhdfs.XAttrsBody](t, "GETXATTRS hex", code, b)
	vals := map[string]string{}
	for _, x := range got.XAttrs {
		vals[x.Name] = *x.Value
	}
	if !reflect.DeepEqual(vals, map[string]string{"user.a": "0x74776f", "user.b": "0x0aff"}) {
		t.Fatalf("GETXATTRS hex: %s", b)
	}
	code, b = w.op("GET", "/f", "op=GETXATTRS&xattr.name=user.b&encoding=BASE64&user.name=alice")
	if got := decode[webhdfs.XAttrsBody](t, "GETXATTRS base64", code, b); len(got.XAttrs) != 1 || *got.XAttrs[0].Value != "0sCv8=" {
		t.Fatalf("GETXATTRS base64: %s", b)
	}
	code, b = w.op("GET", "/f", "op=GETXATTRS&xattr.name=user.a&xattr.name=user.zz&user.name=alice")
	if e := wantRemote(t, "GETXATTRS of a missing one", code, b, 403, "IOException"); e.Message != "At least one of the attributes provided was not found." {
		t.Fatalf("GETXATTRS missing: %s", b)
	}
	code, b = w.op("GET", "/f", "op=LISTXATTRS&user.name=alice")
	if got := decode[webhdfs.XAttrNamesBody](t, "LISTXATTRS", code, b); got.XAttrNames != `["user.a","user.b"]` {
		t.Fatalf("LISTXATTRS: %s", b)
	}
	code, b = w.op("PUT", "/f", "op=REMOVEXATTR&xattr.name=user.a&user.name=alice")
	empty("REMOVEXATTR", code, b)
	code, b = w.op("PUT", "/f", "op=REMOVEXATTR&xattr.name=user.a&user.name=alice")
	wantRemote(t, "REMOVEXATTR of a missing one", code, b, 403, "IOException")
	code, b = w.op("GET", "/f", "op=LISTXATTRS&user.name=alice")
	if got := decode[webhdfs.XAttrNamesBody](t, "LISTXATTRS after removal", code, b); got.XAttrNames != `["user.b"]` {
		t.Fatalf("LISTXATTRS after removal: %s", b)
	}

	// Storage policies.
	code, b = w.op("GET", "/", "op=GETALLSTORAGEPOLICY")
	all := decode[webhdfs.StoragePoliciesBody](t, "GETALLSTORAGEPOLICY", code, b)
	names := []string{}
	for _, p := range all.BlockStoragePolicies.BlockStoragePolicy {
		names = append(names, p.Name)
		if p.Name == "LAZY_PERSIST" && !p.CopyOnCreateFile {
			t.Fatalf("LAZY_PERSIST without copyOnCreateFile: %s", b)
		}
	}
	if !strings.Contains(strings.Join(names, ","), "HOT") || !strings.Contains(strings.Join(names, ","), "COLD") {
		t.Fatalf("GETALLSTORAGEPOLICY: %s", b)
	}
	var raw map[string]map[string][]map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "name", "storageTypes", "creationFallbacks", "replicationFallbacks", "copyOnCreateFile"} {
		if _, ok := raw["BlockStoragePolicies"]["BlockStoragePolicy"][0][k]; !ok {
			t.Fatalf("GETALLSTORAGEPOLICY lacks %s: %s", k, b)
		}
	}
	code, b = w.op("PUT", "/f", "op=SETSTORAGEPOLICY&storagepolicy=COLD&user.name=alice")
	empty("SETSTORAGEPOLICY", code, b)
	code, b = w.op("GET", "/f", "op=GETSTORAGEPOLICY&user.name=alice")
	if p := decode[webhdfs.StoragePolicyBody](t, "GETSTORAGEPOLICY", code, b).BlockStoragePolicy; p.Name != "COLD" || p.ID != 2 ||
		!reflect.DeepEqual(p.StorageTypes, []string{"ARCHIVE"}) {
		t.Fatalf("GETSTORAGEPOLICY: %s", b)
	}
	code, b = w.op("PUT", "/f", "op=SETSTORAGEPOLICY&storagepolicy=NOPE&user.name=alice")
	if e := wantRemote(t, "SETSTORAGEPOLICY unknown", code, b, 400, "HadoopIllegalArgumentException"); e.Message != "Cannot find a block policy with the name NOPE" {
		t.Fatalf("unknown policy: %s", b)
	}
	code, b = w.op("PUT", "/f", "op=SETSTORAGEPOLICY&user.name=alice")
	wantRemote(t, "SETSTORAGEPOLICY without a name", code, b, 400, "IllegalArgumentException")
	code, b = w.op("PUT", "/f", "op=SETSTORAGEPOLICY&storagepolicy=HOT&user.name=bob")
	wantRemote(t, "SETSTORAGEPOLICY by another user", code, b, 403, "AccessControlException")
	code, b = w.op("POST", "/f", "op=UNSETSTORAGEPOLICY&user.name=alice")
	empty("UNSETSTORAGEPOLICY", code, b)
	code, b = w.op("GET", "/f", "op=GETSTORAGEPOLICY&user.name=alice")
	if p := decode[webhdfs.StoragePolicyBody](t, "GETSTORAGEPOLICY after unset", code, b).BlockStoragePolicy; p.Name != "HOT" {
		t.Fatalf("GETSTORAGEPOLICY after unset: %s", b)
	}

	// ACLs.
	aclEntries := func(what string) []string {
		t.Helper()
		code, b := w.op("GET", "/f", "op=GETACLSTATUS&user.name=alice")
		var st struct{ AclStatus struct{ Entries []string } }
		st = decode[struct{ AclStatus struct{ Entries []string } }](t, what, code, b)
		return st.AclStatus.Entries
	}
	code, b = w.op("PUT", "/f", "op=MODIFYACLENTRIES&aclspec=user:bob:r-x,default:user:carol:rwx&user.name=alice")
	empty("MODIFYACLENTRIES", code, b)
	if e := aclEntries("after MODIFYACLENTRIES"); !contains(e, "user:bob:r-x") || !contains(e, "default:user:carol:rwx") {
		t.Fatalf("MODIFYACLENTRIES: %v", e)
	}
	code, b = w.op("PUT", "/f", "op=REMOVEACLENTRIES&aclspec=user:bob&user.name=alice")
	empty("REMOVEACLENTRIES", code, b)
	if e := aclEntries("after REMOVEACLENTRIES"); contains(e, "user:bob:r-x") || !contains(e, "default:user:carol:rwx") {
		t.Fatalf("REMOVEACLENTRIES: %v", e)
	}
	code, b = w.op("PUT", "/f", "op=REMOVEDEFAULTACL&user.name=alice")
	empty("REMOVEDEFAULTACL", code, b)
	if e := aclEntries("after REMOVEDEFAULTACL"); contains(e, "default:user:carol:rwx") {
		t.Fatalf("REMOVEDEFAULTACL: %v", e)
	}
	code, b = w.op("PUT", "/f", "op=SETACL&aclspec=user::rwx,user:dave:r--,group::r-x,other::---&user.name=alice")
	empty("SETACL", code, b)
	if e := aclEntries("after SETACL"); !contains(e, "user:dave:r--") {
		t.Fatalf("SETACL: %v", e)
	}
	code, b = w.op("PUT", "/f", "op=REMOVEACL&user.name=alice")
	empty("REMOVEACL", code, b)
	if e := aclEntries("after REMOVEACL"); len(e) != 0 {
		t.Fatalf("REMOVEACL: %v", e)
	}
	code, b = w.op("PUT", "/f", "op=MODIFYACLENTRIES&aclspec=user:bob:rwz&user.name=alice")
	if e := wantRemote(t, "MODIFYACLENTRIES bad perm", code, b, 400, "IllegalArgumentException"); e.Message != "Invalid permission in <aclSpec> : user:bob:rwz" {
		t.Fatalf("bad aclspec: %s", b)
	}
	code, b = w.op("PUT", "/f", "op=REMOVEACLENTRIES&aclspec=user:bob:r--&user.name=alice")
	if e := wantRemote(t, "REMOVEACLENTRIES with a perm", code, b, 400, "IllegalArgumentException"); e.Message != "Invalid <aclSpec> : user:bob:r--" {
		t.Fatalf("bad removal aclspec: %s", b)
	}
	code, b = w.op("PUT", "/f", "op=SETACL&aclspec=bogus::rwx&user.name=alice")
	wantRemote(t, "SETACL bad type", code, b, 400, "IllegalArgumentException")
	code, b = w.op("PUT", "/f", "op=MODIFYACLENTRIES&aclspec=user:bob:rwx&user.name=bob")
	wantRemote(t, "MODIFYACLENTRIES by another user", code, b, 403, "AccessControlException")
	code, b = w.op("PUT", "/f", "op=REMOVEACL&user.name=bob")
	wantRemote(t, "REMOVEACL by another user", code, b, 403, "AccessControlException")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
