package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/client"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// What a JournalNode holds of the in-progress segment 1.. when the writer
// dies: every record written (longer), the first 30 records and half of
// the 31st (torn), or no file at all (missing).
type holding string

const (
	longer  holding = "longer"
	torn    holding = "torn"
	missing holding = "missing"
)

// TestSegmentRecovery: a writer wrote txids 1..30 of a segment (each
// batch acknowledged by a quorum; the JournalNodes heard 30 was
// committed), then sent 31..40 to every JournalNode and died before
// acknowledging it, and the JournalNodes went down with it. Their copies
// are cut as the table says before they restart: every record (longer),
// the first 30 and half of the 31st (torn), or no file at all (missing).
// A new writer's recovery must pick what HDFS's rules pick for the
// majority that answers it — the longest whole copy among the nodes
// holding one — keep every acknowledged txid, and leave every node with
// that copy finalized (missing and torn ones fetch it from the chosen
// node). Cases with two copies missing are left out: a quorum acknowledged
// 1..30, so at most one node can lack them.
func TestSegmentRecovery(t *testing.T) {
	s := startJNs(t, 3, nil)
	states := []holding{longer, torn, missing}
	n := 0
	for _, a := range states {
		for _, b := range states {
			for _, c := range states {
				combo := []holding{a, b, c}
				miss := 0
				for _, h := range combo {
					if h == missing {
						miss++
					}
				}
				if miss > 1 {
					continue
				}
				n++
				t.Run(fmt.Sprintf("%s-%s-%s", a, b, c), func(t *testing.T) {
					s.t = t
					s.jid = fmt.Sprintf("rec%d", n)
					recoverCase(t, s, combo)
				})
			}
		}
	}
	s.t = t
}

const ackedTxID = 30

func recoverCase(t *testing.T, s *jnSet, combo []holding) {
	ctx := context.Background()
	crashUnacknowledged(t, s)
	// The copies are cut while the nodes are down; they scan them when
	// they restart.
	holds := make([]int64, 3)
	for i, h := range combo {
		path := filepath.Join(s.dirs[i], s.jid, "current", editlog.InProgressName(1))
		switch h {
		case longer:
			holds[i] = 40
		case torn:
			cutInRecord(t, path, ackedTxID+1)
			holds[i] = ackedTxID
		case missing:
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 3 {
		s.start(i)
	}
	allowed := choicesOfMajorities(holds)

	b := s.newWriter(nil)
	first := b.become()
	got := first - 1
	if !allowed[got] {
		t.Fatalf("recovery kept 1..%d; HDFS's rules allow %v for copies %v", got, allowed, holds)
	}
	if got < ackedTxID {
		t.Fatalf("recovery kept 1..%d and lost acknowledged txids up to %d", got, ackedTxID)
	}
	t.Logf("copies %v: recovered 1..%d (allowed %v)", holds, got, keys(allowed))
	for i := range 3 {
		dir := filepath.Join(s.dirs[i], s.jid, "current")
		name := filepath.Join(dir, editlog.FinalizedName(1, got))
		// Recovery returns once a majority finalized the segment; the
		// calls to the last node follow in its logger's queue.
		waitFor(t, fmt.Sprintf("jn%d (%s) holds %s", i, combo[i], editlog.FinalizedName(1, got)), func() bool {
			_, err := os.Stat(name)
			return err == nil
		})
		j := editlog.NewFileJournal(vfs.Default, dir)
		var txids []int64
		if _, err := editlog.ReadOps(ctx, []editlog.Journal{j}, editlog.ReadOptions{To: got}, func(txid int64, _ op.Op) error {
			txids = append(txids, txid)
			return nil
		}); err != nil {
			t.Fatalf("jn%d: reading its copy: %v", i, err)
		}
		checkContiguous(t, txids, 1, got)
	}
	// The new writer writes on; everything is readable.
	last, err := b.mkdirs("w", 3)
	if err != nil {
		t.Fatal(err)
	}
	s.caughtUp(last)
	txids, _, err := s.readAll(true)
	if err != nil {
		t.Fatal(err)
	}
	checkContiguous(t, txids, 1, last)
	b.log.Close()
}

// crashUnacknowledged formats the journal and has a writer write txids
// 1..30 (each batch acknowledged by a quorum), then send 31..40 to every
// JournalNode and die before acknowledging them; the JournalNodes go down
// with it.
func crashUnacknowledged(t *testing.T, s *jnSet) {
	t.Helper()
	ctx := context.Background()
	s.format()
	// Generous timeouts: a JournalNode that misses a batch on a loaded
	// machine would not hold all of 31..40.
	w := s.newWriter(func(c *client.Config) {
		c.WriteTxnsTimeout, c.StartSegmentTimeout, c.NewEpochTimeout = 20*time.Second, 20*time.Second, 20*time.Second
	})
	w.become()
	if _, err := w.mkdirs("x", 19); err != nil { // txids 2..20
		t.Fatal(err)
	}
	if last, err := w.mkdirs("y", 10); err != nil || last != ackedTxID { // 21..30
		t.Fatalf("wrote up to %d, %v", last, err)
	}
	// 31..40 reach every JournalNode, but the writer dies before it
	// waits for them: no acknowledgement, and the committed txid the
	// nodes heard stays 30.
	var batch []byte
	for txid := int64(ackedTxID + 1); txid <= 40; txid++ {
		var err error
		if batch, err = editlog.EncodeRecord(batch, txid, &op.Mkdir{InodeID: uint64(txid), Path: fmt.Sprintf("/z%d", txid), Mtime: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.m.Write(ctx, batch, ackedTxID+1, 40); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every JournalNode holds 40", func() bool {
		for i := range 3 {
			if s.journal(i).Status().HighestWrittenTxID != 40 {
				return false
			}
		}
		return true
	})
	w.m.Close()
	for i := range 3 {
		if c := s.journal(i).Status().CommittedTxID; c > ackedTxID {
			t.Fatalf("jn%d heard %d was committed", i, c)
		}
	}

	// The JournalNodes go down with the writer (a power cut).
	for i := range 3 {
		s.stop(i)
	}
}

// TestLaggingNodeRecovers: after the crash of TestSegmentRecovery, jn0
// holds 1..40 and the others 1..30, and jn0's calls are held up while the
// new writer recovers 1..30 with the other two, starts segment 31 and
// commits txids of it. When jn0's calls go through, in order, its
// recovery calls must not carry those later txids as committed (jn0 would
// refuse to cut its 31..40, taking them for committed ones): jn0 ends
// with 1..30 finalized, in sync with the new segment.
func TestLaggingNodeRecovers(t *testing.T) {
	s := startJNs(t, 3, nil)
	crashUnacknowledged(t, s)
	for i := 1; i < 3; i++ {
		cutInRecord(t, filepath.Join(s.dirs[i], s.jid, "current", editlog.InProgressName(1)), ackedTxID+1)
		s.start(i)
	}
	release := s.startHeld(0)
	b := s.newWriter(nil)
	if first := b.become(); first != ackedTxID+1 {
		t.Fatalf("recovery kept 1..%d, want 1..%d", first-1, ackedTxID)
	}
	last, err := b.mkdirs("w", 3)
	if err != nil {
		t.Fatal(err)
	}
	release()
	want := editlog.FinalizedName(1, ackedTxID)
	waitFor(t, "jn0 holds "+want+" and writes the new segment", func() bool {
		got := finalized(t, s, 0)
		return len(got) == 1 && got[0] == want && s.journal(0).Status().HighestWrittenTxID == last
	})
	if st := b.m.Status()[0]; st.OutOfSync {
		t.Fatalf("jn0 is out of sync: %+v", st)
	}
	b.log.Close()
}

// choicesOfMajorities is what recovery may choose: for every majority of
// the nodes, the longest copy among them (all copies are of one writer
// epoch, so length decides).
func choicesOfMajorities(holds []int64) map[int64]bool {
	out := map[int64]bool{}
	n := len(holds)
	for mask := 0; mask < 1<<n; mask++ {
		if bits(mask) < n/2+1 {
			continue
		}
		best := int64(0)
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				best = max(best, holds[i])
			}
		}
		out[best] = true
	}
	return out
}

func bits(m int) int {
	c := 0
	for ; m != 0; m &= m - 1 {
		c++
	}
	return c
}

func keys(m map[int64]bool) []int64 {
	var out []int64
	for k := range m {
		out = append(out, k)
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// cutInRecord truncates a segment file in the middle of record txid.
func cutInRecord(t *testing.T, path string, txid int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := editlog.ReadSegmentHeader(f, path)
	if err != nil {
		t.Fatal(err)
	}
	dec := editlog.NewDecoder(f, path, editlog.SegmentHeaderSize, v)
	var off int64 = -1
	for {
		start := dec.Offset()
		id, _, err := dec.Next()
		if err != nil {
			t.Fatalf("record %d not found: %v", txid, err)
		}
		if id == txid {
			off = start + (dec.Offset()-start)/2
			break
		}
	}
	f.Close()
	if err := os.Truncate(path, off); err != nil {
		t.Fatal(err)
	}
}
