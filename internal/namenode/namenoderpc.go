package namenode

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/fsimage"
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
