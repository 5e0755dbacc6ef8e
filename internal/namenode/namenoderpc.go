package namenode

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	nnpb "github.com/hdfsgo/hdfsgo/internal/proto/namenode"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// namenodeRPC serves NamenodeProtocol: what a standby NameNode, the
// Checkpoint and Backup Nodes and the Secondary NameNode call on the active
// (the checkpoint calls are in checkpointrpc.go).
type namenodeRPC struct {
	nn *NameNode
}

func registerNamenodeProtocol(nn *NameNode) {
	r := &namenodeRPC{nn: nn}
	s := nn.rpc.Service(NamenodeProtocolName)
	s.Describe(nnpb.File_namenode_NamenodeProtocol_proto.Services().ByName("NamenodeProtocolService"))
	handle(nn, s, "versionRequest", r.versionRequest)
	handle(nn, s, "getTransactionId", r.getTransactionID)
	handle(nn, s, "getMostRecentCheckpointTxId", r.getMostRecentCheckpointTxID)
	handle(nn, s, "rollEditLog", r.rollEditLog)
	handle(nn, s, "registerSubordinateNamenode", r.registerSubordinateNamenode)
	handle(nn, s, "startCheckpoint", r.startCheckpoint)
	handle(nn, s, "endCheckpoint", r.endCheckpoint)
	handle(nn, s, "getEditLogManifest", r.getEditLogManifest)
	handle(nn, s, "errorReport", r.errorReport)
	handle(nn, s, "isUpgradeFinalized", r.isUpgradeFinalized)
	handle(nn, s, "isRollingUpgrade", r.isRollingUpgrade)
	handle(nn, s, "getBlocks", r.getBlocks)
	handle(nn, s, "getBlockKeys", r.getBlockKeys)
}

func (r *namenodeRPC) checkSuper(ctx context.Context) error {
	return (&clientRPC{nn: r.nn, ns: r.nn.ns}).checkSuper(ctx)
}

func (r *namenodeRPC) versionRequest(ctx context.Context, _ *hdfs.VersionRequestProto) (*hdfs.VersionResponseProto, error) {
	return &hdfs.VersionResponseProto{Info: r.nn.namespaceInfo()}, nil
}

// getTransactionID is the last txid written (active) or applied (standby).
func (r *namenodeRPC) getTransactionID(ctx context.Context, _ *nnpb.GetTransactionIdRequestProto) (*nnpb.GetTransactionIdResponseProto, error) {
	return &nnpb.GetTransactionIdResponseProto{TxId: proto.Uint64(uint64(r.nn.lastTxID()))}, nil
}

func (r *namenodeRPC) getMostRecentCheckpointTxID(ctx context.Context, _ *nnpb.GetMostRecentCheckpointTxIdRequestProto) (*nnpb.GetMostRecentCheckpointTxIdResponseProto, error) {
	txid, err := r.nn.newestImage()
	if err != nil {
		return nil, remoteerr.New(remoteerr.ClassIOException, "%v", err)
	}
	return &nnpb.GetMostRecentCheckpointTxIdResponseProto{TxId: proto.Uint64(uint64(txid))}, nil
}

// rollEditLog finalizes the active's segment and starts the next, so that a
// standby reading finalized segments sees every edit so far.
func (r *namenodeRPC) rollEditLog(ctx context.Context, _ *nnpb.RollEditLogRequestProto) (*nnpb.RollEditLogResponseProto, error) {
	if err := r.checkSuper(ctx); err != nil {
		return nil, err
	}
	if err := r.activeOnly("rollEditLog"); err != nil {
		return nil, err
	}
	first, err := r.nn.rollEdits(ctx)
	if err != nil {
		return nil, err
	}
	return &nnpb.RollEditLogResponseProto{Signature: r.nn.signature(first)}, nil
}

// lastTxID is the newest txid this NameNode has: written when active,
// applied when not.
func (nn *NameNode) lastTxID() int64 {
	if nn.ha.State() == ha.Active {
		return nn.ns.elog.Stats().LastTxID
	}
	return nn.ns.applied()
}

// newestImage is the txid of the newest image in the name dirs.
func (nn *NameNode) newestImage() (int64, error) {
	var newest int64 = -1
	for _, d := range nn.cfg.NameDirs {
		imgs, err := fsimage.List(nn.deps.FS, d)
		if err != nil {
			return 0, err
		}
		for _, im := range imgs {
			newest = max(newest, im.TxID)
		}
	}
	return max(newest, 0), nil
}

// getBlocks serves NamenodeProtocol getBlocks, the balancer's question
// "which blocks does this DataNode hold": superusers only, refused in safe
// mode, with Hadoop's checks of the sizes. See blockmgmt.GetBlocks.
func (r *namenodeRPC) getBlocks(ctx context.Context, req *nnpb.GetBlocksRequestProto) (*nnpb.GetBlocksResponseProto, error) {
	size, minSize := int64(req.GetSize()), int64(req.GetMinBlockSize())
	if size <= 0 || minSize < 0 {
		return nil, remoteerr.New(remoteerr.ClassIllegalArgument, "Unexpected not positive size: %d", size)
	}
	if err := r.checkSuper(ctx); err != nil {
		return nil, err
	}
	ns := r.nn.ns
	id := datanodeIDFromProto(req.GetDatanode())
	var bs []blockmgmt.BlockWithLocations
	var err error
	ns.readLocked(func() {
		if ns.mu.bm.InSafeMode() {
			_, msg := ns.mu.bm.SafeModeStatus(ns.clock.Now())
			err = remoteerr.New(remoteerr.ClassSafeMode, "Cannot execute getBlocks. Name node is in safe mode.\n%s", msg)
			return
		}
		bs, err = ns.mu.bm.GetBlocks(id, size, minSize)
	})
	if errors.Is(err, blockmgmt.ErrUnregistered) {
		return nil, remoteerr.New(remoteerr.ClassHadoopIllegalArg, "Datanode %s not found.", id.XferAddr())
	}
	if err != nil {
		return nil, err
	}
	out := &hdfs.BlocksWithLocationsProto{}
	for _, b := range bs {
		p := &hdfs.BlockWithLocationsProto{Block: blockProto(b.Block)}
		for i, h := range b.Holders {
			p.DatanodeUuids = append(p.DatanodeUuids, h.UUID)
			p.StorageUuids = append(p.StorageUuids, b.StorageIDs[i])
			p.StorageTypes = append(p.StorageTypes, hdfs.StorageTypeProto(b.StorageTypes[i]))
		}
		out.Blocks = append(out.Blocks, p)
	}
	return &nnpb.GetBlocksResponseProto{Blocks: out}, nil
}

// getBlockKeys serves NamenodeProtocol getBlockKeys: the block keys when
// block access tokens are on, else Hadoop's answer for tokens off (an
// empty current key).
func (r *namenodeRPC) getBlockKeys(ctx context.Context, _ *nnpb.GetBlockKeysRequestProto) (*nnpb.GetBlockKeysResponseProto, error) {
	if t := r.nn.tokens; t != nil {
		t.m.Roll(t.clock.Now())
		return &nnpb.GetBlockKeysResponseProto{Keys: t.m.Export()}, nil
	}
	return &nnpb.GetBlockKeysResponseProto{Keys: &hdfs.ExportedBlockKeysProto{
		IsBlockTokenEnabled: proto.Bool(false),
		KeyUpdateInterval:   proto.Uint64(0),
		TokenLifeTime:       proto.Uint64(0),
		CurrentKey:          &hdfs.BlockKeyProto{KeyId: proto.Uint32(0), ExpiryDate: proto.Uint64(0), KeyBytes: []byte{}},
	}}, nil
}
