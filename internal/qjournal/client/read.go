package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	qpb "github.com/hdfsgo/hdfsgo/internal/proto/qjournal"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/protocol"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/quorum"
)

// Segments lists the union of a quorum's manifests (getEditLogManifest,
// in-progress segments included): every finalized segment some node
// holds, and the segment being written. The nodes holding each are
// remembered for OpenForRead.
func (m *Manager) Segments(ctx context.Context) ([]editlog.SegmentInfo, error) {
	type manifest struct {
		logs      []quorum.SegmentState
		committed int64
	}
	q := m.parallelCall("getEditLogManifest", func(ctx context.Context, l *logger) (any, error) {
		req := &qpb.GetEditLogManifestRequestProto{Jid: m.jidProto(), SinceTxId: proto.Uint64(0), InProgressOk: proto.Bool(true), NameServiceId: m.nsID()}
		var resp qpb.GetEditLogManifestResponseProto
		if err := l.call(ctx, m.cfg.SelectInputStreamsTimeout, "getEditLogManifest", req, &resp); err != nil {
			return nil, err
		}
		l.setHTTP(resp.GetFromURL(), resp.GetHttpPort())
		mf := manifest{committed: int64(resp.GetManifest().GetCommittedTxnId())}
		for _, r := range resp.GetManifest().GetLogs() {
			mf.logs = append(mf.logs, quorum.SegmentState{Start: int64(r.GetStartTxId()), End: int64(r.GetEndTxId()), InProgress: r.GetIsInProgress()})
		}
		return mf, nil
	})
	if err := m.waitQuorum(ctx, q, m.cfg.SelectInputStreamsTimeout); err != nil {
		return nil, err
	}
	lists := make([][]quorum.SegmentState, len(m.loggers))
	var committed int64
	for i, v := range q.vals {
		if q.tally.Succeeded(i) {
			mf := v.(manifest)
			lists[i] = mf.logs
			committed = max(committed, mf.committed)
		}
	}
	holders := map[string][]int{}
	var out []editlog.SegmentInfo
	var durable int64
	for _, mg := range quorum.Union(lists) {
		s := mg.Segment
		info := editlog.SegmentInfo{First: s.Start, Last: s.End, Name: editlog.FinalizedName(s.Start, s.End)}
		if s.InProgress {
			info = editlog.SegmentInfo{First: s.Start, Last: -1, InProgress: true, Name: editlog.InProgressName(s.Start)}
			durable = inProgressDurable(lists, q, s.Start)
		}
		holders[info.Name] = mg.Holders
		out = append(out, info)
	}
	m.mu.Lock()
	m.mu.holders, m.mu.committedSeen = holders, max(m.mu.committedSeen, committed, durable)
	m.mu.Unlock()
	return out, nil
}

// inProgressDurable is the last txid of the in-progress segment start a
// majority of the nodes hold, from the manifests of the nodes that
// answered (a node that answered without the segment holds none of it):
// those txids survive any recovery, so a reader may apply them.
func inProgressDurable(lists [][]quorum.SegmentState, q *qcall, start int64) int64 {
	var counts []int
	for i, l := range lists {
		if !q.tally.Succeeded(i) {
			continue
		}
		n := 0
		for _, s := range l {
			if s.InProgress && s.Start == start && s.End >= start {
				n = int(s.End - start + 1)
			}
		}
		counts = append(counts, n)
	}
	d := quorum.DurableCount(counts, len(lists))
	if d == 0 {
		return 0
	}
	return start + int64(d) - 1
}

// OpenForRead opens a segment as Segments listed it.
func (m *Manager) OpenForRead(ctx context.Context, seg editlog.SegmentInfo) (editlog.Reader, error) {
	return m.OpenForReadFrom(ctx, seg, seg.First)
}

// OpenForReadFrom opens a segment at txid from (editlog.SeekingJournal):
// a finalized segment streams over /getJournal from a node holding it,
// moving to another one if that fails mid-way; the segment being written
// is read from the JournalNodes' edit caches (getJournaledEdits, when
// dfs.ha.tail-edits.in-progress), up to what a majority holds, else
// streamed up to the committed txid.
func (m *Manager) OpenForReadFrom(ctx context.Context, seg editlog.SegmentInfo, from int64) (editlog.Reader, error) {
	m.mu.Lock()
	holders, ok := m.mu.holders[seg.Name]
	committed := m.mu.committedSeen
	m.mu.Unlock()
	if !ok {
		if _, err := m.Segments(ctx); err != nil {
			return nil, err
		}
		m.mu.Lock()
		holders, ok = m.mu.holders[seg.Name]
		committed = m.mu.committedSeen
		m.mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("%w: %s is on no JournalNode", editlog.ErrNotFound, seg.Name)
		}
	}
	from = max(from, seg.First)
	if seg.InProgress && m.cfg.TailInProgress {
		r, err := m.openCached(ctx, from)
		if err == nil {
			return r, nil
		}
		m.log.Warn("qjournal: tailing the edits in progress over RPC failed; streaming them instead", "from", from, "err", err)
	}
	limit := seg.Last
	if seg.InProgress {
		limit = committed
		if limit < from {
			return emptyReader{}, nil
		}
	}
	var urls []string
	for _, i := range holders {
		if b := m.loggers[i].httpBase(); b != "" {
			urls = append(urls, protocol.GetJournalURL(b, m.jid, seg.First, m.si))
		}
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("qjournal: no web address known for the JournalNodes holding %s", seg.Name)
	}
	rctx, cancel := context.WithCancel(m.life)
	stopWatch := context.AfterFunc(ctx, cancel)
	return &streamReader{m: m, ctx: rctx, cancel: cancel, stopWatch: stopWatch, seg: seg, urls: urls,
		next: from, limit: limit}, nil
}

type emptyReader struct{}

func (emptyReader) Next() (int64, op.Op, error) { return 0, nil, io.EOF }
func (emptyReader) Close() error                { return nil }

// streamReader reads one segment over HTTP from the first of urls that
// works, and on a failure mid-way reopens the next one and skips what it
// already returned (Hadoop's RedundantEditLogInputStream).
type streamReader struct {
	m         *Manager
	ctx       context.Context
	cancel    context.CancelFunc
	stopWatch func() bool
	seg       editlog.SegmentInfo
	urls      []string
	idx       int
	next      int64 // next txid to return
	limit     int64 // last txid to return
	body      io.ReadCloser
	dec       *editlog.Decoder
	lastErr   error
}

func (r *streamReader) open() error {
	u := r.urls[r.idx]
	req, err := http.NewRequestWithContext(r.ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := r.m.http.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return fmt.Errorf("qjournal: GET %s: %s: %s", u, resp.Status, bytes.TrimSpace(msg))
	}
	version, err := editlog.ReadSegmentHeader(resp.Body, u)
	if err != nil {
		resp.Body.Close()
		var torn *editlog.TornRecordError
		if errors.As(err, &torn) && r.seg.InProgress {
			r.body, r.dec = nil, nil
			return io.EOF
		}
		return err
	}
	r.body, r.dec = resp.Body, editlog.NewDecoder(resp.Body, u, editlog.SegmentHeaderSize, version)
	return nil
}

func (r *streamReader) drop() {
	if r.body != nil {
		r.body.Close()
	}
	r.body, r.dec = nil, nil
}

// failover moves to the next copy after err; false when none is left.
func (r *streamReader) failover(err error) bool {
	r.lastErr = err
	r.drop()
	r.idx++
	if r.idx < len(r.urls) {
		r.m.log.Warn("qjournal: reading a segment failed; trying another JournalNode", "segment", r.seg.Name, "err", err, "next", r.urls[r.idx])
		return true
	}
	return false
}

// Next returns the next record up to the limit; io.EOF at the end.
func (r *streamReader) Next() (int64, op.Op, error) {
	for {
		if r.next > r.limit {
			return 0, nil, io.EOF
		}
		if r.idx >= len(r.urls) {
			return 0, nil, r.lastErr
		}
		if r.dec == nil {
			if err := r.open(); err != nil {
				if err == io.EOF {
					return 0, nil, io.EOF
				}
				if !r.failover(err) {
					return 0, nil, r.lastErr
				}
				continue
			}
		}
		txid, o, err := r.dec.Next()
		var torn *editlog.TornRecordError
		switch {
		case err == io.EOF || (errors.As(err, &torn) && r.seg.InProgress):
			if r.seg.InProgress {
				return 0, nil, io.EOF // the end of what this copy holds now
			}
			err = fmt.Errorf("%w: %s ends before txid %d", editlog.ErrCorrupt, r.urls[r.idx], r.limit)
			fallthrough
		case err != nil:
			if !r.failover(err) {
				return 0, nil, r.lastErr
			}
			continue
		case txid < r.next:
			continue // already returned (a copy read again after a failover), or before from
		case txid != r.next:
			if !r.failover(&editlog.CorruptionError{File: r.urls[r.idx], Reason: fmt.Sprintf("txid %d where %d was expected", txid, r.next)}) {
				return 0, nil, r.lastErr
			}
			continue
		}
		r.next++
		return txid, o, nil
	}
}

func (r *streamReader) Close() error {
	r.drop()
	r.stopWatch()
	r.cancel()
	return nil
}

// cachedReader returns the edits a majority of the JournalNodes' caches
// hold from a txid on, asking again while full batches come back.
type cachedReader struct {
	m    *Manager
	next int64
	recs *editlog.Decoder
	left int // records of the current answer still to return
	full bool
}

// openCached asks every node's cache for the edits from txid from on and
// keeps the answer of a node holding what a majority holds.
func (m *Manager) openCached(ctx context.Context, from int64) (editlog.Reader, error) {
	r := &cachedReader{m: m, next: from}
	if err := r.fetch(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *cachedReader) fetch(ctx context.Context) error {
	m := r.m
	type got struct {
		n    int
		data []byte
	}
	max := m.cfg.RPCMaxTxns
	from := r.next
	q := m.parallelCall("selectRpcInputStreams", func(ctx context.Context, l *logger) (any, error) {
		req := &qpb.GetJournaledEditsRequestProto{Jid: m.jidProto(), SinceTxId: proto.Uint64(uint64(from)), MaxTxns: proto.Uint32(uint32(max)), NameServiceId: m.nsID()}
		var resp qpb.GetJournaledEditsResponseProto
		if err := l.call(ctx, m.cfg.SelectInputStreamsTimeout, "getJournaledEdits", req, &resp); err != nil {
			return nil, err
		}
		return got{n: int(resp.GetTxnCount()), data: resp.GetEditLog()}, nil
	})
	if err := m.waitQuorum(ctx, q, m.cfg.SelectInputStreamsTimeout); err != nil {
		return err
	}
	var counts []int
	best := -1
	for i, v := range q.vals {
		if !q.tally.Succeeded(i) {
			continue
		}
		g := v.(got)
		counts = append(counts, g.n)
		if best < 0 || g.n > q.vals[best].(got).n {
			best = i
		}
	}
	durable := quorum.DurableCount(counts, len(m.loggers))
	r.recs, r.left, r.full = nil, durable, durable >= max
	if durable == 0 {
		return nil
	}
	r.recs = editlog.NewDecoder(bytes.NewReader(q.vals[best].(got).data), "getJournaledEdits("+m.loggers[best].addr+")", 0, editlog.LayoutVersion)
	return nil
}

func (r *cachedReader) Next() (int64, op.Op, error) {
	if r.left == 0 && r.full {
		// Next has no ctx: a later batch is bounded by the manager's life
		// and dfs.qjournal.select-input-streams.timeout.ms.
		if err := r.fetch(r.m.life); err != nil {
			return 0, nil, err
		}
	}
	if r.left == 0 {
		return 0, nil, io.EOF
	}
	txid, o, err := r.recs.Next()
	if err != nil {
		if err == io.EOF {
			err = fmt.Errorf("%w: getJournaledEdits answered fewer records than its count", editlog.ErrCorrupt)
		}
		return 0, nil, err
	}
	if txid != r.next {
		return 0, nil, &editlog.CorruptionError{File: "getJournaledEdits", Reason: fmt.Sprintf("txid %d where %d was expected", txid, r.next)}
	}
	r.next++
	r.left--
	return txid, o, nil
}

func (r *cachedReader) Close() error { return nil }
