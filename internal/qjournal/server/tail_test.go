package server_test

import (
	"context"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/client"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/server"
)

// TestTailInProgress: a reader following the segment being written gets,
// from the JournalNodes' edit caches, every txid a majority holds, from
// wherever it is on; when the caches no longer hold what it asks for it
// streams the segment instead, up to the committed txid.
func TestTailInProgress(t *testing.T) {
	ctx := context.Background()
	s := startJNs(t, 3, nil)
	s.format()
	w := s.newWriter(nil)
	w.become()
	last, err := w.mkdirs("a", 100)
	if err != nil {
		t.Fatal(err)
	}
	s.caughtUp(last)
	r := s.manager(nil)
	read := func(from int64) []int64 {
		var txids []int64
		if _, err := editlog.ReadOps(ctx, []editlog.Journal{r}, editlog.ReadOptions{From: from, InProgress: true},
			func(txid int64, _ op.Op) error { txids = append(txids, txid); return nil }); err != nil {
			t.Fatal(err)
		}
		return txids
	}
	checkContiguous(t, read(0), 1, last)
	before := rpcServed(s)
	checkContiguous(t, read(60), 61, last)
	if rpcServed(s) <= before {
		t.Error("the in-progress edits were not served from the JournalNodes' caches")
	}
	more, err := w.mkdirs("b", 10)
	if err != nil {
		t.Fatal(err)
	}
	s.caughtUp(more)
	checkContiguous(t, read(last), last+1, more)
}

func rpcServed(s *jnSet) int64 {
	var n int64
	for i := range s.nodes {
		n += server.TxnsServedViaRPC(s.journal(i))
	}
	return n
}

// TestTailCacheMiss: with caches too small for what the reader asks, it
// streams the segment over /getJournal up to the committed txid.
func TestTailCacheMiss(t *testing.T) {
	ctx := context.Background()
	s := startJNs(t, 3, func(c *server.Config) { c.EditCacheSize = 2048 })
	s.format()
	w := s.newWriter(nil)
	w.become()
	if _, err := w.mkdirs("a", 100); err != nil {
		t.Fatal(err)
	}
	last, err := w.mkdirs("b", 1) // carries the committed txid of the first batches
	if err != nil {
		t.Fatal(err)
	}
	s.caughtUp(last)
	r := s.manager(func(c *client.Config) { c.TailInProgress = true })
	var txids []int64
	if _, err := editlog.ReadOps(ctx, []editlog.Journal{r}, editlog.ReadOptions{InProgress: true},
		func(txid int64, _ op.Op) error { txids = append(txids, txid); return nil }); err != nil {
		t.Fatal(err)
	}
	// The last batch is read if the manifests show a majority holds it;
	// everything before it is committed.
	if n := int64(len(txids)); n != last && n != last-1 {
		t.Fatalf("read %s, want up to %d or %d", span(txids), last-1, last)
	}
	checkContiguous(t, txids, 1, txids[len(txids)-1])
}
