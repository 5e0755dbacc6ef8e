package namenode

import (
	"fmt"
	pathpkg "path"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
)

// The one apply path (DESIGN.md §9).
//
// Everything about the namesystem that must survive a restart or a failover
// is a function of the edit log: the namespace tree; in the block map, which
// blocks exist, their file, length, generation stamp, replication and state
// (UNDER_CONSTRUCTION, COMMITTED, COMPLETE); the leases; and the retry
// cache's record of which client calls were carried out. applyLocked is the
// only code that changes that state, one op at a time, and every reader of
// edits calls it: the live write path (after logging), start-up replay, the
// standby's tailer, and the checkpointers.
//
// What an op does beyond the tree, by op:
//
//	OP_ADD                lease for the client; an overwritten file's blocks freed
//	OP_ADD_BLOCK          the penultimate block committed (COMPLETE once it has
//	                      its minimal replicas), the new last block UNDER_CONSTRUCTION
//	OP_UPDATE_BLOCKS      the last block takes its new stamp and length; blocks
//	                      dropped from the list are freed
//	OP_CLOSE              every block committed if needed, then COMPLETE; lease released
//	OP_APPEND             lease; a partial last block reopened (UNDER_CONSTRUCTION)
//	OP_TRUNCATE           freed blocks; with a truncate block, that block reopened
//	                      (copy-on-truncate: the new block added, UNDER_CONSTRUCTION,
//	                      the snapshot's block kept) and a lease for the client
//	OP_CONCAT_DELETE      the sources' blocks become the target's
//	OP_SET_REPLICATION    the file's blocks take the new factor
//	OP_SET_STORAGE_POLICY, OP_RENAME, OP_RENAME_OLD, OP_CONCAT_DELETE
//	                      the blocks below take their files' effective storage
//	                      policy (it steers where new replicas go)
//	OP_SET_GENSTAMP_V2    the block map's newest stamp (blocks "from the future")
//	OP_REASSIGN_LEASE     the lease moves to the new holder
//	OP_DELETE, OP_RENAME  freed blocks; leases of removed open files dropped
//
// Soft state — replica locations, DataNode liveness, pipelines, block
// recoveries under way, replication queues — is not in the edits: the live
// path changes it in a plan's follow-up, and a standby learns it from the
// DataNodes' reports. A plan never changes state itself; the ops it returns
// and its follow-up do.
//
// fromEdits is true when the op was read from the log rather than just
// logged by this NameNode: the calls recorded with the ops then enter the
// retry cache, so that a client retrying after a restart or a failover gets
// the first answer.
func (n *namesystem) applyLocked(o op.Op, fromEdits bool) error {
	t, bm := n.mu.tree, n.mu.bm
	// A rename moves a subtree under another parent, whose storage policy
	// may differ: where the moved inode lands, and the policy it inherited.
	var moved string
	var policyBefore uint8
	switch o := o.(type) {
	case *op.Rename:
		moved, policyBefore = o.Dst, t.EffectiveStoragePolicy(pathpkg.Dir(o.Src))
	case *op.RenameOld:
		moved, policyBefore = o.Dst, t.EffectiveStoragePolicy(pathpkg.Dir(o.Src))
		if t.IsDir(o.Dst) {
			moved = pathpkg.Join(o.Dst, pathpkg.Base(o.Src))
		}
	}
	var eff namespace.Effects
	if err := t.ApplyEffects(o, &eff); err != nil {
		return err
	}
	now := n.clock.Now()
	var berr error
	switch o := o.(type) {
	case *op.Add:
		n.mu.leases.AddLease(o.ClientName, o.InodeID, now)
	case *op.AddBlock:
		fi := eff.File
		if !fi.OK {
			return fmt.Errorf("namenode: %v of %s: no such file after apply", o.Code(), o.Path)
		}
		if p := o.Penultimate; p != nil {
			if _, err := bm.CommitBlock(blockmgmt.Block(*p)); err != nil {
				n.log.Warn("apply: commit of the penultimate block", "path", o.Path, "block", p.ID, "err", err)
			}
		}
		berr = bm.AddBlock(int64(fi.ID), blockmgmt.Block(o.Last), int(fi.Replication), blockmgmt.UnderConstruction, nil)
		bm.SetStoragePolicy([]int64{o.Last.ID}, t.EffectiveStoragePolicy(o.Path))
	case *op.UpdateBlocks:
		if k := len(o.Blocks); k > 0 {
			bm.UpdateBlock(blockmgmt.Block(o.Blocks[k-1]))
		}
	case *op.Close:
		fi := eff.File
		if !fi.OK {
			return fmt.Errorf("namenode: %v of %s: no such file after apply", o.Code(), o.Path)
		}
		for _, b := range fi.Blocks {
			if err := bm.CompleteBlock(int64(fi.ID), blockmgmt.Block(b), int(fi.Replication)); err != nil && berr == nil {
				berr = err
			}
		}
		n.mu.leases.RemoveFile(fi.ID)
	case *op.Append:
		fi, blocks, ok := t.File(o.Path)
		if !ok {
			return fmt.Errorf("namenode: %v of %s: no such file after apply", o.Code(), o.Path)
		}
		n.mu.leases.AddLease(o.ClientName, fi.ID, now)
		if k := len(blocks); k > 0 && !o.NewBlock && blocks[k-1].NumBytes < fi.BlockSize {
			berr = bm.ReopenForAppend(blocks[k-1].ID)
		}
	case *op.Truncate:
		if tb := o.TruncateBlock; tb != nil {
			fi, _, ok := t.File(o.Path)
			if !ok {
				return fmt.Errorf("namenode: %v of %s: no such file after apply", o.Code(), o.Path)
			}
			n.mu.leases.AddLease(o.ClientName, fi.ID, now)
			if _, copying := t.TruncateSource(fi.ID); copying {
				// Copy-on-truncate: a new block, under construction until
				// the recovery copies the snapshot's block into it.
				berr = bm.AddBlock(int64(fi.ID), blockmgmt.Block(*tb), int(fi.Replication), blockmgmt.UnderConstruction, nil)
				bm.SetStoragePolicy([]int64{tb.ID}, t.EffectiveStoragePolicy(o.Path))
			} else if berr = bm.ReopenForAppend(tb.ID); berr == nil {
				// In place: the block map takes the cut length as the tree
				// has it (and an image restores it), the stamp unchanged.
				if _, blocks, ok := t.File(o.Path); ok && len(blocks) > 0 {
					bm.UpdateBlock(blockmgmt.Block(blocks[len(blocks)-1]))
				}
			}
		}
	case *op.Concat:
		fi, blocks, ok := t.File(o.Target)
		if !ok {
			return fmt.Errorf("namenode: %v of %s: no such file after apply", o.Code(), o.Target)
		}
		bm.MoveToFile(blockIDs(blocks), int64(fi.ID), int(fi.Replication))
		bm.SetStoragePolicy(blockIDs(blocks), t.EffectiveStoragePolicy(o.Target))
	case *op.SetStoragePolicy:
		refreshPolicies(t, bm, o.Path)
	case *op.Rename, *op.RenameOld:
		if moved != "" && t.EffectiveStoragePolicy(pathpkg.Dir(moved)) != policyBefore {
			refreshPolicies(t, bm, moved)
		}
	case *op.SetReplication:
		if fi, blocks, ok := t.File(o.Path); ok {
			n.setReplicationLocked(blockIDs(blocks), int(fi.Replication))
		}
	case *op.SetGenstamp:
		bm.SetMaxGenStamp(o.GenStamp)
	case *op.ReassignLease:
		if id, ok := t.InodeID(o.Path); ok {
			if err := n.mu.leases.ReassignLease(id, o.Holder, o.NewHolder, now); err != nil {
				n.log.Warn("apply: reassign lease", "path", o.Path, "err", err)
			}
		}
	}
	for _, id := range eff.RemovedUC {
		n.mu.leases.RemoveFile(id)
	}
	if len(eff.FreedBlocks) > 0 {
		n.freeBlocksLocked(blockIDs(eff.FreedBlocks))
	}
	if k := t.Detached(); k > 0 {
		n.detaching.Store(k)
	}
	if berr != nil {
		return fmt.Errorf("namenode: %v: block map: %w", o.Code(), berr)
	}
	if fromEdits {
		n.rememberCallLocked(o)
	}
	return nil
}

// refreshPolicies gives the blocks of the files at or below path the
// files' effective storage policies, after an op that may have changed
// them (a policy set or unset above, a move under another directory).
func refreshPolicies(t *namespace.Tree, bm *blockmgmt.Manager, path string) {
	t.EachFilePolicy(path, func(policy uint8, blocks []op.Block) {
		bm.SetStoragePolicy(blockIDs(blocks), policy)
	})
}

// freeBlocksLocked removes the blocks an op freed from the block map: at
// once when they are few (up to dfs.namenode.block.deletion.increment and
// nothing queued), else queued, to be removed a slice per hold of the lock
// by whoever releases the lock next (writeLocked), as Hadoop's incremental
// block deletion does. A queued block is first marked deleted in the block
// map (blockmgmt.MarkDeleted, in slices of their own ahead of the removals):
// from then on a report of one of its replicas orders the replica deleted
// instead of recording it, and nothing schedules copies of it. Between the
// op and the marking a reported replica is recorded and deleted with the
// block.
func (n *namesystem) freeBlocksLocked(ids []int64) {
	inc := n.freeIncrement()
	if len(ids) <= inc && len(n.mu.toFree) == 0 {
		n.mu.bm.RemoveBlocks(ids)
		return
	}
	n.mu.toFree = append(n.mu.toFree, ids...)
	n.freeSliceLocked()
}

func (n *namesystem) freeIncrement() int {
	if inc := n.cfg.BlockDeletionIncrement; inc > 0 {
		return inc
	}
	return 1000
}

// sliceBudget is how long a slice of a long operation may hold the write
// lock (Config.LockSliceBudget).
func (n *namesystem) sliceBudget() time.Duration {
	if b := n.cfg.LockSliceBudget; b > 0 {
		return b
	}
	return defaultSliceBudget
}

// sliceOver ends a slice of a long operation begun now once the slice
// budget has passed. It reads the machine's monotonic clock, not the
// namesystem's (which tests may stop): it bounds a real hold of the lock.
func (n *namesystem) sliceOver() blockmgmt.Over {
	start, budget := time.Now(), n.sliceBudget()
	return func() bool { return time.Since(start) >= budget }
}

// defaultSliceBudget is hdfsgo.namenode.lock.slice-budget.ms's default.
const defaultSliceBudget = 2 * time.Millisecond

// freeSliceLocked does the next slice of the queued freeing: marking the
// blocks not yet marked, else removing up to an increment of them, each
// for at most the slice budget.
func (n *namesystem) freeSliceLocked() {
	if n.mu.marked < len(n.mu.toFree) {
		n.mu.marked += n.mu.bm.MarkDeleted(n.mu.toFree[n.mu.marked:], n.sliceOver())
		n.freeing.Store(int64(len(n.mu.toFree)))
		return
	}
	k := min(n.freeIncrement(), len(n.mu.toFree))
	k = n.mu.bm.RemoveBlocksFor(n.mu.toFree[:k], n.sliceOver())
	n.mu.toFree = n.mu.toFree[k:]
	n.mu.marked -= k
	if len(n.mu.toFree) == 0 {
		n.mu.toFree, n.mu.marked = nil, 0
	}
	n.freeing.Store(int64(len(n.mu.toFree)))
}

// releaseSliceLocked releases the next slice of the subtrees that big
// recursive deletes detached from the tree (namespace.Tree.ReleaseDetached)
// and queues their files' blocks to be freed as an op's freed blocks are.
func (n *namesystem) releaseSliceLocked() {
	var eff namespace.Effects
	n.mu.tree.ReleaseDetached(n.sliceOver(), &eff)
	n.detaching.Store(n.mu.tree.Detached())
	if len(eff.FreedBlocks) > 0 {
		n.mu.toFree = append(n.mu.toFree, blockIDs(eff.FreedBlocks)...)
		n.freeing.Store(int64(len(n.mu.toFree)))
	}
}

// replWork is a file's blocks waiting to take the replication r.
type replWork struct {
	ids []int64
	r   int
}

// setReplicationLocked gives a file's blocks their new expected
// replication in the block map (each block is re-judged: copies queued or
// excess replicas deleted): at once for a file of up to
// dfs.namenode.block.deletion.increment blocks with nothing queued, else
// in slices, one per hold of the lock, as freeBlocksLocked removes blocks.
// The queue is worked in order, so a later op on the same file wins.
func (n *namesystem) setReplicationLocked(ids []int64, r int) {
	if len(ids) <= n.freeIncrement() && len(n.mu.setrep) == 0 {
		n.mu.bm.SetReplication(ids, r)
		return
	}
	n.mu.setrep = append(n.mu.setrep, replWork{ids: ids, r: r})
	n.resetting.Add(int64(len(ids)))
	n.setrepSliceLocked()
}

// setrepSliceLocked takes the next slice of the queued replication
// changes.
func (n *namesystem) setrepSliceLocked() {
	w := &n.mu.setrep[0]
	k := n.mu.bm.SetReplicationFor(w.ids, w.r, n.sliceOver())
	w.ids = w.ids[k:]
	n.resetting.Add(-int64(k))
	if len(w.ids) == 0 {
		n.mu.setrep = n.mu.setrep[1:]
		if len(n.mu.setrep) == 0 {
			n.mu.setrep = nil
		}
	}
}

func blockIDs(blocks []op.Block) []int64 {
	ids := make([]int64, len(blocks))
	for i, b := range blocks {
		ids[i] = b.ID
	}
	return ids
}
