package minicluster

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// TestStateFollowsTheEditLog: after a random workload of every mutating
// operation — writes with several blocks, flushes, appends to partial and
// full blocks, truncates inside and on block boundaries, concat, replication
// changes, renames over files, deletes, abandoned writers whose leases are
// recovered, files left open, snapshots taken and deleted (so that some
// truncates copy the block a snapshot holds) — a NameNode restarted from its name dir,
// which rebuilds everything by replaying the edits through the one apply
// path, holds exactly the same namespace, block map and leases as the
// NameNode that served the workload.
func TestStateFollowsTheEditLog(t *testing.T) {
	if testing.Short() {
		t.Skip("writes data through a cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: 3, Conf: []conf.KeyValue{
		{Key: conf.DFSBlockSize, Value: "1048576"},
		{Key: conf.DFSNameNodeMinBlockSize, Value: "1024"},
		{Key: conf.DFSHeartbeatInterval, Value: "1"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	super := c.NameNode().SuperUser()
	fsys, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, User: super, BlockSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	abandoner, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, User: super, BlockSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}

	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	randomWorkload(t, ctx, fsys, abandoner, seed, 40)

	before := dump(t, c)
	if err := c.RestartNameNode(ctx); err != nil {
		t.Fatal(err)
	}
	after := dump(t, c)
	if before != after {
		t.Fatalf("the state rebuilt from the edit log differs from the live one (seed %d):\n%s", seed, diffLines(before, after))
	}
	if !strings.Contains(before, "block ") || !strings.Contains(before, "lease ") {
		t.Fatalf("the dump shows no blocks or no leases:\n%s", before)
	}
}

// randomWorkload runs every kind of mutation through fsys, with abandoner
// as a second client whose files are left for lease recovery: writes with
// several blocks, flushes, appends to partial and full blocks, truncates
// inside and on block boundaries, concat, replication changes, renames over
// files, deletes, metadata changes; it ends with two files left open.
func randomWorkload(t *testing.T, ctx context.Context, fsys, abandoner *client.FileSystem, seed uint64, steps int) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	data := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	must("mkdir", fsys.MkdirAll(ctx, "/w/d", 0o755))
	must("allowSnapshot", allowSnapshot(ctx, fsys, "/w"))
	var snaps []string
	var files []string
	pick := func() string { return files[r.IntN(len(files))] }
	for i := range 12 {
		name := fmt.Sprintf("/w/f%02d", i)
		must("write "+name, fsys.WriteFile(ctx, name, data(r.IntN(200<<10)+1), false))
		files = append(files, name)
	}
	for step := range steps {
		switch k := r.IntN(10); k {
		case 0: // append, partial or after a flush
			w, err := fsys.Append(ctx, pick())
			must("append", err)
			_, err = w.Write(data(r.IntN(100 << 10)))
			must("append write", err)
			if r.IntN(2) == 0 {
				must("flush", w.Flush())
			}
			must("append close", w.Close())
		case 1: // truncate
			name := pick()
			fi, err := fsys.Stat(ctx, name)
			must("stat", err)
			to := int64(0)
			if fi.Size() > 0 {
				to = r.Int64N(fi.Size())
			}
			done, err := fsys.Truncate(ctx, name, to)
			must("truncate", err)
			if !done {
				waitClosed(t, ctx, fsys, name)
			}
		case 2: // concat
			a, b := pick(), pick()
			if a == b {
				continue
			}
			fa, _ := fsys.Stat(ctx, a)
			fb, _ := fsys.Stat(ctx, b)
			if fa == nil || fb == nil || fb.Size() == 0 || fa.Size()%(64<<10) != 0 {
				continue
			}
			if err := concat(ctx, fsys, a, b); err == nil {
				files = remove(files, b)
			}
		case 3: // replication
			_, err := fsys.SetReplication(ctx, pick(), uint16(1+r.IntN(3)))
			must("setrep", err)
		case 4: // rename over another file
			a, b := pick(), pick()
			if a != b {
				must("rename", fsys.RenameOverwrite(ctx, a, b))
				files = remove(files, a)
			}
		case 5: // delete and write anew
			name := pick()
			must("delete", fsys.Remove(ctx, name))
			must("rewrite", fsys.WriteFile(ctx, name, data(r.IntN(150<<10)+1), false))
		case 6: // a writer that goes away; its lease is recovered
			name := fmt.Sprintf("/w/abandoned%02d", step)
			w, err := abandoner.Create(ctx, name)
			must("create", err)
			_, err = w.Write(data(r.IntN(100<<10) + 1))
			must("write", err)
			must("hflush", w.Flush())
			if _, err := fsys.RecoverLease(ctx, name); err != nil {
				t.Fatalf("recoverLease: %v", err)
			}
			waitClosed(t, ctx, fsys, name)
			files = append(files, name)
		case 7: // metadata
			must("chmod", fsys.Chmod(ctx, pick(), 0o600))
			must("mkdir", fsys.MkdirAll(ctx, fmt.Sprintf("/w/d/s%d", step), 0o700))
		case 8: // a new file with several blocks
			name := fmt.Sprintf("/w/g%02d", step)
			must("write", fsys.WriteFile(ctx, name, data(64<<10*(1+r.IntN(4))), false))
			files = append(files, name)
		case 9: // a snapshot, or the deletion of one: the truncates after
			// it copy the blocks it holds (copy-on-truncate)
			if len(snaps) > 0 && r.IntN(3) == 0 {
				k := r.IntN(len(snaps))
				must("deleteSnapshot", fsys.DeleteSnapshot(ctx, "/w", snaps[k]))
				snaps = append(snaps[:k], snaps[k+1:]...)
				continue
			}
			name := fmt.Sprintf("s%02d", step)
			_, err := fsys.CreateSnapshot(ctx, "/w", name)
			must("createSnapshot", err)
			snaps = append(snaps, name)
		}
		if len(files) < 3 {
			name := fmt.Sprintf("/w/h%02d", step)
			must("write", fsys.WriteFile(ctx, name, data(1000), false))
			files = append(files, name)
		}
	}
	// Files left open: one with a flushed partial block, one just created.
	open, err := fsys.Create(ctx, "/w/open1")
	must("create open1", err)
	_, err = open.Write(data(100 << 10))
	must("write open1", err)
	must("flush open1", open.Flush())
	_, err = fsys.Create(ctx, "/w/open2")
	must("create open2", err)
}

func dump(t *testing.T, c *Cluster) string {
	t.Helper()
	var b bytes.Buffer
	if err := c.NameNode().DumpNamespace(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func waitClosed(t *testing.T, ctx context.Context, fsys *client.FileSystem, name string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if ok, err := fsys.IsFileClosed(ctx, name); err == nil && ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s was not closed by recovery within 60 s", name)
}

func remove(list []string, s string) []string {
	out := list[:0]
	for _, v := range list {
		if v != s {
			out = append(out, v)
		}
	}
	return out
}

// diffLines shows the lines of a and b that the other lacks.
func diffLines(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out strings.Builder
	for _, l := range strings.Split(a, "\n") {
		if !mb[l] {
			out.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if !ma[l] {
			out.WriteString("+ " + l + "\n")
		}
	}
	return out.String()
}

// concat appends src to trg with ClientProtocol's concat (the client
// library has no call for it).
func allowSnapshot(ctx context.Context, fsys *client.FileSystem, dir string) error {
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{strings.TrimPrefix(fsys.URI(), "hdfs://")}, User: fsys.User(), Protocol: namenode.ClientProtocolName})
	defer c.Close()
	return c.Call(ctx, "allowSnapshot", &hdfs.AllowSnapshotRequestProto{SnapshotRoot: proto.String(dir)}, &hdfs.AllowSnapshotResponseProto{})
}

func concat(ctx context.Context, fsys *client.FileSystem, trg, src string) error {
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{strings.TrimPrefix(fsys.URI(), "hdfs://")}, User: fsys.User(), Protocol: namenode.ClientProtocolName})
	defer c.Close()
	return c.Call(ctx, "concat", &hdfs.ConcatRequestProto{Trg: proto.String(trg), Srcs: []string{src}}, &hdfs.ConcatResponseProto{})
}
