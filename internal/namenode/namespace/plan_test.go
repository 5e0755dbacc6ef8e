package namespace

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

func TestPlanMkdirs(t *testing.T) {
	tests := []struct {
		name      string
		c         Caller
		path      string
		parents   bool
		wantOps   int
		wantErr   error
		wantMsg   string
		checkMode map[string]uint16
	}{
		{name: "one", c: u1, path: "/_test/u1/new", wantOps: 1, checkMode: map[string]uint16{"/_test/u1/new": 0o750}},
		{name: "parents", c: u1, path: "/_test/u1/x/y/z", parents: true, wantOps: 3,
			checkMode: map[string]uint16{"/_test/u1/x": 0o750 | 0o300, "/_test/u1/x/y": 0o750 | 0o300, "/_test/u1/x/y/z": 0o750}},
		{name: "trailing slash", c: u1, path: "/_test/u1/t/", wantOps: 1},
		{name: "existing dir", c: u1, path: "/_test/u1/dir", wantOps: 0},
		{name: "existing root", c: u1, path: "/", wantOps: 0},
		{name: "existing file", c: u1, path: "/_test/u1/file", wantErr: ErrExists, wantMsg: "Path is not a directory: /_test/u1/file"},
		{name: "parent missing", c: u1, path: "/_test/u1/nope/x", wantErr: ErrNotFound, wantMsg: "Parent directory doesn't exist: /_test/u1/nope"},
		{name: "under file", c: u1, path: "/_test/u1/file/x", parents: true, wantErr: ErrParentNotDir, wantMsg: "/_test/u1/file (is not a directory)"},
		{name: "no write", c: u2, path: "/_test/u1/x", wantErr: ErrPermission,
			wantMsg: `Permission denied: user=gohdfs2, access=WRITE, inode="/_test/u1":gohdfs1:supergroup:drwxr-xr-x`},
		{name: "no write on nearest ancestor", c: u2, path: "/_test/u1/a/b/c", parents: true, wantErr: ErrPermission},
		{name: "no traverse", c: u2, path: "/_test/private/x", wantErr: ErrPermission,
			wantMsg: `Permission denied: user=gohdfs2, access=EXECUTE, inode="/_test/private":gohdfs1:supergroup:drwx------`},
		{name: "super bypasses", c: super, path: "/_test/private/x", wantOps: 1},
		{name: "dot dot", c: u1, path: "/_test/../x", wantErr: ErrInvalidPath},
		{name: "dot", c: u1, path: "/_test/./x", wantErr: ErrInvalidPath},
		{name: "colon", c: u1, path: "/_test/a:b", wantErr: ErrInvalidPath},
		{name: "double slash", c: u1, path: "/_test//x", wantErr: ErrInvalidPath},
		{name: "relative", c: u1, path: "x", wantErr: ErrInvalidPath},
		{name: "empty", c: u1, path: "", wantErr: ErrInvalidPath},
		{name: "snapshot name", c: u1, path: "/_test/u1/.snapshot", wantErr: ErrIllegalArgument},
		{name: "too long", c: u1, path: "/_test/u1/" + strings.Repeat("a", 256), wantErr: ErrComponentTooLong,
			wantMsg: "The maximum path component name limit of " + strings.Repeat("a", 256) + " in directory /_test/u1 is exceeded: limit=255 length=256"},
		{name: "max length ok", c: u1, path: "/_test/u1/" + strings.Repeat("a", 255), wantOps: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := fixture(t)
			before := dump(t, tr)
			next := tr.NextInodeID()
			ops, err := tr.PlanMkdirs(tc.c, tc.path, 0o750, tc.parents, 99)
			checkErr(t, err, tc.wantErr, tc.wantMsg)
			if dump(t, tr) != before {
				t.Fatal("plan mutated the tree")
			}
			if tc.wantErr != nil {
				return
			}
			if len(ops) != tc.wantOps {
				t.Fatalf("%d ops, want %d: %+v", len(ops), tc.wantOps, ops)
			}
			for i, o := range ops {
				m := o.(*op.Mkdir)
				if m.InodeID != next+uint64(i) || m.Perm.User != tc.c.User || m.Mtime != 99 {
					t.Fatalf("op %d: %+v", i, m)
				}
			}
			applyAll(t, tr, ops)
			for p, mode := range tc.checkMode {
				fi, err := tr.Stat(super, p)
				if err != nil || fi.Perm.Mode != mode || !fi.IsDir || fi.Perm.Group != "supergroup" {
					t.Fatalf("stat %s: %+v %v, want mode %o", p, fi, err, mode)
				}
			}
		})
	}
}

func TestErrorsMatchFS(t *testing.T) {
	tr := fixture(t)
	_, err := tr.Stat(u1, "/nope")
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, ErrNotFound) {
		t.Fatalf("%v", err)
	}
	_, err = tr.PlanMkdirs(u1, "/_test/u1/file", 0o755, false, 1)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("%v", err)
	}
	_, err = tr.PlanMkdirs(u2, "/_test/u1/x", 0o755, false, 1)
	if !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("%v", err)
	}
}

func TestMaxDirItemsAndQuota(t *testing.T) {
	cfg := testCfg()
	cfg.MaxDirItems = 2
	tr := New(cfg)
	mkdir(t, tr, super, "/a", 0o755)
	mkdir(t, tr, super, "/b", 0o755)
	_, err := tr.PlanMkdirs(super, "/c", 0o755, false, 1)
	checkErr(t, err, ErrMaxDirItems, "The directory item limit of / is exceeded: limit=2 items=2")

	tr = New(testCfg())
	mkdir(t, tr, super, "/q", 0o755)
	ops, err := tr.PlanSetQuota(super, "/q", 2, op.QuotaDontSet)
	must(t, tr, ops, err)
	mkdir(t, tr, super, "/q/a", 0o755)
	_, err = tr.PlanMkdirs(super, "/q/b", 0o755, false, 1)
	checkErr(t, err, ErrNSQuotaExceeded, "The NameSpace quota (directories and files) of directory /q is exceeded: quota=2 file count=3")
	_, err = tr.PlanCreate(super, "/q/a/f", 0o644, "c", "m", CreateFlags{Create: true}, false, 1, 1024, 1)
	checkErr(t, err, ErrNSQuotaExceeded, "")
	// Raising the quota lets it through; usage is kept exactly.
	ops, err = tr.PlanSetQuota(super, "/q", 10, 1000)
	must(t, tr, ops, err)
	create(t, tr, super, "/q/a/f", 0, false)
	u, err := tr.QuotaUsage(super, "/q")
	if err != nil || u != (QuotaUsage{FileAndDirectoryCount: 3, Quota: 10, SpaceConsumed: 0, SpaceQuota: 1000}) {
		t.Fatalf("%+v %v", u, err)
	}
	// Space: 1 block of preferred size 1024 × replication 3 is reserved while writing.
	ops, err = tr.PlanCreate(super, "/q/g", 0o644, "c", "m", CreateFlags{Create: true}, false, 3, 1024, 1)
	must(t, tr, ops, err)
	err = tr.VerifySpace("/q/g", 3*1024)
	checkErr(t, err, ErrDSQuotaExceeded, "The DiskSpace quota of /q is exceeded: quota = 1000 B = 1000 B but diskspace consumed = 3072 B = 3 KB")
	// Moving a subtree into /q is checked against its quota.
	mkdir(t, tr, super, "/big/x/y", 0o755)
	ops, err = tr.PlanSetQuota(super, "/q", 5, op.QuotaDontSet)
	must(t, tr, ops, err)
	_, err = tr.PlanRename2(super, "/big", "/q/big", false, 1)
	checkErr(t, err, ErrNSQuotaExceeded, "")
	_, _, err = tr.PlanRename(super, "/big", "/q", 1)
	checkErr(t, err, ErrNSQuotaExceeded, "")
	// Root keeps Hadoop's default namespace quota.
	s, err := tr.ContentSummary(super, "/")
	if err != nil || s.Quota != 1<<63-1 || s.SpaceQuota != -1 {
		t.Fatalf("%+v %v", s, err)
	}
}

func TestLong2String(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1 KB", 805312: "786.44 KB", 805306368: "768 MB", 201326592: "192 MB", 1048575: "1.00 MB",
	} {
		if got := long2String(n); got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
}

func TestPlanCreate(t *testing.T) {
	def := CreateFlags{Create: true}
	tests := []struct {
		name    string
		c       Caller
		path    string
		flags   CreateFlags
		parents bool
		client  string
		wantOps int
		wantErr error
		wantMsg string
	}{
		{name: "new", c: u1, path: "/_test/u1/new", flags: def, wantOps: 1},
		{name: "exists closed", c: u1, path: "/_test/u1/file", flags: def, wantErr: ErrExists, wantMsg: "/_test/u1/file for client host already exists"},
		{name: "open same client", c: u1, path: "/_test/u1/open", flags: def, client: "client-gohdfs1", wantErr: ErrAlreadyBeingCreated},
		{name: "open other client", c: u1, path: "/_test/u1/open", flags: def, client: "other", wantErr: ErrAlreadyBeingCreated},
		{name: "overwrite closed", c: u1, path: "/_test/u1/file", flags: CreateFlags{Create: true, Overwrite: true}, wantOps: 1},
		{name: "overwrite open", c: u1, path: "/_test/u1/open", flags: CreateFlags{Create: true, Overwrite: true}, wantOps: 1},
		{name: "over dir", c: u1, path: "/_test/u1/dir", flags: CreateFlags{Create: true, Overwrite: true}, wantErr: ErrIsDir, wantMsg: "/_test/u1/dir already exists as a directory"},
		{name: "parent missing", c: u1, path: "/_test/u1/nope/f", flags: def, wantErr: ErrNotFound},
		{name: "parents created", c: u1, path: "/_test/u1/n1/n2/f", flags: def, parents: true, wantOps: 3},
		{name: "parent is file", c: u1, path: "/_test/u1/file/f", flags: def, wantErr: ErrParentNotDir},
		{name: "no write", c: u2, path: "/_test/u1/f", flags: def, wantErr: ErrPermission},
		{name: "no traverse", c: u2, path: "/_test/private/g", flags: def, wantErr: ErrPermission},
		{name: "overwrite needs write on file", c: u2, path: "/_test/sticky/f1", flags: CreateFlags{Create: true, Overwrite: true}, wantErr: ErrPermission},
		{name: "no create flag", c: u1, path: "/_test/u1/new", flags: CreateFlags{Overwrite: true}, wantErr: ErrNotFound, wantMsg: "Can't overwrite non-existent /_test/u1/new"},
		{name: "root", c: super, path: "/", flags: def, wantErr: ErrExists},
		{name: "invalid", c: u1, path: "/_test/u1/a:b", flags: def, wantErr: ErrInvalidPath},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := fixture(t)
			client := tc.client
			if client == "" {
				client = "cl"
			}
			ops, err := tr.PlanCreate(tc.c, tc.path, 0o1644|0x8000, client, "host", tc.flags, tc.parents, 2, 4096, 77)
			checkErr(t, err, tc.wantErr, tc.wantMsg)
			if tc.wantErr != nil {
				return
			}
			if len(ops) != tc.wantOps {
				t.Fatalf("%d ops: %+v", len(ops), ops)
			}
			applyAll(t, tr, ops)
			fi, err := tr.Stat(tc.c, tc.path)
			if err != nil || fi.IsDir || !fi.UnderConstruction || fi.ClientName != client || fi.Perm.Mode != 0o1644 ||
				fi.Perm.User != tc.c.User || fi.Perm.Group != "supergroup" || fi.Replication != 2 || fi.BlockSize != 4096 || fi.Length != 0 || fi.Mtime != 77 {
				t.Fatalf("%+v %v", fi, err)
			}
			if _, _, ok := tr.FileByID(fi.ID); !ok {
				t.Fatal("not indexed")
			}
		})
	}
}

func TestPlanDelete(t *testing.T) {
	tests := []struct {
		name      string
		c         Caller
		path      string
		recursive bool
		wantOK    bool
		wantErr   error
		wantMsg   string
	}{
		{name: "file", c: u1, path: "/_test/u1/file", wantOK: true},
		{name: "open file", c: u1, path: "/_test/u1/open", wantOK: true},
		{name: "empty dir", c: u1, path: "/_test/u1/empty", wantOK: true},
		{name: "missing", c: u1, path: "/_test/u1/nope", wantOK: false},
		{name: "missing parent", c: u1, path: "/_test/nope/nope", wantOK: false},
		{name: "root", c: super, path: "/", recursive: true, wantOK: false},
		{name: "non-empty", c: u1, path: "/_test/u1/dir", wantErr: ErrNotEmpty, wantMsg: "`/_test/u1/dir is non empty': Directory is not empty"},
		{name: "recursive", c: u1, path: "/_test/u1/dir", recursive: true, wantOK: true},
		{name: "no write on parent", c: u2, path: "/_test/u1/file", wantErr: ErrPermission},
		{name: "sticky other user", c: u2, path: "/_test/sticky/f1", wantErr: ErrPermission},
		{name: "sticky owner", c: u1, path: "/_test/sticky/f1", wantOK: true},
		{name: "sticky super", c: super, path: "/_test/sticky/f1", wantOK: true},
		{name: "private subtree", c: u2, path: "/_test/private", recursive: true, wantErr: ErrPermission},
		{name: "through a file", c: u1, path: "/_test/u1/file/x", wantErr: ErrPermission},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := fixture(t)
			ok, ops, err := tr.PlanDelete(tc.c, tc.path, tc.recursive, 55)
			checkErr(t, err, tc.wantErr, tc.wantMsg)
			if ok != tc.wantOK || (ok != (len(ops) == 1)) {
				t.Fatalf("ok=%v ops=%v", ok, ops)
			}
			var eff Effects
			for _, o := range ops {
				if err := tr.ApplyEffects(o, &eff); err != nil {
					t.Fatal(err)
				}
			}
			if ok {
				if _, err := tr.Stat(super, tc.path); !errors.Is(err, ErrNotFound) {
					t.Fatalf("still there: %v", err)
				}
			}
			if tc.name == "file" && len(eff.FreedBlocks) != 2 {
				t.Fatalf("freed %+v", eff)
			}
			if tc.name == "open file" && (len(eff.RemovedUC) != 1 || tr.NumUnderConstruction() != 0) {
				t.Fatalf("uc %+v", eff)
			}
		})
	}
}

func TestDeleteSubtreePermission(t *testing.T) {
	tr := fixture(t)
	// A root-owned non-empty directory inside gohdfs1's tree blocks a recursive delete.
	mkdir(t, tr, super, "/_test/u1/dir/rootdir/x", 0o755)
	_, _, err := tr.PlanDelete(u1, "/_test/u1/dir", true, 1)
	checkErr(t, err, ErrPermission, `Permission denied: user=gohdfs1, access=ALL, inode="/_test/u1/dir/rootdir":root:supergroup:drwxr-xr-x`)
	// An empty one does not.
	ok, ops, err := tr.PlanDelete(super, "/_test/u1/dir/rootdir/x", false, 1)
	if !ok {
		t.Fatal(err)
	}
	must(t, tr, ops, err)
	ok, _, err = tr.PlanDelete(u1, "/_test/u1/dir", true, 1)
	if !ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
	// A root-owned directory holding only a file, two levels down, blocks
	// it too (a directory without subdirectories is checked, its files
	// are not visited).
	mkdir(t, tr, u1, "/_test/u1/dir/a", 0o755)
	mkdir(t, tr, super, "/_test/u1/dir/a/rootdir2", 0o755)
	ops, err = tr.PlanCreate(super, "/_test/u1/dir/a/rootdir2/f", 0o644, "c", "m", CreateFlags{Create: true}, false, 1, 1024, 1)
	must(t, tr, ops, err)
	_, _, err = tr.PlanDelete(u1, "/_test/u1/dir", true, 1)
	checkErr(t, err, ErrPermission, `Permission denied: user=gohdfs1, access=ALL, inode="/_test/u1/dir/a/rootdir2":root:supergroup:drwxr-xr-x`)
}

func TestPlanRename2(t *testing.T) {
	tests := []struct {
		name      string
		c         Caller
		src, dst  string
		overwrite bool
		wantErr   error
		wantMsg   string
	}{
		{name: "file", c: u1, src: "/_test/u1/file", dst: "/_test/u1/file2"},
		{name: "dir across", c: u1, src: "/_test/u1/dir", dst: "/_test/dir"},
		{name: "missing src", c: u1, src: "/_test/u1/nope", dst: "/_test/u1/x", wantErr: ErrNotFound, wantMsg: "rename source /_test/u1/nope is not found."},
		{name: "dst exists", c: u1, src: "/_test/u1/file", dst: "/_test/u1/open", wantErr: ErrExists, wantMsg: "rename destination /_test/u1/open already exists"},
		{name: "overwrite file", c: u1, src: "/_test/u1/file", dst: "/_test/u1/open", overwrite: true},
		{name: "overwrite empty dir", c: u1, src: "/_test/u1/dir", dst: "/_test/u1/empty", overwrite: true},
		{name: "overwrite non-empty dir", c: u1, src: "/_test/u1/empty", dst: "/_test/u1/dir", overwrite: true, wantErr: ErrRenameInvalid,
			wantMsg: "rename destination directory is not empty: /_test/u1/dir"},
		{name: "file onto dir", c: u1, src: "/_test/u1/file", dst: "/_test/u1/empty", overwrite: true, wantErr: ErrRenameInvalid,
			wantMsg: "Source /_test/u1/file and destination /_test/u1/empty must both be directories"},
		{name: "dir onto file", c: u1, src: "/_test/u1/empty", dst: "/_test/u1/file", overwrite: true, wantErr: ErrRenameInvalid},
		{name: "into itself", c: u1, src: "/_test/u1/dir", dst: "/_test/u1/dir/sub/x", wantErr: ErrRenameInvalid,
			wantMsg: "Rename destination /_test/u1/dir/sub/x is a directory or file under source /_test/u1/dir"},
		{name: "same", c: u1, src: "/_test/u1/file", dst: "/_test/u1/file", wantErr: ErrExists},
		{name: "dst parent missing", c: u1, src: "/_test/u1/file", dst: "/_test/u1/nope/x", wantErr: ErrNotFound,
			wantMsg: "rename destination parent /_test/u1/nope/x not found."},
		{name: "dst parent file", c: u1, src: "/_test/u1/file", dst: "/_test/u1/open/x", wantErr: ErrParentNotDir},
		{name: "root src", c: super, src: "/", dst: "/x", wantErr: ErrRenameInvalid},
		{name: "root dst", c: super, src: "/_test", dst: "/", wantErr: ErrRenameInvalid},
		{name: "no write src parent", c: u2, src: "/_test/u1/file", dst: "/_test/x", wantErr: ErrPermission},
		{name: "no write dst parent", c: u1, src: "/_test/u1/file", dst: "/x", wantErr: ErrPermission},
		{name: "dst traverse denied", c: u2, src: "/_test/sticky/f2", dst: "/_test/private/x", wantErr: ErrPermission},
		{name: "src traverse denied", c: u2, src: "/_test/private/f", dst: "/_test/x", wantErr: ErrPermission},
		{name: "sticky other", c: u2, src: "/_test/sticky/f1", dst: "/_test/sticky/g", wantErr: ErrPermission},
		{name: "sticky owner", c: u1, src: "/_test/sticky/f1", dst: "/_test/sticky/g"},
		{name: "invalid dst", c: u1, src: "/_test/u1/file", dst: "/_test/a:b", wantErr: ErrInvalidPath},
		{name: "snapshot dst", c: u1, src: "/_test/u1/file", dst: "/_test/u1/.snapshot", wantErr: ErrIllegalArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := fixture(t)
			ops, err := tr.PlanRename2(tc.c, tc.src, tc.dst, tc.overwrite, 66)
			checkErr(t, err, tc.wantErr, tc.wantMsg)
			if err != nil {
				return
			}
			before, _ := tr.Stat(super, tc.src)
			applyAll(t, tr, ops)
			after, err := tr.Stat(super, tc.dst)
			if err != nil || after.ID != before.ID || string(after.Name) != tc.dst[strings.LastIndexByte(tc.dst, '/')+1:] {
				t.Fatalf("%+v %v", after, err)
			}
			if _, err := tr.Stat(super, tc.src); !errors.Is(err, ErrNotFound) {
				t.Fatal("src still there")
			}
		})
	}
}

func TestPlanRenameOld(t *testing.T) {
	tests := []struct {
		name     string
		c        Caller
		src, dst string
		wantOK   bool
		wantDst  string
		wantErr  error
	}{
		{name: "file", c: u1, src: "/_test/u1/file", dst: "/_test/u1/g", wantOK: true, wantDst: "/_test/u1/g"},
		{name: "into dir", c: u1, src: "/_test/u1/file", dst: "/_test/u1/empty", wantOK: true, wantDst: "/_test/u1/empty/file"},
		{name: "into dir trailing slash", c: u1, src: "/_test/u1/file", dst: "/_test/u1/empty/", wantOK: true, wantDst: "/_test/u1/empty/file"},
		{name: "missing src", c: u1, src: "/_test/u1/nope", dst: "/_test/u1/g", wantOK: false},
		{name: "dst exists", c: u1, src: "/_test/u1/file", dst: "/_test/u1/open", wantOK: false},
		{name: "dst parent missing", c: u1, src: "/_test/u1/file", dst: "/_test/u1/nope/g", wantOK: false},
		{name: "into itself", c: u1, src: "/_test/u1/dir", dst: "/_test/u1/dir/sub", wantOK: false},
		{name: "onto itself", c: u1, src: "/_test/u1/file", dst: "/_test/u1/file", wantOK: true},
		{name: "into own parent", c: u1, src: "/_test/u1/file", dst: "/_test/u1", wantOK: true},
		{name: "root", c: super, src: "/", dst: "/x", wantOK: false},
		{name: "no permission", c: u2, src: "/_test/u1/file", dst: "/_test/g", wantErr: ErrPermission},
		{name: "dst under file", c: u1, src: "/_test/u1/file", dst: "/_test/u1/open/x", wantErr: ErrParentNotDir},
		{name: "invalid dst", c: u1, src: "/_test/u1/file", dst: "/_test/../x", wantErr: ErrRenameInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := fixture(t)
			ok, ops, err := tr.PlanRename(tc.c, tc.src, tc.dst, 5)
			checkErr(t, err, tc.wantErr, "")
			if ok != tc.wantOK {
				t.Fatalf("ok=%v err=%v", ok, err)
			}
			if tc.wantDst == "" {
				if len(ops) != 0 {
					t.Fatalf("ops %+v", ops)
				}
				return
			}
			if r := ops[0].(*op.RenameOld); r.Dst != tc.wantDst {
				t.Fatalf("dst %s", r.Dst)
			}
			applyAll(t, tr, ops)
			if _, err := tr.Stat(super, tc.wantDst); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestPlanAttributes(t *testing.T) {
	tr := fixture(t)
	// setPermission: owner or super.
	_, err := tr.PlanSetPermission(u2, "/_test/u1/file", 0o777)
	checkErr(t, err, ErrPermission, "Permission denied. user=gohdfs2 is not the owner of inode=/_test/u1/file")
	_, err = tr.PlanSetPermission(u1, "/_test/u1/nope", 0o777)
	checkErr(t, err, ErrNotFound, "File does not exist: /_test/u1/nope")
	ops, err := tr.PlanSetPermission(u1, "/_test/u1/file", 0x8000|0o1777)
	must(t, tr, ops, err)
	if fi, _ := tr.Stat(u1, "/_test/u1/file"); fi.Perm.Mode != 0o1777 {
		t.Fatalf("mode %o", fi.Perm.Mode)
	}
	ops, err = tr.PlanSetPermission(super, "/_test/u1/file", 0o777)
	must(t, tr, ops, err)

	// setOwner.
	_, err = tr.PlanSetOwner(u1, "/_test/u1/file", "gohdfs2", "")
	checkErr(t, err, ErrPermission, "User gohdfs1 is not a super user (non-super user cannot change owner).")
	_, err = tr.PlanSetOwner(u1, "/_test/u1/file", "", "g2")
	checkErr(t, err, ErrPermission, "User gohdfs1 does not belong to g2")
	_, err = tr.PlanSetOwner(u2, "/_test/u1/file", "", "g2")
	checkErr(t, err, ErrPermission, "")
	_, err = tr.PlanSetOwner(super, "/_test/nope", "x", "")
	checkErr(t, err, ErrNotFound, "")
	ops, err = tr.PlanSetOwner(u1, "/_test/u1/file", "gohdfs1", "g1")
	must(t, tr, ops, err)
	ops, err = tr.PlanSetOwner(super, "/_test/u1/file", "gohdfs2", "")
	must(t, tr, ops, err)
	if fi, _ := tr.Stat(u1, "/_test/u1/file"); fi.Perm.User != "gohdfs2" || fi.Perm.Group != "g1" {
		t.Fatalf("%+v", fi.Perm)
	}

	// setTimes: WRITE on the inode.
	_, err = tr.PlanSetTimes(u2, "/_test/u1/dir", 1, 2)
	checkErr(t, err, ErrPermission, "")
	_, err = tr.PlanSetTimes(u1, "/_test/u1/nope", 1, 2)
	checkErr(t, err, ErrNotFound, "File/Directory /_test/u1/nope does not exist.")
	ops, err = tr.PlanSetTimes(u1, "/_test/u1/dir", 631152000000, -1)
	must(t, tr, ops, err)
	if fi, _ := tr.Stat(u1, "/_test/u1/dir"); fi.Mtime != 631152000000 || fi.Atime != 0 {
		t.Fatalf("%+v", fi)
	}

	// setReplication: files only.
	ok, ops, err := tr.PlanSetReplication(u1, "/_test/u1/dir", 2)
	if ok || ops != nil || err != nil {
		t.Fatal("dir")
	}
	ok, _, err = tr.PlanSetReplication(u1, "/_test/u1/nope", 2)
	if ok || err != nil {
		t.Fatal("missing")
	}
	_, _, err = tr.PlanSetReplication(u2, "/_test/u1/dir/sub/f", 2)
	checkErr(t, err, ErrPermission, "")
	ok, ops, err = tr.PlanSetReplication(u1, "/_test/u1/dir/sub/f", 5)
	if !ok {
		t.Fatal(err)
	}
	must(t, tr, ops, err)

	// setQuota: super only, directories only.
	_, err = tr.PlanSetQuota(u1, "/_test/u1", 10, 10)
	checkErr(t, err, ErrPermission, "Access denied for user gohdfs1. Superuser privilege is required")
	_, err = tr.PlanSetQuota(super, "/_test/u1/file", 10, 10)
	checkErr(t, err, ErrNotDir, "`/_test/u1/file': Is not a directory")
	_, err = tr.PlanSetQuota(super, "/_test/nope", 10, 10)
	checkErr(t, err, ErrNotFound, "Directory does not exist: /_test/nope")
	_, err = tr.PlanSetQuota(super, "/", op.QuotaReset, op.QuotaDontSet)
	checkErr(t, err, ErrIllegalArgument, "Cannot clear namespace quota on root.")
	_, err = tr.PlanSetQuota(super, "/_test", -5, 1)
	checkErr(t, err, ErrIllegalArgument, "")
	ops, err = tr.PlanSetQuota(super, "/", 100000, op.QuotaDontSet)
	must(t, tr, ops, err)
	ops, err = tr.PlanSetQuota(super, "/_test/u1", op.QuotaDontSet, 1<<40)
	must(t, tr, ops, err)
	s, err := tr.ContentSummary(u1, "/_test/u1")
	// u1: dirs u1, dir, sub, empty = 4; files file(200 bytes), open, f = 3.
	want := Summary{Length: 200, FileCount: 3, DirectoryCount: 4, Quota: -1, SpaceConsumed: 200 * 3, SpaceQuota: 1 << 40}
	if err != nil || s != want {
		t.Fatalf("%+v %v", s, err)
	}
	q, err := tr.QuotaUsage(u1, "/_test/u1")
	if err != nil || q != (QuotaUsage{FileAndDirectoryCount: 7, Quota: -1, SpaceConsumed: 600, SpaceQuota: 1 << 40}) {
		t.Fatalf("%+v %v", q, err)
	}
	ops, err = tr.PlanSetQuota(super, "/_test/u1", op.QuotaDontSet, op.QuotaReset)
	must(t, tr, ops, err)
	if s, _ := tr.ContentSummary(u1, "/_test/u1"); s.SpaceQuota != -1 || s.Quota != -1 {
		t.Fatalf("%+v", s)
	}
	if fi, _ := tr.ContentSummary(u1, "/_test/u1/file"); fi.FileCount != 1 || fi.DirectoryCount != 0 || fi.Length != 200 {
		t.Fatalf("%+v", fi)
	}
	_, err = tr.ContentSummary(u2, "/_test/private/f")
	checkErr(t, err, ErrPermission, "")
}

func TestPermissionsDisabled(t *testing.T) {
	cfg := testCfg()
	cfg.PermissionsEnabled = false
	tr := New(cfg)
	mkdir(t, tr, super, "/p", 0o700)
	mkdir(t, tr, u2, "/p/x", 0o700) // no checks
	_, err := tr.PlanSetOwner(u2, "/p", "someone", "")
	checkErr(t, err, ErrPermission, "")
	ops, err := tr.PlanSetPermission(u2, "/p", 0o777)
	must(t, tr, ops, err)
}

func TestSuperGroup(t *testing.T) {
	tr := fixture(t)
	admin := Caller{User: "admin", Groups: []string{"supergroup"}}
	if _, err := tr.Stat(admin, "/_test/private/f"); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.PlanSetQuota(admin, "/_test", 5, 5); err != nil {
		t.Fatal(err)
	}
}

func TestPlanConcat(t *testing.T) {
	setup := func(t *testing.T) *Tree {
		tr := fixture(t)
		create(t, tr, u1, "/_test/u1/s1", 1, false)
		create(t, tr, u1, "/_test/u1/s2", 2, false)
		create(t, tr, u1, "/_test/u1/e", 0, false)
		create(t, tr, u1, "/_test/u1/dir/o", 1, false)
		return tr
	}
	tests := []struct {
		name    string
		c       Caller
		target  string
		srcs    []string
		wantErr error
	}{
		{name: "ok", c: u1, target: "/_test/u1/file", srcs: []string{"/_test/u1/s1", "/_test/u1/s2"}},
		{name: "no srcs", c: u1, target: "/_test/u1/file", wantErr: ErrIllegalArgument},
		{name: "missing target", c: u1, target: "/_test/u1/nope", srcs: []string{"/_test/u1/s1"}, wantErr: ErrNotFound},
		{name: "target dir", c: u1, target: "/_test/u1/dir", srcs: []string{"/_test/u1/s1"}, wantErr: ErrNotFile},
		{name: "target open", c: u1, target: "/_test/u1/open", srcs: []string{"/_test/u1/s1"}, wantErr: ErrIllegalArgument},
		{name: "src open", c: u1, target: "/_test/u1/file", srcs: []string{"/_test/u1/open"}, wantErr: ErrIllegalArgument},
		{name: "src empty", c: u1, target: "/_test/u1/file", srcs: []string{"/_test/u1/e"}, wantErr: ErrIllegalArgument},
		{name: "src other dir", c: u1, target: "/_test/u1/file", srcs: []string{"/_test/u1/dir/o"}, wantErr: ErrIllegalArgument},
		{name: "src is target", c: u1, target: "/_test/u1/file", srcs: []string{"/_test/u1/file"}, wantErr: ErrIllegalArgument},
		{name: "duplicate", c: u1, target: "/_test/u1/file", srcs: []string{"/_test/u1/s1", "/_test/u1/s1"}, wantErr: ErrIllegalArgument},
		{name: "missing src", c: u1, target: "/_test/u1/file", srcs: []string{"/_test/u1/zz"}, wantErr: ErrNotFound},
		{name: "no permission", c: u2, target: "/_test/u1/file", srcs: []string{"/_test/u1/s1"}, wantErr: ErrPermission},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := setup(t)
			ops, err := tr.PlanConcat(tc.c, tc.target, tc.srcs, 123)
			checkErr(t, err, tc.wantErr, "")
			if err != nil {
				return
			}
			applyAll(t, tr, ops)
			b, _ := tr.Blocks(tc.target)
			if len(b) != 5 {
				t.Fatalf("blocks %+v", b)
			}
			for _, s := range tc.srcs {
				if _, err := tr.Stat(super, s); !errors.Is(err, ErrNotFound) {
					t.Fatal("src remains")
				}
			}
		})
	}
}

func TestPlanComplete(t *testing.T) {
	tr := fixture(t)
	fi, _ := tr.Stat(u1, "/_test/u1/open")
	// Wrong holder.
	_, _, err := tr.PlanComplete(u1, "/_test/u1/open", "someone", fi.ID, nil, 1)
	checkErr(t, err, ErrLeaseMismatch, "")
	// Closed file, not a retry.
	_, _, err = tr.PlanComplete(u1, "/_test/u1/file", "client-gohdfs1", 0, &op.Block{ID: 1}, 1)
	checkErr(t, err, ErrNotUnderConstruction, "")
	// Closed file, retry of the same last block.
	b, _ := tr.Blocks("/_test/u1/file")
	ok, ops, err := tr.PlanComplete(u1, "/_test/u1/file", "client-gohdfs1", 0, &b[1], 1)
	if !ok || ops != nil || err != nil {
		t.Fatalf("retry: %v %v %v", ok, ops, err)
	}
	// Missing.
	_, _, err = tr.PlanComplete(u1, "/_test/u1/nope", "x", 0, nil, 1)
	checkErr(t, err, ErrNotFound, "")
	// Directory.
	_, _, err = tr.PlanComplete(u1, "/_test/u1/dir", "x", 0, nil, 1)
	checkErr(t, err, ErrLeaseMismatch, "")
	// A block for a file with none.
	_, _, err = tr.PlanComplete(u1, "/_test/u1/open", "client-gohdfs1", fi.ID, &op.Block{ID: 5}, 1)
	checkErr(t, err, ErrBlockMismatch, "")
	// Found by id after a rename, even with a stale path.
	ops, err = tr.PlanRename2(u1, "/_test/u1/open", "/_test/u1/moved", false, 2)
	must(t, tr, ops, err)
	ok, ops, err = tr.PlanComplete(u1, "/_test/u1/open", "client-gohdfs1", fi.ID, nil, 9)
	if !ok {
		t.Fatal(err)
	}
	if ops[0].(*op.Close).Path != "/_test/u1/moved" {
		t.Fatalf("%+v", ops[0])
	}
	must(t, tr, ops, err)
	if got, _ := tr.Stat(u1, "/_test/u1/moved"); got.UnderConstruction || got.Mtime != 9 {
		t.Fatalf("%+v", got)
	}
	// With blocks: GS and id must match; the length is the client's.
	create(t, tr, u1, "/_test/u1/w", 2, true)
	b, _ = tr.Blocks("/_test/u1/w")
	last := b[1]
	bad := last
	bad.GenStamp++
	_, _, err = tr.PlanComplete(u1, "/_test/u1/w", "client-gohdfs1", 0, &bad, 1)
	checkErr(t, err, ErrBlockMismatch, "")
	_, _, err = tr.PlanComplete(u1, "/_test/u1/w", "client-gohdfs1", 0, nil, 1)
	checkErr(t, err, ErrBlockMismatch, "")
	last.NumBytes = 42
	ok, ops, err = tr.PlanComplete(u1, "/_test/u1/w", "client-gohdfs1", 0, &last, 1)
	if !ok {
		t.Fatal(err)
	}
	must(t, tr, ops, err)
	if got, _ := tr.Stat(u1, "/_test/u1/w"); got.Length != 142 || got.UnderConstruction {
		t.Fatalf("%+v", got)
	}
}

func TestPlanAppend(t *testing.T) {
	tr := fixture(t)
	_, err := tr.PlanAppend(u1, "/_test/u1/open", "c2", "m", false)
	checkErr(t, err, ErrAlreadyBeingCreated, "")
	_, err = tr.PlanAppend(u1, "/_test/u1/dir", "c2", "m", false)
	checkErr(t, err, ErrNotFound, "Path is not a file: /_test/u1/dir")
	_, err = tr.PlanAppend(u2, "/_test/u1/file", "c2", "m", false)
	checkErr(t, err, ErrPermission, "")
	ops, err := tr.PlanAppend(u1, "/_test/u1/file", "c2", "m", false)
	must(t, tr, ops, err)
	if fi, _ := tr.Stat(u1, "/_test/u1/file"); !fi.UnderConstruction || fi.ClientName != "c2" {
		t.Fatalf("%+v", fi)
	}
}

func TestStatAndList(t *testing.T) {
	tr := fixture(t)
	// The 0700 directory itself can be stat'ed, not what is inside.
	if _, err := tr.Stat(u2, "/_test/private"); err != nil {
		t.Fatal(err)
	}
	_, err := tr.Stat(u2, "/_test/private/f")
	checkErr(t, err, ErrPermission, "")
	_, _, err = tr.List(u2, "/_test/private", nil, 0)
	checkErr(t, err, ErrPermission, `Permission denied: user=gohdfs2, access=READ_EXECUTE, inode="/_test/private":gohdfs1:supergroup:drwx------`)
	_, _, err = tr.List(u1, "/_test/nope", nil, 0)
	checkErr(t, err, ErrNotFound, "")
	// Stat through a file.
	_, err = tr.Stat(u1, "/_test/u1/file/x")
	checkErr(t, err, ErrPermission, "/_test/u1/file (is not a directory)")

	fi, err := tr.Stat(u1, "/_test/u1/file/")
	if err != nil || string(fi.Name) != "file" || fi.Length != 200 || fi.IsDir {
		t.Fatalf("%+v %v", fi, err)
	}
	root, _ := tr.Stat(u1, "/")
	if root.ID != RootInodeID || len(root.Name) != 0 || root.Perm != (op.Perm{User: "root", Group: "supergroup", Mode: 0o755}) {
		t.Fatalf("%+v", root)
	}

	// Listing a file gives the file.
	l, rem, err := tr.List(u1, "/_test/u1/file", nil, 10)
	if err != nil || len(l) != 1 || rem != 0 || string(l[0].Name) != "file" {
		t.Fatalf("%+v %d %v", l, rem, err)
	}

	mkdir(t, tr, u1, "/_test/many", 0o755)
	for _, n := range []string{"b", "a", "c", "e", "d", "B"} {
		create(t, tr, u1, "/_test/many/"+n, 0, false)
	}
	var got []string
	after := []byte(nil)
	pages := 0
	for {
		l, rem, err := tr.List(u1, "/_test/many", after, 4)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, e := range l {
			got = append(got, string(e.Name))
		}
		if rem == 0 {
			break
		}
		if rem != 6-len(got) {
			t.Fatalf("remaining %d after %v", rem, got)
		}
		after = l[len(l)-1].Name
	}
	if strings.Join(got, ",") != "B,a,b,c,d,e" || pages != 2 {
		t.Fatalf("%v in %d pages", got, pages)
	}
	l, rem, _ = tr.List(u1, "/_test/many", []byte("bb"), 2)
	if len(l) != 2 || string(l[0].Name) != "c" || rem != 1 {
		t.Fatalf("%+v %d", l, rem)
	}
	l, rem, _ = tr.List(u1, "/_test/many", []byte("z"), 2)
	if len(l) != 0 || rem != 0 {
		t.Fatalf("%+v %d", l, rem)
	}
	if err := tr.CheckAccess(u2, "/_test/private", Read); !errors.Is(err, ErrPermission) {
		t.Fatal(err)
	}
}

func TestPlanAccess(t *testing.T) {
	tr := fixture(t)
	if o := tr.PlanAccess("/_test/u1/file", 20+3600000); o != nil {
		t.Fatalf("within precision: %+v", o)
	}
	o := tr.PlanAccess("/_test/u1/file", 20+3600001)
	if o == nil {
		t.Fatal("no update")
	}
	applyAll(t, tr, []op.Op{o})
	if fi, _ := tr.Stat(u1, "/_test/u1/file"); fi.Atime != 20+3600001 || fi.Mtime != 30 {
		t.Fatalf("%+v", fi)
	}
	if tr.PlanAccess("/_test/u1/dir", 1<<50) != nil || tr.PlanAccess("/nope", 1<<50) != nil {
		t.Fatal("dir or missing")
	}
	cfg := testCfg()
	cfg.AccessTimePrecision = 0
	tr2 := New(cfg)
	if _, err := tr2.PlanSetTimes(super, "/", 1, 1); !errors.Is(err, ErrIO) {
		t.Fatal(err)
	}
}

func TestModeString(t *testing.T) {
	for m, want := range map[uint16]string{0o755: "rwxr-xr-x", 0o1777: "rwxrwxrwt", 0o1776: "rwxrwxrwT", 0: "---------", 0o640: "rw-r-----"} {
		if got := ModeString(m); got != want {
			t.Errorf("%o: %s want %s", m, got, want)
		}
	}
}
