package editlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// memDirs creates n durable edits directories /nameK/current on m.
func memDirs(t *testing.T, m *vfs.MemFS, n int) []string {
	t.Helper()
	var dirs []string
	for i := range n {
		d := fmt.Sprintf("/name%d/current", i+1)
		if err := m.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		m.SyncDir(filepath.Dir(d))
		dirs = append(dirs, d)
	}
	m.SyncDir("/")
	return dirs
}

func journals(fsys vfs.FS, dirs []string) []Journal {
	var js []Journal
	for _, d := range dirs {
		js = append(js, NewFileJournal(fsys, d))
	}
	return js
}

// openLog returns a Log over dirs, recovered and in a segment at first.
func openLog(t *testing.T, fsys vfs.FS, dirs []string, min int, first int64) *Log {
	t.Helper()
	l, err := New(Config{MinJournals: min, Logger: quietLogger}, nil, journals(fsys, dirs))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.InitForWrite(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := l.StartSegment(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	return l
}

func mkdir(i int) *op.Mkdir {
	return &op.Mkdir{InodeID: uint64(16386 + i), Path: fmt.Sprintf("/d%d", i), Mtime: int64(i),
		Perm: op.Perm{User: "hdfs", Group: "supergroup", Mode: 0o755}}
}

type replayed struct {
	txid int64
	op   op.Op
}

func replay(t *testing.T, fsys vfs.FS, dirs []string, from int64) ([]replayed, int64, error) {
	t.Helper()
	var got []replayed
	last, err := ReadOps(context.Background(), journals(fsys, dirs), ReadOptions{From: from, InProgress: true}, func(txid int64, o op.Op) error {
		got = append(got, replayed{txid, o})
		return nil
	})
	return got, last, err
}

func listDir(t *testing.T, fsys vfs.FS, dir string) string {
	t.Helper()
	names, err := fsys.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(names, " ")
}

func TestSegmentNames(t *testing.T) {
	if got := InProgressName(1); got != "edits_inprogress_0000000000000000001" {
		t.Errorf("InProgressName(1) = %q", got)
	}
	if got := FinalizedName(1, 42); got != "edits_0000000000000000001-0000000000000000042" {
		t.Errorf("FinalizedName = %q", got)
	}
	for _, tc := range []struct {
		name              string
		first, last       int64
		inProgress, valid bool
	}{
		{"edits_inprogress_0000000000000000007", 7, -1, true, true},
		{"edits_0000000000000000001-0000000000000000042", 1, 42, false, true},
		{"edits_inprogress_0000000000000000007.empty", 0, 0, false, false},
		{"edits_0000000000000000009-0000000000000000008", 0, 0, false, false},
		{"edits_00000000000000000x1-0000000000000000042", 0, 0, false, false},
		{"edits_inprogress_0000000000000000000", 0, 0, false, false},
		{"fsimage_0000000000000000042", 0, 0, false, false},
		{"seen_txid", 0, 0, false, false},
	} {
		f, l, ip, ok := ParseSegmentName(tc.name)
		if ok != tc.valid || (ok && (f != tc.first || l != tc.last || ip != tc.inProgress)) {
			t.Errorf("ParseSegmentName(%q) = %d %d %v %v", tc.name, f, l, ip, ok)
		}
	}
}

func TestRollFinalizeAndReplay(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 2)
	l := openLog(t, m, dirs, 1, 1)
	ctx := context.Background()
	var want []op.Op
	want = append(want, &op.StartLogSegment{})
	for i := range 3 {
		o := mkdir(i)
		txid := mustAppend(t, l, o)
		want = append(want, o)
		if err := l.Sync(ctx, txid); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.SegmentTxns(); got != 4 {
		t.Errorf("SegmentTxns = %d, want 4", got)
	}
	first, err := l.RollSegment(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if first != 6 {
		t.Errorf("new segment starts at %d, want 6", first)
	}
	want = append(want, &op.EndLogSegment{}, &op.StartLogSegment{})
	o := &op.Delete{Path: "/d0", Mtime: 9}
	want = append(want, o)
	l.Sync(ctx, mustAppend(t, l, o))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	want = append(want, &op.EndLogSegment{})
	if l.State() != StateClosed {
		t.Errorf("state after Close = %v", l.State())
	}
	for _, d := range dirs {
		if got, w := listDir(t, m, d), FinalizedName(1, 5)+" "+FinalizedName(6, 8); got != w {
			t.Errorf("%s holds %q, want %q", d, got, w)
		}
	}
	// Durable without further syncs: replay from a crash image.
	got, last, err := replay(t, m.CrashClone(), dirs, 0)
	if err != nil || last != 8 {
		t.Fatalf("replay: last %d, %v", last, err)
	}
	for i, r := range got {
		if r.txid != int64(i+1) || !reflect.DeepEqual(r.op, want[i]) {
			t.Errorf("txid %d = %#v, want %#v", r.txid, r.op, want[i])
		}
	}
	// Replay skips records at or below fromTxID.
	got, last, err = replay(t, m, dirs, 6)
	if err != nil || last != 8 || len(got) != 2 || got[0].txid != 7 {
		t.Fatalf("replay from 6: %v, last %d, %v", got, last, err)
	}
}

func TestStateErrors(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	l, err := New(Config{Logger: quietLogger}, nil, journals(m, dirs))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.StartSegment(context.Background(), 1); !errors.Is(err, ErrState) {
		t.Errorf("StartSegment before InitForWrite = %v", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Append outside a segment did not panic")
			}
		}()
		l.Append(mkdir(0))
	}()
	if _, err := New(Config{MinJournals: 2}, nil, journals(m, dirs)); !errors.Is(err, ErrNoJournals) {
		t.Errorf("New below minimum = %v", err)
	}
	l.Close()
}

// recordsEnd returns the offset just past the last whole record of the
// segment file name (before the zero fill of an in-progress segment).
func recordsEnd(t *testing.T, fsys vfs.FS, name string) int64 {
	end, _ := decodeSegmentFile(t, fsys, name)
	return end
}

// tailError returns the torn record that ends the segment file name, or
// nil when it ends otherwise.
func tailError(t *testing.T, fsys vfs.FS, name string) *TornRecordError {
	_, torn := decodeSegmentFile(t, fsys, name)
	return torn
}

// decodeSegmentFile decodes the segment file name to its end and returns the
// offset where the decoder stopped and the torn record it stopped at, if
// that is what stopped it.
func decodeSegmentFile(t *testing.T, fsys vfs.FS, name string) (int64, *TornRecordError) {
	t.Helper()
	f, err := fsys.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	version, err := ReadSegmentHeader(f, name)
	if err != nil {
		t.Fatal(err)
	}
	dec := NewDecoder(f, name, SegmentHeaderSize, version)
	for range 1 << 20 {
		if _, _, err := dec.Next(); err != nil {
			var torn *TornRecordError
			if errors.As(err, &torn) {
				return dec.Offset(), torn
			}
			break
		}
	}
	return dec.Offset(), nil
}

// TestTornTailRecovery cuts the in-progress segment inside its last record.
func TestTornTailRecovery(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	l := openLog(t, m, dirs, 1, 1)
	for i := range 5 {
		l.Sync(context.Background(), mustAppend(t, l, mkdir(i)))
	}
	// Abandon the log without Close (a crash with everything synced), then
	// tear the last record.
	name := filepath.Join(dirs[0], InProgressName(1))
	f, err := m.OpenReadWrite(name)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(recordsEnd(t, m, name) - 3)
	f.Sync()
	f.Close()
	for _, j := range l.mu.optional {
		j.Close()
	}

	l2 := openLog(t, m, dirs, 1, 6)
	if got, want := listDir(t, m, dirs[0]), FinalizedName(1, 5)+" "+InProgressName(6); got != want {
		t.Fatalf("after recovery: %q, want %q", got, want)
	}
	l2.Close()
	_, last, err := replay(t, m, dirs, 0)
	if err != nil || last != 7 {
		t.Fatalf("replay: last %d, %v (want 7)", last, err)
	}
}

// TestCrashDropsUnsynced: appended but unsynced records vanish in a crash and
// recovery starts after the last synced one; an empty segment is set aside.
func TestCrashDropsUnsynced(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	l := openLog(t, m, dirs, 1, 1)
	l.Sync(context.Background(), mustAppend(t, l, mkdir(0)))
	l.Append(mkdir(1)) // never synced
	crashed := m.CrashClone()
	l.Close()

	l2 := openLog(t, crashed, dirs, 1, 3)
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	_, last, err := replay(t, crashed, dirs, 0)
	if err != nil || last != 4 {
		t.Fatalf("replay after crash: last %d, %v", last, err)
	}

	// A segment created but never given a record is set aside as .empty.
	m2 := vfs.NewMem()
	dirs2 := memDirs(t, m2, 1)
	j := NewFileJournal(m2, dirs2[0])
	if err := j.StartSegment(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if segs, err := j.RecoverInProgress(context.Background()); err != nil || len(segs) != 0 {
		t.Fatalf("RecoverInProgress = %v, %v", segs, err)
	}
	if got := listDir(t, m2, dirs2[0]); got != InProgressName(1)+EmptySuffix {
		t.Fatalf("dir = %q", got)
	}
}

// abandonedFiveMkdirs writes five synced OP_MKDIRs into a log of one
// memory dir and abandons it as a crash would (the segment left in
// progress); it returns the file system, the dir and the segment's path.
func abandonedFiveMkdirs(t *testing.T) (*vfs.MemFS, []string, string) {
	t.Helper()
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	l := openLog(t, m, dirs, 1, 1)
	for i := range 5 {
		l.Sync(context.Background(), mustAppend(t, l, mkdir(i)))
	}
	for _, j := range l.mu.optional {
		j.Close()
	}
	return m, dirs, filepath.Join(dirs[0], InProgressName(1))
}

func TestCorruptionInMiddle(t *testing.T) {
	m, dirs, name := abandonedFiveMkdirs(t)
	start := int64(len(mustEncode(nil, 1, &op.StartLogSegment{})))
	second := int64(len(mustEncode(nil, 2, mkdir(0))))
	off := SegmentHeaderSize + start + second // record of txid 3
	f, _ := m.OpenReadWrite(name)
	b := []byte{0}
	f.ReadAt(b, off+RecordHeaderSize+2)
	b[0] ^= 0xff
	f.Seek(off+RecordHeaderSize+2, io.SeekStart)
	f.Write(b)
	f.Close()

	l2, _ := New(Config{Logger: quietLogger}, nil, journals(m, dirs))
	err := l2.InitForWrite(context.Background())
	var ce *CorruptionError
	if !errors.As(err, &ce) || ce.File != name || ce.Offset != off {
		t.Fatalf("InitForWrite = %v, want corruption in %s at %d", err, name, off)
	}
	if got := listDir(t, m, dirs[0]); got != InProgressName(1) {
		t.Errorf("corrupt segment was touched: %q", got)
	}
	l2.Close()
}

// TestGroupCommitDurable runs many appenders and takes crash images while
// they run: every txid acknowledged before an image is in it.
func TestGroupCommitDurable(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 2)
	l := openLog(t, m, dirs, 1, 1)
	const writers, perWriter = 64, 40
	var maxAcked atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				txid, _ := l.Append(mkdir(w*perWriter + i))
				if err := l.Sync(context.Background(), txid); err != nil {
					t.Error(err)
					return
				}
				for {
					cur := maxAcked.Load()
					if txid <= cur || maxAcked.CompareAndSwap(cur, txid) {
						break
					}
				}
			}
		}()
	}
	type image struct {
		fs    *vfs.MemFS
		acked int64
	}
	var images []image
	for range 5 {
		acked := maxAcked.Load()
		images = append(images, image{m.CrashClone(), acked})
	}
	wg.Wait()
	images = append(images, image{m.CrashClone(), maxAcked.Load()})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for i, im := range images {
		l2, err := New(Config{Logger: quietLogger}, nil, journals(im.fs, dirs))
		if err != nil {
			t.Fatal(err)
		}
		if err := l2.InitForWrite(context.Background()); err != nil {
			t.Fatalf("image %d: recovery: %v", i, err)
		}
		last, err := l2.ReadOps(context.Background(), ReadOptions{InProgress: true}, func(int64, op.Op) error { return nil })
		if err != nil || last < im.acked {
			t.Fatalf("image %d: replay reached %d (%v), but %d was acknowledged", i, last, err, im.acked)
		}
		l2.Close()
	}
	if want := int64(writers*perWriter + 1); images[len(images)-1].acked != want {
		t.Errorf("last acked %d, want %d", images[len(images)-1].acked, want)
	}
}

// TestGroupCommitBatches holds the first fsync until all 64 writers have
// appended: the writers that queued behind it share one more flush.
func TestGroupCommitBatches(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	var armed atomic.Bool
	var syncs atomic.Int64
	gate := make(chan struct{})
	fsys := vfs.WithErrors(m, func(o vfs.Op, path string) error {
		if o == vfs.OpSync {
			syncs.Add(1)
			if armed.CompareAndSwap(true, false) {
				<-gate
			}
		}
		return nil
	})
	l := openLog(t, fsys, dirs, 1, 1)
	before, syncsBefore := l.Stats().Flushes, syncs.Load()
	armed.Store(true)
	const writers = 64
	var appended atomic.Int64
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			txid, _ := l.Append(mkdir(i))
			if appended.Add(1) == writers {
				close(gate)
			}
			if err := l.Sync(context.Background(), txid); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	flushes, fsyncs := l.Stats().Flushes-before, syncs.Load()-syncsBefore
	if flushes > 2 || fsyncs > 2 {
		t.Errorf("%d txids took %d flushes and %d fsyncs, want at most 2", writers, flushes, fsyncs)
	}
	if got := l.Stats().SyncedTxID; got != writers+1 {
		t.Errorf("SyncedTxID = %d, want %d", got, writers+1)
	}
	l.Close()
}

func TestSyncContextCanceled(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	var armed atomic.Bool
	gate, entered := make(chan struct{}), make(chan struct{})
	fsys := vfs.WithErrors(m, func(o vfs.Op, path string) error {
		if o == vfs.OpSync && armed.CompareAndSwap(true, false) {
			close(entered)
			<-gate
		}
		return nil
	})
	l := openLog(t, fsys, dirs, 1, 1)
	armed.Store(true)
	tx := mustAppend(t, l, mkdir(0))
	errc := make(chan error)
	go func() { errc <- l.Sync(context.Background(), tx) }()
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Sync(ctx, tx); !errors.Is(err, context.Canceled) {
		t.Errorf("Sync with canceled ctx = %v", err)
	}
	close(gate)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	l.Close()
}

// failingFS fails every write and sync under prefix once armed.
func failingFS(m vfs.FS, prefix string, armed *atomic.Bool) vfs.FS {
	return vfs.WithErrors(m, func(o vfs.Op, path string) error {
		if armed.Load() && strings.HasPrefix(path, prefix) &&
			(o == vfs.OpWrite || o == vfs.OpSync || o == vfs.OpCreate || o == vfs.OpRename) {
			return fmt.Errorf("injected %v failure on %s", o, path)
		}
		return nil
	})
}

func TestFailedJournalDropped(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 3)
	var armed atomic.Bool
	fsys := failingFS(m, "/name2/", &armed)
	l := openLog(t, fsys, dirs, 2, 1)
	ctx := context.Background()
	if err := l.Sync(ctx, mustAppend(t, l, mkdir(0))); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	if err := l.Sync(ctx, mustAppend(t, l, mkdir(1))); err != nil {
		t.Fatalf("Sync with one of three journals failing: %v", err)
	}
	if got := l.Journals(); len(got) != 2 || strings.Contains(strings.Join(got, ","), "name2") {
		t.Errorf("journals after failure = %v", got)
	}
	if err := l.Sync(ctx, mustAppend(t, l, mkdir(2))); err != nil {
		t.Fatal(err)
	}
	if _, err := l.RollSegment(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dirs[0], dirs[2]} {
		if got, want := listDir(t, m, d), FinalizedName(1, 5)+" "+FinalizedName(6, 7); got != want {
			t.Errorf("%s = %q, want %q", d, got, want)
		}
	}
	if got := listDir(t, m, dirs[1]); got != InProgressName(1) {
		t.Errorf("failed dir = %q", got)
	}
	// Replay across the dirs, the dropped one included, is complete.
	if _, last, err := replay(t, m, dirs, 0); err != nil || last != 7 {
		t.Fatalf("replay: %d, %v", last, err)
	}
}

func TestBelowMinimumFails(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 2)
	var armed atomic.Bool
	fsys := failingFS(m, "/name1/", &armed)
	l := openLog(t, fsys, dirs, 2, 1)
	ctx := context.Background()
	ok := mustAppend(t, l, mkdir(0))
	if err := l.Sync(ctx, ok); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	if err := l.Sync(ctx, mustAppend(t, l, mkdir(1))); !errors.Is(err, ErrNoJournals) {
		t.Fatalf("Sync below minimum = %v, want ErrNoJournals", err)
	}
	armed.Store(false) // even if the disk recovers, nothing more is acknowledged
	for i := range 3 {
		if err := l.Sync(ctx, mustAppend(t, l, mkdir(2+i))); !errors.Is(err, ErrNoJournals) {
			t.Fatalf("later Sync = %v, want ErrNoJournals", err)
		}
	}
	if err := l.Sync(ctx, ok); err != nil {
		t.Errorf("Sync of a txid made durable before the failure = %v", err)
	}
	if _, err := l.RollSegment(context.Background()); !errors.Is(err, ErrNoJournals) {
		t.Errorf("RollSegment after failure = %v", err)
	}
	if !errors.Is(l.Err(), ErrNoJournals) {
		t.Errorf("Err = %v", l.Err())
	}
	if err := l.Close(); !errors.Is(err, ErrNoJournals) {
		t.Errorf("Close = %v", err)
	}
}

// writeSegment writes ops first..last (StartLogSegment, mkdirs,
// EndLogSegment when finalized) into dir.
func writeSegment(t *testing.T, fsys vfs.FS, dir string, first, last int64, finalize bool) {
	t.Helper()
	j := NewFileJournal(fsys, dir)
	if err := j.StartSegment(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for tx := first; tx <= last; tx++ {
		var o op.Op = mkdir(int(tx))
		switch {
		case tx == first:
			o = &op.StartLogSegment{}
		case tx == last && finalize:
			o = &op.EndLogSegment{}
		}
		buf = mustEncode(buf, tx, o)
	}
	if err := j.Write(context.Background(), buf, first, last); err != nil {
		t.Fatal(err)
	}
	if err := j.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if finalize {
		if err := j.FinalizeSegment(context.Background(), first, last); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
}

func TestReadOpsMergeAndGaps(t *testing.T) {
	type seg struct {
		dir         int
		first, last int64
		final       bool
	}
	for _, tc := range []struct {
		name     string
		segs     []seg
		from     int64
		wantLast int64
		gap      *GapError
	}{
		{"one dir", []seg{{0, 1, 10, true}, {0, 11, 20, true}}, 0, 20, nil},
		{"complementary dirs", []seg{{0, 1, 10, true}, {1, 1, 5, true}, {1, 11, 20, true}, {0, 21, 30, true}}, 0, 30, nil},
		{"longest copy wins", []seg{{0, 1, 7, true}, {1, 1, 10, true}, {0, 11, 12, true}}, 0, 12, nil},
		{"in-progress tail", []seg{{0, 1, 10, true}, {0, 11, 15, false}, {1, 11, 13, false}}, 0, 15, nil},
		{"gap in every dir", []seg{{0, 1, 10, true}, {1, 1, 10, true}, {0, 21, 30, true}}, 0, 10, &GapError{From: 11, To: 20}},
		{"image newer than start", []seg{{0, 1, 10, true}, {0, 11, 20, true}}, 15, 20, nil},
		{"edits start after image", []seg{{0, 11, 20, true}}, 5, 5, &GapError{From: 6, To: 10}},
		{"nothing after image", []seg{{0, 1, 10, true}}, 10, 10, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := vfs.NewMem()
			dirs := memDirs(t, m, 2)
			for _, s := range tc.segs {
				writeSegment(t, m, dirs[s.dir], s.first, s.last, s.final)
			}
			got, last, err := replay(t, m, dirs, tc.from)
			if tc.gap != nil {
				var ge *GapError
				if !errors.As(err, &ge) || *ge != *tc.gap {
					t.Fatalf("err = %v, want %v", err, tc.gap)
				}
				if want := fmt.Sprintf("editlog: gap in edit log: missing transactions %d-%d", tc.gap.From, tc.gap.To); err.Error() != want {
					t.Errorf("message %q", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if last != tc.wantLast {
				t.Errorf("last = %d, want %d", last, tc.wantLast)
			}
			for i, r := range got {
				if r.txid != tc.from+int64(i)+1 {
					t.Fatalf("record %d has txid %d", i, r.txid)
				}
			}
		})
	}
}

// TestReadOpsFallsBack reads a damaged segment from its other copy.
func TestReadOpsFallsBack(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 2)
	writeSegment(t, m, dirs[0], 1, 10, true)
	writeSegment(t, m, dirs[1], 1, 10, true)
	name := filepath.Join(dirs[0], FinalizedName(1, 10))
	f, _ := m.OpenReadWrite(name)
	f.Seek(60, io.SeekStart)
	f.Write([]byte{0xde, 0xad})
	f.Close()
	got, last, err := replay(t, m, dirs, 0)
	if err != nil || last != 10 || len(got) != 10 {
		t.Fatalf("replay = %d records, last %d, %v", len(got), last, err)
	}
	// With only the damaged copy the corruption is reported.
	_, _, err = replay(t, m, dirs[:1], 0)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged single copy: %v", err)
	}
}

func TestReadOpsFnError(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	writeSegment(t, m, dirs[0], 1, 10, true)
	stop := errors.New("stop")
	last, err := ReadOps(context.Background(), journals(m, dirs), ReadOptions{InProgress: true}, func(txid int64, _ op.Op) error {
		if txid == 4 {
			return stop
		}
		return nil
	})
	if err != stop || last != 3 {
		t.Fatalf("ReadOps = %d, %v", last, err)
	}
}

func TestPurgeBefore(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	writeSegment(t, m, dirs[0], 1, 10, true)
	writeSegment(t, m, dirs[0], 11, 20, true)
	writeSegment(t, m, dirs[0], 21, 25, false)
	j := NewFileJournal(m, dirs[0])
	for _, tc := range []struct {
		txid int64
		want string
	}{
		{10, FinalizedName(1, 10) + " " + FinalizedName(11, 20) + " " + InProgressName(21)},
		{15, FinalizedName(11, 20) + " " + InProgressName(21)},
		{100, InProgressName(21)},
	} {
		if err := j.PurgeBefore(context.Background(), tc.txid); err != nil {
			t.Fatal(err)
		}
		if got := listDir(t, m, dirs[0]); got != tc.want {
			t.Errorf("after PurgeBefore(%d): %q, want %q", tc.txid, got, tc.want)
		}
		// Purges are durable.
		if got := listDir(t, m.CrashClone(), dirs[0]); got != tc.want {
			t.Errorf("after crash: %q, want %q", got, tc.want)
		}
	}
}

func TestShouldRoll(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	l, _ := New(Config{AutoRollTxns: 5, Logger: quietLogger}, nil, journals(m, dirs))
	l.InitForWrite(context.Background())
	l.StartSegment(context.Background(), 1)
	for i := range 3 {
		l.Append(mkdir(i))
	}
	if l.ShouldRoll() {
		t.Error("ShouldRoll with 4 txns, threshold 5")
	}
	l.Sync(context.Background(), mustAppend(t, l, mkdir(4)))
	if !l.ShouldRoll() || l.SegmentBytes() == 0 {
		t.Errorf("ShouldRoll = false with 5 txns (bytes %d)", l.SegmentBytes())
	}
	l.RollSegment(context.Background())
	if l.ShouldRoll() {
		t.Error("ShouldRoll right after a roll")
	}
	l.Close()
}

// TestReadOpsTornHeader: an in-progress segment whose header never reached
// the disk holds no records; replay stops cleanly before it.
func TestReadOpsTornHeader(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	writeSegment(t, m, dirs[0], 1, 10, true)
	f, _ := m.Create(filepath.Join(dirs[0], InProgressName(11)))
	f.Write([]byte("HD"))
	f.Close()
	if _, last, err := replay(t, m, dirs, 0); err != nil || last != 10 {
		t.Fatalf("replay = %d, %v", last, err)
	}
}

// mustAppend appends ops and fails the test if they cannot be logged.
func mustAppend(t testing.TB, l *Log, ops ...op.Op) int64 {
	t.Helper()
	last, err := l.Append(ops...)
	if err != nil {
		t.Fatal(err)
	}
	return last
}

// mustEncode is EncodeRecord for ops the test knows to be small enough.
func mustEncode(buf []byte, txid int64, o op.Op) []byte {
	buf, err := EncodeRecord(buf, txid, o)
	if err != nil {
		panic(err)
	}
	return buf
}

// TestAppendTooLarge: an op over MaxRecordBody is refused with
// ErrRecordTooLarge, and nothing of its batch is logged: the txids it would
// have used go to the next batch, and replay sees only what was accepted.
func TestAppendTooLarge(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	l := openLog(t, m, dirs, 1, 1)
	ctx := context.Background()
	big := &op.Add{InodeID: 9, Path: "/big", ClientName: strings.Repeat("c", MaxRecordBody+1)}
	if _, err := l.Append(mkdir(1), big); !errors.Is(err, ErrRecordTooLarge) {
		t.Fatalf("Append of an oversized op = %v, want ErrRecordTooLarge", err)
	}
	txid := mustAppend(t, l, mkdir(2))
	if txid != 2 {
		t.Errorf("txid after a refused batch = %d, want 2 (the refused batch used none)", txid)
	}
	if err := l.Sync(ctx, txid); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var got []op.Op
	if _, err := ReadOps(context.Background(), []Journal{NewFileJournal(m, dirs[0])}, ReadOptions{InProgress: true}, func(_ int64, o op.Op) error {
		got = append(got, o)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []op.Op{&op.StartLogSegment{}, mkdir(2), &op.EndLogSegment{}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("replayed %v, want %v", got, want)
	}
}

// orderJournal records, in a shared list, when each journal's flush ran,
// and fails its writes when told to.
type orderJournal struct {
	Journal
	name  string
	order *[]string
	mu    *sync.Mutex
	fail  atomic.Bool
}

func (j *orderJournal) Write(ctx context.Context, b []byte, first, last int64) error {
	if j.fail.Load() {
		return errors.New("planted write failure")
	}
	return j.Journal.Write(ctx, b, first, last)
}

func (j *orderJournal) Flush(ctx context.Context) error {
	j.mu.Lock()
	*j.order = append(*j.order, j.name)
	j.mu.Unlock()
	return j.Journal.Flush(ctx)
}

// TestRequiredJournals: required journals (HA's shared edits) are made
// durable before the optional ones, and the failure of one stops the log
// even while optional journals work; an optional one that fails is dropped.
func TestRequiredJournals(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 3)
	var order []string
	var mu sync.Mutex
	mk := func(i int, name string) *orderJournal {
		return &orderJournal{Journal: NewFileJournal(m, dirs[i]), name: name, order: &order, mu: &mu}
	}
	shared, local1, local2 := mk(0, "shared"), mk(1, "local1"), mk(2, "local2")
	l, err := New(Config{MinJournals: 1, Logger: quietLogger}, []Journal{shared}, []Journal{local1, local2})
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
	mu.Lock()
	order = nil
	mu.Unlock()
	if err := l.Sync(ctx, mustAppend(t, l, mkdir(1))); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(order) != 3 || order[0] != "shared" {
		t.Errorf("flush order %v: the shared journal must be flushed first", order)
	}
	mu.Unlock()

	local2.fail.Store(true)
	if err := l.Sync(ctx, mustAppend(t, l, mkdir(2))); err != nil {
		t.Fatalf("an optional journal's failure stopped the log: %v", err)
	}
	if n := l.Stats().Journals; n != 2 {
		t.Errorf("journals after an optional failure = %d, want 2", n)
	}
	shared.fail.Store(true)
	if err := l.Sync(ctx, mustAppend(t, l, mkdir(3))); !errors.Is(err, ErrNoJournals) {
		t.Fatalf("Sync after the required journal failed = %v, want ErrNoJournals", err)
	}
	if got := listDir(t, m, dirs[1]); !strings.Contains(got, InProgressName(1)) {
		t.Fatalf("local dir: %q", got)
	}
	// Nothing the shared journal lacks reached the local one.
	var localLast int64
	if _, err := ReadOps(ctx, []Journal{NewFileJournal(m, dirs[1])}, ReadOptions{InProgress: true}, func(txid int64, _ op.Op) error {
		localLast = txid
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if localLast != 3 { // StartLogSegment, mkdir 1, mkdir 2
		t.Errorf("the local journal holds txids up to %d, want 3", localLast)
	}
	l.Close()
}

// TestStandbyStates: a standby opens the log for reading, becomes writer
// (InitForWrite from OPEN_FOR_READING) and goes back to reading after its
// segment ends; ReadOptions bound what is read.
func TestStandbyStates(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	writer := openLog(t, m, dirs, 1, 1)
	ctx := context.Background()
	for i := range 4 {
		mustAppend(t, writer, mkdir(i))
	}
	if err := writer.Sync(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.RollSegment(ctx); err != nil { // 1-6 finalized, 7 open
		t.Fatal(err)
	}
	if err := writer.Sync(ctx, mustAppend(t, writer, mkdir(9))); err != nil {
		t.Fatal(err)
	}

	standby, err := New(Config{Logger: quietLogger}, []Journal{NewFileJournal(m, dirs[0])}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := standby.InitForRead(); err != nil {
		t.Fatal(err)
	}
	count := func(opts ReadOptions) (int64, int) {
		n := 0
		last, err := standby.ReadOps(ctx, opts, func(int64, op.Op) error { n++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		return last, n
	}
	if last, n := count(ReadOptions{}); last != 6 || n != 6 {
		t.Errorf("finalized only: last %d, %d records; want 6, 6", last, n)
	}
	if last, n := count(ReadOptions{From: 6, InProgress: true}); last != 8 || n != 2 {
		t.Errorf("in progress from 6: last %d, %d records; want 8, 2", last, n)
	}
	if last, n := count(ReadOptions{From: 2, To: 4}); last != 4 || n != 2 {
		t.Errorf("from 2 to 4: last %d, %d records; want 4, 2", last, n)
	}
	writer.Close() // the old writer is gone (fenced)
	if err := standby.InitForWrite(ctx); err != nil {
		t.Fatalf("a standby becoming writer: %v", err)
	}
	if err := standby.StartSegment(ctx, 10); err != nil { // 7-9 were finalized by Close
		t.Fatal(err)
	}
	if err := standby.EndSegment(ctx); err != nil { // 10-11
		t.Fatal(err)
	}
	if err := standby.InitForRead(); err != nil {
		t.Fatalf("back to reading after the segment ended: %v", err)
	}
	// Writer again, after others wrote 12-20: the next segment starts
	// where the reading ended, not after its own last segment.
	if err := standby.InitForWrite(ctx); err != nil {
		t.Fatal(err)
	}
	if err := standby.StartSegment(ctx, 21); err != nil {
		t.Fatalf("a writer again, starting after what it read: %v", err)
	}
	if err := standby.EndSegment(ctx); err != nil {
		t.Fatal(err)
	}
	if err := standby.InitForRead(); err != nil {
		t.Fatal(err)
	}
	if got := standby.State(); got != StateOpenForReading {
		t.Errorf("state %v, want OPEN_FOR_READING", got)
	}
	standby.Close()
}

// gateJournal records the batches written to it and, while its gate is
// closed, holds every Flush.
type gateJournal struct {
	Journal
	mu      sync.Mutex
	flushed []int64 // last txid of each batch flushed
	pending int64   // last txid written, not yet flushed
	gate    chan struct{}
	entered chan int64
}

func (j *gateJournal) Write(ctx context.Context, b []byte, first, last int64) error {
	j.mu.Lock()
	j.pending = last
	j.mu.Unlock()
	return j.Journal.Write(ctx, b, first, last)
}

func (j *gateJournal) Flush(ctx context.Context) error {
	j.mu.Lock()
	last, gate := j.pending, j.gate
	j.mu.Unlock()
	if j.entered != nil {
		j.entered <- last
	}
	if gate != nil {
		<-gate
	}
	if err := j.Journal.Flush(ctx); err != nil {
		return err
	}
	j.mu.Lock()
	j.flushed = append(j.flushed, last)
	j.mu.Unlock()
	return nil
}

func (j *gateJournal) batches() []int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]int64(nil), j.flushed...)
}

// TestPipelinedStages: with a required journal, the next batch is made
// durable in the required journal while the previous one is still being
// flushed to the local dirs, and a local dir never gets a batch the
// required journal has not made durable, nor batches out of order.
func TestPipelinedStages(t *testing.T) {
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
	// Hold the local dir's flush of the next batch.
	before := local.batches() // the segment's start
	gate := make(chan struct{})
	local.mu.Lock()
	local.gate, local.entered = gate, make(chan int64, 4)
	local.mu.Unlock()
	first := mustAppend(t, l, mkdir(1))
	done1 := make(chan error, 1)
	go func() { done1 <- l.Sync(ctx, first) }()
	if got := <-local.entered; got != first {
		t.Fatalf("the local dir flushes txid %d first, want %d", got, first)
	}
	// Batch 1 waits on the local dir; batch 2 reaches the shared journal
	// meanwhile.
	second := mustAppend(t, l, mkdir(2))
	done2 := make(chan error, 1)
	go func() { done2 <- l.Sync(ctx, second) }()
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(shared.batches(), second) {
		if time.Now().After(deadline) {
			close(gate)
			t.Fatalf("the shared journal did not flush txid %d while the local dir held txid %d (shared: %v)", second, first, shared.batches())
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-done2:
		close(gate)
		t.Fatalf("txid %d was acknowledged before the local dir had it: %v", second, err)
	default:
	}
	if got := local.batches(); len(got) != len(before) {
		close(gate)
		t.Fatalf("the local dir flushed %v while held", got)
	}
	close(gate)
	if err := <-done1; err != nil {
		t.Fatal(err)
	}
	if got := <-local.entered; got != second {
		t.Fatalf("the local dir's next batch ends at %d, want %d", got, second)
	}
	if err := <-done2; err != nil {
		t.Fatal(err)
	}
	if got := local.batches(); !slices.Equal(got, append(before, first, second)) {
		t.Fatalf("local batches %v, want %v then [%d %d]", got, before, first, second)
	}
}
