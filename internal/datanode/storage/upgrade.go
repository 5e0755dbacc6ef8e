package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/failpoint"
	hstorage "github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// A block pool's storage on a volume, <vol>/current/<bpid>, is a storage
// directory of package storage: its current/ holds VERSION, finalized/ and
// rbw/, and an upgrade keeps the old current/ as previous/ beside it. What
// the pool's start does (preparePool), in order:
//
//  1. Recover: finish or undo a transition a crash interrupted.
//  2. With Config.Rollback and previous/ present: roll back.
//  3. Compare the pool's VERSION with the namespace's (the NameNode's
//     cTime, this DataNode's layout): equal, nothing; the pool older (an
//     older layout, or a cTime before the NameNode's upgrade): upgrade;
//     the pool newer: refuse.
//
// Upgrade (Hadoop's BlockPoolSliceStorage.doUpgrade): an older previous/
// is finalized first; current → previous.tmp; every block and meta file of
// previous.tmp/finalized is hard-linked into the new current/finalized at
// the place its block id gives in the current layout, and every file of
// previous.tmp/rbw into the new rbw/; the new directories are synced; the
// new VERSION (this layout, the NameNode's cTime) is written; previous.tmp
// → previous. No block is copied: both trees name the same inodes, so an
// upgrade costs two links per replica and no space. Since previous/ shares
// the files, every change made in place to a replica's file afterwards
// (append, recovery truncation, the start-up cut of a torn RBW) first gives
// that file its own copy (breakLinks); renames and deletions need nothing.
//
// Rollback: current → removed.tmp; previous → current; removed.tmp deleted.
// Finalize (DNA_FINALIZE): previous → finalized.tmp, deleted in the
// background (RemoveFinalized). Each step is synced, and a failpoint
// follows it (package failpoint).

// UnlinkSuffix marks the private copy breakLinks makes of a hard-linked
// replica file before it renames the copy over the file. One found at
// start-up is a copy a crash interrupted (the original is intact) and is
// removed. Part of the on-disk format (Hadoop's name).
const UnlinkSuffix = ".unlinked"

// Transition is one thing a block pool's start did to its storage on a
// volume.
type Transition struct {
	Dir  string // <vol>/current/<bpid>
	What string
}

func (t Transition) String() string { return t.Dir + ": " + t.What }

// preparePool makes <vol>/current/<bpid>/{current/{finalized,rbw},tmp} and
// the pool's VERSION, after repairing an interrupted transition, rolling
// back (rollback set) and upgrading as the package doc says.
func (d *Dataset) preparePool(v *Volume, ver *hstorage.Version, now time.Time, rollback bool, res *ScanResult) error {
	l := newPoolLayout(v.Dir(), ver.BlockPoolID)
	dir := hstorage.Dir{Root: l.root}
	fsys := vfs.Default
	hit := d.cfg.Failpoint.Hit
	note := func(what string) { res.Transitions = append(res.Transitions, Transition{Dir: l.root, What: what}) }

	rep, err := dir.Recover(fsys)
	if err != nil {
		return fmt.Errorf("%w: block pool %s on %s: %v", ErrBadVolume, ver.BlockPoolID, v.Dir(), err)
	}
	if rep != hstorage.RepairNone && rep != hstorage.RepairNotFormatted {
		note("interrupted transition repaired: " + rep.String())
	}
	if rollback {
		done, err := rollbackPool(dir, ver, hit)
		if err != nil {
			return err
		}
		if done != "" {
			note(done)
		}
	}
	old, err := dir.ReadVersion(fsys)
	switch {
	case err == nil:
		if old.BlockPoolID != ver.BlockPoolID || old.NamespaceID != ver.NamespaceID {
			return fmt.Errorf("%w: %s holds block pool %s of namespace %d, want %s of %d",
				ErrBadVolume, dir.VersionPath(), old.BlockPoolID, old.NamespaceID, ver.BlockPoolID, ver.NamespaceID)
		}
		up, err := needsUpgrade(dir.VersionPath(), old, ver)
		if err != nil {
			return err
		}
		if up {
			done, err := upgradePool(dir, old, ver, now, hit)
			if err != nil {
				return err
			}
			note(done)
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(l.current(), 0o700); err != nil {
			return fmt.Errorf("datanode/storage: %w", err)
		}
		if err := dir.WriteVersion(fsys, ver, now); err != nil {
			return err
		}
	default:
		return err
	}
	for _, p := range []string{l.finalized(), l.rbw(), l.tmp()} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			return fmt.Errorf("datanode/storage: %w", err)
		}
	}
	for _, p := range []string{l.current(), l.root, filepath.Join(v.Dir(), CurrentDir)} {
		if err := syncDir(p); err != nil {
			return fmt.Errorf("datanode/storage: sync %s: %w", p, err)
		}
	}
	return nil
}

// needsUpgrade compares a block pool's VERSION (old) with the namespace's
// (ns: the NameNode's cTime and this DataNode's layout): false when they
// agree, true when the pool is older, an error when the pool is newer or of
// a layout this DataNode cannot read.
func needsUpgrade(path string, old, ns *hstorage.Version) (bool, error) {
	switch {
	case old.LayoutVersion < hstorage.DataNodeLayoutVersion:
		return false, fmt.Errorf("%w: %s has layout version %d, newer than this DataNode's %d: a newer release wrote it",
			ErrBadVolume, path, old.LayoutVersion, hstorage.DataNodeLayoutVersion)
	case old.LayoutVersion > hstorage.OldestDataNodeLayoutVersion:
		return false, fmt.Errorf("%w: %s has layout version %d; this DataNode upgrades from %d and later only: upgrade with an older release first",
			ErrBadVolume, path, old.LayoutVersion, hstorage.OldestDataNodeLayoutVersion)
	case old.LayoutVersion == hstorage.DataNodeLayoutVersion && old.CTime == ns.CTime:
		return false, nil
	case old.LayoutVersion > hstorage.DataNodeLayoutVersion || old.CTime < ns.CTime:
		return true, nil
	}
	return false, fmt.Errorf("%w: %s: Datanode state: LV = %d CTime = %d is newer than the namespace state: LV = %d CTime = %d (the NameNode was rolled back: start the DataNode with -rollback)",
		ErrBadVolume, path, old.LayoutVersion, old.CTime, ns.LayoutVersion, ns.CTime)
}

// upgradePool upgrades the block pool storage dir from old to the
// namespace's cTime and this DataNode's layout (see the package doc) and
// says what it did.
func upgradePool(dir hstorage.Dir, old, ns *hstorage.Version, now time.Time, hit func(failpoint.Name) error) (string, error) {
	fsys := vfs.Default
	finalizedOld := false
	if ok, err := dir.StartFinalize(fsys); err != nil {
		return "", err
	} else if ok {
		if err := dir.RemoveFinalized(fsys); err != nil {
			return "", err
		}
		finalizedOld = true
	}
	if err := dir.StartUpgrade(fsys); err != nil {
		return "", err
	}
	if err := hit(failpoint.DNUpgradeAfterRename); err != nil {
		return "", err
	}
	n, skipped, err := linkReplicas(dir.PreviousTmp(), dir.Current(), hit)
	if err != nil {
		return "", err
	}
	if err := hit(failpoint.DNUpgradeAfterLink); err != nil {
		return "", err
	}
	nv := *old
	nv.LayoutVersion, nv.CTime = hstorage.DataNodeLayoutVersion, ns.CTime
	if err := dir.WriteVersion(fsys, &nv, now); err != nil {
		return "", err
	}
	if err := hit(failpoint.DNUpgradeAfterVersion); err != nil {
		return "", err
	}
	if err := dir.CompleteUpgrade(fsys); err != nil {
		return "", err
	}
	what := fmt.Sprintf("upgraded from LV = %d CTime = %d to LV = %d CTime = %d, %d files hard-linked",
		old.LayoutVersion, old.CTime, nv.LayoutVersion, nv.CTime, n)
	if finalizedOld {
		what += " (the previous state of an earlier upgrade was finalized first)"
	}
	if len(skipped) > 0 {
		what += fmt.Sprintf("; left in previous only: %s", strings.Join(skipped, ", "))
	}
	return what, nil
}

// linkReplicas hard-links the replica files of the old current/ (src) into
// the new one (dst): finalized files at their block id's place in the
// current layout, rbw files as they are. It syncs every directory it made
// and returns how many files it linked and which it left out (files that
// are not a replica's, and a second file of the same name and block).
func linkReplicas(src, dst string, hit func(failpoint.Name) error) (int, []string, error) {
	var created []string
	mkdir := func(d string) error {
		if _, err := os.Stat(d); err == nil {
			return nil
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("datanode/storage: upgrade: %w", err)
		}
		created = append(created, d)
		return nil
	}
	dstFinalized, dstRBW := filepath.Join(dst, FinalizedDir), filepath.Join(dst, RBWDir)
	for _, d := range []string{dstFinalized, dstRBW} {
		if err := mkdir(d); err != nil {
			return 0, nil, err
		}
	}
	n := 0
	var skipped []string
	link := func(from, to string) error {
		if err := os.Link(from, to); err != nil {
			if errors.Is(err, fs.ErrExist) {
				skipped = append(skipped, from+" (duplicate of "+to+")")
				return nil
			}
			return fmt.Errorf("datanode/storage: upgrade: %w", err)
		}
		n++
		if n == 1 {
			return hit(failpoint.DNUpgradeMidLink)
		}
		return nil
	}
	srcFinalized := filepath.Join(src, FinalizedDir)
	err := filepath.WalkDir(srcFinalized, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == srcFinalized && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if e.IsDir() {
			return nil
		}
		id, ok := replicaFileID(e.Name())
		if !ok || !e.Type().IsRegular() {
			skipped = append(skipped, p)
			return nil
		}
		d := IDToBlockDir(dstFinalized, id)
		if err := mkdir(d); err != nil {
			return err
		}
		return link(p, filepath.Join(d, e.Name()))
	})
	if err != nil {
		return n, skipped, fmt.Errorf("datanode/storage: upgrade %s: %w", srcFinalized, err)
	}
	srcRBW := filepath.Join(src, RBWDir)
	ents, err := os.ReadDir(srcRBW)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return n, skipped, fmt.Errorf("datanode/storage: upgrade: %w", err)
	}
	for _, e := range ents {
		p := filepath.Join(srcRBW, e.Name())
		if _, ok := replicaFileID(e.Name()); !ok || !e.Type().IsRegular() {
			skipped = append(skipped, p)
			continue
		}
		if err := link(p, filepath.Join(dstRBW, e.Name())); err != nil {
			return n, skipped, err
		}
	}
	// Deepest first, so that every directory's entries, and then its own
	// entry in its parent, are durable.
	sort.Slice(created, func(i, j int) bool { return len(created[i]) > len(created[j]) })
	for _, d := range append(created, dst) {
		if err := syncDir(d); err != nil {
			return n, skipped, fmt.Errorf("datanode/storage: upgrade: sync %s: %w", d, err)
		}
	}
	return n, skipped, nil
}

// replicaFileID returns the block id in the name of a replica's file:
// blk_<id>, blk_<id>_<gs>.meta, or one of those with a suffix our recovery
// or unlinking left.
func replicaFileID(name string) (int64, bool) {
	s, ok := strings.CutPrefix(name, BlockPrefix)
	if !ok {
		return 0, false
	}
	end := strings.IndexAny(s, "_.")
	if end < 0 {
		end = len(s)
	}
	id, err := strconv.ParseInt(s[:end], 10, 64)
	return id, err == nil && end > 0
}

// rollbackPool rolls the block pool storage dir back to previous/ if it
// has one, and says what it did ("" when there was nothing to do).
func rollbackPool(dir hstorage.Dir, ns *hstorage.Version, hit func(failpoint.Name) error) (string, error) {
	fsys := vfs.Default
	has, err := dir.HasPrevious(fsys)
	if err != nil || !has {
		return "", err
	}
	prev, err := dir.ReadPreviousVersion(fsys)
	if err != nil {
		return "", err
	}
	// The state rolled back to must be one this DataNode can run on or
	// upgrade from, and not newer than the namespace.
	if prev.LayoutVersion < hstorage.DataNodeLayoutVersion || prev.LayoutVersion > hstorage.OldestDataNodeLayoutVersion || prev.CTime > ns.CTime {
		return "", fmt.Errorf("%w: %s: Cannot rollback to a newer state. Datanode previous state: LV = %d CTime = %d is newer than the namespace state: LV = %d CTime = %d",
			ErrBadVolume, dir.Root, prev.LayoutVersion, prev.CTime, hstorage.DataNodeLayoutVersion, ns.CTime)
	}
	if err := dir.StartRollback(fsys); err != nil {
		return "", err
	}
	if err := hit(failpoint.DNRollbackAfterRemove); err != nil {
		return "", err
	}
	if err := dir.RestorePrevious(fsys); err != nil {
		return "", err
	}
	if err := hit(failpoint.DNRollbackAfterRestore); err != nil {
		return "", err
	}
	if err := dir.RemoveRemoved(fsys); err != nil {
		return "", err
	}
	return fmt.Sprintf("rolled back to LV = %d CTime = %d", prev.LayoutVersion, prev.CTime), nil
}

// PoolUpgrade is the state of a block pool's storage on one volume.
type PoolUpgrade struct {
	Dir      string            // <vol>/current/<bpid>
	Previous *hstorage.Version // previous/VERSION; nil when finalized
}

// UpgradeState returns, for each volume in service, whether the pool's
// storage keeps a previous state (an upgrade not finalized).
func (d *Dataset) UpgradeState(poolID string) ([]PoolUpgrade, error) {
	var out []PoolUpgrade
	for _, v := range d.Volumes() {
		dir := hstorage.Dir{Root: newPoolLayout(v.Dir(), poolID).root}
		u := PoolUpgrade{Dir: dir.Root}
		has, err := dir.HasPrevious(vfs.Default)
		if err != nil {
			return out, err
		}
		if has {
			if u.Previous, err = dir.ReadPreviousVersion(vfs.Default); err != nil {
				return out, err
			}
		}
		out = append(out, u)
	}
	return out, nil
}

// FinalizeUpgrade carries out DNA_FINALIZE for a block pool: on every
// volume in service whose pool storage keeps previous/, it becomes
// finalized.tmp. It returns those directories, whose finalized.tmp the
// caller deletes with RemoveFinalized (in the background: deleting a tree
// of links takes a while; a crash before it ends is completed at the next
// start).
func (d *Dataset) FinalizeUpgrade(poolID string) ([]hstorage.Dir, error) {
	var out []hstorage.Dir
	var errs []error
	for _, v := range d.Volumes() {
		dir := hstorage.Dir{Root: newPoolLayout(v.Dir(), poolID).root}
		ok, err := dir.StartFinalize(vfs.Default)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue
		}
		if err := d.cfg.Failpoint.Hit(failpoint.DNFinalizeAfterRename); err != nil {
			return out, err
		}
		out = append(out, dir)
	}
	return out, errors.Join(errs...)
}

// RemoveFinalized deletes the finalized.tmp FinalizeUpgrade left in dir,
// file by file, stopping early (with ctx's error) when ctx ends; the next
// start finishes what is left.
func (d *Dataset) RemoveFinalized(ctx context.Context, dir hstorage.Dir) error {
	root := dir.FinalizedTmp()
	removed := 0
	var dirs []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if e.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		removed++
		if removed == 1 {
			return d.cfg.Failpoint.Hit(failpoint.DNFinalizeMidDelete)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("datanode/storage: finalize %s: %w", dir.Root, err)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Remove(dirs[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("datanode/storage: finalize %s: %w", dir.Root, err)
		}
	}
	return dir.RemoveFinalized(vfs.Default) // syncs the root
}
