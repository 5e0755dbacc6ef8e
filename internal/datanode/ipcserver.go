package datanode

import (
	"context"
	"errors"
	"fmt"

	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"google.golang.org/protobuf/proto"
)

// Exception classes the DataNode's IPC server answers with.
const (
	classRecoveryInProgress = "org.apache.hadoop.hdfs.protocol.RecoveryInProgressException"
	classReplicaNotFound    = "org.apache.hadoop.hdfs.server.datanode.ReplicaNotFoundException"
)

// registerIPC registers on the IPC server: ClientDatanodeProtocol's
// getReplicaVisibleLength, getBalancerBandwidth, the reconfiguration
// methods (also as ReconfigurationProtocol) and dfsadmin's (adminrpc.go),
// and InterDatanodeProtocol. The other methods of these protocols answer
// UnsupportedOperationException (ipc.Service.Describe).
func (dn *DataNode) registerIPC() {
	cdp := dn.ipcSrv.Service(ClientDatanodeProtocol)
	cdp.Describe(hdfs.File_hdfs_ClientDatanodeProtocol_proto.Services().ByName("ClientDatanodeProtocolService"))
	rp := dn.ipcSrv.Service(ReconfigurationProtocol)
	rp.Describe(hdfs.File_hdfs_ReconfigurationProtocol_proto.Services().ByName("ReconfigurationProtocolService"))
	ipc.Handle(cdp, "getBalancerBandwidth", func(ctx context.Context, _ *hdfs.GetBalancerBandwidthRequestProto) (*hdfs.GetBalancerBandwidthResponseProto, error) {
		return &hdfs.GetBalancerBandwidthResponseProto{Bandwidth: proto.Uint64(uint64(dn.balance.Bandwidth()))}, nil
	})
	dn.registerReconfig(cdp)
	dn.registerAdminIPC(cdp)
	dn.registerReconfig(dn.ipcSrv.Service(ReconfigurationProtocol))
	ipc.Handle(cdp, "getReplicaVisibleLength", func(ctx context.Context, req *hdfs.GetReplicaVisibleLengthRequestProto) (*hdfs.GetReplicaVisibleLengthResponseProto, error) {
		if err := dn.checkReadAccess(ctx, req.GetBlock()); err != nil {
			return nil, err
		}
		n, err := dn.visibleLength(req.GetBlock())
		if err != nil {
			return nil, err
		}
		return &hdfs.GetReplicaVisibleLengthResponseProto{Length: proto.Uint64(uint64(n))}, nil
	})
	idp := dn.ipcSrv.Service(InterDatanodeProtocol)
	idp.Describe(hdfs.File_hdfs_InterDatanodeProtocol_proto.Services().ByName("InterDatanodeProtocolService"))
	ipc.Handle(idp, "initReplicaRecovery", func(ctx context.Context, req *hdfs.InitReplicaRecoveryRequestProto) (*hdfs.InitReplicaRecoveryResponseProto, error) {
		rb := req.GetBlock()
		eb := rb.GetBlock().GetB()
		info, found, err := dn.initReplicaRecovery(eb.GetPoolId(), blockOf(eb), int64(rb.GetNewGenStamp()), copyOnTruncate(rb))
		if err != nil {
			return nil, err
		}
		if !found {
			return &hdfs.InitReplicaRecoveryResponseProto{ReplicaFound: proto.Bool(false)}, nil
		}
		return &hdfs.InitReplicaRecoveryResponseProto{
			ReplicaFound: proto.Bool(true),
			State:        hdfs.ReplicaStateProto(info.OriginalState).Enum(),
			Block:        &hdfs.BlockProto{BlockId: proto.Uint64(uint64(info.ID)), GenStamp: proto.Uint64(uint64(info.GenStamp)), NumBytes: proto.Uint64(uint64(info.NumBytes))},
		}, nil
	})
	ipc.Handle(idp, "updateReplicaUnderRecovery", func(ctx context.Context, req *hdfs.UpdateReplicaUnderRecoveryRequestProto) (*hdfs.UpdateReplicaUnderRecoveryResponseProto, error) {
		eb := req.GetBlock()
		rep, err := dn.updateReplicaUnderRecovery(eb.GetPoolId(), blockOf(eb), int64(req.GetRecoveryId()), int64(req.GetNewBlockId()), int64(req.GetNewLength()))
		if err != nil {
			return nil, err
		}
		return &hdfs.UpdateReplicaUnderRecoveryResponseProto{StorageUuid: proto.String(rep.StorageID)}, nil
	})
}

// visibleLength is the length readers may see: the acked bytes of an RBW
// replica, the length of a finalized one.
func (dn *DataNode) visibleLength(eb *hdfs.ExtendedBlockProto) (int64, error) {
	bp, err := dn.pool(eb.GetPoolId())
	if err != nil {
		return 0, err
	}
	r, ok := bp.Get(int64(eb.GetBlockId()))
	if !ok {
		return 0, remoteerr.New(classReplicaNotFound, "Replica not found for %v", blockOf(eb))
	}
	if r.GenStamp < int64(eb.GetGenerationStamp()) {
		return 0, fmt.Errorf("datanode: replica %v has an older generation stamp than requested %d: %w", r.Block, eb.GetGenerationStamp(), storage.ErrGenStamp)
	}
	switch r.State {
	case storage.RBW:
		return r.BytesAcked, nil
	case storage.Finalized:
		return r.NumBytes, nil
	default:
		return r.NumBytes, nil
	}
}

// initReplicaRecovery applies initReplicaRecovery to the local replica; for
// a copy-on-truncate (copying) the replica is the source of the copy and is
// only inspected.
func (dn *DataNode) initReplicaRecovery(poolID string, b storage.Block, recoveryID int64, copying bool) (storage.RecoveryInfo, bool, error) {
	bp, err := dn.pool(poolID)
	if err != nil {
		return storage.RecoveryInfo{}, false, err
	}
	var info storage.RecoveryInfo
	if copying {
		info, err = bp.InspectCopySource(b, recoveryID)
	} else {
		info, err = bp.InitReplicaRecovery(b, recoveryID)
	}
	switch {
	case errors.Is(err, storage.ErrReplicaNotFound):
		return storage.RecoveryInfo{}, false, nil
	case errors.Is(err, storage.ErrRecoveryInProgress):
		return storage.RecoveryInfo{}, false, remoteerr.New(classRecoveryInProgress, "%v", err)
	case err != nil:
		return storage.RecoveryInfo{}, false, err
	}
	return info, true, nil
}

// updateReplicaUnderRecovery applies updateReplicaUnderRecovery to the
// local replica; the finalized replica is then reported to the NameNodes.
// A newID other than 0 and old's id is a copy-on-truncate: the first
// newLength bytes of old become a new replica newID, old stays as it is.
func (dn *DataNode) updateReplicaUnderRecovery(poolID string, old storage.Block, recoveryID, newID, newLength int64) (storage.Replica, error) {
	bp, err := dn.pool(poolID)
	if err != nil {
		return storage.Replica{}, err
	}
	var rep storage.Replica
	if newID != 0 && newID != old.ID {
		rep, err = bp.CopyReplica(old, newID, recoveryID, newLength)
	} else {
		rep, err = bp.UpdateReplicaUnderRecovery(old, recoveryID, newLength)
	}
	if err != nil {
		return storage.Replica{}, err
	}
	for _, a := range dn.actorsOf(poolID) {
		a.queueIBR(ibrEntry{storageID: rep.StorageID, block: rep.Block, status: ibrReceived})
	}
	return rep, nil
}
