package namenode

import (
	"context"
	"errors"
	"fmt"
	"net"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
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
}

func registerDatanodeProtocol(nn *NameNode) {
	d := &datanodeRPC{nn: nn, ns: nn.ns}
	s := nn.rpc.Service(DatanodeProtocolName)
	ipc.Handle(s, "versionRequest", d.versionRequest)
	ipc.Handle(s, "registerDatanode", d.registerDatanode)
	ipc.Handle(s, "sendHeartbeat", d.sendHeartbeat)
	ipc.Handle(s, "blockReport", d.blockReport)
	ipc.Handle(s, "blockReceivedAndDeleted", d.blockReceivedAndDeleted)
	ipc.Handle(s, "errorReport", d.errorReport)
	ipc.Handle(s, "reportBadBlocks", d.reportBadBlocks)
	ipc.Handle(s, "cacheReport", d.cacheReport)
	ipc.Handle(s, "commitBlockSynchronization", d.commitBlockSynchronization)
}

func (d *datanodeRPC) namespaceInfo() *hdfs.NamespaceInfoProto {
	v := d.nn.version
	return &hdfs.NamespaceInfoProto{
		BuildVersion: proto.String("hdfsgo"),
		Unused:       proto.Uint32(0),
		BlockPoolID:  proto.String(v.BlockPoolID),
		StorageInfo: &hdfs.StorageInfoProto{
			LayoutVersion: proto.Uint32(layoutVersionWire(storage.NameNodeLayoutVersion)),
			NamespceID:    proto.Uint32(uint32(v.NamespaceID)),
			ClusterID:     proto.String(v.ClusterID),
			CTime:         proto.Uint64(uint64(v.CTime)),
		},
		SoftwareVersion: proto.String("3.3.6"),
		Capabilities:    proto.Uint64(0),
		State:           hdfs.NNHAStatusHeartbeatProto_ACTIVE.Enum(),
	}
}

func (d *datanodeRPC) versionRequest(ctx context.Context, _ *hdfs.VersionRequestProto) (*hdfs.VersionResponseProto, error) {
	return &hdfs.VersionResponseProto{Info: d.namespaceInfo()}, nil
}

// checkCluster refuses DataNodes of another cluster.
func (d *datanodeRPC) checkCluster(reg *datanode.DatanodeRegistrationProto) error {
	if got := reg.GetStorageInfo().GetClusterID(); got != d.nn.version.ClusterID {
		return remoteerr.New("org.apache.hadoop.hdfs.server.common.IncorrectVersionException",
			"DataNode %s belongs to cluster %s, this NameNode serves cluster %s", reg.GetDatanodeID().GetDatanodeUuid(), got, d.nn.version.ClusterID)
	}
	return nil
}

func storageReports(ps []*hdfs.StorageReportProto) []blockmgmt.StorageReport {
	out := make([]blockmgmt.StorageReport, 0, len(ps))
	for _, p := range ps {
		id := p.GetStorageUuid()
		if p.GetStorage() != nil {
			id = p.GetStorage().GetStorageUuid()
		}
		out = append(out, blockmgmt.StorageReport{
			StorageID: id, Capacity: int64(p.GetCapacity()), DfsUsed: int64(p.GetDfsUsed()),
			Remaining: int64(p.GetRemaining()), BlockPoolUsed: int64(p.GetBlockPoolUsed()), Failed: p.GetFailed(),
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
	d.ns.mu.Lock()
	err := d.ns.mu.bm.RegisterDatanode(id, d.ns.clock.Now())
	d.ns.mu.Unlock()
	if err != nil {
		return nil, remoteerr.New(remoteerr.ClassIOException, "registerDatanode: %v", err)
	}
	d.nn.deps.Logger.Info("DataNode registered", "uuid", id.UUID, "addr", id.XferAddr(), "host", id.Hostname)
	out := proto.Clone(reg).(*datanode.DatanodeRegistrationProto)
	out.DatanodeID = datanodeIDProto(id)
	return &datanode.RegisterDatanodeResponseProto{Registration: out}, nil
}

func (d *datanodeRPC) sendHeartbeat(ctx context.Context, req *datanode.HeartbeatRequestProto) (*datanode.HeartbeatResponseProto, error) {
	uuid := req.GetRegistration().GetDatanodeID().GetDatanodeUuid()
	d.ns.mu.Lock()
	cmds, err := d.ns.mu.bm.Heartbeat(uuid, storageReports(req.GetReports()), int(req.GetXceiverCount()), int(req.GetXmitsInProgress()), d.ns.clock.Now())
	d.ns.mu.Unlock()
	resp := &datanode.HeartbeatResponseProto{
		HaStatus: &hdfs.NNHAStatusHeartbeatProto{
			State: hdfs.NNHAStatusHeartbeatProto_ACTIVE.Enum(),
			Txid:  proto.Uint64(uint64(d.ns.elog.Stats().LastTxID)),
		},
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
		for _, t := range c.Targets {
			targets.Datanodes = append(targets.Datanodes, datanodeInfoProto(blockmgmt.DatanodeInfo{ID: t}))
			uuids.StorageUuids = append(uuids.StorageUuids, "")
			types.StorageTypes = append(types.StorageTypes, hdfs.StorageTypeProto_DISK)
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
	uuid := req.GetRegistration().GetDatanodeID().GetDatanodeUuid()
	if req.GetBlockPoolId() != d.nn.version.BlockPoolID {
		return nil, remoteerr.New(remoteerr.ClassIOException, "block report for block pool %s; this NameNode serves %s", req.GetBlockPoolId(), d.nn.version.BlockPoolID)
	}
	type decoded struct {
		storage  string
		replicas []blockmgmt.ReportedReplica
	}
	var reports []decoded
	for _, r := range req.GetReports() {
		reps, err := decodeBlockReport(r)
		if err != nil {
			return nil, remoteerr.New(remoteerr.ClassIOException, "block report of %s storage %s: %v", uuid, r.GetStorage().GetStorageUuid(), err)
		}
		reports = append(reports, decoded{r.GetStorage().GetStorageUuid(), reps})
	}
	d.ns.mu.Lock()
	defer d.ns.mu.Unlock()
	now := d.ns.clock.Now()
	for _, r := range reports {
		res, err := d.ns.mu.bm.ProcessFullBlockReport(uuid, r.storage, r.replicas, now)
		if errors.Is(err, blockmgmt.ErrUnregistered) {
			return nil, remoteerr.New(classUnregisteredNode, "Data node %s is attempting to report storage ID %s. Node is not registered.", uuid, r.storage)
		}
		if err != nil {
			return nil, remoteerr.New(remoteerr.ClassIOException, "block report: %v", err)
		}
		d.nn.deps.Logger.Debug("block report", "node", uuid, "storage", r.storage, "replicas", len(r.replicas),
			"added", res.Added, "removed", res.Removed, "invalidated", res.Invalidated, "corrupt", res.Corrupt)
	}
	return &datanode.BlockReportResponseProto{}, nil
}

// decodeBlockReport reads a storage's replicas in either of HDFS's
// encodings (BlockListAsLongs): the legacy list of longs — finalized count, UC
// count, 3 longs per finalized replica, a 3 × -1 delimiter, 4 longs per UC
// replica — or the buffers of varints (zig-zag block id, length, stamp, state
// per replica).
func decodeBlockReport(r *datanode.StorageBlockReportProto) ([]blockmgmt.ReportedReplica, error) {
	if bufs := r.GetBlocksBuffers(); len(bufs) > 0 {
		n := r.GetNumberOfBlocks()
		if n > 1<<26 {
			return nil, fmt.Errorf("%d replicas is beyond any real volume", n)
		}
		out := make([]blockmgmt.ReportedReplica, 0, n)
		for _, b := range bufs {
			for len(b) > 0 {
				var vals [4]uint64
				for i := range vals {
					v, m := protowire.ConsumeVarint(b)
					if m < 0 {
						return nil, fmt.Errorf("truncated replica record")
					}
					vals[i], b = v, b[m:]
				}
				out = append(out, blockmgmt.ReportedReplica{
					Block: blockmgmt.Block{ID: protowire.DecodeZigZag(vals[0]), NumBytes: int64(vals[1]), GenStamp: int64(vals[2])},
					State: blockmgmt.ReplicaState(vals[3]),
				})
			}
		}
		if uint64(len(out)) != n {
			return nil, fmt.Errorf("report says %d replicas but holds %d", n, len(out))
		}
		return out, nil
	}
	l := r.GetBlocks()
	if len(l) == 0 {
		return nil, nil
	}
	if len(l) < 2 {
		return nil, fmt.Errorf("list of %d longs has no header", len(l))
	}
	fin, uc := l[0], l[1]
	if fin > uint64(len(l)) || uc > uint64(len(l)) || uint64(len(l)) != 2+3*fin+3+4*uc && !(uc == 0 && uint64(len(l)) == 2+3*fin) {
		return nil, fmt.Errorf("list of %d longs does not hold %d finalized and %d other replicas", len(l), fin, uc)
	}
	out := make([]blockmgmt.ReportedReplica, 0, fin+uc)
	p := l[2:]
	for i := uint64(0); i < fin; i++ {
		out = append(out, blockmgmt.ReportedReplica{Block: blockmgmt.Block{ID: int64(p[0]), NumBytes: int64(p[1]), GenStamp: int64(p[2])}, State: blockmgmt.Finalized})
		p = p[3:]
	}
	if len(p) >= 3 {
		p = p[3:] // delimiter
	}
	for i := uint64(0); i < uc; i++ {
		out = append(out, blockmgmt.ReportedReplica{Block: blockmgmt.Block{ID: int64(p[0]), NumBytes: int64(p[1]), GenStamp: int64(p[2])}, State: blockmgmt.ReplicaState(p[3])})
		p = p[4:]
	}
	return out, nil
}

func (d *datanodeRPC) blockReceivedAndDeleted(ctx context.Context, req *datanode.BlockReceivedAndDeletedRequestProto) (*datanode.BlockReceivedAndDeletedResponseProto, error) {
	uuid := req.GetRegistration().GetDatanodeID().GetDatanodeUuid()
	d.ns.mu.Lock()
	defer d.ns.mu.Unlock()
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
				return nil, remoteerr.New(classUnregisteredNode, "Data node %s is not registered", uuid)
			}
			return nil, remoteerr.New(remoteerr.ClassIOException, "blockReceivedAndDeleted: %v", err)
		}
	}
	return &datanode.BlockReceivedAndDeletedResponseProto{}, nil
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
