package vfs

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
)

func writeFile(t *testing.T, fsys FS, name, data string, sync bool) {
	t.Helper()
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func readFile(fsys FS, name string) (string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), err
}

// TestBasics runs the same script against the OS and the memory file system.
func TestBasics(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   FS
		dir  string
	}{
		{"default", Default, t.TempDir()},
		{"mem", NewMem(), "/data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, d := tc.fs, tc.dir
			if err := fsys.MkdirAll(filepath.Join(d, "a/b"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, fsys, filepath.Join(d, "a/b/z"), "zz", true)
			writeFile(t, fsys, filepath.Join(d, "a/b/x"), "hello", true)
			got, err := fsys.List(filepath.Join(d, "a/b"))
			if err != nil || !reflect.DeepEqual(got, []string{"x", "z"}) {
				t.Fatalf("List = %v, %v", got, err)
			}
			f, err := fsys.OpenReadWrite(filepath.Join(d, "a/b/x"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Seek(0, io.SeekEnd); err != nil {
				t.Fatal(err)
			}
			f.Write([]byte(" world"))
			buf := make([]byte, 5)
			if n, err := f.ReadAt(buf, 6); n != 5 || string(buf) != "world" {
				t.Fatalf("ReadAt = %d %q %v", n, buf, err)
			}
			if err := f.Truncate(4); err != nil {
				t.Fatal(err)
			}
			if st, err := f.Stat(); err != nil || st.Size() != 4 {
				t.Fatalf("Stat = %v, %v", st, err)
			}
			f.Close()
			if err := fsys.Rename(filepath.Join(d, "a/b/x"), filepath.Join(d, "a/b/z")); err != nil {
				t.Fatal(err)
			}
			if s, err := readFile(fsys, filepath.Join(d, "a/b/z")); s != "hell" || err != nil {
				t.Fatalf("after rename: %q %v", s, err)
			}
			if _, err := fsys.Stat(filepath.Join(d, "a/b/x")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Stat old name: %v", err)
			}
			if err := fsys.SyncDir(filepath.Join(d, "a/b")); err != nil {
				t.Fatal(err)
			}
			if err := fsys.Remove(filepath.Join(d, "a/b/z")); err != nil {
				t.Fatal(err)
			}
			if _, err := fsys.Open(filepath.Join(d, "a/b/z")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Open removed: %v", err)
			}
			if err := fsys.RemoveAll(filepath.Join(d, "a")); err != nil {
				t.Fatal(err)
			}
			if _, err := fsys.List(filepath.Join(d, "a")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("List removed dir: %v", err)
			}
			// Lock exclusion: flock on two open file descriptions conflicts even
			// within one process.
			l1, err := fsys.Lock(filepath.Join(d, "in_use.lock"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = fsys.Lock(filepath.Join(d, "in_use.lock"))
			var le *LockedError
			if !errors.Is(err, ErrLocked) || !errors.As(err, &le) {
				t.Fatalf("second Lock = %v, want LockedError", err)
			}
			if want := "vfs: " + filepath.Join(d, "in_use.lock") + " is locked by another process"; err.Error() != want {
				t.Fatalf("message %q, want %q", err, want)
			}
			if err := l1.Close(); err != nil {
				t.Fatal(err)
			}
			l2, err := fsys.Lock(filepath.Join(d, "in_use.lock"))
			if err != nil {
				t.Fatalf("Lock after release: %v", err)
			}
			l2.Close()
		})
	}
}

func TestMemCrash(t *testing.T) {
	m := NewMem()
	m.MkdirAll("/d", 0o755)
	m.SyncDir("/")
	m.SyncDir("/d")

	// Synced data in a synced entry survives; unsynced appended data does not.
	f, _ := m.Create("/d/log")
	f.Write([]byte("durable"))
	f.Sync()
	m.SyncDir("/d")
	f.Write([]byte("-lost"))
	// Synced data whose directory entry was never synced is lost.
	m.MkdirAll("/n", 0o755)
	m.SyncDir("/")
	writeFile(t, m, "/n/nodirsync", "x", true)
	// A file renamed without SyncDir comes back under its old name.
	writeFile(t, m, "/d/tmp", "img", true)
	m.SyncDir("/d")
	m.Rename("/d/tmp", "/d/final")

	c := m.CrashClone()
	if s, err := readFile(c, "/d/log"); s != "durable" || err != nil {
		t.Errorf("log after crash = %q, %v; want %q", s, err, "durable")
	}
	if s, _ := readFile(m, "/d/log"); s != "durable-lost" {
		t.Errorf("live log = %q", s)
	}
	if _, err := c.Stat("/n/nodirsync"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("nodirsync survived the crash: %v", err)
	}
	if _, err := c.Stat("/d/final"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("rename without SyncDir survived: %v", err)
	}
	if s, _ := readFile(c, "/d/tmp"); s != "img" {
		t.Errorf("old name after crash = %q", s)
	}

	// With SyncDir the rename is durable.
	m.SyncDir("/d")
	c = m.CrashClone()
	if s, _ := readFile(c, "/d/final"); s != "img" {
		t.Errorf("renamed file after SyncDir = %q", s)
	}
	if _, err := c.Stat("/d/tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("old name still present after synced rename: %v", err)
	}

	// A directory created but not recorded in its parent vanishes with its contents.
	m.MkdirAll("/e", 0o755)
	writeFile(t, m, "/e/f", "y", true)
	m.SyncDir("/e")
	if _, err := m.CrashClone().Stat("/e"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("unsynced directory survived: %v", err)
	}
	// Truncation not synced is undone.
	f, _ = m.OpenReadWrite("/d/log")
	f.Truncate(3)
	if s, _ := readFile(m.CrashClone(), "/d/log"); s != "durable" {
		t.Errorf("unsynced truncate survived: %q", s)
	}
	f.Sync()
	if s, _ := readFile(m.CrashClone(), "/d/log"); s != "dur" {
		t.Errorf("synced truncate lost: %q", s)
	}
	// The clone is independent of the original.
	c = m.CrashClone()
	writeFile(t, c, "/d/log", "changed", true)
	if s, _ := readFile(m, "/d/log"); s != "dur" {
		t.Errorf("clone write leaked into original: %q", s)
	}
}

func TestWithErrors(t *testing.T) {
	errBoom := errors.New("boom")
	var syncs atomic.Int32
	fsys := WithErrors(NewMem(), func(op Op, path string) error {
		switch {
		case op == OpSync:
			if syncs.Add(1) == 2 {
				return errBoom
			}
		case op == OpRename && path == "/r/a":
			return errBoom
		case op == OpCreate && filepath.Dir(path) == "/ro":
			return errBoom
		}
		return nil
	})
	fsys.MkdirAll("/r", 0o755)
	fsys.MkdirAll("/ro", 0o755)
	f, err := fsys.Create("/r/a")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	if err := f.Sync(); !errors.Is(err, errBoom) {
		t.Fatalf("second sync = %v, want injected", err)
	}
	f.Close()
	if err := fsys.Rename("/r/a", "/r/b"); !errors.Is(err, errBoom) {
		t.Fatalf("rename = %v, want injected", err)
	}
	if _, err := fsys.Stat("/r/a"); err != nil {
		t.Fatalf("failed rename must not move the file: %v", err)
	}
	if _, err := fsys.Create("/ro/x"); !errors.Is(err, errBoom) {
		t.Fatalf("create in unwritable dir = %v", err)
	}
	if _, err := fsys.Create("/r/ok"); err != nil {
		t.Fatalf("create elsewhere: %v", err)
	}
	if OpSyncDir.String() != "syncdir" {
		t.Errorf("OpSyncDir.String() = %q", OpSyncDir)
	}
}
