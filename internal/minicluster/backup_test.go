package minicluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/backup"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/web/webtest"
)

// backupKeys: checkpoints every txns transactions (and so an automatic
// roll on the active every txns/2), a look every 50 ms, a short write
// timeout on the active's stream.
func backupKeys(txns int) []conf.KeyValue {
	return append(helperKeys(txns), conf.KeyValue{Key: conf.DFSReplication, Value: "1"})
}

// workload runs random namespace and data operations in batches.
type workload struct {
	t          *testing.T
	fsys       *client.FileSystem
	r          *rand.Rand
	files      []string
	n          int
	recoveries int
}

func newWorkload(t *testing.T, fsys *client.FileSystem, seed uint64) *workload {
	t.Logf("workload seed %d", seed)
	return &workload{t: t, fsys: fsys, r: rand.New(rand.NewPCG(seed, 7))}
}

func (w *workload) data(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(w.r.Uint32())
	}
	return b
}

// batch runs n operations.
func (w *workload) batch(ctx context.Context, n int) {
	t := w.t
	t.Helper()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	pick := func() string { return w.files[w.r.IntN(len(w.files))] }
	for range n {
		w.n++
		if len(w.files) < 4 {
			name := fmt.Sprintf("/b/d%d/f%d", w.n%5, w.n)
			must("mkdir", w.fsys.MkdirAll(ctx, filepath.Dir(name), 0o755))
			must("write", w.fsys.WriteFile(ctx, name, w.data(w.r.IntN(150<<10)+1), false))
			w.files = append(w.files, name)
			continue
		}
		switch w.r.IntN(8) {
		case 0, 1: // a new file, often of several blocks
			name := fmt.Sprintf("/b/d%d/f%d", w.n%5, w.n)
			must("mkdir", w.fsys.MkdirAll(ctx, filepath.Dir(name), 0o755))
			must("write", w.fsys.WriteFile(ctx, name, w.data(w.r.IntN(200<<10)+1), false))
			w.files = append(w.files, name)
		case 2: // append
			a, err := w.fsys.Append(ctx, pick())
			must("append", err)
			_, err = a.Write(w.data(w.r.IntN(70<<10) + 1))
			must("append write", err)
			must("append close", a.Close())
		case 3: // truncate: inside a block once in a while (a block
			// recovery, which takes a DataNode heartbeat), else to 0
			name := pick()
			fi, err := w.fsys.Stat(ctx, name)
			must("stat", err)
			to := int64(0)
			if w.recoveries < 2 {
				to = w.r.Int64N(fi.Size() + 1)
				w.recoveries++
			}
			done, err := w.fsys.Truncate(ctx, name, to)
			must("truncate", err)
			if !done {
				waitClosed(t, ctx, w.fsys, name)
			}
		case 4: // rename
			name := pick()
			to := fmt.Sprintf("%s/r%d", filepath.Dir(name), w.n)
			must("rename", w.fsys.Rename(ctx, name, to))
			w.files = remove(w.files, name)
			w.files = append(w.files, to)
		case 5: // delete
			name := pick()
			must("delete", w.fsys.Remove(ctx, name))
			w.files = remove(w.files, name)
		case 6: // metadata
			must("chmod", w.fsys.Chmod(ctx, pick(), 0o640))
			must("mkdir", w.fsys.MkdirAll(ctx, fmt.Sprintf("/b/e/%d", w.n), 0o700))
		case 7:
			_, err := w.fsys.SetReplication(ctx, pick(), uint16(1+w.r.IntN(2)))
			must("setrep", err)
		}
	}
}

// waitSame waits until the Backup Node's namespace (tree, blocks, leases)
// is the active's.
func waitSame(t *testing.T, active, bn *namenode.NameNode, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		a, b := nsDump(t, active), nsDump(t, bn)
		if a == b {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the Backup Node's namespace (%s) is not the active's:\n%s", what, bn.BackupState(), diffLines(a, b))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func states(h []backup.Transition) string {
	var s []string
	for _, t := range h {
		s = append(s, t.To.String())
	}
	return strings.Join(s, " ")
}

// rollEdits asks the active to roll its edit log (dfsadmin -rollEdits).
func rollEdits(t *testing.T, c *Cluster) {
	t.Helper()
	cl := ipc.NewClient(ipc.ClientConfig{Addresses: []string{c.NameNodeAddr()}, User: c.NameNode().SuperUser(), Protocol: namenode.ClientProtocolName})
	defer cl.Close()
	if err := cl.Call(context.Background(), "rollEdits", &hdfs.RollEditsRequestProto{}, &hdfs.RollEditsResponseProto{}); err != nil {
		t.Fatal(err)
	}
}

// TestBackupNode: a Backup Node follows the active's stream: after every
// batch of a random workload its namespace, block map and leases are the
// active's, through the active's rolls (automatic and asked for) and its
// own checkpoints, which need no download. Killed (no goodbye to the active)
// and restarted, it goes DROP_UNTIL_NEXT_ROLL → JOURNAL_ONLY → IN_SYNC
// again, converging with its journal spool, and follows on. Meanwhile a
// second Backup Node and a Checkpoint Node are refused.
func TestBackupNode(t *testing.T) {
	const txns = 120
	c := startCheckpointCluster(t, 1, backupKeys(txns)...)
	ctx := context.Background()
	fsys := superClient(t, c)
	dir := filepath.Join(c.opts.Dir, "bn")
	kill := func(cfg *namenode.Config) { cfg.Testing.NoErrorReport = true }

	bn, err := c.StartHelperWith(ctx, namenode.RoleBackup, dir, kill, backupKeys(txns)...)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the Backup Node to be IN_SYNC", func() bool { return bn.BackupState() == "IN_SYNC" })
	if got := states(bn.History()); got != "JOURNAL_ONLY IN_SYNC" {
		t.Errorf("state changes at start %q, want JOURNAL_ONLY IN_SYNC", got)
	}

	if _, err := c.StartHelper(ctx, namenode.RoleBackup, filepath.Join(c.opts.Dir, "bn2"), backupKeys(txns)...); err == nil ||
		!strings.Contains(err.Error(), "one Backup Node at a time") {
		t.Errorf("a second Backup Node: %v", err)
	}
	if _, err := c.StartHelper(ctx, namenode.RoleCheckpoint, filepath.Join(c.opts.Dir, "cn"), backupKeys(txns)...); err == nil ||
		!strings.Contains(err.Error(), "while a Backup Node is") {
		t.Errorf("a Checkpoint Node beside a Backup Node: %v", err)
	}

	w := newWorkload(t, fsys, rand.Uint64())
	nameDir := filepath.Join(c.opts.Dir, "nn", "name")
	imagesBefore := newestImage(t, nameDir)
	for i := range 6 {
		w.batch(ctx, 15)
		if i == 2 {
			rollEdits(t, c)
		}
		waitSame(t, c.NameNode(), bn, fmt.Sprintf("after batch %d", i))
	}
	if newestImage(t, nameDir) <= imagesBefore {
		t.Errorf("no image from the Backup Node's checkpoints reached the active (newest %d)", newestImage(t, nameDir))
	}
	hist := states(bn.History())
	if !strings.Contains(hist, "JOURNAL_ONLY IN_SYNC JOURNAL_ONLY IN_SYNC") {
		t.Errorf("no checkpoint froze and converged the Backup Node: %q", hist)
	}

	// Killed: it tells the active nothing; the active drops the stream
	// when a send fails.
	if err := bn.Close(); err != nil {
		t.Fatal(err)
	}
	w.batch(ctx, 10)
	bn, err = c.StartHelperWith(ctx, namenode.RoleBackup, dir, kill, backupKeys(txns)...)
	if err != nil {
		t.Fatal(err)
	}
	defer bn.Close()
	waitFor(t, 20*time.Second, "the restarted Backup Node to be IN_SYNC", func() bool { return bn.BackupState() == "IN_SYNC" })
	if got := states(bn.History()); !strings.HasPrefix(got, "JOURNAL_ONLY IN_SYNC") {
		t.Errorf("state changes after the restart %q, want DROP_UNTIL_NEXT_ROLL → JOURNAL_ONLY → IN_SYNC", got)
	}
	waitSame(t, c.NameNode(), bn, "after the restart")
	for i := range 3 {
		w.batch(ctx, 15)
		waitSame(t, c.NameNode(), bn, fmt.Sprintf("after batch %d since the restart", i))
	}
}

// TestBackupNodeHangs: a Backup Node that stops answering never delays the
// active: writes go on while its journal calls hang; the active drops its
// stream after the write timeout; once the node answers again it registers
// again, goes back to JOURNAL_ONLY (it missed edits), checkpoints, converges
// and follows on.
func TestBackupNodeHangs(t *testing.T) {
	const txns = 1000
	keys := append(backupKeys(txns), conf.KeyValue{Key: conf.IPCClientRPCTimeout, Value: "300"})
	c := startCheckpointCluster(t, 1, keys...)
	ctx := context.Background()
	fsys := superClient(t, c)
	var hang sync.Mutex
	var hangs int
	var mu sync.Mutex
	hook := func(cfg *namenode.Config) {
		cfg.Testing.BeforeJournal = func() {
			mu.Lock()
			hangs++
			mu.Unlock()
			hang.Lock()
			defer hang.Unlock()
		}
	}
	bn, err := c.StartHelperWith(ctx, namenode.RoleBackup, filepath.Join(c.opts.Dir, "bn"), hook, keys...)
	if err != nil {
		t.Fatal(err)
	}
	defer bn.Close()
	waitFor(t, 20*time.Second, "the Backup Node to be IN_SYNC", func() bool { return bn.BackupState() == "IN_SYNC" })
	w := newWorkload(t, fsys, rand.Uint64())
	w.batch(ctx, 5)
	waitSame(t, c.NameNode(), bn, "before it hangs")

	hang.Lock() // every journal call on the Backup Node now blocks
	i := 0
	mkdir := func() {
		t.Helper()
		if err := fsys.MkdirAll(ctx, fmt.Sprintf("/hang/%d", i), 0o755); err != nil {
			t.Fatal(err)
		}
		i++
	}
	// Writes are answered while the Backup Node's call hangs, until the
	// active drops the stream after the write timeout, and after.
	waitFor(t, 20*time.Second, "the active to drop the hung Backup Node", func() bool {
		mkdir()
		_, streaming := c.NameNode().BackupNode()
		return !streaming
	})
	w.batch(ctx, 5)
	mu.Lock()
	blocked := hangs
	mu.Unlock()
	if blocked == 0 {
		t.Fatal("no journal call reached the hung Backup Node")
	}
	t.Logf("%d writes answered while the Backup Node hung", i)
	hang.Unlock()
	waitFor(t, 20*time.Second, "the Backup Node to go back to JOURNAL_ONLY", func() bool {
		return strings.Contains(states(bn.History()), "IN_SYNC JOURNAL_ONLY")
	})
	waitFor(t, 20*time.Second, "the Backup Node to be IN_SYNC again", func() bool { return bn.BackupState() == "IN_SYNC" })
	waitSame(t, c.NameNode(), bn, "after it answered again")
	w.batch(ctx, 10)
	waitSame(t, c.NameNode(), bn, "after more writes")
}

// TestHelperPagesAndCalls: each helper serves its status page and /jmx on
// its web address, with Hadoop's bean names; a Backup Node answers
// namespace reads from its copy and refuses writes with a StandbyException
// naming it; a Secondary NameNode run as a daemon checkpoints.
func TestHelperPagesAndCalls(t *testing.T) {
	c := startCheckpointCluster(t, 1, backupKeys(1_000_000)...)
	ctx := context.Background()
	fsys := superClient(t, c)
	if err := fsys.MkdirAll(ctx, "/seen/by/backup", 0o755); err != nil {
		t.Fatal(err)
	}
	bn, err := c.StartHelper(ctx, namenode.RoleBackup, filepath.Join(c.opts.Dir, "bn"), backupKeys(1_000_000)...)
	if err != nil {
		t.Fatal(err)
	}
	defer bn.Close()
	// One after the other: an upload the active refuses as older costs the
	// uploader the 5 s wait for "100 Continue".
	waitFor(t, 20*time.Second, "the Backup Node to be IN_SYNC", func() bool { return bn.BackupState() == "IN_SYNC" })
	snn, err := c.StartHelper(ctx, namenode.RoleSecondary, filepath.Join(c.opts.Dir, "snn"), backupKeys(1_000_000)...)
	if err != nil {
		t.Fatal(err)
	}
	defer snn.Close()
	waitFor(t, 20*time.Second, "the Secondary's first checkpoint", func() bool { return snn.CheckpointStats().Done > 0 })

	info := webtest.Bean(t, "http://"+snn.HTTPAddr().String(), "Hadoop:service=SecondaryNameNode,name=SecondaryNameNodeInfo")
	if v, _ := info["LastCheckpointTime"].(float64); v <= 0 {
		t.Errorf("SecondaryNameNodeInfo LastCheckpointTime = %v", info["LastCheckpointTime"])
	}
	if dirs, _ := info["CheckpointDirectories"].([]any); len(dirs) != 1 || !strings.HasSuffix(dirs[0].(string), "snn") {
		t.Errorf("SecondaryNameNodeInfo CheckpointDirectories = %v", info["CheckpointDirectories"])
	}
	bi := webtest.Bean(t, "http://"+bn.HTTPAddr().String(), "Hadoop:service=BackupNode,name=BackupNodeInfo")
	if bi["JournalState"] != "IN_SYNC" {
		t.Errorf("BackupNodeInfo JournalState = %v", bi["JournalState"])
	}
	st := webtest.Bean(t, "http://"+bn.HTTPAddr().String(), "Hadoop:service=NameNode,name=NameNodeStatus")
	if st["NNRole"] != "Backup Node" {
		t.Errorf("NameNodeStatus NNRole = %v", st["NNRole"])
	}
	for _, h := range []*namenode.NameNode{bn, snn} {
		code, body := webtest.Get(t, "http://"+h.HTTPAddr().String()+"/")
		if code != http.StatusOK || !strings.Contains(body, "Last checkpoint") {
			t.Errorf("status page of %v: %d %q", h.HTTPAddr(), code, body)
		}
	}

	onBN, err := client.New(client.Options{Addresses: []string{bn.RPCAddr().String()}, User: c.NameNode().SuperUser()})
	if err != nil {
		t.Fatal(err)
	}
	defer onBN.Close()
	if fi, err := onBN.Stat(ctx, "/seen/by/backup"); err != nil || !fi.IsDir() {
		t.Errorf("a read on the Backup Node: %v %v", fi, err)
	}
	// A raw call: the client library would fail over and retry on the
	// StandbyException.
	raw := ipc.NewClient(ipc.ClientConfig{Addresses: []string{bn.RPCAddr().String()}, User: c.NameNode().SuperUser(),
		Protocol: namenode.ClientProtocolName, MaxRetries: -1})
	defer raw.Close()
	err = raw.Call(ctx, "mkdirs", &hdfs.MkdirsRequestProto{Src: proto.String("/refused"), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o755)},
		CreateParent: proto.Bool(true)}, &hdfs.MkdirsResponseProto{})
	if err == nil || !strings.Contains(err.Error(), "Operation category WRITE is not supported at Backup Node") {
		t.Errorf("a write on the Backup Node: %v", err)
	}
}
