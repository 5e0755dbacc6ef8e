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
	qjclient "github.com/hdfsgo/hdfsgo/internal/qjournal/client"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// The shared edits directory of HA (dfs.namenode.shared.edits.dir,
// file://): a storage directory like a name dir's edits part — current/
// with VERSION and the edit segments, written by the active NameNode and
// read by the standby. It is not locked (both NameNodes open it); fencing
// the old active is what keeps two writers out.

// formatShared formats one shared edits dir with the namespace's VERSION
// (asking first, or refusing without Force, when it holds anything); for
// qjournal:// it formats the journal on every JournalNode.
func formatShared(ctx context.Context, deps *Deps, uri string, v *storage.Version, now time.Time, opts FormatOptions) error {
	if isQuorumURI(uri) {
		return formatQuorum(ctx, deps, uri, v, opts)
	}
	fsys := deps.FS
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

// formatQuorum formats the journal of a qjournal:// URI on every
// JournalNode; when one holds a formatted journal the operator is asked
// (or -force given) first, as for a directory.
func formatQuorum(ctx context.Context, deps *Deps, uri string, v *storage.Version, opts FormatOptions) error {
	j, err := deps.Journals(uri, v)
	if err != nil {
		return err
	}
	defer j.Close()
	q, ok := j.(*qjclient.Manager)
	if !ok {
		return fmt.Errorf("namenode: %s: the journal factory built %s, which cannot be formatted", uri, j)
	}
	has, err := q.HasSomeData(ctx)
	if err != nil {
		return err
	}
	force := opts.Force
	if has && !force {
		if opts.Confirm == nil || !opts.Confirm(uri) {
			return fmt.Errorf("%w: the JournalNodes of %s hold a formatted journal (use -force to wipe it)", ErrFormatRefused, uri)
		}
		force = true
	}
	if err := q.Format(ctx, force); err != nil {
		return err
	}
	deps.Logger.Info("formatted the JournalNodes", "uri", uri)
	return nil
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
	deps.fill(&cfg)
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
		if err := formatShared(ctx, &deps, u, v, now, fopts); err != nil {
			return err
		}
		if isQuorumURI(u) {
			if err := copySegmentsToQuorum(ctx, &deps, u, v, local, imageTxID); err != nil {
				return err
			}
			deps.Logger.Info("initialized the shared edits", "uri", u, "fromTxID", imageTxID+1)
			continue
		}
		dir, _ := sharedDir(u)
		if err := copySegments(ctx, fsys, local, storage.Dir{Root: dir}.Current(), imageTxID); err != nil {
			return err
		}
		deps.Logger.Info("initialized the shared edits", "dir", dir, "fromTxID", imageTxID+1)
	}
	return nil
}

// copySegmentsToQuorum writes the finalized segments holding txids after
// txid into a freshly formatted quorum journal, segment by segment, as a
// writer would: it takes the first epoch, then starts, writes (whole
// records, at most copyBatchBytes at a time), flushes and finalizes each.
func copySegmentsToQuorum(ctx context.Context, deps *Deps, uri string, v *storage.Version, local []*editlog.FileJournal, txid int64) error {
	j, err := deps.Journals(uri, v)
	if err != nil {
		return err
	}
	defer j.Close()
	if _, err := j.RecoverInProgress(ctx); err != nil {
		return err
	}
	next := txid + 1
	for {
		var src *editlog.FileJournal
		var seg editlog.SegmentInfo
		for _, lj := range local {
			segs, err := lj.Segments(ctx)
			if err != nil {
				return err
			}
			for _, s := range segs {
				if !s.InProgress && s.First <= next && s.Last >= next && (src == nil || s.Last > seg.Last) {
					src, seg = lj, s
				}
			}
		}
		if src == nil {
			return nil
		}
		if seg.First != next {
			return fmt.Errorf("namenode: the local edits hold segment %d-%d, which does not start at txid %d: the quorum journal takes whole segments", seg.First, seg.Last, next)
		}
		if err := copySegment(ctx, src, seg, j); err != nil {
			return fmt.Errorf("namenode: copying %s to %s: %w", seg.Name, uri, err)
		}
		next = seg.Last + 1
	}
}

// copyBatchBytes bounds one journal() batch of the copy.
const copyBatchBytes = 1 << 20

func copySegment(ctx context.Context, src *editlog.FileJournal, seg editlog.SegmentInfo, dst editlog.Journal) error {
	r, err := src.OpenForRead(ctx, seg)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := dst.StartSegment(ctx, seg.First); err != nil {
		return err
	}
	var batch []byte
	first, last := seg.First, seg.First-1
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := dst.Write(ctx, batch, first, last); err != nil {
			return err
		}
		if err := dst.Flush(ctx); err != nil {
			return err
		}
		batch, first = batch[:0], last+1
		return nil
	}
	for {
		txid, o, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if txid != last+1 {
			return fmt.Errorf("txid %d follows %d", txid, last)
		}
		if batch, err = editlog.EncodeRecord(batch, txid, o); err != nil {
			return err
		}
		last = txid
		if len(batch) >= copyBatchBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if last != seg.Last {
		return fmt.Errorf("the segment ends at txid %d, its name says %d", last, seg.Last)
	}
	return dst.FinalizeSegment(ctx, seg.First, seg.Last)
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
