package minicluster

import (
	"bytes"
	"context"
	"path/filepath"
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

// TestTruncateInPlaceAfterRestart: an in-place truncate (no snapshot) waits
// for its recovery while the only DataNode is down; the NameNode restarts
// from an image saved meanwhile. recoverLease, with the DataNode back,
// retries the recovery: the replicas are cut to the truncate's length (not
// left at their old one), and the file reads as the truncated prefix.
func TestTruncateInPlaceAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("writes data through a cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, fsys := startOneDataNode(t, ctx)
	super := c.NameNode().SuperUser()
	orig := []byte(strings.Repeat("0123456789abcdef", 400)) // 6400 bytes: 1.5 blocks
	if err := fsys.WriteFile(ctx, "/file", orig, false); err != nil {
		t.Fatal(err)
	}
	if err := c.StopDataNode(0); err != nil {
		t.Fatal(err)
	}
	done, err := fsys.Truncate(ctx, "/file", 5000)
	if err != nil || done {
		t.Fatalf("truncate: done=%v err=%v", done, err)
	}
	admin := ipc.NewClient(ipc.ClientConfig{Addresses: []string{c.NameNodeAddr()}, User: super, Protocol: namenode.ClientProtocolName})
	defer admin.Close()
	call := func(method string, req, resp proto.Message) {
		t.Helper()
		if err := admin.Call(ctx, method, req, resp); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
	}
	restartFromImage(t, ctx, c, call, " truncating")
	if err := c.StartDataNode(ctx, 0); err != nil {
		t.Fatal(err)
	}
	recoverLeaseWithin(t, ctx, fsys, "/file")
	if got, err := fsys.ReadFile(ctx, "/file"); err != nil || !bytes.Equal(got, orig[:5000]) {
		t.Fatalf("file after the recovery: %d bytes (want 5000), %v", len(got), err)
	}
	if a := dump(t, c); strings.Contains(a, " truncating") {
		t.Fatalf("the closed file is still marked as truncating:\n%s", a)
	}
}

// TestTruncateInPlaceTakeover: the standby, tailing the edits, marks a file
// truncating in place as the active does; after a failover while the
// recovery could not run (the DataNodes were down), recoverLease on the new
// active cuts the replicas to the truncate's length.
func TestTruncateInPlaceTakeover(t *testing.T) {
	c := startHACluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nns := c.NameNodes()
	super := nns[0].SuperUser()
	fsys, err := client.New(client.Options{Addresses: c.NameNodeAddrs(), User: super, BlockSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	orig := bytes.Repeat([]byte("in-place truncate, then failover\n"), 3000) // 99,000 bytes: 1.5 blocks
	if err := fsys.WriteFile(ctx, "/file", orig, false); err != nil {
		t.Fatal(err)
	}
	for i := range c.DataNodes() {
		if err := c.StopDataNode(i); err != nil {
			t.Fatal(err)
		}
	}
	const newLen = 70_001
	if done, err := fsys.Truncate(ctx, "/file", newLen); err != nil || done {
		t.Fatalf("truncate: done=%v err=%v", done, err)
	}
	waitStandbyCaughtUp(t, nns[0], nns[1])
	if d := dumpOf(t, nns[1]); !strings.Contains(d, " truncating") {
		t.Fatalf("the standby does not mark the file as truncating in place:\n%s", d)
	}
	if err := c.Failover(ctx, 0, 1); err != nil {
		t.Fatal(err)
	}
	for i := range c.DataNodes() {
		if err := c.StartDataNode(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	recoverLeaseWithin(t, ctx, fsys, "/file")
	if got, err := fsys.ReadFile(ctx, "/file"); err != nil || !bytes.Equal(got, orig[:newLen]) {
		t.Fatalf("file after failover and recovery: %d bytes (want %d), %v", len(got), newLen, err)
	}
}

// TestTruncateInPlaceBackupNode: the Backup Node, fed the active's edit
// stream, marks a file truncating in place as the active does, and holds
// the same state after the recovery closes it.
func TestTruncateInPlaceBackupNode(t *testing.T) {
	c := startCheckpointCluster(t, 1, backupKeys(1000)...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bn, fsys := startBackupNode(t, ctx, c)
	orig := []byte(strings.Repeat("backup node ", 500)) // 6000 bytes
	if err := fsys.WriteFile(ctx, "/file", orig, false); err != nil {
		t.Fatal(err)
	}
	truncateWithDataNodeDown(t, ctx, c, fsys, bn, "/file", 5000, " truncating")
	if got, err := fsys.ReadFile(ctx, "/file"); err != nil || !bytes.Equal(got, orig[:5000]) {
		t.Fatalf("file: %d bytes (want 5000), %v", len(got), err)
	}
}

// truncateWithDataNodeDown truncates path to n while the cluster's one
// DataNode is stopped, so that the recovery must wait: the active's dump
// must show mark (the copy or the in-place cut under way) and other the
// same state; then the DataNode comes back, the lease is recovered and
// other must again hold what the active holds.
func truncateWithDataNodeDown(t *testing.T, ctx context.Context, c *Cluster, fsys *client.FileSystem, other *namenode.NameNode, path string, n int64, mark string) {
	t.Helper()
	if err := c.StopDataNode(0); err != nil {
		t.Fatal(err)
	}
	if done, err := fsys.Truncate(ctx, path, n); err != nil || done {
		t.Fatalf("truncate: done=%v err=%v", done, err)
	}
	if !strings.Contains(nsDump(t, c.NameNode()), mark) {
		t.Fatalf("the active's namespace shows no %q for %s", mark, path)
	}
	waitSame(t, c.NameNode(), other, "while the recovery waits")
	if err := c.StartDataNode(ctx, 0); err != nil {
		t.Fatal(err)
	}
	recoverLeaseWithin(t, ctx, fsys, path)
	waitSame(t, c.NameNode(), other, "after the recovery")
}

// recoverLeaseWithin calls recoverLease on path until it reports the file
// closed, failing the test after 60 s.
func recoverLeaseWithin(t *testing.T, ctx context.Context, fsys *client.FileSystem, path string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, err := fsys.RecoverLease(ctx, path)
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("recoverLease did not close %s within 60 s: %v", path, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// restartFromImage saves the namespace (in safe mode, through call), checks
// that the NameNode's dump shows mark, restarts the NameNode from that image
// and checks that it rebuilds the same state.
func restartFromImage(t *testing.T, ctx context.Context, c *Cluster, call func(method string, req, resp proto.Message), mark string) {
	t.Helper()
	call("setSafeMode", &hdfs.SetSafeModeRequestProto{Action: hdfs.SafeModeActionProto_SAFEMODE_ENTER.Enum()}, &hdfs.SetSafeModeResponseProto{})
	call("saveNamespace", &hdfs.SaveNamespaceRequestProto{}, &hdfs.SaveNamespaceResponseProto{})
	call("setSafeMode", &hdfs.SetSafeModeRequestProto{Action: hdfs.SafeModeActionProto_SAFEMODE_LEAVE.Enum()}, &hdfs.SetSafeModeResponseProto{})
	before := dump(t, c)
	if !strings.Contains(before, mark) {
		t.Fatalf("the open file's state does not show %q:\n%s", mark, before)
	}
	if err := c.RestartNameNode(ctx); err != nil {
		t.Fatal(err)
	}
	if a := dump(t, c); a != before {
		t.Fatalf("the state rebuilt from the image differs:\n%s", diffLines(before, a))
	}
}

// startOneDataNode starts a cluster of one DataNode (blocks of 4 KiB
// allowed, replication 1) for the test and a superuser client with 4 KiB
// blocks; both are closed when the test ends.
func startOneDataNode(t *testing.T, ctx context.Context) (*Cluster, *client.FileSystem) {
	t.Helper()
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: 1, Conf: []conf.KeyValue{
		{Key: conf.DFSNameNodeMinBlockSize, Value: "1024"},
		{Key: conf.DFSHeartbeatInterval, Value: "1"},
		{Key: conf.DFSNameNodeSafeModeExtension, Value: "0"},
		{Key: conf.DFSReplication, Value: "1"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, smallBlockClient(t, c)
}

// startBackupNode starts a Backup Node beside c's NameNode, waits until it
// is IN_SYNC and returns it with a superuser client of c with 4 KiB blocks;
// both are closed when the test ends.
func startBackupNode(t *testing.T, ctx context.Context, c *Cluster) (*namenode.NameNode, *client.FileSystem) {
	t.Helper()
	bn, err := c.StartHelper(ctx, namenode.RoleBackup, filepath.Join(c.opts.Dir, "bn"), backupKeys(1000)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bn.Close() })
	waitFor(t, 20*time.Second, "the Backup Node to be IN_SYNC", func() bool { return bn.BackupState() == "IN_SYNC" })
	return bn, smallBlockClient(t, c)
}

func smallBlockClient(t *testing.T, c *Cluster) *client.FileSystem {
	t.Helper()
	fsys, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, User: c.NameNode().SuperUser(), BlockSize: 4096, Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys
}
