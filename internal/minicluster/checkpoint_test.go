package minicluster

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	nnpb "github.com/hdfsgo/hdfsgo/internal/proto/namenode"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
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
	var buf testtool.Buffer
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
	// The active purges older images just after it makes an uploaded one
	// visible, so the newest can be seen while a third still exists.
	deadline := time.Now().Add(5 * time.Second)
	for n := len(images(t, nameDir)); n != 2; n = len(images(t, nameDir)) {
		if time.Now().After(deadline) {
			t.Errorf("the active keeps %d images, want dfs.namenode.num.checkpoints.retained = 2", n)
			break
		}
		time.Sleep(20 * time.Millisecond)
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

// saveNamespace makes the active save an image (dfsadmin -safemode enter,
// -saveNamespace, -safemode leave), which purges the edits no retained
// image needs.
func saveNamespace(t *testing.T, c *Cluster) {
	t.Helper()
	cl := ipc.NewClient(ipc.ClientConfig{Addresses: []string{c.NameNodeAddr()}, User: c.NameNode().SuperUser(), Protocol: namenode.ClientProtocolName})
	defer cl.Close()
	ctx := context.Background()
	for _, a := range []hdfs.SafeModeActionProto{hdfs.SafeModeActionProto_SAFEMODE_ENTER, -1, hdfs.SafeModeActionProto_SAFEMODE_LEAVE} {
		var err error
		if a < 0 {
			err = cl.Call(ctx, "saveNamespace", &hdfs.SaveNamespaceRequestProto{}, &hdfs.SaveNamespaceResponseProto{})
		} else {
			err = cl.Call(ctx, "setSafeMode", &hdfs.SetSafeModeRequestProto{Action: a.Enum()}, &hdfs.SetSafeModeResponseProto{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// mkdirs makes n directories /m/<from+i> with 16 callers.
func mkdirs(t *testing.T, fsys *client.FileSystem, from, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 16 {
				if err := fsys.MkdirAll(context.Background(), fmt.Sprintf("/m/%d/%d", (from+i)%100, from+i), 0o755); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointNodeGapPath: edits a Checkpoint Node lacks are gone from
// the active (purged after the active's own image). A Checkpoint Node
// started then downloads the active's image, rolls forward the edits after
// it and uploads its own; one restarted after more edits were purged
// behind it takes the same path (the first segment on offer starts after
// its last txid + 1). Either way its namespace is the active's.
// HDFSGO_LONG=1 starts it after 100,000 operations, else 2,000.
func TestCheckpointNodeGapPath(t *testing.T) {
	ops := 2000
	if os.Getenv("HDFSGO_LONG") != "" {
		ops = 100_000
	}
	// The active keeps one image and no edit before it.
	keys := helperKeys(1_000_000)
	c := startCheckpointCluster(t, -1, append(keys, conf.KeyValue{Key: conf.DFSNameNodeNumExtraEditsRetained, Value: "0"},
		conf.KeyValue{Key: conf.DFSNameNodeNumCheckpointsRetained, Value: "1"})...)
	ctx := context.Background()
	fsys := superClient(t, c)
	cnDir := filepath.Join(c.opts.Dir, "cn")

	mkdirs(t, fsys, 0, ops)
	saveNamespace(t, c)
	saved := newestImage(t, filepath.Join(c.opts.Dir, "nn", "name"))
	cn, err := c.StartHelper(ctx, namenode.RoleCheckpoint, cnDir, keys...)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Minute, "the Checkpoint Node's first checkpoint", func() bool { return cn.CheckpointStats().Done > 0 })
	if st := cn.CheckpointStats(); st.ImagesDownloaded != 1 || st.LastTxID <= saved {
		t.Errorf("the Checkpoint Node's first checkpoint: %+v; it must download the active's image %d", st, saved)
	}
	if a, b := nsDump(t, c.NameNode()), nsDump(t, cn); a != b {
		t.Fatalf("the Checkpoint Node's namespace differs from the active's:\n%s", diffLines(a, b))
	}
	if err := cn.Close(); err != nil {
		t.Fatal(err)
	}

	// More edits, purged behind the stopped Checkpoint Node.
	mkdirs(t, fsys, ops, 500)
	saveNamespace(t, c)
	saved = newestImage(t, filepath.Join(c.opts.Dir, "nn", "name"))
	mkdirs(t, fsys, ops+500, 100)
	cn, err = c.StartHelper(ctx, namenode.RoleCheckpoint, cnDir, append(keys, conf.KeyValue{Key: conf.DFSNameNodeCheckpointTxns, Value: "100"})...)
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	if cn.Loaded().Replayed != 0 || cn.Loaded().ImageTxID >= saved {
		t.Fatalf("the restarted Checkpoint Node loaded %+v; the active's image is %d", cn.Loaded(), saved)
	}
	waitFor(t, time.Minute, "the restarted Checkpoint Node's checkpoint", func() bool { return cn.CheckpointStats().Done > 0 })
	if st := cn.CheckpointStats(); st.ImagesDownloaded != 1 || st.LastTxID <= saved {
		t.Errorf("the restarted Checkpoint Node's checkpoint: %+v; it must download the active's image %d", st, saved)
	}
	if a, b := nsDump(t, c.NameNode()), nsDump(t, cn); a != b {
		t.Fatalf("the restarted Checkpoint Node's namespace differs from the active's:\n%s", diffLines(a, b))
	}
}

// TestHelperOfAnotherNamespace: a helper never works for a namespace that
// is not its storage's. Its storage formatted for one cluster makes it
// refuse to start against another ("Inconsistent namespace information");
// the active refuses the registration of a node of another namespace and
// answers its startCheckpoint with ACT_SHUTDOWN; and a Checkpoint Node
// whose NameNode was re-formatted under it (same address, new namespace)
// is told to shut down at its next checkpoint, and does.
func TestHelperOfAnotherNamespace(t *testing.T) {
	keys := append(helperKeys(1_000_000), conf.KeyValue{Key: conf.DFSNameNodeCheckpointPeriod, Value: "200ms"})
	a := startCheckpointCluster(t, -1, keys...)
	b := startCheckpointCluster(t, -1, keys...)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "cn")
	cn, err := a.StartHelper(ctx, namenode.RoleCheckpoint, dir, keys...)
	if err != nil {
		t.Fatal(err)
	}
	regA := registrationOf(a.NameNode(), cn)
	if err := cn.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.StartHelper(ctx, namenode.RoleCheckpoint, dir, keys...); err == nil || !strings.Contains(err.Error(), "Inconsistent namespace information") {
		t.Fatalf("a Checkpoint Node of cluster A started against cluster B: %v", err)
	}

	cl := ipc.NewClient(ipc.ClientConfig{Addresses: []string{b.NameNodeAddr()}, User: b.NameNode().SuperUser(), Protocol: namenode.NamenodeProtocolName})
	defer cl.Close()
	err = cl.Call(ctx, "registerSubordinateNamenode", &nnpb.RegisterRequestProto{Registration: regA}, &nnpb.RegisterResponseProto{})
	if err == nil || !strings.Contains(err.Error(), "Incompatible namespaceIDs") {
		t.Errorf("registration of another namespace's node: %v", err)
	}
	var resp nnpb.StartCheckpointResponseProto
	if err := cl.Call(ctx, "startCheckpoint", &nnpb.StartCheckpointRequestProto{Registration: regA}, &resp); err != nil {
		t.Fatal(err)
	}
	if got := resp.GetCommand().GetAction(); got != 50 {
		t.Errorf("startCheckpoint of another namespace's node: action %d, want ACT_SHUTDOWN (50)", got)
	}

	// Cluster B's NameNode re-formatted under its Checkpoint Node.
	cnB, err := b.StartHelper(ctx, namenode.RoleCheckpoint, filepath.Join(t.TempDir(), "cnb"), keys...)
	if err != nil {
		t.Fatal(err)
	}
	defer cnB.Close()
	b.Close()
	b2, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: -1, NameNodePort: portOf(t, b.NameNodeAddr()),
		NameNodeHTTPPort: portOf(t, b.nnHTTPAddrs[0]), Conf: keys, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	select {
	case <-cnB.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the Checkpoint Node of the re-formatted NameNode is still running")
	}
	if err := cnB.Err(); err == nil || !strings.Contains(err.Error(), "requested shutdown") {
		t.Errorf("the Checkpoint Node stopped with %v, want the NameNode's request", err)
	}
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}

// registrationOf is the registration helper sends to the active.
func registrationOf(active, helper *namenode.NameNode) *hdfs.NamenodeRegistrationProto {
	lv := storage.NameNodeLayoutVersion
	return &hdfs.NamenodeRegistrationProto{
		RpcAddress:  proto.String(helper.RPCAddr().String()),
		HttpAddress: proto.String(helper.HTTPAddr().String()),
		StorageInfo: &hdfs.StorageInfoProto{LayoutVersion: proto.Uint32(uint32(lv)),
			NamespceID: proto.Uint32(uint32(helper.NamespaceID())), ClusterID: proto.String(helper.ClusterID()), CTime: proto.Uint64(0)},
		Role: hdfs.NamenodeRegistrationProto_CHECKPOINT.Enum(),
	}
}
