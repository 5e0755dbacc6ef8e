package datanode

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/datanode/scanner"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/datanode/throttle"
	"github.com/hdfsgo/hdfsgo/internal/dnconn"
	"github.com/hdfsgo/hdfsgo/internal/dtsasl"
	"github.com/hdfsgo/hdfsgo/internal/failpoint"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/security/authorize"
	"github.com/hdfsgo/hdfsgo/internal/security/blocktoken"
	hstorage "github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// Protocol names (the Java interface names Hadoop RPC carries).
const (
	DatanodeProtocol       = "org.apache.hadoop.hdfs.server.protocol.DatanodeProtocol"
	InterDatanodeProtocol  = "org.apache.hadoop.hdfs.server.protocol.InterDatanodeProtocol"
	ClientDatanodeProtocol = "org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol"
)

// SoftwareVersion is the Hadoop release whose DataNode protocols this one
// speaks; the NameNode compares it with its own at registration.
const SoftwareVersion = "3.3.6"

// DefaultBalanceBandwidth is dfs.datanode.balance.bandwidthPerSec's
// default in Hadoop 3: 100 MiB/s.
const DefaultBalanceBandwidth = 100 << 20

// DefaultBalanceMaxMoves is dfs.datanode.balance.max.concurrent.moves'
// default.
const DefaultBalanceMaxMoves = 100

// Errors of the DataNode.
var (
	// ErrClusterMismatch: a volume was formatted for another cluster than the
	// NameNode's.
	ErrClusterMismatch = errors.New("datanode: volume belongs to another cluster")
	// ErrPoolNotReady: a request names a block pool the DataNode has not
	// joined (yet).
	ErrPoolNotReady = errors.New("datanode: block pool not ready")
	// ErrClosed: the DataNode was shut down.
	ErrClosed = errors.New("datanode: closed")
	// ErrUnsupported: an op, stage or command this DataNode does not implement.
	ErrUnsupported = errors.New("datanode: unsupported")
	// errBadRange: a read's offset and length do not fit the replica (the
	// client gets BlockSender's message, not this text).
	errBadRange = errors.New("datanode: read range outside the replica")
)

// Deps are the DataNode's injected collaborators. Zero fields take defaults.
type Deps struct {
	// Clock drives heartbeats, block reports and retry backoff (clock.Real).
	Clock clock.Clock
	// Logger receives the DataNode's events (discarded when nil).
	Logger *slog.Logger
	// XferListener, if set, is used instead of listening on
	// Config.XferAddress; IPCListener likewise for Config.IPCAddress.
	XferListener net.Listener
	IPCListener  net.Listener
	// HTTPListener likewise replaces Config.HTTPAddress.
	HTTPListener net.Listener
	// LogLevel, if set, is the level of Logger's handler, which /logLevel
	// (`hdfs daemonlog`) reads and sets.
	LogLevel *slog.LevelVar
	// Conf is the configuration the web server shows at /conf (nil: /conf
	// answers that none is available).
	Conf *conf.Conf
	// Rand is the source of the ids a format hands out (crypto/rand).
	Rand io.Reader
	// VolumeTesting is passed to every volume (tests only).
	VolumeTesting storage.VolumeTesting
	// ScannerClock drives the DataNode's background work: the block and
	// directory scanners, the disk checker and the balancer throttle
	// (clock.Real when nil), so that tests can give the scanners a
	// test-sized period apart from the heartbeats' Clock.
	ScannerClock clock.Clock
	// ReloadConf reads the configuration again for a reconfiguration
	// (dfs.datanode.data.dir hot swap, dfsadmin -reconfig); nil: the
	// DataNode answers that it cannot be reconfigured.
	ReloadConf func() (*conf.Conf, error)
	// Failpoint is called after each step of a storage upgrade, rollback
	// or finalize (package failpoint: crash tests); nil in production.
	Failpoint failpoint.Func
}

// DataNode is one running DataNode: its volumes, the streaming server, the
// IPC server and one actor per NameNode. Safe for concurrent use.
type DataNode struct {
	// tokens checks block access tokens with the keys the NameNodes send
	// (all accepted while they say tokens are off).
	tokens blocktoken.Verifier
	cfg    Config
	clk    clock.Clock
	log    *slog.Logger
	rnd    io.Reader
	uuid   string
	vols   []*storage.Volume

	xferL net.Listener
	ipcL  net.Listener
	unixL *net.UnixListener // dfs.domain.socket.path; nil when not set
	// dialer connects to other DataNodes: through their domain socket
	// when they are on this host and the path is set, else over TCP.
	dialer *dnconn.Dialer
	// saslSrv and saslCli are the two sides of the data transfer SASL
	// handshake (nil: dfs.data.transfer.protection and
	// dfs.encrypt.data.transfer are off).
	saslSrv *dtsasl.Server
	saslCli *dtsasl.Client
	ipcSrv  *ipc.Server
	xs      *xceiverServer
	web     *web.Server // dfs.datanode.http.address
	// started is when Start was called (web pages, DNStartedTimeInMillis).
	started time.Time
	actors  []*bpActor

	cancel context.CancelFunc // ends the DataNode's context (Close, fail)
	wg     sync.WaitGroup     // actors, command workers, servers
	done   chan struct{}
	ready  chan struct{}
	nReady atomic.Int32
	nQuit  atomic.Int32 // actors stopped for good (refused by their NameNode)

	xmits atomic.Int32 // outgoing transfers in progress
	act   activity     // counters of the DataNodeActivity bean
	// balance limits balancer moves and re-replication copies
	// (dfs.datanode.balance.bandwidthPerSec, DNA_BALANCERBANDWIDTHUPDATE).
	balance *throttle.Throttler
	// moves counts the balancer moves being served (COPY_BLOCK and
	// REPLACE_BLOCK), at most maxMoves (Hadoop's BlockBalanceThrottler).
	moves     atomic.Int32
	maxMoves  int32
	blockScan *scanner.BlockScanner
	// dirScan and checker are created with the dataset (first pool).
	dirScan    atomic.Pointer[scanner.DirectoryScanner]
	checker    atomic.Pointer[diskChecker]
	scanClock  clock.Clock
	volTesting storage.VolumeTesting
	reloadConf func() (*conf.Conf, error)
	failpoint  failpoint.Func
	// windows holds the read windows of write pipeline stages
	// (writeWindow bytes each).
	windows sync.Pool

	mu struct {
		sync.Mutex
		ds      *storage.Dataset
		pools   map[string]*storage.BlockPool
		err     error
		deletes map[deleteKey]string // invalidated replica → storage id, until deleted
		failed  []failedVolume       // volumes out of service after a failure
		// dataDirs is dfs.datanode.data.dir as last applied (start or
		// reconfiguration).
		dataDirs []string
		reconf   *reconfTask // the last reconfiguration, nil before the first
	}
}

type deleteKey struct {
	pool string
	id   int64
}

// Start opens and locks the volumes, starts the streaming and IPC servers and
// one actor per NameNode, and returns. ctx's values are inherited by the
// DataNode's work; its end does not stop the DataNode (Close does). The actors handshake with their
// NameNode (retrying until it answers), format empty volumes, join the block
// pool, register and report; WaitReady waits for that. A fatal problem found
// later (a volume of another cluster) stops the DataNode: Done is closed and
// Err says why.
func Start(ctx context.Context, cfg Config, deps Deps) (*DataNode, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dn := &DataNode{cfg: cfg, clk: deps.Clock, log: deps.Logger, rnd: deps.Rand, started: time.Now(),
		done: make(chan struct{}), ready: make(chan struct{}),
		dialer: dnconn.NewDialer(cfg.DomainSocketPath, connectTimeout)}
	if dn.clk == nil {
		dn.clk = clock.Real{}
	}
	if dn.log == nil {
		dn.log = slog.New(slog.DiscardHandler)
	}
	if dn.rnd == nil {
		dn.rnd = crand.Reader
	}
	dn.windows.New = func() any { b := make([]byte, writeWindow); return &b }
	dn.newSASL()
	dn.mu.pools = map[string]*storage.BlockPool{}
	dn.mu.deletes = map[deleteKey]string{}
	dn.mu.dataDirs = append([]string(nil), cfg.DataDirs...)
	dn.scanClock, dn.volTesting, dn.reloadConf = deps.ScannerClock, deps.VolumeTesting, deps.ReloadConf
	dn.failpoint = deps.Failpoint
	if dn.scanClock == nil {
		dn.scanClock = clock.Real{}
	}
	bw := cfg.BalanceBandwidth
	if bw <= 0 {
		bw = DefaultBalanceBandwidth
	}
	dn.balance = throttle.New(dn.scanClock, bw)
	dn.maxMoves = int32(cfg.BalanceMaxMoves)
	if dn.maxMoves <= 0 {
		dn.maxMoves = DefaultBalanceMaxMoves
	}
	dn.blockScan = scanner.New(cfg.Scanner, dn.scanClock, dn.log, scanReporter{dn})
	ok := false
	defer func() {
		if !ok {
			dn.closeResources()
		}
	}()
	if err := dn.openVolumes(deps); err != nil {
		return nil, err
	}
	if err := dn.pickUUID(); err != nil {
		return nil, err
	}
	var err error
	if dn.xferL = deps.XferListener; dn.xferL == nil {
		if dn.xferL, err = net.Listen("tcp", cfg.XferAddress); err != nil {
			return nil, fmt.Errorf("datanode: listen on %s: %w", cfg.XferAddress, err)
		}
	}
	if cfg.DomainSocketPath != "" {
		path := dnconn.DomainSocketPath(cfg.DomainSocketPath, dn.xferL.Addr().(*net.TCPAddr).Port)
		if dn.unixL, err = listenDomain(path); err != nil {
			return nil, err
		}
	}
	if dn.ipcL = deps.IPCListener; dn.ipcL == nil {
		if dn.ipcL, err = net.Listen("tcp", cfg.IPCAddress); err != nil {
			return nil, fmt.Errorf("datanode: listen on %s: %w", cfg.IPCAddress, err)
		}
	}
	// Proxy users and service ACLs of the IPC port (hadoop-policy.xml).
	authz, err := authorize.IPC(deps.Conf)
	if err != nil {
		return nil, fmt.Errorf("datanode: %w", err)
	}
	admins, err := authorize.WebAdmins(deps.Conf, currentUser())
	if err != nil {
		return nil, fmt.Errorf("datanode: %w", err)
	}
	dn.web, err = web.New(web.Config{Addr: cfg.HTTPAddress, Listener: deps.HTTPListener, Role: "DataNode",
		KeyName: conf.DFSDataNodeHTTPAddress, Conf: deps.Conf, Logger: dn.log, Limits: cfg.HTTPLimits,
		LogLevel: deps.LogLevel, LogDir: os.Getenv("HADOOP_LOG_DIR"), Admins: admins, Auth: httpAuth(cfg.HTTPAuth)})
	if err != nil {
		return nil, fmt.Errorf("datanode: %w", err)
	}
	ok = true

	ctx, dn.cancel = context.WithCancel(context.WithoutCancel(ctx))
	listeners := []net.Listener{dn.xferL}
	if dn.unixL != nil {
		listeners = append(listeners, dn.unixL)
	}
	dn.xs = newXceiverServer(dn, cfg.MaxTransferThreads, listeners...)
	dn.ipcSrv = ipc.NewServer(ipc.ServerConfig{Logger: dn.log, Limits: cfg.IPCLimits, Kerberos: dn.ipcAcceptor(),
		TokenPassword: dn.ipcTokenPassword(), Authorize: authz})
	dn.registerIPC()
	dn.wg.Add(1 + len(listeners))
	for _, l := range listeners {
		go func() { defer dn.wg.Done(); dn.xs.serve(ctx, l) }()
	}
	go func() {
		defer dn.wg.Done()
		if err := dn.ipcSrv.Serve(dn.ipcL); err != nil && !errors.Is(err, ipc.ErrServerClosed) {
			dn.log.Error("ipc server stopped", "err", err)
		}
	}()
	for _, addr := range cfg.NameNodes {
		a := newBPActor(dn, addr)
		dn.actors = append(dn.actors, a)
	}
	dn.startWeb()
	for _, a := range dn.actors {
		dn.wg.Add(1)
		go func() { defer dn.wg.Done(); a.run(ctx) }()
	}
	go dn.supervise(ctx)
	attrs := []any{"xfer", dn.XferAddr().String(), "ipc", dn.IPCAddr().String(), "http", dn.HTTPAddr().String(), "uuid", dn.uuid}
	if dn.unixL != nil {
		attrs = append(attrs, "domainSocket", dn.DomainSocket())
	}
	dn.log.Info("datanode started", attrs...)
	return dn, nil
}

// supervise waits for the DataNode's end and releases everything.
func (dn *DataNode) supervise(ctx context.Context) {
	<-ctx.Done()
	dn.xs.close()
	_ = dn.ipcSrv.Close()
	dn.blockScan.Close()
	if d := dn.dirScan.Load(); d != nil {
		d.Close()
	}
	dn.wg.Wait()
	dn.xs.wait()
	for _, a := range dn.actors {
		_ = a.nn.Close()
	}
	dn.closeResources()
	close(dn.done)
}

// closeResources closes the dataset (or the volumes) and the listeners.
func (dn *DataNode) closeResources() {
	if dn.xferL != nil {
		_ = dn.xferL.Close()
	}
	if dn.ipcL != nil {
		_ = dn.ipcL.Close()
	}
	if dn.web != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = dn.web.Close(ctx) // a no-op when supervise closed it already
		cancel()
	}
	if dn.unixL != nil {
		_ = dn.unixL.Close() // removes the socket file
	}
	dn.mu.Lock()
	ds := dn.mu.ds
	dn.mu.Unlock()
	if ds != nil {
		if err := ds.Close(); err != nil {
			dn.log.Warn("closing dataset", "err", err)
		}
		return
	}
	for _, v := range dn.vols {
		_ = v.Close()
	}
}

// Close stops the DataNode and waits until every goroutine has returned and
// the volumes are unlocked.
func (dn *DataNode) Close() error {
	dn.cancel()
	<-dn.done
	return nil
}

// Done is closed once the DataNode has stopped (Close, or a fatal error).
func (dn *DataNode) Done() <-chan struct{} { return dn.done }

// Err is the fatal error that stopped the DataNode, or nil.
func (dn *DataNode) Err() error {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	return dn.mu.err
}

// WaitReady waits until every NameNode actor has registered and sent its
// first block report, the DataNode stopped (its Err, or ErrClosed), or ctx
// ended.
func (dn *DataNode) WaitReady(ctx context.Context) error {
	select {
	case <-dn.ready:
		return nil
	case <-dn.done:
		if err := dn.Err(); err != nil {
			return err
		}
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// actorQuit notes that actor a stopped for good: the DataNode stops with
// err once every actor has, and is ready once the others are (a refused
// actor does not hold back WaitReady while another NameNode is served).
func (dn *DataNode) actorQuit(a *bpActor, err error) {
	if int(dn.nQuit.Add(1)) == len(dn.actors) {
		dn.fail(err)
		return
	}
	dn.actorReady(a)
}

// fail records a fatal error and stops the DataNode.
func (dn *DataNode) fail(err error) {
	dn.mu.Lock()
	if dn.mu.err == nil {
		dn.mu.err = err
	}
	dn.mu.Unlock()
	dn.log.Error("datanode stopping", "err", err)
	dn.cancel()
}

func (dn *DataNode) actorReady(a *bpActor) {
	if !a.readied.CompareAndSwap(false, true) {
		return
	}
	if int(dn.nReady.Add(1)) == len(dn.actors) {
		close(dn.ready)
	}
}

// XferAddr is the streaming server's address.
func (dn *DataNode) XferAddr() net.Addr { return dn.xferL.Addr() }

// IPCAddr is the IPC server's address.
func (dn *DataNode) IPCAddr() net.Addr { return dn.ipcL.Addr() }

// DatanodeUUID is the DataNode's id (the volumes' datanodeUuid).
func (dn *DataNode) DatanodeUUID() string { return dn.uuid }

// StorageIDs are the volumes' storage ids, in configuration order ("" for a
// volume not formatted yet).
func (dn *DataNode) StorageIDs() []string {
	ids := make([]string, len(dn.vols))
	for i, v := range dn.vols {
		ids[i] = v.StorageID()
	}
	return ids
}

// DomainSocketConnections is how many connections the DataNode accepted on
// its domain socket since it started.
func (dn *DataNode) DomainSocketConnections() int64 { return dn.xs.unixAccepted.Load() }

// DomainSocket is the path of the DataNode's UNIX domain socket, "" when
// dfs.domain.socket.path is not set.
func (dn *DataNode) DomainSocket() string {
	if dn.unixL == nil {
		return ""
	}
	return dn.unixL.Addr().String()
}

// BlockPool returns a joined block pool (tests, tools).
func (dn *DataNode) BlockPool(id string) (*storage.BlockPool, error) { return dn.pool(id) }

// pickUUID takes the datanodeUuid of the formatted volumes (they must agree)
// or makes a new one.
func (dn *DataNode) pickUUID() error {
	for _, v := range dn.vols {
		ver := v.Version()
		if ver == nil || ver.DatanodeUUID == "" {
			continue
		}
		if dn.uuid != "" && ver.DatanodeUUID != dn.uuid {
			return fmt.Errorf("datanode: volume %s has datanodeUuid %s, another volume %s: %w",
				v.Dir(), ver.DatanodeUUID, dn.uuid, storage.ErrBadVolume)
		}
		dn.uuid = ver.DatanodeUUID
	}
	if dn.uuid != "" {
		return nil
	}
	var err error
	dn.uuid, err = hstorage.NewDatanodeUUID(dn.rnd)
	return err
}

// joinPool prepares the volumes for the namespace the NameNode described
// (formatting empty ones, refusing those of another cluster), creates the
// dataset on first use and adds the block pool.
func (dn *DataNode) joinPool(ctx context.Context, ns *hdfs.NamespaceInfoProto) (*storage.BlockPool, error) {
	bp, created, err := dn.joinPoolLocked(ns)
	if err != nil {
		return nil, err
	}
	if created {
		dn.startBackground(ctx)
	}
	dn.blockScan.AddPool(bp)
	return bp, nil
}

// startBackground starts the work that runs over the dataset: the block
// scanner of every volume, the directory scanner and the disk checker.
func (dn *DataNode) startBackground(ctx context.Context) {
	dn.mu.Lock()
	ds := dn.mu.ds
	dn.mu.Unlock()
	dc := dn.cfg.DirScan
	dc.FirstDelay = dn.firstDirScanDelay(dc.Interval)
	dirScan := scanner.NewDirectoryScanner(dc, dn.scanClock, dn.log, ds, dn.deletingReplica, scanReporter{dn})
	checker := newDiskChecker(dn)
	dn.dirScan.Store(dirScan)
	dn.checker.Store(checker)
	for _, v := range ds.Volumes() {
		dn.blockScan.AddVolume(v)
	}
	dirScan.Start()
	dn.wg.Add(1)
	go func() { defer dn.wg.Done(); checker.run(ctx.Done()) }()
}

// joinPoolLocked does joinPool's work under dn.mu; created says the
// dataset was created by this call.
func (dn *DataNode) joinPoolLocked(ns *hdfs.NamespaceInfoProto) (_ *storage.BlockPool, created bool, _ error) {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	bpid := ns.GetBlockPoolID()
	if bp := dn.mu.pools[bpid]; bp != nil {
		return bp, false, nil
	}
	si := ns.GetStorageInfo()
	cid := si.GetClusterID()
	if dn.mu.ds == nil {
		for _, v := range dn.vols {
			ver := v.Version()
			if ver == nil {
				if err := dn.formatVolume(v, cid); err != nil {
					return nil, false, err
				}
				continue
			}
			if ver.ClusterID != cid {
				return nil, false, fmt.Errorf("%w: %s has clusterID %s, the NameNode's is %s",
					ErrClusterMismatch, v.Dir(), ver.ClusterID, cid)
			}
		}
		policy, err := policyFor(&dn.cfg, rand.New(rand.NewSource(dn.clk.Now().UnixNano())))
		if err != nil {
			return nil, false, err
		}
		ds, err := storage.NewDataset(storage.Config{OnDeleted: dn.onDeleted, NewPolicy: policy,
			Rollback: dn.cfg.Rollback, Failpoint: dn.failpoint}, dn.vols)
		if err != nil {
			return nil, false, err
		}
		dn.mu.ds = ds
		created = true
	} else if vols := dn.mu.ds.Volumes(); len(vols) > 0 && vols[0].Version() != nil && vols[0].Version().ClusterID != cid {
		return nil, false, fmt.Errorf("%w: block pool %s has clusterID %s, the volumes' is %s",
			ErrClusterMismatch, bpid, cid, vols[0].Version().ClusterID)
	}
	bpv := &hstorage.Version{LayoutVersion: hstorage.DataNodeLayoutVersion, NamespaceID: int32(si.GetNamespceID()),
		CTime: int64(si.GetCTime()), BlockPoolID: bpid, StorageType: hstorage.StorageTypeBlockPool}
	bp, res, err := dn.mu.ds.AddBlockPool(bpv, dn.clk.Now())
	if err != nil {
		return nil, created, fmt.Errorf("datanode: adding block pool %s: %w", bpid, err)
	}
	for _, t := range res.Transitions {
		dn.log.Info("block pool storage", "pool", bpid, "dir", t.Dir, "done", t.What)
	}
	for _, p := range res.Problems {
		dn.log.Warn("block pool scan", "pool", bpid, "problem", p)
	}
	dn.log.Info("joined block pool", "pool", bpid, "replicas", res.Replicas)
	dn.mu.pools[bpid] = bp
	return bp, created, nil
}

// pool returns a joined block pool.
func (dn *DataNode) pool(id string) (*storage.BlockPool, error) {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	if bp := dn.mu.pools[id]; bp != nil {
		return bp, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrPoolNotReady, id)
}

// actorsOf returns the actors serving block pool id.
func (dn *DataNode) actorsOf(id string) []*bpActor {
	var out []*bpActor
	for _, a := range dn.actors {
		if a.poolID() == id {
			out = append(out, a)
		}
	}
	return out
}

// invalidate carries out a DNA_INVALIDATE; the DELETED reports follow from
// the volumes' deleters (onDeleted).
func (dn *DataNode) invalidate(poolID string, blocks []storage.Block) error {
	bp, err := dn.pool(poolID)
	if err != nil {
		return err
	}
	dn.mu.Lock()
	for _, b := range blocks {
		if r, ok := bp.Get(b.ID); ok && r.GenStamp == b.GenStamp {
			dn.mu.deletes[deleteKey{poolID, b.ID}] = r.StorageID
		}
	}
	dn.mu.Unlock()
	return bp.Invalidate(blocks)
}

// onDeleted is the volumes' callback once an invalidated replica is gone.
func (dn *DataNode) onDeleted(poolID string, b storage.Block) {
	dn.mu.Lock()
	k := deleteKey{poolID, b.ID}
	sid := dn.mu.deletes[k]
	delete(dn.mu.deletes, k)
	dn.mu.Unlock()
	dn.act.blocksRemoved.Add(1)
	for _, a := range dn.actorsOf(poolID) {
		a.queueIBR(ibrEntry{storageID: sid, block: b, status: ibrDeleted})
	}
}

// notifyReceiving queues RECEIVING_BLOCK for a replica a pipeline started.
func (dn *DataNode) notifyReceiving(poolID string, r storage.Replica) {
	for _, a := range dn.actorsOf(poolID) {
		a.queueIBR(ibrEntry{storageID: r.StorageID, block: r.Block, status: ibrReceiving})
	}
}

// notifyReceived reports a finalized replica to every NameNode of its pool.
// It waits for the active NameNode's answer, so that the active knows the
// replica before the writer's last ack goes out; the other NameNodes (HA
// standbys) get it queued, so that a slow or dead standby never delays a
// write. A DataNode that knows no active NameNode yet waits for them all.
// A failed call leaves the report queued for the actor to retry.
func (dn *DataNode) notifyReceived(ctx context.Context, poolID string, r storage.Replica, delHint string) {
	e := ibrEntry{storageID: r.StorageID, block: r.Block, status: ibrReceived, delHint: delHint}
	active := dn.activeActor(poolID)
	for _, a := range dn.actorsOf(poolID) {
		if active != nil && a != active {
			a.queueIBR(e)
			continue
		}
		a.sendIBRNow(ctx, e)
	}
}

// activeActor is the actor of the pool whose NameNode last said it is
// active, with the newest txid of those that did; nil when none did.
func (dn *DataNode) activeActor(poolID string) *bpActor {
	var best *bpActor
	var bestTx uint64
	for _, a := range dn.actorsOf(poolID) {
		if active, txid := a.haState(); active && (best == nil || txid > bestTx) {
			best, bestTx = a, txid
		}
	}
	return best
}

// hostName is dfs.datanode.hostname or the host's name.
func (dn *DataNode) hostName() string {
	if dn.cfg.Hostname != "" {
		return dn.cfg.Hostname
	}
	if h, err := os.Hostname(); err == nil {
		return h
	}
	return "localhost"
}

// portOf returns the port of a host:port address (0 if none).
func portOf(addr string) uint32 {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(p, 10, 16)
	return uint32(n)
}

func tcpPort(a net.Addr) uint32 {
	if t, ok := a.(*net.TCPAddr); ok {
		return uint32(t.Port)
	}
	return portOf(a.String())
}
