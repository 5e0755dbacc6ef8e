package editlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"sync"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// SegmentInfo describes one segment of a journal.
type SegmentInfo struct {
	First int64
	// Last is the last txid of a finalized segment, or of an in-progress one
	// whose end recovery established; -1 when unknown.
	Last       int64
	InProgress bool
	// Name identifies the segment inside its journal (the file name for a
	// FileJournal).
	Name string
}

// Reader yields the records of one segment in order. Next returns io.EOF at a
// clean end, and the decoder's *TornRecordError or *CorruptionError otherwise.
type Reader interface {
	Next() (txid int64, o op.Op, err error)
	Close() error
}

// Journal is one copy of the edit log: a local edits directory, and later a
// quorum of JournalNodes or a backup node's stream. The Log drives a set of
// them. It calls the write-path methods (StartSegment, Write, Flush,
// FinalizeSegment) one at a time, but Segments, OpenForRead and PurgeBefore
// may run concurrently with them, so implementations must be safe for
// concurrent use.
//
// The segment protocol: StartSegment(first) creates the segment and makes its
// existence durable; the first batch the Log writes into it begins with the
// op.StartLogSegment record (txid first), the Log encodes it, not the journal.
// A segment that is finalized normally ends with an op.EndLogSegment record;
// one finalized by recovery ends wherever the durable records end.
type Journal interface {
	// String names the journal in logs and errors.
	String() string
	// StartSegment creates the in-progress segment whose first txid is txid.
	StartSegment(ctx context.Context, txid int64) error
	// Write appends pre-encoded records firstTxID..lastTxID to the open
	// segment. It need not be durable before Flush.
	Write(ctx context.Context, batch []byte, firstTxID, lastTxID int64) error
	// Flush makes everything written so far durable.
	Flush(ctx context.Context) error
	// FinalizeSegment closes the segment first..last and makes it durable
	// under its final name.
	FinalizeSegment(ctx context.Context, first, last int64) error
	// Segments lists finalized and in-progress segments, sorted by first txid
	// (a finalized segment before an in-progress one with the same first).
	Segments(ctx context.Context) ([]SegmentInfo, error)
	// OpenForRead opens one segment as listed by Segments.
	OpenForRead(ctx context.Context, seg SegmentInfo) (Reader, error)
	// RecoverInProgress is called at startup before any segment is started:
	// it cuts a torn final record from every in-progress segment, finalizes
	// each one that holds records (sets aside ones that hold none) and
	// returns the recovered segments. Corruption before the tail is returned
	// as a *CorruptionError and the segment is left untouched.
	RecoverInProgress(ctx context.Context) ([]SegmentInfo, error)
	// PurgeBefore deletes finalized segments that lie wholly below txid.
	PurgeBefore(ctx context.Context, txid int64) error
	// Close releases the journal without finalizing an open segment.
	Close() error
}

// FileJournal is a Journal over one edits directory (a name dir's current/).
// It is safe for concurrent use.
type FileJournal struct {
	fs  vfs.FS
	dir string

	mu struct {
		sync.Mutex
		f      vfs.File // open in-progress segment, or nil
		first  int64    // its first txid
		next   int64    // txid the next Write must start with
		pos    int64    // end of the records written to f: where the next Write goes
		alloc  int64    // length of f: records, then zero fill from pos on
		closed bool
	}

	// resume is where the last read of an in-progress segment stopped
	// (OpenForReadFrom).
	resume struct {
		sync.Mutex
		name string // the segment's file name
		txid int64  // the last record read
		off  int64  // the offset just past it
	}
}

// PreallocateBytes is the size of the zero-filled chunks a FileJournal adds
// to its in-progress segment ahead of the records (Hadoop's edit log file
// stream preallocates 1 MiB the same way). A record then overwrites space the
// file already has, so the fdatasync after it flushes the data alone: the
// file's size, and with it the file system's journal, changes once a
// chunk instead of on every flush. Readers take the zero fill after the last
// record for a torn tail (see the package doc); finalizing cuts it off.
const PreallocateBytes = 1 << 20

// NewFileJournal returns a journal over dir, which must exist.
func NewFileJournal(fsys vfs.FS, dir string) *FileJournal {
	return &FileJournal{fs: fsys, dir: dir}
}

// String returns the directory.
func (j *FileJournal) String() string { return "file:" + j.dir }

// Dir is the edits directory.
func (j *FileJournal) Dir() string { return j.dir }

func (j *FileJournal) path(name string) string { return filepath.Join(j.dir, name) }

// StartSegment creates edits_inprogress_<txid>, writes the header, and syncs
// the file and the directory.
func (j *FileJournal) StartSegment(_ context.Context, txid int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.mu.closed {
		return fmt.Errorf("%w: journal %s is closed", ErrState, j.dir)
	}
	if j.mu.f != nil {
		return fmt.Errorf("%w: journal %s: segment %d is still open", ErrState, j.dir, j.mu.first)
	}
	if txid < 1 {
		return fmt.Errorf("editlog: start segment at invalid txid %d", txid)
	}
	name := j.path(InProgressName(txid))
	if _, err := j.fs.Stat(name); err == nil {
		return fmt.Errorf("editlog: journal %s: %s already exists", j.dir, InProgressName(txid))
	}
	f, err := j.fs.Create(name)
	if err != nil {
		return fmt.Errorf("editlog: journal %s: %w", j.dir, err)
	}
	var hdr [SegmentHeaderSize]byte
	if _, err := f.Write(AppendSegmentHeader(hdr[:0])); err != nil {
		f.Close()
		return fmt.Errorf("editlog: journal %s: write header: %w", j.dir, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("editlog: journal %s: sync header: %w", j.dir, err)
	}
	if err := j.fs.SyncDir(j.dir); err != nil {
		f.Close()
		return fmt.Errorf("editlog: journal %s: sync dir: %w", j.dir, err)
	}
	j.mu.f, j.mu.first, j.mu.next = f, txid, txid
	j.mu.pos, j.mu.alloc = SegmentHeaderSize, SegmentHeaderSize
	return nil
}

// preallocateLocked extends the open segment with zero chunks until n more
// bytes fit after pos, and leaves the file offset at pos.
func (j *FileJournal) preallocateLocked(n int64) error {
	if j.mu.pos+n <= j.mu.alloc {
		return nil
	}
	f := j.mu.f
	if _, err := f.Seek(j.mu.alloc, io.SeekStart); err != nil {
		return err
	}
	var zero [64 << 10]byte
	for j.mu.pos+n > j.mu.alloc {
		for left := int64(PreallocateBytes); left > 0; {
			w := min(left, int64(len(zero)))
			if _, err := f.Write(zero[:w]); err != nil {
				return err
			}
			left -= w
			j.mu.alloc += w
		}
	}
	_, err := f.Seek(j.mu.pos, io.SeekStart)
	return err
}

// Write appends batch to the open segment.
func (j *FileJournal) Write(_ context.Context, batch []byte, firstTxID, lastTxID int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.mu.f == nil {
		return fmt.Errorf("%w: journal %s: no open segment", ErrState, j.dir)
	}
	if firstTxID != j.mu.next || lastTxID < firstTxID {
		return fmt.Errorf("editlog: journal %s: write of txids %d-%d, expected to start at %d", j.dir, firstTxID, lastTxID, j.mu.next)
	}
	if err := j.preallocateLocked(int64(len(batch))); err != nil {
		return fmt.Errorf("editlog: journal %s: preallocate for txids %d-%d: %w", j.dir, firstTxID, lastTxID, err)
	}
	if _, err := j.mu.f.Write(batch); err != nil {
		return fmt.Errorf("editlog: journal %s: write txids %d-%d: %w", j.dir, firstTxID, lastTxID, err)
	}
	j.mu.next = lastTxID + 1
	j.mu.pos += int64(len(batch))
	return nil
}

// Flush fdatasyncs the open segment.
func (j *FileJournal) Flush(context.Context) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.mu.f == nil {
		return fmt.Errorf("%w: journal %s: no open segment", ErrState, j.dir)
	}
	if err := j.mu.f.Sync(); err != nil {
		return fmt.Errorf("editlog: journal %s: sync: %w", j.dir, err)
	}
	return nil
}

// FinalizeSegment closes the open segment (which must hold exactly
// first..last; its zero fill is cut off) or, with no open segment, an
// in-progress file left by an earlier run, renames it to edits_<first>-<last>
// and syncs the directory.
func (j *FileJournal) FinalizeSegment(_ context.Context, first, last int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if last < first {
		return fmt.Errorf("editlog: journal %s: finalize %d-%d: last before first", j.dir, first, last)
	}
	if f := j.mu.f; f != nil {
		if j.mu.first != first || j.mu.next != last+1 {
			return fmt.Errorf("editlog: journal %s: finalize %d-%d but open segment holds %d-%d", j.dir, first, last, j.mu.first, j.mu.next-1)
		}
		j.mu.f = nil
		if j.mu.alloc > j.mu.pos {
			if err := f.Truncate(j.mu.pos); err != nil {
				f.Close()
				return fmt.Errorf("editlog: journal %s: cut zero fill: %w", j.dir, err)
			}
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("editlog: journal %s: sync: %w", j.dir, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("editlog: journal %s: close: %w", j.dir, err)
		}
	}
	return j.renameFinalLocked(first, last)
}

// AbandonSegment closes the open segment, which must hold no record, without
// finalizing it and sets its file aside as <name>.empty (what recovery does
// with an empty in-progress segment). A Backup Node's journal needs it when
// the active rolls again before sending any record of a segment.
func (j *FileJournal) AbandonSegment(context.Context) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	f := j.mu.f
	if f == nil {
		return fmt.Errorf("%w: journal %s: no open segment", ErrState, j.dir)
	}
	if j.mu.next != j.mu.first {
		return fmt.Errorf("%w: journal %s: segment %d holds records %d-%d", ErrState, j.dir, j.mu.first, j.mu.first, j.mu.next-1)
	}
	j.mu.f = nil
	if err := f.Close(); err != nil {
		return fmt.Errorf("editlog: journal %s: close: %w", j.dir, err)
	}
	name := j.path(InProgressName(j.mu.first))
	if err := j.fs.Rename(name, name+EmptySuffix); err != nil {
		return fmt.Errorf("editlog: journal %s: %w", j.dir, err)
	}
	if err := j.fs.SyncDir(j.dir); err != nil {
		return fmt.Errorf("editlog: journal %s: sync dir: %w", j.dir, err)
	}
	return nil
}

func (j *FileJournal) renameFinalLocked(first, last int64) error {
	if err := j.fs.Rename(j.path(InProgressName(first)), j.path(FinalizedName(first, last))); err != nil {
		return fmt.Errorf("editlog: journal %s: finalize %d-%d: %w", j.dir, first, last, err)
	}
	if err := j.fs.SyncDir(j.dir); err != nil {
		return fmt.Errorf("editlog: journal %s: sync dir: %w", j.dir, err)
	}
	return nil
}

// Segments lists the directory's segment files.
func (j *FileJournal) Segments(context.Context) ([]SegmentInfo, error) {
	return j.segments()
}

func (j *FileJournal) segments() ([]SegmentInfo, error) {
	names, err := j.fs.List(j.dir)
	if err != nil {
		return nil, fmt.Errorf("editlog: journal %s: %w", j.dir, err)
	}
	var segs []SegmentInfo
	for _, n := range names {
		first, last, inProgress, ok := ParseSegmentName(n)
		if !ok {
			continue
		}
		segs = append(segs, SegmentInfo{First: first, Last: last, InProgress: inProgress, Name: n})
	}
	sort.Slice(segs, func(a, b int) bool {
		if segs[a].First != segs[b].First {
			return segs[a].First < segs[b].First
		}
		return !segs[a].InProgress && segs[b].InProgress
	})
	return segs, nil
}

// fileReader reads a segment's records. Reading an in-progress segment to
// its end (a clean end or a torn tail) notes where it stopped in the
// journal, for the next OpenForReadFrom.
type fileReader struct {
	f   vfs.File
	dec *Decoder
	j   *FileJournal
	seg SegmentInfo
	// below: records with a smaller txid are skipped (OpenForReadFrom
	// without a resume point).
	below int64
	// last is the txid of the last record returned (or, resumed, of the
	// record before the resume point); 0 before any.
	last    int64
	resumed bool
}

func (r *fileReader) Next() (int64, op.Op, error) {
	for {
		txid, o, err := r.dec.Next()
		var torn *TornRecordError
		switch {
		case err == nil:
			r.last = txid
			if txid < r.below {
				continue
			}
			return txid, o, nil
		case r.seg.InProgress && r.last > 0 && (err == io.EOF || errors.As(err, &torn)):
			r.j.noteResume(r.seg.Name, r.last, r.dec.Offset())
		case r.resumed:
			// Whatever went wrong after a seek, the next read starts over.
			r.j.noteResume("", 0, 0)
		}
		return txid, o, err
	}
}

func (r *fileReader) Close() error { return r.f.Close() }

// OpenForRead opens seg and checks its header.
func (j *FileJournal) OpenForRead(_ context.Context, seg SegmentInfo) (Reader, error) {
	f, version, err := j.openSegment(seg)
	if err != nil {
		return nil, err
	}
	return &fileReader{f: f, dec: NewDecoder(f, j.path(seg.Name), SegmentHeaderSize, version), j: j, seg: seg}, nil
}

// OpenForReadFrom opens seg at txid from (SeekingJournal). A standby
// tailing an in-progress segment reads it again every poll: where the last
// read of that segment stopped just before from, the reader starts at that
// offset instead of decoding the segment from its start. Otherwise it
// decodes from the start and skips the records before from.
func (j *FileJournal) OpenForReadFrom(_ context.Context, seg SegmentInfo, from int64) (Reader, error) {
	f, version, err := j.openSegment(seg)
	if err != nil {
		return nil, err
	}
	r := &fileReader{f: f, j: j, seg: seg, below: from}
	j.resume.Lock()
	name, txid, off := j.resume.name, j.resume.txid, j.resume.off
	j.resume.Unlock()
	if seg.InProgress && name == seg.Name && txid == from-1 {
		if _, err := f.Seek(off, io.SeekStart); err == nil {
			r.dec = NewDecoder(f, j.path(seg.Name), off, version)
			r.last, r.resumed = txid, true
			return r, nil
		}
		if _, err := f.Seek(SegmentHeaderSize, io.SeekStart); err != nil {
			f.Close()
			return nil, fmt.Errorf("editlog: journal %s: %w", j.dir, err)
		}
	}
	r.dec = NewDecoder(f, j.path(seg.Name), SegmentHeaderSize, version)
	return r, nil
}

// openSegment opens seg and reads its header: the file is positioned at
// its first record.
func (j *FileJournal) openSegment(seg SegmentInfo) (vfs.File, int32, error) {
	name := j.path(seg.Name)
	f, err := j.fs.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, fmt.Errorf("%w: %s", ErrNotFound, name)
		}
		return nil, 0, fmt.Errorf("editlog: journal %s: %w", j.dir, err)
	}
	version, err := ReadSegmentHeader(f, name)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, version, nil
}

// noteResume records where a read of the in-progress segment name stopped.
func (j *FileJournal) noteResume(name string, txid, off int64) {
	j.resume.Lock()
	defer j.resume.Unlock()
	j.resume.name, j.resume.txid, j.resume.off = name, txid, off
}

// RecoverInProgress implements Journal.
func (j *FileJournal) RecoverInProgress(context.Context) ([]SegmentInfo, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.mu.f != nil {
		return nil, fmt.Errorf("%w: journal %s: recovery with segment %d open", ErrState, j.dir, j.mu.first)
	}
	segs, err := j.segments()
	if err != nil {
		return nil, err
	}
	var out []SegmentInfo
	for _, s := range segs {
		if !s.InProgress {
			continue
		}
		last, err := j.recoverOneLocked(s)
		if err != nil {
			return out, err
		}
		if last < 0 {
			continue // set aside as empty
		}
		out = append(out, SegmentInfo{First: s.First, Last: last, Name: FinalizedName(s.First, last)})
	}
	return out, nil
}

// recoverOneLocked scans one in-progress segment, cuts a torn tail and
// finalizes it. It returns -1 when the segment held no record and was set
// aside.
func (j *FileJournal) recoverOneLocked(s SegmentInfo) (int64, error) {
	name := j.path(s.Name)
	f, err := j.fs.OpenReadWrite(name)
	if err != nil {
		return 0, fmt.Errorf("editlog: journal %s: %w", j.dir, err)
	}
	defer f.Close()
	last, cut := int64(-1), int64(-1)
	version, err := ReadSegmentHeader(f, name)
	if err != nil {
		var torn *TornRecordError
		if !errors.As(err, &torn) {
			return 0, err
		}
		cut = 0
	} else {
		dec := NewDecoder(f, name, SegmentHeaderSize, version)
		for {
			off := dec.Offset()
			txid, o, err := dec.Next()
			if err == io.EOF {
				break
			}
			var torn *TornRecordError
			if errors.As(err, &torn) {
				cut = torn.Offset
				break
			}
			if err != nil {
				return 0, err
			}
			switch {
			case last < 0 && (txid != s.First || o.Code() != op.CodeStartLogSegment):
				return 0, &CorruptionError{File: name, Offset: off,
					Reason: fmt.Sprintf("segment starts with %v txid %d, want %v txid %d", o.Code(), txid, op.CodeStartLogSegment, s.First)}
			case last >= 0 && txid != last+1:
				return 0, &CorruptionError{File: name, Offset: off,
					Reason: fmt.Sprintf("txid %d follows %d", txid, last)}
			}
			last = txid
		}
	}
	if last < 0 {
		// Nothing in it was ever acknowledged: keep it aside for inspection.
		f.Close()
		if err := j.fs.Rename(name, name+EmptySuffix); err != nil {
			return 0, fmt.Errorf("editlog: journal %s: %w", j.dir, err)
		}
		if err := j.fs.SyncDir(j.dir); err != nil {
			return 0, fmt.Errorf("editlog: journal %s: sync dir: %w", j.dir, err)
		}
		return -1, nil
	}
	if cut >= 0 {
		if err := f.Truncate(cut); err != nil {
			return 0, fmt.Errorf("editlog: journal %s: cut torn tail of %s: %w", j.dir, s.Name, err)
		}
		if err := f.Sync(); err != nil {
			return 0, fmt.Errorf("editlog: journal %s: sync %s: %w", j.dir, s.Name, err)
		}
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("editlog: journal %s: %w", j.dir, err)
	}
	if err := j.renameFinalLocked(s.First, last); err != nil {
		return 0, err
	}
	return last, nil
}

// PurgeBefore removes finalized segments whose last txid is below txid.
func (j *FileJournal) PurgeBefore(_ context.Context, txid int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	segs, err := j.segments()
	if err != nil {
		return err
	}
	removed := false
	for _, s := range segs {
		if s.InProgress || s.Last >= txid {
			continue
		}
		if err := j.fs.Remove(j.path(s.Name)); err != nil {
			return fmt.Errorf("editlog: journal %s: purge: %w", j.dir, err)
		}
		removed = true
	}
	if removed {
		if err := j.fs.SyncDir(j.dir); err != nil {
			return fmt.Errorf("editlog: journal %s: sync dir: %w", j.dir, err)
		}
	}
	return nil
}

// Close closes an open segment without finalizing it.
func (j *FileJournal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.mu.closed = true
	if j.mu.f == nil {
		return nil
	}
	err := j.mu.f.Close()
	j.mu.f = nil
	return err
}
