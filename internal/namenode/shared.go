package namenode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// The shared edits directory of HA (dfs.namenode.shared.edits.dir,
// file://): a storage directory like a name dir's edits part — current/
// with VERSION and the edit segments, written by the active NameNode and
// read by the standby. It is not locked (both NameNodes open it); fencing
// the old active is what keeps two writers out.

// formatShared formats one shared edits dir with the namespace's VERSION
// (asking first, or refusing without Force, when it holds anything).
func formatShared(fsys vfs.FS, uri string, v *storage.Version, now time.Time, opts FormatOptions) error {
	if strings.HasPrefix(uri, "qjournal://") {
		return fmt.Errorf("namenode: formatting %s: qjournal:// shared edits are not supported yet", uri)
	}
	dir, err := sharedDir(uri)
	if err != nil {
		return err
	}
	if err := storage.MkdirAllSync(fsys, dir, 0o700); err != nil {
		return err
	}
	names, err := fsys.List(dir)
	if err != nil {
		return fmt.Errorf("namenode: shared edits dir %s: %w", dir, err)
	}
	if len(names) > 0 && !opts.Force && (opts.Confirm == nil || !opts.Confirm(dir)) {
		return fmt.Errorf("%w: shared edits dir %s is not empty (use -force to wipe it)", ErrFormatRefused, dir)
	}
	return storage.Dir{Root: dir}.Format(fsys, v, now, true)
}

// InitializeSharedEditsOptions are `hdfs namenode -initializeSharedEdits`'s
// choices.
type InitializeSharedEditsOptions struct {
	// Force wipes non-empty shared dirs without asking.
	Force bool
	// Confirm is asked before wiping a non-empty shared dir.
	Confirm func(dir string) bool
}

// InitializeSharedEdits turns a NameNode's local edits into the shared
// edits of an HA nameservice (Hadoop's -initializeSharedEdits, for a
// cluster that starts HA after running without it): it formats every
// shared edits dir with the name dirs' VERSION and copies into them every
// edit segment after the newest image, so that a standby bootstrapped from
// that image finds the edits it needs. The NameNode must be stopped.
func InitializeSharedEdits(ctx context.Context, cfg Config, deps Deps, opts InitializeSharedEditsOptions) error {
	deps.fill()
	if !cfg.HA.Enabled || len(cfg.HA.SharedEditsDirs) == 0 {
		return errors.New("namenode: -initializeSharedEdits needs an HA nameservice with dfs.namenode.shared.edits.dir")
	}
	fsys := deps.FS
	locks, err := lockDirs(fsys, cfg.allDirs())
	if err != nil {
		return err
	}
	defer closeAll(locks)
	v, err := storage.Dir{Root: cfg.NameDirs[0]}.ReadVersion(fsys)
	if err != nil {
		return fmt.Errorf("namenode: reading the name dir's VERSION: %w", err)
	}
	var imageTxID int64 = -1
	for _, d := range cfg.NameDirs {
		imgs, err := fsimage.List(fsys, d)
		if err != nil {
			return err
		}
		for _, im := range imgs {
			imageTxID = max(imageTxID, im.TxID)
		}
	}
	if imageTxID < 0 {
		return fmt.Errorf("%w: no image in %s", ErrNotFormatted, strings.Join(cfg.NameDirs, ","))
	}
	// Finalize what a crash left in progress, so that every segment copied
	// has its final name.
	var local []*editlog.FileJournal
	for _, d := range cfg.EditsDirs {
		j := editlog.NewFileJournal(fsys, storage.Dir{Root: d}.Current())
		if _, err := j.RecoverInProgress(ctx); err != nil {
			return err
		}
		local = append(local, j)
	}
	fopts := FormatOptions{Force: opts.Force, Confirm: opts.Confirm}
	now := deps.Clock.Now()
	for _, u := range cfg.HA.SharedEditsDirs {
		if err := formatShared(fsys, u, v, now, fopts); err != nil {
			return err
		}
		dir, _ := sharedDir(u)
		if err := copySegments(ctx, fsys, local, storage.Dir{Root: dir}.Current(), imageTxID); err != nil {
			return err
		}
		deps.Logger.Info("initialized the shared edits", "dir", dir, "fromTxID", imageTxID+1)
	}
	return nil
}

// copySegments copies the finalized segments holding txids after txid,
// from the first journal that has each, into dst (tmp, fsync, rename).
func copySegments(ctx context.Context, fsys vfs.FS, journals []*editlog.FileJournal, dst string, txid int64) error {
	next := txid + 1
	for {
		var src *editlog.FileJournal
		var seg editlog.SegmentInfo
		for _, j := range journals {
			segs, err := j.Segments(ctx)
			if err != nil {
				return err
			}
			for _, s := range segs {
				if !s.InProgress && s.First <= next && s.Last >= next && (src == nil || s.Last > seg.Last) {
					src, seg = j, s
				}
			}
		}
		if src == nil {
			return nil
		}
		if err := copyFile(fsys, filepath.Join(src.Dir(), seg.Name), filepath.Join(dst, seg.Name)); err != nil {
			return err
		}
		next = seg.Last + 1
	}
}

func copyFile(fsys vfs.FS, from, to string) error {
	in, err := fsys.Open(from)
	if err != nil {
		return fmt.Errorf("namenode: copy %s: %w", from, err)
	}
	defer in.Close()
	tmp := to + ".tmp"
	out, err := fsys.Create(tmp)
	if err != nil {
		return fmt.Errorf("namenode: copy to %s: %w", tmp, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("namenode: copy %s: %w", from, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return fmt.Errorf("namenode: sync %s: %w", tmp, err)
	}
	if err := out.Close(); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, to); err != nil {
		return err
	}
	return fsys.SyncDir(filepath.Dir(to))
}
