package datanode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/blocklist"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	hstorage "github.com/hdfsgo/hdfsgo/internal/storage"
	"google.golang.org/protobuf/proto"
)

// Retry backoff of the NameNode handshake and registration.
const (
	retryFirst = 100 * time.Millisecond
	retryMax   = 5 * time.Second
	// rpcTimeout bounds one call to the NameNode.
	rpcTimeout = 60 * time.Second
)

type ibrStatus int

const (
	ibrReceiving = ibrStatus(dnpb.ReceivedDeletedBlockInfoProto_RECEIVING)
	ibrReceived  = ibrStatus(dnpb.ReceivedDeletedBlockInfoProto_RECEIVED)
	ibrDeleted   = ibrStatus(dnpb.ReceivedDeletedBlockInfoProto_DELETED)
)

// ibrEntry is one incremental block report entry.
type ibrEntry struct {
	storageID string
	block     storage.Block
	status    ibrStatus
	delHint   string // RECEIVED by REPLACE_BLOCK: the node whose replica may go
	seq       uint64 // order of queueing, per actor
}

// bpActor is the DataNode's side of one NameNode (Hadoop's BPServiceActor):
// its goroutine (run) does the handshake, registration, heartbeats, full
// block reports and the commands the NameNode answers with. Incremental
// reports are queued by the xceivers and sent by it promptly; a RECEIVED
// report of a finished write is sent by the xceiver itself (sendIBRNow).
type bpActor struct {
	dn   *DataNode
	addr string
	nn   *ipc.Client
	log  *slog.Logger

	kick      chan struct{} // pending incremental reports or bad-replica reports
	register  chan struct{} // the NameNode asked for re-registration
	reportNow chan struct{} // a full block report is wanted (volumes changed)

	// sendMu serialises blockReceivedAndDeleted calls, so that entries
	// reach the NameNode in the order they were queued.
	sendMu sync.Mutex

	// stop ends this actor alone (see quit); readied and quitted make
	// its readiness and its end count once each.
	stop             context.CancelFunc
	readied, quitted atomic.Bool

	mu struct {
		sync.Mutex
		ns      *hdfs.NamespaceInfoProto
		reg     *dnpb.DatanodeRegistrationProto
		pending []ibrEntry // in sequence order
		// bad holds reportBadBlocks entries not sent yet (the block
		// scanner's, the directory scanner's).
		bad   []*hdfs.LocatedBlockProto
		seq   uint64 // sequence number of the last entry queued
		acked uint64 // every entry up to this one reached the NameNode
		// lastHeartbeat and lastReport are when the last heartbeat and
		// full block report were answered (zero before the first).
		lastHeartbeat, lastReport time.Time
		// active and txid are what the NameNode's last heartbeat reply
		// said of its HA state: the DataNode takes orders from, and waits
		// for, the one that says active with the newest txid.
		active bool
		txid   uint64
	}
}

// haState is the NameNode's HA state as its last heartbeat reply gave it.
func (a *bpActor) haState() (active bool, txid uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mu.active, a.mu.txid
}

func newBPActor(dn *DataNode, addr string) *bpActor {
	return &bpActor{dn: dn, addr: addr,
		log:       dn.log.With("namenode", addr),
		kick:      make(chan struct{}, 1),
		register:  make(chan struct{}, 1),
		reportNow: make(chan struct{}, 1),
		nn: ipc.NewClient(ipc.ClientConfig{Addresses: []string{addr}, User: dn.cfg.User,
			Protocol: DatanodeProtocol, MaxRetries: 1, RetryBase: 50 * time.Millisecond, Logger: dn.log,
			Kerberos: dn.cfg.Kerberos.InitiatorFor(dn.cfg.NameNodePrincipal), Protection: dn.cfg.RPCProtection}),
	}
}

func (a *bpActor) poolID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mu.ns.GetBlockPoolID()
}

func (a *bpActor) registration() *dnpb.DatanodeRegistrationProto {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mu.reg
}

func (a *bpActor) call(ctx context.Context, method string, req, resp proto.Message) error {
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	return a.nn.Call(ctx, method, req, resp)
}

// sleep waits d on the DataNode's clock; false if ctx ended.
func (a *bpActor) sleep(ctx context.Context, d time.Duration) bool {
	t := a.dn.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// retry runs f until it succeeds or ctx ends, with exponential backoff.
func (a *bpActor) retry(ctx context.Context, what string, f func() error) bool {
	d := retryFirst
	for {
		err := f()
		if err == nil {
			return true
		}
		a.log.Info("namenode not ready", "step", what, "err", err)
		if !a.sleep(ctx, d) {
			return false
		}
		d = min(2*d, retryMax)
	}
}

// quit ends this actor for good: its NameNode refused this node. The
// DataNode goes on serving the pool through its other actors (the other
// NameNode of an HA pair) and stops, with err, once no actor is left.
func (a *bpActor) quit(err error) {
	if !a.quitted.CompareAndSwap(false, true) {
		return
	}
	a.log.Error("block pool service stopping", "err", err)
	a.stop()
	a.dn.actorQuit(a, err)
}

func (a *bpActor) run(ctx context.Context) {
	ctx, a.stop = context.WithCancel(ctx)
	defer a.stop()
	var ns *hdfs.NamespaceInfoProto
	if !a.retry(ctx, "versionRequest", func() error {
		var resp hdfs.VersionResponseProto
		if err := a.call(ctx, "versionRequest", &hdfs.VersionRequestProto{}, &resp); err != nil {
			return err
		}
		ns = resp.GetInfo()
		return nil
	}) {
		return
	}
	if _, err := a.dn.joinPool(ctx, ns); err != nil {
		a.dn.fail(err)
		return
	}
	a.mu.Lock()
	a.mu.ns = ns
	a.mu.Unlock()
	if !a.retry(ctx, "registerDatanode", func() error { return a.registerDatanode(ctx) }) {
		return
	}
	if ctx.Err() != nil {
		return
	}
	// The first pass heartbeats before it reports, as Hadoop's does: the
	// NameNode learns the storages and their free space before their
	// blocks, so a NameNode that the first report lets out of safe mode
	// (or that becomes active right after it) can place new blocks on
	// this node at once.
	nextReport := a.dn.clk.Now().Add(a.dn.cfg.BlockReportInitialDelay)
	tick := func() {
		a.heartbeat(ctx)
		a.flushBad(ctx) // retries of failed reports
		if !a.dn.clk.Now().Before(nextReport) {
			if err := a.blockReport(ctx); err != nil {
				a.log.Warn("block report failed", "err", err)
				a.checkUnregistered(err)
			} else {
				nextReport = a.dn.clk.Now().Add(a.dn.cfg.BlockReportInterval)
			}
		}
	}
	tick()
	if ctx.Err() != nil {
		return
	}
	a.dn.actorReady(a)
	a.flushIBR(ctx)
	hb := a.dn.clk.NewTicker(a.dn.cfg.HeartbeatInterval)
	defer hb.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.kick:
			a.flushIBR(ctx)
			a.flushBad(ctx)
		case <-a.reportNow:
			a.flushIBR(ctx)
			if err := a.blockReport(ctx); err != nil {
				a.log.Warn("block report failed", "err", err)
				a.checkUnregistered(err)
			} else {
				nextReport = a.dn.clk.Now().Add(a.dn.cfg.BlockReportInterval)
			}
		case <-a.register:
			a.reregister(ctx)
			nextReport = a.dn.clk.Now().Add(a.dn.cfg.BlockReportInterval)
		case <-hb.C():
			tick()
		}
	}
}

// reregister registers again and sends a full block report (DNA_REGISTER,
// or the NameNode no longer knowing this node).
func (a *bpActor) reregister(ctx context.Context) {
	if !a.retry(ctx, "registerDatanode", func() error { return a.registerDatanode(ctx) }) {
		return
	}
	a.heartbeat(ctx) // storages before blocks, as at the first registration
	if err := a.blockReport(ctx); err != nil {
		a.log.Warn("block report failed", "err", err)
	}
}

// checkUnregistered asks for re-registration when err says the NameNode does
// not know this DataNode.
func (a *bpActor) checkUnregistered(err error) {
	var re *remoteerr.Error
	if !errors.As(err, &re) {
		return
	}
	if strings.Contains(re.Class, "UnregisteredNodeException") || strings.Contains(strings.ToLower(re.Message), "not registered") ||
		strings.Contains(strings.ToLower(re.Message), "unregistered") {
		select {
		case a.register <- struct{}{}:
		default:
		}
	}
}

// newRegistration builds this DataNode's registration for the actor's
// namespace.
func (a *bpActor) newRegistration(ns *hdfs.NamespaceInfoProto) *dnpb.DatanodeRegistrationProto {
	dn := a.dn
	si := ns.GetStorageInfo()
	layoutVersion := hstorage.DataNodeLayoutVersion // negative; carried as uint32 like Java's int
	return &dnpb.DatanodeRegistrationProto{
		DatanodeID: &hdfs.DatanodeIDProto{
			IpAddr:       proto.String(a.localIP()),
			HostName:     proto.String(dn.hostName()),
			DatanodeUuid: proto.String(dn.uuid),
			XferPort:     proto.Uint32(tcpPort(dn.XferAddr())),
			InfoPort:     proto.Uint32(dn.infoPort()),
			IpcPort:      proto.Uint32(tcpPort(dn.IPCAddr())),
		},
		StorageInfo: &hdfs.StorageInfoProto{
			LayoutVersion: proto.Uint32(uint32(layoutVersion)),
			NamespceID:    proto.Uint32(si.GetNamespceID()),
			ClusterID:     proto.String(si.GetClusterID()),
			CTime:         proto.Uint64(si.GetCTime()),
		},
		Keys: &hdfs.ExportedBlockKeysProto{
			IsBlockTokenEnabled: proto.Bool(false),
			KeyUpdateInterval:   proto.Uint64(0),
			TokenLifeTime:       proto.Uint64(0),
			CurrentKey:          &hdfs.BlockKeyProto{KeyId: proto.Uint32(0), ExpiryDate: proto.Uint64(0), KeyBytes: []byte{}},
		},
		SoftwareVersion: proto.String(SoftwareVersion),
	}
}

// localIP is the address this DataNode is reached at: the streaming
// server's host if it is a specific one, else the local address of a route
// towards the NameNode.
func (a *bpActor) localIP() string {
	if t, ok := a.dn.XferAddr().(*net.TCPAddr); ok && !t.IP.IsUnspecified() {
		return t.IP.String()
	}
	if c, err := net.Dial("udp", a.addr); err == nil {
		defer c.Close()
		if u, ok := c.LocalAddr().(*net.UDPAddr); ok {
			return u.IP.String()
		}
	}
	return "127.0.0.1"
}

func (a *bpActor) registerDatanode(ctx context.Context) error {
	a.mu.Lock()
	ns := a.mu.ns
	a.mu.Unlock()
	reg := a.newRegistration(ns)
	var resp dnpb.RegisterDatanodeResponseProto
	if err := a.call(ctx, "registerDatanode", &dnpb.RegisterDatanodeRequestProto{Registration: reg}, &resp); err != nil {
		var re *remoteerr.Error
		if errors.As(err, &re) && (strings.HasSuffix(re.Class, "DisallowedDatanodeException") || strings.HasSuffix(re.Class, "IncorrectVersionException")) {
			// This NameNode will never take this node: stop serving it,
			// as Hadoop's actor does (the DataNode ends with its last).
			a.quit(fmt.Errorf("datanode: NameNode %s refused the registration: %w", a.addr, err))
			return nil
		}
		return err
	}
	if r := resp.GetRegistration(); r != nil {
		// The block keys are kept here; the registration sent back with
		// every heartbeat carries the placeholder again, as Hadoop's does.
		a.dn.tokens.SetKeys(r.GetKeys())
		r.Keys = reg.GetKeys()
		reg = r
	}
	a.mu.Lock()
	a.mu.reg = reg
	a.mu.Unlock()
	a.log.Info("registered", "pool", ns.GetBlockPoolID(), "uuid", reg.GetDatanodeID().GetDatanodeUuid())
	return nil
}

func (a *bpActor) heartbeat(ctx context.Context) {
	dn := a.dn
	reports, err := dn.volumeReports()
	if err != nil {
		a.log.Warn("volume reports", "err", err)
	}
	failed := dn.failedVolumes()
	req := &dnpb.HeartbeatRequestProto{
		Registration:    a.registration(),
		Reports:         reports,
		XmitsInProgress: proto.Uint32(uint32(dn.xmits.Load())),
		XceiverCount:    proto.Uint32(uint32(dn.xs.active())),
		FailedVolumes:   proto.Uint32(uint32(len(failed))),
	}
	if len(failed) > 0 {
		sum := &dnpb.VolumeFailureSummaryProto{LastVolumeFailureDate: proto.Uint64(0), EstimatedCapacityLostTotal: proto.Uint64(0)}
		var lost uint64
		for _, f := range failed {
			sum.FailedStorageLocations = append(sum.FailedStorageLocations, f.Dir)
			lost += uint64(max(f.Capacity, 0))
			if ms := uint64(f.At.UnixMilli()); ms > sum.GetLastVolumeFailureDate() {
				sum.LastVolumeFailureDate = proto.Uint64(ms)
			}
		}
		sum.EstimatedCapacityLostTotal = proto.Uint64(lost)
		req.VolumeFailureSummary = sum
	}
	var resp dnpb.HeartbeatResponseProto
	if err := a.call(ctx, "sendHeartbeat", req, &resp); err != nil {
		var re *remoteerr.Error
		if errors.As(err, &re) && strings.HasSuffix(re.Class, "DisallowedDatanodeException") {
			// refreshNodes took this node out of the include list: stop
			// serving this NameNode, as a refused registration does.
			a.quit(fmt.Errorf("datanode: NameNode %s cut this node off: %w", a.addr, err))
			return
		}
		if ctx.Err() == nil {
			a.log.Warn("heartbeat failed", "err", err)
			a.checkUnregistered(err)
		}
		return
	}
	dn.act.heartbeats.Add(1)
	a.mu.Lock()
	a.mu.lastHeartbeat = dn.clk.Now()
	a.mu.Unlock()
	hs := resp.GetHaStatus()
	claims := hs == nil || hs.GetState() == hdfs.NNHAStatusHeartbeatProto_ACTIVE
	a.mu.Lock()
	a.mu.active, a.mu.txid = claims, hs.GetTxid()
	a.mu.Unlock()
	// Only the active NameNode manages replicas (Hadoop's rule); of two
	// that claim to be active, the one with the newer txid is (the other
	// was fenced and does not know it yet).
	obeys := claims && dn.activeActor(a.poolID()) == a
	for _, c := range resp.GetCmds() {
		if !obeys && c.GetCmdType() != dnpb.DatanodeCommandProto_RegisterCommand && c.GetCmdType() != dnpb.DatanodeCommandProto_KeyUpdateCommand {
			a.log.Info("ignoring command from a non-active NameNode", "cmd", c.GetCmdType().String(),
				"state", hs.GetState().String(), "txid", hs.GetTxid())
			continue
		}
		a.execute(ctx, c)
	}
}

// volumeReports are the heartbeat's storage reports.
func (dn *DataNode) volumeReports() ([]*hdfs.StorageReportProto, error) {
	dn.mu.Lock()
	ds := dn.mu.ds
	dn.mu.Unlock()
	if ds == nil {
		return nil, ErrPoolNotReady
	}
	vrs, err := ds.Reports()
	out := make([]*hdfs.StorageReportProto, 0, len(vrs))
	for _, r := range vrs {
		out = append(out, &hdfs.StorageReportProto{
			StorageUuid:   proto.String(r.StorageID),
			Failed:        proto.Bool(false),
			Capacity:      proto.Uint64(uint64(max(r.Capacity, 0))),
			DfsUsed:       proto.Uint64(uint64(max(r.DfsUsed, 0))),
			Remaining:     proto.Uint64(uint64(max(r.Remaining, 0))),
			BlockPoolUsed: proto.Uint64(uint64(max(r.DfsUsed, 0))),
			Storage:       dn.storageProto(r.StorageID),
			NonDfsUsed:    proto.Uint64(uint64(max(r.NonDfsUsed, 0))),
		})
	}
	// Failed volumes stay in the reports, marked failed, so the NameNode
	// drops their replicas and keeps them out of placement.
	for _, f := range dn.failedVolumes() {
		if f.StorageID == "" {
			continue // never formatted: the NameNode never knew it
		}
		out = append(out, &hdfs.StorageReportProto{StorageUuid: proto.String(f.StorageID), Failed: proto.Bool(true), Storage: dn.storageProto(f.StorageID),
			Capacity: proto.Uint64(0), DfsUsed: proto.Uint64(0), Remaining: proto.Uint64(0), BlockPoolUsed: proto.Uint64(0)})
	}
	return out, err
}

// blockReport sends a full block report, one StorageBlockReportProto per
// volume, in the buffers encoding when the NameNode's namespace info
// advertises it, in the legacy long list otherwise (see the package doc).
func (a *bpActor) blockReport(ctx context.Context) error {
	bpid := a.poolID()
	bp, err := a.dn.pool(bpid)
	if err != nil {
		return err
	}
	a.mu.Lock()
	buffers := a.mu.ns.GetCapabilities()&blocklist.CapabilityBlockReportBuffers != 0
	a.mu.Unlock()
	byStorage := map[string][]storage.Replica{}
	for _, r := range bp.Replicas() {
		byStorage[r.StorageID] = append(byStorage[r.StorageID], r)
	}
	var reports []*dnpb.StorageBlockReportProto
	for _, v := range a.dn.volumes() {
		sid := v.StorageID()
		rep := &dnpb.StorageBlockReportProto{Storage: a.dn.storageProto(sid)}
		if buffers {
			bufs, n := EncodeBlockReportBuffers(byStorage[sid])
			rep.BlocksBuffers, rep.NumberOfBlocks = bufs, proto.Uint64(n)
		} else {
			longs, n := EncodeBlockReport(byStorage[sid])
			rep.Blocks, rep.NumberOfBlocks = longs, proto.Uint64(uint64(n))
		}
		reports = append(reports, rep)
	}
	req := &dnpb.BlockReportRequestProto{
		Registration: a.registration(),
		BlockPoolId:  proto.String(bpid),
		Reports:      reports,
		Context: &dnpb.BlockReportContextProto{TotalRpcs: proto.Int32(1), CurRpc: proto.Int32(0),
			Id: proto.Int64(a.dn.clk.Now().UnixNano()), LeaseId: proto.Uint64(0)},
	}
	var resp dnpb.BlockReportResponseProto
	if err := a.call(ctx, "blockReport", req, &resp); err != nil {
		return err
	}
	a.dn.act.blockReports.Add(1)
	a.mu.Lock()
	a.mu.lastReport = a.dn.clk.Now()
	a.mu.Unlock()
	if c := resp.GetCmd(); c != nil {
		a.execute(ctx, c)
	}
	return nil
}

// queueIBR queues an incremental report entry and wakes the actor.
func (a *bpActor) queueIBR(e ibrEntry) {
	a.enqueueIBR(e)
	a.wake()
}

// enqueueIBR queues e and returns its sequence number.
func (a *bpActor) enqueueIBR(e ibrEntry) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mu.seq++
	e.seq = a.mu.seq
	a.mu.pending = append(a.mu.pending, e)
	return e.seq
}

func (a *bpActor) wake() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// flushIBR sends the queued incremental reports.
func (a *bpActor) flushIBR(ctx context.Context) {
	if err := a.sendIBR(ctx); err != nil && ctx.Err() == nil {
		a.log.Warn("incremental block report failed", "err", err)
		a.checkUnregistered(err)
	}
}

// sendIBRNow queues e and returns once the NameNode has answered a call
// carrying it. Concurrent callers share calls: whoever sends takes every
// entry queued so far, and a caller whose entry went out with another's
// call returns when that call is answered.
func (a *bpActor) sendIBRNow(ctx context.Context, e ibrEntry) {
	seq := a.enqueueIBR(e)
	a.sendMu.Lock()
	a.mu.Lock()
	done := a.mu.acked >= seq
	a.mu.Unlock()
	var err error
	if !done {
		err = a.sendIBRLocked(ctx)
	}
	a.sendMu.Unlock()
	if err != nil {
		a.log.Warn("incremental block report failed; queued for retry", "err", err, "block", e.block.String())
		a.wake()
	}
}

// sendIBR sends the pending entries in one blockReceivedAndDeleted call. On
// failure they are queued again.
func (a *bpActor) sendIBR(ctx context.Context) error {
	a.sendMu.Lock()
	defer a.sendMu.Unlock()
	return a.sendIBRLocked(ctx)
}

// sendIBRLocked is sendIBR with sendMu held.
func (a *bpActor) sendIBRLocked(ctx context.Context) error {
	a.mu.Lock()
	entries := a.mu.pending
	a.mu.pending = nil
	reg, bpid := a.mu.reg, a.mu.ns.GetBlockPoolID()
	a.mu.Unlock()
	if len(entries) == 0 {
		return nil
	}
	if reg == nil {
		a.requeue(entries)
		return fmt.Errorf("datanode: not registered with %s yet", a.addr)
	}
	var order []string
	byStorage := map[string]*dnpb.StorageReceivedDeletedBlocksProto{}
	for _, e := range entries {
		s := byStorage[e.storageID]
		if s == nil {
			s = &dnpb.StorageReceivedDeletedBlocksProto{StorageUuid: proto.String(e.storageID), Storage: a.dn.storageProto(e.storageID)}
			byStorage[e.storageID] = s
			order = append(order, e.storageID)
		}
		info := &dnpb.ReceivedDeletedBlockInfoProto{
			Block:  &hdfs.BlockProto{BlockId: proto.Uint64(uint64(e.block.ID)), GenStamp: proto.Uint64(uint64(e.block.GenStamp)), NumBytes: proto.Uint64(uint64(e.block.NumBytes))},
			Status: dnpb.ReceivedDeletedBlockInfoProto_BlockStatus(e.status).Enum(),
		}
		if e.delHint != "" {
			info.DeleteHint = proto.String(e.delHint)
		}
		s.Blocks = append(s.Blocks, info)
	}
	req := &dnpb.BlockReceivedAndDeletedRequestProto{Registration: reg, BlockPoolId: proto.String(bpid)}
	for _, id := range order {
		req.Blocks = append(req.Blocks, byStorage[id])
	}
	if err := a.call(ctx, "blockReceivedAndDeleted", req, &dnpb.BlockReceivedAndDeletedResponseProto{}); err != nil {
		a.requeue(entries)
		return err
	}
	a.dn.act.ibrs.Add(1)
	// Entries are queued in sequence order and sent oldest first, so the
	// last one is the highest.
	a.mu.Lock()
	a.mu.acked = max(a.mu.acked, entries[len(entries)-1].seq)
	a.mu.Unlock()
	return nil
}

// selfInfo describes this DataNode as its NameNodes know it (nil before
// registration).
func (dn *DataNode) selfInfo(poolID string) *hdfs.DatanodeInfoProto {
	for _, a := range dn.actorsOf(poolID) {
		if reg := a.registration(); reg != nil {
			return &hdfs.DatanodeInfoProto{Id: reg.GetDatanodeID()}
		}
	}
	return nil
}

// reportBadReplica tells the NameNodes of the pool that the replica of b on
// node is corrupt (reportBadBlocks).
func (dn *DataNode) reportBadReplica(ctx context.Context, poolID string, b storage.Block, node *hdfs.DatanodeInfoProto) {
	lb := &hdfs.LocatedBlockProto{B: extBlock(poolID, b), Offset: proto.Uint64(0), Locs: []*hdfs.DatanodeInfoProto{node},
		Corrupt: proto.Bool(true), BlockToken: emptyToken()}
	for _, a := range dn.actorsOf(poolID) {
		if err := a.call(ctx, "reportBadBlocks", &dnpb.ReportBadBlocksRequestProto{Blocks: []*hdfs.LocatedBlockProto{lb}},
			&dnpb.ReportBadBlocksResponseProto{}); err != nil {
			a.log.Warn("reportBadBlocks failed", "block", b.String(), "err", err)
		} else {
			a.log.Warn("reported corrupt replica", "block", b.String(), "node", node.GetId().GetDatanodeUuid())
		}
	}
}

// queueBad queues a reportBadBlocks entry and wakes the actor.
func (a *bpActor) queueBad(lb *hdfs.LocatedBlockProto) {
	a.mu.Lock()
	a.mu.bad = append(a.mu.bad, lb)
	a.mu.Unlock()
	a.wake()
}

// flushBad sends the queued bad-replica reports in one reportBadBlocks
// call; on failure they stay queued for the next heartbeat.
func (a *bpActor) flushBad(ctx context.Context) {
	a.mu.Lock()
	bad := a.mu.bad
	a.mu.bad = nil
	a.mu.Unlock()
	if len(bad) == 0 {
		return
	}
	if err := a.call(ctx, "reportBadBlocks", &dnpb.ReportBadBlocksRequestProto{Blocks: bad}, &dnpb.ReportBadBlocksResponseProto{}); err != nil {
		if ctx.Err() == nil {
			a.log.Warn("reportBadBlocks failed; will retry", "replicas", len(bad), "err", err)
		}
		a.mu.Lock()
		a.mu.bad = append(bad, a.mu.bad...)
		a.mu.Unlock()
		return
	}
	for _, lb := range bad {
		a.log.Warn("reported corrupt replica", "block", storage.Block{ID: int64(lb.GetB().GetBlockId()), GenStamp: int64(lb.GetB().GetGenerationStamp())}.String(),
			"storage", lb.GetStorageIDs())
	}
}

func (a *bpActor) requeue(entries []ibrEntry) {
	a.mu.Lock()
	a.mu.pending = append(entries, a.mu.pending...)
	a.mu.Unlock()
}
