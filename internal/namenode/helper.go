package namenode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/imagetransfer"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// The helpers: Checkpoint Node, Backup Node and Secondary NameNode (seed 000
// §2, seed 003, hdfs-reference §1.5).
//
// A helper is a NameNode in another role: it has the NameNode's namesystem
// (tree, block map, leases), changed only through the one apply path, and
// saves images with the NameNode's code (saveApplied), into its checkpoint
// dirs (dfs.namenode.checkpoint.dir; edits in .edits.dir), which play the
// part of a NameNode's name dirs: VERSION, fsimage_<txid> with .md5, edit
// segments. It starts by asking the active for the namespace's identity
// (versionRequest): storage that is not formatted adopts it, formatted
// storage of another namespace makes the helper refuse to start
// ("Inconsistent namespace information"). It loads its newest image and the
// edits after it, then:
//
//   - a Checkpoint Node serves RPC on dfs.namenode.backup.address (every
//     namespace call refused: "Operation category READ is not supported at
//     Checkpoint Node"), registers with the active, and checkpoints;
//   - a Backup Node also serves JournalProtocol (backupnode.go) and namespace
//     reads, and registers, which makes the active stream every edit to it;
//   - a Secondary NameNode serves no RPC, never registers, and checkpoints
//     with rollEditLog (secondary.go).
//
// The checkpoint itself is checkpointer.go. A helper never writes to the
// active's namespace, never recovers leases and never schedules replication:
// it stays in safe mode, its block map in standby mode, with no DataNode
// reporting to it.

// HelperOptions are a helper's start-up choices.
type HelperOptions struct {
	// Format wipes the checkpoint dirs first (hdfs secondarynamenode
	// -format).
	Format bool
	// Once is for a one-shot command (secondarynamenode -checkpoint,
	// -geteditsize): no web or RPC server, no checkpoint loop.
	Once bool
}

// StartHelper starts a helper (role RoleBackup, RoleCheckpoint or
// RoleSecondary) on cfg from HelperConfigFrom. It returns once the helper
// serves and, for a Backup or Checkpoint Node, is registered with the
// active; its checkpointer then runs until Close.
func StartHelper(ctx context.Context, role Role, cfg Config, deps Deps, opts HelperOptions) (*NameNode, error) {
	deps.fill(&cfg)
	if role == RoleNameNode {
		return nil, errors.New("namenode: StartHelper starts a Backup Node, a Checkpoint Node or a Secondary NameNode")
	}
	if cfg.HA.Enabled {
		return nil, haRefusal(role)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c, err := newCheckpointer(role, &cfg, &deps)
	if err != nil {
		return nil, err
	}
	nn, err := startHelper(ctx, role, cfg, deps, opts, c)
	if err != nil {
		c.closeClients()
		return nil, err
	}
	return nn, nil
}

func startHelper(ctx context.Context, role Role, cfg Config, deps Deps, opts HelperOptions, c *checkpointer) (*NameNode, error) {
	info, err := c.handshake(ctx)
	if err != nil {
		return nil, err
	}
	want := versionOf(info)
	locks, err := openHelperStorage(&cfg, &deps, want, opts.Format)
	if err != nil {
		return nil, err
	}
	ld, fresh, err := loadHelper(ctx, &cfg, &deps)
	if err != nil {
		closeAll(locks)
		return nil, err
	}
	nn := &NameNode{
		cfg: cfg, deps: deps, version: want, locks: locks, started: time.Now(), role: role,
		loadedFrom: LoadStats{ImageTxID: ld.imageTxID, Replayed: ld.replayed, LastTxID: ld.lastTxID},
		serveErr:   make(chan error, 1), done: make(chan struct{}),
		groups: newGroupCache(deps.Clock, 5*time.Minute),
		ns:     ld.ns,
		helper: c,
	}
	c.nn, c.fresh = nn, fresh
	nn.ha = newHAContext(nn)
	nn.ha.state.Store(int32(ha.Standby))
	nn.ns.writable = func() error { return nn.ha.check(ha.Write) }
	nn.ns.activate()
	nn.ns.writeLocked(func() { nn.ns.mu.bm.SetStandby(true, nn.deps.Clock.Now()) })
	fail := func(err error) (*NameNode, error) {
		if nn.rpc != nil {
			nn.rpc.Close()
		}
		if nn.web != nil {
			nn.web.Close(ctx)
		}
		ld.elog.Close()
		closeAll(locks)
		return nil, err
	}
	if opts.Once {
		return nn, nil
	}

	key := conf.DFSNameNodeBackupHTTPAddress
	if role == RoleSecondary {
		key = conf.DFSNameNodeSecondaryHTTPAddress
	}
	nn.web, err = web.New(web.Config{Addr: cfg.HTTPAddress, Listener: deps.HTTPListener, Role: strings.ReplaceAll(role.String(), " ", ""),
		KeyName: key, Conf: deps.Conf, Logger: deps.Logger, Limits: cfg.HTTPLimits,
		LogLevel: deps.LogLevel, LogDir: os.Getenv("HADOOP_LOG_DIR")})
	if err != nil {
		return fail(fmt.Errorf("namenode: %w", err))
	}
	if err := nn.startImageServer(); err != nil {
		return fail(err)
	}
	if role != RoleSecondary {
		l := deps.Listener
		if l == nil {
			if l, err = net.Listen("tcp", cfg.RPCAddress); err != nil {
				return fail(fmt.Errorf("namenode: listen on %s (%s): %w", cfg.RPCAddress, conf.DFSNameNodeBackupAddress, err))
			}
		}
		nn.addr = advertised(l.Addr())
		nn.rpc = ipc.NewServer(ipc.ServerConfig{Handlers: cfg.Handlers, QueueSizePerHandler: cfg.QueueSizePerHandler,
			MaxDataLength: cfg.MaxDataLength, Limits: cfg.RPCLimits, Logger: deps.Logger})
		registerClientProtocol(nn)
		registerNamenodeProtocol(nn)
		if role == RoleBackup {
			c.bn = newBackupNode(nn, ld.journals, ld.lastTxID)
			c.bn.register()
		}
		go func() { nn.serveErr <- nn.rpc.Serve(l) }()
	}
	go nn.watch()
	nn.startHelperWeb()
	if role != RoleSecondary {
		if err := c.register(ctx); err != nil {
			nn.helper = nil // nothing to report: it never registered
			nn.Close()
			return nil, err
		}
	}
	nn.common = []*service{startService("checkpointer", c.run)}
	attrs := []any{"http", nn.web.Addr().String(), "namenode", cfg.Checkpoint.ActiveRPCAddress,
		"namespaceID", want.NamespaceID, "clusterID", want.ClusterID, "lastTxID", ld.lastTxID}
	if nn.addr != nil {
		attrs = append(attrs, "rpc", nn.addr.String())
	}
	deps.Logger.Info(role.String()+" started", attrs...)
	return nn, nil
}

// advertised is the address a helper gives the active to reach it at: the
// listener's, with a wildcard host replaced by this host's name.
func advertised(a net.Addr) net.Addr {
	t, ok := a.(*net.TCPAddr)
	if !ok || !t.IP.IsUnspecified() {
		return a
	}
	if ips, err := net.LookupIP(hostname()); err == nil && len(ips) > 0 {
		return &net.TCPAddr{IP: ips[0], Port: t.Port}
	}
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: t.Port}
}

// versionOf is the VERSION of a helper's storage for the namespace the
// active described.
func versionOf(info *hdfs.NamespaceInfoProto) *storage.Version {
	si := info.GetStorageInfo()
	return &storage.Version{
		LayoutVersion: int32(si.GetLayoutVersion()),
		NamespaceID:   int32(si.GetNamespceID()),
		ClusterID:     si.GetClusterID(),
		CTime:         int64(si.GetCTime()),
		StorageType:   storage.StorageTypeNameNode,
		BlockPoolID:   info.GetBlockPoolID(),
	}
}

// openHelperStorage locks the checkpoint dirs and checks each one's VERSION
// against the namespace want: a dir that is not formatted adopts it (as
// does every dir with format), one of another namespace refuses the start.
// It cleans what an interrupted checkpoint left.
func openHelperStorage(cfg *Config, deps *Deps, want *storage.Version, format bool) ([]io.Closer, error) {
	fsys := deps.FS
	if want.LayoutVersion != storage.NameNodeLayoutVersion {
		return nil, fmt.Errorf("namenode: the NameNode has layout version %d; this %s writes %d", want.LayoutVersion, "node", storage.NameNodeLayoutVersion)
	}
	dirs := cfg.allDirs()
	locks, err := lockDirs(fsys, dirs)
	if err != nil {
		return nil, err
	}
	now := deps.Clock.Now()
	for _, d := range dirs {
		sd := storage.Dir{Root: d}
		if !format {
			a, err := sd.Analyze(fsys)
			if err != nil {
				closeAll(locks)
				return nil, err
			}
			if a.State == storage.StateFormatted {
				have, err := sd.ReadVersion(fsys)
				if err != nil {
					closeAll(locks)
					return nil, err
				}
				if err := sameNamespace(want, have); err != nil {
					closeAll(locks)
					return nil, fmt.Errorf("namenode: %s: %w", sd.VersionPath(), err)
				}
				continue
			}
		}
		deps.Logger.Info("formatting checkpoint storage for the NameNode's namespace", "dir", d,
			"namespaceID", want.NamespaceID, "clusterID", want.ClusterID)
		if err := sd.Format(fsys, want, now, true); err != nil {
			closeAll(locks)
			return nil, err
		}
	}
	for _, d := range dirs {
		err := storage.Dir{Root: d}.RemoveTmpFiles(fsys)
		if err == nil && isNameDir(cfg, d) {
			err = fsimage.CleanCheckpoints(fsys, d)
		}
		if err == nil {
			err = imagetransfer.CleanTmpEdits(fsys, storage.Dir{Root: d}.Current())
		}
		if err != nil {
			closeAll(locks)
			return nil, err
		}
	}
	return locks, nil
}

// sameNamespace compares the namespace the active described with a
// storage dir's (NamespaceInfo.validateStorage).
func sameNamespace(want, have *storage.Version) error {
	if want.LayoutVersion == have.LayoutVersion && want.NamespaceID == have.NamespaceID && want.CTime == have.CTime &&
		want.ClusterID == have.ClusterID && want.BlockPoolID == have.BlockPoolID {
		return nil
	}
	return fmt.Errorf("Inconsistent namespace information:\nNamespaceInfo has:\nLV=%d;NS=%d;cTime=%d;CID=%s;BPID=%s.\nStorage has:\nLV=%d;NS=%d;cTime=%d;CID=%s;BPID=%s.",
		want.LayoutVersion, want.NamespaceID, want.CTime, want.ClusterID, want.BlockPoolID,
		have.LayoutVersion, have.NamespaceID, have.CTime, have.ClusterID, have.BlockPoolID)
}

// helperLoad is what a helper's start loaded.
type helperLoad struct {
	ns        *namesystem
	elog      *editlog.Log
	journals  []*editlog.FileJournal
	imageTxID int64
	replayed  int64
	lastTxID  int64
}

// loadHelper builds a helper's namesystem from its newest image and the
// edits after it in its edits dirs (the segments it downloaded, or a Backup
// Node's own journal, whose in-progress segments are recovered first). The
// edit log is opened for reading only: a helper never writes it. fresh is
// true when there is no image yet: the first checkpoint then downloads the
// active's.
func loadHelper(ctx context.Context, cfg *Config, deps *Deps) (ld *helperLoad, fresh bool, err error) {
	fsys, logger := deps.FS, deps.Logger
	v, err := storage.Dir{Root: cfg.NameDirs[0]}.ReadVersion(fsys)
	if err != nil {
		return nil, false, err
	}
	tree, imageTxID, err := loadTree(fsys, cfg, v.NamespaceID)
	switch {
	case errors.Is(err, fsimage.ErrNoImage):
		tree, imageTxID, fresh = namespace.New(treeConfig(cfg)), 0, true
	case err != nil:
		return nil, false, err
	}
	ld = &helperLoad{imageTxID: imageTxID}
	var js []editlog.Journal
	for _, d := range cfg.EditsDirs {
		j := editlog.NewFileJournal(fsys, storage.Dir{Root: d}.Current())
		segs, err := j.RecoverInProgress(ctx)
		if err != nil {
			return nil, false, err
		}
		for _, s := range segs {
			logger.Info("recovered an in-progress segment", "dir", d, "first", s.First, "last", s.Last)
		}
		ld.journals = append(ld.journals, j)
		js = append(js, j)
	}
	elog, err := editlog.New(editlog.Config{MinJournals: 1, Logger: logger}, nil, js)
	if err != nil {
		return nil, false, err
	}
	if err := elog.InitForRead(); err != nil {
		elog.Close()
		return nil, false, err
	}
	ld.elog = elog
	ld.ns = newNamesystem(*cfg, deps.Clock, logger, tree, nil)
	ld.ns.elog = elog
	ld.ns.setApplied(imageTxID)
	ld.lastTxID = imageTxID
	if !fresh {
		last, n, err := ld.ns.catchUp(ctx, editlog.ReadOptions{}, elog.ReadOps)
		var gap *editlog.GapError
		if errors.As(err, &gap) {
			logger.Warn("the local edits stop at a gap; the next checkpoint fetches the rest", "err", err)
			err = nil
		}
		if err != nil {
			elog.Close()
			return nil, false, err
		}
		ld.replayed, ld.lastTxID = n, last
	}
	logger.Info("loaded the checkpoint storage", "image", imageTxID, "edits", ld.replayed, "lastTxID", ld.lastTxID, "fresh", fresh)
	return ld, fresh, nil
}
