package fsshell

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hdfsgo/hdfsgo/client"
)

// FuzzLocalResolve: any argument either fails or resolves to a clean
// absolute path; file: URIs with another host than localhost are another
// file system, and other schemes are not local paths.
func FuzzLocalResolve(f *testing.F) {
	for _, s := range []string{"file:/x", "file:///x/../y", "file://localhost/a", "file://h/a", "file:", "file://", "rel/p", "/abs", "hdfs://nn/x", "FILE:/x", ""} {
		f.Add(s)
	}
	l := newLocalFS()
	f.Fuzz(func(t *testing.T, arg string) {
		p, err := l.Resolve(arg)
		if err != nil {
			return
		}
		if !strings.HasPrefix(p, "/") || path.Clean(p) != p {
			t.Fatalf("%q -> %q", arg, p)
		}
		if i := strings.Index(arg, ":"); i > 0 && !strings.Contains(arg[:i], "/") && !strings.EqualFold(arg[:i], "file") {
			t.Fatalf("%q (scheme %q) resolved locally to %q", arg, arg[:i], p)
		}
	})
}

func TestLocalResolve(t *testing.T) {
	l := newLocalFS()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]string{
		"file:/x": "/x", "file:///x/": "/x", "file://localhost/a/../b": "/b", "file://": "/",
		"file:": "", "/a//b": "/a/b", "rel": path.Join(wd, "rel"), "file:rel": path.Join(wd, "rel"),
		"file://other/x": "", "hdfs:///x": "",
	} {
		got, err := l.Resolve(arg)
		if want == "" {
			if err == nil {
				t.Errorf("%q: %q, want an error", arg, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", arg, got, err, want)
		}
	}
	if _, err := l.Resolve("file://other/x"); !errors.Is(err, client.ErrWrongFS) {
		t.Errorf("another host: %v", err)
	}
}

// TestLocalFS: the local file system's answers where they differ from the
// operating system's: no-overwrite renames, removing a non-empty
// directory, statuses, content summaries.
func TestLocalFS(t *testing.T) {
	ctx := context.Background()
	l := newLocalFS()
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, "a"), []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.MkdirAll(ctx, d+"/s/t", 0o777); err != nil {
		t.Fatal(err)
	}
	if err := l.MkdirAll(ctx, d+"/a", 0o777); !errors.Is(err, fs.ErrExist) {
		t.Errorf("MkdirAll over a file: %v", err)
	}
	fi, err := l.Stat(ctx, d+"/s")
	if err != nil || !fi.IsDir() || fi.Status().Permission&^0o755 != 0 || fi.Name() != "s" || fi.Path() != d+"/s" {
		t.Errorf("Stat dir: %+v %v", fi, err)
	}
	fi, err = l.Stat(ctx, d+"/a")
	if st := fi.Status(); err != nil || fi.IsDir() || st.Length != 5 || st.Permission != 0o600 || st.Replication != 1 || st.BlockSize != 32<<20 || st.Owner == "" {
		t.Errorf("Stat file: %+v %v", st, err)
	}
	if _, err := l.Stat(ctx, d+"/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat missing: %v", err)
	}
	list, err := l.ReadDir(ctx, d)
	if err != nil || len(list) != 2 || list[0].Name() != "a" || list[1].Name() != "s" {
		t.Errorf("ReadDir: %v %v", list, err)
	}
	if err := l.Remove(ctx, d+"/s"); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Errorf("Remove non-empty: %v", err)
	}
	if err := l.CreateEmptyFile(ctx, d+"/s/t/e", 0o666); err != nil {
		t.Fatal(err)
	}
	if err := l.CreateEmptyFile(ctx, d+"/s/t/e", 0o666); !errors.Is(err, fs.ErrExist) {
		t.Errorf("CreateEmptyFile twice: %v", err)
	}
	if err := l.Rename(ctx, d+"/a", d+"/s/t/e"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Rename onto a file: %v", err)
	}
	cs, err := l.ContentSummary(ctx, d)
	if err != nil || cs.DirectoryCount != 3 || cs.FileCount != 2 || cs.Length != 5 || cs.SpaceConsumed != 5 || cs.Quota != -1 {
		t.Errorf("ContentSummary: %+v %v", cs, err)
	}
	if err := l.RemoveAll(ctx, d+"/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("RemoveAll missing: %v", err)
	}
	if _, err := l.Checksum(ctx, d+"/a"); !errors.Is(err, errNoChecksum) {
		t.Errorf("Checksum: %v", err)
	}
	if err := l.SetTimes(ctx, d+"/a", 1_700_000_000_123, -1); err != nil {
		t.Fatal(err)
	}
	if fi, _ := l.Stat(ctx, d+"/a"); fi.ModTime().UnixMilli() != 1_700_000_000_123 {
		t.Errorf("SetTimes: %v", fi.ModTime())
	}
}
