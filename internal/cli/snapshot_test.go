package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
)

// TestSnapshottableDirCommands: dfsadmin -allowSnapshot/-disallowSnapshot
// and lsSnapshottableDir against a real NameNode.
func TestSnapshottableDirCommands(t *testing.T) {
	nn := nntest.New(t)
	fs := "hdfs://" + nn.Addr
	if out, errOut, code := run(t, nil, "dfs", "-fs", fs, "-mkdir", "-p", "/s/a", "/t"); code != 0 {
		t.Fatalf("mkdir: %q %q", out, errOut)
	}
	for _, tc := range []struct {
		args           []string
		stdout, stderr string
		code           int
	}{
		{[]string{"dfsadmin", "-fs", fs, "-allowSnapshot", "/s"}, "Allowing snapshot on /s succeeded\n", "", 0},
		{[]string{"dfsadmin", "-fs", fs, "-allowSnapshot", "/t"}, "Allowing snapshot on /t succeeded\n", "", 0},
		{[]string{"dfsadmin", "-fs", fs, "-allowSnapshot", "/s/a"}, "",
			"allowSnapshot: Nested snapshottable directories not allowed: path=/s/a, the ancestor /s is already a snapshottable directory.\n", 255},
		{[]string{"dfsadmin", "-fs", fs, "-disallowSnapshot", "/t"}, "Disallowing snapshot on /t succeeded\n", "", 0},
		{[]string{"dfsadmin", "-fs", fs, "-disallowSnapshot", "/t"}, "", "disallowSnapshot: Directory is not a snapshottable directory: /t\n", 255},
		{[]string{"dfsadmin", "-fs", fs, "-allowSnapshot", "/nope"}, "", "allowSnapshot: Directory does not exist: /nope\n", 255},
	} {
		out, errOut, code := run(t, nil, tc.args...)
		if out != tc.stdout || errOut != tc.stderr || code != tc.code {
			t.Errorf("%v: got %q %q %d, want %q %q %d", tc.args, out, errOut, code, tc.stdout, tc.stderr, tc.code)
		}
	}
	out, errOut, code := run(t, nil, "lsSnapshottableDir", "-fs", fs)
	re := regexp.MustCompile(`^drwxr-xr-x 0 \S+ supergroup 0 \d{4}-\d\d-\d\d \d\d:\d\d 0 65536 /s\n$`)
	if code != 0 || !re.MatchString(out) {
		t.Fatalf("lsSnapshottableDir: %d %q %q", code, out, errOut)
	}
}

// TestSnapshotCommands: hdfs dfs -createSnapshot, -renameSnapshot and
// -deleteSnapshot, hdfs lsSnapshot and hdfs snapshotDiff, with Hadoop's
// output and errors, and reads and refused writes through .snapshot.
func TestSnapshotCommands(t *testing.T) {
	nn := nntest.New(t)
	fs := "hdfs://" + nn.Addr
	dfs := func(args ...string) (string, string, int) {
		return run(t, nil, append([]string{"dfs", "-fs", fs}, args...)...)
	}
	if out, errOut, code := dfs("-mkdir", "-p", "/s/a", "/s/b", "/t"); code != 0 {
		t.Fatalf("mkdir: %q %q", out, errOut)
	}
	if out, errOut, code := dfs("-touchz", "/s/a/f", "/s/old"); code != 0 {
		t.Fatalf("touchz: %q %q", out, errOut)
	}
	if _, errOut, code := run(t, nil, "dfsadmin", "-fs", fs, "-allowSnapshot", "/s"); code != 0 {
		t.Fatal(errOut)
	}
	for _, tc := range []struct {
		args           []string
		stdout, stderr string
		code           int
	}{
		{[]string{"-createSnapshot", "/s", "s1"}, "Created snapshot /s/.snapshot/s1\n", "", 0},
		{[]string{"-createSnapshot", "/s", "s1"}, "", "createSnapshot: Failed to add snapshot: there is already a snapshot with the same name \"s1\".\n", 1},
		{[]string{"-createSnapshot", "/t", "s1"}, "", "createSnapshot: Directory is not a snapshottable directory: /t\n", 1},
		{[]string{"-createSnapshot", "/s/a/f"}, "", "createSnapshot: `/s/a/f': Is not a directory\n", 1},
		{[]string{"-createSnapshot", "/s", ".snapshot"}, "", "createSnapshot: \".snapshot\" is a reserved name.\n", 1},
		{[]string{"-renameSnapshot", "/s", "s1", "s2"}, "", "", 0},
		{[]string{"-renameSnapshot", "/s", "s1", "s3"}, "", "renameSnapshot: The snapshot s1 does not exist for directory /s\n", 1},
		{[]string{"-mkdir", "/s/.snapshot/s2/x"}, "", "mkdir: Modification on a read-only snapshot is disallowed\n", 1},
		{[]string{"-touchz", "/s/.snapshot"}, "", "touchz: `/s/.snapshot': Is a directory\n", 1},
		{[]string{"-touchz", "/t/.snapshot"}, "", "touchz: \".snapshot\" is a reserved name.\n", 1},
		{[]string{"-mv", "/s/a", "/s/c"}, "", "", 0},
		{[]string{"-rm", "-skipTrash", "/s/old"}, "Deleted /s/old\n", "", 0},
		{[]string{"-touchz", "/s/new"}, "", "", 0},
		{[]string{"-ls", "-C", "/s/.snapshot/s2"}, "/s/.snapshot/s2/a\n/s/.snapshot/s2/b\n/s/.snapshot/s2/old\n", "", 0},
		{[]string{"-ls", "-C", "/s/.snapshot"}, "/s/.snapshot/s2\n", "", 0},
		{[]string{"-rm", "-r", "-skipTrash", "/s"}, "", "rm: The directory /s cannot be deleted since /s is snapshottable and already has snapshots\n", 1},
	} {
		out, errOut, code := dfs(tc.args...)
		if out != tc.stdout || errOut != tc.stderr || code != tc.code {
			t.Errorf("%v: got %q %q %d, want %q %q %d", tc.args, out, errOut, code, tc.stdout, tc.stderr, tc.code)
		}
	}
	out, errOut, code := run(t, nil, "snapshotDiff", "-fs", fs, "/s", "s2", ".")
	want := "Difference between snapshot s2 and current directory under directory /s:\nM\t.\n+\t./new\nR\t./a -> ./c\n-\t./old\n"
	if code != 0 || out != want {
		t.Fatalf("snapshotDiff: %d %q %q, want %q", code, out, errOut, want)
	}
	out, errOut, code = run(t, nil, "snapshotDiff", "-fs", fs, "/s", "s2", ".snapshot/nope")
	if code != 1 || errOut != "snapshotDiff: Cannot find the snapshot of directory /s with name nope\n" {
		t.Fatalf("snapshotDiff of a missing snapshot: %d %q %q", code, out, errOut)
	}
	// /s/old, deleted, is kept by s2: counted, and shown by -s, left out by -x.
	if out, errOut, code := dfs("-count", "-s", "/s"); code != 0 || out != "           3            3                  0            0            1            0            0 /s\n" {
		t.Fatalf("count -s: %d %q %q", code, out, errOut)
	}
	if out, errOut, code := dfs("-count", "-x", "/s"); code != 0 || out != "           3            2                  0 /s\n" {
		t.Fatalf("count -x: %d %q %q", code, out, errOut)
	}
	out, errOut, code = run(t, nil, "lsSnapshot", "-fs", fs, "/s")
	re := regexp.MustCompile(`^drwxr-xr-x 0 \S+ supergroup 0 \d{4}-\d\d-\d\d \d\d:\d\d 1 ACTIVE /s/.snapshot/s2\n$`)
	if code != 0 || !re.MatchString(out) {
		t.Fatalf("lsSnapshot: %d %q %q", code, out, errOut)
	}
	if out, errOut, code := dfs("-deleteSnapshot", "/s", "s2"); code != 0 || out != "" {
		t.Fatalf("deleteSnapshot: %d %q %q", code, out, errOut)
	}
	if _, errOut, code := dfs("-deleteSnapshot", "/s", "s2"); code != 1 || errOut != "deleteSnapshot: Cannot delete snapshot s2 from path /s: the snapshot does not exist.\n" {
		t.Fatalf("second deleteSnapshot: %d %q", code, errOut)
	}
	if _, errOut, code := dfs("-deleteSnapshot", "/s"); code != 255 || !strings.HasPrefix(errOut, "-deleteSnapshot: Incorrect number of arguments.\n") {
		t.Fatalf("deleteSnapshot without a name: %d %q", code, errOut)
	}
}

// TestSnapshotKeepsXAttrsAndACLsCommands: -getfattr and -getfacl through
// a .snapshot path show the attributes and ACL as the snapshot keeps them,
// after the live file's changed (-getfattr -d prints in the order Hadoop's
// shell does, that of a Java HashMap).
func TestSnapshotKeepsXAttrsAndACLsCommands(t *testing.T) {
	nn := nntest.New(t)
	fs := "hdfs://" + nn.Addr
	dfs := func(args ...string) (string, string, int) {
		return run(t, nil, append([]string{"dfs", "-fs", fs}, args...)...)
	}
	for _, args := range [][]string{
		{"-mkdir", "/s"},
		{"-touchz", "/s/f"},
		{"-setfattr", "-n", "user.a", "-v", "one", "/s/f"},
		{"-setfacl", "-m", "user:alice:r--", "/s/f"},
		{"-createSnapshot", "/s", "s1"},
		{"-setfattr", "-n", "user.a", "-v", "two", "/s/f"},
		{"-setfattr", "-n", "user.b", "-v", "three", "/s/f"},
		{"-setfacl", "-b", "/s/f"},
	} {
		if args[0] == "-createSnapshot" {
			if _, errOut, code := run(t, nil, "dfsadmin", "-fs", fs, "-allowSnapshot", "/s"); code != 0 {
				t.Fatal(errOut)
			}
		}
		if out, errOut, code := dfs(args...); code != 0 {
			t.Fatalf("%v: %q %q", args, out, errOut)
		}
	}
	for _, tc := range []struct {
		args           []string
		stdout, stderr string
		code           int
	}{
		{[]string{"-getfattr", "-d", "/s/f"}, "# file: /s/f\nuser.b=\"three\"\nuser.a=\"two\"\n", "", 0},
		{[]string{"-getfattr", "-d", "/s/.snapshot/s1/f"}, "# file: /s/.snapshot/s1/f\nuser.a=\"one\"\n", "", 0},
		{[]string{"-getfattr", "-n", "user.b", "/s/.snapshot/s1/f"}, "# file: /s/.snapshot/s1/f\n", "getfattr: At least one of the attributes provided was not found.\n", 1},
		{[]string{"-setfattr", "-n", "user.c", "/s/.snapshot/s1/f"}, "", "setfattr: Modification on a read-only snapshot is disallowed\n", 1},
		{[]string{"-getfacl", "/s/f"}, "# file: /s/f\n# owner: OWNER\n# group: supergroup\nuser::rw-\ngroup::r--\nother::r--\n\n", "", 0},
		{[]string{"-getfacl", "/s/.snapshot/s1/f"}, "# file: /s/.snapshot/s1/f\n# owner: OWNER\n# group: supergroup\nuser::rw-\nuser:alice:r--\ngroup::r--\nmask::r--\nother::r--\n\n", "", 0},
	} {
		out, errOut, code := dfs(tc.args...)
		out = regexp.MustCompile(`(?m)^# owner: \S+$`).ReplaceAllString(out, "# owner: OWNER")
		if out != tc.stdout || errOut != tc.stderr || code != tc.code {
			t.Errorf("%v: got %q %q %d, want %q %q %d", tc.args, out, errOut, code, tc.stdout, tc.stderr, tc.code)
		}
	}
}
