package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/minicluster"
)

// fsck resolves its path as Hadoop's Path does.
func TestFsckPath(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/", "/"}, {"/a/b/", "/a/b"}, {"hdfs://nn:8020/x", "/x"}, {"hdfs:///x/../y", "/y"}, {"rel", "/user/u/rel"}, {"hdfs://nn:8020", "/"},
	} {
		if got, err := fsckPath(c.in, "u"); err != nil || got != c.want {
			t.Errorf("fsckPath(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := fsckPath("file:///tmp", "u"); err == nil {
		t.Error("a file: path was accepted")
	}
}

// The exit status follows the report's last line, as Hadoop's DFSck.
func TestFsckStatus(t *testing.T) {
	for _, c := range []struct {
		last string
		want int
	}{
		{"The filesystem under path '/' is HEALTHY", 0},
		{"The filesystem under path '/x' is CORRUPT", 1},
		{"Path '/nope' does not exist", 0},
		{"Incorrect blockId format: foo", 0},
		{"Fsck on path '/' FAILED", 255},
	} {
		if got := fsckStatus(c.last); got != c.want {
			t.Errorf("fsckStatus(%q) = %d, want %d", c.last, got, c.want)
		}
	}
}

// In an HA nameservice hdfs fsck asks the active NameNode, found through
// /isActive, after a failover too.
func TestFsckHA(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an HA cluster")
	}
	ctx := context.Background()
	dir := t.TempDir()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: filepath.Join(dir, "cluster"), DataNodes: -1, HA: true,
		SharedEditsDir: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	confDir := filepath.Join(dir, "conf")
	if err := c.WriteConfig(confDir); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HADOOP_CONF_DIR": confDir, "HADOOP_USER_NAME": "tester"}
	for round, from := range []int{0, 1} {
		out, errs, code := run(t, env, "fsck", "/")
		if code != 0 || !strings.HasSuffix(strings.TrimSpace(out), "The filesystem under path '/' is HEALTHY") {
			t.Fatalf("round %d: fsck exited %d:\n%s\n%s", round, code, out, errs)
		}
		if want := "http://" + c.NameNodes()[from].HTTPAddr().String() + "/fsck?"; !strings.Contains(errs, "Connecting to namenode via "+want) {
			t.Fatalf("round %d: fsck did not ask the active NameNode %s:\n%s", round, want, errs)
		}
		if round == 0 {
			if err := c.Failover(ctx, 0, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestFsckUsageExit: as Hadoop's DFSck, fsck with no arguments, with
// -files first, with an unknown option or with two paths prints its usage
// on stderr and exits -1 (255), before it asks any NameNode.
func TestFsckUsageExit(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{nil, "Usage: hdfs fsck <path> "},
		{[]string{"-files", "/"}, "Usage: hdfs fsck <path> "},
		{[]string{"/", "-nosuchoption"}, "fsck: Illegal option '-nosuchoption'\nUsage: hdfs fsck <path> "},
		{[]string{"/a", "/b"}, "fsck: can only operate on one path at a time '/b'\nUsage: hdfs fsck <path> "},
	} {
		out, errOut, code := run(t, nil, append([]string{"fsck", "-fs", "hdfs://127.0.0.1:1"}, tc.args...)...)
		if code != 255 || out != "" || !strings.HasPrefix(errOut, tc.stderr) {
			t.Errorf("fsck %v: exit %d, stdout %q, stderr %q; want 255 and %q", tc.args, code, out, errOut, tc.stderr)
		}
	}
}
