package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	qpb "github.com/hdfsgo/hdfsgo/internal/proto/qjournal"
)

// Errors of the client.
var (
	// ErrOutOfSync: the JournalNode missed edits of the open segment (it
	// failed a write, restarted, or fell too far behind); it gets no more
	// writes until the next segment starts.
	ErrOutOfSync = errors.New("qjournal: Journal disabled until next roll")
	// ErrTooFarBehind: more than dfs.qjournal.queued-edits.limit.mb of
	// edits wait for this JournalNode.
	ErrTooFarBehind = errors.New("qjournal: the JournalNode is too far behind (dfs.qjournal.queued-edits.limit.mb of edits queued)")
	// ErrNoEpoch: a write before the journal became the writer
	// (RecoverInProgress).
	ErrNoEpoch = errors.New("qjournal: must recover segments (take an epoch) before writing")
	// ErrClosed: the manager is closed.
	ErrClosed = errors.New("qjournal: the quorum journal manager is closed")
	// ErrTimeout: a quorum did not answer in time.
	ErrTimeout = errors.New("qjournal: timed out waiting for a quorum of JournalNodes")
)

// heartbeatInterval: an out-of-sync logger still sends a heartbeat this
// often, so that the JournalNode's committed txid and lag stay current.
const heartbeatInterval = time.Second

// logger is the channel to one JournalNode (Hadoop's IPCLoggerChannel):
// calls that must stay in order (every writer call) run one at a time on
// its own goroutine, in the order queued; reads (manifests, cached edits)
// run in parallel with them. A logger is safe for concurrent use.
type logger struct {
	m    *Manager
	idx  int
	addr string // host:port of the JournalNode's RPC server
	// rpc is the connection's client; a call that gets no answer in time
	// replaces it (a hung connection is not used again).
	rpcMu sync.Mutex
	rpc   *ipc.Client

	wake chan struct{} // a task was queued (capacity 1)
	done chan struct{} // the goroutine ended

	mu struct {
		sync.Mutex
		queue       []*task
		queuedBytes int64
		epoch       uint64
		serial      uint64
		committed   int64
		// sending is the committed txid the running call carries: the
		// committed txid when it was queued (see task.committed).
		sending   int64
		outOfSync bool
		// behind: a batch was refused for the queue's bound and the gap
		// marker that makes the logger out of sync, in queue order, has
		// not run yet; tailIsGap: the last queued task is that marker.
		behind, tailIsGap bool
		httpBase          string    // "http://host:port" of its web server, once known
		highestAcked      int64     // last txid it acknowledged
		lastHeartbeat     time.Time // of an out-of-sync logger
		closed            bool
	}
}

// task is one ordered call.
type task struct {
	run   func(ctx context.Context) (any, error)
	bytes int64
	done  func(v any, err error)
	// committed is the committed txid when the call was queued, which
	// is what it tells the JournalNode. A lagging node's call must not
	// carry a txid committed since: the recovery of an old segment would
	// carry a txid of the segment after it, which the node could only
	// take for one of the old segment's (acceptRecovery refuses to drop
	// a committed txid).
	committed int64
}

func newLogger(m *Manager, idx int, addr string) *logger {
	l := &logger{m: m, idx: idx, addr: addr, wake: make(chan struct{}, 1), done: make(chan struct{})}
	l.rpc = l.newRPC()
	go l.loop()
	return l
}

func (l *logger) String() string { return l.addr }

// loop runs the ordered calls until close.
func (l *logger) loop() {
	defer close(l.done)
	for {
		l.mu.Lock()
		for len(l.mu.queue) == 0 && !l.mu.closed {
			l.mu.Unlock()
			select {
			case <-l.wake:
			case <-l.m.life.Done():
			}
			l.mu.Lock()
			if l.m.life.Err() != nil {
				l.mu.closed = true
			}
		}
		if l.mu.closed {
			q := l.mu.queue
			l.mu.queue, l.mu.queuedBytes = nil, 0
			l.mu.Unlock()
			for _, t := range q {
				t.done(nil, ErrClosed)
			}
			return
		}
		t := l.mu.queue[0]
		l.mu.queue[0] = nil
		l.mu.queue = l.mu.queue[1:]
		l.mu.sending = t.committed
		l.mu.Unlock()
		v, err := t.run(l.m.life)
		l.mu.Lock()
		l.mu.queuedBytes -= t.bytes
		l.mu.Unlock()
		t.done(v, err)
	}
}

// enqueue queues an ordered call; with bytes > 0 (a batch of edits) the
// queue's byte bound applies. A batch refused for it leaves a gap in what
// the JournalNode gets, so a marker goes into the queue in its place: when
// it runs, the logger is out of sync — after the calls queued before it,
// and until a startLogSegment queued after it succeeds.
func (l *logger) enqueue(t *task) error {
	l.mu.Lock()
	if l.mu.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	if t.bytes > 0 && l.mu.queuedBytes > 0 && l.mu.queuedBytes+t.bytes > l.m.cfg.QueueLimitBytes {
		if !l.mu.behind && !l.mu.outOfSync {
			l.m.log.Warn("qjournal: a JournalNode fell too far behind; skipping it until the next segment",
				"jn", l.addr, "queuedBytes", l.mu.queuedBytes, "limit", l.m.cfg.QueueLimitBytes)
		}
		l.mu.behind = true
		if !l.mu.tailIsGap {
			l.mu.tailIsGap = true
			l.mu.queue = append(l.mu.queue, &task{run: l.markGap, done: func(any, error) {}})
		}
		l.mu.Unlock()
		l.wakeUp()
		return ErrTooFarBehind
	}
	t.committed = l.mu.committed
	l.mu.queue = append(l.mu.queue, t)
	l.mu.queuedBytes += t.bytes
	l.mu.tailIsGap = false
	l.mu.Unlock()
	l.wakeUp()
	return nil
}

func (l *logger) wakeUp() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// markGap is the queued marker of a refused batch.
func (l *logger) markGap(context.Context) (any, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.outOfSync, l.mu.behind = true, false
	return nil, nil
}

// submit queues an ordered call whose outcome goes to q as answer idx.
func (l *logger) submit(q *qcall, bytes int64, run func(ctx context.Context) (any, error)) {
	t := &task{run: run, bytes: bytes, done: func(v any, err error) { q.answer(l.idx, v, err) }}
	if err := l.enqueue(t); err != nil {
		q.answer(l.idx, nil, err)
	}
}

// parallel runs a read call on a goroutine of its own (owned by the
// manager, which waits for it at Close); its outcome goes to q.
func (l *logger) parallel(q *qcall, run func(ctx context.Context) (any, error)) {
	l.m.wg.Add(1)
	go func() {
		defer l.m.wg.Done()
		v, err := run(l.m.life)
		q.answer(l.idx, v, err)
	}()
}

func (l *logger) newRPC() *ipc.Client {
	return ipc.NewClient(ipc.ClientConfig{Addresses: []string{l.addr}, User: l.m.cfg.User,
		Protocol: protocolName, MaxRetries: -1, DialTimeout: min(l.m.cfg.WriteTxnsTimeout, 20*time.Second),
		Logger: l.m.log, Kerberos: l.m.cfg.Kerberos, Protection: l.m.cfg.Protection})
}

func (l *logger) client() *ipc.Client {
	l.rpcMu.Lock()
	defer l.rpcMu.Unlock()
	return l.rpc
}

// closeRPC closes the current client (Close of the manager).
func (l *logger) closeRPC() {
	l.rpcMu.Lock()
	defer l.rpcMu.Unlock()
	l.rpc.Close()
}

// call makes one RPC, bounded by timeout. When the JournalNode does not
// answer in time the connection is dropped, so that the next call dials
// afresh instead of queueing behind a hung one.
func (l *logger) call(ctx context.Context, timeout time.Duration, method string, req, resp proto.Message) error {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := l.client()
	if err := c.Call(cctx, method, req, resp); err != nil {
		if cctx.Err() != nil && ctx.Err() == nil {
			l.rpcMu.Lock()
			if l.rpc == c {
				l.rpc = l.newRPC()
				c.Close()
			}
			l.rpcMu.Unlock()
			return fmt.Errorf("%s to %s: no answer within %v: %w", method, l.addr, timeout, err)
		}
		return fmt.Errorf("%s to %s: %w", method, l.addr, err)
	}
	return nil
}

// reqInfo is the RequestInfo of the next writer call: epoch, a serial
// number that grows with every call, and the committed txid as the
// running call was queued.
func (l *logger) reqInfo() *qpb.RequestInfoProto {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := &qpb.RequestInfoProto{JournalId: l.m.jidProto(), Epoch: proto.Uint64(l.mu.epoch),
		IpcSerialNumber: proto.Uint64(l.mu.serial)}
	l.mu.serial++
	if l.mu.sending > 0 {
		r.CommittedTxId = proto.Uint64(uint64(l.mu.sending))
	}
	if ns := l.m.cfg.NameserviceID; ns != "" {
		r.NameServiceId = proto.String(ns)
	}
	return r
}

func (l *logger) setEpoch(e uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.epoch = e
}

// reset forgets what a previous term as the writer left: the epoch, the
// committed txid, out-of-sync.
func (l *logger) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.epoch, l.mu.committed, l.mu.sending, l.mu.outOfSync, l.mu.highestAcked = 0, 0, 0, false, 0
	l.mu.behind = false
}

func (l *logger) setCommitted(txid int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.committed = max(l.mu.committed, txid)
}

func (l *logger) isOutOfSync() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.outOfSync
}

// setHTTP records the JournalNode's web server from a fromURL or httpPort:
// the host this logger dials, with the scheme and port the node gave.
func (l *logger) setHTTP(fromURL string, port uint32) {
	host, _, err := net.SplitHostPort(l.addr)
	if err != nil {
		return
	}
	p := strconv.FormatUint(uint64(port), 10)
	if fromURL != "" {
		if u, err := url.Parse(fromURL); err == nil && u.Port() != "" {
			p = u.Port()
		}
	}
	if p == "0" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.httpBase = "http://" + net.JoinHostPort(host, p)
}

func (l *logger) httpBase() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.httpBase
}

// checkInSync fails a write to an out-of-sync JournalNode at once; such a
// node still gets a heartbeat each second so it keeps learning the
// committed txid.
func (l *logger) checkInSync(ctx context.Context) error {
	l.mu.Lock()
	out := l.mu.outOfSync
	beat := out && l.m.clock.Since(l.mu.lastHeartbeat) >= heartbeatInterval
	if beat {
		l.mu.lastHeartbeat = l.m.clock.Now()
	}
	l.mu.Unlock()
	if !out {
		return nil
	}
	if beat {
		var resp qpb.HeartbeatResponseProto
		_ = l.call(ctx, l.m.cfg.WriteTxnsTimeout, "heartbeat", &qpb.HeartbeatRequestProto{ReqInfo: l.reqInfo()}, &resp)
	}
	return fmt.Errorf("%w (%s)", ErrOutOfSync, l.addr)
}

// sendEdits queues a journal() of a batch.
func (l *logger) sendEdits(q *qcall, segTxID, first int64, n int, data []byte) {
	l.submit(q, int64(len(data)), func(ctx context.Context) (any, error) {
		if err := l.checkInSync(ctx); err != nil {
			return nil, err
		}
		req := &qpb.JournalRequestProto{ReqInfo: l.reqInfo(), FirstTxnId: proto.Uint64(uint64(first)),
			NumTxns: proto.Uint32(uint32(n)), Records: data, SegmentTxnId: proto.Uint64(uint64(segTxID))}
		var resp qpb.JournalResponseProto
		if err := l.call(ctx, l.m.cfg.WriteTxnsTimeout, "journal", req, &resp); err != nil {
			l.mu.Lock()
			if !l.mu.outOfSync {
				l.m.log.Warn("qjournal: a JournalNode failed to write; it gets no more writes until the next segment",
					"jn", l.addr, "txids", fmt.Sprintf("%d-%d", first, first+int64(n)-1), "err", err)
			}
			l.mu.outOfSync = true
			l.mu.Unlock()
			return nil, err
		}
		l.mu.Lock()
		l.mu.highestAcked = first + int64(n) - 1
		l.mu.Unlock()
		return nil, nil
	})
}

// startSegment queues startLogSegment; success brings an out-of-sync
// logger back.
func (l *logger) startSegment(q *qcall, txid int64, layoutVersion int32) {
	l.submit(q, 0, func(ctx context.Context) (any, error) {
		req := &qpb.StartLogSegmentRequestProto{ReqInfo: l.reqInfo(), Txid: proto.Uint64(uint64(txid)), LayoutVersion: proto.Int32(layoutVersion)}
		var resp qpb.StartLogSegmentResponseProto
		if err := l.call(ctx, l.m.cfg.StartSegmentTimeout, "startLogSegment", req, &resp); err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.mu.outOfSync {
			l.m.log.Info("qjournal: writing to the JournalNode again from the new segment", "jn", l.addr, "segment", txid)
		}
		l.mu.outOfSync = false
		l.mu.Unlock()
		return nil, nil
	})
}

// finalizeSegment queues finalizeLogSegment (skipped for an out-of-sync
// logger, whose copy of the segment is incomplete).
func (l *logger) finalizeSegment(q *qcall, first, last int64) {
	l.submit(q, 0, func(ctx context.Context) (any, error) {
		if err := l.checkInSync(ctx); err != nil {
			return nil, err
		}
		req := &qpb.FinalizeLogSegmentRequestProto{ReqInfo: l.reqInfo(), StartTxId: proto.Uint64(uint64(first)), EndTxId: proto.Uint64(uint64(last))}
		var resp qpb.FinalizeLogSegmentResponseProto
		return nil, l.call(ctx, l.m.cfg.FinalizeSegmentTimeout, "finalizeLogSegment", req, &resp)
	})
}
