package fsshell

import (
	"context"
	"strings"
	"testing"
)

func TestSetfaclGetfacl(t *testing.T) {
	s := newRealShell(t)
	ctx := context.Background()
	if err := s.fs.MkdirAll(ctx, "/d/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.fs.CreateEmptyFile(ctx, "/d/sub/f", 0o644); err != nil {
		t.Fatal(err)
	}
	usage := "Usage: hdfs dfs [generic options] -setfacl [-R] [{-b|-k} {-m|-x <acl_spec>} <path>]|[--set <acl_spec> <path>]\n"
	for _, tc := range []struct {
		name           string
		args           []string
		stdout, stderr string
		code           int
	}{
		{name: "plain", args: []string{"-getfacl", "/d/sub"},
			stdout: "# file: /d/sub\n# owner: alice\n# group: supergroup\nuser::rwx\ngroup::r-x\nother::r-x\n\n"},
		{name: "modify", args: []string{"-setfacl", "-m", "user:bob:rwx,default:group:ops:r-x", "/d/sub"}},
		{name: "show", args: []string{"-getfacl", "/d/sub"},
			stdout: "# file: /d/sub\n# owner: alice\n# group: supergroup\nuser::rwx\nuser:bob:rwx\ngroup::r-x\nmask::rwx\nother::r-x\n" +
				"default:user::rwx\ndefault:group::r-x\ndefault:group:ops:r-x\ndefault:mask::r-x\ndefault:other::r-x\n\n"},
		{name: "chmod narrows", args: []string{"-chmod", "750", "/d/sub"}},
		{name: "effective", args: []string{"-getfacl", "/d/sub"},
			stdout: "# file: /d/sub\n# owner: alice\n# group: supergroup\nuser::rwx\nuser:bob:rwx\t#effective:r-x\ngroup::r-x\nmask::r-x\nother::---\n" +
				"default:user::rwx\ndefault:group::r-x\ndefault:group:ops:r-x\ndefault:mask::r-x\ndefault:other::r-x\n\n"},
		{name: "ls plus", args: []string{"-ls", "-d", "/d/sub"}, stdout: "drwxr-x---+  - alice supergroup          0 "},
		{name: "remove entry", args: []string{"-setfacl", "-x", "user:bob", "/d/sub"}},
		{name: "remove default", args: []string{"-setfacl", "-k", "/d/sub"}},
		{name: "after", args: []string{"-getfacl", "-R", "/d/sub"},
			stdout: "# file: /d/sub\n# owner: alice\n# group: supergroup\nuser::rwx\ngroup::r-x\nmask::r-x\nother::---\n\n" +
				"# file: /d/sub/f\n# owner: alice\n# group: supergroup\nuser::rw-\ngroup::r--\nother::r--\n\n"},
		{name: "bad spec", args: []string{"-setfacl", "-m", "user:bob:rwz", "/d/sub"}, stderr: "-setfacl: Invalid permission in <aclSpec> : user:bob:rwz\n" + usage, code: 255},
		{name: "bad type", args: []string{"-setfacl", "-m", "usr:bob:rwx", "/d/sub"}, stderr: "-setfacl: Invalid type of acl in <aclSpec> :usr:bob:rwx\n" + usage, code: 255},
		{name: "both", args: []string{"-setfacl", "-b", "-m", "user:bob:rwx", "/d/sub"}, stderr: "-setfacl: Specified flags contains both remove and modify flags\n" + usage, code: 255},
		{name: "missing path", args: []string{"-setfacl", "-m", "user:bob:rwx"}, stderr: "-setfacl: Missing either <acl_spec> or <path>\n" + usage, code: 255},
		{name: "default on file", args: []string{"-setfacl", "-m", "default:user:bob:rwx", "/d/sub/f"},
			stderr: "setfacl: Invalid ACL: only directories may have a default ACL. Path: /d/sub/f\n", code: 1},
		{name: "set minimal removes", args: []string{"-setfacl", "--set", "user::rwx,group::r-x,other::r-x", "/d/sub"}},
		{name: "not owner", args: []string{"-setfacl", "-b", "/d"}, stderr: "setfacl: Permission denied. user=alice is not the owner of inode=/d\n", code: 1},
		{name: "missing", args: []string{"-getfacl", "/d/nope"}, stderr: "getfacl: `/d/nope': No such file or directory\n", code: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := s.run(s.fs, tc.args...)
			if tc.name == "ls plus" && strings.HasPrefix(out, tc.stdout) {
				out = tc.stdout // the rest is the directory's mtime
			}
			if out != tc.stdout || errOut != tc.stderr || code != tc.code {
				t.Fatalf("got stdout %q stderr %q code %d\nwant stdout %q stderr %q code %d", out, errOut, code, tc.stdout, tc.stderr, tc.code)
			}
		})
	}
	// An ACL entry grants what the permission bits do not.
	if err := s.super.MkdirAll(ctx, "/p", 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, code := s.run(s.fs, "-ls", "/p"); code != 1 {
		t.Fatal("alice listed a 0700 directory of another user")
	}
	if out, errOut, code := s.run(s.super, "-setfacl", "-m", "user:alice:r-x", "/p"); code != 0 {
		t.Fatalf("setfacl as superuser: %q %q", out, errOut)
	}
	if _, errOut, code := s.run(s.fs, "-ls", "/p"); code != 0 || strings.Contains(errOut, "denied") {
		t.Fatalf("alice with an ACL entry: %q %d", errOut, code)
	}
}
