package namenode

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// The block half of ClientNamenodeProtocol: calls that touch both the
// namespace (file → blocks, logged) and the block manager (block → DataNodes).

func registerBlockCalls(c *clientRPC, s *ipc.Service) {
	handle(c.nn, s, "addBlock", c.addBlock)
	handle(c.nn, s, "complete", c.complete)
	handle(c.nn, s, "getBlockLocations", c.getBlockLocations)
	handle(c.nn, s, "abandonBlock", c.abandonBlock)
	handle(c.nn, s, "updateBlockForPipeline", c.updateBlockForPipeline)
	handle(c.nn, s, "updatePipeline", c.updatePipeline)
	handle(c.nn, s, "getAdditionalDatanode", c.getAdditionalDatanode)
	handle(c.nn, s, "reportBadBlocks", c.reportBadBlocks)
	handle(c.nn, s, "fsync", c.fsync)
	handle(c.nn, s, "append", c.append)
}

func (c *clientRPC) pool() string { return c.nn.version.BlockPoolID }

func idsToInfos(ids []blockmgmt.DatanodeID, bm blockmgmt.View) []blockmgmt.DatanodeInfo {
	out := make([]blockmgmt.DatanodeInfo, len(ids))
	topo := bm.Config().Topology
	for i, id := range ids {
		out[i] = blockmgmt.DatanodeInfo{ID: id}
		if topo != nil {
			out[i].Location = topo(id.IPAddr)
		}
	}
	return out
}

func datanodeIDs(ps []*hdfs.DatanodeInfoProto) []blockmgmt.DatanodeID {
	out := make([]blockmgmt.DatanodeID, 0, len(ps))
	for _, p := range ps {
		out = append(out, datanodeIDFromProto(p.GetId()))
	}
	return out
}

// fileOf finds the under-construction file the caller writes and its info.
func fileOf(t *namespace.Tree, u namespace.Caller, src, client string, fileID uint64) (string, namespace.FileInfo, []op.Block, error) {
	path, blocks, err := t.UCBlocks(u, src, client, fileID)
	if err != nil {
		return "", namespace.FileInfo{}, nil, err
	}
	fi, err := t.Stat(u, path)
	return path, fi, blocks, err
}

func lengthBefore(blocks []op.Block, n int) int64 {
	var off int64
	for _, b := range blocks[:n] {
		off += b.NumBytes
	}
	return off
}

func (c *clientRPC) addBlock(ctx context.Context, req *hdfs.AddBlockRequestProto) (*hdfs.AddBlockResponseProto, error) {
	u := c.caller(ctx)
	machine := clientMachine(ctx)
	prev := toBlock(req.GetPrevious())
	var resp *hdfs.LocatedBlockProto
	err := c.ns.mutateBlocks(ctx, func(t *namespace.Tree, bm blockmgmt.View, now int64) ([]op.Op, followUp, error) {
		nb, ops, err := t.PlanAddBlock(u, req.GetSrc(), req.GetClientName(), req.GetFileId(), prev)
		if err != nil {
			return nil, nil, err
		}
		path, fi, blocks, err := fileOf(t, u, req.GetSrc(), req.GetClientName(), req.GetFileId())
		if err != nil {
			return nil, nil, err
		}
		nowT := c.ns.clock.Now()
		if len(ops) == 0 { // a retried allocation: answer with the same block
			locs, err := bm.GetBlockLocations([]int64{nb.ID}, machine, nowT)
			if err != nil || len(locs) != 1 {
				return nil, nil, remoteerr.New(remoteerr.ClassIOException, "block %d of %s is not known: %v", nb.ID, path, err)
			}
			resp = locatedBlock(c.pool(), locs[0], lengthBefore(blocks, len(blocks)-1))
			return nil, nil, nil
		}
		if prev != nil {
			if err := bm.CheckCommit(blockmgmt.Block(*prev)); err != nil {
				return nil, nil, remoteerr.New(remoteerr.ClassIOException, "commit of blk_%d_%d: %v", prev.ID, prev.GenStamp, err)
			}
		}
		excluded := datanodeIDs(req.GetExcludeNodes())
		targets, err := bm.ChoosePipeline(int(fi.Replication), machine, excluded, nil, fi.BlockSize, nowT)
		if err != nil {
			if errors.Is(err, blockmgmt.ErrNotEnoughTargets) {
				return nil, nil, remoteerr.New(remoteerr.ClassIOException,
					"File %s could only be written to %d of the %d minReplication nodes. There are %d datanode(s) running and %d node(s) are excluded in this operation.",
					path, len(targets), bm.Config().MinReplication, bm.NumLiveDatanodes(), len(excluded))
			}
			return nil, nil, remoteerr.New(remoteerr.ClassIOException, "%v", err)
		}
		off := lengthBefore(blocks, len(blocks))
		if prev != nil {
			off += prev.NumBytes - blocks[len(blocks)-1].NumBytes
		}
		resp = targetsBlock(c.pool(), blockmgmt.Block(nb), off, idsToInfos(targets, bm))
		return ops, func() { c.ns.mu.bm.SetPipeline(nb.ID, targets) }, nil
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.AddBlockResponseProto{Block: resp}, nil
}

func (c *clientRPC) complete(ctx context.Context, req *hdfs.CompleteRequestProto) (*hdfs.CompleteResponseProto, error) {
	u := c.caller(ctx)
	last := toBlock(req.GetLast())
	var done bool
	err := c.ns.mutateBlocks(ctx, func(t *namespace.Tree, bm blockmgmt.View, now int64) ([]op.Op, followUp, error) {
		ok, ops, err := t.PlanComplete(u, req.GetSrc(), req.GetClientName(), req.GetFileId(), last, now)
		done = ok
		if err != nil || len(ops) == 0 {
			return nil, nil, err
		}
		cl := ops[len(ops)-1].(*op.Close)
		n := len(cl.Blocks)
		if n == 0 {
			return ops, nil, nil
		}
		lb := blockmgmt.Block(cl.Blocks[n-1])
		if err := bm.CheckCommit(lb); err != nil {
			return nil, nil, remoteerr.New(remoteerr.ClassIOException, "commit of blk_%d: %v", lb.ID, err)
		}
		// The file closes only when its last block has its minimal
		// replicas and every earlier block is complete (Hadoop's
		// checkFileProgress); otherwise the block is committed (not in
		// the edits, as in Hadoop) and the client asks again.
		ready := bm.CommitWouldComplete(lb)
		for _, b := range cl.Blocks[:n-1] {
			if !bm.IsComplete(b.ID) && !bm.IsMinimallyReplicated(b.ID) {
				ready = false
			}
		}
		if !ready {
			done = false
			return nil, func() { c.ns.mu.bm.CommitBlock(lb) }, nil
		}
		return ops, nil, nil
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.CompleteResponseProto{Result: proto.Bool(done)}, nil
}

func (c *clientRPC) getBlockLocations(ctx context.Context, req *hdfs.GetBlockLocationsRequestProto) (*hdfs.GetBlockLocationsResponseProto, error) {
	u := c.caller(ctx)
	machine := clientMachine(ctx)
	var lbs *hdfs.LocatedBlocksProto
	var path string
	var err error
	// stale: the file's access time is older than the precision allows.
	// Only then does the call take the write lock to log the new time; a
	// fresh access time (every open but the first of the hour, by default)
	// keeps getBlockLocations a reader that no writer waits for and that
	// waits for no writer's lock beyond its own read.
	var stale bool
	c.ns.read(func(t *namespace.Tree) {
		var fi namespace.FileInfo
		var blocks []op.Block
		fi, blocks, err = t.FileBlocks(u, req.GetSrc())
		if err != nil {
			return
		}
		path = req.GetSrc()
		ids := make([]int64, len(blocks))
		for i, b := range blocks {
			ids[i] = b.ID
		}
		var locs []blockmgmt.LocatedBlock
		locs, err = c.ns.mu.bm.GetBlockLocations(ids, machine, c.ns.clock.Now())
		if err != nil {
			err = remoteerr.New(remoteerr.ClassIOException, "%v", err)
			return
		}
		if fi.InSnapshot {
			// A snapshot reads its own length of a block an append grew since.
			for i := range locs {
				locs[i].NumBytes = min(locs[i].NumBytes, blocks[i].NumBytes)
			}
		}
		lbs = locatedBlocks(c.pool(), fi, blocks, locs, int64(req.GetOffset()), int64(req.GetLength()))
		stale = t.PlanAccess(path, c.ns.nowMillis()) != nil && !c.ns.mu.bm.InSafeMode()
	})
	if err != nil {
		return nil, toRemote(err)
	}
	// Access time, at the configured precision; not in safe mode. The plan
	// is made again under the write lock: another open may have logged the
	// time meanwhile.
	if stale {
		aerr := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
			if o := t.PlanAccess(path, now); o != nil {
				return []op.Op{o}, nil
			}
			return nil, nil
		})
		if aerr != nil && errors.Is(aerr, errFailed) {
			return nil, aerr
		}
	}
	return &hdfs.GetBlockLocationsResponseProto{Locations: lbs}, nil
}

// locatedBlocks picks the blocks overlapping [offset, offset+length).
func locatedBlocks(pool string, fi namespace.FileInfo, blocks []op.Block, locs []blockmgmt.LocatedBlock, offset, length int64) *hdfs.LocatedBlocksProto {
	out := &hdfs.LocatedBlocksProto{
		FileLength:          proto.Uint64(uint64(fi.Length)),
		UnderConstruction:   proto.Bool(fi.UnderConstruction),
		IsLastBlockComplete: proto.Bool(!fi.UnderConstruction),
		Blocks:              []*hdfs.LocatedBlockProto{},
	}
	end := offset + length
	var start int64
	for i, b := range blocks {
		bEnd := start + b.NumBytes
		if (bEnd > offset || (b.NumBytes == 0 && start >= offset)) && start < end || (length == 0 && start == offset) {
			out.Blocks = append(out.Blocks, locatedBlock(pool, locs[i], start))
		}
		if i == len(blocks)-1 {
			out.LastBlock = locatedBlock(pool, locs[i], start)
		}
		start = bEnd
	}
	return out
}

// ucBlockFile finds the file owning blockID and checks that client holds it.
func ucBlockFile(t *namespace.Tree, bm blockmgmt.View, u namespace.Caller, blockID int64, client string) (string, namespace.FileInfo, []op.Block, error) {
	info, ok := bm.BlockInfo(blockID)
	if !ok {
		return "", namespace.FileInfo{}, nil, remoteerr.New(remoteerr.ClassIOException, "blk_%d does not exist or is not under construction", blockID)
	}
	path, _, ok := t.FileByID(uint64(info.FileID))
	if !ok {
		return "", namespace.FileInfo{}, nil, remoteerr.New(remoteerr.ClassIOException, "blk_%d does not belong to a file under construction", blockID)
	}
	return fileOf(t, u, path, client, uint64(info.FileID))
}

func (c *clientRPC) updateBlockForPipeline(ctx context.Context, req *hdfs.UpdateBlockForPipelineRequestProto) (*hdfs.UpdateBlockForPipelineResponseProto, error) {
	u := c.caller(ctx)
	b := toBlock(req.GetBlock())
	var resp *hdfs.LocatedBlockProto
	err := c.ns.mutateBlocks(ctx, func(t *namespace.Tree, bm blockmgmt.View, now int64) ([]op.Op, followUp, error) {
		_, _, blocks, err := ucBlockFile(t, bm, u, b.ID, req.GetClientName())
		if err != nil {
			return nil, nil, err
		}
		if len(blocks) == 0 || blocks[len(blocks)-1].ID != b.ID {
			return nil, nil, remoteerr.New(remoteerr.ClassIOException, "blk_%d is not the last block of its file", b.ID)
		}
		// A new generation stamp for the pipeline the client is about to
		// rebuild; the block keeps its stamp until updatePipeline.
		gs := t.NextGenStamp()
		locs, err := bm.GetBlockLocations([]int64{b.ID}, clientMachine(ctx), c.ns.clock.Now())
		if err != nil || len(locs) != 1 {
			return nil, nil, remoteerr.New(remoteerr.ClassIOException, "blk_%d: %v", b.ID, err)
		}
		lb := locs[0]
		lb.Block.GenStamp = gs
		lb.Block.NumBytes = b.NumBytes
		resp = locatedBlock(c.pool(), lb, lengthBefore(blocks, len(blocks)-1))
		return []op.Op{&op.SetGenstamp{GenStamp: gs}}, nil, nil
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.UpdateBlockForPipelineResponseProto{Block: resp}, nil
}

func (c *clientRPC) updatePipeline(ctx context.Context, req *hdfs.UpdatePipelineRequestProto) (*hdfs.UpdatePipelineResponseProto, error) {
	return atMostOnce(c, ctx, func(ctx context.Context) (*hdfs.UpdatePipelineResponseProto, error) {
		u := c.caller(ctx)
		oldB, newB := toBlock(req.GetOldBlock()), toBlock(req.GetNewBlock())
		if oldB.ID != newB.ID {
			return nil, remoteerr.New(remoteerr.ClassIOException, "updatePipeline: block id changed from %d to %d", oldB.ID, newB.ID)
		}
		targets := make([]blockmgmt.DatanodeID, 0, len(req.GetNewNodes()))
		for _, id := range req.GetNewNodes() {
			targets = append(targets, datanodeIDFromProto(id))
		}
		err := c.ns.mutateBlocks(ctx, func(t *namespace.Tree, bm blockmgmt.View, now int64) ([]op.Op, followUp, error) {
			path, fi, _, err := ucBlockFile(t, bm, u, oldB.ID, req.GetClientName())
			if err != nil {
				return nil, nil, err
			}
			info, _ := bm.BlockInfo(oldB.ID)
			if info.State != blockmgmt.UnderConstruction && info.State != blockmgmt.UnderRecovery {
				return nil, nil, remoteerr.New(remoteerr.ClassIOException, "updatePipeline: blk_%d is %s", oldB.ID, info.State)
			}
			if newB.GenStamp <= info.GenStamp {
				return nil, nil, remoteerr.New(remoteerr.ClassIOException, "updatePipeline: new stamp %d not above %d for blk_%d", newB.GenStamp, info.GenStamp, oldB.ID)
			}
			ops, err := t.PlanUpdateLastBlock(u, path, req.GetClientName(), fi.ID, oldB.ID, newB.GenStamp, newB.NumBytes)
			if err != nil {
				return nil, nil, err
			}
			return ops, func() { c.ns.mu.bm.SetPipeline(oldB.ID, targets) }, nil
		})
		if err != nil {
			return nil, toRemote(err)
		}
		return &hdfs.UpdatePipelineResponseProto{}, nil
	})
}

func (c *clientRPC) getAdditionalDatanode(ctx context.Context, req *hdfs.GetAdditionalDatanodeRequestProto) (*hdfs.GetAdditionalDatanodeResponseProto, error) {
	u := c.caller(ctx)
	b := toBlock(req.GetBlk())
	existing := datanodeIDs(req.GetExistings())
	excluded := append(append([]blockmgmt.DatanodeID{}, existing...), datanodeIDs(req.GetExcludes())...)
	var resp *hdfs.LocatedBlockProto
	var err error
	c.ns.writeLocked(func() {
		t, bm := c.ns.mu.tree, c.ns.mu.bm
		var fi namespace.FileInfo
		var blocks []op.Block
		_, fi, blocks, err = fileOf(t, u, req.GetSrc(), req.GetClientName(), req.GetFileId())
		if err != nil {
			return
		}
		n := int(req.GetNumAdditionalNodes())
		added := bm.ChooseTargets(n, clientMachine(ctx), excluded, nil, fi.BlockSize, c.ns.clock.Now())
		if len(added) < n {
			err = remoteerr.New(remoteerr.ClassIOException, "Failed to find %d additional datanode(s) for %s: %d available", n, req.GetSrc(), len(added))
			return
		}
		all := append(append([]blockmgmt.DatanodeID{}, existing...), added...)
		resp = targetsBlock(c.pool(), blockmgmt.Block(*b), lengthBefore(blocks, max(len(blocks)-1, 0)), idsToInfos(all, bm))
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.GetAdditionalDatanodeResponseProto{Block: resp}, nil
}

func (c *clientRPC) abandonBlock(ctx context.Context, req *hdfs.AbandonBlockRequestProto) (*hdfs.AbandonBlockResponseProto, error) {
	u := c.caller(ctx)
	b := toBlock(req.GetB())
	err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		return t.PlanAbandonBlock(u, req.GetSrc(), req.GetHolder(), req.GetFileId(), b.ID)
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.AbandonBlockResponseProto{}, nil
}

func (c *clientRPC) reportBadBlocks(ctx context.Context, req *hdfs.ReportBadBlocksRequestProto) (*hdfs.ReportBadBlocksResponseProto, error) {
	return &hdfs.ReportBadBlocksResponseProto{}, c.nn.reportBad(req.GetBlocks())
}

// reportBad marks replicas corrupt (from clients and DataNodes alike).
func (nn *NameNode) reportBad(blocks []*hdfs.LocatedBlockProto) error {
	nn.ns.writeLocked(func() { nn.reportBadLocked(blocks) })
	return nil
}

func (nn *NameNode) reportBadLocked(blocks []*hdfs.LocatedBlockProto) {
	ns := nn.ns
	for _, lb := range blocks {
		b := toBlock(lb.GetB())
		var uuids []string
		for _, l := range lb.GetLocs() {
			uuids = append(uuids, l.GetId().GetDatanodeUuid())
		}
		if err := ns.mu.bm.ReportBadBlocks(blockmgmt.Block(*b), uuids); err != nil {
			nn.deps.Logger.Warn("reportBadBlocks", "block", b.ID, "err", err)
		} else {
			nn.deps.Logger.Info("replica reported corrupt", "block", b.ID, "nodes", uuids)
		}
	}
}

func (c *clientRPC) fsync(ctx context.Context, req *hdfs.FsyncRequestProto) (*hdfs.FsyncResponseProto, error) {
	u := c.caller(ctx)
	err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		path, fi, blocks, err := fileOf(t, u, req.GetSrc(), req.GetClient(), req.GetFileId())
		if err != nil {
			return nil, err
		}
		if req.GetLastBlockLength() < 0 || len(blocks) == 0 {
			return nil, nil
		}
		lb := blocks[len(blocks)-1]
		return t.PlanUpdateLastBlock(u, path, req.GetClient(), fi.ID, lb.ID, lb.GenStamp, req.GetLastBlockLength())
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.FsyncResponseProto{}, nil
}

func (c *clientRPC) append(ctx context.Context, req *hdfs.AppendRequestProto) (*hdfs.AppendResponseProto, error) {
	return atMostOnce(c, ctx, func(ctx context.Context) (*hdfs.AppendResponseProto, error) {
		u := c.caller(ctx)
		machine := clientMachine(ctx)
		newBlock := req.GetFlag()&0x20 != 0 // CreateFlag.NEW_BLOCK
		src := req.GetSrc()
		var resp *hdfs.AppendResponseProto
		err := c.ns.mutateBlocks(ctx,
			// An abandoned file whose soft limit passed is closed first; the
			// append then goes on (HDFS does the same).
			c.ns.takeOverStep(src, req.GetClientName(), machine, false),
			func(t *namespace.Tree, bm blockmgmt.View, now int64) ([]op.Op, followUp, error) {
				ops, err := t.PlanAppend(u, src, req.GetClientName(), machine, newBlock)
				if err != nil {
					return nil, nil, err
				}
				// The answer (with the reopened last block and its holders as
				// the pipeline) is built once the append is applied.
				return ops, func() { resp = c.appendAnswerLocked(machine, src) }, nil
			})
		if err != nil {
			return nil, toRemote(err)
		}
		if resp.GetStat() == nil {
			return nil, remoteerr.New(remoteerr.ClassIOException, "%s is gone", src)
		}
		return resp, nil
	})
}
