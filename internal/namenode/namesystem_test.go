package namenode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

func startForTest(t *testing.T) *NameNode {
	t.Helper()
	cfg, err := ConfigFrom(conf.Defaults().With(
		conf.KeyValue{Key: conf.DFSNameNodeNameDir, Value: filepath.Join(t.TempDir(), "name")},
		conf.KeyValue{Key: conf.DFSNameNodeRPCAddress, Value: "127.0.0.1:0"},
		conf.KeyValue{Key: conf.DFSNameNodeHTTPAddress, Value: "127.0.0.1:0"},
	))
	if err != nil {
		t.Fatal(err)
	}
	if err := Format(context.Background(), cfg, Deps{}, FormatOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nn, err := Start(context.Background(), cfg, Deps{Listener: l})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nn.Close() })
	return nn
}

// TestRecordTooLargeIsTheCallersError: a plan whose ops cannot all be
// logged changes nothing, answers its caller with an IOException, and the
// namesystem goes on serving (it used to panic with the lock held).
func TestRecordTooLargeIsTheCallersError(t *testing.T) {
	nn := startForTest(t)
	ctx := context.Background()
	perm := op.Perm{User: "hdfs", Group: "supergroup", Mode: 0o755}
	err := nn.ns.mutate(ctx, func(tr *namespace.Tree, now int64) ([]op.Op, error) {
		id := tr.NextInodeID()
		return []op.Op{
			&op.Mkdir{InodeID: id, Path: "/first", Mtime: now, Perm: perm},
			&op.Mkdir{InodeID: id + 1, Path: "/second", Mtime: now, Perm: op.Perm{User: strings.Repeat("u", 2<<20), Mode: 0o755}},
		}, nil
	})
	var re *remoteerr.Error
	if !errors.As(err, &re) || re.Class != remoteerr.ClassIOException || !strings.Contains(re.Message, "too large to be logged") {
		t.Fatalf("mutate of an oversized op = %v, want an IOException saying it is too large to be logged", err)
	}
	nn.ns.read(func(tr *namespace.Tree) {
		if _, ok := tr.InodeID("/first"); ok {
			t.Error("the first op of the refused batch was applied")
		}
	})
	if err := nn.ns.mutate(ctx, func(tr *namespace.Tree, now int64) ([]op.Op, error) {
		return []op.Op{&op.Mkdir{InodeID: tr.NextInodeID(), Path: "/after", Mtime: now, Perm: perm}}, nil
	}); err != nil {
		t.Fatalf("mutate after the refused batch: %v", err)
	}
	if err := nn.Err(); err != nil {
		t.Fatalf("NameNode failed: %v", err)
	}
}

// TestCallerGoneDuringRoll: a roll asked for by a caller that hangs up
// (rollEditLog from a standby whose call timed out, startCheckpoint from a
// Checkpoint or Backup Node that was killed) still completes; it used to
// fail the edit log with the caller's "context canceled" and stop the
// NameNode.
func TestCallerGoneDuringRoll(t *testing.T) {
	nn := startForTest(t)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := nn.rollEdits(gone); err != nil {
		t.Fatalf("rollEdits for a caller that is gone: %v", err)
	}
	if err := nn.saveNamespace(gone); err != nil {
		t.Fatalf("saveNamespace for a caller that is gone: %v", err)
	}
	if err := nn.ns.elog.Err(); err != nil {
		t.Fatalf("the edit log failed: %v", err)
	}
	perm := op.Perm{User: "hdfs", Group: "supergroup", Mode: 0o755}
	if err := nn.ns.mutate(context.Background(), func(tr *namespace.Tree, now int64) ([]op.Op, error) {
		return []op.Op{&op.Mkdir{InodeID: tr.NextInodeID(), Path: "/after", Mtime: now, Perm: perm}}, nil
	}); err != nil {
		t.Fatalf("a write after the rolls: %v", err)
	}
}

// TestDeleteFreesBlocksInIncrements: the blocks of a deleted tree leave the
// block map dfs.namenode.block.deletion.increment at a time, each slice in
// a hold of the write lock of its own, and all are gone when the delete
// returns.
func TestDeleteFreesBlocksInIncrements(t *testing.T) {
	nn := startForTest(t)
	nn.ns.cfg.BlockDeletionIncrement = 10
	ctx := context.Background()
	const files, perFile = 5, 19
	dirOfFiles(t, nn, files, perFile, false)
	count := func() (n int) {
		nn.ns.read(func(*namespace.Tree) { n = nn.ns.mu.bm.NumBlocks() })
		return n
	}
	if n := count(); n != files*perFile {
		t.Fatalf("%d blocks in the map, want %d", n, files*perFile)
	}
	holds := nn.ns.lockHold.n.Load()
	if err := nn.ns.mutate(ctx, func(tr *namespace.Tree, now int64) ([]op.Op, error) {
		return []op.Op{&op.Delete{Path: "/d", Mtime: now}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Fatalf("%d blocks left in the map after the delete", n)
	}
	// One hold for the delete and its first 10 blocks, then one per 10.
	if got, want := nn.ns.lockHold.n.Load()-holds, int64((files*perFile+9)/10); got < want {
		t.Fatalf("the delete took %d holds of the write lock, want at least %d", got, want)
	}
}

// TestDeleteOfBigTreeReleasedInSlices: a recursive delete of a directory
// of more files than the tree walks at once detaches it; the writer's
// further holds of the lock release it, 64 inodes a hold with a 1 ns
// budget, and remove every block before the call returns, while the
// counters and the open file's lease change with the op itself.
func TestDeleteOfBigTreeReleasedInSlices(t *testing.T) {
	nn := startForTest(t)
	nn.ns.cfg.LockSliceBudget = time.Nanosecond
	ctx := context.Background()
	const files = 5000
	dirOfFiles(t, nn, files, 1, true)
	var blocks, leases int
	nn.ns.read(func(*namespace.Tree) { blocks, leases = nn.ns.mu.bm.NumBlocks(), nn.ns.mu.leases.NumFiles() })
	if blocks != files-1 || leases != 1 {
		t.Fatalf("%d blocks, %d open files before the delete", blocks, leases)
	}
	holds := nn.ns.lockHold.n.Load()
	if err := nn.ns.mutate(ctx, func(tr *namespace.Tree, now int64) ([]op.Op, error) {
		return []op.Op{&op.Delete{Path: "/d", Mtime: now}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	var inodes, detached int64
	nn.ns.read(func(tr *namespace.Tree) {
		blocks, leases = nn.ns.mu.bm.NumBlocks(), nn.ns.mu.leases.NumFiles()
		inodes, detached = tr.NumInodes(), tr.Detached()
	})
	if blocks != 0 || leases != 0 || inodes != 1 || detached != 0 {
		t.Fatalf("after the delete: %d blocks, %d open files, %d inodes, %d detached; want 0, 0, 1, 0", blocks, leases, inodes, detached)
	}
	if got, want := nn.ns.lockHold.n.Load()-holds, int64(files/64); got < want {
		t.Fatalf("the delete took %d holds of the write lock, want at least %d", got, want)
	}
}

// dirOfFiles writes /d holding files /d/f0... with perFile one-byte
// blocks each (ids from 2^30 on, replication 1), all complete but the
// first when firstOpen.
func dirOfFiles(t *testing.T, nn *NameNode, files, perFile int, firstOpen bool) {
	t.Helper()
	perm := op.Perm{User: "hdfs", Group: "supergroup", Mode: 0o755}
	var gs int64
	nn.ns.read(func(tr *namespace.Tree) { gs = int64(tr.GenStamp()) })
	err := nn.ns.mutate(context.Background(), func(tr *namespace.Tree, now int64) ([]op.Op, error) {
		id := tr.NextInodeID()
		ops := []op.Op{&op.Mkdir{InodeID: id, Path: "/d", Mtime: now, Perm: perm}}
		for f := range files {
			p := fmt.Sprintf("/d/f%d", f)
			ops = append(ops, &op.Add{InodeID: id + 1 + uint64(f), Path: p, Replication: 1, Mtime: now, Atime: now, BlockSize: 1 << 20, Perm: perm, ClientName: "c", ClientMachine: "m"})
			if f == 0 && firstOpen {
				continue
			}
			var blocks []op.Block
			for b := range perFile {
				blocks = append(blocks, op.Block{ID: int64(1<<30 + f*perFile + b), NumBytes: 1, GenStamp: gs})
			}
			ops = append(ops, &op.Close{Path: p, Mtime: now, Atime: now, Blocks: blocks})
		}
		return ops, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// bigFile writes /f with n one-byte blocks of replication 1, complete.
func bigFile(t *testing.T, nn *NameNode, n int) []int64 {
	t.Helper()
	perm := op.Perm{User: "hdfs", Group: "supergroup", Mode: 0o755}
	var gs int64
	nn.ns.read(func(tr *namespace.Tree) { gs = int64(tr.GenStamp()) })
	var ids []int64
	err := nn.ns.mutate(context.Background(), func(tr *namespace.Tree, now int64) ([]op.Op, error) {
		var blocks []op.Block
		for b := range n {
			blocks = append(blocks, op.Block{ID: int64(1<<30 + b), NumBytes: 1, GenStamp: gs})
			ids = append(ids, int64(1<<30+b))
		}
		return []op.Op{
			&op.Add{InodeID: tr.NextInodeID(), Path: "/f", Replication: 1, Mtime: now, Atime: now, BlockSize: 1 << 20, Perm: perm, ClientName: "c", ClientMachine: "m"},
			&op.Close{Path: "/f", Mtime: now, Atime: now, Blocks: blocks},
		}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestSetReplicationInSlices: the new replication of a file of many blocks
// reaches the block map in slices, each in a hold of the write lock of its
// own (here a slice budget of 1 ns: 64 blocks per hold), and every block
// has it when the call returns.
func TestSetReplicationInSlices(t *testing.T) {
	nn := startForTest(t)
	nn.ns.cfg.BlockDeletionIncrement = 10
	nn.ns.cfg.LockSliceBudget = time.Nanosecond
	const blocks = 1000
	ids := bigFile(t, nn, blocks)
	holds := nn.ns.lockHold.n.Load()
	if err := nn.ns.mutate(context.Background(), func(tr *namespace.Tree, now int64) ([]op.Op, error) {
		return []op.Op{&op.SetReplication{Path: "/f", Replication: 3}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := nn.ns.lockHold.n.Load()-holds, int64(blocks/64); got < want {
		t.Fatalf("setReplication took %d holds of the write lock, want at least %d", got, want)
	}
	nn.ns.read(func(*namespace.Tree) {
		for _, id := range ids {
			if bi, ok := nn.ns.mu.bm.BlockInfo(id); !ok || bi.Replication != 3 {
				t.Fatalf("blk_%d: %+v %v, want replication 3", id, bi, ok)
			}
		}
	})
}

// TestFreedBlocksMarkedFirst: the blocks of a big delete are marked deleted
// in the block map before any is removed, so a replica reported between
// the delete and the block's removal is not recorded.
func TestFreedBlocksMarkedFirst(t *testing.T) {
	nn := startForTest(t)
	nn.ns.cfg.BlockDeletionIncrement = 10
	ids := bigFile(t, nn, 100)
	var removedAtOnce, live int
	nn.ns.holdWriteLock(func() {
		// The first slice of what an op freeing 100 blocks leaves queued.
		nn.ns.freeBlocksLocked(ids)
		removedAtOnce = 100 - nn.ns.mu.bm.NumBlocks()
		for _, id := range ids {
			if bi, ok := nn.ns.mu.bm.BlockInfo(id); ok && !bi.Deleted {
				live++
			}
		}
	})
	if removedAtOnce != 0 || live != 0 {
		t.Fatalf("after the first slice: %d blocks removed and %d not marked deleted, want 0 and 0 (marked first)", removedAtOnce, live)
	}
	nn.ns.writeLocked(func() {})
	if n := nn.ns.mu.bm.NumBlocks(); n != 0 {
		t.Fatalf("%d blocks left after the slices", n)
	}
}
