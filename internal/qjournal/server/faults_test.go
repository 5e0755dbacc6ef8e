package server_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/client"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/server"
)

// load writes batches of mkdirs until stop is closed, recording the last
// txid acknowledged; it returns the first error.
type load struct {
	w     *writer
	stop  chan struct{}
	done  chan error
	mu    sync.Mutex
	acked int64
	n     int
}

func startLoad(w *writer) *load {
	l := &load{w: w, stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		for i := 0; ; i++ {
			select {
			case <-l.stop:
				l.done <- nil
				return
			default:
			}
			last, err := w.mkdirs(fmt.Sprintf("l%d-", i), 5)
			if err != nil {
				l.done <- err
				return
			}
			l.mu.Lock()
			l.acked, l.n = last, l.n+1
			l.mu.Unlock()
		}
	}()
	return l
}

func (l *load) progress() (int64, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acked, l.n
}

// waitBatches waits until the load acknowledged n more batches.
func (l *load) waitBatches(t *testing.T, n int) {
	t.Helper()
	_, start := l.progress()
	waitFor(t, fmt.Sprintf("%d more acknowledged batches", n), func() bool {
		_, now := l.progress()
		select {
		case err := <-l.done:
			t.Fatalf("the load stopped: %v", err)
		default:
		}
		return now >= start+n
	})
}

func (l *load) end(t *testing.T) int64 {
	t.Helper()
	close(l.stop)
	if err := <-l.done; err != nil {
		t.Fatalf("the load failed: %v", err)
	}
	acked, _ := l.progress()
	return acked
}

// TestOneJournalNodeDown: under a write load one of three JournalNodes
// stops; writes go on (a quorum of two), it comes back and is written to
// again from the next segment, and JournalNode sync fetches the segment it
// missed from a peer.
func TestOneJournalNodeDown(t *testing.T) {
	s := startJNs(t, 3, func(c *server.Config) { c.EnableSync = true; c.SyncInterval = time.Hour })
	s.format()
	w := s.newWriter(nil)
	w.become()
	ld := startLoad(w)
	ld.waitBatches(t, 5)
	s.stop(2)
	ld.waitBatches(t, 20) // writes go on without it
	s.start(2)
	ld.waitBatches(t, 5)
	// It is out of sync until the next segment.
	seg, err := w.roll()
	if err != nil {
		t.Fatal(err)
	}
	// Its first batch of the new segment puts it back in sync; on a busy
	// machine that batch may come some batches after the roll.
	for deadline := time.Now().Add(10 * time.Second); ; {
		ld.waitBatches(t, 5)
		var out []string
		for _, st := range w.m.Status() {
			if st.OutOfSync {
				out = append(out, st.Addr)
			}
		}
		if len(out) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v still out of sync 10 s after the roll to %d", out, seg)
		}
	}
	acked := ld.end(t)
	// Back in sync, it gets every batch (maybe after the writer has a
	// quorum without it).
	waitFor(t, fmt.Sprintf("the restarted JournalNode writes up to %d", acked), func() bool {
		return s.journal(2).Status().HighestWrittenTxID == acked
	})
	// It lacks the segment it missed (it was down while it was written
	// and finalized) until sync fetches it from a peer.
	missed := finalized(t, s, 0)
	have := finalized(t, s, 2)
	if len(missed) == len(have) {
		t.Fatalf("jn2 has every finalized segment already: %v", have)
	}
	n, err := s.nodes[2].SyncOnce(context.Background(), s.journal(2), nil)
	if err != nil || n == 0 {
		t.Fatalf("sync fetched %d segments: %v", n, err)
	}
	if got := finalized(t, s, 2); strings.Join(got, ",") != strings.Join(missed, ",") {
		t.Fatalf("after sync jn2 has %v, jn0 %v", got, missed)
	}
	// Its own copy of the segment it was writing when it stopped, left in
	// progress, is set aside.
	names, _ := os.ReadDir(filepath.Join(s.dirs[2], jid, "current"))
	for _, e := range names {
		if strings.HasPrefix(e.Name(), "edits_inprogress_") && !strings.HasSuffix(e.Name(), ".stale") &&
			!strings.HasSuffix(e.Name(), editlog.InProgressName(seg)[len("edits_inprogress_"):]) {
			t.Errorf("jn2 keeps %s", e.Name())
		}
	}
	// Every node's copy reads back whole.
	s.caughtUp(acked)
	txids, _, err := s.readAll(true)
	if err != nil {
		t.Fatal(err)
	}
	checkContiguous(t, txids, 1, acked)
}

var holes []net.Listener

// blackHole listens on addr and accepts connections that are never
// answered, until the test ends.
func blackHole(t *testing.T, addr string) {
	t.Helper()
	l := listen(t, addr)
	holes = append(holes, l)
	var conns []net.Conn
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
}

func finalized(t *testing.T, s *jnSet, i int) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(s.dirs[i], s.jid, "current"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if _, _, ip, ok := editlog.ParseSegmentName(e.Name()); ok && !ip {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestTwoJournalNodesDown: with two of three JournalNodes gone the next
// batch cannot reach a quorum; the flush fails within
// dfs.qjournal.write-txns.timeout.ms, the edit log fails, and nothing
// after it is acknowledged.
func TestTwoJournalNodesDown(t *testing.T) {
	s := startJNs(t, 3, nil)
	s.format()
	w := s.newWriter(func(c *client.Config) { c.WriteTxnsTimeout = 700 * time.Millisecond })
	w.become()
	acked, err := w.mkdirs("a", 10)
	if err != nil {
		t.Fatal(err)
	}
	// Two JournalNodes hang: their addresses accept connections and
	// never answer (a partition that drops packets behaves so).
	s.stop(1)
	s.stop(2)
	for _, i := range []int{1, 2} {
		blackHole(t, s.addrs[i])
	}
	start := time.Now()
	_, err = w.mkdirs("b", 1)
	took := time.Since(start)
	if err == nil {
		t.Fatal("a batch was acknowledged by one JournalNode of three")
	}
	if !errors.Is(err, editlog.ErrNoJournals) {
		t.Fatalf("err %v does not fail the log", err)
	}
	// A call on a connection the stopped node closed fails at once; one
	// on a fresh connection to a hung node waits for the timeout.
	if took > 5*time.Second {
		t.Fatalf("the failure took %v with a write timeout of 700ms: %v", took, err)
	}
	if !strings.Contains(err.Error(), "Timed out waiting 700ms for a quorum of nodes to respond") &&
		!strings.Contains(err.Error(), "Got too many exceptions to achieve quorum size 2/3") {
		t.Errorf("err %v does not say the quorum failed", err)
	}
	if _, err := w.mkdirs("c", 1); err == nil {
		t.Fatal("the failed log acknowledged a later batch")
	}
	for _, l := range holes {
		l.Close()
	}
	s.start(1)
	s.start(2)
	// What survives is what the next writer's recovery keeps.
	s.newWriter(nil).become()
	txids, paths, err := s.readAll(true)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		if strings.HasPrefix(p, "/c") || (strings.HasPrefix(p, "/b") && txids[i] <= acked) {
			t.Fatalf("txid %d %s is in the log", txids[i], p)
		}
	}
	if txids[len(txids)-1] < acked {
		t.Fatalf("the log ends at %d, %d was acknowledged", txids[len(txids)-1], acked)
	}
}

// TestSlowJournalNodeSkipped: a JournalNode that accepts connections but
// never answers does not hold the writer up: once more than
// dfs.qjournal.queued-edits.limit.mb of edits wait for it, it is marked
// out of sync and skipped (the queue stays bounded); once it answers again
// it is written to from the next segment.
func TestSlowJournalNodeSkipped(t *testing.T) {
	s := startJNs(t, 3, nil)
	s.format()
	s.stop(2)
	blackHole(t, s.addrs[2])
	const limit = 4 << 10
	w := s.newWriter(func(c *client.Config) {
		c.QueueLimitBytes = limit
		c.WriteTxnsTimeout, c.StartSegmentTimeout, c.GetJournalStateTimeout, c.NewEpochTimeout = time.Second, time.Second, time.Second, time.Second
	})
	w.become()
	for range 100 {
		if _, err := w.mkdirs("a", 5); err != nil {
			t.Fatal(err)
		}
	}
	st := w.m.Status()[2]
	if !st.OutOfSync {
		t.Fatalf("the hung JournalNode is not out of sync: %+v", st)
	}
	if st.QueuedBytes > 2*limit {
		t.Fatalf("%d bytes queued for the hung JournalNode, the limit is %d", st.QueuedBytes, limit)
	}
	for _, l := range holes {
		l.Close()
	}
	holes = nil
	s.start(2)
	// What was queued for it drains (its calls time out, or fail at
	// once); the next segment then starts on it too.
	waitFor(t, "the queue for the JournalNode drains", func() bool { return w.m.Status()[2].QueuedBytes == 0 })
	if _, err := w.roll(); err != nil {
		t.Fatal(err)
	}
	last, err := w.mkdirs("b", 5)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the JournalNode back in sync writes the new segment", func() bool {
		return s.journal(2).Status().HighestWrittenTxID == last
	})
}
