package datanode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/datanode/recovery"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"google.golang.org/protobuf/proto"
)

// execute carries out one NameNode command. Long work (transfers, block
// recovery) runs on its own goroutine, owned by the DataNode.
func (a *bpActor) execute(ctx context.Context, c *dnpb.DatanodeCommandProto) {
	dn := a.dn
	switch c.GetCmdType() {
	case dnpb.DatanodeCommandProto_BlockCommand:
		bc := c.GetBlkCmd()
		pool := bc.GetBlockPoolId()
		switch bc.GetAction() {
		case dnpb.BlockCommandProto_TRANSFER:
			for i, bl := range bc.GetBlocks() {
				if i >= len(bc.GetTargets()) {
					a.log.Warn("DNA_TRANSFER without targets", "block", bl.GetBlockId())
					continue
				}
				b := storage.Block{ID: int64(bl.GetBlockId()), GenStamp: int64(bl.GetGenStamp()), NumBytes: int64(bl.GetNumBytes())}
				targets := bc.GetTargets()[i].GetDatanodes()
				var types []hdfs.StorageTypeProto
				var ids []string
				if i < len(bc.GetTargetStorageTypes()) {
					types = bc.GetTargetStorageTypes()[i].GetStorageTypes()
				}
				if i < len(bc.GetTargetStorageUuids()) {
					ids = bc.GetTargetStorageUuids()[i].GetStorageUuids()
				}
				dn.goWork(ctx, func(ctx context.Context) {
					if err := dn.sendBlockTo(ctx, pool, b, targets, types, ids, ""); err != nil {
						a.log.Warn("DNA_TRANSFER failed", "block", b.String(), "err", err)
					}
				})
			}
		case dnpb.BlockCommandProto_INVALIDATE:
			var blocks []storage.Block
			for _, bl := range bc.GetBlocks() {
				blocks = append(blocks, storage.Block{ID: int64(bl.GetBlockId()), GenStamp: int64(bl.GetGenStamp()), NumBytes: int64(bl.GetNumBytes())})
			}
			if err := dn.invalidate(pool, blocks); err != nil {
				a.log.Warn("DNA_INVALIDATE", "err", err)
			}
		default:
			a.log.Warn("unsupported command", "cmd", "BlockCommand", "action", bc.GetAction().String())
		}
	case dnpb.DatanodeCommandProto_RegisterCommand:
		select {
		case a.register <- struct{}{}:
		default:
		}
	case dnpb.DatanodeCommandProto_BlockRecoveryCommand:
		for _, rb := range c.GetRecoveryCmd().GetBlocks() {
			dn.goWork(ctx, func(ctx context.Context) {
				if err := a.recoverBlock(ctx, rb); err != nil {
					a.log.Error("block recovery failed", "block", rb.GetBlock().GetB().GetBlockId(),
						"recoveryId", rb.GetNewGenStamp(), "err", err)
				}
			})
		}
	case dnpb.DatanodeCommandProto_BalancerBandwidthCommand:
		bw := int64(c.GetBalancerCmd().GetBandwidth())
		old := dn.balance.Bandwidth()
		if bw <= 0 {
			a.log.Warn("DNA_BALANCERBANDWIDTHUPDATE with no bandwidth; kept", "bandwidth", old)
			break
		}
		if err := dn.balance.SetBandwidth(bw); err != nil {
			a.log.Warn("DNA_BALANCERBANDWIDTHUPDATE", "err", err)
			break
		}
		if bw != old {
			a.log.Info("balancer bandwidth updated by the NameNode", "from", old, "to", bw)
		}
	case dnpb.DatanodeCommandProto_FinalizeCommand:
		dn.finalizeUpgrade(ctx, c.GetFinalizeCmd().GetBlockPoolId(), a.log)
	case dnpb.DatanodeCommandProto_NullDatanodeCommand:
	case dnpb.DatanodeCommandProto_KeyUpdateCommand:
		dn.tokens.SetKeys(c.GetKeyUpdateCmd().GetKeys())
		a.log.Info("block keys updated by the NameNode (DNA_ACCESSKEYUPDATE)", "currentKey", c.GetKeyUpdateCmd().GetKeys().GetCurrentKey().GetKeyId())
	default:
		a.log.Warn("unsupported command", "cmd", c.GetCmdType().String())
	}
}

// finalizeUpgrade carries out DNA_FINALIZE: the pool's storage on every
// volume drops the state kept for a rollback (previous/ becomes
// finalized.tmp at once, deleted in the background; a restart completes a
// deletion cut short). The NameNode sends it after every registration
// while its upgrade is finalized, so on a node with nothing to finalize it
// does nothing.
func (dn *DataNode) finalizeUpgrade(ctx context.Context, pool string, log *slog.Logger) {
	dn.mu.Lock()
	ds := dn.mu.ds
	dn.mu.Unlock()
	if ds == nil || pool == "" {
		return
	}
	dirs, err := ds.FinalizeUpgrade(pool)
	if err != nil {
		log.Error("DNA_FINALIZE", "pool", pool, "err", err)
	}
	for _, d := range dirs {
		log.Info("finalizing the upgrade of block pool storage", "pool", pool, "dir", d.Root)
		dn.goWork(ctx, func(ctx context.Context) {
			if err := ds.RemoveFinalized(ctx, d); err != nil {
				log.Warn("deleting the finalized state (the next start finishes it)", "dir", d.Root, "err", err)
				return
			}
			log.Info("upgrade finalized", "pool", pool, "dir", d.Root)
		})
	}
}

// goWork runs f on a goroutine the DataNode waits for at shutdown; ctx is
// the DataNode's.
func (dn *DataNode) goWork(ctx context.Context, f func(ctx context.Context)) {
	dn.wg.Add(1)
	go func() {
		defer dn.wg.Done()
		f(ctx)
	}()
}

// recoverBlock runs block recovery as the primary DataNode (DNA_RECOVERBLOCK):
// initReplicaRecovery on every location, recovery.Decide, then
// updateReplicaUnderRecovery on the participants and
// commitBlockSynchronization to the NameNode that asked.
func (a *bpActor) recoverBlock(ctx context.Context, rb *hdfs.RecoveringBlockProto) error {
	dn := a.dn
	lb := rb.GetBlock()
	eb := lb.GetB()
	pool := eb.GetPoolId()
	rid := int64(rb.GetNewGenStamp())
	blk := recovery.Block{ID: int64(eb.GetBlockId()), GenStamp: int64(eb.GetGenerationStamp()),
		NumBytes: int64(eb.GetNumBytes()), RecoveryID: rid}
	if tb := rb.GetTruncateBlock(); tb != nil {
		blk.Truncate, blk.NewLength = true, int64(tb.GetNumBytes())
		if id := int64(tb.GetBlockId()); id != blk.ID {
			blk.NewBlockID = id // copy-on-truncate: blk stays as it is
		}
	}
	locs := lb.GetLocs()
	answers := make([]recovery.Answer, len(locs))
	for i, loc := range locs {
		answers[i] = dn.askInit(ctx, i, loc, rb)
	}
	plan, err := recovery.Decide(blk, answers)
	if err != nil {
		return err
	}
	if plan.Action == recovery.PlanAbort {
		a.log.Info("block recovery superseded by a newer one", "block", blk.ID, "recoveryId", rid)
		return nil
	}
	var ok []int
	storages := map[int]string{}
	for _, n := range plan.Participants {
		ans := answers[n]
		old := storage.Block{ID: blk.ID, GenStamp: ans.GenStamp, NumBytes: ans.Length}
		sid, err := dn.askUpdate(ctx, locs[n], pool, old, rid, plan.BlockID, plan.NewLength)
		if err != nil {
			a.log.Warn("updateReplicaUnderRecovery failed", "node", xferAddrOf(locs[n]), "err", err)
			continue
		}
		ok = append(ok, n)
		storages[n] = sid
	}
	c, err := plan.Commit(ok)
	if err != nil {
		return err
	}
	req := &dnpb.CommitBlockSynchronizationRequestProto{
		Block:       eb,
		NewGenStamp: proto.Uint64(uint64(c.NewGenStamp)),
		NewLength:   proto.Uint64(uint64(c.NewLength)),
		CloseFile:   proto.Bool(c.CloseFile),
		DeleteBlock: proto.Bool(c.DeleteBlock),
	}
	for _, n := range c.Nodes {
		req.NewTaragets = append(req.NewTaragets, locs[n].GetId())
		req.NewTargetStorages = append(req.NewTargetStorages, storages[n])
	}
	if err := a.call(ctx, "commitBlockSynchronization", req, &dnpb.CommitBlockSynchronizationResponseProto{}); err != nil {
		return fmt.Errorf("commitBlockSynchronization: %w", err)
	}
	a.log.Info("block recovered", "block", blk.ID, "newGS", c.NewGenStamp, "length", c.NewLength, "replicas", len(c.Nodes))
	return nil
}

func (dn *DataNode) isSelf(loc *hdfs.DatanodeInfoProto) bool {
	return loc.GetId().GetDatanodeUuid() == dn.uuid
}

// interDatanode returns a client of loc's InterDatanodeProtocol.
func (dn *DataNode) interDatanode(loc *hdfs.DatanodeInfoProto) *ipc.Client {
	id := loc.GetId()
	addr := net.JoinHostPort(id.GetIpAddr(), strconv.Itoa(int(id.GetIpcPort())))
	var dnPrincipal string
	if dn.cfg.Kerberos != nil {
		dnPrincipal = dn.cfg.Kerberos.Acceptor.Principal
	}
	return ipc.NewClient(ipc.ClientConfig{Addresses: []string{addr}, User: dn.cfg.User,
		Protocol: InterDatanodeProtocol, MaxRetries: 2, RetryBase: 100 * time.Millisecond, Logger: dn.log,
		Kerberos: dn.cfg.Kerberos.InitiatorFor(dnPrincipal), Protection: dn.cfg.RPCProtection})
}

// askInit calls initReplicaRecovery on location i (locally when it is this
// node) and turns the outcome into a recovery.Answer.
func (dn *DataNode) askInit(ctx context.Context, i int, loc *hdfs.DatanodeInfoProto, rb *hdfs.RecoveringBlockProto) recovery.Answer {
	ans := recovery.Answer{ReplicaInfo: recovery.ReplicaInfo{Node: i}}
	eb := rb.GetBlock().GetB()
	var (
		info  storage.RecoveryInfo
		found bool
		err   error
	)
	if dn.isSelf(loc) {
		info, found, err = dn.initReplicaRecovery(eb.GetPoolId(), blockOf(eb), int64(rb.GetNewGenStamp()), copyOnTruncate(rb))
	} else {
		c := dn.interDatanode(loc)
		defer c.Close()
		cctx, cancel := context.WithTimeout(ctx, rpcTimeout)
		var resp hdfs.InitReplicaRecoveryResponseProto
		err = c.Call(cctx, "initReplicaRecovery", &hdfs.InitReplicaRecoveryRequestProto{Block: rb}, &resp)
		cancel()
		if err == nil && resp.GetReplicaFound() {
			found = true
			b := resp.GetBlock()
			info = storage.RecoveryInfo{Block: storage.Block{ID: int64(b.GetBlockId()), GenStamp: int64(b.GetGenStamp()), NumBytes: int64(b.GetNumBytes())},
				OriginalState: storage.ReplicaState(resp.GetState())}
		}
	}
	var re *remoteerr.Error
	switch {
	case err != nil && ((errors.As(err, &re) && strings.Contains(re.Class, "RecoveryInProgressException")) || errors.Is(err, storage.ErrRecoveryInProgress)):
		ans.Outcome = recovery.InProgress
	case err != nil:
		dn.log.Warn("initReplicaRecovery failed", "node", xferAddrOf(loc), "err", err)
		ans.Outcome = recovery.CallFailed
	case !found:
		ans.Outcome = recovery.NoReplica
	default:
		ans.Outcome = recovery.Replied
		ans.State, ans.Length, ans.GenStamp = info.OriginalState, info.NumBytes, info.GenStamp
	}
	return ans
}

// askUpdate calls updateReplicaUnderRecovery on loc and returns the storage
// id of the updated replica; newID is the id the replica ends with (another
// than old's for a copy-on-truncate).
func (dn *DataNode) askUpdate(ctx context.Context, loc *hdfs.DatanodeInfoProto, pool string, old storage.Block, rid, newID, newLength int64) (string, error) {
	if dn.isSelf(loc) {
		rep, err := dn.updateReplicaUnderRecovery(pool, old, rid, newID, newLength)
		return rep.StorageID, err
	}
	c := dn.interDatanode(loc)
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	var resp hdfs.UpdateReplicaUnderRecoveryResponseProto
	err := c.Call(ctx, "updateReplicaUnderRecovery", &hdfs.UpdateReplicaUnderRecoveryRequestProto{
		Block: extBlock(pool, old), RecoveryId: proto.Uint64(uint64(rid)), NewLength: proto.Uint64(uint64(newLength)),
		NewBlockId: proto.Uint64(uint64(newID))}, &resp)
	return resp.GetStorageUuid(), err
}

// copyOnTruncate reports whether rb asks for a copy-on-truncate: its
// truncate block has another id than the block recovered.
func copyOnTruncate(rb *hdfs.RecoveringBlockProto) bool {
	tb := rb.GetTruncateBlock()
	return tb != nil && tb.GetBlockId() != rb.GetBlock().GetB().GetBlockId()
}
