package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
)

// TestWriteReadBack: an edit log over three JournalNodes writes two
// segments; another manager reads every txid back, the in-progress part
// from the JournalNodes' caches.
func TestWriteReadBack(t *testing.T) {
	s := startJNs(t, 3, nil)
	s.format()
	w := s.newWriter(nil)
	first := w.become()
	if first != 1 {
		t.Fatalf("first segment starts at %d", first)
	}
	if _, err := w.mkdirs("a", 50); err != nil {
		t.Fatal(err)
	}
	if _, err := w.log.RollSegment(context.Background()); err != nil {
		t.Fatal(err)
	}
	last, err := w.mkdirs("b", 30)
	if err != nil {
		t.Fatal(err)
	}
	s.caughtUp(last)
	txids, _, err := s.readAll(true)
	if err != nil {
		t.Fatal(err)
	}
	checkContiguous(t, txids, 1, last)
	// Without in-progress segments: only the finalized one (1..52).
	txids, _, err = s.readAll(false)
	if err != nil {
		t.Fatal(err)
	}
	checkContiguous(t, txids, 1, 52)
	for i := range 3 {
		// The writer needs two of three; the third follows.
		waitFor(t, "every JournalNode holds the last batch", func() bool { return s.journal(i).Status().HighestWrittenTxID == last })
		st := s.journal(i).Status()
		if st.LastWriterEpoch != 1 || st.LastPromisedEpoch != 1 {
			t.Errorf("jn%d: %+v", i, st)
		}
	}
}

// TestFencing: a second writer's newEpoch makes the first writer's next
// batch fail on every JournalNode with Hadoop's text, and its log fails.
func TestFencing(t *testing.T) {
	s := startJNs(t, 3, nil)
	s.format()
	a := s.newWriter(nil)
	a.become()
	if _, err := a.mkdirs("a", 10); err != nil {
		t.Fatal(err)
	}
	b := s.newWriter(nil)
	b.become()
	if got := b.m.Epoch(); got != 2 {
		t.Fatalf("second writer's epoch %d, want 2", got)
	}
	_, err := a.mkdirs("late", 1)
	if err == nil {
		t.Fatal("the fenced writer's batch was acknowledged")
	}
	if !errors.Is(err, editlog.ErrNoJournals) {
		t.Errorf("err %v does not fail the log", err)
	}
	if !strings.Contains(err.Error(), "IPC's epoch 1 is less than the last promised epoch 2") {
		t.Errorf("err %v lacks Hadoop's fencing text", err)
	}
	if !strings.Contains(err.Error(), "java.io.IOException") {
		t.Errorf("err %v is not an IOException from the JournalNodes", err)
	}
	// The new writer goes on; what it and the first writer acknowledged
	// is all there.
	last, err := b.mkdirs("b", 5)
	if err != nil {
		t.Fatal(err)
	}
	s.caughtUp(last)
	txids, paths, err := s.readAll(true)
	if err != nil {
		t.Fatal(err)
	}
	checkContiguous(t, txids, 1, last)
	for _, p := range paths {
		if p == "/late0" {
			t.Fatal("the fenced writer's op reached the quorum's log")
		}
	}
}

// TestSecondTerm: a writer that stepped down (ended its segment, as a
// NameNode becoming standby does) and becomes the writer again after
// another one takes a new epoch, above the other's, and starts from what
// the quorum holds — not from what it knew.
func TestSecondTerm(t *testing.T) {
	ctx := context.Background()
	s := startJNs(t, 3, nil)
	s.format()
	stepDown := func(w *writer) {
		t.Helper()
		if err := w.log.EndSegment(ctx); err != nil {
			t.Fatal(err)
		}
		if err := w.log.InitForRead(); err != nil {
			t.Fatal(err)
		}
	}
	a := s.newWriter(nil)
	a.become()
	if _, err := a.mkdirs("a", 10); err != nil {
		t.Fatal(err)
	}
	stepDown(a)
	b := s.newWriter(nil)
	b.become()
	if _, err := b.mkdirs("b", 30); err != nil {
		t.Fatal(err)
	}
	stepDown(b)
	first := a.become()
	if got := a.m.Epoch(); got != 3 {
		t.Fatalf("the second term's epoch is %d, want 3", got)
	}
	last, err := a.mkdirs("c", 5)
	if err != nil {
		t.Fatalf("writing in the second term from txid %d: %v", first, err)
	}
	s.caughtUp(last)
	txids, _, err := s.readAll(true)
	if err != nil {
		t.Fatal(err)
	}
	checkContiguous(t, txids, 1, last)
}
