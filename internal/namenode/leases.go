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
// tree and the block manager. The one apply path (apply.go) keeps it in step
// with the ops, live and replayed alike; an image's open files get a lease
// each at start-up. A lease past the hard limit, a recoverLease call, or
// another client's create/append after the soft limit releases the lease
// (releasePlan, a pure plan): the file is closed at once when its blocks
// allow, else block recovery of the last block starts — a new generation
// stamp and the lease's move to the NameNode are logged, and the plan's
// follow-up queues DNA_RECOVERBLOCK for the primary DataNode's next
// heartbeat (recoveries under way are soft state: a NameNode that restarts
// or takes over starts them again when the leases expire). The primary reports the agreed block with
// commitBlockSynchronization, which closes the file. A recovery that does not
// report within lease.RecoveryTimeout is retried with the next primary.
//
// Truncate starts the same recovery with the new length, and so does
// every retry of it while the file is truncating in place
// (namespace.Tree.TruncatingInPlace); for a
// copy-on-truncate (the file's last block is a new block, the snapshot keeps
// the old one: namespace.Tree.TruncateSource) the holders asked are the old
// block's, DNA_RECOVERBLOCK names the old block with the new one as its
// truncateBlock, and commitBlockSynchronization, naming the old block as
// Hadoop's DataNodes do, closes the file with the new one.

const classRecoveryInProgress = "org.apache.hadoop.hdfs.protocol.RecoveryInProgressException"

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

// releasePlan plans the release of the lease on the file under construction
// fileID: the ops that close it (closed=true), or the ops that start block
// recovery of its last block with a follow-up that starts it, or nothing
// while a recovery runs. It reads the namesystem and changes nothing.
func (n *namesystem) releasePlan(t *namespace.Tree, bm blockmgmt.View, fileID uint64, now time.Time, prevPrimary int) (ops []op.Op, after followUp, closed bool, err error) {
	path, holder, _, blocks, ok := t.UnderConstructionFile(fileID)
	if !ok {
		return nil, nil, true, nil // closed or deleted meanwhile
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
		from := last.ID
		if src, ok := t.TruncateSource(fileID); ok {
			from = src // a copy-on-truncate: the snapshot's block has the data
		}
		holders, stale = bm.Holders(from, now)
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
	case lease.CloseFile, lease.CompleteLastAndClose:
		// Applying OP_CLOSE completes every block, the last one too.
		ops, err = t.PlanCloseUnderConstruction(fileID, blocks, nowMs)
		return ops, nil, err == nil, err
	case lease.RemoveEmptyLastBlockAndClose:
		// The close without it frees the empty last block.
		ops, err = t.PlanCloseUnderConstruction(fileID, blocks[:len(blocks)-1], nowMs)
		return ops, nil, err == nil, err
	case lease.StartBlockRecovery:
		last := blocks[len(blocks)-1]
		recoveryID := t.NextGenStamp()
		nnHolder := n.mu.leases.RecoveryHolder(now)
		ops = append(ops, &op.SetGenstamp{GenStamp: recoveryID})
		if holder != nnHolder && !isNameNodeHolder(holder) {
			re, err := t.PlanReassignLease(fileID, nnHolder)
			if err != nil {
				return nil, nil, false, err
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
		primary := holders[d.Primary]
		src, copying := t.TruncateSource(fileID)
		newLength := int64(-1) // the holders agree on a length
		if t.TruncatingInPlace(fileID) {
			newLength = last.NumBytes // the truncate's cut, every time
		}
		after = func() {
			var err error
			if copying {
				err = n.mu.bm.StartCopyRecovery(last.ID, src, recoveryID, primary.UUID, parts, last.NumBytes)
			} else {
				err = n.mu.bm.StartRecovery(last.ID, recoveryID, primary.UUID, parts, newLength)
			}
			if err != nil {
				n.log.Warn("block recovery not started", "path", path, "block", last.ID, "err", err)
				return
			}
			n.mu.recoveries.Start(last.ID, recoveryID, d.Primary, now)
			n.log.Info("block recovery started", "path", path, "block", last.ID, "recoveryID", recoveryID,
				"primary", primary.XferAddr(), "holders", len(parts))
		}
		return ops, after, false, nil
	case lease.RecoveryInProgress, lease.Wait:
		return nil, nil, false, nil
	}
	n.log.Warn("lease recovery cannot proceed", "path", path, "decision", d.Kind.String(), "reason", d.Reason)
	return nil, nil, false, nil
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
// per pass) and retries overdue block recoveries. Each release is one step:
// planned, logged, applied, its recovery started.
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
		release := func(fileID uint64, prevPrimary int, what string) bool {
			ops, after, closed, err := n.releasePlan(n.mu.tree, n.mu.bm, fileID, now, prevPrimary)
			if err != nil {
				n.log.Warn(what, "inode", fileID, "err", err)
				return true
			}
			txid, err := n.logAndApplyLocked(ops)
			if err != nil {
				n.log.Warn(what, "inode", fileID, "err", err)
				return n.Err() == nil
			}
			last = max(last, txid)
			if after != nil {
				after()
			}
			if closed && len(ops) > 0 {
				n.log.Info("lease released: file closed", "inode", fileID)
			}
			return true
		}
		for _, e := range n.mu.leases.ExpiredHardLimit(now, 100) {
			for _, id := range e.FileIDs {
				if !release(id, -1, "lease recovery") {
					return
				}
			}
		}
		for _, a := range n.mu.recoveries.Due(now, n.recoveryTimeout()) {
			info, ok := n.mu.bm.BlockInfo(a.BlockID)
			if !ok {
				continue
			}
			n.log.Warn("block recovery timed out; retrying with another primary", "block", a.BlockID, "recoveryID", a.RecoveryID)
			if !release(uint64(info.FileID), a.Primary, "block recovery retry") {
				return
			}
		}
	})
	if last > 0 {
		n.sync(ctx, last)
	}
}

// takeOverStep is the first step of another client's create or append of a
// file under construction: once its holder's soft limit has passed, the
// lease is released (the file closed, or its block recovery started). The
// ops that does are logged whatever follows. A create of the file that was
// closed fails with FileAlreadyExistsException, as in HDFS; while block
// recovery runs the caller is told to try again
// (RecoveryInProgressException).
func (n *namesystem) takeOverStep(path, client, machine string, create bool) blockPlan {
	return func(t *namespace.Tree, bm blockmgmt.View, now int64) ([]op.Op, followUp, error) {
		id, ok := t.InodeID(path)
		if !ok {
			return nil, nil, nil
		}
		_, holder, _, _, uc := t.UnderConstructionFile(id)
		nowT := n.clock.Now()
		if !uc || holder == client {
			return nil, nil, nil
		}
		if !isNameNodeHolder(holder) && !n.mu.leases.SoftLimitExpired(holder, nowT) {
			return nil, nil, nil // the namespace answers AlreadyBeingCreated
		}
		ops, after, closed, err := n.releasePlan(t, bm, id, nowT, -1)
		if err != nil {
			return nil, nil, err
		}
		if !closed {
			return ops, after, remoteerr.New(classRecoveryInProgress,
				"Failed to create or append %s for %s because lease recovery is in progress. Try again later.", path, client)
		}
		n.log.Info("lease of an abandoned file recovered", "path", path, "holder", holder, "by", client)
		if create {
			return ops, after, remoteerr.New(remoteerr.ClassFileAlreadyExists, "%s for client %s already exists", path, machine)
		}
		return ops, after, nil
	}
}

func (c *clientRPC) renewLease(ctx context.Context, req *hdfs.RenewLeaseRequestProto) (*hdfs.RenewLeaseResponseProto, error) {
	c.ns.writeLocked(func() { c.ns.mu.leases.RenewLease(req.GetClientName(), c.ns.clock.Now()) })
	return &hdfs.RenewLeaseResponseProto{}, nil
}

func (c *clientRPC) recoverLease(ctx context.Context, req *hdfs.RecoverLeaseRequestProto) (*hdfs.RecoverLeaseResponseProto, error) {
	u := c.caller(ctx)
	var done bool
	err := c.ns.mutateBlocks(ctx, func(t *namespace.Tree, bm blockmgmt.View, now int64) ([]op.Op, followUp, error) {
		fi, err := t.Stat(u, req.GetSrc())
		if err != nil {
			return nil, nil, err
		}
		if fi.IsDir {
			return nil, nil, remoteerr.New(remoteerr.ClassFileNotFound, "Path is not a file: %s", req.GetSrc())
		}
		if err := t.CheckAccess(u, req.GetSrc(), namespace.Write); err != nil {
			return nil, nil, err
		}
		if !fi.UnderConstruction {
			done = true
			return nil, nil, nil
		}
		ops, after, closed, err := c.ns.releasePlan(t, bm, fi.ID, c.ns.clock.Now(), -1)
		done = closed
		return ops, after, err
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
	err := ns.mutateBlocksAnyMode(ctx, func(t *namespace.Tree, bm blockmgmt.View, now int64) ([]op.Op, followUp, error) {
		info, ok := bm.BlockInfo(b.ID)
		if !ok {
			return nil, nil, remoteerr.New(remoteerr.ClassIOException, "commitBlockSynchronization: blk_%d not found", b.ID)
		}
		path, _, _, blocks, uc := t.UnderConstructionFile(uint64(info.FileID))
		if !uc {
			// Already closed (a repeated commit): fine when it matches.
			if info.GenStamp == newGS && info.NumBytes == newLen {
				return nil, nil, nil
			}
			return nil, nil, remoteerr.New(remoteerr.ClassIOException, "commitBlockSynchronization: the file of blk_%d is not under construction", b.ID)
		}
		k := len(blocks)
		// For a copy-on-truncate the DataNode names the block it copied
		// (the snapshot's); the block recovered is the file's new last one.
		target := b.ID
		if src, ok := t.TruncateSource(uint64(info.FileID)); ok && src == b.ID && k > 0 {
			target = blocks[k-1].ID
		}
		if a, ok := ns.mu.recoveries.Lookup(target); ok && a.RecoveryID != newGS {
			return nil, nil, remoteerr.New(remoteerr.ClassIOException,
				"The recovery id %d does not match current recovery id %d for block blk_%d", newGS, a.RecoveryID, target)
		}
		if k == 0 || blocks[k-1].ID != target {
			return nil, nil, remoteerr.New(remoteerr.ClassIOException, "commitBlockSynchronization: blk_%d is not the last block of %s", b.ID, path)
		}
		nb := append([]op.Block(nil), blocks...)
		if req.GetDeleteBlock() {
			nb = nb[:k-1] // applying the ops frees it
		} else {
			if newGS < blocks[k-1].GenStamp {
				return nil, nil, remoteerr.New(remoteerr.ClassIOException, "commitBlockSynchronization: stamp %d is older than blk_%d's %d", newGS, b.ID, blocks[k-1].GenStamp)
			}
			if err := bm.CheckRecovery(target, newGS); err != nil {
				return nil, nil, remoteerr.New(remoteerr.ClassIOException, "commitBlockSynchronization: %v", err)
			}
			if target != b.ID && newLen != blocks[k-1].NumBytes {
				return nil, nil, remoteerr.New(remoteerr.ClassIOException, "commitBlockSynchronization: copy-on-truncate of blk_%d into blk_%d made %d bytes, the truncate asked for %d",
					b.ID, target, newLen, blocks[k-1].NumBytes)
			}
			nb[k-1].GenStamp, nb[k-1].NumBytes = newGS, newLen
		}
		closeFile := req.GetCloseFile()
		after := func() {
			ns.mu.recoveries.Done(target)
			if !req.GetDeleteBlock() && !closeFile {
				// The recovered replicas become the block's holders; the
				// close, when there is one, completed the block already.
				if err := ns.mu.bm.CommitRecovery(target, newGS, newLen, targets, false); err != nil {
					d.nn.deps.Logger.Warn("commitBlockSynchronization", "block", target, "err", err)
				}
			}
		}
		if closeFile {
			cl, err := t.PlanCloseUnderConstruction(uint64(info.FileID), nb, now)
			if err != nil {
				return nil, nil, err
			}
			d.nn.deps.Logger.Info("block recovery committed; file closed", "path", path, "block", b.ID, "genStamp", newGS, "length", newLen)
			return cl, after, nil
		}
		return []op.Op{&op.UpdateBlocks{Path: path, Blocks: nb}}, after, nil
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
		// truncateBlock: the block as the recovery leaves it, with a new
		// id for a copy-on-truncate (Block then names the block copied).
		id := r.Block.ID
		if r.NewBlockID != 0 {
			id = r.NewBlockID
		}
		rb.TruncateBlock = &hdfs.BlockProto{BlockId: proto.Uint64(uint64(id)), GenStamp: proto.Uint64(uint64(r.NewGenStamp)), NumBytes: proto.Uint64(uint64(r.NewLength))}
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
	err := c.ns.mutateBlocks(ctx, func(t *namespace.Tree, bm blockmgmt.View, now int64) ([]op.Op, followUp, error) {
		ok, ops, err := t.PlanTruncate(u, req.GetSrc(), newLength, req.GetClientName(), clientMachine(ctx), now)
		done = ok
		if err != nil || ok {
			return ops, nil, err
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
			return nil, nil, remoteerr.New(remoteerr.ClassIOException, "truncate of %s: no block to cut", req.GetSrc())
		}
		// The replicas to cut, or for a copy-on-truncate (a new block id)
		// to copy from: those of the block holding the new end now.
		src := tb.ID
		if blocks, err := t.Blocks(req.GetSrc()); err == nil {
			var off int64
			for _, b := range blocks {
				if off+b.NumBytes > newLength {
					src = b.ID
					break
				}
				off += b.NumBytes
			}
		}
		nowT := c.ns.clock.Now()
		holders, stale := bm.Holders(src, nowT)
		if len(holders) == 0 {
			return nil, nil, remoteerr.New(remoteerr.ClassIOException, "truncate of %s: no live replica of blk_%d", req.GetSrc(), src)
		}
		primary := 0
		for i, s := range stale {
			if !s {
				primary = i
				break
			}
		}
		cut := *tb
		return ops, func() {
			var err error
			if src != cut.ID {
				err = c.ns.mu.bm.StartCopyRecovery(cut.ID, src, cut.GenStamp, holders[primary].UUID, holders, cut.NumBytes)
			} else {
				err = c.ns.mu.bm.StartRecovery(cut.ID, cut.GenStamp, holders[primary].UUID, holders, cut.NumBytes)
			}
			if err != nil {
				c.nn.deps.Logger.Warn("truncate: block recovery not started", "path", req.GetSrc(), "block", cut.ID, "err", err)
				return
			}
			c.ns.mu.recoveries.Start(cut.ID, cut.GenStamp, primary, nowT)
		}, nil
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.TruncateResponseProto{Result: proto.Bool(done)}, nil
}
