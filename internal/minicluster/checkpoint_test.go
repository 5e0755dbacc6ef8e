package minicluster

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// helperKeys are test-sized checkpoint settings: a look every 50 ms, a
// checkpoint every txns transactions, never by time.
func helperKeys(txns int) []conf.KeyValue {
	return []conf.KeyValue{
		{Key: conf.DFSNameNodeCheckpointTxns, Value: fmt.Sprint(txns)},
		{Key: conf.DFSNameNodeCheckpointCheck, Value: "50ms"},
		{Key: conf.DFSNameNodeCheckpointPeriod, Value: "1h"},
		{Key: conf.IPCClientRPCTimeout, Value: "5000"},
	}
}

func startCheckpointCluster(t *testing.T, datanodes int, kv ...conf.KeyValue) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := []conf.KeyValue{
		{Key: conf.DFSBlockSize, Value: "1048576"},
		{Key: conf.DFSNameNodeMinBlockSize, Value: "1024"},
		{Key: conf.DFSHeartbeatInterval, Value: "1"},
		{Key: conf.DFSNameNodeSafeModeExtension, Value: "0"},
	}
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: datanodes, Conf: append(base, kv...), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testLogger keeps the cluster's log for a failing test.
func testLogger(t *testing.T) *slog.Logger {
	var buf syncBuffer
	t.Cleanup(func() {
		if (t.Failed() && os.Getenv("HDFSGO_TEST_LOG") != "") || os.Getenv("HDFSGO_TEST_LOG") == "all" {
			t.Logf("log:\n%s", buf.String())
		}
	})
	return slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func superClient(t *testing.T, c *Cluster) *client.FileSystem {
	t.Helper()
	fsys, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, User: c.NameNode().SuperUser()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys
}

// images are the txids of the images in a name dir.
func images(t *testing.T, dir string) []int64 {
	t.Helper()
	imgs, err := fsimage.List(vfs.Default, dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, im := range imgs {
		out = append(out, im.TxID)
	}
	return out
}

func newestImage(t *testing.T, dir string) int64 {
	t.Helper()
	imgs := images(t, dir)
	if len(imgs) == 0 {
		return -1
	}
	return imgs[len(imgs)-1]
}

// waitFor polls cond every 20 ms for up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func nsDump(t *testing.T, nn *namenode.NameNode) string {
	t.Helper()
	var b bytes.Buffer
	if err := nn.DumpNamespace(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestCheckpointNode: a Checkpoint Node started beside a NameNode under a
// create/delete load takes a checkpoint every dfs.namenode.checkpoint.txns
// transactions, its images reach the active (which keeps
// dfs.namenode.num.checkpoints.retained of them), its namespace is the
// active's, and a restart of the active replays only the edits after the
// last image.
func TestCheckpointNode(t *testing.T) {
	const txns = 100
	c := startCheckpointCluster(t, 1, helperKeys(txns)...)
	ctx := context.Background()
	fsys := superClient(t, c)
	nameDir := filepath.Join(c.opts.Dir, "nn", "name")

	cn, err := c.StartHelper(ctx, namenode.RoleCheckpoint, filepath.Join(c.opts.Dir, "cn"), helperKeys(txns)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	var seen []int64
	for round := range 5 {
		before := newestImage(t, nameDir)
		if err := fsys.MkdirAll(ctx, fmt.Sprintf("/load/r%d", round), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range 60 {
			name := fmt.Sprintf("/load/r%d/f%d", round, i)
			if err := fsys.WriteFile(ctx, name, nil, false); err != nil {
				t.Fatal(err)
			}
			if i%3 == 0 {
				if err := fsys.Remove(ctx, name); err != nil {
					t.Fatal(err)
				}
			}
		}
		waitFor(t, 20*time.Second, "an image from the Checkpoint Node", func() bool {
			return newestImage(t, nameDir) > before
		})
		seen = append(seen, newestImage(t, nameDir))
	}
	// Images at most every txns transactions (each round logs ~160).
	for i := 1; i < len(seen); i++ {
		if d := seen[i] - seen[i-1]; d < txns {
			t.Errorf("images %v: %d transactions apart, the threshold is %d", seen, d, txns)
		}
	}
	if n := len(images(t, nameDir)); n != 2 {
		t.Errorf("the active keeps %d images, want dfs.namenode.num.checkpoints.retained = 2", n)
	}
	// The active restarted after the Checkpoint Node stopped loads the
	// newest image it uploaded and replays only the edits after it, and
	// comes back with exactly the namespace it served.
	want := nsDump(t, c.NameNode())
	if err := cn.Close(); err != nil {
		t.Fatal(err)
	}
	newest := newestImage(t, nameDir)
	if err := c.RestartNameNode(ctx); err != nil {
		t.Fatal(err)
	}
	ld := c.NameNode().Loaded()
	if ld.ImageTxID != newest || newest < seen[len(seen)-1] {
		t.Errorf("the restart loaded image %d; the newest is %d, the last one seen %d", ld.ImageTxID, newest, seen[len(seen)-1])
	}
	if ld.Replayed > 2*txns {
		t.Errorf("the restart replayed %d edits after image %d; with checkpoints every %d it should be fewer", ld.Replayed, ld.ImageTxID, txns)
	}
	if got := nsDump(t, c.NameNode()); got != want {
		t.Fatalf("the namespace after the restart differs:\n%s", diffLines(want, got))
	}
	if !strings.Contains(want, "/load/r4/f59") {
		t.Fatalf("the dump misses the last file:\n%s", want)
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
