package editlog

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strconv"
	"sync"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// streamJournal is a journal added at run time, like a Backup Node's
// stream: it records the calls it gets and fails when told to.
type streamJournal struct {
	mu      sync.Mutex
	calls   []string
	batches [][2]int64
	fail    bool
	closed  bool
	order   *[]string // shared with orderJournals: when it was written
	orderMu *sync.Mutex
}

func (s *streamJournal) String() string { return "stream" }
func (s *streamJournal) StartSegment(_ context.Context, txid int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "start "+itoa(txid))
	return nil
}
func (s *streamJournal) Write(_ context.Context, _ []byte, first, last int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.order != nil {
		s.orderMu.Lock()
		*s.order = append(*s.order, "stream")
		s.orderMu.Unlock()
	}
	if s.fail {
		return errors.New("planted stream failure")
	}
	s.batches = append(s.batches, [2]int64{first, last})
	return nil
}
func (s *streamJournal) Flush(context.Context) error { return nil }
func (s *streamJournal) FinalizeSegment(_ context.Context, first, last int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "finalize "+itoa(first)+"-"+itoa(last))
	return nil
}
func (s *streamJournal) Segments(context.Context) ([]SegmentInfo, error) { return nil, nil }
func (s *streamJournal) OpenForRead(context.Context, SegmentInfo) (Reader, error) {
	return nil, ErrNotFound
}
func (s *streamJournal) RecoverInProgress(context.Context) ([]SegmentInfo, error) { return nil, nil }
func (s *streamJournal) PurgeBefore(context.Context, int64) error                 { return nil }
func (s *streamJournal) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// TestAddJournalJoinsAtNextSegment: a journal added at run time sees
// nothing of the segment in progress, joins at the next segment start,
// gets every batch after the configured journals made it durable, and a
// failure drops it without failing the log, even at the minimum.
func TestAddJournalJoinsAtNextSegment(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	var order []string
	var mu sync.Mutex
	local := &orderJournal{Journal: NewFileJournal(m, dirs[0]), name: "local", order: &order, mu: &mu}
	l, err := New(Config{MinJournals: 1, Logger: quietLogger}, nil, []Journal{local})
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
	s := &streamJournal{order: &order, orderMu: &mu}
	l.AddJournal(s)
	if err := l.Sync(ctx, mustAppend(t, l, mkdir(1), mkdir(2))); err != nil {
		t.Fatal(err)
	}
	if len(s.batches) != 0 || len(s.calls) != 0 {
		t.Fatalf("a pending journal got %v %v before the next segment", s.calls, s.batches)
	}
	if n := l.Stats().Journals; n != 1 {
		t.Errorf("journals with one pending = %d, want 1", n)
	}
	first, err := l.RollSegment(ctx) // ends 1-4, starts 5
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	order = nil
	mu.Unlock()
	if err := l.Sync(ctx, mustAppend(t, l, mkdir(3))); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if !reflect.DeepEqual(order, []string{"local", "stream"}) {
		t.Errorf("write order %v: the added journal comes after the configured ones are durable", order)
	}
	mu.Unlock()
	if _, err := l.RollSegment(ctx); err != nil {
		t.Fatal(err)
	}
	wantCalls := []string{"start " + itoa(first), "finalize 5-7", "start 8"}
	if !reflect.DeepEqual(s.calls, wantCalls) {
		t.Errorf("calls %v, want %v", s.calls, wantCalls)
	}
	if want := [][2]int64{{5, 5}, {6, 6}, {7, 7}, {8, 8}}; !reflect.DeepEqual(s.batches, want) {
		t.Errorf("batches %v, want %v", s.batches, want)
	}
	// A failing stream is dropped; the log, at its minimum of one
	// configured journal, goes on.
	s.mu.Lock()
	s.fail = true
	s.mu.Unlock()
	if err := l.Sync(ctx, mustAppend(t, l, mkdir(4))); err != nil {
		t.Fatalf("Sync with the added journal failing = %v", err)
	}
	if !s.closed || l.Stats().Journals != 1 {
		t.Errorf("the failed journal: closed=%v, journals %d", s.closed, l.Stats().Journals)
	}
	if l.RemoveJournal(s) {
		t.Error("RemoveJournal found a dropped journal")
	}
	// Removed before it joined: closed, never written.
	s2 := &streamJournal{}
	l.AddJournal(s2)
	if !l.RemoveJournal(s2) || !s2.closed {
		t.Error("RemoveJournal of a pending journal")
	}
	if _, err := l.RollSegment(ctx); err != nil {
		t.Fatal(err)
	}
	if len(s2.calls) != 0 {
		t.Errorf("a removed journal got %v", s2.calls)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestDecodeBatch(t *testing.T) {
	ops := []op.Op{&op.StartLogSegment{}, mkdir(1), &op.Delete{Path: "/a"}}
	var b []byte
	for i, o := range ops {
		b = mustEncode(b, int64(10+i), o)
	}
	got, err := DecodeBatch(b, 10, 3)
	if err != nil || len(got) != 3 || !reflect.DeepEqual(got[1], ops[1]) {
		t.Fatalf("DecodeBatch = %v, %v", got, err)
	}
	for _, tc := range []struct {
		name  string
		b     []byte
		first int64
		n     int
	}{
		{"wrong first txid", b, 11, 3},
		{"fewer records than claimed", b, 10, 4},
		{"more records than claimed", b, 10, 2},
		{"a count no bytes can hold", b, 10, 1 << 30},
		{"no records", b, 10, 0},
		{"cut short", b[:len(b)-1], 10, 3},
		{"flipped bit", flip(b, 20), 10, 3},
		{"txid zero", b, 0, 3},
	} {
		if _, err := DecodeBatch(tc.b, tc.first, tc.n); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", tc.name, err)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x40
	return c
}

// FuzzDecodeBatch: a Backup Node decodes the batches the active sends it;
// whatever the bytes and the claimed count, decoding allocates in
// proportion to the bytes, and what decodes encodes back to the same bytes.
func FuzzDecodeBatch(f *testing.F) {
	var b []byte
	for i, o := range sampleOps() {
		b = mustEncode(b, int64(i+1), o)
	}
	f.Add(b, int64(1), uint32(len(sampleOps())))
	f.Add(b, int64(1), uint32(1<<31))
	f.Add(b[:40], int64(2), uint32(3))
	f.Fuzz(func(t *testing.T, data []byte, first int64, n uint32) {
		var ops []op.Op
		var err error
		testtool.AllocBound(t, len(data), 256, 256<<10, func() { ops, err = DecodeBatch(data, first, int(n)) })
		if err != nil {
			return
		}
		var again []byte
		for i, o := range ops {
			again = mustEncode(again, first+int64(i), o)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("re-encoding differs")
		}
	})
}

func TestManifest(t *testing.T) {
	seg := func(first, last int64) SegmentInfo { return SegmentInfo{First: first, Last: last} }
	inProgress := SegmentInfo{First: 31, Last: -1, InProgress: true}
	for _, tc := range []struct {
		name  string
		segs  []SegmentInfo
		since int64
		want  []SegmentInfo
	}{
		{"all", []SegmentInfo{seg(1, 10), seg(11, 20), seg(21, 30), inProgress}, 1,
			[]SegmentInfo{seg(1, 10), seg(11, 20), seg(21, 30)}},
		{"from the middle of a segment", []SegmentInfo{seg(1, 10), seg(11, 20), seg(21, 30)}, 15,
			[]SegmentInfo{seg(11, 20), seg(21, 30)}},
		{"purged: the run starts later", []SegmentInfo{seg(21, 30), seg(31, 40)}, 5,
			[]SegmentInfo{seg(21, 30), seg(31, 40)}},
		{"a gap restarts the run", []SegmentInfo{seg(1, 10), seg(21, 30), seg(31, 40)}, 1,
			[]SegmentInfo{seg(21, 30), seg(31, 40)}},
		{"copies in two dirs, the longest taken", []SegmentInfo{seg(1, 10), seg(11, 15), seg(1, 10), seg(11, 20), seg(21, 30)}, 1,
			[]SegmentInfo{seg(1, 10), seg(11, 20), seg(21, 30)}},
		{"nothing new", []SegmentInfo{seg(1, 10), inProgress}, 11, nil},
	} {
		got := Manifest(tc.segs, tc.since)
		if len(got) == 0 && len(tc.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Manifest = %v, want %v", tc.name, got, tc.want)
		}
	}
}
