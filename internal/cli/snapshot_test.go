package cli

import (
	"regexp"
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
			"allowSnapshot: Nested snapshottable directories not allowed: path=/s/a, the ancestor /s is already a snapshottable directory.\n", 1},
		{[]string{"dfsadmin", "-fs", fs, "-disallowSnapshot", "/t"}, "Disallowing snapshot on /t succeeded\n", "", 0},
		{[]string{"dfsadmin", "-fs", fs, "-disallowSnapshot", "/t"}, "", "disallowSnapshot: Directory is not a snapshottable directory: /t\n", 1},
		{[]string{"dfsadmin", "-fs", fs, "-allowSnapshot", "/nope"}, "", "allowSnapshot: Directory does not exist: /nope\n", 1},
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
