package storage

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// Directories of a storage transition, beside current/ in a storage
// directory's root. Part of the on-disk layout (Hadoop's names).
const (
	PreviousDirName       = "previous"           // the state before the last upgrade, until finalized or rolled back to
	PreviousTmpName       = "previous.tmp"       // the old current/ while an upgrade builds the new one
	RemovedTmpName        = "removed.tmp"        // the upgraded current/ while a rollback puts previous/ back
	FinalizedTmpName      = "finalized.tmp"      // previous/ while a finalize deletes it
	LastCheckpointTmpName = "lastcheckpoint.tmp" // Hadoop's, left by a checkpoint import
)

// Previous returns <root>/previous.
func (d Dir) Previous() string { return filepath.Join(d.Root, PreviousDirName) }

// PreviousTmp returns <root>/previous.tmp.
func (d Dir) PreviousTmp() string { return filepath.Join(d.Root, PreviousTmpName) }

// RemovedTmp returns <root>/removed.tmp.
func (d Dir) RemovedTmp() string { return filepath.Join(d.Root, RemovedTmpName) }

// FinalizedTmp returns <root>/finalized.tmp.
func (d Dir) FinalizedTmp() string { return filepath.Join(d.Root, FinalizedTmpName) }

// PreviousVersionPath returns <root>/previous/VERSION.
func (d Dir) PreviousVersionPath() string {
	return filepath.Join(d.Root, PreviousDirName, VersionFileName)
}

// ReadPreviousVersion reads previous/VERSION.
func (d Dir) ReadPreviousVersion(fsys vfs.FS) (*Version, error) {
	return ReadVersion(fsys, d.PreviousVersionPath())
}

// DirState says which of a storage directory's transition directories
// exist: the input of Decide.
type DirState struct {
	Version      bool // current/VERSION
	Current      bool // current/ (with or without VERSION)
	Previous     bool
	PreviousTmp  bool
	RemovedTmp   bool
	FinalizedTmp bool
	// LastCheckpointTmp is Hadoop's lastcheckpoint.tmp (a checkpoint
	// import); hdfsgo never makes one.
	LastCheckpointTmp bool
}

func (s DirState) String() string {
	var parts []string
	add := func(ok bool, name string) {
		if ok {
			parts = append(parts, name)
		}
	}
	add(s.Current && s.Version, "current")
	add(s.Current && !s.Version, "current (no VERSION)")
	add(s.Previous, PreviousDirName)
	add(s.PreviousTmp, PreviousTmpName)
	add(s.RemovedTmp, RemovedTmpName)
	add(s.FinalizedTmp, FinalizedTmpName)
	add(s.LastCheckpointTmp, LastCheckpointTmpName)
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// Repair is what Decide says a storage directory needs at start-up, after a
// crash interrupted (or did not interrupt) a transition.
type Repair int

// Repairs, with the transition step a crash interrupted.
const (
	// RepairNone: no transition was interrupted; current/ has a VERSION.
	RepairNone Repair = iota
	// RepairNotFormatted: no VERSION and nothing to recover.
	RepairNotFormatted
	// RepairCompleteUpgrade: the new current/ was complete (its VERSION
	// is written last); previous.tmp becomes previous.
	RepairCompleteUpgrade
	// RepairRecoverUpgrade: the new current/ was not complete; it is
	// removed and previous.tmp becomes current again.
	RepairRecoverUpgrade
	// RepairCompleteRollback: previous/ was already current/ again;
	// removed.tmp (the upgraded state) is deleted.
	RepairCompleteRollback
	// RepairRecoverRollback: current/ had been moved aside but previous/
	// not yet put in its place; removed.tmp becomes current again (a
	// rollback asked for again starts over).
	RepairRecoverRollback
	// RepairCompleteFinalize: previous/ had become finalized.tmp; it is
	// deleted.
	RepairCompleteFinalize
)

func (r Repair) String() string {
	switch r {
	case RepairNone:
		return "none"
	case RepairNotFormatted:
		return "not formatted"
	case RepairCompleteUpgrade:
		return "complete the upgrade (previous.tmp → previous)"
	case RepairRecoverUpgrade:
		return "undo the upgrade (remove the new current, previous.tmp → current)"
	case RepairCompleteRollback:
		return "complete the rollback (remove removed.tmp)"
	case RepairRecoverRollback:
		return "undo the rollback (removed.tmp → current)"
	case RepairCompleteFinalize:
		return "complete the finalize (remove finalized.tmp)"
	}
	return "Repair(" + strconv.Itoa(int(r)) + ")"
}

// Decide is the pure rule (Hadoop's Storage.analyzeStorage) that says from
// which directories exist what a crash interrupted and how to repair it.
// The new current/ of an upgrade gets its VERSION last, so a VERSION in
// current/ says that the state in it is complete. At most one temporary
// directory can exist, since each transition starts only from a clean
// directory; anything else is an error wrapping ErrInconsistentState that
// names what was found, and the directory is left for the operator.
func Decide(s DirState) (Repair, error) {
	bad := func(why string) (Repair, error) {
		return 0, fmt.Errorf("%w: found %s: %s", ErrInconsistentState, s, why)
	}
	tmps := 0
	for _, ok := range []bool{s.PreviousTmp, s.RemovedTmp, s.FinalizedTmp, s.LastCheckpointTmp} {
		if ok {
			tmps++
		}
	}
	switch {
	case tmps == 0 && s.Version:
		return RepairNone, nil
	case tmps == 0 && s.Previous:
		return bad("current/VERSION is missing")
	case tmps == 0:
		return RepairNotFormatted, nil
	case tmps > 1:
		return bad("more than one temporary directory")
	case s.LastCheckpointTmp:
		return bad("lastcheckpoint.tmp is left by a Hadoop checkpoint import, which hdfsgo does not recover")
	case s.FinalizedTmp && s.Previous:
		return bad("previous and finalized.tmp cannot exist together")
	case s.FinalizedTmp:
		return RepairCompleteFinalize, nil
	case s.PreviousTmp && s.Previous:
		return bad("previous and previous.tmp cannot exist together")
	case s.PreviousTmp && s.Version:
		return RepairCompleteUpgrade, nil
	case s.PreviousTmp:
		return RepairRecoverUpgrade, nil
	case s.Version == s.Previous:
		return bad("exactly one of current and previous must exist beside removed.tmp")
	case s.Version:
		return RepairCompleteRollback, nil
	case s.Current:
		return bad("current/ without a VERSION beside removed.tmp and previous")
	}
	return RepairRecoverRollback, nil
}

// Inspect reports which of d's transition directories exist.
func (d Dir) Inspect(fsys vfs.FS) (DirState, error) {
	var s DirState
	exists := func(p string) (bool, error) {
		_, err := fsys.Stat(p)
		if err == nil {
			return true, nil
		}
		if isNotExist(err) {
			return false, nil
		}
		return false, fmt.Errorf("storage: stat %s: %w", p, err)
	}
	var err error
	for _, c := range []struct {
		dst  *bool
		path string
	}{
		{&s.Current, d.Current()}, {&s.Version, d.VersionPath()}, {&s.Previous, d.Previous()},
		{&s.PreviousTmp, d.PreviousTmp()}, {&s.RemovedTmp, d.RemovedTmp()},
		{&s.FinalizedTmp, d.FinalizedTmp()}, {&s.LastCheckpointTmp, filepath.Join(d.Root, LastCheckpointTmpName)},
	} {
		if *c.dst, err = exists(c.path); err != nil {
			return s, err
		}
	}
	return s, nil
}

// Recover inspects d, decides (Decide) and carries out the repair, each
// step synced: after it returns nil the directory holds current/ (or is
// not formatted) and at most previous/. It returns the repair done.
func (d Dir) Recover(fsys vfs.FS) (Repair, error) {
	s, err := d.Inspect(fsys)
	if err != nil {
		return 0, err
	}
	r, err := Decide(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", d.Root, err)
	}
	switch r {
	case RepairCompleteUpgrade:
		err = d.rename(fsys, d.PreviousTmp(), d.Previous())
	case RepairRecoverUpgrade:
		if s.Current {
			err = d.removeAll(fsys, d.Current())
		}
		if err == nil {
			err = d.rename(fsys, d.PreviousTmp(), d.Current())
		}
	case RepairCompleteRollback:
		err = d.removeAll(fsys, d.RemovedTmp())
	case RepairRecoverRollback:
		err = d.rename(fsys, d.RemovedTmp(), d.Current())
	case RepairCompleteFinalize:
		err = d.removeAll(fsys, d.FinalizedTmp())
	}
	return r, err
}

// HasPrevious reports whether d holds previous/ (an upgrade not finalized).
func (d Dir) HasPrevious(fsys vfs.FS) (bool, error) {
	_, err := fsys.Stat(d.Previous())
	if err == nil {
		return true, nil
	}
	if isNotExist(err) {
		return false, nil
	}
	return false, fmt.Errorf("storage: stat %s: %w", d.Previous(), err)
}

// The steps of the transitions. Each is one rename (or one deletion) made
// durable by syncing the root before it returns, so that a crash between
// two of them leaves a state Decide recognises.
//
//	upgrade   StartUpgrade     current → previous.tmp, new empty current
//	          (the caller fills the new current, VERSION last)
//	          CompleteUpgrade  previous.tmp → previous
//	rollback  StartRollback    current → removed.tmp
//	          RestorePrevious  previous → current
//	          RemoveRemoved    delete removed.tmp
//	finalize  StartFinalize    previous → finalized.tmp
//	          RemoveFinalized  delete finalized.tmp

// StartUpgrade moves current/ aside as previous.tmp and makes a new, empty
// current/. d must hold current/ and neither previous nor previous.tmp.
func (d Dir) StartUpgrade(fsys vfs.FS) error {
	s, err := d.Inspect(fsys)
	if err != nil {
		return err
	}
	if !s.Version || s.Previous || s.PreviousTmp || s.RemovedTmp || s.FinalizedTmp {
		return fmt.Errorf("%w: %s: an upgrade starts from current only, found %s", ErrInconsistentState, d.Root, s)
	}
	if err := d.rename(fsys, d.Current(), d.PreviousTmp()); err != nil {
		return err
	}
	if err := fsys.MkdirAll(d.Current(), 0o700); err != nil {
		return fmt.Errorf("storage: create %s: %w", d.Current(), err)
	}
	return d.syncRoot(fsys)
}

// CompleteUpgrade renames previous.tmp to previous: the caller has written
// the new current/ completely, its VERSION last.
func (d Dir) CompleteUpgrade(fsys vfs.FS) error {
	return d.rename(fsys, d.PreviousTmp(), d.Previous())
}

// StartRollback moves current/ aside as removed.tmp; d must hold previous/.
func (d Dir) StartRollback(fsys vfs.FS) error {
	s, err := d.Inspect(fsys)
	if err != nil {
		return err
	}
	if !s.Previous || !s.Current || s.PreviousTmp || s.RemovedTmp || s.FinalizedTmp {
		return fmt.Errorf("%w: %s: a rollback starts from current and previous only, found %s", ErrInconsistentState, d.Root, s)
	}
	return d.rename(fsys, d.Current(), d.RemovedTmp())
}

// RestorePrevious renames previous to current (after StartRollback).
func (d Dir) RestorePrevious(fsys vfs.FS) error {
	return d.rename(fsys, d.Previous(), d.Current())
}

// RemoveRemoved deletes removed.tmp, the state a rollback left behind.
func (d Dir) RemoveRemoved(fsys vfs.FS) error { return d.removeAll(fsys, d.RemovedTmp()) }

// StartFinalize renames previous to finalized.tmp; ok is false (and nothing
// is done) when d holds no previous/.
func (d Dir) StartFinalize(fsys vfs.FS) (ok bool, err error) {
	has, err := d.HasPrevious(fsys)
	if err != nil || !has {
		return false, err
	}
	return true, d.rename(fsys, d.Previous(), d.FinalizedTmp())
}

// RemoveFinalized deletes finalized.tmp.
func (d Dir) RemoveFinalized(fsys vfs.FS) error { return d.removeAll(fsys, d.FinalizedTmp()) }

func (d Dir) rename(fsys vfs.FS, from, to string) error {
	if err := fsys.Rename(from, to); err != nil {
		return fmt.Errorf("storage: rename %s to %s: %w", from, to, err)
	}
	return d.syncRoot(fsys)
}

func (d Dir) removeAll(fsys vfs.FS, p string) error {
	if err := fsys.RemoveAll(p); err != nil && !isNotExist(err) {
		return fmt.Errorf("storage: remove %s: %w", p, err)
	}
	return d.syncRoot(fsys)
}

func (d Dir) syncRoot(fsys vfs.FS) error {
	if err := fsys.SyncDir(d.Root); err != nil {
		return fmt.Errorf("storage: sync dir %s: %w", d.Root, err)
	}
	return nil
}
