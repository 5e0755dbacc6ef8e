package namenode

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	nnpb "github.com/hdfsgo/hdfsgo/internal/proto/namenode"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/storage"
)

// The active NameNode's side of checkpoints by helpers (seed 000 §2.2-2.3,
// seed 003): NamenodeProtocol's registerSubordinateNamenode,
// startCheckpoint, endCheckpoint, getEditLogManifest, errorReport,
// isUpgradeFinalized and isRollingUpgrade, with Hadoop's semantics and
// messages.
//
//	helper                                   active
//	versionRequest ────────────────────────► namespace id, cluster id, block pool
//	registerSubordinateNamenode ───────────► a Backup Node's stream joins the
//	                                         edit log (one Backup Node at most;
//	                                         no Checkpoint Node beside one)
//	startCheckpoint ───────────────────────► role and storage checked (another
//	                                         cluster's node: ACT_SHUTDOWN), the
//	                                         log rolled, a CheckpointCommand
//	                                         with the signature
//	getEditLogManifest(lastApplied+1) ─────► finalized segments
//	GET /imagetransfer (image, edits)
//	PUT /imagetransfer (the merged image) ─► stored, retention applied
//	endCheckpoint ─────────────────────────► signature checked
//
// The Secondary NameNode uses rollEditLog instead of startCheckpoint and
// never registers.

// NamenodeCommand actions (Hadoop's NamenodeProtocol constants).
const (
	actShutdown   = 50
	actCheckpoint = 51
)

// errorFatal is errorReport's FATAL code (NamenodeProtocol.FATAL): the
// node is going away.
const errorFatal = 1

// registration is this node's NamenodeRegistration.
func (nn *NameNode) registration() *hdfs.NamenodeRegistrationProto {
	rpc := ""
	if nn.addr != nil {
		rpc = nn.addr.String()
	}
	return &hdfs.NamenodeRegistrationProto{
		RpcAddress:  proto.String(rpc),
		HttpAddress: proto.String(nn.web.Addr().String()),
		StorageInfo: nn.storageInfo(),
		Role:        nn.role.wire().Enum(),
	}
}

// signature is the CheckpointSignature of the segment starting at first.
func (nn *NameNode) signature(first int64) *hdfs.CheckpointSignatureProto {
	ckpt, _ := nn.newestImage()
	return &hdfs.CheckpointSignatureProto{
		BlockPoolId:              proto.String(nn.version.BlockPoolID),
		MostRecentCheckpointTxId: proto.Uint64(uint64(ckpt)),
		CurSegmentTxId:           proto.Uint64(uint64(first)),
		StorageInfo:              nn.storageInfo(),
	}
}

// activeOnly refuses a call a helper does not serve.
func (r *namenodeRPC) activeOnly(method string) error {
	if r.nn.role != RoleNameNode {
		return remoteerr.New(remoteerr.ClassUnsupported, "%s is not supported by a %s", method, r.nn.role)
	}
	return nil
}

func (r *namenodeRPC) registerSubordinateNamenode(ctx context.Context, req *nnpb.RegisterRequestProto) (*nnpb.RegisterResponseProto, error) {
	if err := r.checkSuper(ctx); err != nil {
		return nil, err
	}
	if err := r.activeOnly("registerSubordinateNamenode"); err != nil {
		return nil, err
	}
	nn, reg := r.nn, req.GetRegistration()
	role := roleOf(reg.GetRole())
	si := reg.GetStorageInfo()
	switch {
	case int32(si.GetLayoutVersion()) != storage.NameNodeLayoutVersion:
		return nil, remoteerr.New("org.apache.hadoop.hdfs.server.common.IncorrectVersionException",
			"Unexpected version of storage directory. Reported: %d. Expecting = %d.", int32(si.GetLayoutVersion()), storage.NameNodeLayoutVersion)
	case int32(si.GetNamespceID()) != nn.version.NamespaceID:
		return nil, remoteerr.New(remoteerr.ClassIOException, "Incompatible namespaceIDs:  Namenode namespaceID = %d; %s node namespaceID = %d",
			nn.version.NamespaceID, role, int32(si.GetNamespceID()))
	case si.GetClusterID() != nn.version.ClusterID:
		return nil, remoteerr.New(remoteerr.ClassIOException, "Incompatible clusterIDs: Namenode clusterID = %s; %s node clusterID = %s",
			nn.version.ClusterID, role, si.GetClusterID())
	}
	var err error
	switch role {
	case RoleBackup:
		err = nn.backups.register(ctx, nn, reg)
	case RoleCheckpoint:
		err = nn.backups.checkpointAllowed(reg)
		if err == nil {
			nn.deps.Logger.Info("Checkpoint Node registered", "addr", reg.GetRpcAddress())
		}
	default:
		err = remoteerr.New(remoteerr.ClassIOException, "Name node %s role %s cannot register with a NameNode", reg.GetRpcAddress(), role)
	}
	if err != nil {
		return nil, err
	}
	return &nnpb.RegisterResponseProto{Registration: nn.registration()}, nil
}

// refuseCheckpoint is why a checkpoint for reg may not start; the helper is
// then told to shut down (FSImage.startCheckpoint's checks).
func (nn *NameNode) refuseCheckpoint(reg *hdfs.NamenodeRegistrationProto) string {
	si := reg.GetStorageInfo()
	lv := int32(si.GetLayoutVersion())
	switch {
	case int32(si.GetNamespceID()) != nn.version.NamespaceID:
		return fmt.Sprintf("Name node %s has incompatible namespace id: %d expected: %d", reg.GetRpcAddress(), int32(si.GetNamespceID()), nn.version.NamespaceID)
	case si.GetClusterID() != nn.version.ClusterID:
		return fmt.Sprintf("Name node %s has incompatible cluster id: %s expected: %s", reg.GetRpcAddress(), si.GetClusterID(), nn.version.ClusterID)
	case roleOf(reg.GetRole()) == RoleNameNode:
		return fmt.Sprintf("Name node %s role %s: checkpoint is not allowed.", reg.GetRpcAddress(), RoleNameNode)
	case lv < storage.NameNodeLayoutVersion || (lv == storage.NameNodeLayoutVersion && int64(si.GetCTime()) > nn.version.CTime):
		return fmt.Sprintf("Name node %s has newer image layout version: LV = %d cTime = %d. Current version: LV = %d cTime = %d",
			reg.GetRpcAddress(), lv, si.GetCTime(), storage.NameNodeLayoutVersion, nn.version.CTime)
	}
	return ""
}

func (r *namenodeRPC) startCheckpoint(ctx context.Context, req *nnpb.StartCheckpointRequestProto) (*nnpb.StartCheckpointResponseProto, error) {
	if err := r.checkSuper(ctx); err != nil {
		return nil, err
	}
	nn, reg := r.nn, req.GetRegistration()
	if nn.role != RoleNameNode {
		return nil, remoteerr.New(remoteerr.ClassIOException, "Only an ACTIVE node can invoke startCheckpoint.")
	}
	nn.deps.Logger.Info("Start checkpoint", "for", reg.GetRpcAddress(), "nodeRole", roleOf(reg.GetRole()).String(), "txid", nn.ns.elog.Stats().LastTxID)
	if msg := nn.refuseCheckpoint(reg); msg != "" {
		nn.deps.Logger.Error("checkpoint refused; telling the node to shut down", "reason", msg)
		return &nnpb.StartCheckpointResponseProto{Command: &hdfs.NamenodeCommandProto{
			Action: proto.Uint32(actShutdown), Type: hdfs.NamenodeCommandProto_NamenodeCommand.Enum()}}, nil
	}
	if roleOf(reg.GetRole()) == RoleCheckpoint {
		if err := nn.backups.checkpointAllowed(reg); err != nil {
			return nil, err
		}
	}
	if err := nn.checkNotSafe("Checkpoint not started"); err != nil {
		return nil, err
	}
	first, err := nn.rollEdits(ctx)
	if err != nil {
		return nil, err
	}
	return &nnpb.StartCheckpointResponseProto{Command: &hdfs.NamenodeCommandProto{
		Action: proto.Uint32(actCheckpoint),
		Type:   hdfs.NamenodeCommandProto_CheckPointCommand.Enum(),
		CheckpointCmd: &hdfs.CheckpointCommandProto{
			Signature:         nn.signature(first),
			NeedToReturnImage: proto.Bool(len(nn.cfg.NameDirs) > 0),
		},
	}}, nil
}

// checkNotSafe refuses a checkpoint step in safe mode, as Hadoop does.
func (nn *NameNode) checkNotSafe(what string) error {
	ns := nn.ns
	var safe bool
	var msg string
	ns.readLocked(func() { safe, msg = ns.mu.bm.SafeModeStatus(nn.deps.Clock.Now()) })
	if safe {
		return remoteerr.New(remoteerr.ClassSafeMode, "%s. Name node is in safe mode.\n%s", what, msg)
	}
	return nil
}

// checkSignature checks a checkpoint signature against this node's storage
// (CheckpointSignature.validateStorageInfo).
func checkSignature(sig *hdfs.CheckpointSignatureProto, v *storage.Version) error {
	si := sig.GetStorageInfo()
	lv, ns := int32(si.GetLayoutVersion()), int32(si.GetNamespceID())
	if lv != storage.NameNodeLayoutVersion || ns != v.NamespaceID || int64(si.GetCTime()) != v.CTime ||
		si.GetClusterID() != v.ClusterID || sig.GetBlockPoolId() != v.BlockPoolID {
		return fmt.Errorf("Inconsistent checkpoint fields.\nLV = %d namespaceID = %d cTime = %d ; clusterId = %s ; blockpoolId = %s.\nExpecting respectively: %d; %d; %d; %s; %s.",
			lv, ns, si.GetCTime(), si.GetClusterID(), sig.GetBlockPoolId(),
			storage.NameNodeLayoutVersion, v.NamespaceID, v.CTime, v.ClusterID, v.BlockPoolID)
	}
	return nil
}

func (r *namenodeRPC) endCheckpoint(ctx context.Context, req *nnpb.EndCheckpointRequestProto) (*nnpb.EndCheckpointResponseProto, error) {
	if err := r.checkSuper(ctx); err != nil {
		return nil, err
	}
	if err := r.activeOnly("endCheckpoint"); err != nil {
		return nil, err
	}
	nn := r.nn
	if err := nn.checkNotSafe("Checkpoint not ended"); err != nil {
		return nil, err
	}
	nn.deps.Logger.Info("End checkpoint", "for", req.GetRegistration().GetRpcAddress(), "txid", nn.ns.elog.Stats().LastTxID)
	if err := checkSignature(req.GetSignature(), nn.version); err != nil {
		return nil, remoteerr.New(remoteerr.ClassIOException, "%v", err)
	}
	return &nnpb.EndCheckpointResponseProto{}, nil
}

// getEditLogManifest lists the finalized segments a checkpointer that has
// every transaction before sinceTxId can download (editlog.Manifest).
func (r *namenodeRPC) getEditLogManifest(ctx context.Context, req *nnpb.GetEditLogManifestRequestProto) (*nnpb.GetEditLogManifestResponseProto, error) {
	if err := r.checkSuper(ctx); err != nil {
		return nil, err
	}
	nn := r.nn
	var all []editlog.SegmentInfo
	for _, d := range nn.cfg.EditsDirs {
		segs, err := editlog.NewFileJournal(nn.deps.FS, storage.Dir{Root: d}.Current()).Segments(ctx)
		if err != nil {
			nn.deps.Logger.Warn("getEditLogManifest: listing an edits dir", "dir", d, "err", err)
			continue
		}
		all = append(all, segs...)
	}
	m := &hdfs.RemoteEditLogManifestProto{}
	for _, s := range editlog.Manifest(all, int64(req.GetSinceTxId())) {
		m.Logs = append(m.Logs, &hdfs.RemoteEditLogProto{StartTxId: proto.Uint64(uint64(s.First)),
			EndTxId: proto.Uint64(uint64(s.Last)), IsInProgress: proto.Bool(false)})
	}
	return &nnpb.GetEditLogManifestResponseProto{Manifest: m}, nil
}

func (r *namenodeRPC) errorReport(ctx context.Context, req *nnpb.ErrorReportRequestProto) (*nnpb.ErrorReportResponseProto, error) {
	if err := r.checkSuper(ctx); err != nil {
		return nil, err
	}
	reg := req.GetRegistration()
	r.nn.deps.Logger.Info("Error report", "from", reg.GetRpcAddress(), "nodeRole", roleOf(reg.GetRole()).String(), "msg", req.GetMsg(), "code", req.GetErrorCode())
	if req.GetErrorCode() == errorFatal && r.nn.role == RoleNameNode {
		r.nn.backups.release(r.nn, reg)
	}
	return &nnpb.ErrorReportResponseProto{}, nil
}

// backupRegistry is the active's Backup Node: its address and its stream
// in the edit log. The NameNode supports one Backup Node at a time, and no
// Checkpoint Node while one is in use (Hadoop's rule).
type backupRegistry struct {
	mu struct {
		sync.Mutex
		addr   string
		stream *backupStream // nil: none registered
	}
}

// register takes a Backup Node's registration: a new node (or one whose
// stream failed) gets a new stream, which joins the edit log at a roll
// made for it at once; a node whose stream works re-registers.
func (b *backupRegistry) register(ctx context.Context, nn *NameNode, reg *hdfs.NamenodeRegistrationProto) error {
	if nn.cfg.HA.Enabled {
		return remoteerr.New(remoteerr.ClassIOException, "%v", haRefusal(RoleBackup))
	}
	addr := reg.GetRpcAddress()
	s, cur, err := b.replace(nn, addr)
	if err != nil || s == nil {
		return err
	}
	if cur != nil {
		nn.ns.elog.RemoveJournal(cur)
		cur.Close()
		cur.wait()
	}
	nn.ns.elog.AddJournal(s)
	nn.deps.Logger.Info("Registering new Backup Node", "addr", addr, "http", reg.GetHttpAddress())
	// The stream joins at a segment start: make one now.
	if _, err := nn.rollEdits(ctx); err != nil {
		return err
	}
	return nil
}

// replace makes a new stream for the Backup Node at addr unless its stream
// works (s nil: it re-registers) or another one's does (an error); old is
// the failed stream it replaces.
func (b *backupRegistry) replace(nn *NameNode, addr string) (s, old *backupStream, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur, curAddr := b.mu.stream, b.mu.addr
	if cur != nil && cur.alive() {
		if curAddr == addr {
			nn.deps.Logger.Debug("Backup Node re-registers", "addr", addr)
			return nil, nil, nil
		}
		return nil, nil, remoteerr.New(remoteerr.ClassIOException,
			"Backup Node %s cannot register: Backup Node %s is registered, and a NameNode supports one Backup Node at a time", addr, curAddr)
	}
	s = newBackupStream(nn, addr)
	b.mu.addr, b.mu.stream = addr, s
	return s, cur, nil
}

// checkpointAllowed refuses a Checkpoint Node while a Backup Node is in use.
func (b *backupRegistry) checkpointAllowed(reg *hdfs.NamenodeRegistrationProto) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.stream != nil && b.mu.stream.alive() {
		return remoteerr.New(remoteerr.ClassIOException,
			"Checkpoint Node %s refused: Backup Node %s is in use, and no Checkpoint Node may be registered while a Backup Node is", reg.GetRpcAddress(), b.mu.addr)
	}
	return nil
}

// release drops the stream of a Backup Node that reported a fatal error
// (it is shutting down).
func (b *backupRegistry) release(nn *NameNode, reg *hdfs.NamenodeRegistrationProto) {
	s := b.take(reg.GetRpcAddress())
	if s == nil {
		return
	}
	nn.ns.elog.RemoveJournal(s)
	s.Close()
	s.wait()
	nn.deps.Logger.Info("Backup Node released", "addr", reg.GetRpcAddress())
}

// take unregisters the Backup Node at addr and returns its stream (nil if
// it is not the one registered).
func (b *backupRegistry) take(addr string) *backupStream {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.mu.stream
	if s == nil || b.mu.addr != addr {
		return nil
	}
	b.mu.stream, b.mu.addr = nil, ""
	return s
}

// stream is the registered Backup Node's stream (nil if none); tests and
// the status page read it.
func (b *backupRegistry) stream() (string, *backupStream) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.addr, b.mu.stream
}

// stop ends the stream's sender (the NameNode is closing).
func (b *backupRegistry) stop() {
	_, s := b.stream()
	if s != nil {
		s.Close()
		s.wait()
	}
}

// BackupNode is the active's registered Backup Node: its address ("" if
// none) and whether its stream works (false once the stream failed: the
// node is dropped until it registers again).
func (nn *NameNode) BackupNode() (addr string, streaming bool) {
	addr, s := nn.backups.stream()
	return addr, s != nil && s.alive()
}
