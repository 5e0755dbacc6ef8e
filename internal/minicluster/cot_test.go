package minicluster

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	stock "github.com/colinmarc/hdfs/v2"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// TestCopyOnTruncate: the stock client truncates, inside its second block,
// a file a snapshot holds. The DataNodes copy the block's prefix into a new
// block and leave the old one whole: the snapshot reads the original bytes,
// the file its prefix, before and after a NameNode restart; an append
// works after it; deleting the snapshot deletes the old block's replicas.
func TestCopyOnTruncate(t *testing.T) {
	if testing.Short() {
		t.Skip("writes data through a cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: 3, Conf: []conf.KeyValue{
		{Key: conf.DFSNameNodeMinBlockSize, Value: "1024"},
		{Key: conf.DFSHeartbeatInterval, Value: "1"},
		{Key: conf.DFSNameNodeSafeModeExtension, Value: "0"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	super := c.NameNode().SuperUser()
	const blockSize = 64 << 10
	fsys, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, User: super, BlockSize: blockSize})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	cl, err := stock.NewClient(stock.ClientOptions{Addresses: []string{c.NameNodeAddr()}, User: super})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cl.Close() }() // the client of the moment

	orig := make([]byte, blockSize+blockSize/2+123)
	r := rand.New(rand.NewPCG(14, 4))
	for i := range orig {
		orig[i] = byte(r.Uint32())
	}
	if err := fsys.MkdirAll(ctx, "/dir", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile(ctx, "/dir/file", orig, false); err != nil {
		t.Fatal(err)
	}
	if err := cl.AllowSnapshots("/dir"); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateSnapshot("/dir", "s"); err != nil {
		t.Fatal(err)
	}
	pool := c.NameNode().BlockPoolID()
	replicas := func() map[int64][]storage.Replica {
		m := map[int64][]storage.Replica{}
		for _, dn := range c.DataNodes() {
			bp, err := dn.BlockPool(pool)
			if err != nil {
				t.Fatal(err)
			}
			for _, rep := range bp.Replicas() {
				m[rep.ID] = append(m[rep.ID], rep)
			}
		}
		return m
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30 s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// The second block: the one whose replicas hold blockSize/2+123 bytes.
	var oldID int64
	waitFor("the second block's three replicas", func() bool {
		for id, reps := range replicas() {
			if len(reps) == 3 && reps[0].NumBytes == int64(len(orig)-blockSize) {
				oldID = id
				return true
			}
		}
		return false
	})
	before := replicas()

	newLen := int64(blockSize + 1000 + 7) // inside a checksum chunk of the second block
	done, err := cl.Truncate("/dir/file", newLen)
	if err != nil || done {
		t.Fatalf("truncate: done=%v err=%v (want recovery, no error)", done, err)
	}
	waitClosed(t, ctx, fsys, "/dir/file")

	check := func(when string) {
		t.Helper()
		snap, err := cl.ReadFile("/dir/.snapshot/s/file")
		if err != nil || !bytes.Equal(snap, orig) {
			t.Fatalf("%s: snapshot read %d bytes (want the %d original), %v", when, len(snap), len(orig), err)
		}
		live, err := cl.ReadFile("/dir/file")
		if err != nil || !bytes.Equal(live, orig[:newLen]) {
			t.Fatalf("%s: file read %d bytes (want the %d-byte prefix), %v", when, len(live), newLen, err)
		}
	}
	check("after the truncate")
	after := replicas()
	if reps := after[oldID]; len(reps) != 3 || reps[0].NumBytes != before[oldID][0].NumBytes || reps[0].GenStamp != before[oldID][0].GenStamp {
		t.Fatalf("the snapshot's block changed: %+v, was %+v", reps, before[oldID])
	}
	var newID int64
	for id, reps := range after {
		if _, had := before[id]; !had {
			if newID != 0 {
				t.Fatalf("more than one new block: %d and %d", newID, id)
			}
			newID = id
			for _, rep := range reps {
				if rep.NumBytes != newLen-blockSize || rep.State != storage.Finalized {
					t.Fatalf("copied replica %+v, want %d bytes finalized", rep, newLen-blockSize)
				}
			}
		}
	}
	if newID == 0 || newID == oldID {
		t.Fatalf("no new block (old blk_%d): %v", oldID, after)
	}

	before0 := dump(t, c)
	if err := c.RestartNameNode(ctx); err != nil {
		t.Fatal(err)
	}
	// The reads below need the DataNodes to have reported to the new
	// NameNode; a stock client retries no read of a block without
	// locations, so wait for the file's blocks to have them.
	waitFor("block locations after the restart", func() bool {
		for _, p := range []string{"/dir/file", "/dir/.snapshot/s/file"} {
			locs, err := fsys.BlockLocations(ctx, p, 0, int64(len(orig)))
			if err != nil || len(locs) != 2 {
				return false
			}
			for _, l := range locs {
				if len(l.Hosts) == 0 {
					return false
				}
			}
		}
		return true
	})
	// The stock client does not reconnect after its connection broke.
	cl.Close()
	if cl, err = stock.NewClient(stock.ClientOptions{Addresses: []string{c.NameNodeAddr()}, User: super}); err != nil {
		t.Fatal(err)
	}
	check("after the NameNode restart")
	if a, b := before0, dump(t, c); a != b {
		t.Fatalf("the state rebuilt from the edit log differs from the live one:\n%s", diffLines(a, b))
	}

	// An append after the copy-on-truncate.
	tail := []byte("appended after the truncate")
	w, err := fsys.Append(ctx, "/dir/file")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(tail); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	live, err := cl.ReadFile("/dir/file")
	if want := append(append([]byte(nil), orig[:newLen]...), tail...); err != nil || !bytes.Equal(live, want) {
		t.Fatalf("after the append: %d bytes, %v", len(live), err)
	}
	if snap, err := cl.ReadFile("/dir/.snapshot/s/file"); err != nil || !bytes.Equal(snap, orig) {
		t.Fatalf("snapshot after the append: %d bytes, %v", len(snap), err)
	}

	// Deleting the snapshot frees the old block: its replicas go.
	if err := cl.DeleteSnapshot("/dir", "s"); err != nil {
		t.Fatal(err)
	}
	waitFor("the old block's replicas deleted", func() bool { return len(replicas()[oldID]) == 0 })
	if len(replicas()[newID]) == 0 {
		t.Fatalf("the new block blk_%d lost its replicas", newID)
	}
}

// TestCopyOnTruncateAfterRestart: the NameNode restarts from an image
// saved while a copy-on-truncate waits for its recovery (the only DataNode
// was down); the image keeps the block to copy, and recoverLease runs the
// copy with the DataNode back.
func TestCopyOnTruncateAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("writes data through a cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, fsys := startOneDataNode(t, ctx)
	super := c.NameNode().SuperUser()
	orig := []byte(strings.Repeat("0123456789abcdef", 400)) // 6400 bytes: 1.5 blocks
	if err := fsys.MkdirAll(ctx, "/dir", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile(ctx, "/dir/file", orig, false); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.CreateSnapshot(ctx, "/dir", "s"); err == nil {
		t.Fatal("a snapshot of a directory that does not allow them was taken")
	}
	admin := ipc.NewClient(ipc.ClientConfig{Addresses: []string{c.NameNodeAddr()}, User: super, Protocol: namenode.ClientProtocolName})
	defer admin.Close()
	call := func(method string, req, resp proto.Message) {
		t.Helper()
		if err := admin.Call(ctx, method, req, resp); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
	}
	call("allowSnapshot", &hdfs.AllowSnapshotRequestProto{SnapshotRoot: proto.String("/dir")}, &hdfs.AllowSnapshotResponseProto{})
	if _, err := fsys.CreateSnapshot(ctx, "/dir", "s"); err != nil {
		t.Fatal(err)
	}
	if err := c.StopDataNode(0); err != nil {
		t.Fatal(err)
	}
	done, err := fsys.Truncate(ctx, "/dir/file", 5000)
	if err != nil || done {
		t.Fatalf("truncate: done=%v err=%v", done, err)
	}
	restartFromImage(t, ctx, c, call, "copying=")
	if err := c.StartDataNode(ctx, 0); err != nil {
		t.Fatal(err)
	}
	recoverLeaseWithin(t, ctx, fsys, "/dir/file")
	if got, err := fsys.ReadFile(ctx, "/dir/file"); err != nil || !bytes.Equal(got, orig[:5000]) {
		t.Fatalf("file: %d bytes, %v", len(got), err)
	}
	if got, err := fsys.ReadFile(ctx, "/dir/.snapshot/s/file"); err != nil || !bytes.Equal(got, orig) {
		t.Fatalf("snapshot: %d bytes, %v", len(got), err)
	}
}

// TestCopyOnTruncateStandby: the standby, tailing the shared edits and
// hearing the DataNodes' reports, rebuilds a copy-on-truncate exactly (the
// new block, the snapshot's old one, their locations); after a failover it
// serves both views.
func TestCopyOnTruncateStandby(t *testing.T) {
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
	orig := bytes.Repeat([]byte("copy-on-truncate on the standby.\n"), 3000) // 99,000 bytes: 1.5 blocks
	if err := fsys.MkdirAll(ctx, "/dir", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile(ctx, "/dir/file", orig, false); err != nil {
		t.Fatal(err)
	}
	admin := ipc.NewClient(ipc.ClientConfig{Addresses: []string{c.NameNodeAddr()}, User: super, Protocol: namenode.ClientProtocolName})
	defer admin.Close()
	if err := admin.Call(ctx, "allowSnapshot", &hdfs.AllowSnapshotRequestProto{SnapshotRoot: proto.String("/dir")}, &hdfs.AllowSnapshotResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.CreateSnapshot(ctx, "/dir", "s"); err != nil {
		t.Fatal(err)
	}
	const newLen = 70_001
	done, err := fsys.Truncate(ctx, "/dir/file", newLen)
	if err != nil || done {
		t.Fatalf("truncate: done=%v err=%v", done, err)
	}
	waitClosed(t, ctx, fsys, "/dir/file")
	waitStandbyCaughtUp(t, nns[0], nns[1])
	if d := dumpOf(t, nns[1]); !strings.Contains(d, "/dir/file") {
		t.Fatalf("the standby's dump lacks the file:\n%s", d)
	}
	if err := c.Failover(ctx, 0, 1); err != nil {
		t.Fatal(err)
	}
	if got, err := fsys.ReadFile(ctx, "/dir/.snapshot/s/file"); err != nil || !bytes.Equal(got, orig) {
		t.Fatalf("snapshot after failover: %d bytes, %v", len(got), err)
	}
	if got, err := fsys.ReadFile(ctx, "/dir/file"); err != nil || !bytes.Equal(got, orig[:newLen]) {
		t.Fatalf("file after failover: %d bytes, %v", len(got), err)
	}
}

// TestCopyOnTruncateBackupNode: the Backup Node, fed the active's edit
// stream, holds the same state as the active while a copy-on-truncate
// waits for its recovery (the copy source recorded) and after it.
func TestCopyOnTruncateBackupNode(t *testing.T) {
	c := startCheckpointCluster(t, 1, backupKeys(1000)...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bn, fsys := startBackupNode(t, ctx, c)
	orig := []byte(strings.Repeat("backup node ", 500)) // 6000 bytes
	if err := fsys.MkdirAll(ctx, "/dir", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile(ctx, "/dir/file", orig, false); err != nil {
		t.Fatal(err)
	}
	if err := allowSnapshot(ctx, fsys, "/dir"); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.CreateSnapshot(ctx, "/dir", "s"); err != nil {
		t.Fatal(err)
	}
	truncateWithDataNodeDown(t, ctx, c, fsys, bn, "/dir/file", 5000, "copying=")
	if got, err := fsys.ReadFile(ctx, "/dir/.snapshot/s/file"); err != nil || !bytes.Equal(got, orig) {
		t.Fatalf("snapshot: %d bytes, %v", len(got), err)
	}
}
