package minicluster

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/failpoint"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// upgradeCluster is a NameNode and two DataNodes (one volume each) whose
// test stops everything, runs the NameNode's -upgrade or -rollback, and
// starts again.
type upgradeCluster struct {
	t   *testing.T
	ctx context.Context
	c   *Cluster
	dir string
}

func (u *upgradeCluster) fs() *client.FileSystem {
	u.t.Helper()
	fsys, err := client.New(client.Options{Addresses: []string{u.c.NameNodeAddr()}, User: u.c.NameNode().SuperUser()})
	if err != nil {
		u.t.Fatal(err)
	}
	u.t.Cleanup(func() { fsys.Close() })
	return fsys
}

func (u *upgradeCluster) write(path string, data []byte) {
	u.t.Helper()
	w, err := u.fs().CreateFile(u.ctx, path, client.CreateOptions{Replication: 2, Perm: 0o644})
	if err != nil {
		u.t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		u.t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		u.t.Fatal(err)
	}
}

func (u *upgradeCluster) read(path string) ([]byte, error) {
	r, err := u.fs().Open(u.ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

func (u *upgradeCluster) stopAll() {
	u.t.Helper()
	for i := range 2 {
		if err := u.c.StopDataNode(i); err != nil {
			u.t.Fatal(err)
		}
	}
	if err := u.c.StopNameNode(0); err != nil {
		u.t.Fatal(err)
	}
}

// startDataNode starts DataNode i; with a failpoint, the start must fail
// there, and the DataNode is started again without it.
func (u *upgradeCluster) startDataNode(i int, st DataNodeStart) {
	u.t.Helper()
	if st.Failpoint != nil {
		if err := u.c.StartDataNodeWith(u.ctx, i, st); err != nil {
			u.t.Fatal(err)
		}
		err := u.c.DataNodes()[i].WaitReady(u.ctx)
		if !errors.Is(err, failpoint.ErrInjected) {
			u.t.Fatalf("DataNode %d with a failpoint: %v", i, err)
		}
		if err := u.c.StopDataNode(i); err != nil {
			u.t.Fatal(err)
		}
		st.Failpoint = nil
	}
	if err := u.c.StartDataNodeWith(u.ctx, i, st); err != nil {
		u.t.Fatal(err)
	}
}

func (u *upgradeCluster) nnConfig() namenode.Config {
	u.t.Helper()
	cfg, err := u.c.NameNodeConfig(0)
	if err != nil {
		u.t.Fatal(err)
	}
	return cfg
}

// poolDir is DataNode i's block pool storage dir.
func (u *upgradeCluster) poolDir(i int) storage.Dir {
	return storage.Dir{Root: filepath.Join(u.dir, "dn"+string(rune('0'+i)), "data", "current", u.c.NameNode().BlockPoolID())}
}

func (u *upgradeCluster) waitPrevious(i int, want bool) {
	u.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := u.poolDir(i).Inspect(vfs.Default)
		if err != nil {
			u.t.Fatal(err)
		}
		if s.Previous == want && !s.FinalizedTmp {
			return
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("DataNode %d's pool storage holds %s, want previous = %v", i, s, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// replicas is how many replicas DataNode i's pool holds.
func (u *upgradeCluster) replicas(i int) int {
	bp, err := u.c.DataNodes()[i].BlockPool(u.c.NameNode().BlockPoolID())
	if err != nil {
		u.t.Fatal(err)
	}
	return len(bp.Replicas())
}

// TestClusterUpgradeRollbackFinalize runs a NameNode and two DataNodes
// through an upgrade, a rollback and an upgrade that is finalized, with a
// DataNode stopped at a step of each (an injected crash) and started
// again: data written before the upgrade reads back after the rollback,
// data written after it is gone, and no replica is lost.
func TestClusterUpgradeRollbackFinalize(t *testing.T) {
	if testing.Short() {
		t.Skip("writes data through a cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	c, err := Start(ctx, Options{Dir: dir, DataNodes: 2, Conf: []conf.KeyValue{
		{Key: conf.DFSBlockSize, Value: "1048576"},
		{Key: conf.DFSNameNodeMinBlockSize, Value: "1024"},
		{Key: conf.DFSHeartbeatInterval, Value: "200ms"},
		{Key: conf.DFSNameNodeSafeModeExtension, Value: "0"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	u := &upgradeCluster{t: t, ctx: ctx, c: c, dir: dir}
	before := make([]byte, 2<<20+777)
	rand.NewChaCha8([32]byte{7}).Read(before)
	u.write("/before", before)
	blocks := u.replicas(0)

	// Upgrade: the NameNode with -upgrade; DataNode 0 crashes after
	// linking its replicas and starts again.
	u.stopAll()
	if err := namenode.Upgrade(ctx, u.nnConfig(), namenode.Deps{Logger: c.logger}); err != nil {
		t.Fatal(err)
	}
	if err := c.StartNameNode(ctx, 0); err != nil {
		t.Fatal(err)
	}
	u.startDataNode(0, DataNodeStart{Failpoint: failpoint.Error(failpoint.DNUpgradeAfterLink)})
	u.startDataNode(1, DataNodeStart{})
	if err := c.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		u.waitPrevious(i, true)
	}
	if got, err := u.read("/before"); err != nil || !bytes.Equal(got, before) {
		t.Fatalf("read after the upgrade: %d bytes, %v", len(got), err)
	}
	u.write("/after", before[:1<<20+5])

	// Rollback: the NameNode's, then DataNode 0 crashes after moving its
	// upgraded state aside and starts again with -rollback.
	u.stopAll()
	if err := namenode.Rollback(ctx, u.nnConfig(), namenode.Deps{Logger: c.logger}, namenode.RollbackOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.StartNameNode(ctx, 0); err != nil {
		t.Fatal(err)
	}
	u.startDataNode(0, DataNodeStart{Rollback: true, Failpoint: failpoint.Error(failpoint.DNRollbackAfterRemove)})
	u.startDataNode(1, DataNodeStart{Rollback: true})
	if err := c.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := u.read("/before"); err != nil || !bytes.Equal(got, before) {
		t.Fatalf("read after the rollback: %d bytes, %v", len(got), err)
	}
	if _, err := u.read("/after"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("/after survived the rollback: %v", err)
	}
	for i := range 2 {
		u.waitPrevious(i, false)
		if n := u.replicas(i); n != blocks {
			t.Fatalf("DataNode %d holds %d replicas after the rollback, want %d", i, n, blocks)
		}
	}

	// Upgrade again, then finalize: DataNode 0 crashes after renaming its
	// previous state, and a restart completes the deletion.
	u.stopAll()
	if err := namenode.Upgrade(ctx, u.nnConfig(), namenode.Deps{Logger: c.logger}); err != nil {
		t.Fatal(err)
	}
	if err := c.StartNameNode(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.StartDataNodeWith(ctx, 0, DataNodeStart{Failpoint: failpoint.Error(failpoint.DNFinalizeAfterRename)}); err != nil {
		t.Fatal(err)
	}
	u.startDataNode(1, DataNodeStart{})
	if err := c.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	nc := ipc.NewClient(ipc.ClientConfig{Addresses: []string{c.NameNodeAddr()}, User: c.NameNode().SuperUser(), Protocol: namenode.ClientProtocolName})
	defer nc.Close()
	if err := nc.Call(ctx, "finalizeUpgrade", &hdfs.FinalizeUpgradeRequestProto{}, &hdfs.FinalizeUpgradeResponseProto{}); err != nil {
		t.Fatal(err)
	}
	u.waitPrevious(1, false)
	// DataNode 0 stopped its finalize after the rename (the injected
	// crash); its restart deletes what is left.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if s, _ := u.poolDir(0).Inspect(vfs.Default); s.FinalizedTmp {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("DataNode 0 did not get DNA_FINALIZE")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := c.StopDataNode(0); err != nil {
		t.Fatal(err)
	}
	if err := c.StartDataNode(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	u.waitPrevious(0, false)
	if got, err := u.read("/before"); err != nil || !bytes.Equal(got, before) {
		t.Fatalf("read after finalize: %d bytes, %v", len(got), err)
	}
	for i := range 2 {
		if n := u.replicas(i); n != blocks {
			t.Fatalf("DataNode %d holds %d replicas after finalize, want %d", i, n, blocks)
		}
	}
}

// TestHAUpgrade: with HA, -upgrade on nn1 upgrades the file:// shared
// edits too; nn2, not bootstrapped again, refuses to start and says what
// to run; once bootstrapped it serves the upgraded namespace. Finalizing
// on both drops every previous state (nn1's dirs, the shared edits, the
// DataNodes'); a second upgrade rolled back on nn1 (local and shared)
// brings back the namespace before it.
func TestHAUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("writes data through a cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	c, err := Start(ctx, Options{Dir: dir, DataNodes: 2, HA: true, SharedEditsDir: true, Conf: []conf.KeyValue{
		{Key: conf.DFSBlockSize, Value: "1048576"},
		{Key: conf.DFSNameNodeMinBlockSize, Value: "1024"},
		{Key: conf.DFSHeartbeatInterval, Value: "200ms"},
		{Key: conf.DFSNameNodeSafeModeExtension, Value: "0"},
		{Key: conf.DFSHATailEditsPeriod, Value: "100ms"},
		{Key: conf.DFSHALogRollPeriod, Value: "300ms"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	u := &upgradeCluster{t: t, ctx: ctx, c: c, dir: dir}
	data := make([]byte, 1<<20+99)
	rand.NewChaCha8([32]byte{8}).Read(data)
	u.write("/before", data)
	shared := storage.Dir{Root: filepath.Join(dir, "shared")}
	cfg1, err := c.NameNodeConfig(1)
	if err != nil {
		t.Fatal(err)
	}
	deps := namenode.Deps{Logger: c.logger}

	stopAllHA := func() {
		t.Helper()
		for i := range 2 {
			if err := c.StopDataNode(i); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 2 {
			if err := c.StopNameNode(i); err != nil {
				t.Fatal(err)
			}
		}
	}
	// startAfter starts nn1 as the active one, bootstraps nn2 from it
	// (after checking that it refuses to start without), and starts the
	// DataNodes.
	startAfter := func(rollback bool) {
		t.Helper()
		if err := c.StartNameNode(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if err := c.NameNodes()[0].TransitionToActive(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.StartNameNode(ctx, 1); err == nil || !strings.Contains(err.Error(), "-bootstrapStandby") {
			t.Fatalf("nn2 started over the shared edits of another upgrade: %v", err)
		}
		if err := namenode.BootstrapStandby(ctx, cfg1, deps, namenode.BootstrapOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		if err := c.StartNameNode(ctx, 1); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			u.startDataNode(i, DataNodeStart{Rollback: rollback})
		}
		if err := c.WaitActive(ctx); err != nil {
			t.Fatal(err)
		}
	}

	stopAllHA()
	if err := namenode.Upgrade(ctx, u.nnConfig(), deps); err != nil {
		t.Fatal(err)
	}
	if ok, _ := shared.HasPrevious(vfs.Default); !ok {
		t.Fatal("the shared edits kept no previous state")
	}
	startAfter(false)
	for _, nn := range c.NameNodes() {
		if nn.UpgradeFinalized() {
			t.Fatal("a NameNode says the upgrade is finalized")
		}
	}
	if got, err := u.read("/before"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read after the HA upgrade: %v", err)
	}
	for i, addr := range c.NameNodeAddrs() {
		nc := ipc.NewClient(ipc.ClientConfig{Addresses: []string{addr}, User: c.NameNode().SuperUser(), Protocol: namenode.ClientProtocolName})
		err := nc.Call(ctx, "finalizeUpgrade", &hdfs.FinalizeUpgradeRequestProto{}, &hdfs.FinalizeUpgradeResponseProto{})
		nc.Close()
		if err != nil {
			t.Fatalf("finalize on nn%d: %v", i+1, err)
		}
	}
	for i, nn := range c.NameNodes() {
		if !nn.UpgradeFinalized() {
			t.Fatalf("nn%d: not finalized", i+1)
		}
	}
	if ok, _ := shared.HasPrevious(vfs.Default); ok {
		t.Fatal("the shared edits kept their previous state after finalize")
	}
	for i := range 2 {
		u.waitPrevious(i, false)
	}

	// A second upgrade, rolled back.
	stopAllHA()
	if err := namenode.Upgrade(ctx, u.nnConfig(), deps); err != nil {
		t.Fatal(err)
	}
	startAfter(false)
	u.write("/after", data[:1000])
	stopAllHA()
	if err := namenode.Rollback(ctx, u.nnConfig(), deps, namenode.RollbackOptions{}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := shared.HasPrevious(vfs.Default); ok {
		t.Fatal("the shared edits were not rolled back")
	}
	startAfter(true)
	if got, err := u.read("/before"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read after the HA rollback: %v", err)
	}
	if _, err := u.read("/after"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("/after survived the rollback: %v", err)
	}
}
