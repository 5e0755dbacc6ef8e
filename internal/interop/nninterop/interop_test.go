package nninterop

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"sort"
	"syscall"
	"testing"
	"time"

	hdfs "github.com/colinmarc/hdfs/v2"

	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
)

func client(t *testing.T, addr, user string) *hdfs.Client {
	t.Helper()
	c, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: []string{addr}, User: user})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func osUser(t *testing.T) string {
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}

// setup makes /_test (0777) as the superuser, like the stock client's suite.
func setup(t *testing.T) (addr string, super, c1 *hdfs.Client) {
	nn := nntest.New(t)
	super = client(t, nn.Addr, osUser(t))
	if err := super.MkdirAll("/_test", 0o777); err != nil {
		t.Fatal(err)
	}
	if err := super.Chmod("/_test", 0o777); err != nil {
		t.Fatal(err)
	}
	return nn.Addr, super, client(t, nn.Addr, "gohdfs1")
}

func TestMkdirStatAndErrors(t *testing.T) {
	_, _, c := setup(t)
	if err := c.MkdirAll("/_test/a/b/c", 0o755); err != nil {
		t.Fatalf("MkdirAll: %v", err)
	}
	fi, err := c.Stat("/_test/a/b/c")
	if err != nil || !fi.IsDir() || fi.Name() != "c" || fi.Mode().Perm() != 0o755 {
		t.Fatalf("Stat = %v, %v (mode %v)", fi, err, fi.Mode())
	}
	if fi.Sys().(*hdfs.FileStatus).GetOwner() != "gohdfs1" {
		t.Fatalf("owner %q", fi.Sys().(*hdfs.FileStatus).GetOwner())
	}
	if _, err := c.Stat("/_test/nope"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Stat missing: %v", err)
	}
	if _, err := c.Stat("/_test/a/b/"); err != nil {
		t.Fatalf("Stat with trailing slash: %v", err)
	}
	if err := c.Mkdir("/_test/x/y", 0o755); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Mkdir without parent: %v", err)
	}
	if err := c.Mkdir("/_test/a", 0o755); !errors.Is(err, os.ErrExist) {
		t.Fatalf("Mkdir existing: %v", err)
	}
	if err := c.CreateEmptyFile("/_test/a/f"); err != nil {
		t.Fatalf("CreateEmptyFile: %v", err)
	}
	if err := c.CreateEmptyFile("/_test/a/f"); !errors.Is(err, os.ErrExist) {
		t.Fatalf("CreateEmptyFile twice: %v", err)
	}
	fi, err = c.Stat("/_test/a/f")
	if err != nil || fi.IsDir() || fi.Size() != 0 || fi.Mode().Perm() != 0o644 {
		t.Fatalf("Stat file = %v, %v", fi, err)
	}
	cs, err := c.GetContentSummary("/_test/a")
	if err != nil || cs.DirectoryCount() != 3 || cs.FileCount() != 1 {
		t.Fatalf("content summary: %+v %v", cs, err)
	}
}

func TestReadDirMany(t *testing.T) {
	_, super, c := setup(t)
	const n = 2500
	if err := c.Mkdir("/_test/many", 0o755); err != nil {
		t.Fatal(err)
	}
	want := make([]string, 0, n)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("f%05d", i)
		want = append(want, name)
		if err := c.CreateEmptyFile("/_test/many/" + name); err != nil {
			t.Fatal(err)
		}
	}
	for _, cl := range []*hdfs.Client{c, super} {
		infos, err := cl.ReadDir("/_test/many/")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, fi := range infos {
			got = append(got, fi.Name())
		}
		if !sort.StringsAreSorted(got) || len(got) != n || got[0] != want[0] || got[n-1] != want[n-1] {
			t.Fatalf("ReadDir returned %d entries (sorted %v)", len(got), sort.StringsAreSorted(got))
		}
	}
	// A reader that trims its batch re-asks from an arbitrary name.
	f, err := c.Open("/_test/many")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	total := 0
	for {
		batch, err := f.Readdir(100)
		total += len(batch)
		if err != nil || len(batch) == 0 {
			break
		}
	}
	if total != n {
		t.Fatalf("Readdir(100) loop saw %d entries", total)
	}
}

func TestRenameVariants(t *testing.T) {
	_, _, c := setup(t)
	mk := func(p string) {
		t.Helper()
		if err := c.CreateEmptyFile(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.MkdirAll("/_test/r/d1/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.MkdirAll("/_test/r/empty", 0o755); err != nil {
		t.Fatal(err)
	}
	mk("/_test/r/f1")
	mk("/_test/r/f2")
	mk("/_test/r/d1/sub/g")

	// File to a new name.
	if err := c.Rename("/_test/r/f1", "/_test/r/f3"); err != nil {
		t.Fatalf("rename file: %v", err)
	}
	if _, err := c.Stat("/_test/r/f1"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("source still there: %v", err)
	}
	// File onto an existing file: replaced (rename2 with overwrite).
	if err := c.Rename("/_test/r/f3", "/_test/r/f2"); err != nil {
		t.Fatalf("rename onto file: %v", err)
	}
	// Directory onto an empty directory: replaced.
	if err := c.Rename("/_test/r/d1", "/_test/r/empty"); err != nil {
		t.Fatalf("rename dir onto empty dir: %v", err)
	}
	if _, err := c.Stat("/_test/r/empty/sub/g"); err != nil {
		t.Fatalf("moved subtree missing: %v", err)
	}
	// Missing source.
	if err := c.Rename("/_test/r/nope", "/_test/r/x"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("rename missing: %v", err)
	}
	// Into its own subtree.
	if err := c.Rename("/_test/r/empty", "/_test/r/empty/sub/inside"); err == nil {
		t.Fatal("rename into own subtree succeeded")
	}
	// Directory onto a non-empty directory, and a file onto a directory.
	if err := c.MkdirAll("/_test/r/full/x", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.Rename("/_test/r/empty", "/_test/r/full"); err == nil {
		t.Fatal("rename onto a non-empty dir succeeded")
	}
	if err := c.Rename("/_test/r/f2", "/_test/r/full"); err == nil {
		t.Fatal("rename of a file onto a dir succeeded")
	}
	// Destination parent missing.
	if err := c.Rename("/_test/r/f2", "/_test/r/no/such"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("rename to missing parent: %v", err)
	}
}

func TestChmodChownRemove(t *testing.T) {
	addr, super, c := setup(t)
	if err := c.MkdirAll("/_test/p/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateEmptyFile("/_test/p/d/f"); err != nil {
		t.Fatal(err)
	}
	if err := c.Chmod("/_test/p/d/f", 0o777); err != nil {
		t.Fatal(err)
	}
	fi, _ := c.Stat("/_test/p/d/f")
	if fi.Mode().Perm() != 0o777 {
		t.Fatalf("mode after chmod: %v", fi.Mode())
	}
	if err := c.Chmod("/_test/nope", 0o777); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("chmod missing: %v", err)
	}
	// Only the superuser changes owners.
	if err := c.Chown("/_test/p/d/f", "gohdfs2", ""); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("chown by non-super: %v", err)
	}
	if err := super.Chown("/_test/p/d/f", "gohdfs2", "othergroup"); err != nil {
		t.Fatalf("chown by super: %v", err)
	}
	fi, _ = c.Stat("/_test/p/d/f")
	st := fi.Sys().(*hdfs.FileStatus)
	if st.GetOwner() != "gohdfs2" || st.GetGroup() != "othergroup" {
		t.Fatalf("after chown: %s:%s", st.GetOwner(), st.GetGroup())
	}
	mtime := time.Date(1990, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := super.Chtimes("/_test/p/d/f", mtime, mtime); err != nil {
		t.Fatal(err)
	}
	fi, _ = c.Stat("/_test/p/d/f")
	if !fi.ModTime().Equal(mtime) {
		t.Fatalf("mtime %v", fi.ModTime())
	}

	// A 0700 directory hides its contents from others.
	if err := c.Chmod("/_test/p", 0o700); err != nil {
		t.Fatal(err)
	}
	c2 := client(t, addr, "gohdfs2")
	if _, err := c2.Stat("/_test/p/d"); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("stat under another user's 0700 dir: %v", err)
	}
	if _, err := c2.Stat("/_test/p"); err != nil {
		t.Fatalf("the 0700 dir itself must be stat-able: %v", err)
	}
	if err := c.Chmod("/_test/p", 0o755); err != nil {
		t.Fatal(err)
	}

	if err := c.Remove("/_test/p/d"); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Fatalf("remove non-empty dir: %v", err)
	}
	if err := c.Remove("/_test/p/nope"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("remove missing: %v", err)
	}
	if err := c.Remove("/_test/p/d/f"); err != nil {
		t.Fatalf("remove file: %v", err)
	}
	if err := c.MkdirAll("/_test/p/d/e/f", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveAll("/_test/p"); err != nil {
		t.Fatalf("RemoveAll: %v", err)
	}
	if err := c.RemoveAll("/_test/p"); err != nil {
		t.Fatalf("RemoveAll of a missing path must succeed: %v", err)
	}
	if _, err := c.Stat("/_test/p"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after RemoveAll: %v", err)
	}
}

func TestServerDefaults(t *testing.T) {
	_, _, c := setup(t)
	d, err := c.ServerDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if d.BlockSize != 134217728 || d.Replication != 3 || d.BytesPerChecksum != 512 || d.EncryptDataTransfer {
		t.Fatalf("server defaults %+v", d)
	}
}
