package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/imagetransfer"
	hdfspb "github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	qpb "github.com/hdfsgo/hdfsgo/internal/proto/qjournal"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/protocol"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/quorum"
	"github.com/hdfsgo/hdfsgo/internal/storage"
)

const protocolName = protocol.QJournalProtocol

// Deps are the manager's connections to the outside world.
type Deps struct {
	Clock  clock.Clock
	Logger *slog.Logger
}

// Manager is the QuorumJournalManager: the editlog.Journal of a
// qjournal:// shared edits URI, writing to and reading from a set of
// JournalNodes through one logger each. It is safe for concurrent use; the
// edit log drives its write path one call at a time.
type Manager struct {
	uri     string
	jid     string
	cfg     Config
	ns      *storage.Version
	si      string // storageInfo for /getJournal
	loggers []*logger
	clock   clock.Clock
	log     *slog.Logger
	http    *http.Client

	// life is the manager's lifetime: cancelled by Close, it ends every
	// call in flight and every goroutine the manager started.
	life   context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // parallel read calls

	mu struct {
		sync.Mutex
		epoch     uint64 // 0 until RecoverInProgress made this the writer
		segTxID   int64  // first txid of the open segment, 0 outside one
		pending   []*qcall
		committed int64
		// holders of each segment of the last listing, by segment name.
		holders map[string][]int
		// committedSeen is the highest txid the listings showed durable
		// (committed, or held by a majority): in-progress reads over HTTP
		// stop there.
		committedSeen int64
		closed        bool
	}
}

var _ editlog.Journal = (*Manager)(nil)

// New returns the manager of uri (qjournal://h1:port;h2:port;.../jid) for
// the namespace v. It dials nothing until a call needs it.
func New(uri string, cfg Config, v *storage.Version, deps Deps) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	addrs, jid, err := protocol.ParseURI(uri)
	if err != nil {
		return nil, err
	}
	if deps.Clock == nil {
		deps.Clock = clock.Real{}
	}
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	m := &Manager{uri: uri, jid: jid, cfg: cfg, ns: v, clock: deps.Clock, log: deps.Logger}
	if v != nil {
		m.si = imagetransfer.StorageInfoOf(v).String()
	}
	if len(addrs)%2 == 0 {
		m.log.Warn("Quorum journal URI has an even number of Journal Nodes specified. This is not recommended!", "uri", uri)
	}
	m.life, m.cancel = context.WithCancel(context.Background())
	m.http = &http.Client{Transport: &http.Transport{
		DialContext:           (&net.Dialer{Timeout: cfg.HTTPOpenTimeout}).DialContext,
		ResponseHeaderTimeout: cfg.HTTPReadTimeout,
		MaxIdleConnsPerHost:   2,
	}}
	for i, a := range addrs {
		m.loggers = append(m.loggers, newLogger(m, i, a))
	}
	return m, nil
}

// String names the journal: "QJM to [jn1:8485, jn2:8485, jn3:8485]".
func (m *Manager) String() string { return "QJM to [" + strings.Join(m.names(), ", ") + "]" }

// URI is the qjournal:// URI.
func (m *Manager) URI() string { return m.uri }

// JournalID is the journal id.
func (m *Manager) JournalID() string { return m.jid }

// Epoch is the writer epoch this manager holds (0: not the writer).
func (m *Manager) Epoch() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.epoch
}

func (m *Manager) names() []string {
	out := make([]string, len(m.loggers))
	for i, l := range m.loggers {
		out[i] = l.addr
	}
	return out
}

func (m *Manager) jidProto() *qpb.JournalIdProto {
	return &qpb.JournalIdProto{Identifier: proto.String(m.jid)}
}

func (m *Manager) nsProto() *hdfspb.NamespaceInfoProto {
	v := m.ns
	return &hdfspb.NamespaceInfoProto{
		BuildVersion: proto.String("hdfsgo"),
		Unused:       proto.Uint32(0),
		BlockPoolID:  proto.String(v.BlockPoolID),
		StorageInfo: &hdfspb.StorageInfoProto{LayoutVersion: proto.Uint32(uint32(v.LayoutVersion)),
			NamespceID: proto.Uint32(uint32(v.NamespaceID)), ClusterID: proto.String(v.ClusterID), CTime: proto.Uint64(uint64(v.CTime))},
		SoftwareVersion: proto.String("3.3.6"),
		Capabilities:    proto.Uint64(0),
	}
}

func (m *Manager) nsID() *string {
	if m.cfg.NameserviceID == "" {
		return nil
	}
	return proto.String(m.cfg.NameserviceID)
}

// Close stops every logger and waits for the calls in flight to end.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.mu.closed {
		m.mu.Unlock()
		return nil
	}
	m.mu.closed = true
	m.mu.Unlock()
	m.cancel()
	for _, l := range m.loggers {
		<-l.done
		l.closeRPC()
	}
	m.wg.Wait()
	m.http.CloseIdleConnections()
	return nil
}

// parallelCall runs a read call on every JournalNode at once.
func (m *Manager) parallelCall(op string, run func(ctx context.Context, l *logger) (any, error)) *qcall {
	q := newQcall(op, len(m.loggers))
	for _, l := range m.loggers {
		l.parallel(q, func(ctx context.Context) (any, error) { return run(ctx, l) })
	}
	return q
}

// HasSomeData reports whether any JournalNode holds a formatted journal
// (asked before a format wipes it).
func (m *Manager) HasSomeData(ctx context.Context) (bool, error) {
	q := m.parallelCall("isFormatted", func(ctx context.Context, l *logger) (any, error) {
		var resp qpb.IsFormattedResponseProto
		err := l.call(ctx, m.cfg.OperationsTimeout, "isFormatted", &qpb.IsFormattedRequestProto{Jid: m.jidProto(), NameServiceId: m.nsID()}, &resp)
		return resp.GetIsFormatted(), err
	})
	if err := m.waitAll(ctx, q, m.cfg.OperationsTimeout); err != nil {
		return false, fmt.Errorf("qjournal: Unable to check if JNs are ready for formatting: %w", err)
	}
	for _, v := range q.vals {
		if b, _ := v.(bool); b {
			return true, nil
		}
	}
	return false, nil
}

// Format formats the journal on every JournalNode with this manager's
// namespace; every one must succeed. Without force a JournalNode holding
// data refuses.
func (m *Manager) Format(ctx context.Context, force bool) error {
	if m.ns == nil || m.ns.NamespaceID == 0 {
		return errors.New("qjournal: format needs the namespace's identity")
	}
	q := newQcall("format", len(m.loggers))
	for _, l := range m.loggers {
		l.submit(q, 0, func(ctx context.Context) (any, error) {
			req := &qpb.FormatRequestProto{Jid: m.jidProto(), NsInfo: m.nsProto(), NameServiceId: m.nsID(), Force: proto.Bool(force)}
			var resp qpb.FormatResponseProto
			return nil, l.call(ctx, m.cfg.OperationsTimeout, "format", req, &resp)
		})
	}
	if err := m.waitAll(ctx, q, m.cfg.OperationsTimeout); err != nil {
		return fmt.Errorf("qjournal: Could not format one or more JournalNodes: %w", err)
	}
	return nil
}

// RecoverInProgress makes this manager the writer: it takes a new epoch,
// one above every promise a majority reports, and recovers the newest
// segment as HDFS does (prepareRecovery, the choice of quorum.ChooseRecovery,
// acceptRecovery with the chosen copy's URL, finalizeLogSegment). It
// returns the segment it finalized, if any. A manager that was the writer
// before (a NameNode active a second time) takes a new epoch again.
func (m *Manager) RecoverInProgress(ctx context.Context) ([]editlog.SegmentInfo, error) {
	if m.ns == nil {
		return nil, errors.New("qjournal: becoming the writer needs the namespace's identity")
	}
	// A writer starts afresh (Hadoop builds new loggers): no epoch, no
	// committed txid to report (the nodes may have heard a higher one from
	// the writer in between), every node in sync.
	m.mu.Lock()
	m.mu.epoch, m.mu.segTxID, m.mu.pending, m.mu.committed = 0, 0, nil, 0
	m.mu.Unlock()
	for _, l := range m.loggers {
		l.reset()
	}
	m.log.Info("qjournal: starting recovery of unclosed journal segments", "journal", m.String())

	// getJournalState: what every node promised.
	q := newQcall("getJournalState()", len(m.loggers))
	for _, l := range m.loggers {
		l.submit(q, 0, func(ctx context.Context) (any, error) {
			var resp qpb.GetJournalStateResponseProto
			if err := l.call(ctx, m.cfg.GetJournalStateTimeout, "getJournalState", &qpb.GetJournalStateRequestProto{Jid: m.jidProto(), NameServiceId: m.nsID()}, &resp); err != nil {
				return nil, err
			}
			l.setHTTP(resp.GetFromURL(), resp.GetHttpPort())
			return resp.GetLastPromisedEpoch(), nil
		})
	}
	if err := m.waitQuorum(ctx, q, m.cfg.GetJournalStateTimeout); err != nil {
		return nil, err
	}
	var promised []uint64
	for i, v := range q.vals {
		if q.tally.Succeeded(i) {
			promised = append(promised, v.(uint64))
		}
	}
	epoch := quorum.NextEpoch(promised)

	// newEpoch: the promise that fences every older writer.
	q = newQcall(fmt.Sprintf("newEpoch(%d)", epoch), len(m.loggers))
	for _, l := range m.loggers {
		l.submit(q, 0, func(ctx context.Context) (any, error) {
			req := &qpb.NewEpochRequestProto{Jid: m.jidProto(), NsInfo: m.nsProto(), Epoch: proto.Uint64(epoch), NameServiceId: m.nsID()}
			var resp qpb.NewEpochResponseProto
			if err := l.call(ctx, m.cfg.NewEpochTimeout, "newEpoch", req, &resp); err != nil {
				return nil, err
			}
			if resp.LastSegmentTxId == nil {
				return int64(0), nil
			}
			return int64(resp.GetLastSegmentTxId()), nil
		})
	}
	if err := m.waitQuorum(ctx, q, m.cfg.NewEpochTimeout); err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.mu.epoch = epoch
	m.mu.Unlock()
	for _, l := range m.loggers {
		l.setEpoch(epoch)
	}
	m.log.Info("qjournal: successfully started new epoch", "epoch", epoch)
	var latest int64
	for i, v := range q.vals {
		if q.tally.Succeeded(i) {
			latest = max(latest, v.(int64))
		}
	}
	if latest == 0 {
		return nil, nil // a fresh journal: nothing to recover
	}
	seg, err := m.recoverSegment(ctx, latest)
	if err != nil || seg == nil {
		return nil, err
	}
	return []editlog.SegmentInfo{*seg}, nil
}

// recoverSegment runs the recovery of segment txid: after it, a majority
// holds the segment finalized at the length the rules chose.
func (m *Manager) recoverSegment(ctx context.Context, txid int64) (*editlog.SegmentInfo, error) {
	m.log.Info("qjournal: beginning recovery of unclosed segment", "segment", txid)
	q := newQcall(fmt.Sprintf("prepareRecovery(%d)", txid), len(m.loggers))
	for _, l := range m.loggers {
		l.submit(q, 0, func(ctx context.Context) (any, error) {
			if l.httpBase() == "" {
				var st qpb.GetJournalStateResponseProto
				if err := l.call(ctx, m.cfg.PrepareRecoveryTimeout, "getJournalState", &qpb.GetJournalStateRequestProto{Jid: m.jidProto(), NameServiceId: m.nsID()}, &st); err != nil {
					return nil, err
				}
				l.setHTTP(st.GetFromURL(), st.GetHttpPort())
			}
			req := &qpb.PrepareRecoveryRequestProto{ReqInfo: l.reqInfo(), SegmentTxId: proto.Uint64(uint64(txid))}
			var resp qpb.PrepareRecoveryResponseProto
			if err := l.call(ctx, m.cfg.PrepareRecoveryTimeout, "prepareRecovery", req, &resp); err != nil {
				return nil, err
			}
			return prepareOf(&resp), nil
		})
	}
	if err := m.waitQuorum(ctx, q, m.cfg.PrepareRecoveryTimeout); err != nil {
		return nil, err
	}
	var rs []quorum.PrepareResponse
	var who []int
	for i, v := range q.vals {
		if q.tally.Succeeded(i) {
			rs = append(rs, v.(quorum.PrepareResponse))
			who = append(who, i)
			m.log.Info("qjournal: recovery prepare answer", "jn", m.loggers[i].addr, "answer", v.(quorum.PrepareResponse).String())
		}
	}
	best, err := quorum.ChooseRecovery(rs)
	if err != nil {
		return nil, fmt.Errorf("qjournal: recovering segment %d: %w", txid, err)
	}
	if best < 0 {
		m.log.Info("qjournal: none of the responders had a log to recover", "segment", txid)
		return nil, nil
	}
	chosen := *rs[best].Segment
	from := m.loggers[who[best]]
	if rs[best].HasAccepted {
		m.log.Info("qjournal: using an already-accepted recovery", "segment", chosen.String(), "jn", from.addr)
	} else {
		m.log.Info("qjournal: using the longest log", "segment", chosen.String(), "jn", from.addr)
	}
	base := from.httpBase()
	if base == "" {
		return nil, fmt.Errorf("qjournal: recovering segment %d: no web address known for %s", txid, from.addr)
	}
	url := protocol.GetJournalURL(base, m.jid, txid, m.si)
	q = newQcall(fmt.Sprintf("acceptRecovery(%v)", chosen), len(m.loggers))
	for _, l := range m.loggers {
		l.submit(q, 0, func(ctx context.Context) (any, error) {
			req := &qpb.AcceptRecoveryRequestProto{ReqInfo: l.reqInfo(), StateToAccept: &qpb.SegmentStateProto{
				StartTxId: proto.Uint64(uint64(chosen.Start)), EndTxId: proto.Uint64(uint64(chosen.End)),
				IsInProgress: proto.Bool(chosen.InProgress)}, FromURL: proto.String(url)}
			var resp qpb.AcceptRecoveryResponseProto
			return nil, l.call(ctx, m.cfg.AcceptRecoveryTimeout, "acceptRecovery", req, &resp)
		})
	}
	if err := m.waitQuorum(ctx, q, m.cfg.AcceptRecoveryTimeout); err != nil {
		return nil, err
	}
	// A node that missed the accept still validates its copy before it
	// finalizes, so sending the finalize to all is safe.
	q = newQcall(fmt.Sprintf("finalizeLogSegment(%d-%d)", chosen.Start, chosen.End), len(m.loggers))
	for _, l := range m.loggers {
		l.submit(q, 0, func(ctx context.Context) (any, error) {
			req := &qpb.FinalizeLogSegmentRequestProto{ReqInfo: l.reqInfo(), StartTxId: proto.Uint64(uint64(chosen.Start)), EndTxId: proto.Uint64(uint64(chosen.End))}
			var resp qpb.FinalizeLogSegmentResponseProto
			return nil, l.call(ctx, m.cfg.FinalizeSegmentTimeout, "finalizeLogSegment", req, &resp)
		})
	}
	if err := m.waitQuorum(ctx, q, m.cfg.FinalizeSegmentTimeout); err != nil {
		return nil, err
	}
	m.log.Info("qjournal: recovered segment", "first", chosen.Start, "last", chosen.End)
	return &editlog.SegmentInfo{First: chosen.Start, Last: chosen.End, Name: editlog.FinalizedName(chosen.Start, chosen.End)}, nil
}

func prepareOf(p *qpb.PrepareRecoveryResponseProto) quorum.PrepareResponse {
	r := quorum.PrepareResponse{LastWriterEpoch: p.GetLastWriterEpoch()}
	if p.SegmentState != nil {
		s := quorum.SegmentState{Start: int64(p.GetSegmentState().GetStartTxId()), End: int64(p.GetSegmentState().GetEndTxId()),
			InProgress: p.GetSegmentState().GetIsInProgress()}
		r.Segment = &s
	}
	if p.AcceptedInEpoch != nil {
		r.AcceptedInEpoch, r.HasAccepted = p.GetAcceptedInEpoch(), true
	}
	if p.LastCommittedTxId != nil {
		r.LastCommittedTxID, r.HasCommitted = int64(p.GetLastCommittedTxId()), true
	}
	return r
}

// StartSegment starts segment txid on a quorum; a JournalNode that was out
// of sync writes again from here.
func (m *Manager) StartSegment(ctx context.Context, txid int64) error {
	m.mu.Lock()
	if m.mu.epoch == 0 {
		m.mu.Unlock()
		return ErrNoEpoch
	}
	m.mu.Unlock()
	q := newQcall(fmt.Sprintf("startLogSegment(%d)", txid), len(m.loggers))
	for _, l := range m.loggers {
		l.startSegment(q, txid, storage.NameNodeLayoutVersion)
	}
	if err := m.waitQuorum(ctx, q, m.cfg.StartSegmentTimeout); err != nil {
		return err
	}
	m.mu.Lock()
	m.mu.segTxID, m.mu.pending = txid, nil
	m.mu.Unlock()
	return nil
}

// Write sends a batch to every JournalNode without waiting (each logger
// queues it behind the calls before it); Flush waits for a quorum.
func (m *Manager) Write(_ context.Context, batch []byte, first, last int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.epoch == 0 || m.mu.segTxID == 0 {
		return ErrNoEpoch
	}
	if m.mu.closed {
		return ErrClosed
	}
	// The edit log reuses its buffer once the flush returns; the slowest
	// logger may send this batch later.
	data := append([]byte(nil), batch...)
	q := newQcall(fmt.Sprintf("sendEdits(%d-%d)", first, last), len(m.loggers))
	q.last = last
	n := int(last - first + 1)
	for _, l := range m.loggers {
		l.sendEdits(q, m.mu.segTxID, first, n, data)
	}
	m.mu.pending = append(m.mu.pending, q)
	return nil
}

// Flush waits until a quorum has made every batch written so far durable,
// within dfs.qjournal.write-txns.timeout.ms; then the committed txid moves
// to the last of them (and reaches the JournalNodes with the next call).
func (m *Manager) Flush(ctx context.Context) error {
	m.mu.Lock()
	pending := m.mu.pending
	m.mu.pending = nil
	m.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	deadline := m.clock.Now().Add(m.cfg.WriteTxnsTimeout)
	for _, q := range pending {
		left := deadline.Sub(m.clock.Now())
		if left <= 0 {
			left = 1
		}
		if err := m.waitQuorumLeft(ctx, q, left, m.cfg.WriteTxnsTimeout); err != nil {
			return err
		}
	}
	last := pending[len(pending)-1].last
	m.mu.Lock()
	m.mu.committed = max(m.mu.committed, last)
	m.mu.Unlock()
	for _, l := range m.loggers {
		l.setCommitted(last)
	}
	return nil
}

// FinalizeSegment finalizes first..last on a quorum.
func (m *Manager) FinalizeSegment(ctx context.Context, first, last int64) error {
	q := newQcall(fmt.Sprintf("finalizeLogSegment(%d-%d)", first, last), len(m.loggers))
	for _, l := range m.loggers {
		l.finalizeSegment(q, first, last)
	}
	if err := m.waitQuorum(ctx, q, m.cfg.FinalizeSegmentTimeout); err != nil {
		return err
	}
	m.mu.Lock()
	m.mu.segTxID = 0
	m.mu.Unlock()
	return nil
}

// PurgeBefore asks every JournalNode to delete segments wholly below txid.
// Like Hadoop it does not wait: failing to purge is harmless.
func (m *Manager) PurgeBefore(_ context.Context, txid int64) error {
	m.mu.Lock()
	epoch := m.mu.epoch
	m.mu.Unlock()
	if epoch == 0 {
		return nil // only the writer purges
	}
	m.log.Info("qjournal: purging remote journals older than txid", "txid", txid)
	for _, l := range m.loggers {
		l := l
		t := &task{run: func(ctx context.Context) (any, error) {
			req := &qpb.PurgeLogsRequestProto{ReqInfo: l.reqInfo(), MinTxIdToKeep: proto.Uint64(uint64(txid))}
			var resp qpb.PurgeLogsResponseProto
			return nil, l.call(ctx, m.cfg.OperationsTimeout, "purgeLogs", req, &resp)
		}, done: func(_ any, err error) {
			if err != nil && !errors.Is(err, ErrClosed) {
				m.log.Warn("qjournal: purging a JournalNode's old segments", "jn", l.addr, "err", err)
			}
		}}
		if err := l.enqueue(t); err != nil {
			m.log.Warn("qjournal: purging a JournalNode's old segments", "jn", l.addr, "err", err)
		}
	}
	return nil
}

// LoggerStatus is one JournalNode as this manager sees it.
type LoggerStatus struct {
	Addr string
	// OutOfSync: it gets no writes until the next segment (or will not,
	// once the calls queued for it ran).
	OutOfSync    bool
	HighestAcked int64
	QueuedBytes  int64
}

// Status reports every logger (for status pages and tests).
func (m *Manager) Status() []LoggerStatus {
	out := make([]LoggerStatus, len(m.loggers))
	for i, l := range m.loggers {
		l.mu.Lock()
		out[i] = LoggerStatus{Addr: l.addr, OutOfSync: l.mu.outOfSync || l.mu.behind, HighestAcked: l.mu.highestAcked, QueuedBytes: l.mu.queuedBytes}
		l.mu.Unlock()
	}
	return out
}
