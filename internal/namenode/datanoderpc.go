package namenode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/blocklist"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	"github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/storage"
)

// DatanodeProtocolName is DatanodeProtocol's Java interface name.
const DatanodeProtocolName = "org.apache.hadoop.hdfs.server.protocol.DatanodeProtocol"

// classUnregisteredNode is what Hadoop answers a DataNode it does not know.
const classUnregisteredNode = "org.apache.hadoop.hdfs.protocol.UnregisteredNodeException"

// datanodeRPC serves DatanodeProtocol: DataNodes register, heartbeat and report
// their replicas here, and get their orders in the heartbeat replies.
type datanodeRPC struct {
	nn *NameNode
	ns *namesystem
	// fbrMu lets one full block report be processed at a time (Hadoop's
	// single block report processing thread); it is taken before the
	// namesystem lock, which is released between the report's slices.
	fbrMu sync.Mutex
}

// reportBatch is how many replicas of a full block report are decoded at a
// time, outside the lock; each batch is then processed in as many holds of
// the namesystem write lock as the slice budget asks (Config.LockSliceBudget),
// and the storage's replicas are swept so too.
const reportBatch = 16384

func registerDatanodeProtocol(nn *NameNode) {
	d := &datanodeRPC{nn: nn, ns: nn.ns}
	s := nn.rpc.Service(DatanodeProtocolName)
	s.Describe(datanode.File_datanode_DatanodeProtocol_proto.Services().ByName("DatanodeProtocolService"))
	handle(nn, s, "versionRequest", d.versionRequest)
	handle(nn, s, "registerDatanode", d.registerDatanode)
	handle(nn, s, "sendHeartbeat", d.sendHeartbeat)
	handle(nn, s, "blockReport", d.blockReport)
	handle(nn, s, "blockReceivedAndDeleted", d.blockReceivedAndDeleted)
	handle(nn, s, "errorReport", d.errorReport)
	handle(nn, s, "reportBadBlocks", d.reportBadBlocks)
	handle(nn, s, "cacheReport", d.cacheReport)
	handle(nn, s, "commitBlockSynchronization", d.commitBlockSynchronization)
}

// storageInfo is the namespace's identity as the protocols carry it.
func (nn *NameNode) storageInfo() *hdfs.StorageInfoProto {
	v := nn.version
	return &hdfs.StorageInfoProto{
		LayoutVersion: proto.Uint32(layoutVersionWire(storage.NameNodeLayoutVersion)),
		NamespceID:    proto.Uint32(uint32(v.NamespaceID)),
		ClusterID:     proto.String(v.ClusterID),
		CTime:         proto.Uint64(uint64(v.CTime)),
	}
}

// haStatus is the HA state a NameNode tells DataNodes: they take orders
// from the one that says ACTIVE with the newest txid.
func (nn *NameNode) haStatus() *hdfs.NNHAStatusHeartbeatProto {
	st := hdfs.NNHAStatusHeartbeatProto_STANDBY
	if nn.ha.State() == ha.Active {
		st = hdfs.NNHAStatusHeartbeatProto_ACTIVE
	}
	return &hdfs.NNHAStatusHeartbeatProto{State: st.Enum(), Txid: proto.Uint64(uint64(nn.lastTxID()))}
}

func (nn *NameNode) namespaceInfo() *hdfs.NamespaceInfoProto {
	return &hdfs.NamespaceInfoProto{
		BuildVersion:    proto.String("hdfsgo"),
		Unused:          proto.Uint32(0),
		BlockPoolID:     proto.String(nn.version.BlockPoolID),
		StorageInfo:     nn.storageInfo(),
		SoftwareVersion: proto.String("3.3.6"),
		Capabilities:    proto.Uint64(blocklist.CapabilityBlockReportBuffers),
		State:           nn.haStatus().State,
	}
}

func (d *datanodeRPC) versionRequest(ctx context.Context, _ *hdfs.VersionRequestProto) (*hdfs.VersionResponseProto, error) {
	return &hdfs.VersionResponseProto{Info: d.nn.namespaceInfo()}, nil
}

// checkCluster refuses DataNodes of another cluster.
func (d *datanodeRPC) checkCluster(reg *datanode.DatanodeRegistrationProto) error {
	if got := reg.GetStorageInfo().GetClusterID(); got != d.nn.version.ClusterID {
		return remoteerr.New("org.apache.hadoop.hdfs.server.common.IncorrectVersionException",
			"DataNode %s belongs to cluster %s, this NameNode serves cluster %s", reg.GetDatanodeID().GetDatanodeUuid(), got, d.nn.version.ClusterID)
	}
	// A DataNode whose block pool storage is at another upgrade than the
	// namespace (it kept running across `hdfs namenode -upgrade` or
	// -rollback) would serve replicas the NameNode cannot account for:
	// it must restart to upgrade, or with -rollback.
	if got, want := int64(reg.GetStorageInfo().GetCTime()), d.nn.version.CTime; got != want {
		hint := "restart it so that it upgrades its storage"
		if got > want {
			hint = "restart it with -rollback"
		}
		return remoteerr.New("org.apache.hadoop.hdfs.server.common.IncorrectVersionException",
			"DataNode %s has storage cTime %d, the namespace's is %d: %s", reg.GetDatanodeID().GetDatanodeUuid(), got, want, hint)
	}
	return nil
}

func storageReports(ps []*hdfs.StorageReportProto) []blockmgmt.StorageReport {
	out := make([]blockmgmt.StorageReport, 0, len(ps))
	for _, p := range ps {
		id := p.GetStorageUuid()
		typ := int32(hdfs.StorageTypeProto_DISK)
		if p.GetStorage() != nil {
			id = p.GetStorage().GetStorageUuid()
			typ = int32(p.GetStorage().GetStorageType())
		}
		out = append(out, blockmgmt.StorageReport{
			StorageID: id, Capacity: int64(p.GetCapacity()), DfsUsed: int64(p.GetDfsUsed()),
			Remaining: int64(p.GetRemaining()), BlockPoolUsed: int64(p.GetBlockPoolUsed()), Failed: p.GetFailed(),
			StorageType: typ,
		})
	}
	return out
}

func (d *datanodeRPC) registerDatanode(ctx context.Context, req *datanode.RegisterDatanodeRequestProto) (*datanode.RegisterDatanodeResponseProto, error) {
	reg := req.GetRegistration()
	if err := d.checkCluster(reg); err != nil {
		return nil, err
	}
	id := datanodeIDFromProto(reg.GetDatanodeID())
	// A DataNode that does not know its own address is known by the one it
	// called from, as Hadoop does.
	if ip := net.ParseIP(id.IPAddr); id.IPAddr == "" || (ip != nil && ip.IsUnspecified()) {
		id.IPAddr = clientMachine(ctx)
	}
	if id.Hostname == "" {
		id.Hostname = id.IPAddr
	}
	var err error
	var admin blockmgmt.AdminState
	d.ns.writeLocked(func() {
		err = d.ns.mu.bm.RegisterDatanode(id, d.ns.clock.Now())
		admin, _ = d.ns.mu.bm.AdminState(id.UUID)
	})
	if de := (*blockmgmt.DisallowedError)(nil); errors.As(err, &de) {
		d.nn.deps.Logger.Warn("DataNode refused: not in the include list (dfs.hosts)", "uuid", id.UUID, "addr", de.Addr)
		return nil, disallowed(de)
	}
	if err != nil {
		return nil, remoteerr.New(remoteerr.ClassIOException, "registerDatanode: %v", err)
	}
	d.nn.forgetFinalizeSent(id.UUID)
	d.nn.deps.Logger.Info("DataNode registered", "uuid", id.UUID, "addr", id.XferAddr(), "host", id.Hostname, "adminState", admin.String())
	out := proto.Clone(reg).(*datanode.DatanodeRegistrationProto)
	out.DatanodeID = datanodeIDProto(id)
	if d.nn.tokens != nil {
		out.Keys = d.nn.tokens.registered(id.UUID)
	}
	return &datanode.RegisterDatanodeResponseProto{Registration: out}, nil
}

func (d *datanodeRPC) sendHeartbeat(ctx context.Context, req *datanode.HeartbeatRequestProto) (*datanode.HeartbeatResponseProto, error) {
	uuid := req.GetRegistration().GetDatanodeID().GetDatanodeUuid()
	var cmds []blockmgmt.Command
	var err error
	var mustSync int64
	d.ns.writeLocked(func() {
		cmds, err = d.ns.mu.bm.Heartbeat(uuid, storageReports(req.GetReports()), int(req.GetXceiverCount()), int(req.GetXmitsInProgress()), d.ns.clock.Now())
		mustSync = d.ns.irreversibleTxID(cmds)
	})
	resp := &datanode.HeartbeatResponseProto{HaStatus: d.nn.haStatus()}
	if err == nil {
		d.nn.volFailures.note(uuid, req.GetVolumeFailureSummary())
	}
	if de := (*blockmgmt.DisallowedError)(nil); errors.As(err, &de) {
		d.nn.deps.Logger.Warn("DataNode cut off: no longer in the include list (dfs.hosts)", "uuid", uuid, "addr", de.Addr)
		return nil, disallowed(de)
	}
	if errors.Is(err, blockmgmt.ErrUnregistered) {
		resp.Cmds = []*datanode.DatanodeCommandProto{registerCommand()}
		return resp, nil
	}
	if err != nil {
		return nil, remoteerr.New(remoteerr.ClassIOException, "sendHeartbeat: %v", err)
	}
	for _, c := range cmds {
		resp.Cmds = append(resp.Cmds, d.command(c))
	}
	// A replica is deleted, cut or restamped only once the op that asked
	// for it is durable, as Hadoop removes blocks after logSync: a
	// NameNode killed before the sync comes back without the op, and the
	// replicas must still match it.
	if err := d.ns.sync(ctx, mustSync); err != nil {
		return nil, err
	}
	if c := d.nn.finalizeCommandFor(uuid); c != nil {
		resp.Cmds = append(resp.Cmds, c)
	}
	if d.nn.tokens != nil {
		if c := d.nn.tokens.heartbeat(uuid); c != nil {
			resp.Cmds = append(resp.Cmds, c)
		}
	}
	return resp, nil
}

func registerCommand() *datanode.DatanodeCommandProto {
	return &datanode.DatanodeCommandProto{
		CmdType:     datanode.DatanodeCommandProto_RegisterCommand.Enum(),
		RegisterCmd: &datanode.RegisterCommandProto{},
	}
}

func blockProto(b blockmgmt.Block) *hdfs.BlockProto {
	return &hdfs.BlockProto{BlockId: proto.Uint64(uint64(b.ID)), GenStamp: proto.Uint64(uint64(b.GenStamp)), NumBytes: proto.Uint64(uint64(b.NumBytes))}
}

func (d *datanodeRPC) command(c blockmgmt.Command) *datanode.DatanodeCommandProto {
	pool := d.nn.version.BlockPoolID
	switch c := c.(type) {
	case blockmgmt.Transfer:
		targets := &hdfs.DatanodeInfosProto{}
		uuids := &hdfs.StorageUuidsProto{}
		types := &hdfs.StorageTypesProto{}
		for i, t := range c.Targets {
			targets.Datanodes = append(targets.Datanodes, datanodeInfoProto(blockmgmt.DatanodeInfo{ID: t}))
			sid, typ := "", hdfs.StorageTypeProto_DISK
			if i < len(c.StorageIDs) {
				sid = c.StorageIDs[i]
			}
			if i < len(c.StorageTypes) && c.StorageTypes[i] != 0 {
				typ = hdfs.StorageTypeProto(c.StorageTypes[i])
			}
			uuids.StorageUuids = append(uuids.StorageUuids, sid)
			types.StorageTypes = append(types.StorageTypes, typ)
		}
		return &datanode.DatanodeCommandProto{
			CmdType: datanode.DatanodeCommandProto_BlockCommand.Enum(),
			BlkCmd: &datanode.BlockCommandProto{
				Action:             datanode.BlockCommandProto_TRANSFER.Enum(),
				BlockPoolId:        proto.String(pool),
				Blocks:             []*hdfs.BlockProto{blockProto(c.Block)},
				Targets:            []*hdfs.DatanodeInfosProto{targets},
				TargetStorageUuids: []*hdfs.StorageUuidsProto{uuids},
				TargetStorageTypes: []*hdfs.StorageTypesProto{types},
			},
		}
	case blockmgmt.Invalidate:
		cmd := &datanode.BlockCommandProto{
			Action:      datanode.BlockCommandProto_INVALIDATE.Enum(),
			BlockPoolId: proto.String(pool),
		}
		for _, b := range c.Blocks {
			cmd.Blocks = append(cmd.Blocks, blockProto(b))
		}
		return &datanode.DatanodeCommandProto{CmdType: datanode.DatanodeCommandProto_BlockCommand.Enum(), BlkCmd: cmd}
	case blockmgmt.Register:
		return registerCommand()
	case blockmgmt.RecoverBlock:
		return d.recoverCommand(c)
	case blockmgmt.BalancerBandwidth:
		return balancerBandwidthCommand(c)
	}
	panic(fmt.Sprintf("namenode: unknown DataNode command %T", c))
}

func (d *datanodeRPC) blockReport(ctx context.Context, req *datanode.BlockReportRequestProto) (*datanode.BlockReportResponseProto, error) {
	d.ns.reporting.Add(1)
	defer d.ns.reporting.Add(-1)
	uuid := req.GetRegistration().GetDatanodeID().GetDatanodeUuid()
	if req.GetBlockPoolId() != d.nn.version.BlockPoolID {
		return nil, remoteerr.New(remoteerr.ClassIOException, "block report for block pool %s; this NameNode serves %s", req.GetBlockPoolId(), d.nn.version.BlockPoolID)
	}
	// Nothing is decoded for a node that has not registered: a report is
	// the most expensive call a peer can make.
	if !d.registered(uuid) {
		return nil, unregistered(uuid)
	}
	// Every storage's report is checked before any is processed; the
	// replicas are decoded a slice at a time as they are processed.
	iters := make([]*blocklist.Iter, len(req.GetReports()))
	for i, r := range req.GetReports() {
		it, err := decodeBlockReport(r)
		if err != nil {
			return nil, remoteerr.New(remoteerr.ClassIOException, "block report of %s storage %s: %v", uuid, r.GetStorage().GetStorageUuid(), err)
		}
		iters[i] = it
	}
	d.fbrMu.Lock()
	defer d.fbrMu.Unlock()
	buf := make([]blockmgmt.ReportedReplica, 0, reportBatch)
	for i, r := range req.GetReports() {
		if err := d.processReport(uuid, r.GetStorage().GetStorageUuid(), iters[i], buf); err != nil {
			return nil, err
		}
	}
	resp := &datanode.BlockReportResponseProto{}
	// As Hadoop does, a block report of a finalized namespace is answered
	// with DNA_FINALIZE, from the active NameNode.
	if d.nn.UpgradeFinalized() && d.nn.ha.State() == ha.Active {
		resp.Cmd = d.nn.finalizeCommand()
	}
	return resp, nil
}

// unregistered is Hadoop's answer to a report from a node it does not know.
func unregistered(uuid string) error {
	return remoteerr.New(classUnregisteredNode, "Data node %s is not registered: it must register before it reports", uuid)
}

// registered reports whether uuid may send reports.
func (d *datanodeRPC) registered(uuid string) bool {
	var ok bool
	d.ns.readLocked(func() { ok = d.ns.mu.bm.IsRegistered(uuid) })
	return ok
}

// processReport processes one storage's full report in slices, each
// under its own hold of the namesystem write lock and ending once the slice
// budget has passed (blockmgmt's "Full block reports in slices"); buf is
// room for one batch of decoded replicas.
func (d *datanodeRPC) processReport(uuid, storageID string, it *blocklist.Iter, buf []blockmgmt.ReportedReplica) error {
	bm := func() *blockmgmt.Manager { return d.ns.mu.bm }
	var fr *blockmgmt.FullReport
	var err error
	start := time.Now()
	d.ns.writeLocked(func() { fr, err = bm().StartFullReport(uuid, storageID, d.ns.clock.Now()) })
	if err != nil {
		return reportError(uuid, err)
	}
	done := false
	defer func() {
		if !done {
			d.ns.writeLocked(func() { bm().AbortFullReport(fr) })
		}
	}()
	for {
		buf = buf[:0]
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			buf = append(buf, blockmgmt.ReportedReplica{Block: blockmgmt.Block{ID: r.ID, NumBytes: r.NumBytes, GenStamp: r.GenStamp}, State: blockmgmt.ReplicaState(r.State)})
			if len(buf) == cap(buf) {
				break
			}
		}
		if len(buf) == 0 {
			break
		}
		for rest := buf; len(rest) > 0; {
			var k int
			start = d.ns.paceSlice(start)
			d.ns.writeLocked(func() { k, err = bm().ReportFor(fr, rest, d.ns.clock.Now(), d.ns.sliceOver()) })
			if err != nil {
				return reportError(uuid, err)
			}
			rest = rest[k:]
		}
	}
	for !done {
		start = d.ns.paceSlice(start)
		d.ns.writeLocked(func() { done, err = bm().SweepFor(fr, d.ns.sliceOver(), d.ns.clock.Now()) })
		if err != nil {
			return reportError(uuid, err)
		}
	}
	res := fr.Result()
	d.nn.deps.Logger.Debug("block report", "node", uuid, "storage", storageID, "replicas", it.Len(),
		"added", res.Added, "removed", res.Removed, "invalidated", res.Invalidated, "corrupt", res.Corrupt)
	return nil
}

// reportError is the RPC error for a block manager's refusal of a report.
func reportError(uuid string, err error) error {
	if errors.Is(err, blockmgmt.ErrUnregistered) {
		return unregistered(uuid)
	}
	return remoteerr.New(remoteerr.ClassIOException, "block report: %v", err)
}

// decodeBlockReport checks a storage's replicas in either of HDFS's
// encodings (package blocklist): the legacy list of longs or the buffers
// of varints, and returns an iterator over them.
func decodeBlockReport(r *datanode.StorageBlockReportProto) (*blocklist.Iter, error) {
	if bufs := r.GetBlocksBuffers(); len(bufs) > 0 {
		return blocklist.NewBuffers(bufs, r.GetNumberOfBlocks())
	}
	return blocklist.NewLongs(r.GetBlocks())
}

func (d *datanodeRPC) blockReceivedAndDeleted(ctx context.Context, req *datanode.BlockReceivedAndDeletedRequestProto) (*datanode.BlockReceivedAndDeletedResponseProto, error) {
	uuid := req.GetRegistration().GetDatanodeID().GetDatanodeUuid()
	if !d.registered(uuid) {
		return nil, unregistered(uuid)
	}
	var err error
	d.ns.writeLocked(func() { err = d.incrementalLocked(uuid, req) })
	if err != nil {
		return nil, err
	}
	return &datanode.BlockReceivedAndDeletedResponseProto{}, nil
}

func (d *datanodeRPC) incrementalLocked(uuid string, req *datanode.BlockReceivedAndDeletedRequestProto) error {
	now := d.ns.clock.Now()
	for _, s := range req.GetBlocks() {
		sid := s.GetStorageUuid()
		if s.GetStorage() != nil {
			sid = s.GetStorage().GetStorageUuid()
		}
		items := make([]blockmgmt.ReceivedDeleted, 0, len(s.GetBlocks()))
		for _, b := range s.GetBlocks() {
			items = append(items, blockmgmt.ReceivedDeleted{
				Block:      blockmgmt.Block{ID: int64(b.GetBlock().GetBlockId()), NumBytes: int64(b.GetBlock().GetNumBytes()), GenStamp: int64(b.GetBlock().GetGenStamp())},
				Status:     blockmgmt.ReceivedStatus(b.GetStatus()),
				DeleteHint: b.GetDeleteHint(),
			})
		}
		if _, err := d.ns.mu.bm.ProcessIncremental(uuid, sid, items, now); err != nil {
			if errors.Is(err, blockmgmt.ErrUnregistered) {
				return unregistered(uuid)
			}
			return remoteerr.New(remoteerr.ClassIOException, "blockReceivedAndDeleted: %v", err)
		}
	}
	return nil
}

func (d *datanodeRPC) errorReport(ctx context.Context, req *datanode.ErrorReportRequestProto) (*datanode.ErrorReportResponseProto, error) {
	d.nn.deps.Logger.Warn("DataNode error report", "uuid", req.GetRegistartion().GetDatanodeID().GetDatanodeUuid(),
		"code", req.GetErrorCode(), "msg", req.GetMsg())
	return &datanode.ErrorReportResponseProto{}, nil
}

func (d *datanodeRPC) reportBadBlocks(ctx context.Context, req *datanode.ReportBadBlocksRequestProto) (*datanode.ReportBadBlocksResponseProto, error) {
	return &datanode.ReportBadBlocksResponseProto{}, d.nn.reportBad(req.GetBlocks())
}

func (d *datanodeRPC) cacheReport(ctx context.Context, req *datanode.CacheReportRequestProto) (*datanode.CacheReportResponseProto, error) {
	// Centralized caching is not implemented: there is nothing cached to
	// track, and no caching command is ever sent.
	return &datanode.CacheReportResponseProto{}, nil
}

// layoutVersionWire is how a (negative) layout version travels in the uint32
// field Hadoop gives it: as its two's complement.
func layoutVersionWire(v int32) uint32 { return uint32(v) }
