package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// rclone runs rclone with a remote "h" of type hdfs pointed at the cluster,
// configured only through environment variables (no config file), and
// returns its standard output.
func (c *cluster) rclone(t *testing.T, args ...string) string {
	t.Helper()
	out, _ := c.rcloneLog(t, args...)
	return out
}

// rcloneLog is rclone that also returns the log (standard error).
func (c *cluster) rcloneLog(t *testing.T, args ...string) (stdout, log string) {
	t.Helper()
	bin := testtool.Require(t, "rclone", "apt-get install -y rclone")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "RCLONE_CONFIG=/dev/null", "RCLONE_CONFIG_H_TYPE=hdfs",
		"RCLONE_CONFIG_H_NAMENODE="+c.nnAddr, "RCLONE_CONFIG_H_USERNAME="+osUser(t), "HADOOP_CONF_DIR=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("rclone %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// TestRclone: rclone's hdfs backend (a third stock client, built on the Go
// HDFS client) copies a tree in, lists it, verifies every byte, keeps the
// modification times (a second sync transfers nothing), renames, reads,
// reports the file system's size and deletes.
func TestRclone(t *testing.T) {
	testtool.Require(t, "rclone", "apt-get install -y rclone")
	c := startCluster(t, 3, map[string]string{"dfs.blocksize": "1048576"})
	src := t.TempDir()
	big, _ := randomFile(t, 2<<20+777, 11) // three blocks
	if err := os.Rename(big, filepath.Join(src, "big.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(src, "sub", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"sub/a.txt": "alpha\n", "sub/deeper/b.txt": "beta\n", "empty": ""} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	c.rclone(t, "copy", src, "h:/rc/tree")
	var listed []struct {
		Path  string
		Size  int64
		IsDir bool
	}
	if err := json.Unmarshal([]byte(c.rclone(t, "lsjson", "-R", "h:/rc/tree")), &listed); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range listed {
		if !e.IsDir {
			got = append(got, e.Path)
		}
	}
	sort.Strings(got)
	if want := []string{"big.bin", "empty", "sub/a.txt", "sub/deeper/b.txt"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("rclone lsjson: %v, want %v", got, want)
	}
	// Every byte, through rclone's own reads.
	c.rclone(t, "check", "--download", src, "h:/rc/tree")
	// Our CLI sees what rclone wrote.
	if out := c.dfs(t, "-cat", "/rc/tree/sub/deeper/b.txt"); out != "beta\n" {
		t.Fatalf("our -cat of rclone's file: %q", out)
	}
	// rclone set the source's modification times: a second sync transfers
	// nothing, and after a local change exactly the changed file.
	if _, log := c.rcloneLog(t, "sync", "-v", src, "h:/rc/tree"); strings.Contains(log, "Copied") {
		t.Fatalf("second sync copied files again:\n%s", log)
	}
	if err := os.WriteFile(filepath.Join(src, "empty"), []byte("not any more\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, log := c.rcloneLog(t, "sync", "-v", src, "h:/rc/tree"); strings.Count(log, "Copied") != 1 || !strings.Contains(log, "empty: Copied") {
		t.Fatalf("sync after changing one file:\n%s", log)
	}
	if out := c.dfs(t, "-cat", "/rc/tree/empty"); out != "not any more\n" {
		t.Fatalf("our -cat after rclone replaced the file: %q", out)
	}
	c.rclone(t, "moveto", "h:/rc/tree/sub/a.txt", "h:/rc/moved.txt")
	if out := c.rclone(t, "cat", "h:/rc/moved.txt"); out != "alpha\n" {
		t.Fatalf("rclone cat after moveto: %q", out)
	}
	if out := c.rclone(t, "about", "h:"); !strings.Contains(out, "Total:") {
		t.Fatalf("rclone about: %q", out)
	}
	c.rclone(t, "purge", "h:/rc")
	if out := c.dfs(t, "-ls", "/"); strings.Contains(out, "/rc") {
		t.Fatalf("after rclone purge:\n%s", out)
	}
}
