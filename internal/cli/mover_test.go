package cli

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/minicluster"
)

// TestMover: files written as HOT (on DISK) under a directory then made
// COLD are moved by `hdfs mover -p` onto ARCHIVE volumes; a second run
// finds nothing to do; an unknown option is refused.
func TestMover(t *testing.T) {
	ctx := context.Background()
	types := [][]string{{"DISK", "ARCHIVE"}, {"DISK", "ARCHIVE"}, {"DISK", "ARCHIVE"}}
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), DataNodes: len(types), StorageTypes: types,
		Conf: []conf.KeyValue{confKV("dfs.heartbeat.interval", "1"), confKV("dfs.namenode.redundancy.interval.seconds", "1")}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fsys, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, User: c.NameNode().SuperUser()})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	if err := fsys.MkdirAll(ctx, "/m", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"/m/a", "/m/b"} {
		w, err := fsys.CreateFile(ctx, name, client.CreateOptions{Replication: 2, Perm: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(bytes.Repeat([]byte(name), 1000)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	types2 := func(name string) []string {
		locs, err := fsys.BlockLocations(ctx, name, 0, 1)
		if err != nil || len(locs) != 1 {
			t.Fatalf("%s: %v %v", name, locs, err)
		}
		return slices.Sorted(slices.Values(locs[0].StorageTypes))
	}
	waitTypes := func(name string, want []string) {
		t.Helper()
		for i := 0; !slices.Equal(types2(name), want); i++ {
			if i == 300 {
				t.Fatalf("%s on %v, want %v", name, types2(name), want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitTypes("/m/a", []string{"DISK", "DISK"})
	waitTypes("/m/b", []string{"DISK", "DISK"})
	if err := fsys.SetStoragePolicy(ctx, "/m", "COLD"); err != nil {
		t.Fatal(err)
	}
	mover := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		e := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		all := append([]string{"hdfs", "mover", "-fs", c.URI(), "-D", "dfs.heartbeat.interval=1",
			"-D", "dfs.namenode.redundancy.interval.seconds=1"}, args...)
		code := Run(e, all)
		return out.String(), errb.String(), code
	}
	out, errOut, code := mover("-p", "/m")
	if code != 0 || !strings.Contains(out, "Mover Successful: all blocks satisfy the specified storage policy. Exiting...\n") ||
		!strings.Contains(out, " Mover took ") {
		t.Fatalf("mover: %d\n%s\n%s", code, out, errOut)
	}
	waitTypes("/m/a", []string{"ARCHIVE", "ARCHIVE"})
	waitTypes("/m/b", []string{"ARCHIVE", "ARCHIVE"})
	// The data is still there.
	for _, name := range []string{"/m/a", "/m/b"} {
		r, err := fsys.Open(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if _, err := got.ReadFrom(r); err != nil {
			t.Fatal(err)
		}
		r.Close()
		if !bytes.Equal(got.Bytes(), bytes.Repeat([]byte(name), 1000)) {
			t.Fatalf("%s changed by the move", name)
		}
	}
	if out, _, code := mover("-p", "/m"); code != 0 || !strings.Contains(out, "Mover Successful") {
		t.Fatalf("second run: %d %s", code, out)
	}
	if out, errOut, code := mover("-x"); code != exitUsage || !strings.Contains(errOut, "Illegal option -x") ||
		!strings.Contains(errOut, "Usage: hdfs mover") || !strings.Contains(out, " Mover took ") {
		t.Fatalf("bad option: %d %q %q", code, out, errOut)
	}
}
