package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/quorum"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// NamespaceInfo identifies the namespace a journal belongs to: what format
// and newEpoch carry (NamespaceInfoProto) and what the journal's VERSION
// records.
type NamespaceInfo struct {
	LayoutVersion int32
	NamespaceID   int32
	ClusterID     string
	CTime         int64
	BlockPoolID   string
}

// StorageInfo is the journal's "<layoutVersion>:<namespaceID>:<cTime>:<clusterID>",
// what /getJournal's storageInfo parameter must equal.
func (v *NamespaceInfo) storageInfo() string {
	return strconv.FormatInt(int64(v.LayoutVersion), 10) + ":" + strconv.FormatInt(int64(v.NamespaceID), 10) + ":" +
		strconv.FormatInt(v.CTime, 10) + ":" + v.ClusterID
}

// Journal is one journal id's copy of the shared edit log: its directory
// (HDFS's layout, see the package doc), its promise, the segment being
// written and the cache of recent edits. Every call takes the journal's
// lock for its whole length, writes included, so calls are applied one at
// a time in the order they arrive; a Journal is safe for concurrent use.
type Journal struct {
	jid    string
	dir    storage.Dir // <edits dir>/<jid>
	fs     vfs.FS
	log    *slog.Logger
	clock  clock.Clock
	fetch  fetchFunc // downloads a segment from another JournalNode
	metric journalMetrics
	// si is the storage info /getJournal compares with, nil until
	// formatted; read without the lock (see openSegment).
	si atomic.Pointer[string]

	mu struct {
		sync.Mutex
		lock    io.Closer      // in_use.lock of dir
		ns      *NamespaceInfo // nil until formatted
		promise quorum.Promise
		// The segment being written: out, its first txid and the txid the
		// next batch must start with.
		out     *editlog.FileJournal
		curSeg  int64
		next    int64
		highest int64 // highest txid written (or accepted by recovery)
		cache   *editCache
		// committed writes committed-txid (in place, see committedStore).
		committed *committedStore
		lastAt    time.Time // last journal() write
		closed    bool
	}
}

// fetchFunc copies the segment at url into path (created), fsynced.
type fetchFunc func(ctx context.Context, url, path string) error

func (j *Journal) current() string { return j.dir.Current() }

// openJournal opens (creating) the directory of journal jid, locks it and
// loads what it holds.
func openJournal(fsys vfs.FS, root, jid string, cacheSize int64, clk clock.Clock, logger *slog.Logger, fetch fetchFunc) (*Journal, error) {
	j := &Journal{jid: jid, dir: storage.Dir{Root: join(root, jid)}, fs: fsys, clock: clk, fetch: fetch,
		log: logger.With("journal", jid)}
	if err := storage.MkdirAllSync(fsys, j.dir.Root, 0o700); err != nil {
		return nil, err
	}
	lk, err := storage.Lock(fsys, j.dir.Root)
	if err != nil {
		return nil, err
	}
	j.mu.lock = lk
	if cacheSize > 0 {
		j.mu.cache = newEditCache(cacheSize)
	}
	j.mu.promise.Serial = -1
	j.mu.committed = newCommittedStore(fsys, join(j.dir.Current(), committedFile))
	if err := j.loadLocked(); err != nil {
		lk.Close()
		return nil, err
	}
	return j, nil
}

// loadLocked reads VERSION, the promise files and the newest segment.
func (j *Journal) loadLocked() error {
	v, err := j.dir.ReadVersion(j.fs)
	if err != nil {
		if isNotExist(err) {
			return nil // not formatted
		}
		return err
	}
	if err := v.CheckType(j.dir.VersionPath(), storage.StorageTypeJournalNode); err != nil {
		return err
	}
	if err := j.dir.RemoveTmpFiles(j.fs); err != nil {
		return err
	}
	if err := removeTmpFiles(j.fs, join(j.current(), paxosDirName)); err != nil {
		return err
	}
	j.mu.ns = &NamespaceInfo{LayoutVersion: v.LayoutVersion, NamespaceID: v.NamespaceID, ClusterID: v.ClusterID, CTime: v.CTime}
	si := j.mu.ns.storageInfo()
	j.si.Store(&si)
	p := quorum.Promise{Serial: -1}
	promised, err := readLong(j.fs, join(j.current(), lastPromisedFile), 0)
	if err != nil {
		return err
	}
	writer, err := readLong(j.fs, join(j.current(), lastWriterFile), 0)
	if err != nil {
		return err
	}
	var ok bool
	if p.Committed, ok, err = readCommitted(j.fs, join(j.current(), committedFile)); err != nil {
		return err
	} else if !ok {
		j.log.Warn("committed-txid does not parse; taking 0 (it is only a lower bound)", "file", join(j.current(), committedFile))
	}
	p.Promised, p.Writer = uint64(promised), uint64(writer)
	j.mu.promise = p
	latest, err := j.scanLatestLocked()
	if err != nil {
		return err
	}
	if latest != nil {
		j.mu.highest = latest.End
	}
	return nil
}

// segment is a segment file of the journal.
type segment struct {
	quorum.SegmentState
	name string
}

// segmentsLocked lists the segment files, by first txid (finalized before
// in-progress for the same first txid).
func (j *Journal) segmentsLocked() ([]segment, error) {
	names, err := j.fs.List(j.current())
	if err != nil {
		return nil, fmt.Errorf("journalnode: journal %s: %w", j.jid, err)
	}
	var segs []segment
	for _, n := range names {
		first, last, ip, ok := editlog.ParseSegmentName(n)
		if !ok {
			continue
		}
		segs = append(segs, segment{SegmentState: quorum.SegmentState{Start: first, End: last, InProgress: ip}, name: n})
	}
	sort.SliceStable(segs, func(a, b int) bool {
		if segs[a].Start != segs[b].Start {
			return segs[a].Start < segs[b].Start
		}
		return !segs[a].InProgress && segs[b].InProgress
	})
	return segs, nil
}

// scanLatestLocked finds the newest segment holding a transaction: an
// in-progress one is scanned for its last txid; ones holding none are set
// aside (.empty) and the one before is looked at.
func (j *Journal) scanLatestLocked() (*quorum.SegmentState, error) {
	segs, err := j.segmentsLocked()
	if err != nil {
		return nil, err
	}
	for i := len(segs) - 1; i >= 0; i-- {
		s := segs[i]
		if !s.InProgress {
			st := s.SegmentState
			return &st, nil
		}
		last, err := scanSegment(j.fs, join(j.current(), s.name), s.Start)
		if err != nil {
			return nil, err
		}
		if last >= s.Start {
			st := s.SegmentState
			st.End = last
			return &st, nil
		}
		if err := j.moveAsideLocked(s.name, editlog.EmptySuffix); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

func (j *Journal) moveAsideLocked(name, suffix string) error {
	j.log.Info("setting a segment aside", "file", name, "as", name+suffix)
	if err := j.fs.Rename(join(j.current(), name), join(j.current(), name+suffix)); err != nil {
		return fmt.Errorf("journalnode: journal %s: %w", j.jid, err)
	}
	return j.fs.SyncDir(j.current())
}

// segmentInfoLocked is the segment starting at txid: nil if there is none
// or it holds no transaction (it is then set aside).
func (j *Journal) segmentInfoLocked(txid int64) (*segment, error) {
	segs, err := j.segmentsLocked()
	if err != nil {
		return nil, err
	}
	for _, s := range segs {
		if s.Start != txid {
			continue
		}
		if !s.InProgress {
			return &s, nil
		}
		last, err := scanSegment(j.fs, join(j.current(), s.name), s.Start)
		if err != nil {
			return nil, err
		}
		if last < s.Start {
			return nil, j.moveAsideLocked(s.name, editlog.EmptySuffix)
		}
		s.End = last
		return &s, nil
	}
	return nil, nil
}

// close releases the journal: the open segment is closed without being
// finalized, the lock released.
func (j *Journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.mu.closed {
		return nil
	}
	j.mu.closed = true
	j.abortLocked()
	j.mu.committed.close()
	return j.mu.lock.Close()
}

// abortLocked closes the open segment without finalizing it.
func (j *Journal) abortLocked() {
	if j.mu.out == nil {
		return
	}
	if err := j.mu.out.Close(); err != nil {
		j.log.Warn("closing the aborted segment", "segment", j.mu.curSeg, "err", err)
	}
	j.mu.out, j.mu.curSeg, j.mu.next = nil, 0, 0
}

func (j *Journal) checkFormattedLocked() error {
	if j.mu.closed {
		return fmt.Errorf("journalnode: journal %s is closed", j.jid)
	}
	if j.mu.ns == nil {
		return remoteerr.New(remoteerr.ClassJournalNotFormatted, "Journal Storage Directory %s not formatted ; journal id: %s", j.dir.Root, j.jid)
	}
	return nil
}

// checkRequestLocked applies a writer's RequestInfo; a change of the
// promise or the committed txid is persisted before anything else.
func (j *Journal) checkRequestLocked(r quorum.Request, client string) error {
	committed, err := j.checkRequestDeferLocked(r, client)
	if err != nil || committed == 0 {
		return err
	}
	return j.persistCommittedLocked(committed)
}

// checkRequestDeferLocked is checkRequestLocked that leaves a new
// committed txid for the caller to persist (persistCommittedLocked, or
// writeLong in parallel with other I/O, then setting it) before it
// answers; it returns that txid, 0 when it did not change. A new promise
// is persisted at once.
func (j *Journal) checkRequestDeferLocked(r quorum.Request, client string) (int64, error) {
	np, ch, err := j.mu.promise.Check(r, client, j.jid)
	if ch.Promised {
		j.log.Info("updating lastPromisedEpoch", "from", j.mu.promise.Promised, "to", np.Promised, "client", client)
		if perr := writeLong(j.fs, join(j.current(), lastPromisedFile), int64(np.Promised)); perr != nil {
			return 0, perr
		}
		j.mu.promise.Promised, j.mu.promise.Serial = np.Promised, -1
		if j.mu.cache != nil {
			j.mu.cache.reset()
		}
	}
	if err != nil {
		return 0, err
	}
	committed := j.mu.promise.Committed
	j.mu.promise = np
	j.mu.promise.Committed = committed // until persisted
	if ch.Committed {
		return np.Committed, nil
	}
	return 0, nil
}

func (j *Journal) persistCommittedLocked(txid int64) error {
	if err := j.mu.committed.write(txid); err != nil {
		return err
	}
	j.mu.promise.Committed = max(j.mu.promise.Committed, txid)
	return nil
}

func (j *Journal) checkNamespaceLocked(ns NamespaceInfo) error {
	if ns.NamespaceID != j.mu.ns.NamespaceID {
		return fmt.Errorf("Incompatible namespaceID for journal %s: NameNode has nsId %d but storage has nsId %d",
			j.dir.Root, ns.NamespaceID, j.mu.ns.NamespaceID)
	}
	if ns.ClusterID != j.mu.ns.ClusterID {
		return fmt.Errorf("Incompatible clusterID for journal %s: NameNode has clusterId '%s' but storage has clusterId '%s'",
			j.dir.Root, ns.ClusterID, j.mu.ns.ClusterID)
	}
	return nil
}

// IsFormatted reports whether the journal has a VERSION.
func (j *Journal) IsFormatted() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.mu.ns != nil
}

// Format makes the journal a fresh one of namespace ns: current/ holds
// only VERSION and an empty paxos/. Without force a journal holding data
// is refused.
func (j *Journal) Format(ns NamespaceInfo, force bool) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.mu.closed {
		return fmt.Errorf("journalnode: journal %s is closed", j.jid)
	}
	if ns.NamespaceID == 0 {
		return remoteerr.New(remoteerr.ClassIllegalState, "can't format with uninitialized namespace info: namespaceID 0 ; journal id: %s", j.jid)
	}
	if !force {
		names, err := j.fs.List(j.current())
		if err != nil && !isNotExist(err) {
			return err
		}
		if len(names) > 0 {
			return fmt.Errorf("Can't format the storage directory because the current directory is not empty: %s ; journal id: %s", j.current(), j.jid)
		}
	}
	j.log.Info("formatting", "namespaceID", ns.NamespaceID, "clusterID", ns.ClusterID, "force", force)
	j.abortLocked()
	j.mu.committed.close()
	v := &storage.Version{LayoutVersion: ns.LayoutVersion, NamespaceID: ns.NamespaceID, ClusterID: ns.ClusterID,
		CTime: ns.CTime, StorageType: storage.StorageTypeJournalNode}
	if err := j.dir.Format(j.fs, v, j.clock.Now(), true); err != nil {
		return err
	}
	if err := storage.MkdirAllSync(j.fs, join(j.current(), paxosDirName), 0o700); err != nil {
		return err
	}
	n := ns
	n.BlockPoolID = ""
	j.mu.ns = &n
	si := n.storageInfo()
	j.si.Store(&si)
	j.mu.promise = quorum.Promise{Serial: -1}
	j.mu.highest = 0
	if j.mu.cache != nil {
		j.mu.cache.reset()
	}
	return nil
}

// JournalState is getJournalState's answer: the promise.
func (j *Journal) JournalState() (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.checkFormattedLocked(); err != nil {
		return 0, err
	}
	return j.mu.promise.Promised, nil
}

// NewEpoch promises epoch to a new writer (persisted first), aborts the
// segment being written and returns the first txid of the newest segment
// (0: none).
func (j *Journal) NewEpoch(ns NamespaceInfo, epoch uint64, client string) (int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.checkFormattedLocked(); err != nil {
		return 0, err
	}
	if err := j.checkNamespaceLocked(ns); err != nil {
		return 0, err
	}
	np, err := j.mu.promise.NewEpoch(epoch, j.jid)
	if err != nil {
		return 0, err
	}
	j.log.Info("updating lastPromisedEpoch", "from", j.mu.promise.Promised, "to", epoch, "client", client)
	if err := writeLong(j.fs, join(j.current(), lastPromisedFile), int64(epoch)); err != nil {
		return 0, err
	}
	j.mu.promise = np
	j.abortLocked()
	if j.mu.cache != nil {
		j.mu.cache.reset()
	}
	latest, err := j.scanLatestLocked()
	if err != nil {
		return 0, err
	}
	if latest == nil {
		return 0, nil
	}
	return latest.Start, nil
}

// Heartbeat is a writer's call that only carries its RequestInfo.
func (j *Journal) Heartbeat(r quorum.Request, client string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.checkFormattedLocked(); err != nil {
		return err
	}
	return j.checkRequestLocked(r, client)
}

// StartLogSegment opens segment txid for the writer of r's epoch, who
// becomes the last writer. A leftover in-progress file at txid holding at
// most one transaction (a writer that died right after starting it) is
// replaced; anything more is refused.
func (j *Journal) StartLogSegment(r quorum.Request, client string, txid int64, layoutVersion int32) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.checkFormattedLocked(); err != nil {
		return err
	}
	if err := j.checkRequestLocked(r, client); err != nil {
		return err
	}
	if layoutVersion != 0 && layoutVersion != storage.NameNodeLayoutVersion {
		return remoteerr.New(remoteerr.ClassIllegalArgument, "startLogSegment(%d): layout version %d is not this JournalNode's edit layout %d ; journal id: %s",
			txid, layoutVersion, storage.NameNodeLayoutVersion, j.jid)
	}
	if txid < 1 {
		return remoteerr.New(remoteerr.ClassIllegalArgument, "startLogSegment: invalid txid %d ; journal id: %s", txid, j.jid)
	}
	if j.mu.out != nil {
		j.log.Warn("a new segment is asked for while one is being written; aborting it", "new", txid, "current", j.mu.curSeg)
		j.abortLocked()
	}
	segs, err := j.segmentsLocked()
	if err != nil {
		return err
	}
	for _, s := range segs {
		if s.Start != txid {
			continue
		}
		if !s.InProgress {
			return remoteerr.New(remoteerr.ClassIllegalState, "Already have a finalized segment %s beginning at %d ; journal id: %s", s.name, txid, j.jid)
		}
		last, err := scanSegment(j.fs, join(j.current(), s.name), s.Start)
		if err != nil {
			return err
		}
		if last > s.Start {
			return remoteerr.New(remoteerr.ClassIllegalState, "The log file %s seems to contain valid transactions ; journal id: %s", s.name, j.jid)
		}
		if err := j.fs.Remove(join(j.current(), s.name)); err != nil {
			return err
		}
	}
	if np, changed := j.mu.promise.StartSegment(r.Epoch); changed {
		j.log.Info("updating lastWriterEpoch", "from", j.mu.promise.Writer, "to", r.Epoch, "client", client)
		if err := writeLong(j.fs, join(j.current(), lastWriterFile), int64(r.Epoch)); err != nil {
			return err
		}
		j.mu.promise = np
	}
	// Starting a segment here means any recovery of it was abandoned.
	if err := j.purgePaxosLocked(txid); err != nil {
		return err
	}
	out := editlog.NewFileJournal(j.fs, j.current())
	if err := out.StartSegment(context.Background(), txid); err != nil {
		return err
	}
	j.mu.out, j.mu.curSeg, j.mu.next = out, txid, txid
	if j.mu.cache != nil && j.mu.highest != txid-1 {
		j.mu.cache.reset()
	}
	return nil
}

// Journal writes a batch of records to the open segment and fsyncs it
// before returning: the writer's acknowledgement is a promise that the
// batch is durable here.
func (j *Journal) Journal(r quorum.Request, client string, segTxID, first int64, n int, records []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.checkFormattedLocked(); err != nil {
		return err
	}
	committed, err := j.checkRequestDeferLocked(r, client)
	if err != nil {
		return err
	}
	if err := j.mu.promise.CheckWriter(r.Epoch, j.jid); err != nil {
		return err
	}
	if n == 0 {
		if committed > 0 {
			return j.persistCommittedLocked(committed)
		}
		return nil // a write that only carries the committed txid
	}
	if j.mu.out == nil {
		return remoteerr.New(remoteerr.ClassJournalOutOfSync, "Can't write, no segment open ; journal id: %s", j.jid)
	}
	if j.mu.curSeg != segTxID {
		cur := j.mu.curSeg
		j.abortLocked()
		return remoteerr.New(remoteerr.ClassJournalOutOfSync, "Writer out of sync: it thinks it is writing segment %d but current segment is %d ; journal id: %s",
			segTxID, cur, j.jid)
	}
	if j.mu.next != first {
		return remoteerr.New(remoteerr.ClassJournalOutOfSync, "Can't write txid %d expecting nextTxId=%d ; journal id: %s", first, j.mu.next, j.jid)
	}
	offs, err := checkBatch(records, first, n)
	if err != nil {
		return remoteerr.New(remoteerr.ClassIOException, "journal(): records of txids %d-%d refused: %v ; journal id: %s", first, first+int64(n)-1, err, j.jid)
	}
	last := first + int64(n) - 1
	lagging := last <= max(j.mu.promise.Committed, committed)
	ctx := context.Background()
	// The new committed txid is made durable beside the batch: both are
	// on disk before the answer, in about one sync's time.
	var cerr error
	var cdone chan struct{}
	if committed > 0 {
		cdone = make(chan struct{})
		go func() {
			defer close(cdone)
			cerr = j.mu.committed.write(committed)
		}()
	}
	werr := j.mu.out.Write(ctx, records, first, last)
	start := j.clock.Now()
	if werr == nil {
		werr = j.mu.out.Flush(ctx)
	}
	if cdone != nil {
		<-cdone
		if cerr == nil {
			j.mu.promise.Committed = max(j.mu.promise.Committed, committed)
		}
	}
	if werr != nil {
		j.abortLocked()
		return werr
	}
	if cerr != nil {
		return cerr
	}
	now := j.clock.Now()
	if d := now.Sub(start); d > time.Second {
		j.log.Warn("slow sync", "first", first, "last", last, "took", d)
	} else {
		j.metric.syncs.add(now, d)
	}
	if lagging {
		j.metric.batchesWrittenWhileLagging.Add(1)
	}
	j.metric.batchesWritten.Add(1)
	j.metric.txnsWritten.Add(int64(n))
	j.metric.bytesWritten.Add(int64(len(records)))
	j.mu.highest, j.mu.next, j.mu.lastAt = last, last+1, now
	if j.mu.cache != nil {
		j.mu.cache.store(records, first, last, offs)
	}
	return nil
}

// FinalizeLogSegment closes segment start..end and gives it its final
// name: the open segment (which must hold exactly up to end) or an
// in-progress file left from before (checked to end at end). Finalizing a
// finalized segment again is accepted when the ends agree.
func (j *Journal) FinalizeLogSegment(r quorum.Request, client string, start, end int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.checkFormattedLocked(); err != nil {
		return err
	}
	if err := j.checkRequestLocked(r, client); err != nil {
		return err
	}
	ctx := context.Background()
	if j.mu.out != nil && start == j.mu.curSeg {
		if j.mu.next != end+1 {
			written := j.mu.next - 1
			j.abortLocked()
			return remoteerr.New(remoteerr.ClassJournalOutOfSync, "Trying to finalize in-progress log segment %d to end at txid %d but only written up to txid %d ; journal id: %s",
				start, end, written, j.jid)
		}
		out := j.mu.out
		j.mu.out, j.mu.curSeg, j.mu.next = nil, 0, 0
		if err := out.FinalizeSegment(ctx, start, end); err != nil {
			out.Close()
			return err
		}
		out.Close()
		return j.purgePaxosLocked(start)
	}
	segs, err := j.segmentsLocked()
	if err != nil {
		return err
	}
	var found *segment
	for i := range segs {
		if segs[i].Start == start {
			found = &segs[i]
			break
		}
	}
	if found == nil {
		return remoteerr.New(remoteerr.ClassJournalOutOfSync, "No log file to finalize at transaction ID %d ; journal id: %s", start, j.jid)
	}
	if found.InProgress {
		path := join(j.current(), found.name)
		last, endOff, err := scanSegmentEnd(j.fs, path, start)
		if err != nil {
			return err
		}
		if last != end {
			return remoteerr.New(remoteerr.ClassJournalOutOfSync, "Trying to finalize in-progress log segment %d to end at txid %d but log %s on disk only contains up to txid %d ; journal id: %s",
				start, end, found.name, last, j.jid)
		}
		// A finalized segment ends with its last whole record: a torn
		// tail left by a crash goes.
		if err := cutTail(j.fs, path, endOff); err != nil {
			return err
		}
		if err := editlog.NewFileJournal(j.fs, j.current()).FinalizeSegment(ctx, start, end); err != nil {
			return err
		}
	} else if found.End != end {
		return remoteerr.New(remoteerr.ClassIllegalArgument, "Trying to re-finalize already finalized log %s with different endTxId %d ; journal id: %s",
			found.name, end, j.jid)
	}
	return j.purgePaxosLocked(start)
}

func (j *Journal) paxosPath(txid int64) string {
	return join(join(j.current(), paxosDirName), strconv.FormatInt(txid, 10))
}

// purgePaxosLocked forgets the accepted recovery of a segment once it is
// decided otherwise (finalized, or started anew).
func (j *Journal) purgePaxosLocked(txid int64) error {
	p := j.paxosPath(txid)
	if err := j.fs.Remove(p); err != nil {
		if isNotExist(err) {
			return nil
		}
		return fmt.Errorf("Unable to delete paxos file %s ; journal id: %s: %w", p, j.jid, err)
	}
	return j.fs.SyncDir(join(j.current(), paxosDirName))
}

// PurgeLogs deletes segments (and paxos data) wholly below minTxIDToKeep.
func (j *Journal) PurgeLogs(r quorum.Request, client string, minTxIDToKeep int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.checkFormattedLocked(); err != nil {
		return err
	}
	if err := j.checkRequestLocked(r, client); err != nil {
		return err
	}
	return j.purgeLocked(minTxIDToKeep)
}

func (j *Journal) purgeLocked(min int64) error {
	names, err := j.fs.List(j.current())
	if err != nil {
		return err
	}
	removed := false
	for _, n := range names {
		var txid int64
		switch {
		case strings.HasPrefix(n, "edits_inprogress_"):
			base, _, _ := strings.Cut(strings.TrimPrefix(n, "edits_inprogress_"), ".")
			v, err := strconv.ParseInt(base, 10, 64)
			if err != nil || v == j.mu.curSeg && j.mu.out != nil {
				continue
			}
			txid = v
		default:
			_, last, ip, ok := editlog.ParseSegmentName(n)
			if !ok || ip {
				continue
			}
			txid = last
		}
		if txid < min {
			j.log.Info("purging a no-longer needed file", "file", n)
			if err := j.fs.Remove(join(j.current(), n)); err != nil {
				j.log.Warn("unable to delete no-longer-needed data", "file", n, "err", err)
				continue
			}
			removed = true
		}
	}
	pnames, err := j.fs.List(join(j.current(), paxosDirName))
	if err != nil && !isNotExist(err) {
		return err
	}
	for _, n := range pnames {
		if v, err := strconv.ParseInt(n, 10, 64); err == nil && v < min {
			if err := j.fs.Remove(join(join(j.current(), paxosDirName), n)); err == nil {
				removed = true
			}
		}
	}
	if removed {
		if err := j.fs.SyncDir(j.current()); err != nil {
			return err
		}
	}
	return nil
}

// RemoteLog is one segment of a manifest.
type RemoteLog = quorum.SegmentState

// Manifest lists the segments holding transactions from since on:
// finalized ones, and with inProgressOK the newest in-progress one (its
// end is the highest txid written). It also returns the committed txid.
func (j *Journal) Manifest(since int64, inProgressOK bool) ([]RemoteLog, int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.checkFormattedLocked(); err != nil {
		return nil, 0, err
	}
	segs, err := j.segmentsLocked()
	if err != nil {
		return nil, 0, err
	}
	var out []RemoteLog
	var lastFinal int64
	for _, s := range segs {
		if s.InProgress {
			continue
		}
		lastFinal = max(lastFinal, s.End)
		if s.End >= since {
			out = append(out, s.SegmentState)
		}
	}
	if inProgressOK {
		for i := len(segs) - 1; i >= 0; i-- {
			s := segs[i]
			if !s.InProgress {
				continue
			}
			if s.Start > lastFinal && j.mu.highest >= s.Start {
				st := s.SegmentState
				st.End = j.mu.highest
				out = append(out, st)
			}
			break
		}
	}
	return out, j.mu.promise.Committed, nil
}

// JournaledEdits serves up to max transactions from since on out of the
// edit cache: the records, and how many.
func (j *Journal) JournaledEdits(since int64, max int) ([]byte, int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.checkFormattedLocked(); err != nil {
		return nil, 0, err
	}
	if j.mu.cache == nil {
		return nil, 0, fmt.Errorf("The journal edits cache is not enabled, which is a requirement to fetch journaled edits via RPC. Please enable it via dfs.ha.tail-edits.in-progress")
	}
	switch {
	case since == j.mu.highest+1:
		j.metric.rpcEmptyResponses.Add(1)
		return nil, 0, nil
	case since > j.mu.highest+1:
		j.metric.rpcEmptyResponses.Add(1)
		return nil, 0, remoteerr.New(remoteerr.ClassNewerTxnID, "Highest txn ID available in the journal is %d, but requested txns starting at %d.", j.mu.highest, since)
	}
	data, n, err := j.mu.cache.retrieve(since, max)
	if err != nil {
		var miss *cacheMiss
		if errors.As(err, &miss) {
			j.metric.cacheMisses.Add(1)
			if miss.oldest > since {
				j.metric.cacheMissTxns.Add(miss.oldest - since)
			}
		}
		return nil, 0, remoteerr.New(remoteerr.ClassCacheMiss, "%v", err)
	}
	j.metric.txnsServedViaRPC.Add(int64(n))
	j.metric.bytesServedViaRPC.Add(int64(len(data)))
	return data, n, nil
}

// PrepareRecovery is the first phase of recovering segment txid: the
// segment being written is aborted, a half-done acceptRecovery is rolled
// forward, and the node answers what it holds or accepted.
func (j *Journal) PrepareRecovery(r quorum.Request, client string, txid int64) (quorum.PrepareResponse, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.checkFormattedLocked(); err != nil {
		return quorum.PrepareResponse{}, err
	}
	if err := j.checkRequestLocked(r, client); err != nil {
		return quorum.PrepareResponse{}, err
	}
	j.abortLocked()
	prev, err := readPaxos(j.fs, j.paxosPath(txid), txid)
	if err != nil {
		return quorum.PrepareResponse{}, err
	}
	if err := j.completeHalfDoneAcceptLocked(prev); err != nil {
		return quorum.PrepareResponse{}, err
	}
	seg, err := j.segmentInfoLocked(txid)
	if err != nil {
		return quorum.PrepareResponse{}, err
	}
	var st *quorum.SegmentState
	if seg != nil {
		st = &seg.SegmentState
	}
	resp := quorum.PrepareAnswer(prev, st, j.mu.promise.Writer, j.mu.promise.Committed)
	j.log.Info("prepared recovery", "segment", txid, "answer", resp.String())
	return resp, nil
}

// completeHalfDoneAcceptLocked finishes an acceptRecovery that persisted
// its decision but crashed before moving the downloaded copy in place.
func (j *Journal) completeHalfDoneAcceptLocked(prev *quorum.Accepted) error {
	if prev == nil {
		return nil
	}
	tmp := join(j.current(), tmpSegmentName(prev.Segment.Start, prev.Epoch))
	if _, err := j.fs.Stat(tmp); err != nil {
		return nil
	}
	dst := join(j.current(), editlog.InProgressName(prev.Segment.Start))
	j.log.Info("rolling forward a half-completed synchronization", "from", tmp, "to", dst)
	if err := j.fs.Rename(tmp, dst); err != nil {
		return err
	}
	return j.fs.SyncDir(j.current())
}

// AcceptRecovery is the second phase: the node takes the chosen copy
// (downloading it from fromURL when its own differs), persists the
// decision, and only then puts the copy in place.
func (j *Journal) AcceptRecovery(ctx context.Context, r quorum.Request, client string, proposed quorum.SegmentState, fromURL string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.checkFormattedLocked(); err != nil {
		return err
	}
	if err := j.checkRequestLocked(r, client); err != nil {
		return err
	}
	j.abortLocked()
	txid := proposed.Start
	prev, err := readPaxos(j.fs, j.paxosPath(txid), txid)
	if err != nil {
		return err
	}
	cur, err := j.segmentInfoLocked(txid)
	if err != nil {
		return err
	}
	var curSt *quorum.SegmentState
	if cur != nil {
		curSt = &cur.SegmentState
	}
	sync, err := quorum.PlanAccept(curSt, proposed, prev, j.mu.promise.Committed, r.Epoch, j.jid)
	if err != nil {
		return err
	}
	var tmp string
	if sync {
		j.log.Info("synchronizing log", "segment", proposed.String(), "from", fromURL, "had", curSt)
		tmp = join(j.current(), tmpSegmentName(txid, r.Epoch))
		if err := j.fetch(ctx, fromURL, tmp); err != nil {
			j.fs.Remove(tmp)
			return fmt.Errorf("journalnode: fetching segment %v from %s: %w", proposed, fromURL, err)
		}
		if err := j.trimDownloadLocked(tmp, proposed); err != nil {
			j.fs.Remove(tmp)
			return err
		}
	} else {
		j.log.Info("skipping download of log: already have an up-to-date copy", "segment", proposed.String())
	}
	// The commit point: once the decision is durable, a restart rolls the
	// download forward (completeHalfDoneAcceptLocked).
	if err := writePaxos(j.fs, j.paxosPath(txid), quorum.Accepted{Segment: proposed, Epoch: r.Epoch}); err != nil {
		return err
	}
	if tmp != "" {
		if err := j.fs.Rename(tmp, join(j.current(), editlog.InProgressName(txid))); err != nil {
			return err
		}
		if err := j.fs.SyncDir(j.current()); err != nil {
			return err
		}
		if cur == nil || cur.End >= j.mu.highest || proposed.End > j.mu.highest {
			j.mu.highest = proposed.End
		}
	}
	if j.mu.cache != nil {
		j.mu.cache.reset()
	}
	j.log.Info("accepted recovery", "segment", proposed.String(), "epoch", r.Epoch)
	return nil
}

// trimDownloadLocked checks that a downloaded segment holds proposed's
// txids and cuts anything after them, then fsyncs it.
func (j *Journal) trimDownloadLocked(path string, proposed quorum.SegmentState) error {
	f, err := j.fs.OpenReadWrite(path)
	if err != nil {
		return err
	}
	defer f.Close()
	version, err := editlog.ReadSegmentHeader(f, path)
	if err != nil {
		return err
	}
	dec := editlog.NewDecoder(f, path, editlog.SegmentHeaderSize, version)
	last := proposed.Start - 1
	for last < proposed.End {
		txid, _, err := dec.Next()
		if err != nil {
			break
		}
		if txid != last+1 {
			return fmt.Errorf("journalnode: downloaded segment %s: txid %d follows %d", path, txid, last)
		}
		last = txid
	}
	if last != proposed.End {
		return fmt.Errorf("journalnode: downloaded segment %s holds txids %d-%d, recovery chose %d-%d",
			path, proposed.Start, last, proposed.Start, proposed.End)
	}
	if err := f.Truncate(dec.Offset()); err != nil {
		return err
	}
	return f.Sync()
}

// DiscardSegments deletes every segment from startTxID on and moves the
// committed txid back below it (a rolled-back upgrade).
func (j *Journal) DiscardSegments(startTxID int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.checkFormattedLocked(); err != nil {
		return err
	}
	if j.mu.out != nil && j.mu.curSeg >= startTxID {
		j.abortLocked()
	}
	segs, err := j.segmentsLocked()
	if err != nil {
		return err
	}
	for _, s := range segs {
		if s.Start < startTxID && (s.InProgress || s.End >= startTxID) {
			return remoteerr.New(remoteerr.ClassIllegalArgument, "segment %s spans txid %d: cannot discard from there ; journal id: %s", s.name, startTxID, j.jid)
		}
	}
	for _, s := range segs {
		if s.Start >= startTxID {
			if err := j.fs.Remove(join(j.current(), s.name)); err != nil {
				return err
			}
		}
	}
	if err := j.fs.SyncDir(j.current()); err != nil {
		return err
	}
	if err := j.mu.committed.write(startTxID - 1); err != nil {
		return err
	}
	j.mu.promise.Committed = startTxID - 1
	j.mu.highest = min(j.mu.highest, startTxID-1)
	if j.mu.cache != nil {
		j.mu.cache.reset()
	}
	return nil
}

// CTime is the journal's cTime (getJournalCTime).
func (j *Journal) CTime() (int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.checkFormattedLocked(); err != nil {
		return 0, err
	}
	return j.mu.ns.CTime, nil
}

// Status is a snapshot of the journal for the status page and /jmx.
type Status struct {
	JournalID          string
	Dir                string
	Formatted          bool
	NamespaceID        int32
	ClusterID          string
	LastPromisedEpoch  uint64
	LastWriterEpoch    uint64
	CommittedTxID      int64
	HighestWrittenTxID int64
	CurrentSegment     int64 // 0: none open
	CurrentLagTxns     int64
	LastJournalTime    time.Time
	CacheOldestTxID    int64 // 0: empty or off
}

// Status returns the journal's state now.
func (j *Journal) Status() Status {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := Status{JournalID: j.jid, Dir: j.dir.Root, Formatted: j.mu.ns != nil,
		LastPromisedEpoch: j.mu.promise.Promised, LastWriterEpoch: j.mu.promise.Writer,
		CommittedTxID: j.mu.promise.Committed, HighestWrittenTxID: j.mu.highest,
		CurrentSegment: j.mu.curSeg, LastJournalTime: j.mu.lastAt}
	if j.mu.ns != nil {
		s.NamespaceID, s.ClusterID = j.mu.ns.NamespaceID, j.mu.ns.ClusterID
	}
	if s.CommittedTxID > 0 {
		s.CurrentLagTxns = max(s.CommittedTxID-s.HighestWrittenTxID, 0)
	}
	if j.mu.cache != nil {
		s.CacheOldestTxID = j.mu.cache.oldest()
	}
	return s
}

// storageInfoString is what /getJournal compares its storageInfo with;
// false until the journal is formatted.
func (j *Journal) storageInfoString() (string, bool) {
	if p := j.si.Load(); p != nil {
		return *p, true
	}
	return "", false
}

// openSegment opens the segment file starting at txid for reading (the
// open segment included): the file, its name and size at open time. It
// does not take the journal's lock — an acceptRecovery holds it while it
// downloads from another JournalNode, which may be downloading from this
// one — so a segment renamed between the listing and the open (finalized)
// is looked up again.
func (j *Journal) openSegment(txid int64) (vfs.File, string, int64, error) {
	for attempt := 0; ; attempt++ {
		names, err := j.fs.List(j.current())
		if err != nil {
			return nil, "", 0, err
		}
		name := ""
		for _, n := range names {
			first, _, ip, ok := editlog.ParseSegmentName(n)
			if ok && first == txid && (name == "" || !ip) {
				name = n // a finalized copy wins over a leftover in-progress one
			}
		}
		if name == "" {
			return nil, "", 0, fmt.Errorf("%w: No edit log found starting at txid %d", errNoSegment, txid)
		}
		f, err := j.fs.Open(join(j.current(), name))
		if err != nil {
			if isNotExist(err) && attempt < 3 {
				continue
			}
			return nil, "", 0, err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, "", 0, err
		}
		return f, name, fi.Size(), nil
	}
}

var errNoSegment = errors.New("journalnode: no such segment")
