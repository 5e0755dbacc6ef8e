package editlog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// State is the Log's life-cycle state (see the package doc).
type State int

// Log states, named as in Hadoop's FSEditLog.
const (
	StateUninitialized State = iota
	StateBetweenSegments
	StateInSegment
	StateOpenForReading
	StateClosed
)

func (s State) String() string {
	switch s {
	case StateUninitialized:
		return "UNINITIALIZED"
	case StateBetweenSegments:
		return "BETWEEN_LOG_SEGMENTS"
	case StateInSegment:
		return "IN_SEGMENT"
	case StateOpenForReading:
		return "OPEN_FOR_READING"
	case StateClosed:
		return "CLOSED"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Config configures a Log.
type Config struct {
	// MinJournals is how many optional journals must keep accepting writes
	// for the log to go on (dfs.namenode.edits.dir.minimum, default 1), when
	// the log has no required journal. Below it the log fails and
	// acknowledges nothing more. With required journals (HA's shared edits)
	// the local ones are a courtesy: the log goes on while every required
	// journal does.
	MinJournals int
	// AutoRollTxns makes ShouldRoll report true once the open segment holds
	// this many transactions; 0 disables. Hadoop derives its threshold as
	// dfs.namenode.edit.log.autoroll.multiplier.threshold (0.5) ×
	// dfs.namenode.checkpoint.txns (1,000,000) = 500,000.
	AutoRollTxns int64
	// AutoRollBytes makes ShouldRoll report true once the open segment holds
	// this many bytes of records; 0 disables.
	AutoRollBytes int64
	// Logger receives journal failures; nil means slog.Default().
	Logger *slog.Logger
}

// DefaultAutoRollTxns is Hadoop's default auto-roll threshold (see Config).
const DefaultAutoRollTxns = 500_000

// maxRetainedBuffer caps the capacity a flushed buffer keeps for reuse, so
// that one burst does not pin memory for the life of the process.
const maxRetainedBuffer = 8 << 20

// Stats is a snapshot of the Log's counters.
type Stats struct {
	LastTxID   int64 // last txid handed out
	SyncedTxID int64 // highest txid durable in every journal of the set
	Flushes    int64 // batches written and flushed (one fsync per journal each)
	Journals   int   // journals still in the set
}

// Log is the NameNode's edit log: it hands out txids, buffers encoded records
// and makes them durable in a set of journals with group commit.
//
// Append is called with the namesystem write lock held and does no I/O; Sync
// is called after releasing it and waits until the txid is durable. Buffers
// alternate: writers append into mu.buf while a flusher writes another to
// every journal in parallel and flushes them. With required journals a
// flush has two stages — the required journals, then the optional ones —
// and the next batch's first stage runs beside the previous batch's second
// (pipelining): the shared edits take batch N+1 while the local dirs take
// batch N, and no local dir ever gets a batch before the shared edits
// made it durable. A Log is safe for concurrent use.
type Log struct {
	cfg Config
	log *slog.Logger

	// segMu serializes segment transitions (start, end, roll, close, init);
	// it is held across their I/O but never by Append or Sync.
	segMu sync.Mutex

	mu struct {
		sync.Mutex
		state State
		// The journal set; only flushers and segment transitions change it.
		// Required journals (the shared edits of HA) are written and
		// flushed before the optional ones (local edits dirs), and the log
		// fails as soon as one of them fails.
		required, optional []Journal
		// Journals added at run time (AddJournal: a Backup Node's
		// stream). pending ones join at the next segment start; added
		// ones are in the set, written in the second stage after the
		// optional ones (so only once the configured journals made a
		// batch durable), never counted toward MinJournals, and dropped
		// when they fail.
		pending, added []Journal
		buf            []byte // records not yet handed to a flusher
		spare          []byte // a free buffer, when no flush holds it
		bufFirst       int64  // txid of buf's first record
		next           int64  // next txid to hand out; 0 before the first segment
		synced         int64  // highest durable txid
		taken          int64  // last txid handed to a flusher
		// reqBusy: a batch is in the first stage (required journals);
		// optBusy: a batch is in the second stage (optional journals).
		reqBusy, optBusy bool
		// changed is closed (and replaced) whenever synced, the stages or
		// failed change; waiters watch it.
		changed  chan struct{}
		failed   error // set once; every later Sync of a newer txid returns it
		segFirst int64
		segBytes int64
		flushes  int64
	}

	// reqErrs and optErrs are owned by the batch in that stage.
	reqErrs, optErrs []error

	// The syncer (SyncAsync): its registered callbacks and life cycle are
	// under mu.
	async struct {
		waiters []asyncWaiter
		started bool
		stop    bool
		kick    chan struct{}  // cap 1: waiters were added or stop was set
		running sync.WaitGroup // the syncer goroutines
	}
	// releaseMu orders the syncers' releases: each takes every callback
	// then due and calls them before the next release takes its own, so
	// callbacks run in txid order across syncers.
	releaseMu sync.Mutex
}

// asyncWaiter is one SyncAsync registration.
type asyncWaiter struct {
	txid int64
	done func(error)
}

// New returns a Log in state UNINITIALIZED over the required and optional
// journals, which it owns from now on (Close closes them).
func New(cfg Config, required, optional []Journal) (*Log, error) {
	if cfg.MinJournals <= 0 {
		cfg.MinJournals = 1
	}
	if len(required) == 0 && len(optional) < cfg.MinJournals {
		return nil, fmt.Errorf("%w: %d journal(s) configured, dfs.namenode.edits.dir.minimum is %d", ErrNoJournals, len(optional), cfg.MinJournals)
	}
	l := &Log{cfg: cfg, log: cfg.Logger}
	if l.log == nil {
		l.log = slog.Default()
	}
	l.mu.required = append([]Journal(nil), required...)
	l.mu.optional = append([]Journal(nil), optional...)
	l.mu.changed = make(chan struct{})
	return l, nil
}

// allLocked is the journal set, required journals first, journals added at
// run time last.
func (l *Log) allLocked() []Journal {
	all := append(append([]Journal(nil), l.mu.required...), l.mu.optional...)
	return append(all, l.mu.added...)
}

// AddJournal adds j, an optional journal that appears at run time (the
// stream to a Backup Node), to the set. It joins at the next segment start:
// StartSegment is its first call, so it never sees a segment from its
// middle. Once in, it gets every batch after the configured journals made
// it durable (so it never holds an edit they lack), it does not count
// toward MinJournals, and a failure only drops it (closing it). The batch's
// acknowledgement waits for j's Write and Flush, so they must not block (the
// Backup Node's stream queues and sends on its own goroutine). The Log owns
// j from now on.
func (l *Log) AddJournal(j Journal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.state == StateClosed {
		j.Close()
		return
	}
	l.mu.pending = append(l.mu.pending, j)
}

// RemoveJournal takes a journal added with AddJournal out of the set and
// closes it; it reports whether j was there (it is gone already when it
// failed and was dropped).
func (l *Log) RemoveJournal(j Journal) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	found := false
	l.mu.pending, found = without(l.mu.pending, j)
	if !found {
		l.mu.added, found = without(l.mu.added, j)
	}
	if found {
		if err := j.Close(); err != nil {
			l.log.Warn("editlog: closing removed journal", "journal", j.String(), "err", err)
		}
	}
	return found
}

// without returns list without j and whether j was in it.
func without(list []Journal, j Journal) ([]Journal, bool) {
	for k, cur := range list {
		if cur == j {
			return append(list[:k:k], list[k+1:]...), true
		}
	}
	return list, false
}

func (l *Log) isRequiredLocked(j Journal) bool {
	for _, r := range l.mu.required {
		if r == j {
			return true
		}
	}
	return false
}

// RequiredJournals returns the required journals still in the set: the
// shared edits a standby tails.
func (l *Log) RequiredJournals() []Journal {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Journal(nil), l.mu.required...)
}

// State returns the current state.
func (l *Log) State() State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.state
}

// Err returns the failure that stopped the log (a wrapped ErrNoJournals, or
// ErrState once closed), or nil.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.failed
}

// Journals names the journals still in the set.
func (l *Log) Journals() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var names []string
	for _, j := range l.allLocked() {
		names = append(names, j.String())
	}
	return names
}

// Stats returns a snapshot of the counters.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Stats{LastTxID: l.mu.next - 1, SyncedTxID: l.mu.synced, Flushes: l.mu.flushes,
		Journals: len(l.mu.required) + len(l.mu.optional) + len(l.mu.added)}
}

// SegmentTxns is the number of transactions in the open segment (0 outside one).
func (l *Log) SegmentTxns() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.state != StateInSegment {
		return 0
	}
	return l.mu.next - l.mu.segFirst
}

// SegmentBytes is the size of the open segment's records (0 outside one).
func (l *Log) SegmentBytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.state != StateInSegment {
		return 0
	}
	return l.mu.segBytes
}

// ShouldRoll reports whether the open segment passed a Config threshold; the
// NameNode then calls RollSegment.
func (l *Log) ShouldRoll() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.state != StateInSegment {
		return false
	}
	return (l.cfg.AutoRollTxns > 0 && l.mu.next-l.mu.segFirst >= l.cfg.AutoRollTxns) ||
		(l.cfg.AutoRollBytes > 0 && l.mu.segBytes >= l.cfg.AutoRollBytes)
}

func (l *Log) journalsSnapshot() []Journal {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.allLocked()
}

// InitForWrite moves UNINITIALIZED (a NameNode starting) or OPEN_FOR_READING
// (a standby becoming active, once the old writer is fenced) to
// BETWEEN_LOG_SEGMENTS: every journal recovers its in-progress segments
// (cuts torn tails, finalizes them). A journal that fails with an I/O error
// is dropped; corruption is returned and the state does not change.
func (l *Log) InitForWrite(ctx context.Context) error {
	l.segMu.Lock()
	defer l.segMu.Unlock()
	if err := l.expect(StateUninitialized, StateOpenForReading); err != nil {
		return err
	}
	var bad []Journal
	var causes []error
	for _, j := range l.journalsSnapshot() {
		segs, err := j.RecoverInProgress(ctx)
		for _, s := range segs {
			l.log.Info("editlog: recovered in-progress segment", "journal", j.String(), "first", s.First, "last", s.Last, "name", s.Name)
		}
		if err != nil {
			if errors.Is(err, ErrCorrupt) {
				return err
			}
			bad, causes = append(bad, j), append(causes, err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropLocked(bad, causes)
	if l.mu.failed != nil {
		return l.mu.failed
	}
	l.mu.state = StateBetweenSegments
	// A writer's first segment starts after whatever it read (a standby
	// that tailed other writers' edits is far past its own last segment).
	l.mu.next = 0
	return nil
}

// InitForRead moves UNINITIALIZED or BETWEEN_LOG_SEGMENTS (an active that
// became standby, its segment ended) to OPEN_FOR_READING: a standby tailing
// the shared log, which only reads.
func (l *Log) InitForRead() error {
	l.segMu.Lock()
	defer l.segMu.Unlock()
	if err := l.expect(StateUninitialized, StateBetweenSegments); err != nil {
		return err
	}
	l.mu.Lock()
	l.mu.state = StateOpenForReading
	l.mu.Unlock()
	return nil
}

func (l *Log) expect(states ...State) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range states {
		if l.mu.state == s {
			return nil
		}
	}
	return fmt.Errorf("%w: log is %v", ErrState, l.mu.state)
}

// Fail stops the log as a journal failure would: every later Sync of a txid
// not yet durable returns an error wrapping ErrNoJournals and cause, and no
// flush starts any more. The NameNode calls it when it stops acknowledging
// for a reason of its own (a bug found while applying an op), so that what
// was appended but not yet made durable never reaches the journals.
func (l *Log) Fail(cause error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.failed == nil {
		l.mu.failed = fmt.Errorf("%w: the NameNode stopped logging: %v", ErrNoJournals, cause)
		l.signalLocked()
	}
}

// ReadOps replays the journals of the set (see the function ReadOps). It is
// allowed in BETWEEN_LOG_SEGMENTS and OPEN_FOR_READING.
func (l *Log) ReadOps(ctx context.Context, opts ReadOptions, fn func(txid int64, o op.Op) error) (lastTxID int64, err error) {
	if err := l.expect(StateBetweenSegments, StateOpenForReading); err != nil {
		return opts.From, err
	}
	return ReadOps(ctx, l.journalsSnapshot(), opts, fn)
}

// StartSegment moves BETWEEN_LOG_SEGMENTS to IN_SEGMENT: it starts a segment
// at txid in every journal, logs op.StartLogSegment as txid and syncs it.
// The first segment of a run may start at any txid (the one after the last
// replayed); later ones must start right after the previous segment.
func (l *Log) StartSegment(ctx context.Context, txid int64) error {
	l.segMu.Lock()
	defer l.segMu.Unlock()
	return l.startSegment(ctx, txid)
}

func (l *Log) startSegment(ctx context.Context, txid int64) error {
	l.mu.Lock()
	if l.mu.state != StateBetweenSegments {
		defer l.mu.Unlock()
		return fmt.Errorf("%w: start segment while %v", ErrState, l.mu.state)
	}
	if l.mu.failed != nil {
		defer l.mu.Unlock()
		return l.mu.failed
	}
	if txid < 1 || (l.mu.next != 0 && txid != l.mu.next) {
		defer l.mu.Unlock()
		return fmt.Errorf("editlog: start segment at txid %d, expected %d", txid, l.mu.next)
	}
	// Journals added at run time join here, at a segment's first txid.
	l.mu.added = append(l.mu.added, l.mu.pending...)
	l.mu.pending = nil
	journals := l.allLocked()
	l.mu.Unlock()

	var bad []Journal
	var causes []error
	for _, j := range journals {
		if err := j.StartSegment(ctx, txid); err != nil {
			bad, causes = append(bad, j), append(causes, err)
		}
	}

	l.mu.Lock()
	l.dropLocked(bad, causes)
	if l.mu.failed != nil {
		defer l.mu.Unlock()
		return l.mu.failed
	}
	l.mu.state = StateInSegment
	l.mu.next, l.mu.synced, l.mu.taken = txid, txid-1, txid-1
	l.mu.segFirst, l.mu.segBytes = txid, 0
	l.appendLocked(&op.StartLogSegment{}) // empty body: cannot be too large
	l.mu.Unlock()
	return l.Sync(ctx, txid)
}

// Append logs ops, in order, as consecutive transactions and returns the
// txid of the last one. It encodes into memory only; the ops are durable
// once Sync(ctx, last) returns nil. The NameNode calls it with its
// namesystem write lock held, so txid order is the order ops are applied.
//
// The batch is all or nothing: when one op cannot be encoded (an error
// wrapping ErrRecordTooLarge) nothing of the batch is logged, no txid is
// used, and the caller must not apply any of it. Calling Append outside
// IN_SEGMENT is a programming error and panics. After the log failed,
// Append still returns txids, and Sync of them fails.
func (l *Log) Append(ops ...op.Op) (last int64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.state != StateInSegment {
		panic(fmt.Sprintf("editlog: Append of %d op(s) while %v", len(ops), l.mu.state))
	}
	next, bufLen, segBytes, bufFirst := l.mu.next, len(l.mu.buf), l.mu.segBytes, l.mu.bufFirst
	for _, o := range ops {
		if last, err = l.appendLocked(o); err != nil {
			l.mu.next, l.mu.buf, l.mu.segBytes, l.mu.bufFirst = next, l.mu.buf[:bufLen], segBytes, bufFirst
			return 0, err
		}
	}
	return last, nil
}

func (l *Log) appendLocked(o op.Op) (int64, error) {
	txid := l.mu.next
	if l.mu.failed == nil {
		if len(l.mu.buf) == 0 {
			l.mu.bufFirst = txid
		}
		n := len(l.mu.buf)
		buf, err := EncodeRecord(l.mu.buf, txid, o)
		l.mu.buf = buf
		if err != nil {
			return 0, err
		}
		l.mu.segBytes += int64(len(l.mu.buf) - n)
	}
	l.mu.next++
	return txid, nil
}

// Sync waits until txid is durable in every journal of the set. If no flush
// has taken txid yet and the first stage is free, the caller becomes the
// flusher for everything appended so far; otherwise it waits for the
// flushes under way and, if they did not cover txid, flushes next. It
// returns a wrapped ErrNoJournals once the log failed (for every txid not
// already durable), or ctx's error if ctx ends first; in both cases the op
// must not be acknowledged.
func (l *Log) Sync(ctx context.Context, txid int64) error {
	l.mu.Lock()
	for {
		if txid <= l.mu.synced {
			l.mu.Unlock()
			return nil
		}
		if l.mu.failed != nil {
			err := l.mu.failed
			l.mu.Unlock()
			return err
		}
		if txid >= l.mu.next {
			l.mu.Unlock()
			return fmt.Errorf("editlog: sync of txid %d, which was never appended (next is %d)", txid, l.mu.next)
		}
		if err := ctx.Err(); err != nil {
			l.mu.Unlock()
			return err
		}
		// Without required journals there is one stage: a new batch waits
		// for the previous one to finish, and gathers what is appended
		// meanwhile.
		if txid > l.mu.taken && !l.mu.reqBusy && (len(l.mu.required) > 0 || !l.mu.optBusy) {
			l.flushLocked()
			continue
		}
		changed := l.mu.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
		l.mu.Lock()
	}
}

// SyncAsync calls done once txid is durable in every journal of the set
// (with nil), or once the log has failed or closed without making it
// durable (with the error Sync would return). It does not wait: the Log's
// syncer flushes and calls done, in txid order with the other callbacks it
// releases, outside the Log's mutex; done must not block. When txid is
// durable already, or the log has failed, done runs before SyncAsync
// returns. A txid never appended is a programming error, reported to done.
func (l *Log) SyncAsync(txid int64, done func(error)) {
	l.mu.Lock()
	switch {
	case txid <= l.mu.synced:
		l.mu.Unlock()
		done(nil)
		return
	case l.mu.failed != nil:
		err := l.mu.failed
		l.mu.Unlock()
		done(err)
		return
	case txid >= l.mu.next:
		next := l.mu.next
		l.mu.Unlock()
		done(fmt.Errorf("editlog: sync of txid %d, which was never appended (next is %d)", txid, next))
		return
	}
	l.async.waiters = append(l.async.waiters, asyncWaiter{txid: txid, done: done})
	if !l.async.started {
		l.async.started = true
		l.async.kick = make(chan struct{}, 1)
		// With required journals a second syncer lets batches overlap
		// as Sync's callers do: one batch in the required journals while
		// the previous one is in the optional ones.
		n := 1
		if len(l.mu.required) > 0 {
			n = 2
		}
		l.async.running.Add(n)
		for range n {
			go l.syncer()
		}
	}
	l.mu.Unlock()
	select {
	case l.async.kick <- struct{}{}:
	default:
	}
}

// syncer makes the txids registered with SyncAsync durable and calls their
// callbacks; it returns once Close has stopped it and every callback ran.
func (l *Log) syncer() {
	defer l.async.running.Done()
	for {
		// Hand out what is durable, whoever flushed it (another syncer,
		// a Sync caller, a segment transition).
		l.release()
		l.mu.Lock()
		if len(l.async.waiters) == 0 {
			stop := l.async.stop
			l.mu.Unlock()
			if stop {
				// Pass the stop on to the other syncer, if any.
				select {
				case l.async.kick <- struct{}{}:
				default:
				}
				return
			}
			<-l.async.kick
			continue
		}
		var target int64
		for _, w := range l.async.waiters {
			target = max(target, w.txid)
		}
		if target <= l.mu.taken && l.mu.failed == nil {
			// A flush under way covers them all: wait for it to end, or
			// for new waiters to flush next.
			changed := l.mu.changed
			l.mu.Unlock()
			select {
			case <-l.async.kick:
			case <-changed:
			}
			continue
		}
		l.mu.Unlock()
		// Its error is every waiter's, handed out by release; the flush
		// itself cannot be cancelled.
		_ = l.Sync(context.Background(), target)
	}
}

// release calls, in txid order, the callbacks of the txids now durable
// with nil and, once the log has failed, those of every other with the
// failure.
func (l *Log) release() {
	l.releaseMu.Lock()
	defer l.releaseMu.Unlock()
	l.mu.Lock()
	var ready []asyncWaiter
	keep := l.async.waiters[:0]
	for _, w := range l.async.waiters {
		if w.txid <= l.mu.synced || l.mu.failed != nil {
			ready = append(ready, w)
		} else {
			keep = append(keep, w)
		}
	}
	clear(l.async.waiters[len(keep):])
	l.async.waiters = keep
	synced, failed := l.mu.synced, l.mu.failed
	l.mu.Unlock()
	slices.SortStableFunc(ready, func(a, b asyncWaiter) int { return cmp.Compare(a.txid, b.txid) })
	for _, w := range ready {
		if w.txid <= synced {
			w.done(nil)
		} else {
			w.done(failed)
		}
	}
}

// stopSyncer stops the syncer, if it ran, once every registered callback
// was called. Close calls it after the log was closed, so none is left
// waiting.
func (l *Log) stopSyncer() {
	l.mu.Lock()
	started := l.async.started
	l.async.stop = true
	l.mu.Unlock()
	if !started {
		return
	}
	select {
	case l.async.kick <- struct{}{}:
	default:
	}
	l.async.running.Wait()
}

// signalLocked wakes every waiter.
func (l *Log) signalLocked() {
	close(l.mu.changed)
	l.mu.changed = make(chan struct{})
}

// flushLocked takes the appended records as a batch and makes it durable
// in two stages, without holding mu across I/O: the required journals
// (in parallel), then — once the previous batch left its second stage —
// the optional ones (in parallel), and then records the outcome. The next
// batch may start its first stage while this one is in its second. Called
// with mu held and the first stage free; returns with mu held.
func (l *Log) flushLocked() {
	batch, first, last := l.mu.buf, l.mu.bufFirst, l.mu.next-1
	l.mu.buf, l.mu.spare = l.mu.spare[:0], nil
	l.mu.reqBusy, l.mu.taken = true, last
	required := append([]Journal(nil), l.mu.required...)
	l.mu.Unlock()

	// A flush is not the caller's to cancel: once appended, ops must become
	// durable or fail the log, whoever waits for them.
	ctx := context.Background()
	bad, causes := l.writeAll(ctx, required, batch, first, last, &l.reqErrs)

	l.mu.Lock()
	l.dropLocked(bad, causes)
	for l.mu.optBusy {
		changed := l.mu.changed
		l.mu.Unlock()
		<-changed
		l.mu.Lock()
	}
	l.mu.reqBusy, l.mu.optBusy = false, true
	l.signalLocked()
	failed := l.mu.failed
	optional := append([]Journal(nil), l.mu.optional...)
	added := append([]Journal(nil), l.mu.added...)
	l.mu.Unlock()

	bad, causes = nil, nil
	if failed == nil {
		bad, causes = l.writeAll(ctx, optional, batch, first, last, &l.optErrs)
	}

	l.mu.Lock()
	l.dropLocked(bad, causes)
	if l.mu.failed == nil && len(added) > 0 {
		// Durable in the configured journals: now the run-time ones.
		l.mu.Unlock()
		bad, causes = l.writeAll(ctx, added, batch, first, last, &l.optErrs)
		l.mu.Lock()
		l.dropLocked(bad, causes)
	}
	if l.mu.failed == nil {
		l.mu.synced = last
	}
	if cap(batch) <= maxRetainedBuffer && l.mu.spare == nil {
		l.mu.spare = batch[:0]
	}
	l.mu.flushes++
	l.mu.optBusy = false
	l.signalLocked()
}

// writeAll writes batch to journals in parallel and flushes each; it
// returns the ones that failed. errs is the calling stage's scratch.
func (l *Log) writeAll(ctx context.Context, journals []Journal, batch []byte, first, last int64, scratch *[]error) (bad []Journal, causes []error) {
	if len(journals) == 0 {
		return nil, nil
	}
	if cap(*scratch) < len(journals) {
		*scratch = make([]error, len(journals))
	}
	errs := (*scratch)[:len(journals)]
	writeOne := func(i int) {
		if err := journals[i].Write(ctx, batch, first, last); err != nil {
			errs[i] = err
			return
		}
		errs[i] = journals[i].Flush(ctx)
	}
	if len(journals) == 1 {
		writeOne(0)
	} else {
		var wg sync.WaitGroup
		for i := 1; i < len(journals); i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				writeOne(i)
			}()
		}
		writeOne(0)
		wg.Wait()
	}
	for i, err := range errs {
		if err != nil {
			bad, causes = append(bad, journals[i]), append(causes, err)
		}
		errs[i] = nil
	}
	return bad, causes
}

// dropLocked removes failed journals from the set and fails the log when
// fewer than MinJournals remain.
func (l *Log) dropLocked(bad []Journal, causes []error) {
	var lastConfigured error // the last failure of a configured optional journal
	for i, j := range bad {
		var wasAdded bool
		if l.mu.added, wasAdded = without(l.mu.added, j); wasAdded {
			l.log.Error("editlog: dropping failed journal", "journal", j.String(), "err", causes[i])
			if err := j.Close(); err != nil {
				l.log.Warn("editlog: closing failed journal", "journal", j.String(), "err", err)
			}
			continue
		}
		if l.isRequiredLocked(j) {
			if l.mu.failed == nil {
				l.mu.failed = fmt.Errorf("%w: required journal %s failed: %v", ErrNoJournals, j.String(), causes[i])
				l.log.Error("editlog: a required journal failed; no further transaction can be made durable", "journal", j.String(), "err", causes[i])
			}
			continue // kept in the set: nothing is written after a failure
		}
		var wasOptional bool
		if l.mu.optional, wasOptional = without(l.mu.optional, j); !wasOptional {
			continue // out of the set already (removed, or dropped by an earlier failure)
		}
		lastConfigured = causes[i]
		l.log.Error("editlog: dropping failed journal", "journal", j.String(), "err", causes[i],
			"remaining", len(l.mu.optional), "minimum", l.cfg.MinJournals)
		if err := j.Close(); err != nil {
			l.log.Warn("editlog: closing failed journal", "journal", j.String(), "err", err)
		}
	}
	if l.mu.failed == nil && lastConfigured != nil && len(l.mu.required) == 0 && len(l.mu.optional) < l.cfg.MinJournals {
		l.mu.failed = fmt.Errorf("%w: %d journal(s) left, dfs.namenode.edits.dir.minimum is %d; last failure: %v",
			ErrNoJournals, len(l.mu.optional), l.cfg.MinJournals, lastConfigured)
		l.log.Error("editlog: edit log failed; no further transaction can be made durable", "err", l.mu.failed)
	}
}

// EndSegment moves IN_SEGMENT to BETWEEN_LOG_SEGMENTS: it logs
// op.EndLogSegment, syncs, and finalizes the segment in every journal. The
// caller must stop Appends first (the NameNode holds its write lock).
func (l *Log) EndSegment(ctx context.Context) error {
	l.segMu.Lock()
	defer l.segMu.Unlock()
	return l.endSegment(ctx)
}

func (l *Log) endSegment(ctx context.Context) error {
	l.mu.Lock()
	if l.mu.state != StateInSegment {
		defer l.mu.Unlock()
		return fmt.Errorf("%w: end segment while %v", ErrState, l.mu.state)
	}
	txid, _ := l.appendLocked(&op.EndLogSegment{}) // empty body: cannot be too large
	first := l.mu.segFirst
	l.mu.state = StateBetweenSegments
	l.mu.Unlock()
	if err := l.Sync(ctx, txid); err != nil {
		return err
	}

	var bad []Journal
	var causes []error
	for _, j := range l.journalsSnapshot() {
		if err := j.FinalizeSegment(ctx, first, txid); err != nil {
			bad, causes = append(bad, j), append(causes, err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropLocked(bad, causes)
	return l.mu.failed
}

// RollSegment ends the open segment and starts the next one; it returns the
// new segment's first txid. The caller must stop Appends meanwhile.
func (l *Log) RollSegment(ctx context.Context) (int64, error) {
	l.segMu.Lock()
	defer l.segMu.Unlock()
	if err := l.endSegment(ctx); err != nil {
		return 0, err
	}
	l.mu.Lock()
	next := l.mu.next
	l.mu.Unlock()
	if err := l.startSegment(ctx, next); err != nil {
		return 0, err
	}
	return next, nil
}

// PurgeBefore asks every journal to delete finalized segments wholly below
// txid (retention after a checkpoint). A journal failing to purge is logged,
// not dropped: retention is not durability.
func (l *Log) PurgeBefore(ctx context.Context, txid int64) error {
	var first error
	for _, j := range l.journalsSnapshot() {
		if err := j.PurgeBefore(ctx, txid); err != nil {
			l.log.Warn("editlog: purge failed", "journal", j.String(), "txid", txid, "err", err)
			if first == nil {
				first = err
			}
		}
	}
	return first
}

// Close finalizes the open segment, if any, closes every journal and moves to
// CLOSED. After a failure it closes the journals without finalizing and
// returns the failure.
func (l *Log) Close() error {
	l.segMu.Lock()
	defer l.segMu.Unlock()
	var err error
	l.mu.Lock()
	state, failed := l.mu.state, l.mu.failed
	l.mu.Unlock()
	if state == StateClosed {
		return nil
	}
	if state == StateInSegment && failed == nil {
		err = l.endSegment(context.Background())
	}
	l.mu.Lock()
	journals := append(l.allLocked(), l.mu.pending...)
	l.mu.required, l.mu.optional, l.mu.added, l.mu.pending = nil, nil, nil, nil
	l.mu.state = StateClosed
	if err == nil {
		err = l.mu.failed
	}
	if l.mu.failed == nil {
		l.mu.failed = fmt.Errorf("%w: log is closed", ErrState)
	}
	l.mu.Unlock()
	for _, j := range journals {
		if cerr := j.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	l.stopSyncer()
	return err
}
