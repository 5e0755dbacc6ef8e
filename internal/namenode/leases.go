package namenode

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/lease"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// Leases and lease recovery.
//
// The lease table (package lease) lives under the namesystem lock next to the
// tree and the block manager. The live path keeps it in step with the ops it
// applies (noteLeaseLocked); at start-up it is rebuilt from the files under
// construction. A lease past the hard limit, a recoverLease call, or another
// client's create/append after the soft limit releases the lease
// (releaseLocked): the file is closed at once when its blocks allow, else
// block recovery of the last block starts — a new generation stamp is logged,
// the NameNode takes the lease, and the primary DataNode gets DNA_RECOVERBLOCK
// with its next heartbeat. The primary reports the agreed block with
// commitBlockSynchronization, which closes the file. A recovery that does not
// report within lease.RecoveryTimeout is retried with the next primary.

const classRecoveryInProgress = "org.apache.hadoop.hdfs.protocol.RecoveryInProgressException"

// noteLeaseLocked updates the lease table for one applied op.
func (n *namesystem) noteLeaseLocked(o op.Op, now time.Time) {
	t, l := n.mu.tree, n.mu.leases
	switch o := o.(type) {
	case *op.Add:
		l.AddLease(o.ClientName, o.InodeID, now)
	case *op.Append:
		if id, ok := t.InodeID(o.Path); ok {
			l.AddLease(o.ClientName, id, now)
		}
	case *op.Close:
		if id, ok := t.InodeID(o.Path); ok {
			l.RemoveFile(id)
		}
	case *op.Truncate:
		if o.TruncateBlock != nil {
			if id, ok := t.InodeID(o.Path); ok {
				l.AddLease(o.ClientName, id, now)
			}
		}
	case *op.ReassignLease:
		if id, ok := t.InodeID(o.Path); ok {
			if err := l.ReassignLease(id, o.Holder, o.NewHolder, now); err != nil {
				n.log.Warn("reassign lease", "path", o.Path, "err", err)
			}
		}
	}
}

func toLeaseState(s blockmgmt.BlockUCState) lease.BlockState {
	switch s {
	case blockmgmt.Complete:
		return lease.Complete
	case blockmgmt.Committed:
		return lease.Committed
	case blockmgmt.UnderRecovery:
		return lease.UnderRecovery
	}
	return lease.UnderConstruction
}

// releaseLocked releases the lease on the file under construction fileID: it
// returns the ops that close it (closed=true), or the ops that start block
// recovery of its last block, or nothing while a recovery runs.
func (n *namesystem) releaseLocked(fileID uint64, now time.Time, prevPrimary int) (ops []op.Op, closed bool, err error) {
	t, bm := n.mu.tree, n.mu.bm
	path, holder, _, blocks, ok := t.UnderConstructionFile(fileID)
	if !ok {
		return nil, true, nil // closed or deleted meanwhile
	}
	nowMs := now.UnixMilli()
	fs := lease.FileState{NumBlocks: len(blocks), MinReplication: n.cfg.Blocks.MinReplication, PrevPrimary: prevPrimary}
	var holders []blockmgmt.DatanodeID
	if k := len(blocks); k > 0 {
		last := blocks[k-1]
		info, _ := bm.BlockInfo(last.ID)
		fs.Last = toLeaseState(info.State)
		fs.LastFinalized = info.Live
		fs.LastNumBytes = info.NumBytes
		var stale []bool
		holders, stale = bm.Holders(last.ID, now)
		for _, s := range stale {
			fs.Holders = append(fs.Holders, lease.Holder{Stale: s})
		}
		if k > 1 {
			pen := blocks[k-2]
			pi, _ := bm.BlockInfo(pen.ID)
			fs.Penultimate = toLeaseState(pi.State)
			fs.PenultimateMinReplicated = bm.IsMinimallyReplicated(pen.ID)
		}
		for _, b := range blocks[:max(k-2, 0)] {
			if !bm.IsComplete(b.ID) {
				fs.EarlierIncomplete = true
			}
		}
		if a, ok := n.mu.recoveries.Lookup(last.ID); ok {
			if fs.PrevPrimary < 0 {
				fs.PrevPrimary = a.Primary
			}
			fs.RecoveryPending = n.mu.recoveries.Pending(last.ID, now, n.recoveryTimeout())
		}
	}
	d := lease.DecideRelease(fs)
	switch d.Kind {
	case lease.CloseFile:
		ops, err = t.PlanCloseUnderConstruction(fileID, blocks, nowMs)
		return ops, err == nil, err
	case lease.CompleteLastAndClose:
		if err := bm.ForceComplete(blocks[len(blocks)-1].ID); err != nil {
			return nil, false, err
		}
		ops, err = t.PlanCloseUnderConstruction(fileID, blocks, nowMs)
		return ops, err == nil, err
	case lease.RemoveEmptyLastBlockAndClose:
		last := blocks[len(blocks)-1]
		bm.RemoveBlocks([]int64{last.ID})
		ops, err = t.PlanCloseUnderConstruction(fileID, blocks[:len(blocks)-1], nowMs)
		return ops, err == nil, err
	case lease.StartBlockRecovery:
		last := blocks[len(blocks)-1]
		recoveryID := t.NextGenStamp()
		nnHolder := n.mu.leases.RecoveryHolder(now)
		ops = append(ops, &op.SetGenstamp{GenStamp: recoveryID})
		if holder != nnHolder && !isNameNodeHolder(holder) {
			re, err := t.PlanReassignLease(fileID, nnHolder)
			if err != nil {
				return nil, false, err
			}
			ops = append(ops, re...)
		}
		var parts []blockmgmt.DatanodeID
		for _, i := range d.Participants {
			parts = append(parts, holders[i])
		}
		if len(parts) == 0 {
			parts = holders
		}
		if err := bm.StartRecovery(last.ID, recoveryID, holders[d.Primary].UUID, parts, -1); err != nil {
			return nil, false, err
		}
		n.mu.recoveries.Start(last.ID, recoveryID, d.Primary, now)
		n.log.Info("block recovery started", "path", path, "block", last.ID, "recoveryID", recoveryID,
			"primary", holders[d.Primary].XferAddr(), "holders", len(parts))
		return ops, false, nil
	case lease.RecoveryInProgress, lease.Wait:
		return nil, false, nil
	}
	n.log.Warn("lease recovery cannot proceed", "path", path, "decision", d.Kind.String(), "reason", d.Reason)
	return nil, false, nil
}

func isNameNodeHolder(h string) bool {
	return len(h) >= len(lease.NameNodeHolder) && h[:len(lease.NameNodeHolder)] == lease.NameNodeHolder
}

func (n *namesystem) recoveryTimeout() time.Duration {
	if n.cfg.Testing.RecoveryTimeout > 0 {
		return n.cfg.Testing.RecoveryTimeout
	}
	return lease.RecoveryTimeout(n.cfg.Blocks.HeartbeatInterval)
}

// leaseMonitorPass releases every lease past the hard limit (a bounded number
// per pass) and retries overdue block recoveries.
func (n *namesystem) leaseMonitorPass(ctx context.Context) {
	if n.Err() != nil {
		return
	}
	now := n.clock.Now()
	var last int64
	n.writeLocked(func() {
		if n.mu.bm.InSafeMode() {
			return
		}
		for _, e := range n.mu.leases.ExpiredHardLimit(now, 100) {
			for _, id := range e.FileIDs {
				ops, closed, err := n.releaseLocked(id, now, -1)
				if err != nil {
					n.log.Warn("lease recovery", "holder", e.Holder, "inode", id, "err", err)
					continue
				}
				if closed {
					n.log.Info("lease released: file closed", "holder", e.Holder, "inode", id)
				}
				txid, err := n.logAndApplyLocked(ops)
				if err != nil {
					n.log.Warn("lease recovery", "holder", e.Holder, "inode", id, "err", err)
					if n.Err() != nil {
						return
					}
					continue
				}
				last = max(last, txid)
			}
		}
		for _, a := range n.mu.recoveries.Due(now, n.recoveryTimeout()) {
			info, ok := n.mu.bm.BlockInfo(a.BlockID)
			if !ok {
				continue
			}
			n.log.Warn("block recovery timed out; retrying with another primary", "block", a.BlockID, "recoveryID", a.RecoveryID)
			ops, _, err := n.releaseLocked(uint64(info.FileID), now, a.Primary)
			if err != nil {
				n.log.Warn("block recovery retry", "block", a.BlockID, "err", err)
				continue
			}
			txid, err := n.logAndApplyLocked(ops)
			if err != nil {
				n.log.Warn("block recovery retry", "block", a.BlockID, "err", err)
				if n.Err() != nil {
					return
				}
				continue
			}
			last = max(last, txid)
		}
	})
	if last > 0 {
		n.sync(ctx, last)
	}
}

// takeOverExpiredLocked handles another client's create or append of a file
// under construction: once its holder's soft limit has passed, the lease is
// released. The ops that does are logged and applied here; closed reports
// whether the file is now closed. While block recovery runs the caller is told
// to try again (RecoveryInProgressException).
func (n *namesystem) takeOverExpiredLocked(path, client string, now time.Time) (closed bool, err error) {
	t := n.mu.tree
	id, ok := t.InodeID(path)
	if !ok {
		return false, nil
	}
	_, holder, _, _, uc := t.UnderConstructionFile(id)
	if !uc || holder == client {
		return false, nil
	}
	if !isNameNodeHolder(holder) && !n.mu.leases.SoftLimitExpired(holder, now) {
		return false, nil // the namespace answers AlreadyBeingCreated
	}
	ops, closed, err := n.releaseLocked(id, now, -1)
	if err != nil {
		return false, err
	}
	if _, err := n.logAndApplyLocked(ops); err != nil {
		return false, err
	}
	if !closed {
		return false, remoteerr.New(classRecoveryInProgress,
			"Failed to create or append %s for %s because lease recovery is in progress. Try again later.", path, client)
	}
	n.log.Info("lease of an abandoned file recovered", "path", path, "holder", holder, "by", client)
	return true, nil
}

func (c *clientRPC) renewLease(ctx context.Context, req *hdfs.RenewLeaseRequestProto) (*hdfs.RenewLeaseResponseProto, error) {
	c.ns.writeLocked(func() { c.ns.mu.leases.RenewLease(req.GetClientName(), c.ns.clock.Now()) })
	return &hdfs.RenewLeaseResponseProto{}, nil
}

func (c *clientRPC) recoverLease(ctx context.Context, req *hdfs.RecoverLeaseRequestProto) (*hdfs.RecoverLeaseResponseProto, error) {
	u := c.caller(ctx)
	var done bool
	err := c.ns.mutateBlocks(ctx, func(t *namespace.Tree, bm *blockmgmt.Manager, now int64) ([]op.Op, error) {
		fi, err := t.Stat(u, req.GetSrc())
		if err != nil {
			return nil, err
		}
		if fi.IsDir {
			return nil, remoteerr.New(remoteerr.ClassFileNotFound, "Path is not a file: %s", req.GetSrc())
		}
		if err := t.CheckAccess(u, req.GetSrc(), namespace.Write); err != nil {
			return nil, err
		}
		if !fi.UnderConstruction {
			done = true
			return nil, nil
		}
		ops, closed, err := c.ns.releaseLocked(fi.ID, c.ns.clock.Now(), -1)
		done = closed
		return ops, err
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.RecoverLeaseResponseProto{Result: proto.Bool(done)}, nil
}

func (d *datanodeRPC) commitBlockSynchronization(ctx context.Context, req *datanode.CommitBlockSynchronizationRequestProto) (*datanode.CommitBlockSynchronizationResponseProto, error) {
	b := toBlock(req.GetBlock())
	newGS, newLen := int64(req.GetNewGenStamp()), int64(req.GetNewLength())
	var targets []blockmgmt.DatanodeID
	for _, id := range req.GetNewTaragets() {
		targets = append(targets, datanodeIDFromProto(id))
	}
	ns := d.ns
	err := ns.mutateBlocksAnyMode(ctx, func(t *namespace.Tree, bm *blockmgmt.Manager, now int64) ([]op.Op, error) {
		info, ok := bm.BlockInfo(b.ID)
		if !ok {
			return nil, remoteerr.New(remoteerr.ClassIOException, "commitBlockSynchronization: blk_%d not found", b.ID)
		}
		path, _, _, blocks, uc := t.UnderConstructionFile(uint64(info.FileID))
		if !uc {
			// Already closed (a repeated commit): fine when it matches.
			if info.GenStamp == newGS && info.NumBytes == newLen {
				return nil, nil
			}
			return nil, remoteerr.New(remoteerr.ClassIOException, "commitBlockSynchronization: the file of blk_%d is not under construction", b.ID)
		}
		if a, ok := ns.mu.recoveries.Lookup(b.ID); ok && a.RecoveryID != newGS {
			return nil, remoteerr.New(remoteerr.ClassIOException,
				"The recovery id %d does not match current recovery id %d for block blk_%d", newGS, a.RecoveryID, b.ID)
		}
		k := len(blocks)
		if k == 0 || blocks[k-1].ID != b.ID {
			return nil, remoteerr.New(remoteerr.ClassIOException, "commitBlockSynchronization: blk_%d is not the last block of %s", b.ID, path)
		}
		nb := append([]op.Block(nil), blocks...)
		var ops []op.Op
		if req.GetDeleteBlock() {
			nb = nb[:k-1]
			bm.RemoveBlocks([]int64{b.ID})
		} else {
			if newGS < blocks[k-1].GenStamp {
				return nil, remoteerr.New(remoteerr.ClassIOException, "commitBlockSynchronization: stamp %d is older than blk_%d's %d", newGS, b.ID, blocks[k-1].GenStamp)
			}
			nb[k-1].GenStamp, nb[k-1].NumBytes = newGS, newLen
			if err := bm.CommitRecovery(b.ID, newGS, newLen, targets); err != nil {
				return nil, remoteerr.New(remoteerr.ClassIOException, "commitBlockSynchronization: %v", err)
			}
		}
		ns.mu.recoveries.Done(b.ID)
		if req.GetCloseFile() {
			if !req.GetDeleteBlock() {
				bm.ForceComplete(b.ID)
			}
			cl, err := t.PlanCloseUnderConstruction(uint64(info.FileID), nb, now)
			if err != nil {
				return nil, err
			}
			ops = append(ops, cl...)
			d.nn.deps.Logger.Info("block recovery committed; file closed", "path", path, "block", b.ID, "genStamp", newGS, "length", newLen)
		} else {
			ops = append(ops, &op.UpdateBlocks{Path: path, Blocks: nb})
		}
		return ops, nil
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &datanode.CommitBlockSynchronizationResponseProto{}, nil
}

// recoverCommand turns a RecoverBlock order into DNA_RECOVERBLOCK.
func (d *datanodeRPC) recoverCommand(r blockmgmt.RecoverBlock) *datanode.DatanodeCommandProto {
	locs := make([]blockmgmt.DatanodeInfo, len(r.Holders))
	for i, h := range r.Holders {
		locs[i] = blockmgmt.DatanodeInfo{ID: h}
	}
	rb := &hdfs.RecoveringBlockProto{
		NewGenStamp: proto.Uint64(uint64(r.NewGenStamp)),
		Block:       locatedBlock(d.nn.version.BlockPoolID, blockmgmt.LocatedBlock{Block: r.Block, Locations: locs}, 0),
	}
	if r.NewLength >= 0 {
		rb.TruncateBlock = &hdfs.BlockProto{BlockId: proto.Uint64(uint64(r.Block.ID)), GenStamp: proto.Uint64(uint64(r.NewGenStamp)), NumBytes: proto.Uint64(uint64(r.NewLength))}
	}
	return &datanode.DatanodeCommandProto{
		CmdType:     datanode.DatanodeCommandProto_BlockRecoveryCommand.Enum(),
		RecoveryCmd: &datanode.BlockRecoveryCommandProto{Blocks: []*hdfs.RecoveringBlockProto{rb}},
	}
}

func (c *clientRPC) truncate(ctx context.Context, req *hdfs.TruncateRequestProto) (*hdfs.TruncateResponseProto, error) {
	u := c.caller(ctx)
	newLength := int64(req.GetNewLength()) // a negative length arrives as its uint64 cast
	var done bool
	err := c.ns.mutateBlocks(ctx, func(t *namespace.Tree, bm *blockmgmt.Manager, now int64) ([]op.Op, error) {
		ok, ops, err := t.PlanTruncate(u, req.GetSrc(), newLength, req.GetClientName(), clientMachine(ctx), now)
		done = ok
		if err != nil || ok {
			return ops, err
		}
		// The cut falls inside a block: the file stays open while the
		// block's replicas are cut to the new length by block recovery.
		var tb *op.Block
		for _, o := range ops {
			if tr, isTr := o.(*op.Truncate); isTr {
				tb = tr.TruncateBlock
			}
		}
		if tb == nil {
			return nil, remoteerr.New(remoteerr.ClassIOException, "truncate of %s: no block to cut", req.GetSrc())
		}
		nowT := c.ns.clock.Now()
		holders, stale := bm.Holders(tb.ID, nowT)
		if len(holders) == 0 {
			return nil, remoteerr.New(remoteerr.ClassIOException, "truncate of %s: no live replica of blk_%d", req.GetSrc(), tb.ID)
		}
		primary := 0
		for i, s := range stale {
			if !s {
				primary = i
				break
			}
		}
		if err := bm.StartRecovery(tb.ID, tb.GenStamp, holders[primary].UUID, holders, tb.NumBytes); err != nil {
			return nil, remoteerr.New(remoteerr.ClassIOException, "truncate: %v", err)
		}
		c.ns.mu.recoveries.Start(tb.ID, tb.GenStamp, primary, nowT)
		return ops, nil
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.TruncateResponseProto{Result: proto.Bool(done)}, nil
}
