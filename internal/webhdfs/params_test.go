package webhdfs

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

func TestParse(t *testing.T) {
	r, err := Parse("PUT", "/webhdfs/v1/a/b/", "OP=create&Overwrite=TRUE&blocksize=1048576&replication=2&permission=0640&user.name=alice&buffersize=4096&noredirect=true")
	if err != nil {
		t.Fatal(err)
	}
	want := &Request{Method: "PUT", Op: "CREATE", Path: "/a/b", User: "alice", Overwrite: true, BlockSize: 1 << 20,
		Replication: 2, Permission: 0o640, BufferSize: 4096, NoRedirect: true, Length: Unset, ModTime: Unset,
		AccessTime: Unset, NewLength: Unset, CreateParent: true, SnapshotDiffIndex: Unset}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("got %+v\nwant %+v", r, want)
	}
	r, err = Parse("GET", "/webhdfs/v1", "op=LISTSTATUS")
	if err != nil || r.Path != "/" || r.User != DefaultUser {
		t.Fatalf("root: %+v %v", r, err)
	}
	r, err = Parse("POST", "/webhdfs/v1/t", "op=CONCAT&sources=/a,/b")
	if err != nil || !reflect.DeepEqual(r.Sources, []string{"/a", "/b"}) {
		t.Fatalf("sources: %+v %v", r, err)
	}
	r, err = Parse("GET", "/webhdfs/v1/t", "op=GETXATTRS&xattr.name=user.b&Xattr.Name=user.a&encoding=hex")
	if err != nil || !reflect.DeepEqual(r.XAttrNames, []string{"user.b", "user.a"}) || r.XAttrEncoding != "HEX" {
		t.Fatalf("xattr names: %+v %v", r, err)
	}
	r, err = Parse("GET", "/webhdfs/v1/s", "op=GETSNAPSHOTDIFFLISTING&fromsnapshot=a&tosnapshot=b&snapshotdiffstartpath=x/y&snapshotdiffindex=3")
	if err != nil || r.SnapshotDiffStartPath != "x/y" || r.SnapshotDiffIndex != 3 {
		t.Fatalf("snapshot diff cursor: %+v %v", r, err)
	}
	if again, err := Parse("GET", "/webhdfs/v1/s", r.Query()); err != nil || !reflect.DeepEqual(again, r) {
		t.Fatalf("snapshot diff cursor through Query: %+v %v", again, err)
	}
	r, err = Parse("PUT", "/webhdfs/v1/t", "op=SETXATTR&xattr.name=user.a&xattr.value=%22v%22&flag=replace")
	if err != nil || r.XAttrValue != `"v"` || r.XAttrFlag != XAttrReplace {
		t.Fatalf("setxattr: %+v %v", r, err)
	}
	bad := []struct{ method, path, query, class, text string }{
		{"GET", "/webhdfs/v1/a", "", remoteerr.ClassIllegalArgument, `"op" is missing`},
		{"GET", "/webhdfs/v1/a", "op=MKDIRS", remoteerr.ClassIllegalArgument, "No enum constant org.apache.hadoop.hdfs.web.resources.GetOpParam.Op.MKDIRS"},
		{"PATCH", "/webhdfs/v1/a", "op=MKDIRS", remoteerr.ClassUnsupported, "PATCH"},
		{"GET", "/webhdfs/v1/a", "op=OPEN&offset=-1", remoteerr.ClassIllegalArgument, `"offset": "-1" is out of range`},
		{"GET", "/webhdfs/v1/a", "op=OPEN&length=x", remoteerr.ClassIllegalArgument, `"length": "x" is not a decimal integer`},
		{"PUT", "/webhdfs/v1/a", "op=SETPERMISSION&permission=999", remoteerr.ClassIllegalArgument, "octal permission"},
		{"PUT", "/webhdfs/v1/a", "op=CREATE&overwrite=yes", remoteerr.ClassIllegalArgument, "true or false"},
		{"PUT", "/webhdfs/v1/a", "op=RENAME&destination=b", remoteerr.ClassIllegalArgument, "not an absolute path"},
		{"GET", "/webhdfs/v1/a", "op=GETFILESTATUS&user.name=1x", remoteerr.ClassIllegalArgument, "does not belong to the domain"},
		{"GET", "/webhdfs/v1/a", "op=GETFILESTATUS&doas=a%20b", remoteerr.ClassIllegalArgument, "does not belong to the domain"},
		{"GET", "/webhdfsx", "op=GETFILESTATUS", remoteerr.ClassIllegalArgument, "does not start with"},
		{"GET", "/webhdfs/v1/a", "op=%zz", remoteerr.ClassIllegalArgument, "malformed query"},
		{"PUT", "/webhdfs/v1/a", "op=SETXATTR&flag=CREATE,bogus", remoteerr.ClassIllegalArgument, `"flag": No enum constant org.apache.hadoop.fs.XAttrSetFlag.BOGUS`},
		{"GET", "/webhdfs/v1/a", "op=GETXATTRS&encoding=utf8", remoteerr.ClassIllegalArgument, `"encoding": No enum constant org.apache.hadoop.fs.XAttrCodec.UTF8`},
	}
	for _, b := range bad {
		_, err := Parse(b.method, b.path, b.query)
		var re *remoteerr.Error
		if !errors.As(err, &re) || re.Class != b.class || !strings.Contains(re.Message, b.text) {
			t.Errorf("Parse(%s %s?%s) = %v, want %s containing %q", b.method, b.path, b.query, err, b.class, b.text)
		}
	}
}

func TestStatusOf(t *testing.T) {
	for class, want := range map[string]int{
		remoteerr.ClassFileNotFound: http.StatusNotFound, remoteerr.ClassAccessControl: http.StatusForbidden,
		remoteerr.ClassIOException: http.StatusForbidden, remoteerr.ClassFileAlreadyExists: http.StatusForbidden,
		remoteerr.ClassIllegalArgument: http.StatusBadRequest, remoteerr.ClassUnsupported: http.StatusBadRequest,
		remoteerr.ClassHadoopIllegalArg: http.StatusBadRequest, "java.lang.SecurityException": http.StatusUnauthorized,
		remoteerr.ClassIllegalState: http.StatusInternalServerError,
	} {
		if got := StatusOf(class); got != want {
			t.Errorf("StatusOf(%s) = %d, want %d", class, got, want)
		}
	}
}

func TestValidUser(t *testing.T) {
	for u, want := range map[string]bool{"alice": true, "_x9.-": true, "host$": true, "a$b": false, "9a": false, "": false, "a b": false} {
		if validUser(u) != want {
			t.Errorf("validUser(%q) = %v", u, !want)
		}
	}
}

// FuzzParse: no input panics the parser; what it accepts has an op of its
// method, an absolute path, and survives Query and Parse unchanged.
func FuzzParse(f *testing.F) {
	f.Add("GET", "/webhdfs/v1/a", "op=OPEN&offset=5&length=10&user.name=bob")
	f.Add("PUT", "/webhdfs/v1/", "op=CREATE&overwrite=true&permission=1777&replication=3&blocksize=9")
	f.Add("POST", "/webhdfs/v1/x/y", "op=concat&sources=/a,/b&doas=c")
	f.Add("DELETE", "/webhdfs/v1//", "op=DELETE&recursive=false")
	f.Add("PUT", "/webhdfs/v1/a", "op=SETTIMES&modificationtime=-1&accesstime=7&startAfter=q&namenoderpcaddress=h:1")
	f.Add("PUT", "/webhdfs/v1/a", "op=SETXATTR&xattr.name=user.a&xattr.value=0x0aff&flag=create,REPLACE")
	f.Add("GET", "/webhdfs/v1/a", "op=GETXATTRS&XATTR.NAME=user.b&xattr.name=user.a&encoding=base64&xattr.name=")
	f.Add("PUT", "/webhdfs/v1/a", "op=SETSTORAGEPOLICY&storagepolicy=COLD")
	f.Add("PUT", "/webhdfs/v1/a", "op=MODIFYACLENTRIES&aclspec=user:bob:r-x,default:group::r--")
	f.Add("PUT", "/webhdfs/v1/a", "op=SETXATTR&flag=bogus&encoding=x")
	f.Add("GET", "/webhdfs/v1/s", "op=GETSNAPSHOTDIFFLISTING&oldsnapshotname=a&snapshotname=&snapshotdiffstartpath=x/y&snapshotdiffindex=-1")
	f.Fuzz(func(t *testing.T, method, path, query string) {
		r, err := Parse(method, path, query)
		if err != nil {
			var re *remoteerr.Error
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a RemoteException", err)
			}
			return
		}
		if !strings.HasPrefix(r.Path, "/") {
			t.Fatalf("path %q", r.Path)
		}
		found := false
		for _, o := range Ops(method) {
			found = found || o == r.Op
		}
		if !found {
			t.Fatalf("op %q not of %s", r.Op, method)
		}
		r2, err := Parse(method, Prefix+r.Path, r.Query())
		if err != nil {
			t.Fatalf("re-parse of %q: %v", r.Query(), err)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip:\n%+v\n%+v", r, r2)
		}
	})
}
