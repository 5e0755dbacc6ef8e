package namenode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/failpoint"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	nnpb "github.com/hdfsgo/hdfsgo/internal/proto/namenode"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// Upgrade, rollback and finalize of the NameNode's storage (Hadoop's
// FSImage.doUpgrade, doRollback, finalizeUpgrade over NNUpgradeUtil).
//
// The dirs a transition covers are every name and edits dir and, with HA,
// every file:// shared edits dir. Each step is one of package storage's
// synced steps, taken in every dir before the next step starts, with a
// failpoint after it:
//
//	Upgrade (hdfs namenode -upgrade, every NameNode of the nameservice down):
//	  load the namespace (image + every edit; in-progress segments recovered)
//	  current → previous.tmp, new empty current    nn-upgrade-after-rename
//	  image of the loaded state in the new currents  nn-upgrade-after-image
//	  (name dirs), seen_txid
//	  new VERSION: this layout, cTime = now (ms)    nn-upgrade-mid-version (first dir)
//	                                                nn-upgrade-after-version
//	  previous.tmp → previous
//	then the NameNode starts as usual; a new segment follows the image.
//
//	Rollback (hdfs namenode -rollback, a command that exits):
//	  current → removed.tmp                          nn-rollback-after-remove
//	  previous → current                             nn-rollback-after-restore
//	  removed.tmp deleted
//
//	Finalize (ClientProtocol finalizeUpgrade, dfsadmin -finalizeUpgrade):
//	  previous → finalized.tmp                       nn-finalize-after-rename
//	  finalized.tmp deleted
//
// Every start repairs what a crash interrupted (recoverTransitions, with
// storage.Decide's rule). A -upgrade or -rollback asked for again after a
// crash completes the interrupted one instead of refusing: the dirs the
// repair completed count as done, the others are taken through the steps.
//
// The new cTime is the namespace's: DataNodes get it in the namespace
// info, see that their block pools are older and upgrade them
// (datanode/storage); a DataNode registering with another cTime than the
// NameNode's is refused. While any dir keeps previous/, the upgrade is not
// finalized; once it is, every DataNode gets DNA_FINALIZE once per
// registration (in a heartbeat reply, and in block report replies as in
// Hadoop) and drops its previous state too. The upgrade state is soft
// state read from the dirs, as in Hadoop: it is not in the edits.

// upgradeState is the NameNode's upgrade as its dirs show it, and which
// DataNodes were sent DNA_FINALIZE since they registered.
type upgradeState struct {
	mu struct {
		sync.Mutex
		finalized bool
		told      map[string]bool // DataNode uuid → sent DNA_FINALIZE
	}
}

// transitionDirs are the storage dirs an upgrade covers: the name and
// edits dirs, and the file:// shared edits dirs (HA).
func transitionDirs(cfg *Config) (local, shared []storage.Dir, err error) {
	for _, d := range cfg.allDirs() {
		local = append(local, storage.Dir{Root: d})
	}
	for _, u := range cfg.HA.SharedEditsDirs {
		if strings.HasPrefix(u, "qjournal://") {
			continue // the JournalNodes keep their own
		}
		dir, err := sharedDir(u)
		if err != nil {
			return nil, nil, err
		}
		shared = append(shared, storage.Dir{Root: dir})
	}
	return local, shared, nil
}

// errQJournalTransition refuses a transition of qjournal:// shared edits,
// naming the way around it.
func errQJournalTransition(what string, cfg *Config) error {
	for _, u := range cfg.HA.SharedEditsDirs {
		if strings.HasPrefix(u, "qjournal://") {
			return fmt.Errorf("namenode: %s with qjournal:// shared edits (%s) is not supported: the JournalNodes cannot %s their storage. "+
				"Instead: on the active NameNode run `hdfs dfsadmin -safemode enter` and `hdfs dfsadmin -saveNamespace`; stop both NameNodes; "+
				"on the one that was active, run `hdfs namenode -%s` with a configuration without HA (no %s, no %s); "+
				"then make the nameservice HA again with `hdfs namenode -initializeSharedEdits` there and `hdfs namenode -bootstrapStandby` on the other",
				what, u, what, what, "dfs.nameservices", "dfs.namenode.shared.edits.dir")
		}
	}
	return nil
}

// recoverTransitions repairs, in every dir a transition covers, the
// transition a crash interrupted, and returns what it did by dir root.
func recoverTransitions(fsys vfs.FS, log *slog.Logger, cfg *Config) (map[string]storage.Repair, error) {
	local, shared, err := transitionDirs(cfg)
	if err != nil {
		return nil, err
	}
	out := map[string]storage.Repair{}
	for _, d := range append(local, shared...) {
		r, err := d.Recover(fsys)
		if err != nil {
			return nil, fmt.Errorf("namenode: %w", err)
		}
		if r != storage.RepairNone && r != storage.RepairNotFormatted {
			log.Warn("repaired an interrupted upgrade, rollback or finalize", "dir", d.Root, "repair", r.String())
			out[d.Root] = r
		}
	}
	return out, nil
}

// checkLayout refuses a name dir whose layout this NameNode cannot read.
func checkLayout(path string, lv int32) error {
	switch {
	case lv == storage.NameNodeLayoutVersion:
		return nil
	case lv < storage.NameNodeLayoutVersion && lv <= -1000:
		return fmt.Errorf("namenode: %s has layoutVersion %d, newer than this NameNode's %d: a newer release wrote it", path, lv, storage.NameNodeLayoutVersion)
	case lv > -1000:
		return fmt.Errorf("namenode: %s has layoutVersion %d, an Apache Hadoop NameNode's: hdfsgo reads its own image format (%d) only", path, lv, storage.NameNodeLayoutVersion)
	}
	return fmt.Errorf("namenode: %s has layoutVersion %d; this NameNode reads %d", path, lv, storage.NameNodeLayoutVersion)
}

// Upgrade is `hdfs namenode -upgrade` up to the point where the NameNode
// starts (the command then calls Start): it loads the namespace, keeps the
// dirs' current state as previous/ and writes the loaded state as a new
// image with a new cTime in a new current/ (see the top of this file). As
// in Hadoop, it upgrades an up-to-date layout too (a new cTime; the
// DataNodes keep their old state as well), and it refuses while a previous
// upgrade is neither finalized nor rolled back. Every NameNode of the
// nameservice must be stopped.
func Upgrade(ctx context.Context, cfg Config, deps Deps) error {
	deps.fill(&cfg)
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := errQJournalTransition("upgrade", &cfg); err != nil {
		return err
	}
	fsys, log := deps.FS, deps.Logger
	ld, err := load(ctx, &cfg, &deps, loadOptions{upgrading: true})
	if err != nil {
		return err
	}
	defer closeAll(ld.locks)
	defer ld.elog.Close()
	local, shared, err := transitionDirs(&cfg)
	if err != nil {
		return err
	}
	all := append(local, shared...)
	// Dirs that keep previous/ are done if an upgrade a crash interrupted
	// left them newer than the others (or the repair at this start
	// completed them all); any other previous/ is an earlier upgrade not
	// finalized, and a new one is refused, as in Hadoop.
	var todo, done []storage.Dir
	ctimes := map[string]int64{}
	oldest := int64(-1)
	for _, d := range all {
		v, err := d.ReadVersion(fsys)
		if err != nil {
			return err
		}
		ctimes[d.Root] = v.CTime
		has, err := d.HasPrevious(fsys)
		if err != nil {
			return err
		}
		if has {
			done = append(done, d)
			continue
		}
		todo = append(todo, d)
		if oldest < 0 || v.CTime < oldest {
			oldest = v.CTime
		}
	}
	var newCTime int64
	for _, d := range done {
		interrupted := len(todo) > 0 && ctimes[d.Root] > oldest
		if len(todo) == 0 && ld.repairs[d.Root] == storage.RepairCompleteUpgrade {
			interrupted = true
		}
		if !interrupted {
			return fmt.Errorf("namenode: Directory %s is in an inconsistent state: previous fs state should not exist during upgrade. Finalize or rollback first.", d.Root)
		}
		newCTime = ctimes[d.Root] // the interrupted upgrade's
	}
	if len(todo) == 0 {
		log.Info("the upgrade a crash interrupted was completed at start-up", "cTime", newCTime)
		return nil
	}
	if len(done) > 0 {
		log.Info("completing the upgrade a crash interrupted", "cTime", newCTime, "upgraded", dirNames(done))
	}
	old := ld.version
	if newCTime == 0 {
		newCTime = max(deps.Clock.Now().UnixMilli(), old.CTime+1)
	}
	hit := deps.Failpoint.Hit
	log.Info("upgrading the NameNode's storage", "oldLV", old.LayoutVersion, "oldCTime", old.CTime,
		"newLV", storage.NameNodeLayoutVersion, "newCTime", newCTime, "txid", ld.lastTxID, "dirs", dirNames(todo))

	for _, d := range todo {
		if err := d.StartUpgrade(fsys); err != nil {
			return fmt.Errorf("namenode: upgrade: %w", err)
		}
	}
	if err := hit(failpoint.NNUpgradeAfterRename); err != nil {
		return err
	}
	var names []string
	for _, d := range todo {
		if isNameDir(&cfg, d.Root) {
			names = append(names, d.Root)
		}
	}
	if len(names) > 0 {
		ns := ld.ns
		ns.readLocked(func() {
			h := ns.mu.tree.ImageHeader(ld.lastTxID)
			h.LayoutVersion = storage.NameNodeLayoutVersion
			h.NamespaceID = old.NamespaceID
			err = fsimage.Save(fsys, names, h, ns.mu.tree.Export)
		})
		if err != nil {
			return fmt.Errorf("namenode: upgrade: saving the image: %w", err)
		}
	}
	for _, d := range todo {
		if isLocalDir(local, d) {
			if err := storage.NewNameDir(d.Root).WriteSeenTxID(fsys, ld.lastTxID); err != nil {
				return err
			}
		}
	}
	if err := hit(failpoint.NNUpgradeAfterImage); err != nil {
		return err
	}
	nv := *old
	nv.LayoutVersion, nv.CTime = storage.NameNodeLayoutVersion, newCTime
	for i, d := range todo {
		if err := d.WriteVersion(fsys, &nv, deps.Clock.Now()); err != nil {
			return fmt.Errorf("namenode: upgrade: %w", err)
		}
		if i == 0 {
			if err := hit(failpoint.NNUpgradeMidVersion); err != nil {
				return err
			}
		}
	}
	if err := hit(failpoint.NNUpgradeAfterVersion); err != nil {
		return err
	}
	for _, d := range todo {
		if err := d.CompleteUpgrade(fsys); err != nil {
			return fmt.Errorf("namenode: upgrade: %w", err)
		}
		log.Info("upgrade of storage directory complete", "dir", d.Root)
	}
	return nil
}

func isLocalDir(local []storage.Dir, d storage.Dir) bool {
	for _, l := range local {
		if l.Root == d.Root {
			return true
		}
	}
	return false
}

func dirNames(ds []storage.Dir) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Root)
	}
	return strings.Join(out, ",")
}

// RollbackOptions are `hdfs namenode -rollback`'s choices.
type RollbackOptions struct {
	// Confirm is asked once every dir was checked and before anything
	// changes; nil means yes.
	Confirm func(question string) bool
}

// ErrRollbackAborted: the operator answered no.
var ErrRollbackAborted = errors.New("namenode: Rollback aborted.")

// Rollback is `hdfs namenode -rollback`: every dir that keeps previous/
// (an upgrade not finalized) goes back to it; the state written since the
// upgrade is deleted. The NameNode must be stopped; it is started
// normally afterwards, and the DataNodes with -rollback. With HA, the
// file:// shared edits are rolled back too and the other NameNode must be
// bootstrapped again (-bootstrapStandby).
func Rollback(ctx context.Context, cfg Config, deps Deps, opts RollbackOptions) error {
	deps.fill(&cfg)
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := errQJournalTransition("rollback", &cfg); err != nil {
		return err
	}
	fsys, log := deps.FS, deps.Logger
	locks, err := lockDirs(fsys, cfg.allDirs())
	if err != nil {
		return err
	}
	defer closeAll(locks)
	repairs, err := recoverTransitions(fsys, log, &cfg)
	if err != nil {
		return err
	}
	local, shared, err := transitionDirs(&cfg)
	if err != nil {
		return err
	}
	var can []storage.Dir
	for _, d := range append(local, shared...) {
		has, err := d.HasPrevious(fsys)
		if err != nil {
			return err
		}
		if !has {
			log.Info("storage directory does not contain previous fs state", "dir", d.Root)
			continue
		}
		prev, err := d.ReadPreviousVersion(fsys)
		if err != nil {
			return err
		}
		if prev.LayoutVersion != storage.NameNodeLayoutVersion {
			return fmt.Errorf("namenode: Cannot rollback to storage version %d using this version of the NameNode, which uses storage version %d. "+
				"Please use the previous version of HDFS to perform the rollback.", prev.LayoutVersion, storage.NameNodeLayoutVersion)
		}
		cur, err := d.ReadVersion(fsys)
		if err != nil {
			return err
		}
		if prev.NamespaceID != cur.NamespaceID || prev.ClusterID != cur.ClusterID {
			return fmt.Errorf("%w: %s holds namespaceID=%d clusterID=%s, its current state namespaceID=%d clusterID=%s",
				ErrInconsistentDirs, d.PreviousVersionPath(), prev.NamespaceID, prev.ClusterID, cur.NamespaceID, cur.ClusterID)
		}
		log.Info("can perform rollback", "dir", d.Root, "newLV", prev.LayoutVersion, "newCTime", prev.CTime)
		can = append(can, d)
	}
	if len(can) == 0 {
		for _, r := range repairs {
			if r == storage.RepairCompleteRollback {
				log.Info("the rollback a crash interrupted was completed at start-up")
				return nil
			}
		}
		return errors.New("namenode: Cannot rollback. None of the storage directories contain previous fs state.")
	}
	if opts.Confirm != nil && !opts.Confirm("Roll back file system state?") {
		return ErrRollbackAborted
	}
	hit := deps.Failpoint.Hit
	for _, d := range can {
		if err := d.StartRollback(fsys); err != nil {
			return fmt.Errorf("namenode: rollback: %w", err)
		}
	}
	if err := hit(failpoint.NNRollbackAfterRemove); err != nil {
		return err
	}
	for _, d := range can {
		if err := d.RestorePrevious(fsys); err != nil {
			return fmt.Errorf("namenode: rollback: %w", err)
		}
	}
	if err := hit(failpoint.NNRollbackAfterRestore); err != nil {
		return err
	}
	for _, d := range can {
		if err := d.RemoveRemoved(fsys); err != nil {
			return fmt.Errorf("namenode: rollback: %w", err)
		}
		log.Info("rollback of storage directory complete", "dir", d.Root)
	}
	return nil
}

// refreshUpgradeState reads from the dirs whether the upgrade is
// finalized: no local dir, and with HA no file:// shared edits dir, keeps
// previous/.
func (nn *NameNode) refreshUpgradeState() error {
	local, shared, err := transitionDirs(&nn.cfg)
	if err != nil {
		return err
	}
	finalized := true
	for _, d := range append(local, shared...) {
		has, err := d.HasPrevious(nn.deps.FS)
		if err != nil {
			return err
		}
		if has {
			finalized = false
		}
	}
	u := &nn.upgrade
	u.mu.Lock()
	defer u.mu.Unlock()
	if finalized && !u.mu.finalized {
		u.mu.told = map[string]bool{} // every DataNode is told again
	}
	u.mu.finalized = finalized
	if u.mu.told == nil {
		u.mu.told = map[string]bool{}
	}
	return nil
}

// UpgradeFinalized reports whether no dir keeps the state before an
// upgrade (true when there never was one).
func (nn *NameNode) UpgradeFinalized() bool {
	nn.upgrade.mu.Lock()
	defer nn.upgrade.mu.Unlock()
	return nn.upgrade.mu.finalized
}

// finalizeCommandFor returns DNA_FINALIZE for DataNode uuid once per
// registration while the upgrade is finalized and this NameNode active;
// nil otherwise.
func (nn *NameNode) finalizeCommandFor(uuid string) *dnpb.DatanodeCommandProto {
	if nn.ha.State() != ha.Active {
		return nil
	}
	u := &nn.upgrade
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.mu.finalized || u.mu.told[uuid] {
		return nil
	}
	u.mu.told[uuid] = true
	return nn.finalizeCommand()
}

// finalizeCommand is DNA_FINALIZE for this namespace's block pool.
func (nn *NameNode) finalizeCommand() *dnpb.DatanodeCommandProto {
	return &dnpb.DatanodeCommandProto{
		CmdType:     dnpb.DatanodeCommandProto_FinalizeCommand.Enum(),
		FinalizeCmd: &dnpb.FinalizeCommandProto{BlockPoolId: proto.String(nn.version.BlockPoolID)},
	}
}

// forgetFinalizeSent makes the next heartbeat of uuid carry DNA_FINALIZE
// again (it registered anew: it may have restarted with its previous
// state).
func (nn *NameNode) forgetFinalizeSent(uuid string) {
	nn.upgrade.mu.Lock()
	defer nn.upgrade.mu.Unlock()
	delete(nn.upgrade.mu.told, uuid)
}

// finalizeUpgrade drops the previous state of every local dir and, on an
// active NameNode with HA, of the file:// shared edits (Hadoop's
// FSImage.finalizeUpgrade); the DataNodes are told in their next
// heartbeat.
func (nn *NameNode) finalizeUpgrade(ctx context.Context) error {
	nn.ckptMu.Lock()
	defer nn.ckptMu.Unlock()
	fsys, log := nn.deps.FS, nn.deps.Logger
	local, shared, err := transitionDirs(&nn.cfg)
	if err != nil {
		return err
	}
	dirs := local
	if nn.cfg.HA.Enabled && nn.ha.State() == ha.Active {
		dirs = append(dirs, shared...)
	}
	log.Info("finalizing the upgrade", "LV", nn.version.LayoutVersion, "cTime", nn.version.CTime)
	for _, d := range dirs {
		ok, err := d.StartFinalize(fsys)
		if err != nil {
			return fmt.Errorf("namenode: finalize: %w", err)
		}
		if !ok {
			continue
		}
		if err := nn.deps.Failpoint.Hit(failpoint.NNFinalizeAfterRename); err != nil {
			return err
		}
		if err := d.RemoveFinalized(fsys); err != nil {
			return fmt.Errorf("namenode: finalize: %w", err)
		}
		log.Info("finalize upgrade complete", "dir", d.Root)
	}
	return nn.refreshUpgradeState()
}

// finalizeUpgrade is ClientProtocol.finalizeUpgrade (dfsadmin
// -finalizeUpgrade): superuser only, answered in every HA state (a standby
// finalizes its own dirs; the active the shared edits too).
func (c *clientRPC) finalizeUpgrade(ctx context.Context, _ *hdfs.FinalizeUpgradeRequestProto) (*hdfs.FinalizeUpgradeResponseProto, error) {
	if err := c.checkSuper(ctx); err != nil {
		return nil, err
	}
	if err := c.nn.finalizeUpgrade(ctx); err != nil {
		return nil, remoteerr.New(remoteerr.ClassIOException, "%v", err)
	}
	return &hdfs.FinalizeUpgradeResponseProto{}, nil
}

// upgradeStatus is ClientProtocol.upgradeStatus (dfsadmin -upgrade query):
// whether the upgrade is finalized (true when there was none).
func (c *clientRPC) upgradeStatus(ctx context.Context, _ *hdfs.UpgradeStatusRequestProto) (*hdfs.UpgradeStatusResponseProto, error) {
	if err := c.checkSuper(ctx); err != nil {
		return nil, err
	}
	// Read the dirs again: with HA the other NameNode may have finalized
	// the shared edits since.
	if err := c.nn.refreshUpgradeState(); err != nil {
		return nil, remoteerr.New(remoteerr.ClassIOException, "%v", err)
	}
	return &hdfs.UpgradeStatusResponseProto{UpgradeFinalized: proto.Bool(c.nn.UpgradeFinalized())}, nil
}

// rollingUpgrade is ClientProtocol.rollingUpgrade (dfsadmin
// -rollingUpgrade). hdfsgo has no rolling upgrades: QUERY and FINALIZE
// answer, truthfully, that none is in progress (no rollingUpgradeInfo,
// which dfsadmin prints as "There is no rolling upgrade in progress or
// rolling upgrade has already been finalized."); PREPARE (START) is
// refused with UnsupportedOperationException.
func (c *clientRPC) rollingUpgrade(ctx context.Context, req *hdfs.RollingUpgradeRequestProto) (*hdfs.RollingUpgradeResponseProto, error) {
	if err := c.checkSuper(ctx); err != nil {
		return nil, err
	}
	switch req.GetAction() {
	case hdfs.RollingUpgradeActionProto_QUERY, hdfs.RollingUpgradeActionProto_FINALIZE:
		return &hdfs.RollingUpgradeResponseProto{}, nil
	}
	action := strings.ToLower(req.GetAction().String())
	if req.GetAction() == hdfs.RollingUpgradeActionProto_START {
		action = "prepare"
	}
	return nil, remoteerr.New(remoteerr.ClassUnsupported,
		"rollingUpgrade %s is not supported: hdfsgo has no rolling upgrades; stop the cluster and use `hdfs namenode -upgrade` (then -rollback or dfsadmin -finalizeUpgrade)",
		action)
}

// isUpgradeFinalized is NamenodeProtocol.isUpgradeFinalized.
func (r *namenodeRPC) isUpgradeFinalized(ctx context.Context, _ *nnpb.IsUpgradeFinalizedRequestProto) (*nnpb.IsUpgradeFinalizedResponseProto, error) {
	if err := r.checkSuper(ctx); err != nil {
		return nil, err
	}
	return &nnpb.IsUpgradeFinalizedResponseProto{IsUpgradeFinalized: proto.Bool(r.nn.UpgradeFinalized())}, nil
}

// isRollingUpgrade is NamenodeProtocol.isRollingUpgrade: never (hdfsgo has
// no rolling upgrades).
func (r *namenodeRPC) isRollingUpgrade(ctx context.Context, _ *nnpb.IsRollingUpgradeRequestProto) (*nnpb.IsRollingUpgradeResponseProto, error) {
	if err := r.checkSuper(ctx); err != nil {
		return nil, err
	}
	return &nnpb.IsRollingUpgradeResponseProto{IsRollingUpgrade: proto.Bool(false)}, nil
}
