package e2e

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCopyOnTruncate: against separate processes, `hdfs dfs -truncate -w`
// cuts inside the second block of a file a snapshot holds. The stock client
// then reads the original bytes through the snapshot and the prefix from
// the file, also after a kill -9 of the NameNode; an append works after it;
// deleting the snapshot deletes the old block's block files from every
// DataNode, and only them.
func TestCopyOnTruncate(t *testing.T) {
	parallel(t)
	c := startCluster(t, 3, fastFailure) // 1 MiB blocks
	cl := c.stockClient(t)
	orig := make([]byte, 1<<20+1<<19+123)
	for i := range orig {
		orig[i] = byte(i*13 + i>>9)
	}
	if err := cl.MkdirAll("/cot", 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := cl.Create("/cot/f")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(orig)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cl.AllowSnapshots("/cot"); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateSnapshot("/cot", "s"); err != nil {
		t.Fatal(err)
	}
	// The old second block's files: the ones of its length.
	oldLen := int64(len(orig) - 1<<20)
	ofLen := func(n int64) []string {
		var out []string
		for _, f := range c.blockFiles() {
			if fi, err := os.Stat(f); err == nil && fi.Size() == n {
				out = append(out, f)
			}
		}
		return out
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(ofLen(oldLen)) != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the second block has %d block files, want 3", len(ofLen(oldLen)))
		}
		time.Sleep(100 * time.Millisecond)
	}
	oldFiles := ofLen(oldLen)

	const newLen = 1<<20 + 51431 // inside a 512-byte checksum chunk
	out := c.dfs(t, "-truncate", "-w", strconv.Itoa(newLen), "/cot/f")
	if !strings.Contains(out, "Truncated /cot/f to length: "+strconv.Itoa(newLen)) {
		t.Fatalf("hdfs dfs -truncate -w: %q", out)
	}
	check := func(when string) {
		t.Helper()
		if got := readStock(t, cl, "/cot/.snapshot/s/f"); !bytes.Equal(got, orig) {
			t.Fatalf("%s: snapshot read %d bytes, want the %d original ones", when, len(got), len(orig))
		}
		if got := readStock(t, cl, "/cot/f"); !bytes.Equal(got, orig[:newLen]) {
			t.Fatalf("%s: file read %d bytes, want the %d-byte prefix", when, len(got), newLen)
		}
	}
	check("after the truncate")
	if got := ofLen(oldLen); len(got) != 3 {
		t.Fatalf("the snapshot's block files after the truncate: %v, want %v", got, oldFiles)
	}
	if got := ofLen(newLen - 1<<20); len(got) != 3 {
		t.Fatalf("%d block files of the copied block, want 3", len(got))
	}

	c.kill(c.nn)
	c.startNameNode()
	c.waitLive(3, 60*time.Second)
	waitSafeModeOff(t, c)
	cl = c.stockClient(t)
	check("after kill -9 of the NameNode")

	a, err := cl.Append("/cot/f")
	if err != nil {
		t.Fatal(err)
	}
	tail := []byte("appended after the copy-on-truncate\n")
	a.Write(tail)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readStock(t, cl, "/cot/f"); !bytes.Equal(got, append(orig[:newLen:newLen], tail...)) {
		t.Fatalf("after the append: %d bytes", len(got))
	}

	if err := cl.DeleteSnapshot("/cot", "s"); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		gone := 0
		for _, f := range oldFiles {
			if _, err := os.Stat(f); os.IsNotExist(err) {
				gone++
			}
		}
		if gone == len(oldFiles) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the old block's %d block files left after deleting the snapshot", len(oldFiles)-gone, len(oldFiles))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := len(c.blockFiles()); n != 6 {
		t.Fatalf("%d block files left, want 6 (two blocks, three replicas each): %v", n, c.blockFiles())
	}
	if got := readStock(t, cl, "/cot/f"); len(got) != newLen+len(tail) {
		t.Fatalf("file after the snapshot's deletion: %d bytes", len(got))
	}
}
