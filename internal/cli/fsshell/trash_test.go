package fsshell

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// TestTrashRealNameNode: with the NameNode's fs.trash.interval at 60
// minutes, -rm moves to /user/<user>/.Trash/Current, -skipTrash and paths
// already in the trash are deleted, and -expunge checkpoints and ages the
// trash.
func TestTrashRealNameNode(t *testing.T) {
	s := newRealShell(t, conf.KeyValue{Key: conf.FSTrashInterval, Value: "60"})
	ctx := context.Background()
	if err := s.super.MkdirAll(ctx, "/user", 0o777); err != nil {
		t.Fatal(err)
	}
	if err := s.super.Chmod(ctx, "/user", 0o777); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/d/a", "/d/b"} {
		if err := s.fs.CreateEmptyFile(ctx, p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	uri := s.fs.URI()
	exists := func(p string) bool {
		_, err := s.fs.Stat(ctx, p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		return err == nil
	}
	check := func(args []string, stdout, stderr string, code int) {
		t.Helper()
		out, errOut, c := s.run(s.fs, args...)
		if out != stdout || errOut != stderr || c != code {
			t.Fatalf("%v: got %q %q %d, want %q %q %d", args, out, errOut, c, stdout, stderr, code)
		}
	}
	moved := "Moved: '" + uri + "/d/a' to trash at: " + uri + "/user/alice/.Trash/Current\n"
	check([]string{"-rm", "/d/a"}, moved, "", 0)
	if exists("/d/a") || !exists("/user/alice/.Trash/Current/d/a") {
		t.Fatal("not moved to the trash")
	}
	// The same name again gets a suffix.
	if err := s.fs.CreateEmptyFile(ctx, "/d/a", 0o644); err != nil {
		t.Fatal(err)
	}
	check([]string{"-rm", "/d/a"}, moved, "", 0)
	if kids, _ := s.fs.ReadDir(ctx, "/user/alice/.Trash/Current/d"); len(kids) != 2 {
		t.Fatalf("trash holds %d entries, want 2", len(kids))
	}
	check([]string{"-rm", "-skipTrash", "/d/b"}, "Deleted /d/b\n", "", 0)
	// A move to the trash asks what a recursive delete would: alice's
	// directory holding bob's unreadable one stays where it is.
	if err := s.fs.MkdirAll(ctx, "/d/x", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.super.MkdirAll(ctx, "/d/x/bobs/inner", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := s.super.Chown(ctx, "/d/x/bobs", "bob", ""); err != nil {
		t.Fatal(err)
	}
	if out, errOut, c := s.run(s.fs, "-rm", "-r", "/d/x"); out != "" || c != 1 ||
		!strings.HasPrefix(errOut, "rm: Failed to move to trash: "+uri+"/d/x: Permission denied") || !exists("/d/x/bobs") {
		t.Fatalf("-rm -r of a directory holding another's: %q %q %d", out, errOut, c)
	}
	check([]string{"-rm", "-r", "/user/alice"}, "", "rm: Cannot move \""+uri+"/user/alice\" to the trash, as it contains the trash. Consider using -skipTrash option\n", 1)

	// -expunge makes a checkpoint named by the time; an hour later it is
	// deleted.
	check([]string{"-expunge"}, "Created trash checkpoint: /user/alice/.Trash/261201210000\n", "", 0)
	if exists("/user/alice/.Trash/Current") || !exists("/user/alice/.Trash/261201210000/d/a") {
		t.Fatal("no checkpoint")
	}
	// A path in the trash is deleted for good.
	check([]string{"-rm", "-r", "/user/alice/.Trash/261201210000/d"}, "Deleted /user/alice/.Trash/261201210000/d\n", "", 0)
	if err := s.fs.CreateEmptyFile(ctx, "/d/c", 0o644); err != nil {
		t.Fatal(err)
	}
	check([]string{"-rm", "/d/c"}, "Moved: '"+uri+"/d/c' to trash at: "+uri+"/user/alice/.Trash/Current\n", "", 0)
	out, errOut, code := s.runAt(now.Add(61*time.Minute), s.fs, "-expunge")
	if want := "Deleted trash checkpoint: /user/alice/.Trash/261201210000\nCreated trash checkpoint: /user/alice/.Trash/261201220100\n"; out != want || errOut != "" || code != 0 {
		t.Fatalf("-expunge an hour later: %q %q %d", out, errOut, code)
	}
	out, _, code = s.runAt(now.Add(62*time.Minute), s.fs, "-expunge", "-immediate")
	if want := "Deleted trash checkpoint: /user/alice/.Trash/261201220100\n"; out != want || code != 0 {
		t.Fatalf("-expunge -immediate: %q %d", out, code)
	}
	if kids, _ := s.fs.ReadDir(ctx, "/user/alice/.Trash"); len(kids) != 0 {
		t.Fatalf("trash not empty: %d entries", len(kids))
	}
}
