package editlog

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// asyncResults collects SyncAsync callbacks.
type asyncResults struct {
	mu    sync.Mutex
	order []int64
	errs  map[int64]error
	all   chan struct{}
	want  int
}

func newAsyncResults(want int) *asyncResults {
	return &asyncResults{errs: make(map[int64]error), all: make(chan struct{}), want: want}
}

func (r *asyncResults) done(txid int64) func(error) {
	return func(err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if _, dup := r.errs[txid]; dup {
			panic("callback called twice")
		}
		r.order = append(r.order, txid)
		r.errs[txid] = err
		if len(r.order) == r.want {
			close(r.all)
		}
	}
}

func (r *asyncResults) wait(t *testing.T) {
	t.Helper()
	select {
	case <-r.all:
	case <-time.After(10 * time.Second):
		t.Fatalf("only %d of %d callbacks after 10 s", len(r.order), r.want)
	}
}

// TestSyncAsyncDurableInOrder: every callback comes once, after its txid is
// durable (a crash right after the callback keeps the record), and callbacks
// come in txid order; a flush gathers what was appended while the previous
// one ran, so there are fewer flushes than txids.
func TestSyncAsyncDurableInOrder(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	gate := &gateJournal{Journal: NewFileJournal(m, dirs[0]), entered: make(chan int64, 100)}
	l, err := New(Config{MinJournals: 1, Logger: quietLogger}, nil, []Journal{gate})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := l.InitForWrite(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.StartSegment(ctx, 1); err != nil {
		t.Fatal(err)
	}
	<-gate.entered // the start-segment flush
	flushes0 := l.Stats().Flushes
	hold := make(chan struct{})
	gate.mu.Lock()
	gate.gate = hold
	gate.mu.Unlock()

	const n = 50
	res := newAsyncResults(n)
	var crashedAt atomic.Pointer[vfs.MemFS]
	first := mustAppend(t, l, mkdir(0))
	l.SyncAsync(first, func(err error) {
		// Durable before the answer: a crash now keeps txid first.
		crashedAt.Store(m.CrashClone())
		res.done(first)(err)
	})
	<-gate.entered // the syncer's first flush is under way, held at the gate
	for i := 1; i < n; i++ {
		txid := mustAppend(t, l, mkdir(i))
		l.SyncAsync(txid, res.done(txid))
	}
	close(hold)
	res.wait(t)
	for txid, err := range res.errs {
		if err != nil {
			t.Errorf("txid %d: %v", txid, err)
		}
	}
	if !slices.IsSorted(res.order) {
		t.Errorf("callbacks out of txid order: %v", res.order)
	}
	if f := l.Stats().Flushes - flushes0; f != 2 {
		t.Errorf("%d flushes for %d txids, want 2: the first, then all appended while it ran", f, n)
	}
	if l.Stats().SyncedTxID < first+n-1 {
		t.Errorf("synced %d, want >= %d", l.Stats().SyncedTxID, first+n-1)
	}
	// Already durable: the callback runs at once.
	called := false
	l.SyncAsync(first, func(err error) { called = err == nil })
	if !called {
		t.Error("SyncAsync of a durable txid did not call back at once")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	crashed := crashedAt.Load()
	got, _, err := replay(t, crashed, dirs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(got, func(r replayed) bool { return r.txid == first }) {
		t.Errorf("txid %d was called back before it was durable", first)
	}
}

// TestSyncAsyncFailure: when the log fails, every registered callback gets
// the failure (none is left behind, none gets nil), and later ones get it at
// once; Close stops the syncer.
func TestSyncAsyncFailure(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	var armed atomic.Bool
	l := openLog(t, failingFS(m, "/name1/", &armed), dirs, 1, 1)
	ok := mustAppend(t, l, mkdir(0))
	res := newAsyncResults(1)
	l.SyncAsync(ok, res.done(ok))
	res.wait(t)
	if res.errs[ok] != nil {
		t.Fatalf("healthy log: %v", res.errs[ok])
	}

	armed.Store(true)
	const n = 10
	res = newAsyncResults(n)
	for i := range n {
		txid := mustAppend(t, l, mkdir(i+1))
		l.SyncAsync(txid, res.done(txid))
	}
	res.wait(t)
	for txid, err := range res.errs {
		if !errors.Is(err, ErrNoJournals) {
			t.Errorf("txid %d: %v, want ErrNoJournals", txid, err)
		}
	}
	var late error
	l.SyncAsync(mustAppend(t, l, mkdir(99)), func(err error) { late = err })
	if !errors.Is(late, ErrNoJournals) {
		t.Errorf("after the failure: %v", late)
	}
	l.Close()
}

// TestSyncAsyncClose: callbacks registered when Close ends the segment are
// all called, with nil (Close makes them durable); after Close, SyncAsync
// reports the closed log at once.
func TestSyncAsyncClose(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	l := openLog(t, m, dirs, 1, 1)
	const n = 20
	res := newAsyncResults(n)
	for i := range n {
		txid := mustAppend(t, l, mkdir(i))
		l.SyncAsync(txid, res.done(txid))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	res.wait(t)
	for txid, err := range res.errs {
		if err != nil {
			t.Errorf("txid %d: %v", txid, err)
		}
	}
	var after error
	l.SyncAsync(1000, func(err error) { after = err })
	if after == nil {
		t.Error("SyncAsync after Close succeeded")
	}
}

// TestSyncAsyncPipelined: with a required journal, the syncers overlap
// batches as Sync's callers do: while the local dir holds batch 1, batch 2
// is made durable in the shared journal; neither callback comes before the
// local dir has its batch, and they come in txid order.
func TestSyncAsyncPipelined(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 2)
	shared := &gateJournal{Journal: NewFileJournal(m, dirs[0])}
	local := &gateJournal{Journal: NewFileJournal(m, dirs[1])}
	l, err := New(Config{MinJournals: 1, Logger: quietLogger}, []Journal{shared}, []Journal{local})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	if err := l.InitForWrite(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.StartSegment(ctx, 1); err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	local.mu.Lock()
	local.gate, local.entered = gate, make(chan int64, 4)
	local.mu.Unlock()
	opened := false
	defer func() {
		if !opened {
			close(gate)
		}
	}()
	res := newAsyncResults(2)
	first := mustAppend(t, l, mkdir(1))
	l.SyncAsync(first, res.done(first))
	if got := <-local.entered; got != first {
		t.Fatalf("the local dir flushes txid %d first, want %d", got, first)
	}
	second := mustAppend(t, l, mkdir(2))
	l.SyncAsync(second, res.done(second))
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(shared.batches(), second) {
		if time.Now().After(deadline) {
			t.Fatalf("the shared journal did not flush txid %d while the local dir held txid %d (shared: %v)", second, first, shared.batches())
		}
		time.Sleep(time.Millisecond)
	}
	res.mu.Lock()
	early := len(res.order)
	res.mu.Unlock()
	if early != 0 {
		t.Fatalf("%d callbacks before the local dir had their batches", early)
	}
	close(gate)
	opened = true
	res.wait(t)
	if !slices.Equal(res.order, []int64{first, second}) || res.errs[first] != nil || res.errs[second] != nil {
		t.Fatalf("callbacks %v, errors %v", res.order, res.errs)
	}
}
