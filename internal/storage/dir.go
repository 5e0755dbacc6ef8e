package storage

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// File and directory names inside a storage directory. Part of the on-disk
// layout (Hadoop's names).
const (
	CurrentDirName  = "current"
	VersionFileName = "VERSION"
	SeenTxIDName    = "seen_txid"

	ImagePrefix      = "fsimage_"
	CheckpointPrefix = "fsimage.ckpt_"
	MD5Suffix        = ".md5"
)

// isHadoopTmpDir reports whether name is one of the directories an upgrade,
// rollback, finalize or (Hadoop's) checkpoint import leaves behind when it
// is interrupted (see transition.go; Dir.Recover repairs all but the last).
func isHadoopTmpDir(name string) bool {
	switch name {
	case "previous.tmp", "removed.tmp", "finalized.tmp", "lastcheckpoint.tmp", "previous.checkpoint":
		return true
	}
	return false
}

// Dir is a storage directory: Root holds in_use.lock and current/. The zero
// value is not usable; set Root.
type Dir struct {
	Root string
}

// Current returns <root>/current.
func (d Dir) Current() string { return filepath.Join(d.Root, CurrentDirName) }

// VersionPath returns <root>/current/VERSION.
func (d Dir) VersionPath() string { return filepath.Join(d.Root, CurrentDirName, VersionFileName) }

// LockPath returns <root>/in_use.lock.
func (d Dir) LockPath() string { return filepath.Join(d.Root, LockFileName) }

// Lock takes the directory's in_use.lock (see Lock).
func (d Dir) Lock(fsys vfs.FS) (io.Closer, error) { return Lock(fsys, d.Root) }

// ReadVersion reads current/VERSION.
func (d Dir) ReadVersion(fsys vfs.FS) (*Version, error) { return ReadVersion(fsys, d.VersionPath()) }

// WriteVersion atomically replaces current/VERSION.
func (d Dir) WriteVersion(fsys vfs.FS, v *Version, now time.Time) error {
	return WriteVersion(fsys, d.VersionPath(), v, now)
}

// Format makes d a fresh, formatted directory: an empty current/ holding only
// VERSION. If the root already has contents (anything but in_use.lock) Format
// returns an error wrapping ErrNotEmpty unless force is set, in which case
// current/ and everything else in the root except the lock file is removed
// first. The caller holds the lock (or the directory is new); deciding whether
// to ask the operator is the command line's business.
func (d Dir) Format(fsys vfs.FS, v *Version, now time.Time, force bool) error {
	if err := v.Validate(d.VersionPath()); err != nil {
		return err
	}
	if err := MkdirAllSync(fsys, d.Root, 0o700); err != nil {
		return err
	}
	names, err := fsys.List(d.Root)
	if err != nil {
		return fmt.Errorf("storage: list %s: %w", d.Root, err)
	}
	var existing []string
	for _, n := range names {
		if n != LockFileName {
			existing = append(existing, n)
		}
	}
	if len(existing) > 0 {
		if !force {
			return fmt.Errorf("%w: %s holds %s", ErrNotEmpty, d.Root, strings.Join(existing, ", "))
		}
		for _, n := range existing {
			p := filepath.Join(d.Root, n)
			if err := fsys.RemoveAll(p); err != nil {
				return fmt.Errorf("storage: remove %s: %w", p, err)
			}
		}
	}
	if err := fsys.MkdirAll(d.Current(), 0o700); err != nil {
		return fmt.Errorf("storage: create %s: %w", d.Current(), err)
	}
	if err := fsys.SyncDir(d.Root); err != nil {
		return fmt.Errorf("storage: sync dir %s: %w", d.Root, err)
	}
	return d.WriteVersion(fsys, v, now)
}

// State is what Analyze found.
type State int

// States of a storage directory.
const (
	// StateNonExistent: the root does not exist.
	StateNonExistent State = iota
	// StateNotFormatted: the root exists but current/VERSION does not.
	StateNotFormatted
	// StateFormatted: current/VERSION exists (whether it is valid is for
	// ReadVersion to say).
	StateFormatted
)

func (s State) String() string {
	switch s {
	case StateNonExistent:
		return "non-existent"
	case StateNotFormatted:
		return "not formatted"
	case StateFormatted:
		return "formatted"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Analysis is the result of Analyze.
type Analysis struct {
	State State
	// Leftovers are paths of files and directories an interrupted operation
	// left behind: *.tmp files of AtomicWriteFile, fsimage.ckpt_* files of an
	// unfinished image save, and the temporary directories of an upgrade,
	// rollback, finalize or checkpoint import. Startup removes the first two
	// kinds (fsimage.CleanCheckpoints and RemoveTmpFiles) and repairs the
	// last (Dir.Recover).
	Leftovers []string
}

// Analyze reports whether d is formatted and what an interrupted operation
// left in it. It changes nothing.
func (d Dir) Analyze(fsys vfs.FS) (Analysis, error) {
	var a Analysis
	if _, err := fsys.Stat(d.Root); err != nil {
		if isNotExist(err) {
			return a, nil
		}
		return a, fmt.Errorf("storage: stat %s: %w", d.Root, err)
	}
	a.State = StateNotFormatted
	rootNames, err := fsys.List(d.Root)
	if err != nil {
		return a, fmt.Errorf("storage: list %s: %w", d.Root, err)
	}
	hasCurrent := false
	for _, n := range rootNames {
		if n == CurrentDirName {
			hasCurrent = true
		}
		if isHadoopTmpDir(n) {
			a.Leftovers = append(a.Leftovers, filepath.Join(d.Root, n))
		}
	}
	if !hasCurrent {
		return a, nil
	}
	names, err := fsys.List(d.Current())
	if err != nil {
		return a, fmt.Errorf("storage: list %s: %w", d.Current(), err)
	}
	for _, n := range names {
		switch {
		case n == VersionFileName:
			a.State = StateFormatted
		case strings.HasSuffix(n, TmpSuffix), strings.HasPrefix(n, CheckpointPrefix):
			a.Leftovers = append(a.Leftovers, filepath.Join(d.Current(), n))
		}
	}
	return a, nil
}

// RemoveTmpFiles removes the *.tmp files AtomicWriteFile may have left in
// current/ after a crash, and syncs the directory if it removed any.
func (d Dir) RemoveTmpFiles(fsys vfs.FS) error {
	names, err := fsys.List(d.Current())
	if err != nil {
		return fmt.Errorf("storage: list %s: %w", d.Current(), err)
	}
	removed := false
	for _, n := range names {
		if strings.HasSuffix(n, TmpSuffix) {
			p := filepath.Join(d.Current(), n)
			if err := fsys.Remove(p); err != nil && !isNotExist(err) {
				return fmt.Errorf("storage: remove %s: %w", p, err)
			}
			removed = true
		}
	}
	if removed {
		if err := fsys.SyncDir(d.Current()); err != nil {
			return fmt.Errorf("storage: sync dir %s: %w", d.Current(), err)
		}
	}
	return nil
}

// NameDir is a NameNode name directory (dfs.namenode.name.dir entry).
type NameDir struct {
	Dir
}

// NewNameDir returns the NameDir rooted at root.
func NewNameDir(root string) NameDir { return NameDir{Dir{Root: root}} }

// SeenTxIDPath returns <root>/current/seen_txid.
func (d NameDir) SeenTxIDPath() string { return filepath.Join(d.Current(), SeenTxIDName) }

// ImageName returns "fsimage_<txid:019d>".
func ImageName(txid int64) string { return fmt.Sprintf("%s%019d", ImagePrefix, txid) }

// CheckpointName returns "fsimage.ckpt_<txid:019d>".
func CheckpointName(txid int64) string { return fmt.Sprintf("%s%019d", CheckpointPrefix, txid) }

// ImagePath returns <root>/current/fsimage_<txid:019d>.
func (d NameDir) ImagePath(txid int64) string { return filepath.Join(d.Current(), ImageName(txid)) }

// ImageMD5Path returns <root>/current/fsimage_<txid:019d>.md5.
func (d NameDir) ImageMD5Path(txid int64) string { return d.ImagePath(txid) + MD5Suffix }

// CheckpointPath returns <root>/current/fsimage.ckpt_<txid:019d>.
func (d NameDir) CheckpointPath(txid int64) string {
	return filepath.Join(d.Current(), CheckpointName(txid))
}

// CheckpointMD5Path returns <root>/current/fsimage.ckpt_<txid:019d>.md5.
func (d NameDir) CheckpointMD5Path(txid int64) string { return d.CheckpointPath(txid) + MD5Suffix }

// FileKind classifies a name found in current/ by ParseImageName.
type FileKind int

// Kinds of image-related files.
const (
	KindImage         FileKind = iota + 1 // fsimage_<txid>
	KindImageMD5                          // fsimage_<txid>.md5
	KindCheckpoint                        // fsimage.ckpt_<txid>
	KindCheckpointMD5                     // fsimage.ckpt_<txid>.md5
)

// ParseImageName recognises the image file names of a name dir's current/
// and returns the kind and txid; ok is false for any other name (edits,
// VERSION, Hadoop's fsimage_rollback_*, …).
func ParseImageName(name string) (kind FileKind, txid int64, ok bool) {
	rest, isMD5 := strings.CutSuffix(name, MD5Suffix)
	switch {
	case strings.HasPrefix(rest, ImagePrefix):
		rest, kind = rest[len(ImagePrefix):], KindImage
	case strings.HasPrefix(rest, CheckpointPrefix):
		rest, kind = rest[len(CheckpointPrefix):], KindCheckpoint
	default:
		return 0, 0, false
	}
	if len(rest) != 19 {
		return 0, 0, false
	}
	for _, c := range []byte(rest) {
		if c < '0' || c > '9' {
			return 0, 0, false
		}
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if isMD5 {
		kind++
	}
	return kind, n, true
}

// ReadSeenTxID reads current/seen_txid: the highest txid this NameNode knows
// was written (a decimal number, optionally followed by a newline).
func (d NameDir) ReadSeenTxID(fsys vfs.FS) (int64, error) {
	p := d.SeenTxIDPath()
	data, err := ReadFile(fsys, p)
	if err != nil {
		return 0, err
	}
	s := string(bytes.TrimSpace(data))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w %s: %q is not a txid", ErrInvalidSeenTxID, p, s)
	}
	return n, nil
}

// WriteSeenTxID atomically replaces current/seen_txid with txid.
func (d NameDir) WriteSeenTxID(fsys vfs.FS, txid int64) error {
	if txid < 0 {
		return fmt.Errorf("%w: negative txid %d", ErrInvalidSeenTxID, txid)
	}
	return AtomicWriteFile(fsys, d.SeenTxIDPath(), []byte(strconv.FormatInt(txid, 10)+"\n"))
}
