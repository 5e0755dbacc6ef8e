package cli

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// localOwner is the owner and group names of a local file, as ls shows
// them.
func localOwner(t *testing.T, p string) (owner, group string) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	owner, group = strconv.Itoa(int(st.Uid)), strconv.Itoa(int(st.Gid))
	if u, err := user.LookupId(owner); err == nil {
		owner = u.Username
	}
	if g, err := user.LookupGroupId(group); err == nil {
		group = g.Name
	}
	return owner, group
}

// TestShellLocalFileSystem: every command on file: paths under a temporary
// directory, through the local file system, with the output Hadoop's shell
// prints for the same command on HDFS paths; mixed local and HDFS copies;
// and the errors.
func TestShellLocalFileSystem(t *testing.T) {
	r := newShellRig(t)
	root := t.TempDir()
	u := "file:" + root // file:/tmp/.../NNN
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	stamp := func(names ...string) {
		t.Helper()
		for _, n := range names {
			if err := os.Chtimes(filepath.Join(root, n), when, when); err != nil {
				t.Fatal(err)
			}
		}
	}
	date := when.Format("2006-01-02 15:04")
	owner, group := localOwner(t, root)
	dirSize := func(name string) int64 {
		fi, err := os.Stat(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	// want is shellRig.want that goes on after a mismatch.
	want := func(code int, stdout, stderr string, args ...string) {
		t.Helper()
		out, errOut, c := r.run(t, "", args[0], args[1:]...)
		if c != code || out != stdout || errOut != stderr {
			t.Errorf("hdfs %v:\n got exit %d stdout %q stderr %q\nwant exit %d stdout %q stderr %q", args, c, out, errOut, code, stdout, stderr)
		}
	}
	// One ls line: Hadoop's format with the replication column 3 wide
	// and the size column at least 10.
	lsLine := func(perm, repl string, size int64, p string) string {
		return fmt.Sprintf("%s %3s %s %s %10d %s %s\n", perm, repl, owner, group, size, date, p)
	}

	// Creating: -mkdir, -mkdir -p, -touchz, -appendToFile.
	want(0, "", "", "dfs", "-mkdir", "-p", u+"/d/e")
	want(1, "", "mkdir: `"+u+"/d': File exists\n", "dfs", "-mkdir", u+"/d")
	want(1, "", "mkdir: `mkdir failed for path: "+u+"/x/y. Item parent path not found: "+u+"/x.': No such file or directory\n", "dfs", "-mkdir", u+"/x/y")
	want(0, "", "", "dfs", "-touchz", u+"/empty")
	write("a", "alpha\n")
	if _, _, code := r.run(t, "beta\n", "dfs", "-appendToFile", "-", u+"/a"); code != 0 {
		t.Fatalf("-appendToFile: exit %d", code)
	}
	write("d/e/f", "0123456789")
	stamp("a", "d", "d/e", "d/e/f", "empty")

	// Reading: -cat (with a glob), -head, -tail, -checksum.
	want(0, "alpha\nbeta\n", "", "dfs", "-cat", u+"/a")
	want(0, "alpha\nbeta\n0123456789", "", "dfs", "-cat", u+"/{a,empty}", u+"/d/*/f")
	want(0, "alpha\nbeta\n", "", "dfs", "-head", u+"/a")
	want(0, "0123456789", "", "dfs", "-tail", "file://"+root+"/d/e/f")
	want(0, u+"/a\tNONE\t\n", "", "dfs", "-checksum", u+"/a")

	// Looking: -ls, -ls -R, -ls -d, -du, -du -s, -count, -stat, -test,
	// -find, -df.
	want(0, "Found 3 items\n"+
		lsLine("-rw-r--r--", "1", 11, u+"/a")+
		lsLine("drwxr-xr-x", "-", dirSize("d"), u+"/d")+
		lsLine("-rw-r--r--", "1", 0, u+"/empty"), "", "dfs", "-ls", u)
	want(0, lsLine("drwxr-xr-x", "-", dirSize("d/e"), u+"/d/e")+
		lsLine("-rw-r--r--", "1", 10, u+"/d/e/f"), "", "dfs", "-ls", "-R", u+"/d")
	want(0, lsLine("drwxr-xr-x", "-", dirSize("d"), u+"/d"), "", "dfs", "-ls", "-d", u+"/d")
	want(0, fmt.Sprintf("-rw-r--r--   1  %s %s %s %10d %s %s\n", "Replicated", owner, group, 11, date, u+"/a"), "", "dfs", "-ls", "-e", u+"/a")
	want(0, u+"/a\n"+u+"/d/e\n"+u+"/empty\n", "", "dfs", "-ls", "-C", u+"/*")
	want(0, "11  11  "+u+"/a\n10  10  "+u+"/d\n0   0   "+u+"/empty\n", "", "dfs", "-du", u)
	want(0, "21  21  "+u+"\n", "", "dfs", "-du", "-s", u)
	want(0, fmt.Sprintf("%12d %12d %18d %s\n", 3, 3, 21, u), "", "dfs", "-count", u)
	want(0, "a 11 regular file 644 1 33554432 "+owner+":"+group+" "+when.UTC().Format("2006-01-02 15:04:05")+"\n", "",
		"dfs", "-stat", "%n %b %F %a %r %o %u:%g %y", u+"/a")
	want(0, "directory\n", "", "dfs", "-stat", "%F", u+"/d")
	want(0, "", "", "dfs", "-test", "-e", u+"/a")
	want(0, "", "", "dfs", "-test", "-d", u+"/d")
	want(0, "", "", "dfs", "-test", "-z", u+"/empty")
	want(0, "", "", "dfs", "-test", "-w", u+"/a")
	want(1, "", "", "dfs", "-test", "-e", u+"/nope")
	want(1, "", "", "dfs", "-test", "-f", u+"/d")
	want(0, u+"/d/e/f\n", "", "dfs", "-find", u, "-name", "f")
	df, _, code := r.run(t, "", "dfs", "-df", u)
	if lines := strings.Split(df, "\n"); code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "Filesystem ") || !strings.HasPrefix(lines[1], "file:/// ") {
		t.Errorf("-df: exit %d\n%s", code, df)
	}

	// Changing: -chmod, -chmod -R, -chown to oneself, -touch, -truncate,
	// -mv, -cp, -getmerge, -setrep (a no-op, as Hadoop's local file
	// system does).
	want(0, "", "", "dfs", "-chmod", "600", u+"/a")
	want(0, "", "", "dfs", "-chmod", "-R", "go-rx", u+"/d")
	want(0, "600\n700\n600\n", "", "dfs", "-stat", "%a", u+"/a", u+"/d/e", u+"/d/e/f")
	want(0, "", "", "dfs", "-chown", owner, u+"/a")
	// A name the system does not know fails as the chown tool Hadoop's
	// local file system runs says.
	want(1, "", "chown: changing ownership of '"+u+"/a': chown: invalid user: 'no-such-user-x'\n", "dfs", "-chown", "no-such-user-x", u+"/a")
	want(0, "", "", "dfs", "-touch", "-m", "-t", "20250607:080910", u+"/empty")
	want(0, "1749283750000\n", "", "dfs", "-stat", "%Y", u+"/empty")
	want(0, "", "", "dfs", "-cp", u+"/a", u+"/b")
	want(0, "Truncated "+u+"/b to length: 2\n", "", "dfs", "-truncate", "2", u+"/b")
	want(0, "al", "", "dfs", "-cat", u+"/b")
	want(1, "", "truncate: Cannot truncate to a larger file size. Current size: 2, truncate size: 5.\n", "dfs", "-truncate", "5", u+"/b")
	want(0, "", "", "dfs", "-mv", u+"/b", u+"/c")
	want(0, "", "", "dfs", "-test", "-e", u+"/c")
	want(1, "", "", "dfs", "-test", "-e", u+"/b")
	want(0, "", "", "dfs", "-getmerge", u+"/d/e", u+"/merged")
	want(0, "0123456789", "", "dfs", "-cat", u+"/merged")
	want(0, "Replication 3 set: "+u+"/c\n", "", "dfs", "-setrep", "3", u+"/c")

	// Between the file systems: -cp both ways, hdfs:// with and without
	// an authority; -mv across them is refused as Hadoop refuses it.
	want(0, "", "", "dfs", "-cp", u+"/a", "hdfs:///h")
	want(0, "", "", "dfs", "-cp", r.uri+"/h", u+"/back")
	want(0, "alpha\nbeta\n", "", "dfs", "-cat", u+"/back")
	want(0, "alpha\nbeta\nalpha\nbeta\n", "", "dfs", "-cat", "hdfs:///h", u+"/back")
	want(0, "", "", "dfs", "-mkdir", u+"/both", "/both")
	want(0, "", "", "dfs", "-cp", u+"/a", "hdfs:///h", u+"/both")
	want(0, "", "", "dfs", "-cp", u+"/a", "hdfs:///h", "/both")
	want(0, u+"/both/a\n"+u+"/both/h\n", "", "dfs", "-ls", "-C", "-d", u+"/both/*")
	want(0, "/both/a\n/both/h\n", "", "dfs", "-ls", "-C", "/both")
	want(1, "", "mv: `"+u+"/c': Does not match target filesystem\n", "dfs", "-mv", u+"/c", "/z")

	// Deleting: local deletes never use the trash.
	want(0, "Deleted "+u+"/d\n", "", "dfs", "-D", "fs.trash.interval=10", "-rm", "-r", u+"/d")
	want(0, "Deleted "+u+"/c\n", "", "dfs", "-rm", u+"/c")
	if _, err := os.Stat(filepath.Join(root, "d")); !os.IsNotExist(err) {
		t.Errorf("d still there: %v", err)
	}

	// A backslash makes a wildcard literal; -rm and -rmdir refuse what
	// they must.
	want(0, "", "", "dfs", "-touchz", u+`/x\*y`)
	want(0, u+"/x*y\n", "", "dfs", "-ls", "-C", u+`/x\*y`)
	want(0, "", "", "dfs", "-mkdir", u+"/full", u+"/full/f")
	want(1, "", "rm: `"+u+"/full': Is a directory\n", "dfs", "-rm", u+"/full")
	want(1, "", "rmdir: `"+u+"/full': Directory is not empty\n", "dfs", "-rmdir", u+"/full")
	want(0, "", "", "dfs", "-rmdir", u+"/full/f")

	// Errors name the path as typed.
	want(1, "", "cat: `"+u+"/x': No such file or directory\n", "dfs", "-cat", u+"/x")
	want(1, "", "ls: `"+u+"/x': No such file or directory\n", "dfs", "-ls", u+"/x")
	want(1, "", "rm: `"+u+"/x': No such file or directory\n", "dfs", "-rm", u+"/x")
	want(1, "", "cat: `"+u+"/nothing*': No such file or directory\n", "dfs", "-cat", u+"/nothing*")
	want(1, "", "ls: Wrong FS: file://elsewhere/x, expected: file:///\n", "dfs", "-ls", "file://elsewhere/x")
	// -getfacl shows the permission bits of a file system without ACLs,
	// as Hadoop's does; changing ACLs there fails.
	want(0, "# file: "+u+"/a\n# owner: "+owner+"\n# group: "+group+"\nuser::rw-\ngroup::---\nother::---\n\n", "", "dfs", "-getfacl", u+"/a")
	want(1, "", "setfacl: RawLocalFileSystem doesn't support modifyAclEntries\n", "dfs", "-setfacl", "-m", "user:nobody:rwx", u+"/a")
}

// TestShellLocalDefaultFS: with fs.defaultFS file:/// (Hadoop's default,
// and what -fs file:/// sets) plain paths are local ones and no cluster is
// needed; an hdfs://HOST:PORT path reaches that cluster.
func TestShellLocalDefaultFS(t *testing.T) {
	r := newShellRig(t)
	r.put(t, "/h", "from hdfs\n")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	for _, tc := range []struct {
		args           []string
		stdout, stderr string
		code           int
	}{
		{args: []string{"dfs", "-cat", root + "/a"}, stdout: "alpha\n"},
		{args: []string{"dfs", "-fs", "file:///", "-cat", "a"}, stdout: "alpha\n"},
		{args: []string{"dfs", "-mkdir", "d"}},
		{args: []string{"dfs", "-cp", "a", "file:" + root + "/d/b"}},
		{args: []string{"dfs", "-ls", "-C", "-R"}, stdout: "a\nd\nd/b\n"},
		{args: []string{"dfs", "-ls", "-C", "d/*"}, stdout: "d/b\n"},
		{args: []string{"dfs", "-count", root}, stdout: fmt.Sprintf("%12d %12d %18d %s\n", 2, 2, 12, root)},
		{args: []string{"dfs", "-cp", r.uri + "/h", "a", "d"}},
		{args: []string{"dfs", "-cat", "d/h", r.uri + "/h"}, stdout: "from hdfs\nfrom hdfs\n"},
		{args: []string{"dfs", "-put", "a", r.uri + "/up"}},
		{args: []string{"dfs", "-mv", r.uri + "/up", r.uri + "/up2"}},
		{args: []string{"dfs", "-ls", "-C", r.uri + "/up*"}, stdout: r.uri + "/up2\n"},
		{args: []string{"dfs", "-D", "fs.trash.interval=10", "-rm", r.uri + "/up2"},
			stdout: "Moved: '" + r.uri + "/up2' to trash at: " + r.uri + "/user/" + r.user + "/.Trash/Current\n"},
		{args: []string{"dfs", "-rm", "-r", "d"}, stdout: "Deleted d\n"},
		{args: []string{"dfs", "-cat", "d/b"}, stderr: "cat: `d/b': No such file or directory\n", code: 1},
		{args: []string{"dfs", "-ls", "hdfs:///x"}, stderr: "ls: Incomplete HDFS URI, no host: hdfs:///x\n", code: 1},
	} {
		out, errOut, code := run(t, nil, tc.args...)
		if out != tc.stdout || errOut != tc.stderr || code != tc.code {
			t.Errorf("hdfs %v:\n got exit %d stdout %q stderr %q\nwant exit %d stdout %q stderr %q", tc.args, code, out, errOut, tc.code, tc.stdout, tc.stderr)
		}
	}
}

// TestShellRPCAddressStillNamesTheCluster: with fs.defaultFS left at its
// default but dfs.namenode.rpc-address set, plain paths stay on the
// cluster; -fs file:/// makes them local.
func TestShellRPCAddressStillNamesTheCluster(t *testing.T) {
	r := newShellRig(t)
	r.put(t, "/only-in-hdfs", "x")
	addr := strings.TrimPrefix(r.uri, "hdfs://")
	out, errOut, code := run(t, nil, "dfs", "-D", "dfs.namenode.rpc-address="+addr, "-ls", "-C", "/only-in-hdfs")
	if code != 0 || out != "/only-in-hdfs\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = run(t, nil, "dfs", "-D", "dfs.namenode.rpc-address="+addr, "-fs", "file:///", "-ls", "-C", "/only-in-hdfs")
	if code != 1 || out != "" || errOut != "ls: `/only-in-hdfs': No such file or directory\n" {
		t.Errorf("-fs file:///: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
