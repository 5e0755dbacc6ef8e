package namenode

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/failpoint"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/namenode/retrycache"
	qjclient "github.com/hdfsgo/hdfsgo/internal/qjournal/client"
	qjprotocol "github.com/hdfsgo/hdfsgo/internal/qjournal/protocol"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// Deps are the NameNode's connections to the outside world.
type Deps struct {
	FS     vfs.FS
	Clock  clock.Clock
	Logger *slog.Logger
	// Listener, when set, is used for RPC instead of listening on
	// Config.RPCAddress (tests pass one bound to port 0).
	Listener net.Listener
	// HTTPListener likewise replaces Config.HTTPAddress for the web server.
	HTTPListener net.Listener
	// LogLevel, if set, is the level of Logger's handler, which /logLevel
	// (`hdfs daemonlog`) reads and sets.
	LogLevel *slog.LevelVar
	// Conf is the configuration the web server shows at /conf (nil: /conf
	// answers that none is available).
	Conf *conf.Conf
	// Journals builds the journal of a shared edits URI
	// (dfs.namenode.shared.edits.dir) for the namespace v; nil means the
	// default: a directory for file://, the quorum journal for qjournal://.
	Journals JournalFactory
	// Failpoint is called after each step of an upgrade, rollback or
	// finalize of the storage dirs (package failpoint: crash tests); nil
	// in production.
	Failpoint failpoint.Func
	// LookupHost resolves the host names of the host files (dfs.hosts,
	// dfs.hosts.exclude); nil means the system resolver.
	LookupHost func(host string) ([]string, error)
	// ReloadConf reads the configuration files again for the refresh
	// calls (-refreshSuperUserGroupsConfiguration, -refreshServiceAcl);
	// nil reads Config.Access.ConfDir.
	ReloadConf func() (*conf.Conf, error)
}

// JournalFactory builds the edit-log journal a URI names, for the
// namespace v.
type JournalFactory func(uri string, v *storage.Version) (editlog.Journal, error)

// isQuorumURI reports whether a shared edits URI names JournalNodes.
func isQuorumURI(uri string) bool {
	return strings.HasPrefix(strings.TrimSpace(uri), qjprotocol.URIScheme+"://")
}

// defaultJournals is the default JournalFactory: file:// URIs (and plain
// paths) name a storage directory whose current/ holds the segments;
// qjournal:// URIs name a quorum of JournalNodes.
func defaultJournals(cfg *Config, d *Deps) JournalFactory {
	return func(uri string, v *storage.Version) (editlog.Journal, error) {
		if isQuorumURI(uri) {
			m, err := qjclient.New(strings.TrimSpace(uri), cfg.QJournal, v, qjclient.Deps{Clock: d.Clock, Logger: d.Logger})
			if err != nil {
				return nil, fmt.Errorf("namenode: %s=%s: %w", conf.DFSNameNodeSharedEditsDir, uri, err)
			}
			return m, nil
		}
		dir, err := sharedDir(uri)
		if err != nil {
			return nil, err
		}
		return editlog.NewFileJournal(d.FS, storage.Dir{Root: dir}.Current()), nil
	}
}

// sharedDir is the directory of a file:// shared edits URI.
func sharedDir(uri string) (string, error) {
	if isQuorumURI(uri) {
		return "", fmt.Errorf("namenode: %s=%s names JournalNodes, not a directory", conf.DFSNameNodeSharedEditsDir, uri)
	}
	dir, err := conf.LocalDir(uri)
	if err != nil {
		return "", fmt.Errorf("namenode: %s: %w", conf.DFSNameNodeSharedEditsDir, err)
	}
	return dir, nil
}

// fill sets the defaults of unset deps; cfg configures the default
// journal factory.
func (d *Deps) fill(cfg *Config) {
	if d.FS == nil {
		d.FS = vfs.Default
	}
	if d.Clock == nil {
		d.Clock = clock.Real{}
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Journals == nil {
		d.Journals = defaultJournals(cfg, d)
	}
}

// Errors of start-up and format.
var (
	// ErrNotFormatted: a name or edits directory holds no VERSION file.
	ErrNotFormatted = errors.New("namenode: NameNode is not formatted")
	// ErrInconsistentDirs: the directories' VERSION files disagree.
	ErrInconsistentDirs = errors.New("namenode: storage directories disagree")
	// ErrFormatRefused: format would wipe a directory and was not allowed to.
	ErrFormatRefused = errors.New("namenode: format aborted")
	// ErrMissingEdits: seen_txid says edits exist that no edits dir holds.
	ErrMissingEdits = errors.New("namenode: edits are missing")
)

// FormatOptions are `hdfs namenode -format`'s choices.
type FormatOptions struct {
	// ClusterID to use; empty means a new one.
	ClusterID string
	// Force wipes existing directories without asking.
	Force bool
	// Confirm, when set, is asked before wiping each non-empty directory;
	// when nil and not Force, non-empty directories make Format fail.
	Confirm func(dir string) bool
}

// allDirs is every distinct name and edits directory, in configuration order.
func (cfg *Config) allDirs() []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range append(append([]string{}, cfg.NameDirs...), cfg.EditsDirs...) {
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

func isNameDir(cfg *Config, d string) bool {
	for _, n := range cfg.NameDirs {
		if filepath.Clean(n) == d {
			return true
		}
	}
	return false
}

// lockDirs locks every directory; on failure it releases what it took.
func lockDirs(fsys vfs.FS, dirs []string) ([]io.Closer, error) {
	var locks []io.Closer
	for _, d := range dirs {
		if err := storage.MkdirAllSync(fsys, d, 0o700); err != nil {
			closeAll(locks)
			return nil, err
		}
		l, err := storage.Lock(fsys, d)
		if err != nil {
			closeAll(locks)
			return nil, err
		}
		locks = append(locks, l)
	}
	return locks, nil
}

func closeAll(cs []io.Closer) {
	for _, c := range cs {
		c.Close()
	}
}

// Format makes every name and edits directory a fresh, empty namespace: VERSION,
// an empty image fsimage_0 in the name dirs, seen_txid 0.
func Format(ctx context.Context, cfg Config, deps Deps, opts FormatOptions) error {
	deps.fill(&cfg)
	fsys := deps.FS
	dirs := cfg.allDirs()
	locks, err := lockDirs(fsys, dirs)
	if err != nil {
		return err
	}
	defer closeAll(locks)

	for _, d := range dirs {
		a, err := storage.Dir{Root: d}.Analyze(fsys)
		if err != nil {
			return err
		}
		names, _ := fsys.List(d)
		empty := a.State != storage.StateFormatted
		for _, n := range names {
			if n != storage.LockFileName {
				empty = false
			}
		}
		if empty || opts.Force {
			continue
		}
		if opts.Confirm == nil || !opts.Confirm(d) {
			return fmt.Errorf("%w: %s is not empty (use -force to wipe it)", ErrFormatRefused, d)
		}
	}

	clusterID := opts.ClusterID
	if clusterID == "" {
		if clusterID, err = storage.NewClusterID(rand.Reader); err != nil {
			return err
		}
	}
	nsID, err := storage.NewNamespaceID(rand.Reader)
	if err != nil {
		return err
	}
	now := deps.Clock.Now()
	bpID, err := storage.NewBlockPoolID(rand.Reader, blockPoolIP(cfg.RPCAddress), now)
	if err != nil {
		return err
	}
	v := &storage.Version{
		LayoutVersion: storage.NameNodeLayoutVersion,
		NamespaceID:   nsID,
		ClusterID:     clusterID,
		CTime:         0,
		StorageType:   storage.StorageTypeNameNode,
		BlockPoolID:   bpID,
	}
	var nameDirs []string
	for _, d := range dirs {
		sd := storage.Dir{Root: d}
		if err := sd.Format(fsys, v, now, true); err != nil {
			return err
		}
		if err := storage.NewNameDir(d).WriteSeenTxID(fsys, 0); err != nil {
			return err
		}
		if isNameDir(&cfg, d) {
			nameDirs = append(nameDirs, d)
		}
	}
	// In HA, the shared edits are formatted with the same identity (the
	// other NameNode then joins with -bootstrapStandby).
	for _, u := range cfg.HA.SharedEditsDirs {
		if err := formatShared(ctx, &deps, u, v, now, opts); err != nil {
			return err
		}
	}
	tree := namespace.New(treeConfig(&cfg))
	h := tree.ImageHeader(0)
	h.LayoutVersion = storage.NameNodeLayoutVersion
	h.NamespaceID = nsID
	if err := fsimage.Save(fsys, nameDirs, h, tree.Export); err != nil {
		return err
	}
	deps.Logger.Info("formatted the namespace", "clusterID", clusterID, "namespaceID", nsID,
		"blockPoolID", bpID, "dirs", strings.Join(dirs, ","))
	return nil
}

// blockPoolIP is the address part of a block pool id: the RPC host if it is an
// IP other than the wildcard, else 127.0.0.1.
func blockPoolIP(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err == nil {
		if ip := net.ParseIP(h); ip != nil && !ip.IsUnspecified() {
			return ip.String()
		}
	}
	return "127.0.0.1"
}

func treeConfig(cfg *Config) namespace.Config {
	return namespace.Config{
		SuperUser:            cfg.SuperUser,
		SuperGroup:           cfg.SuperGroup,
		PermissionsEnabled:   cfg.PermissionsEnabled,
		MaxComponentLength:   cfg.MaxComponentLength,
		MaxDirItems:          cfg.MaxDirItems,
		MaxBlocksPerFile:     cfg.MaxBlocksPerFile,
		AccessTimePrecision:  cfg.AccessTimePrecision.Milliseconds(),
		XAttrsEnabled:        cfg.XAttrsEnabled,
		MaxXAttrsPerInode:    cfg.MaxXAttrsPerInode,
		MaxXAttrSize:         cfg.MaxXAttrSize,
		ACLsEnabled:          cfg.ACLsEnabled,
		StoragePolicyEnabled: cfg.StoragePolicyEnabled,

		QuotaByStorageTypeEnabled: cfg.QuotaByStorageTypeEnabled,
	}
}

// loaded is the state start-up hands to the running NameNode.
type loaded struct {
	version   *storage.Version
	ns        *namesystem
	elog      *editlog.Log
	locks     []io.Closer
	imageTxID int64
	lastTxID  int64 // last txid replayed (before the new segment)
	replayed  int64 // edits replayed on top of the image
	// repairs are the interrupted transitions (upgrade, rollback,
	// finalize) the start repaired, by storage dir root.
	repairs map[string]storage.Repair
	// progress is the start-up's phases as the Startup Progress page
	// shows them.
	progress startupProgress
}

// loadOptions are what the callers of load ask for beyond a normal start.
type loadOptions struct {
	// recovering: `hdfs namenode -recover`; seen_txid is not held against
	// the edit log.
	recovering bool
	// upgrading: `hdfs namenode -upgrade`; the log is opened for writing
	// even with HA (every NameNode is down: in-progress segments of the
	// shared edits are recovered), and dirs may disagree on cTime (an
	// upgrade a crash interrupted left some dirs upgraded).
	upgrading bool
}

// load locks the dirs, checks them, loads the newest image and replays the
// edits. Without HA it recovers every journal's in-progress segment first,
// replays everything and leaves the edit log BETWEEN_LOG_SEGMENTS; an HA
// NameNode (which starts as a standby while another one may be writing the
// shared edits) leaves the log OPEN_FOR_READING and replays the finalized
// segments only. On error everything is released.
func load(ctx context.Context, cfg *Config, deps *Deps, opts loadOptions) (_ *loaded, err error) {
	fsys, logger := deps.FS, deps.Logger
	recovering := opts.recovering
	dirs := cfg.allDirs()
	locks, err := lockDirs(fsys, dirs)
	if err != nil {
		return nil, err
	}
	ld := &loaded{locks: locks}
	ld.progress.began = deps.Clock.Now()
	defer func() {
		if err != nil {
			if ld.elog != nil {
				ld.elog.Close()
			}
			closeAll(locks)
		}
	}()

	// Finish or undo the upgrade, rollback or finalize a crash interrupted.
	if ld.repairs, err = recoverTransitions(fsys, logger, cfg); err != nil {
		return nil, err
	}

	// VERSION: every dir formatted, all agreeing.
	var seen int64 = -1
	for _, d := range dirs {
		sd := storage.Dir{Root: d}
		v, err := sd.ReadVersion(fsys)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("%w: %s has no %s (run `hdfs namenode -format`)", ErrNotFormatted, d, sd.VersionPath())
			}
			return nil, err
		}
		if err := v.CheckType(sd.VersionPath(), storage.StorageTypeNameNode); err != nil {
			return nil, err
		}
		if err := checkLayout(sd.VersionPath(), v.LayoutVersion); err != nil {
			return nil, err
		}
		if ld.version == nil {
			ld.version = v
		} else if v.NamespaceID != ld.version.NamespaceID || v.ClusterID != ld.version.ClusterID || v.BlockPoolID != ld.version.BlockPoolID {
			return nil, fmt.Errorf("%w: %s has namespaceID=%d clusterID=%s blockpoolID=%s but %s has namespaceID=%d clusterID=%s blockpoolID=%s",
				ErrInconsistentDirs, sd.VersionPath(), v.NamespaceID, v.ClusterID, v.BlockPoolID,
				dirs[0], ld.version.NamespaceID, ld.version.ClusterID, ld.version.BlockPoolID)
		} else if v.CTime != ld.version.CTime && !opts.upgrading {
			return nil, fmt.Errorf("%w: %s has cTime %d but %s has %d: an upgrade was interrupted in some dirs only; start with -upgrade to complete it",
				ErrInconsistentDirs, sd.VersionPath(), v.CTime, dirs[0], ld.version.CTime)
		}
		if err := sd.RemoveTmpFiles(fsys); err != nil {
			return nil, err
		}
		if s, err := storage.NewNameDir(d).ReadSeenTxID(fsys); err == nil && s > seen {
			seen = s
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}

	// Image.
	for _, d := range cfg.NameDirs {
		if err := fsimage.CleanCheckpoints(fsys, d); err != nil {
			return nil, err
		}
	}
	img := &ld.progress.phases[phaseImage]
	img.begin = deps.Clock.Now()
	tree, imageTxID, err := loadTree(fsys, cfg, ld.version.NamespaceID)
	if err != nil {
		return nil, err
	}
	img.end = deps.Clock.Now()
	img.file, img.size = imageFileOf(fsys, cfg.NameDirs, imageTxID)
	img.count = tree.NumInodes()
	img.total = img.count
	var retry *retrycache.Cache
	if cfg.RetryCacheEnabled {
		retry = retrycache.New(deps.Clock, cfg.RetryCacheExpiry, retryCacheCapacity(memoryLimit(), cfg.RetryCacheHeapPercent))
	}
	ld.ns = newNamesystem(*cfg, deps.Clock, logger, tree, retry)
	ld.imageTxID = imageTxID

	// Edits: the local edits dirs, and in HA the shared edits, which are
	// required (written first, and a failure there stops the NameNode).
	var local, shared []editlog.Journal
	for _, d := range cfg.EditsDirs {
		local = append(local, editlog.NewFileJournal(fsys, storage.Dir{Root: d}.Current()))
	}
	for _, u := range cfg.HA.SharedEditsDirs {
		if err := checkSharedVersion(fsys, u, ld.version, !opts.upgrading); err != nil {
			return nil, err
		}
		j, err := deps.Journals(u, ld.version)
		if err != nil {
			closeJournals(shared)
			return nil, err
		}
		shared = append(shared, j)
	}
	elog, err := editlog.New(editlog.Config{
		MinJournals:  cfg.EditsDirMinimum,
		AutoRollTxns: cfg.AutoRollTxns,
		Logger:       logger,
	}, shared, local)
	if err != nil {
		closeJournals(shared)
		return nil, err
	}
	ld.elog = elog
	ropts := editlog.ReadOptions{InProgress: true}
	if cfg.HA.Enabled && !opts.upgrading {
		ropts.InProgress = false
		err = elog.InitForRead()
	} else {
		err = elog.InitForWrite(ctx)
	}
	if err != nil {
		return nil, err
	}
	ld.ns.elog = elog
	ld.ns.setApplied(imageTxID)
	eds := &ld.progress.phases[phaseEdits]
	eds.begin = deps.Clock.Now()
	last, replayed, err := ld.ns.catchUp(ctx, ropts, elog.ReadOps)
	ld.replayed = replayed
	if err != nil {
		return nil, err
	}
	eds.end = deps.Clock.Now()
	eds.count, eds.total = replayed, replayed
	// A start saves no checkpoint (the standby or a Checkpoint Node
	// does): the phase is done with nothing to do, as Hadoop shows it.
	ld.progress.phases[phaseCheckpoint].begin = eds.end
	ld.progress.phases[phaseCheckpoint].end = eds.end
	if seen > last && seen > imageTxID && !recovering && (!cfg.HA.Enabled || opts.upgrading) {
		// seen_txid is written when a segment starts, after its first record
		// is durable; an edit log that ends before it lost edits.
		return nil, fmt.Errorf("%w: seen_txid says transaction %d was logged, but the edit log ends at %d", ErrMissingEdits, seen, last)
	}
	ld.lastTxID = last
	var inodes int64
	ld.ns.read(func(t *namespace.Tree) { inodes = t.NumInodes() })
	logger.Info("loaded the namespace", "image", imageTxID, "edits", ld.replayed, "lastTxID", last, "inodes", inodes)
	return ld, nil
}

// closeJournals closes journals no log owns.
func closeJournals(js []editlog.Journal) {
	for _, j := range js {
		j.Close()
	}
}

// writeSeenTxID records txid in every dir; a dir that fails is logged (it will
// be caught by the edit log too, which uses the same disk).
func writeSeenTxID(cfg *Config, deps *Deps, txid int64) {
	for _, d := range cfg.allDirs() {
		if err := storage.NewNameDir(d).WriteSeenTxID(deps.FS, txid); err != nil {
			deps.Logger.Error("cannot write seen_txid", "dir", d, "err", err)
		}
	}
}

// RecoverOptions are `hdfs namenode -recover`'s choices.
type RecoverOptions struct {
	// Confirm asks the operator; nil means yes to everything (-force).
	Confirm func(question string) bool
}

// Recover starts the namespace like a normal start-up but, when the edit log is
// corrupt before its end, offers to cut it there: the damaged segment is
// truncated at the bad record and every later segment of that directory is set
// aside as <name>.corrupt. Edits after the cut are lost; that is the point of
// recovery mode. It finishes with a saved namespace so the next start is clean.
func Recover(ctx context.Context, cfg Config, deps Deps, opts RecoverOptions) error {
	deps.fill(&cfg)
	for attempt := 0; attempt < 100; attempt++ {
		// A cut may drop whole later segments, so seen_txid is not held
		// against the log here; the recovered start rewrites it.
		ld, err := load(ctx, &cfg, &deps, loadOptions{recovering: true})
		var ce *editlog.CorruptionError
		if errors.As(err, &ce) {
			q := fmt.Sprintf("The edit log is corrupt: %v.\nCut it at offset %d of %s, losing every later edit in that directory?", ce, ce.Offset, ce.File)
			if opts.Confirm != nil && !opts.Confirm(q) {
				return fmt.Errorf("namenode: recovery aborted by the operator: %w", err)
			}
			if err := cutSegment(deps.FS, ce.File, ce.Offset); err != nil {
				return err
			}
			deps.Logger.Warn("cut the edit log", "file", ce.File, "offset", ce.Offset)
			continue
		}
		if err != nil {
			return err
		}
		nn := &NameNode{cfg: cfg, deps: deps, locks: ld.locks, version: ld.version, ns: ld.ns}
		next := ld.lastTxID + 1
		if err := ld.elog.StartSegment(ctx, next); err != nil {
			ld.elog.Close()
			closeAll(ld.locks)
			return err
		}
		writeSeenTxID(&cfg, &deps, next)
		err = nn.saveNamespace(ctx)
		if cerr := ld.elog.Close(); err == nil {
			err = cerr
		}
		closeAll(ld.locks)
		if err == nil {
			deps.Logger.Info("recovery complete", "lastTxID", ld.lastTxID)
		}
		return err
	}
	return errors.New("namenode: recovery gave up after 100 cuts")
}

// cutSegment truncates the segment file at off, turns a finalized segment back
// into an in-progress one (start-up recovery finalizes it at its real end) and
// sets aside every later segment in the same directory.
func cutSegment(fsys vfs.FS, file string, off int64) error {
	f, err := fsys.OpenReadWrite(file)
	if err != nil {
		return fmt.Errorf("namenode: recover: %w", err)
	}
	if err := f.Truncate(off); err != nil {
		f.Close()
		return fmt.Errorf("namenode: recover: truncate %s: %w", file, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("namenode: recover: sync %s: %w", file, err)
	}
	f.Close()
	dir, name := filepath.Split(file)
	first, _, inProgress, ok := editlog.ParseSegmentName(name)
	if !ok {
		return fmt.Errorf("namenode: recover: %s is not an edit segment", file)
	}
	if !inProgress {
		if err := fsys.Rename(file, filepath.Join(dir, editlog.InProgressName(first))); err != nil {
			return err
		}
	}
	names, err := fsys.List(dir)
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, n := range names {
		f2, _, _, ok := editlog.ParseSegmentName(n)
		if ok && f2 > first {
			if err := fsys.Rename(filepath.Join(dir, n), filepath.Join(dir, n+".corrupt")); err != nil {
				return err
			}
		}
	}
	return fsys.SyncDir(dir)
}

// checkSharedVersion checks that a file:// shared edits dir was formatted
// for this namespace (hdfs namenode -format, or -initializeSharedEdits)
// and, with sameCTime, that it is at the same upgrade as the name dirs (a
// NameNode that did not take part in an upgrade or rollback of the
// nameservice must be bootstrapped again).
func checkSharedVersion(fsys vfs.FS, uri string, want *storage.Version, sameCTime bool) error {
	if isQuorumURI(uri) {
		return nil // the JournalNodes check theirs (newEpoch, /getJournal)
	}
	dir, err := sharedDir(uri)
	if err != nil {
		return err
	}
	sd := storage.Dir{Root: dir}
	v, err := sd.ReadVersion(fsys)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: shared edits dir %s has no %s (run `hdfs namenode -initializeSharedEdits`)", ErrNotFormatted, dir, sd.VersionPath())
		}
		return err
	}
	if v.NamespaceID != want.NamespaceID || v.ClusterID != want.ClusterID {
		return fmt.Errorf("%w: shared edits dir %s has namespaceID=%d clusterID=%s, the name dirs namespaceID=%d clusterID=%s",
			ErrInconsistentDirs, sd.VersionPath(), v.NamespaceID, v.ClusterID, want.NamespaceID, want.ClusterID)
	}
	if sameCTime && v.CTime != want.CTime {
		return fmt.Errorf("%w: shared edits dir %s has cTime %d, the name dirs %d: the other NameNode upgraded or rolled back the nameservice; run `hdfs namenode -bootstrapStandby` on this one",
			ErrInconsistentDirs, sd.VersionPath(), v.CTime, want.CTime)
	}
	return nil
}
