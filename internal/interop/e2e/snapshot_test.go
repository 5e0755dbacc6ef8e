package e2e

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestStockSnapshots: the stock client allows snapshots on a directory,
// takes them, stats and lists through .snapshot, reads a file through a
// snapshot after the live file was appended to, overwritten and deleted —
// also after the NameNode was killed and restarted — is refused writes
// below .snapshot, and deletes the snapshots, after which the DataNode
// drops the blocks only they held.
func TestStockSnapshots(t *testing.T) {
	parallel(t)
	c := startCluster(t, 1, fastFailure)
	cl := c.stockClient(t)
	put := func(p string, data []byte) {
		t.Helper()
		w, err := cl.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.MkdirAll("/snap/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	// A whole number of 512-byte checksum chunks: the stock client reads
	// whatever the DataNode sends, and a DataNode sends whole chunks, so
	// with a length inside a chunk that an append later filled, the stock
	// client would read past the snapshot's length (HDFS's DataNode does
	// the same). hdfs dfs -cat cuts at the length; checked with /snap/h.
	v1 := bytes.Repeat([]byte("first version, 32 bytes long...\n"), 28*16)
	put("/snap/f", v1)
	put("/snap/h", []byte("hello\n"))
	put("/snap/sub/g", []byte("gee"))
	if err := cl.AllowSnapshots("/snap"); err != nil {
		t.Fatalf("AllowSnapshots: %v", err)
	}
	p, err := cl.CreateSnapshot("/snap", "s1")
	if err != nil || p != "/snap/.snapshot/s1" {
		t.Fatalf("CreateSnapshot = %q, %v", p, err)
	}
	if _, err := cl.CreateSnapshot("/snap", "s1"); err == nil || !strings.Contains(err.Error(), "SnapshotException") {
		t.Fatalf("second s1: %v", err)
	}

	// Append: the snapshot keeps its length and bytes.
	for _, p := range []string{"/snap/f", "/snap/h"} {
		a, err := cl.Append(p)
		if err != nil {
			t.Fatal(err)
		}
		a.Write([]byte("appended\n"))
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.dfs(t, "-cat", "/snap/.snapshot/s1/h"); got != "hello\n" {
		t.Fatalf("hdfs dfs -cat of the snapshot = %q", got)
	}
	fi, err := cl.Stat("/snap/.snapshot/s1/f")
	if err != nil || fi.Size() != int64(len(v1)) {
		t.Fatalf("Stat through the snapshot: %v, %v", fi, err)
	}
	if got := readStock(t, cl, "/snap/.snapshot/s1/f"); !bytes.Equal(got, v1) {
		t.Fatalf("snapshot read after append: %d bytes", len(got))
	}

	// Overwrite (delete and create again) and a second snapshot.
	if err := cl.Remove("/snap/f"); err != nil {
		t.Fatal(err)
	}
	v2 := []byte("second version")
	put("/snap/f", v2)
	if _, err := cl.CreateSnapshot("/snap", "s2"); err != nil {
		t.Fatal(err)
	}
	if err := cl.RemoveAll("/snap/sub"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/snap/f", "/snap/h"} {
		if err := cl.Remove(p); err != nil {
			t.Fatal(err)
		}
	}

	check := func(when string) {
		t.Helper()
		if got := readStock(t, cl, "/snap/.snapshot/s1/f"); !bytes.Equal(got, v1) {
			t.Fatalf("%s: s1/f is %d bytes, want %d", when, len(got), len(v1))
		}
		if got := readStock(t, cl, "/snap/.snapshot/s2/f"); !bytes.Equal(got, v2) {
			t.Fatalf("%s: s2/f = %q", when, got)
		}
		if got := readStock(t, cl, "/snap/.snapshot/s1/sub/g"); string(got) != "gee" {
			t.Fatalf("%s: s1/sub/g = %q", when, got)
		}
		l, err := cl.ReadDir("/snap/.snapshot")
		if err != nil {
			t.Fatalf("%s: ReadDir(.snapshot): %v", when, err)
		}
		var names []string
		for _, e := range l {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		if strings.Join(names, ",") != "s1,s2" {
			t.Fatalf("%s: .snapshot lists %v", when, names)
		}
		if _, err := cl.Stat("/snap/f"); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: live /snap/f: %v", when, err)
		}
	}
	check("after delete")
	if err := cl.Mkdir("/snap/.snapshot/s1/x", 0o755); err == nil || !strings.Contains(err.Error(), "SnapshotAccessControlException") {
		t.Fatalf("mkdir in a snapshot: %v", err)
	}

	// The snapshots survive a kill -9 of the NameNode (edits replay) ...
	c.kill(c.nn)
	c.startNameNode()
	c.waitLive(1, 60*time.Second)
	cl = c.stockClient(t)
	check("after a restart")
	// ... and a checkpoint (the image).
	c.dfsadmin(t, "-safemode", "enter")
	c.dfsadmin(t, "-saveNamespace")
	c.dfsadmin(t, "-safemode", "leave")
	c.kill(c.nn)
	c.startNameNode()
	c.waitLive(1, 60*time.Second)
	cl = c.stockClient(t)
	check("after saveNamespace and a restart")

	before := c.blockFiles()
	waitSafeModeOff(t, c)
	for _, s := range []string{"s1", "s2"} {
		if err := cl.DeleteSnapshot("/snap", s); err != nil {
			t.Fatalf("DeleteSnapshot %s: %v", s, err)
		}
	}
	if _, err := cl.Stat("/snap/.snapshot/s1/f"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("deleted snapshot still there: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(c.blockFiles()) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("block files left after deleting the snapshots: %v (before: %v)", c.blockFiles(), before)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(before) == 0 {
		t.Fatal("no block files before the snapshots were deleted")
	}
	if err := cl.DisallowSnapshots("/snap"); err != nil {
		t.Fatalf("DisallowSnapshots: %v", err)
	}
}

// blockFiles lists the finalized block files of every DataNode.
func (c *cluster) blockFiles() []string {
	files, _ := filepath.Glob(filepath.Join(c.root, "dn*", "data", "current", "BP-*", "current", "finalized", "*", "*", "blk_*[0-9]"))
	return files
}

func (c *cluster) dfsadmin(t *testing.T, args ...string) string {
	t.Helper()
	return c.run(t, c.confDir("nn"), append([]string{"dfsadmin"}, args...)...)
}

// waitSafeModeOff waits until the restarted NameNode leaves safe mode.
func waitSafeModeOff(t *testing.T, c *cluster) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, _ := c.runErr(c.confDir("nn"), nil, "dfsadmin", "-safemode", "get")
		if strings.Contains(out, "Safe mode is OFF") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still in safe mode: %s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
