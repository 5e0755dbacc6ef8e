package namenode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/imagetransfer"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/audit"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// NameNode is a running NameNode.
type NameNode struct {
	cfg     Config
	deps    Deps
	version *storage.Version
	locks   []io.Closer
	ns      *namesystem
	rpc     *ipc.Server
	addr    net.Addr
	web     *web.Server // dfs.namenode.http-address
	started time.Time
	groups  *groupCache
	tokens  *blockTokens  // nil: dfs.block.access.token.enable is false
	audit   *audit.Logger // nil: no audit log
	access  *connAccess   // proxy users and service ACLs (secauth.go)
	// activity counts client calls for the NameNodeActivity bean.
	activity activity
	// loadedFrom is what the start loaded: the image and the edits after it.
	loadedFrom LoadStats
	// progress is the start-up's phases (the Startup Progress page).
	progress startupProgress
	// volFailures is what each DataNode's last heartbeat said of its
	// failed volumes (the Datanode Volume Failures page), by uuid.
	volFailures volumeFailures

	// ckptMu serializes saveNamespace, rollEdits and checkpoints.
	ckptMu sync.Mutex

	// ha is the HA state and the services of each state.
	ha *haContext
	// common are the services of every state (the liveness monitor).
	common []*service
	// images is the image servlet (imagetransfer).
	images *imagetransfer.Server
	// upgrade is whether the last upgrade is finalized and which
	// DataNodes were told (upgrade.go).
	upgrade upgradeState

	// role is what this process is: a NameNode, or a helper (role.go).
	role Role
	// helper takes a helper's checkpoints (helper.go; nil on a NameNode).
	helper *checkpointer
	// backups is the active's Backup Node and its stream (checkpointrpc.go).
	backups backupRegistry

	serveErr  chan error
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// LoadStats says how a NameNode's start built its namespace.
type LoadStats struct {
	ImageTxID int64 // the image loaded (0: the empty namespace of a format)
	Replayed  int64 // edits replayed on top of it
	LastTxID  int64 // the last one
}

// Loaded is how this NameNode's start built its namespace.
func (nn *NameNode) Loaded() LoadStats { return nn.loadedFrom }

// Start loads the namespace from the configured directories and serves RPC.
// Without HA it is active at once; an HA NameNode starts as a standby.
func Start(ctx context.Context, cfg Config, deps Deps) (*NameNode, error) {
	deps.fill(&cfg)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	racks, err := newRackResolver(&cfg)
	if err != nil {
		return nil, err
	}
	cfg.Blocks.Topology = racks.rack
	ld, err := load(ctx, &cfg, &deps, loadOptions{})
	if err != nil {
		return nil, err
	}
	nn := &NameNode{
		cfg: cfg, deps: deps, version: ld.version, locks: ld.locks, started: time.Now(),
		loadedFrom: LoadStats{ImageTxID: ld.imageTxID, Replayed: ld.replayed, LastTxID: ld.lastTxID},
		progress:   ld.progress,
		serveErr:   make(chan error, 1), done: make(chan struct{}),
		groups: newGroupCache(deps.Clock, 5*time.Minute),
		tokens: newBlockTokens(cfg, deps.Clock),
		ns:     ld.ns,
	}
	if err := nn.refreshUpgradeState(); err != nil {
		ld.elog.Close()
		closeAll(ld.locks)
		return nil, err
	}
	if !nn.UpgradeFinalized() {
		deps.Logger.Warn("the upgrade is not finalized: the state before it is kept for a rollback until `hdfs dfsadmin -finalizeUpgrade`",
			"cTime", ld.version.CTime)
	}
	nn.groups.static = cfg.Access.StaticGroups
	if nn.audit, err = openAudit(cfg.Audit); err != nil {
		ld.elog.Close()
		closeAll(ld.locks)
		return nil, err
	}
	nn.ha = newHAContext(nn)
	nn.ns.writable = func() error { return nn.ha.check(ha.Write) }
	nn.ns.activate()
	fail := func(err error) (*NameNode, error) {
		ld.elog.Close()
		closeAll(ld.locks)
		return nil, err
	}
	// The host files decide which DataNodes may register: read them before
	// any can.
	policy, err := nn.readHostFiles()
	if err != nil {
		return fail(err)
	}
	nn.applyHostPolicy(policy)

	l := deps.Listener
	if l == nil {
		if l, err = net.Listen("tcp", cfg.RPCAddress); err != nil {
			return fail(fmt.Errorf("namenode: listen on %s (dfs.namenode.rpc-address): %w", cfg.RPCAddress, err))
		}
	}
	nn.web, err = web.New(web.Config{Addr: cfg.HTTPAddress, Listener: deps.HTTPListener, Role: "NameNode",
		KeyName: conf.DFSNameNodeHTTPAddress, Conf: deps.Conf, Logger: deps.Logger, Limits: cfg.HTTPLimits,
		LogLevel: deps.LogLevel, LogDir: os.Getenv("HADOOP_LOG_DIR"), Admins: nn.webAdmins(), Auth: httpAuth(cfg.HTTPAuth)})
	if err != nil {
		_ = l.Close()
		return fail(fmt.Errorf("namenode: %w", err))
	}
	if cfg.Kerberos != nil {
		cfg.Kerberos.Acceptor.TokenPassword = nn.tokenPassword
	}
	nn.access = newConnAccess(nn)
	nn.rpc = ipc.NewServer(ipc.ServerConfig{
		Handlers:            cfg.Handlers,
		QueueSizePerHandler: cfg.QueueSizePerHandler,
		MaxDataLength:       cfg.MaxDataLength,
		Limits:              cfg.RPCLimits,
		Logger:              deps.Logger,
		Kerberos:            cfg.Kerberos.ServerAcceptor(),
		Authorize:           nn.access.authorize,
	})
	nn.ns.rpc.Store(nn.rpc)
	nn.addr = l.Addr()
	registerClientProtocol(nn)
	registerDatanodeProtocol(nn)
	registerNamenodeProtocol(nn)
	registerHAServiceProtocol(nn)
	if err := nn.startImageServer(); err != nil {
		nn.rpc.Close()
		nn.web.Close(ctx)
		_ = l.Close()
		return fail(err)
	}
	if err := nn.ha.start(ctx); err != nil {
		nn.rpc.Close()
		nn.web.Close(ctx)
		_ = l.Close()
		return fail(err)
	}
	nn.common = []*service{startService("liveness monitor", nn.livenessMonitor)}
	go func() { nn.serveErr <- nn.rpc.Serve(l) }()
	go nn.watch()
	nn.startWeb()
	attrs := []any{"rpc", l.Addr().String(), "http", nn.web.Addr().String(), "namespaceID", ld.version.NamespaceID,
		"clusterID", ld.version.ClusterID, "blockPoolID", ld.version.BlockPoolID, "state", nn.ha.State().String()}
	if cfg.HA.Enabled {
		attrs = append(attrs, "nameservice", cfg.HA.Nameservice, "namenode", cfg.HA.NameNodeID)
	}
	deps.Logger.Info("NameNode started", attrs...)
	return nn, nil
}

// watch ends the NameNode's life when the log fails or the server stops.
func (nn *NameNode) watch() {
	select {
	case <-nn.ns.failedCh:
	case err := <-nn.serveErr:
		if err != nil && !errors.Is(err, ipc.ErrServerClosed) {
			nn.ns.fail(fmt.Errorf("namenode: RPC server stopped: %w", err))
		}
	case <-nn.done:
		return
	}
	nn.Close()
}

// RPCAddr is the address RPC is served on.
func (nn *NameNode) RPCAddr() net.Addr { return nn.addr }

// Done is closed when the NameNode has stopped (Close, or a fatal error).
func (nn *NameNode) Done() <-chan struct{} { return nn.done }

// Err is the fatal error that stopped the NameNode, if any.
func (nn *NameNode) Err() error { return nn.ns.Err() }

// EditLogStats is a snapshot of the edit log's counters (txids handed out
// and synced, flushes: one fsync per journal each); zero before the log is
// open.
func (nn *NameNode) EditLogStats() editlog.Stats {
	if nn.ns.elog == nil {
		return editlog.Stats{}
	}
	return nn.ns.elog.Stats()
}

// SuperUser is the user the NameNode runs as: the namespace's superuser.
func (nn *NameNode) SuperUser() string { return nn.cfg.SuperUser }

// ClusterID, NamespaceID and BlockPoolID identify the namespace.
func (nn *NameNode) ClusterID() string   { return nn.version.ClusterID }
func (nn *NameNode) NamespaceID() int32  { return nn.version.NamespaceID }
func (nn *NameNode) BlockPoolID() string { return nn.version.BlockPoolID }

// Close stops serving (finishing calls in flight), closes the edit log
// (finalizing its segment) and unlocks the directories.
func (nn *NameNode) Close() error {
	nn.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var errs []error
		nn.ha.stop()
		stopAll(nn.common)
		if nn.helper != nil {
			nn.helper.close(ctx)
		}
		if nn.web != nil {
			if err := nn.web.Close(ctx); err != nil {
				errs = append(errs, err)
			}
		}
		if nn.rpc != nil {
			if err := nn.rpc.Shutdown(ctx); err != nil && !errors.Is(err, ipc.ErrServerClosed) {
				errs = append(errs, err)
			}
		}
		if err := nn.ns.elog.Close(); err != nil && nn.ns.Err() == nil {
			errs = append(errs, err)
		}
		nn.backups.stop()
		if err := nn.closeAudit(); err != nil {
			errs = append(errs, err)
		}
		closeAll(nn.locks)
		nn.closeErr = errors.Join(errs...)
		close(nn.done)
		nn.deps.Logger.Info(nn.role.String() + " stopped")
	})
	return nn.closeErr
}

// saveNamespace writes a new image of the current state in every name dir: it
// rolls the edit log so the image ends exactly at a segment boundary, saves,
// then purges old images and edits. The roll and the image happen under one
// hold of the read lock: writers append only with the write lock, so no op
// can land between the end of the rolled segment and the image of it.
func (nn *NameNode) saveNamespace(ctx context.Context) error {
	nn.ckptMu.Lock()
	defer nn.ckptMu.Unlock()
	ns := nn.ns
	var txid, first int64
	var err error
	// Like sync: once the roll begins it must end in the journals or fail
	// the log, whatever becomes of the caller.
	ctx = context.WithoutCancel(ctx)
	ns.readLocked(func() {
		if first, err = ns.elog.RollSegment(ctx); err != nil {
			ns.fail(err)
			return
		}
		// The image covers everything before the new segment's first
		// txid; the StartLogSegment record at first changes nothing.
		txid = first - 1
		writeSeenTxID(&nn.cfg, &nn.deps, first)
		h := ns.mu.tree.ImageHeader(txid)
		h.LayoutVersion = storage.NameNodeLayoutVersion
		h.NamespaceID = nn.version.NamespaceID
		err = fsimage.Save(nn.deps.FS, nn.cfg.NameDirs, h, ns.mu.tree.Export)
	})
	if first == 0 {
		return err
	}
	if err != nil {
		var se *fsimage.SaveError
		if !errors.As(err, &se) || len(se.Succeeded) == 0 {
			return fmt.Errorf("namenode: saveNamespace: %w", err)
		}
		nn.deps.Logger.Error("saveNamespace failed in some name dirs", "err", err)
	}
	nn.deps.Logger.Info("saved the namespace", "txid", txid)
	nn.purge(txid)
	return nil
}

// rollEdits finalizes the open segment and starts a new one; it returns the new
// segment's first txid.
func (nn *NameNode) rollEdits(ctx context.Context) (int64, error) {
	nn.ckptMu.Lock()
	defer nn.ckptMu.Unlock()
	ns := nn.ns
	var first int64
	var err error
	// The read lock keeps writers, who append under the write lock, out
	// while the segment rolls. A caller that goes away (a standby or a
	// Checkpoint Node whose call times out) must not cut the roll short:
	// a roll that fails fails the log, and the NameNode stops.
	ctx = context.WithoutCancel(ctx)
	ns.readLocked(func() { first, err = ns.elog.RollSegment(ctx) })
	if err != nil {
		ns.fail(err)
		return 0, err
	}
	writeSeenTxID(&nn.cfg, &nn.deps, first)
	return first, nil
}

// DumpNamespace writes the whole namespace deterministically (every inode with
// its attributes, blocks and lease holder, and the id counters). Tests compare
// dumps across restarts; operators may use it for debugging.
func (nn *NameNode) DumpNamespace(w io.Writer) error { return nn.ns.dump(w) }

// DumpBlockLocations writes every block with the DataNodes holding a good
// replica of it, deterministically (for tests comparing an active and its
// standby).
func (nn *NameNode) DumpBlockLocations(w io.Writer) error { return nn.ns.dumpLocations(w) }
