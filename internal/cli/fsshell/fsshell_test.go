package fsshell

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	// t0 stamps every inode of the test tree.
	t0 = time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	// now is the shell's clock.
	now = time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
)

func ms(t time.Time) uint64 { return uint64(t.UnixMilli()) }

// testTree builds:
//
//	/user/alice/notes.txt  12 bytes
//	/d/a                   1536 bytes, replication 3
//	/d/b                   0 bytes, replication 1
//	/d/sub/c               70000 bytes
//	/empty/
//	/secret/x              root's, /secret is 0700
//	/tmp/                  hdfs's, 1777
func testTree() *fakeNN {
	nn := newFakeNN(ms(t0))
	file := func(length uint64, repl uint32) *node {
		return &node{perm: 0o644, owner: "alice", group: "supergroup", length: length, repl: repl}
	}
	dir := func(perm uint32, owner string) *node {
		return &node{dir: true, perm: perm, owner: owner, group: "supergroup"}
	}
	nn.add("/user/alice", dir(0o755, "alice"))
	nn.add("/user/alice/notes.txt", file(12, 3))
	nn.add("/d", dir(0o755, "alice"))
	nn.add("/d/a", file(1536, 3))
	nn.add("/d/b", file(0, 1))
	nn.add("/d/sub", dir(0o755, "alice"))
	nn.add("/d/sub/c", file(70000, 3))
	nn.add("/empty", dir(0o755, "alice"))
	nn.add("/secret", dir(0o700, "root"))
	nn.add("/secret/x", &node{perm: 0o600, owner: "root", group: "supergroup", length: 1, repl: 3})
	nn.add("/tmp", dir(0o1777, "hdfs"))
	return nn
}

const (
	uri     = "hdfs://nn.example.com:8020"
	usageLs = "Usage: hdfs dfs [generic options] -ls [-C] [-d] [-h] [-q] [-R] [-t] [-S] [-r] [-u] [-e] [<path> ...]\n"
)

type shellCase struct {
	name   string
	setup  func(nn *fakeNN)
	env    func(e *Env)
	args   []string
	stdout string
	stderr string
	code   int
	check  func(t *testing.T, nn *fakeNN)
}

func runCases(t *testing.T, cases []shellCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nn := testTree()
			if tc.setup != nil {
				tc.setup(nn)
			}
			fsys := nn.serve(t)
			var out, errb bytes.Buffer
			env := Env{Stdout: &out, Stderr: &errb, Now: func() time.Time { return now }, TZ: time.UTC}
			if tc.env != nil {
				tc.env(&env)
			}
			code := Run(context.Background(), env, fsys, tc.args)
			if out.String() != tc.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), tc.stdout)
			}
			if errb.String() != tc.stderr {
				t.Errorf("stderr:\n%s\nwant:\n%s", errb.String(), tc.stderr)
			}
			if code != tc.code {
				t.Errorf("exit status %d, want %d", code, tc.code)
			}
			if tc.check != nil {
				tc.check(t, nn)
			}
		})
	}
}

func lines(s ...string) string { return strings.Join(s, "\n") + "\n" }

func TestLs(t *testing.T) {
	runCases(t, []shellCase{
		{name: "dir", args: []string{"-ls", "/d"}, stdout: lines(
			"Found 3 items",
			"-rw-r--r--   3 alice supergroup       1536 2026-12-01 20:00 /d/a",
			"-rw-r--r--   1 alice supergroup          0 2026-12-01 20:00 /d/b",
			"drwxr-xr-x   - alice supergroup          0 2026-12-01 20:00 /d/sub")},
		{name: "human", args: []string{"-ls", "-h", "/d"}, stdout: lines(
			"Found 3 items",
			"-rw-r--r--   3 alice supergroup      1.5 K 2026-12-01 20:00 /d/a",
			"-rw-r--r--   1 alice supergroup          0 2026-12-01 20:00 /d/b",
			"drwxr-xr-x   - alice supergroup          0 2026-12-01 20:00 /d/sub")},
		{name: "recursive", args: []string{"-ls", "-R", "/d"}, stdout: lines(
			"-rw-r--r--   3 alice supergroup       1536 2026-12-01 20:00 /d/a",
			"-rw-r--r--   1 alice supergroup          0 2026-12-01 20:00 /d/b",
			"drwxr-xr-x   - alice supergroup          0 2026-12-01 20:00 /d/sub",
			"-rw-r--r--   3 alice supergroup      70000 2026-12-01 20:00 /d/sub/c")},
		{name: "lsr", args: []string{"-lsr", "/d/sub"},
			stdout: lines("-rw-r--r--   3 alice supergroup      70000 2026-12-01 20:00 /d/sub/c"),
			stderr: "lsr: DEPRECATED: Please use 'ls -R' instead.\n"},
		{name: "directories as entries, widths grow", args: []string{"-ls", "-d", "/d", "/tmp", "/d/sub/c"}, stdout: lines(
			"drwxr-xr-x   - alice supergroup          0 2026-12-01 20:00 /d",
			"drwxrwxrwt   - hdfs  supergroup          0 2026-12-01 20:00 /tmp",
			"-rw-r--r--   3 alice supergroup      70000 2026-12-01 20:00 /d/sub/c")},
		{name: "wide size column", setup: func(nn *fakeNN) { nn.node("/d/b").length = 12345678901234 }, args: []string{"-ls", "/d"}, stdout: lines(
			"Found 3 items",
			"-rw-r--r--   3 alice supergroup           1536 2026-12-01 20:00 /d/a",
			"-rw-r--r--   1 alice supergroup 12345678901234 2026-12-01 20:00 /d/b",
			"drwxr-xr-x   - alice supergroup              0 2026-12-01 20:00 /d/sub")},
		{name: "working directory", args: []string{"-ls"}, stdout: lines(
			"Found 1 items",
			"-rw-r--r--   3 alice supergroup         12 2026-12-01 20:00 notes.txt")},
		{name: "relative", args: []string{"-ls", "notes.txt"}, stdout: lines(
			"-rw-r--r--   3 alice supergroup         12 2026-12-01 20:00 notes.txt")},
		{name: "paths only", args: []string{"-ls", "-C", "/d"}, stdout: lines("/d/a", "/d/b", "/d/sub")},
		{name: "by size", args: []string{"-ls", "-C", "-S", "/d"}, stdout: lines("/d/a", "/d/b", "/d/sub")},
		{name: "reverse", args: []string{"-ls", "-C", "-r", "/d"}, stdout: lines("/d/sub", "/d/b", "/d/a")},
		{name: "by time", setup: func(nn *fakeNN) { nn.node("/d/b").mtime = ms(t0) + 60000 },
			args: []string{"-ls", "-C", "-t", "/d"}, stdout: lines("/d/b", "/d/a", "/d/sub")},
		{name: "access time", setup: func(nn *fakeNN) { nn.node("/d/sub/c").atime = ms(t0.Add(-48 * time.Hour)) },
			args:   []string{"-ls", "-u", "/d/sub/c"},
			stdout: lines("-rw-r--r--   3 alice supergroup      70000 2026-11-29 20:00 /d/sub/c")},
		{name: "time zone", env: func(e *Env) { e.TZ = time.FixedZone("X", 90*60) }, args: []string{"-ls", "/d/a"},
			stdout: lines("-rw-r--r--   3 alice supergroup       1536 2026-12-01 21:30 /d/a")},
		{name: "empty dir", args: []string{"-ls", "/empty"}},
		{name: "glob", args: []string{"-ls", "/d/*"}, stdout: lines(
			"-rw-r--r--   3 alice supergroup       1536 2026-12-01 20:00 /d/a",
			"-rw-r--r--   1 alice supergroup          0 2026-12-01 20:00 /d/b",
			"Found 1 items",
			"-rw-r--r--   3 alice supergroup      70000 2026-12-01 20:00 /d/sub/c")},
		{name: "glob uri", args: []string{"-ls", "-C", uri + "/d/?"}, stdout: lines(uri+"/d/a", uri+"/d/b")},
		{name: "glob class and braces", args: []string{"-ls", "-C", "-d", "/{d,tmp}", "/d/[ab]", "/d/[!a]"},
			stdout: lines("/d", "/tmp", "/d/a", "/d/b", "/d/b")},
		{name: "glob relative", args: []string{"-ls", "-C", "*.txt", "../../d/s*"},
			stdout: lines("notes.txt", "../../d/sub/c")},
		{name: "glob no match", args: []string{"-ls", "/d/x*"},
			stderr: "ls: `/d/x*': No such file or directory\n", code: 1},
		{name: "missing", args: []string{"-ls", "/nope", "/d/a"},
			stdout: lines("-rw-r--r--   3 alice supergroup       1536 2026-12-01 20:00 /d/a"),
			stderr: "ls: `/nope': No such file or directory\n", code: 1},
		{name: "permission", args: []string{"-ls", "/secret"},
			stderr: "ls: Permission denied: user=alice, access=READ_EXECUTE, inode=\"/secret\"\n", code: 1},
		{name: "traverse denied", args: []string{"-ls", "/secret/x"},
			stderr: "ls: Permission denied: user=alice, access=EXECUTE, inode=\"/secret\":root:supergroup:drwx------\n", code: 1},
		{name: "other fs", args: []string{"-ls", "hdfs://other:8020/"},
			stderr: "ls: Wrong FS: hdfs://other:8020/, expected: " + uri + "\n", code: 1},
		{name: "illegal option", args: []string{"-ls", "-z", "/"},
			stderr: "-ls: Illegal option -z\n" + usageLs, code: 255},
	})
}

func TestMkdir(t *testing.T) {
	usage := "Usage: hdfs dfs [generic options] -mkdir [-p] <path> ...\n"
	runCases(t, []shellCase{
		{name: "new", args: []string{"-mkdir", "/new", "rel"}, check: func(t *testing.T, nn *fakeNN) {
			for _, p := range []string{"/new", "/user/alice/rel"} {
				if n := nn.node(p); n == nil || !n.dir || n.perm != 0o755 || n.owner != "alice" {
					t.Errorf("%s = %+v", p, n)
				}
			}
		}},
		{name: "exists", args: []string{"-mkdir", "/d"}, stderr: "mkdir: `/d': File exists\n", code: 1},
		{name: "is a file", args: []string{"-mkdir", "/d/a"}, stderr: "mkdir: `/d/a': Is not a directory\n", code: 1},
		{name: "no parent", args: []string{"-mkdir", "/x/y"}, stderr: "mkdir: `mkdir failed for path: /x/y. Item parent path not found: /x.': No such file or directory\n", code: 1,
			check: func(t *testing.T, nn *fakeNN) {
				if nn.node("/x") != nil {
					t.Error("/x created")
				}
			}},
		{name: "parents", args: []string{"-mkdir", "-p", "/x/y/z", "/d"}, check: func(t *testing.T, nn *fakeNN) {
			if n := nn.node("/x/y/z"); n == nil || !n.dir {
				t.Errorf("/x/y/z = %+v", n)
			}
		}},
		{name: "parents through a file", args: []string{"-mkdir", "-p", "/d/a/x"},
			stderr: "mkdir: Path is not a directory: /d/a\n", code: 1},
		{name: "partial failure", args: []string{"-mkdir", "/d", "/n2"}, stderr: "mkdir: `/d': File exists\n", code: 1,
			check: func(t *testing.T, nn *fakeNN) {
				if nn.node("/n2") == nil {
					t.Error("/n2 not created")
				}
			}},
		{name: "no args", args: []string{"-mkdir"},
			stderr: "-mkdir: Not enough arguments: expected 1 but got 0\n" + usage, code: 255},
	})
}

func gone(paths ...string) func(t *testing.T, nn *fakeNN) {
	return func(t *testing.T, nn *fakeNN) {
		for _, p := range paths {
			if nn.node(p) != nil {
				t.Errorf("%s still exists", p)
			}
		}
	}
}

func present(paths ...string) func(t *testing.T, nn *fakeNN) {
	return func(t *testing.T, nn *fakeNN) {
		for _, p := range paths {
			if nn.node(p) == nil {
				t.Errorf("%s does not exist", p)
			}
		}
	}
}

func TestRm(t *testing.T) {
	usage := "Usage: hdfs dfs [generic options] -rm [-f] [-r|-R] [-skipTrash] [-safely] <src> ...\n"
	trash := func(nn *fakeNN) { nn.trash = 60 }
	runCases(t, []shellCase{
		{name: "file", args: []string{"-rm", "/d/a"}, stdout: "Deleted /d/a\n", check: gone("/d/a")},
		{name: "dir needs -r", args: []string{"-rm", "/d"}, stderr: "rm: `/d': Is a directory\n", code: 1, check: present("/d/a")},
		{name: "recursive", args: []string{"-rm", "-r", "/d", "/empty"}, stdout: "Deleted /d\nDeleted /empty\n", check: gone("/d", "/empty")},
		{name: "-R", args: []string{"-rm", "-R", "/d/sub"}, stdout: "Deleted /d/sub\n", check: gone("/d/sub")},
		{name: "rmr", args: []string{"-rmr", "/d/sub"}, stdout: "Deleted /d/sub\n",
			stderr: "rmr: DEPRECATED: Please use '-rm -r' instead.\n", check: gone("/d/sub")},
		{name: "missing", args: []string{"-rm", "/nope", "/d/b"}, stdout: "Deleted /d/b\n",
			stderr: "rm: `/nope': No such file or directory\n", code: 1},
		{name: "force", args: []string{"-rm", "-f", "/nope", "/d/x*"}},
		{name: "glob", args: []string{"-rm", "/d/?"}, stdout: "Deleted /d/a\nDeleted /d/b\n", check: gone("/d/a", "/d/b")},
		{name: "uri", args: []string{"-rm", uri + "/d/a"}, stdout: "Deleted " + uri + "/d/a\n", check: gone("/d/a")},
		{name: "combined flags are not split", args: []string{"-rm", "-rf", "/d"},
			stderr: "-rm: Illegal option -rf\n" + usage, code: 255, check: present("/d")},
		{name: "trash on server", setup: trash, args: []string{"-rm", "/d/a"},
			stdout: "Moved: '" + uri + "/d/a' to trash at: " + uri + "/user/alice/.Trash/Current\n",
			check:  func(t *testing.T, nn *fakeNN) { gone("/d/a")(t, nn); present("/user/alice/.Trash/Current/d/a")(t, nn) }},
		{name: "trash on client", env: func(e *Env) { e.TrashInterval = 30 * time.Minute }, args: []string{"-rm", "/d/a"},
			stdout: "Moved: '" + uri + "/d/a' to trash at: " + uri + "/user/alice/.Trash/Current\n",
			check:  func(t *testing.T, nn *fakeNN) { gone("/d/a")(t, nn); present("/user/alice/.Trash/Current/d/a")(t, nn) }},
		{name: "skip trash", setup: trash, args: []string{"-rm", "-skipTrash", "/d/a"}, stdout: "Deleted /d/a\n", check: func(t *testing.T, nn *fakeNN) {
			gone("/d/a")(t, nn)
			if slices.Contains(nn.calls(), "getServerDefaults ") {
				t.Error("-skipTrash asked for the server defaults")
			}
		}},
	})
}

func TestRmdir(t *testing.T) {
	runCases(t, []shellCase{
		{name: "empty", args: []string{"-rmdir", "/empty"}, check: gone("/empty")},
		{name: "not empty", args: []string{"-rmdir", "/d"}, stderr: "rmdir: `/d': Directory is not empty\n", code: 1, check: present("/d")},
		{name: "ignore", args: []string{"-rmdir", "--ignore-fail-on-non-empty", "/d", "/empty"}, check: gone("/empty")},
		{name: "file", args: []string{"-rmdir", "/d/a"}, stderr: "rmdir: `/d/a': Is not a directory\n", code: 1},
		{name: "missing", args: []string{"-rmdir", "/nope"}, stderr: "rmdir: `/nope': No such file or directory\n", code: 1},
	})
}

func TestMv(t *testing.T) {
	usage := "Usage: hdfs dfs [generic options] -mv <src> ... <dst>\n"
	runCases(t, []shellCase{
		{name: "rename", args: []string{"-mv", "/d/a", "/d/z"}, check: func(t *testing.T, nn *fakeNN) {
			gone("/d/a")(t, nn)
			present("/d/z")(t, nn)
			if !slices.Contains(nn.calls(), "rename2 /d/a /d/z") {
				t.Errorf("calls %v", nn.calls())
			}
		}},
		{name: "into dir", args: []string{"-mv", "/d/a", "/d/b", "/empty"}, check: present("/empty/a", "/empty/b")},
		{name: "into dir by form", args: []string{"-mv", "/d/a", "/newdir/."},
			stderr: "mv: `/newdir/.': No such file or directory: `hdfs://nn.example.com:8020/newdir'\n", code: 1},
		{name: "dir", args: []string{"-mv", "/d/sub", "/empty"}, check: present("/empty/sub/c")},
		{name: "target exists", args: []string{"-mv", "/d/a", "/d/b"}, stderr: "mv: `/d/b': File exists\n", code: 1, check: present("/d/a")},
		{name: "target in dir exists", setup: func(nn *fakeNN) { nn.add("/empty/a", &node{perm: 0o644, owner: "alice", group: "g", repl: 1}) },
			args: []string{"-mv", "/d/a", "/empty"}, stderr: "mv: `/empty/a': File exists\n", code: 1},
		{name: "no parent", args: []string{"-mv", "/d/a", "/nope/x"}, stderr: "mv: `/nope/x': No such file or directory: `hdfs://nn.example.com:8020/nope/x'\n", code: 1},
		{name: "several to file", args: []string{"-mv", "/d/a", "/d/b", "/user/alice/notes.txt"},
			stderr: "mv: `/user/alice/notes.txt': Is not a directory\n", code: 1},
		{name: "several to missing", args: []string{"-mv", "/d/a", "/d/b", "/nope"},
			stderr: "mv: `/nope': No such file or directory\n", code: 1},
		{name: "into itself", args: []string{"-mv", "/d", "/d/sub"},
			stderr: "mv: `/d' to `/d/sub/d': is a subdirectory of itself\n", code: 1},
		{name: "identical", args: []string{"-mv", "/d", "/"},
			stderr: "mv: `/d' to `" + uri + "/d': are identical\n", code: 1},
		{name: "missing source", args: []string{"-mv", "/nope", "/d/b", "/empty"},
			stderr: "mv: `/nope': No such file or directory\n", code: 1, check: present("/empty/b")},
		{name: "glob", args: []string{"-mv", "/d/?", "/empty"}, check: present("/empty/a", "/empty/b")},
		{name: "too many matches", args: []string{"-mv", "/d/sub/c", "/d/?"},
			stderr: "mv: `/d/?': Too many matches\n", code: 1},
		{name: "one arg", args: []string{"-mv", "/d/a"},
			stderr: "-mv: Not enough arguments: expected 2 but got 1\n" + usage, code: 255},
	})
}

func TestStat(t *testing.T) {
	a := strings.Repeat("", 0)
	runCases(t, []shellCase{
		{name: "default", args: []string{"-stat", "/d/a"}, stdout: "2026-12-01 20:00:00\n"},
		{name: "all", setup: func(nn *fakeNN) { nn.node("/d/a").atime = ms(t0.Add(-time.Hour)) },
			args:   []string{"-stat", "%a %A %b %F %g %n %o %r %u %y %Y %x %X %% %z", "/d/a"},
			stdout: "644 rw-r--r-- 1536 regular file supergroup a 134217728 3 alice 2026-12-01 20:00:00 1796155200000 2026-12-01 19:00:00 1796151600000 % z\n"},
		{name: "dir", args: []string{"-stat", "%F %a %A %r %o:%n", "/tmp", "/"}, stdout: "directory 1777 rwxrwxrwt 0 0:tmp\ndirectory 755 rwxr-xr-x 0 0:" + a + "\n"},
		{name: "recursive", args: []string{"-stat", "-R", "%n", "/d"}, stdout: lines("d", "a", "b", "sub", "c")},
		{name: "trailing percent", args: []string{"-stat", "x%", "/d"}, stdout: "x\n"},
		{name: "missing", args: []string{"-stat", "/nope"}, stderr: "stat: `/nope': No such file or directory\n", code: 1},
		{name: "format only", args: []string{"-stat", "%n"},
			stderr: "-stat: Not enough arguments: expected 1 but got 0\nUsage: hdfs dfs [generic options] -stat [format] <path> ...\n", code: 255},
	})
}

func TestChmod(t *testing.T) {
	perm := func(p string, want uint32) func(t *testing.T, nn *fakeNN) {
		return func(t *testing.T, nn *fakeNN) {
			if got := nn.node(p).perm; got != want {
				t.Errorf("%s perm %o, want %o", p, got, want)
			}
		}
	}
	runCases(t, []shellCase{
		{name: "octal", args: []string{"-chmod", "700", "/d/a"}, check: perm("/d/a", 0o700)},
		{name: "sticky octal", args: []string{"-chmod", "1777", "/empty"}, check: perm("/empty", 0o1777)},
		{name: "symbolic", args: []string{"-chmod", "u+x,g=w", "/d/b"}, check: perm("/d/b", 0o724)},
		{name: "sticky symbolic", args: []string{"-chmod", "+t", "/empty"}, check: perm("/empty", 0o1755)},
		{name: "leading dash", args: []string{"-chmod", "-w", "/d/a"}, check: perm("/d/a", 0o444)},
		{name: "recursive", args: []string{"-chmod", "-R", "go-rx", "/d"}, check: func(t *testing.T, nn *fakeNN) {
			perm("/d", 0o700)(t, nn)
			perm("/d/a", 0o600)(t, nn)
			perm("/d/sub", 0o700)(t, nn)
			perm("/d/sub/c", 0o600)(t, nn)
		}},
		{name: "unchanged is not sent", args: []string{"-chmod", "a+X", "/d/b"}, check: func(t *testing.T, nn *fakeNN) {
			for _, c := range nn.calls() {
				if strings.HasPrefix(c, "setPermission") {
					t.Errorf("call %s", c)
				}
			}
		}},
		{name: "not owner", args: []string{"-chmod", "755", "/tmp"},
			stderr: "chmod: changing permissions of '/tmp': Permission denied. user=alice is not the owner of inode=/tmp\n", code: 1},
		{name: "missing", args: []string{"-chmod", "755", "/nope"}, stderr: "chmod: `/nope': No such file or directory\n", code: 1},
		{name: "bad mode", args: []string{"-chmod", "999", "/d"},
			stderr: "-chmod: chmod : mode '999' does not match the expected pattern.\n" +
				"Usage: hdfs dfs [generic options] -chmod [-R] <MODE[,MODE]... | OCTALMODE> PATH...\n", code: 255},
	})
}

func TestChown(t *testing.T) {
	group := func(p, want string) func(t *testing.T, nn *fakeNN) {
		return func(t *testing.T, nn *fakeNN) {
			if got := nn.node(p).group; got != want {
				t.Errorf("%s group %q, want %q", p, got, want)
			}
		}
	}
	runCases(t, []shellCase{
		{name: "group only", args: []string{"-chown", ":staff", "/d/a"}, check: func(t *testing.T, nn *fakeNN) {
			group("/d/a", "staff")(t, nn)
			if !slices.Contains(nn.calls(), `setOwner /d/a "" "staff"`) {
				t.Errorf("calls %v", nn.calls())
			}
		}},
		{name: "chgrp", args: []string{"-chgrp", "staff", "/d/a"}, check: group("/d/a", "staff")},
		{name: "recursive", args: []string{"-chgrp", "-R", "staff", "/d"}, check: func(t *testing.T, nn *fakeNN) {
			for _, p := range []string{"/d", "/d/a", "/d/b", "/d/sub", "/d/sub/c"} {
				group(p, "staff")(t, nn)
			}
		}},
		{name: "owner needs superuser", args: []string{"-chown", "bob", "/d/a"},
			stderr: "chown: changing ownership of '/d/a': User alice is not a super user (non-super user cannot change owner).\n", code: 1},
		{name: "unchanged is not sent", args: []string{"-chown", "alice:supergroup", "/d/a"}, check: func(t *testing.T, nn *fakeNN) {
			for _, c := range nn.calls() {
				if strings.HasPrefix(c, "setOwner") {
					t.Errorf("call %s", c)
				}
			}
		}},
		{name: "bad owner", args: []string{"-chown", "a b", "/d"},
			stderr: "-chown: 'a b' does not match expected pattern for [owner][:group].\n" +
				"Usage: hdfs dfs [generic options] -chown [-R] [OWNER][:[GROUP]] PATH...\n", code: 255},
		{name: "empty spec", args: []string{"-chown", ":", "/d"},
			stderr: "-chown: ':' does not specify owner or group.\n" +
				"Usage: hdfs dfs [generic options] -chown [-R] [OWNER][:[GROUP]] PATH...\n", code: 255},
		{name: "bad group", args: []string{"-chgrp", "x:y", "/d"},
			stderr: "-chgrp: 'x:y' does not match expected pattern for group\n" +
				"Usage: hdfs dfs [generic options] -chgrp [-R] GROUP PATH...\n", code: 255},
	})
}

func TestTouch(t *testing.T) {
	times := func(p string, mtime, atime time.Time) func(t *testing.T, nn *fakeNN) {
		return func(t *testing.T, nn *fakeNN) {
			n := nn.node(p)
			if n == nil || n.mtime != ms(mtime) || n.atime != ms(atime) {
				t.Errorf("%s = %+v, want mtime %v atime %v", p, n, mtime, atime)
			}
		}
	}
	ts := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	runCases(t, []shellCase{
		{name: "touchz new", args: []string{"-touchz", "/d/new"}, check: func(t *testing.T, nn *fakeNN) {
			if n := nn.node("/d/new"); n == nil || n.dir || n.length != 0 || n.perm != 0o644 {
				t.Errorf("/d/new = %+v", n)
			}
			if !slices.Contains(nn.calls(), "complete /d/new") {
				t.Errorf("calls %v", nn.calls())
			}
		}},
		{name: "touchz empty file", args: []string{"-touchz", "/d/b"}, check: times("/d/b", now, now)},
		{name: "touchz data", args: []string{"-touchz", "/d/a"}, stderr: "touchz: `/d/a': Not a zero-length file\n", code: 1},
		{name: "touchz dir", args: []string{"-touchz", "/d"}, stderr: "touchz: `/d': Is a directory\n", code: 1},
		{name: "touchz no parent", args: []string{"-touchz", "/nope/x"}, stderr: "touchz: `/nope/x': No such file or directory: `hdfs://nn.example.com:8020/nope/x'\n", code: 1},
		{name: "touch existing", args: []string{"-touch", "/d/a"}, check: times("/d/a", now, now)},
		{name: "touch timestamp", args: []string{"-touch", "-t", "20250102:030405", "/d/a"}, check: times("/d/a", ts, ts)},
		{name: "touch -m", args: []string{"-touch", "-m", "/d/a"}, check: times("/d/a", now, t0)},
		{name: "touch -a -t", args: []string{"-touch", "-a", "-t", "20250102:030405", "/d/a"}, check: times("/d/a", t0, ts)},
		{name: "touch -t zone", env: func(e *Env) { e.TZ = time.FixedZone("X", 3600) },
			args: []string{"-touch", "-t", "20250102:040405", "/d/a"}, check: times("/d/a", ts, ts)},
		{name: "touch new", args: []string{"-touch", "/d/n"}, check: present("/d/n")},
		{name: "touch new with time", args: []string{"-touch", "-t", "20250102:030405", "/d/n"}, check: times("/d/n", ts, ts)},
		{name: "touch -c", args: []string{"-touch", "-c", "/d/n"}, check: gone("/d/n")},
		{name: "touch dir", args: []string{"-touch", "/d"}, stderr: "touch: `/d': Is a directory\n", code: 1},
		{name: "touch bad time", args: []string{"-touch", "-t", "bad", "/d/a"},
			stderr: "-touch: Unable to parse the specified timestamp bad. The expected format is yyyyMMdd:HHmmss\n" +
				"Usage: hdfs dfs [generic options] -touch [-a] [-m] [-t TIMESTAMP (yyyyMMdd:HHmmss) ] [-c] <path> ...\n", code: 255},
		{name: "touch -t without value", args: []string{"-touch", "/d/a", "-t"},
			stderr: "-touch: option -t requires 1 argument.\n" +
				"Usage: hdfs dfs [generic options] -touch [-a] [-m] [-t TIMESTAMP (yyyyMMdd:HHmmss) ] [-c] <path> ...\n", code: 255},
	})
}

func TestCount(t *testing.T) {
	quota := func(nn *fakeNN) {
		n := nn.node("/d")
		n.quota, n.squot = 100, 1<<30
	}
	runCases(t, []shellCase{
		{name: "plain", args: []string{"-count", "/d", "/d/a"}, stdout: lines(
			"           2            3              71536 /d",
			"           0            1               1536 /d/a")},
		{name: "header", args: []string{"-count", "-v", "/d"}, stdout: lines(
			"   DIR_COUNT   FILE_COUNT       CONTENT_SIZE PATHNAME",
			"           2            3              71536 /d")},
		{name: "quotas none", args: []string{"-count", "-q", "-v", "/d"}, stdout: lines(
			"       QUOTA       REM_QUOTA     SPACE_QUOTA REM_SPACE_QUOTA    DIR_COUNT   FILE_COUNT       CONTENT_SIZE PATHNAME",
			"        none             inf            none             inf            2            3              71536 /d")},
		{name: "quotas human", setup: quota, args: []string{"-count", "-q", "-h", "/d"}, stdout: lines(
			"         100              95             1 G        1023.8 M            2            3             69.9 K /d")},
		{name: "usage only", setup: quota, args: []string{"-count", "-u", "-v", "/d"}, stdout: lines(
			"       QUOTA       REM_QUOTA     SPACE_QUOTA REM_SPACE_QUOTA PATHNAME",
			"         100              95      1073741824      1073527216 /d")},
		{name: "usage only none", args: []string{"-count", "-u", "/d"}, stdout: lines(
			"        none             inf            none             inf /d")},
		{name: "missing", args: []string{"-count", "/nope"}, stderr: "count: `/nope': No such file or directory\n", code: 1},
		{name: "no args", args: []string{"-count"},
			stderr: "-count: Not enough arguments: expected 1 but got 0\nUsage: hdfs dfs [generic options] -count [-q] [-h] [-v] [-t [<storage type>]] [-u] [-x] [-e] [-s] <path> ...\n", code: 255},
	})
}

func TestDu(t *testing.T) {
	runCases(t, []shellCase{
		{name: "one level", args: []string{"-du", "/d"}, stdout: lines(
			"1536   4608    /d/a",
			"0      0       /d/b",
			"70000  210000  /d/sub")},
		{name: "summary", args: []string{"-du", "-s", "/d", "/d/a"}, stdout: lines(
			"71536  214608  /d",
			"1536   4608    /d/a")},
		{name: "dus", args: []string{"-dus", "/d"}, stdout: lines("71536  214608  /d"),
			stderr: "dus: DEPRECATED: Please use 'du -s' instead.\n"},
		{name: "human", args: []string{"-du", "-s", "-h", "/d"}, stdout: lines("69.9 K  209.6 K  /d")},
		{name: "header", args: []string{"-du", "-s", "-v", "/d"}, stdout: lines(
			"SIZE   DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS  FULL_PATH_NAME",
			"71536  214608                                 /d")},
		{name: "file", args: []string{"-du", "/d/a"}, stdout: lines("1536  4608  /d/a")},
		{name: "working dir", args: []string{"-du"}, stdout: lines("12  36  notes.txt")},
		{name: "empty", args: []string{"-du", "/empty"}},
		{name: "missing", args: []string{"-du", "/nope"}, stderr: "du: `/nope': No such file or directory\n", code: 1},
	})
}

func TestDf(t *testing.T) {
	runCases(t, []shellCase{
		{name: "bytes", args: []string{"-df"}, stdout: lines(
			"Filesystem                          Size         Used    Available  Use%",
			uri+"  107374182400  10737418240  96636764160   10%")},
		{name: "human", args: []string{"-df", "-h", "/"}, stdout: lines(
			"Filesystem                   Size  Used  Available  Use%",
			uri+"  100 G  10 G       90 G   10%")},
		{name: "missing", args: []string{"-df", "/nope"}, stderr: "df: `/nope': No such file or directory\n", code: 1},
	})
}

func TestTest(t *testing.T) {
	usage := "Usage: hdfs dfs [generic options] -test -[defswrz] <path>\n"
	runCases(t, []shellCase{
		{name: "d yes", args: []string{"-test", "-d", "/d"}},
		{name: "d no", args: []string{"-test", "-d", "/d/a"}, code: 1},
		{name: "e no", args: []string{"-test", "-e", "/nope"}, code: 1},
		{name: "e yes", args: []string{"-test", "-e", uri + "/d/a"}},
		{name: "f yes", args: []string{"-test", "-f", "/d/a"}},
		{name: "f no", args: []string{"-test", "-f", "/d"}, code: 1},
		{name: "s yes", args: []string{"-test", "-s", "/d/a"}},
		{name: "s no", args: []string{"-test", "-s", "/d/b"}, code: 1},
		{name: "z yes", args: []string{"-test", "-z", "/d/b"}},
		{name: "z no", args: []string{"-test", "-z", "/d/a"}, code: 1},
		{name: "no flag", args: []string{"-test", "/d"}, stderr: "-test: No test flag given\n" + usage, code: 255},
		{name: "two flags", args: []string{"-test", "-d", "-e", "/d"}, stderr: "-test: Only one test flag is allowed\n" + usage, code: 255},
		{name: "two paths", args: []string{"-test", "-d", "/d", "/e"},
			stderr: "-test: Too many arguments: expected 1 but got 2\n" + usage, code: 255},
		{name: "w yes", args: []string{"-test", "-w", "/d/a"}},
		{name: "w no", args: []string{"-test", "-w", "/"}, code: 1},
		{name: "r no", args: []string{"-test", "-r", "/secret"}, code: 1},
		{name: "r yes", args: []string{"-test", "-r", "/tmp"}},
	})
}

func TestSetrep(t *testing.T) {
	usage := "Usage: hdfs dfs [generic options] -setrep [-R] [-w] <rep> <path> ...\n"
	repl := func(p string, want uint32) func(t *testing.T, nn *fakeNN) {
		return func(t *testing.T, nn *fakeNN) {
			if got := nn.node(p).repl; got != want {
				t.Errorf("%s replication %d, want %d", p, got, want)
			}
		}
	}
	runCases(t, []shellCase{
		{name: "file", args: []string{"-setrep", "2", "/d/a"}, stdout: "Replication 2 set: /d/a\n", check: repl("/d/a", 2)},
		{name: "tree", args: []string{"-setrep", "-R", "1", "/d"}, stdout: lines(
			"Replication 1 set: /d/a",
			"Replication 1 set: /d/b",
			"Replication 1 set: /d/sub/c"), check: repl("/d/sub/c", 1)},
		{name: "bad number", args: []string{"-setrep", "x", "/d/a"},
			stderr: "setrep: Illegal replication, a positive integer expected\n-setrep: For input string: \"x\"\n" + usage, code: 255},
		{name: "zero", args: []string{"-setrep", "0", "/d/a"}, stderr: "-setrep: replication must be >= 1\n" + usage, code: 255},
		{name: "missing", args: []string{"-setrep", "2", "/nope"}, stderr: "setrep: `/nope': No such file or directory\n", code: 1},
	})
}

func TestDispatch(t *testing.T) {
	runCases(t, []shellCase{
		{name: "usage one", args: []string{"-usage", "ls"}, stdout: usageLs},
		{name: "help one", args: []string{"-help", "-mkdir"}, stdout: "-mkdir [-p] <path> ... :\n  Create each directory.\n" +
			"  -p: Create missing parents and accept directories that already exist.\n\n"},
		{name: "help unknown", args: []string{"-help", "nope"},
			stderr: "-help: `nope': Unknown command\nUsage: hdfs dfs [generic options] -help [cmd ...]\n", code: 255},
		{name: "unknown", args: []string{"-nope"}, stderr: "-nope: Unknown command\n", code: 255},
		{name: "missing dash", args: []string{"ls", "/"},
			stderr: "ls: Unknown command\nDid you mean -ls?  This command begins with a dash.\n", code: 255},
		{name: "unsupported", args: []string{"-moveToLocal", "/d", "/tmp/x"}, stderr: "moveToLocal: not supported yet\n", code: 1},
		{name: "usage of unsupported", args: []string{"-usage", "moveToLocal"}, stderr: "usage: moveToLocal: not supported yet\n", code: 1},
	})
}

func TestUsageAll(t *testing.T) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), Env{Stdout: &out, Stderr: &errb}, nil, nil)
	if code != ExitUsage || out.Len() != 0 {
		t.Errorf("code %d, stdout %q", code, out.String())
	}
	want := "Usage: hdfs dfs [generic options]\n\t[-appendToFile <localsrc> ... <dst>]\n\t[-cat [-ignoreCrc] <src> ...]\n"
	if !strings.HasPrefix(errb.String(), want) || !strings.Contains(errb.String(), "\t[-usage [cmd ...]]\n\nGeneric options supported are:\n") {
		t.Errorf("usage:\n%s", errb.String())
	}
	out.Reset()
	if code := Run(context.Background(), Env{Stdout: &out}, nil, []string{"-help"}); code != 0 {
		t.Errorf("-help: %d", code)
	}
	// Every listed command has its help paragraph.
	for _, cm := range listed(commands()) {
		if !strings.Contains(out.String(), "\n"+usageLine(cm)+" :\n  ") {
			t.Errorf("-help lacks %s", cm.name)
		}
	}
}
