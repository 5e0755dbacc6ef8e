package webhdfs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client/webhdfs"
	"github.com/hdfsgo/hdfsgo/internal/minicluster"
)

// TestFileSystem: the WebHDFS client against a real NameNode and
// DataNodes: create, append, stat, list, open a range, rename, delete, and
// the RemoteExceptions as the io/fs errors.
func TestFileSystem(t *testing.T) {
	c, err := minicluster.Start(context.Background(), minicluster.Options{Dir: t.TempDir(), DataNodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	uri := "webhdfs://" + c.NameNode().HTTPAddr().String()
	fsys, err := webhdfs.New(uri, c.NameNode().SuperUser())
	if err != nil {
		t.Fatal(err)
	}
	if err := fsys.MkdirAll(ctx, uri+"/a/b", 0o750); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("webhdfs "), 50000)
	if err := fsys.Create(ctx, "/a/b/f", bytes.NewReader(data), webhdfs.CreateOptions{Replication: 1}); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Append(ctx, "/a/b/f", strings.NewReader("!")); err != nil {
		t.Fatal(err)
	}
	data = append(data, '!')
	st, err := fsys.Stat(ctx, "/a/b/f")
	if err != nil || st.IsDir || st.Length != int64(len(data)) || st.Replication != 1 || st.Perm != 0o644 {
		t.Fatalf("Stat: %+v %v", st, err)
	}
	list, err := fsys.ReadDir(ctx, "/a")
	if err != nil || len(list) != 1 || list[0].Name != "b" || !list[0].IsDir || list[0].Perm != 0o750 {
		t.Fatalf("ReadDir: %+v %v", list, err)
	}
	rc, err := fsys.Open(ctx, "/a/b/f", 10, 100)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, data[10:110]) {
		t.Fatalf("Open range: %q %v", got, err)
	}
	if ok, err := fsys.Rename(ctx, "/a/b/f", "/a/g"); !ok || err != nil {
		t.Fatalf("Rename: %v %v", ok, err)
	}
	if err := fsys.Create(ctx, "/a/g", strings.NewReader("x"), webhdfs.CreateOptions{}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create over a file: %v, want fs.ErrExist", err)
	}
	if _, err := fsys.Stat(ctx, "/a/b/f"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat of a moved file: %v, want fs.ErrNotExist", err)
	}
	other, _ := webhdfs.New(uri, "mallory")
	if err := other.MkdirAll(ctx, "/a/x", 0o755); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("MkdirAll as another user: %v, want fs.ErrPermission", err)
	}
	if ok, err := fsys.Delete(ctx, "/a", true); !ok || err != nil {
		t.Fatalf("Delete: %v %v", ok, err)
	}
	if _, err := fsys.Resolve("hdfs://x/y"); !errors.Is(err, webhdfs.ErrWrongFS) {
		t.Fatalf("Resolve of another scheme: %v", err)
	}
	if _, err := webhdfs.New("hdfs://h:1", ""); !errors.Is(err, webhdfs.ErrWrongFS) {
		t.Fatalf("New(hdfs://): %v", err)
	}
}
