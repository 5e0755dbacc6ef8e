package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	qpb "github.com/hdfsgo/hdfsgo/internal/proto/qjournal"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/quorum"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// File names inside a journal's current/ directory (Hadoop's). Part of
// the on-disk layout.
const (
	lastPromisedFile = "last-promised-epoch"
	lastWriterFile   = "last-writer-epoch"
	committedFile    = "committed-txid"
	paxosDirName     = "paxos"
	editsSyncDirName = "edits.sync"
	// epochSuffix marks a segment downloaded by acceptRecovery before the
	// decision is persisted: edits_inprogress_<txid>.epoch=<epoch>.
	epochSuffix = ".epoch="
	// staleSuffix is appended to an in-progress segment that a finalized
	// copy fetched by JournalNode sync replaced.
	staleSuffix = ".stale"
)

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// readLong reads a persisted number (decimal text and a newline, as
// Hadoop's PersistentLongFile writes); a missing file reads as def.
func readLong(fsys vfs.FS, path string, def int64) (int64, error) {
	b, err := storage.ReadFile(fsys, path)
	if err != nil {
		if isNotExist(err) {
			return def, nil
		}
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("journalnode: %s holds %q, not a number: %w", path, clip(s), err)
	}
	return v, nil
}

// writeLong replaces path with v durably: tmp, fsync, rename, fsync dir.
func writeLong(fsys vfs.FS, path string, v int64) error {
	return storage.AtomicWriteFile(fsys, path, []byte(strconv.FormatInt(v, 10)+"\n"))
}

// committedWidth is the fixed length of committed-txid's text: the number,
// left-aligned, padded with spaces, and a newline. A fixed length lets the
// file be rewritten in place.
const committedWidth = 21

// committedStore writes committed-txid: durably before the answer that
// carries a new committed txid, but in place — one short write inside the
// first sector of a file kept open, then an fdatasync — rather than
// through a temporary file and two renames like the epochs. It changes
// with every batch, and it is only a lower bound (an older value read
// after a crash is still true), so the cheaper write is enough, and it
// keeps the JournalNode's cost per batch near one sync. Not safe for
// concurrent use: its Journal's lock guards it.
type committedStore struct {
	fs   vfs.FS
	path string
	f    vfs.File // nil until the first write, or after a failed one
	buf  []byte
}

func newCommittedStore(fsys vfs.FS, path string) *committedStore {
	return &committedStore{fs: fsys, path: path, buf: make([]byte, 0, committedWidth)}
}

// write records v and fdatasyncs it.
func (c *committedStore) write(v int64) error {
	if c.f == nil {
		f, err := c.fs.OpenReadWrite(c.path)
		created := false
		if isNotExist(err) {
			f, err = c.fs.Create(c.path)
			created = true
		}
		if err != nil {
			return err
		}
		if created {
			if err := c.fs.SyncDir(filepath.Dir(c.path)); err != nil {
				f.Close()
				return err
			}
		}
		c.f = f
	}
	c.buf = fmt.Appendf(c.buf[:0], "%-*d\n", committedWidth-1, v)
	_, err := c.f.Seek(0, io.SeekStart)
	if err == nil {
		_, err = c.f.Write(c.buf)
	}
	if err == nil {
		err = c.f.Sync()
	}
	if err != nil {
		c.close()
	}
	return err
}

// close releases the file (a journal closing, or formatted anew).
func (c *committedStore) close() {
	if c.f != nil {
		c.f.Close()
		c.f = nil
	}
}

// readCommitted reads committed-txid; a file that does not parse (a torn
// in-place write) reads as 0, the safe lower bound.
func readCommitted(fsys vfs.FS, path string) (int64, bool, error) {
	b, err := storage.ReadFile(fsys, path)
	if err != nil {
		if isNotExist(err) {
			return 0, true, nil
		}
		return 0, false, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v < 0 {
		return 0, false, nil
	}
	return v, true, nil
}

// readPaxos reads the accepted recovery of a segment
// (PersistedRecoveryPaxosData, length-delimited, then a readable copy);
// nil when there is none.
func readPaxos(fsys vfs.FS, path string, segment int64) (*quorum.Accepted, error) {
	b, err := storage.ReadFile(fsys, path)
	if err != nil {
		if isNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, fmt.Errorf("journalnode: %s: bad length prefix", path)
	}
	var d qpb.PersistedRecoveryPaxosData
	if err := proto.Unmarshal(b[k:k+int(n)], &d); err != nil {
		return nil, fmt.Errorf("journalnode: %s: %w", path, err)
	}
	st := d.GetSegmentState()
	if st.GetStartTxId() != uint64(segment) {
		return nil, fmt.Errorf("journalnode: bad persisted data for segment %d in %s: it is for segment %d", segment, path, st.GetStartTxId())
	}
	return &quorum.Accepted{Epoch: d.GetAcceptedInEpoch(), Segment: fromProto(st)}, nil
}

// writePaxos persists an accepted recovery durably.
func writePaxos(fsys vfs.FS, path string, a quorum.Accepted) error {
	d := &qpb.PersistedRecoveryPaxosData{SegmentState: toProto(a.Segment), AcceptedInEpoch: proto.Uint64(a.Epoch)}
	body, err := proto.Marshal(d)
	if err != nil {
		return err
	}
	b := binary.AppendUvarint(nil, uint64(len(body)))
	b = append(b, body...)
	b = fmt.Appendf(b, "\nsegment %v accepted in epoch %d\n", a.Segment, a.Epoch)
	return storage.AtomicWriteFile(fsys, path, b)
}

func toProto(s quorum.SegmentState) *qpb.SegmentStateProto {
	return &qpb.SegmentStateProto{StartTxId: proto.Uint64(uint64(s.Start)), EndTxId: proto.Uint64(uint64(s.End)),
		IsInProgress: proto.Bool(s.InProgress)}
}

func fromProto(p *qpb.SegmentStateProto) quorum.SegmentState {
	return quorum.SegmentState{Start: int64(p.GetStartTxId()), End: int64(p.GetEndTxId()), InProgress: p.GetIsInProgress()}
}

// scanSegment reads a segment file and returns its last whole record's
// txid (first-1 when it holds none). A torn tail ends the scan; damage
// before it, a txid out of sequence or a first record other than first is
// a *editlog.CorruptionError.
func scanSegment(fsys vfs.FS, path string, first int64) (int64, error) {
	last, _, err := scanSegmentEnd(fsys, path, first)
	return last, err
}

// scanSegmentEnd is scanSegment that also returns the offset just past the
// last whole record: where a torn tail starts.
func scanSegmentEnd(fsys vfs.FS, path string, first int64) (last, end int64, err error) {
	f, err := fsys.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	return scanRecords(f, path, first, -1)
}

// scanRecords reads a segment (header then records) from r, checking txids
// from first on; with limit > 0 it stops after txid limit. It returns the
// last txid read and the offset just past its record.
func scanRecords(r io.Reader, name string, first, limit int64) (last, end int64, err error) {
	version, err := editlog.ReadSegmentHeader(r, name)
	if err != nil {
		var torn *editlog.TornRecordError
		if errors.As(err, &torn) {
			return first - 1, 0, nil
		}
		return 0, 0, err
	}
	dec := editlog.NewDecoder(r, name, editlog.SegmentHeaderSize, version)
	last = first - 1
	for limit <= 0 || last < limit {
		off := dec.Offset()
		txid, _, err := dec.Next()
		if err == io.EOF {
			break
		}
		var torn *editlog.TornRecordError
		if errors.As(err, &torn) {
			break
		}
		if err != nil {
			return 0, 0, err
		}
		if txid != last+1 {
			return 0, 0, &editlog.CorruptionError{File: name, Offset: off, Reason: fmt.Sprintf("txid %d follows %d", txid, last)}
		}
		last = txid
	}
	return last, dec.Offset(), nil
}

// cutTail truncates a segment file at end (dropping a torn tail) and
// fsyncs it, when it is longer.
func cutTail(fsys vfs.FS, path string, end int64) error {
	f, err := fsys.OpenReadWrite(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() <= end {
		return nil
	}
	if err := f.Truncate(end); err != nil {
		return err
	}
	return f.Sync()
}

// checkBatch validates a journal() batch: exactly n whole records with
// txids first..first+n-1, checksums good, nothing after them. It returns
// each record's offset in records (for the edit cache). No record is
// decoded before its claimed length is seen to lie within the batch, so
// the check allocates in proportion to the batch, whatever it claims.
func checkBatch(records []byte, first int64, n int) ([]int32, error) {
	if n <= 0 {
		return nil, fmt.Errorf("a batch of %d transactions", n)
	}
	const minRecord = editlog.RecordHeaderSize + editlog.RecordTrailerSize
	if len(records)/minRecord < n {
		return nil, fmt.Errorf("%d bytes cannot hold %d records", len(records), n)
	}
	offs := make([]int32, 0, n)
	off := 0
	for i := 0; i < n; i++ {
		rest := records[off:]
		if len(rest) < minRecord {
			return nil, fmt.Errorf("the records end after %d of %d transactions", i, n)
		}
		total := minRecord + int(binary.BigEndian.Uint32(rest[9:13]))
		if total > len(rest) || total < minRecord {
			return nil, fmt.Errorf("record %d at offset %d claims %d bytes, %d remain", i, off, total, len(rest))
		}
		txid, _, err := editlog.DecodeRecord(bytes.NewReader(rest[:total]))
		if err != nil {
			return nil, fmt.Errorf("record %d at offset %d: %w", i, off, err)
		}
		if want := first + int64(i); txid != want {
			return nil, fmt.Errorf("record %d has txid %d, want %d", i, txid, want)
		}
		offs = append(offs, int32(off))
		off += total
	}
	if off != len(records) {
		return nil, fmt.Errorf("%d bytes follow the last of the %d records", len(records)-off, n)
	}
	return offs, nil
}

// removeTmpFiles removes what an interrupted atomic write left in dir
// (name.tmp) and syncs dir when it removed anything.
func removeTmpFiles(fsys vfs.FS, dir string) error {
	names, err := fsys.List(dir)
	if err != nil {
		if isNotExist(err) {
			return nil
		}
		return err
	}
	removed := false
	for _, n := range names {
		if strings.HasSuffix(n, storage.TmpSuffix) {
			if err := fsys.Remove(join(dir, n)); err != nil && !isNotExist(err) {
				return err
			}
			removed = true
		}
	}
	if removed {
		return fsys.SyncDir(dir)
	}
	return nil
}

// tmpSegmentName is where acceptRecovery downloads a segment before it
// persists its decision.
func tmpSegmentName(first int64, epoch uint64) string {
	return editlog.InProgressName(first) + epochSuffix + strconv.FormatUint(epoch, 10)
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

func join(dir, name string) string { return filepath.Join(dir, name) }
