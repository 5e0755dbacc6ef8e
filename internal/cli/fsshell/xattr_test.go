package fsshell

import (
	"bytes"
	"context"
	"os/user"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
)

// realShell runs shell commands against a real NameNode (no DataNodes).
type realShell struct {
	fs, super *client.FileSystem
}

func newRealShell(t *testing.T, kv ...conf.KeyValue) *realShell {
	t.Helper()
	nn := nntest.New(t, kv...)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	open := func(name string) *client.FileSystem {
		f, err := client.New(client.Options{Addresses: []string{nn.Addr}, User: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	s := &realShell{super: open(u.Username), fs: open("alice")}
	ctx := context.Background()
	if err := s.super.MkdirAll(ctx, "/d", 0o777); err != nil {
		t.Fatal(err)
	}
	if err := s.super.Chmod(ctx, "/d", 0o777); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *realShell) run(fsys *client.FileSystem, args ...string) (stdout, stderr string, code int) {
	return s.runAt(now, fsys, args...)
}

func (s *realShell) runAt(at time.Time, fsys *client.FileSystem, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), PollInterval: time.Millisecond,
		Now: func() time.Time { return at }, TZ: time.UTC}
	code = Run(context.Background(), env, fsys, args)
	return out.String(), errb.String(), code
}

func TestSetfattrGetfattr(t *testing.T) {
	s := newRealShell(t)
	ctx := context.Background()
	if err := s.fs.CreateEmptyFile(ctx, "/d/f", 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.fs.MkdirAll(ctx, "/d/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	usageSet := "Usage: hdfs dfs [generic options] -setfattr {-n name [-v value] | -x name} <path>\n"
	usageGet := "Usage: hdfs dfs [generic options] -getfattr [-R] {-n name | -d} [-e en] <path>\n"
	for _, tc := range []struct {
		name           string
		args           []string
		super          bool
		stdout, stderr string
		code           int
	}{
		{name: "set text", args: []string{"-setfattr", "-n", "user.color", "-v", "blue", "/d/f"}},
		{name: "set quoted", args: []string{"-setfattr", "-n", "user.q", "-v", `"a b"`, "/d/f"}},
		{name: "set hex", args: []string{"-setfattr", "-n", "user.h", "-v", "0x00ff", "/d/f"}},
		{name: "set no value", args: []string{"-setfattr", "-n", "user.empty", "/d/f"}},
		{name: "set on dir", args: []string{"-setfattr", "-n", "user.dir", "-v", "0sAQI=", "/d/sub"}},
		{name: "get one", args: []string{"-getfattr", "-n", "user.color", "/d/f"}, stdout: "# file: /d/f\nuser.color=\"blue\"\n"},
		{name: "get hex", args: []string{"-getfattr", "-n", "user.color", "-e", "hex", "/d/f"}, stdout: "# file: /d/f\nuser.color=0x626c7565\n"},
		{name: "get base64", args: []string{"-getfattr", "-n", "user.h", "-e", "base64", "/d/f"}, stdout: "# file: /d/f\nuser.h=0sAP8=\n"},
		{name: "get empty", args: []string{"-getfattr", "-n", "user.empty", "/d/f"}, stdout: "# file: /d/f\nuser.empty\n"},
		{name: "dump", args: []string{"-getfattr", "-d", "/d/f"},
			stdout: "# file: /d/f\nuser.color=\"blue\"\nuser.q=\"a b\"\nuser.empty\nuser.h=\"\x00\xef\xbf\xbd\"\n"}, // java.util.HashMap order
		{name: "dump recursive", args: []string{"-getfattr", "-R", "-d", "-e", "hex", "/d"},
			stdout: "# file: /d\n# file: /d/f\nuser.color=0x626c7565\nuser.q=0x612062\nuser.empty\nuser.h=0x00ff\n# file: /d/sub\nuser.dir=0x0102\n"},
		{name: "missing attr", args: []string{"-getfattr", "-n", "user.nope", "/d/f"}, stdout: "# file: /d/f\n",
			stderr: "getfattr: At least one of the attributes provided was not found.\n", code: 1},
		{name: "missing file", args: []string{"-getfattr", "-d", "/d/nope"}, stderr: "getfattr: `/d/nope': No such file or directory\n", code: 1},
		{name: "trusted as user", args: []string{"-setfattr", "-n", "trusted.t", "-v", "x", "/d/f"},
			stderr: "setfattr: User doesn't have permission for xattr: trusted.t\n", code: 1},
		{name: "trusted as superuser", super: true, args: []string{"-setfattr", "-n", "trusted.t", "-v", "x", "/d/f"}},
		{name: "bad prefix", args: []string{"-setfattr", "-n", "foo.t", "-v", "x", "/d/f"},
			stderr: "setfattr: An XAttr name must be prefixed with user/trusted/security/system/raw, followed by a '.'\n", code: 1},
		{name: "remove", args: []string{"-setfattr", "-x", "user.q", "/d/f"}},
		{name: "remove again", args: []string{"-setfattr", "-x", "user.q", "/d/f"},
			stderr: "setfattr: No matching attributes found for remove operation\n", code: 1},
		{name: "no option", args: []string{"-setfattr", "/d/f"}, stderr: "-setfattr: Must specify '-n name' or '-x name' option.\n" + usageSet, code: 255},
		{name: "both options", args: []string{"-setfattr", "-n", "user.a", "-x", "user.a", "/d/f"}, stderr: "-setfattr: Can not specify both '-n name' and '-x name' option.\n" + usageSet, code: 255},
		{name: "no path", args: []string{"-getfattr", "-d"}, stderr: "-getfattr: <path> is missing.\n" + usageGet, code: 255},
		{name: "n and d", args: []string{"-getfattr", "-d", "-n", "user.a", "/d/f"}, stderr: "-getfattr: Must specify '-n name' or '-d' option.\n" + usageGet, code: 255},
		{name: "bad encoding", args: []string{"-getfattr", "-d", "-e", "rot13", "/d/f"}, stderr: "-getfattr: Invalid/unsupported encoding option specified: rot13\n" + usageGet, code: 255},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := s.fs
			if tc.super {
				fsys = s.super
			}
			out, errOut, code := s.run(fsys, tc.args...)
			if out != tc.stdout || errOut != tc.stderr || code != tc.code {
				t.Fatalf("got stdout %q stderr %q code %d\nwant stdout %q stderr %q code %d", out, errOut, code, tc.stdout, tc.stderr, tc.code)
			}
		})
	}
}
