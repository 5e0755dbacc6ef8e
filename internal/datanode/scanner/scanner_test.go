package scanner

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	hstorage "github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testPool = "BP-1-127.0.0.1-1764622225000"

var t0 = time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)

// hangGuard bounds every wait of these tests; it is not a timed assertion.
const hangGuard = 20 * time.Second

type fixture struct {
	t    *testing.T
	dirs []string
	ds   *storage.Dataset
	bp   *storage.BlockPool
}

func newFixture(t *testing.T, nvols int) *fixture {
	t.Helper()
	f := &fixture{t: t}
	root := t.TempDir()
	for i := range nvols {
		f.dirs = append(f.dirs, filepath.Join(root, fmt.Sprintf("vol%d", i)))
	}
	f.open()
	t.Cleanup(func() { f.ds.Close() })
	return f
}

func (f *fixture) open() {
	f.t.Helper()
	var vols []*storage.Volume
	for i, d := range f.dirs {
		v, err := storage.OpenVolume(storage.VolumeConfig{Dir: d, Testing: storage.VolumeTesting{LockHolder: "test"}})
		if err != nil {
			f.t.Fatal(err)
		}
		if v.Version() == nil {
			ver := &hstorage.Version{LayoutVersion: hstorage.DataNodeLayoutVersion, StorageType: hstorage.StorageTypeDataNode,
				ClusterID: "CID-test", StorageID: fmt.Sprintf("DS-%d", i), DatanodeUUID: "dn"}
			if err := v.Format(ver, t0); err != nil {
				f.t.Fatal(err)
			}
		}
		vols = append(vols, v)
	}
	ds, err := storage.NewDataset(storage.Config{}, vols)
	if err != nil {
		f.t.Fatal(err)
	}
	bp, _, err := ds.AddBlockPool(&hstorage.Version{LayoutVersion: hstorage.DataNodeLayoutVersion, NamespaceID: 1, BlockPoolID: testPool}, t0)
	if err != nil {
		f.t.Fatal(err)
	}
	f.ds, f.bp = ds, bp
}

func (f *fixture) restart() {
	f.t.Helper()
	f.ds.Close()
	f.open()
}

// write makes a finalized replica of n random bytes.
func (f *fixture) write(id int64, n int) storage.Replica {
	f.t.Helper()
	data := make([]byte, n)
	rand.New(rand.NewSource(id)).Read(data)
	ck := datatransfer.DefaultChecksum()
	w, err := f.bp.CreateRBW(storage.Block{ID: id, GenStamp: 1000}, ck, int64(n))
	if err != nil {
		f.t.Fatal(err)
	}
	if err := w.WritePacket(0, data, ck.Compute(nil, data)); err != nil {
		f.t.Fatal(err)
	}
	r, err := w.Finalize(int64(n))
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func flip(t *testing.T, path string, off int64) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	b := make([]byte, 1)
	if _, err := fh.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x5a
	if _, err := fh.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

type bad struct {
	pool string
	b    storage.Block
	err  error
}

type fakeReporter struct {
	mu     sync.Mutex
	bad    []bad
	volErr []error
}

func (r *fakeReporter) ReportBad(pool string, v *storage.Volume, b storage.Block, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bad = append(r.bad, bad{pool, b, err})
}

func (r *fakeReporter) VolumeError(v *storage.Volume, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.volErr = append(r.volErr, err)
}

func (r *fakeReporter) bads() []bad {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bad(nil), r.bad...)
}

func newLog(w *testtool.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// drive advances the manual clock by step each time the scanner is
// waiting on it, until cond holds.
func drive(t *testing.T, clk *clock.Manual, step time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		if clk.Pending() == 0 {
			time.Sleep(200 * time.Microsecond) // the scanner is busy: let it reach its next wait
			continue
		}
		clk.Advance(step)
	}
}

// waitReal waits in real time, without moving the clock, until cond holds.
func waitReal(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

func stats(s *BlockScanner) VolumeStats {
	st := s.Stats()
	if len(st) == 0 {
		return VolumeStats{}
	}
	return st[0]
}

// A flipped byte in a cold replica is found by the next pass, verified a
// second time, and reported once; the other replicas pass; the rate stays
// within the configured one in the scanner's time.
func TestScannerFindsCorruption(t *testing.T) {
	f := newFixture(t, 1)
	var reps []storage.Replica
	for id := int64(1); id <= 4; id++ {
		reps = append(reps, f.write(id, 64<<10))
	}
	clk := clock.NewManual(t0)
	rep := &fakeReporter{}
	const rate = 64 << 10
	s := New(Config{BytesPerSecond: rate, Period: time.Hour, CursorSaveInterval: time.Minute}, clk, nil, rep)
	defer s.Close()
	s.AddVolume(f.ds.Volumes()[0])
	s.AddPool(f.bp)
	drive(t, clk, 100*time.Millisecond, "the first pass", func() bool { return stats(s).BlocksScannedSinceStart == 4 })
	if el := clk.Now().Sub(t0); el < 3*time.Second {
		t.Fatalf("4 × 64 KiB verified in %v of scanner time at %d B/s", el, rate)
	}
	if len(rep.bads()) != 0 {
		t.Fatalf("reported %v on clean replicas", rep.bads())
	}
	flip(t, reps[2].BlockPath, 1000)
	// Nothing happens before the period is over.
	drive(t, clk, time.Minute, "the second pass", func() bool { return stats(s).ScansSinceStart == 2 })
	drive(t, clk, 100*time.Millisecond, "the report", func() bool { return len(rep.bads()) == 1 })
	b := rep.bads()[0]
	if b.pool != testPool || b.b != reps[2].Block || !strings.Contains(b.err.Error(), "corrupt") {
		t.Fatalf("reported %+v, want %v", b, reps[2].Block)
	}
	drive(t, clk, 100*time.Millisecond, "the end of the second pass", func() bool { return stats(s).AtEnd })
	st := stats(s)
	if st.ScanErrorsSinceStart != 2 || st.CorruptReported != 1 || st.BlocksScannedSinceStart != 7 {
		t.Fatalf("stats %+v: want 2 failed verifications, 1 report, 4+3 good scans", st)
	}
	if len(rep.bads()) != 1 {
		t.Fatalf("reported %d times", len(rep.bads()))
	}
	var out bytes.Buffer
	s.Report(&out, true)
	for _, want := range []string{"Block Scanner Statistics", "Block scanner information for volume DS-0 with base path " + f.dirs[0],
		"Blocks scanned since restart", "Block scan errors since restart", "More blocks to scan in period", reps[2].Block.String() + " "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// Stopped in the middle of a pass, the scanner saves its cursor; the next
// one resumes there (and logs it), verifying each replica once in all.
func TestScannerResumesFromCursor(t *testing.T) {
	f := newFixture(t, 1)
	const n = 10
	for id := int64(1); id <= n; id++ {
		f.write(id, 32<<10)
	}
	clk := clock.NewManual(t0)
	cfg := Config{BytesPerSecond: 32 << 10, Period: time.Hour, CursorSaveInterval: time.Second}
	s := New(cfg, clk, nil, &fakeReporter{})
	s.AddVolume(f.ds.Volumes()[0])
	s.AddPool(f.bp)
	drive(t, clk, 100*time.Millisecond, "four replicas", func() bool { return stats(s).BlocksScannedSinceStart >= 4 })
	first := stats(s).BlocksScannedSinceStart
	s.Close()
	cursor, err := os.ReadFile(filepath.Join(f.dirs[0], "current", testPool, "scanner.cursor"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cursor), `"atEnd":false`) {
		t.Fatalf("cursor after a stop mid-pass: %s", cursor)
	}

	f.restart()
	var logs testtool.Buffer
	s2 := New(cfg, clk, newLog(&logs), &fakeReporter{})
	defer s2.Close()
	s2.AddVolume(f.ds.Volumes()[0])
	s2.AddPool(f.bp)
	drive(t, clk, 100*time.Millisecond, "the rest of the pass", func() bool { return stats(s2).AtEnd && stats(s2).BlocksScannedSinceStart > 0 })
	if got := stats(s2).BlocksScannedSinceStart; first+got != n {
		t.Fatalf("verified %d before the restart and %d after, want %d in all", first, got, n)
	}
	if !strings.Contains(logs.String(), "block scanner resuming from cursor") || !strings.Contains(logs.String(), "position=subdir0/subdir0/blk_") {
		t.Fatalf("no resume in the log:\n%s", logs.String())
	}
	if stats(s2).ScansSinceStart != 0 {
		t.Fatalf("a resumed pass counted as a new one: %+v", stats(s2))
	}
}

// A suspect is verified at once, even between passes; a replica a reader
// verified is skipped by the next pass.
func TestScannerSuspectsAndReaders(t *testing.T) {
	f := newFixture(t, 1)
	var reps []storage.Replica
	for id := int64(1); id <= 3; id++ {
		reps = append(reps, f.write(id, 16<<10))
	}
	clk := clock.NewManual(t0)
	rep := &fakeReporter{}
	// About a second of scanner time per replica.
	s := New(Config{BytesPerSecond: 16 << 10, Period: time.Hour}, clk, nil, rep)
	defer s.Close()
	v := f.ds.Volumes()[0]
	s.AddVolume(v)
	s.AddPool(f.bp)
	drive(t, clk, 100*time.Millisecond, "the first pass", func() bool { return stats(s).BlocksScannedSinceStart == 3 && stats(s).AtEnd })

	flip(t, reps[0].BlockPath, 5)
	s.MarkSuspect(testPool, v, 1) // a reader's I/O error, say
	// The scanner sleeps until the next pass; let it take the suspect
	// before the clock moves, or the clock could run ahead of a scanner
	// that has not woken yet (on a loaded machine) and the ten minutes
	// of the suspect's memory would pass in the scanner's time.
	waitReal(t, "the scanner to take the suspect", func() bool { return stats(s).Suspects == 0 })
	drive(t, clk, 100*time.Millisecond, "the suspect's report", func() bool { return len(rep.bads()) == 1 })
	if el := clk.Now().Sub(t0); el >= time.Hour {
		t.Fatalf("the suspect waited for the next pass (%v)", el)
	}
	s.MarkSuspect(testPool, v, 1) // again within ten minutes: not queued
	if st := stats(s); st.Suspects != 0 {
		t.Fatalf("a suspect queued twice: %+v", st)
	}

	before := stats(s)
	drive(t, clk, time.Minute, "the second pass", func() bool { return stats(s).ScansSinceStart == 2 })
	// The pass is on blk_1; a reader verifies blk_2 meanwhile.
	s.MarkVerified(testPool, v, 2)
	drive(t, clk, 100*time.Millisecond, "its end", func() bool { return stats(s).AtEnd })
	after := stats(s)
	if after.SkippedVerifiedByReaders != 1 {
		t.Fatalf("skipped %d replicas verified by readers, want 1", after.SkippedVerifiedByReaders)
	}
	// blk_1 fails twice more (reported again), blk_3 passes.
	if got := after.BlocksScannedSinceStart - before.BlocksScannedSinceStart; got != 1 {
		t.Fatalf("the second pass verified %d good replicas, want 1 (blk_3)", got)
	}
}

func TestScannerDisabled(t *testing.T) {
	for _, cfg := range []Config{{BytesPerSecond: 0}, {BytesPerSecond: 1, Period: -1}} {
		s := New(cfg, clock.NewManual(t0), nil, &fakeReporter{})
		s.AddVolume(nil)
		var out bytes.Buffer
		s.Report(&out, false)
		if !strings.HasPrefix(out.String(), "Periodic block scanner is not running") {
			t.Fatalf("%+v: %q", cfg, out.String())
		}
		s.Close()
	}
}

type fakeDirReporter struct {
	mu    sync.Mutex
	fixes map[string][]storage.Fix
}

func (r *fakeDirReporter) Reconciled(pool string, fixes []storage.Fix, st storage.DiffStats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fixes[pool] = append(r.fixes[pool], fixes...)
}

// A periodic directory scan repairs the map and tells the reporter; a
// second finds nothing.
func TestDirectoryScanner(t *testing.T) {
	f := newFixture(t, 2)
	r1 := f.write(1, 4096)
	f.write(2, 4096)
	if err := os.Remove(r1.BlockPath); err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(t0)
	rep := &fakeDirReporter{fixes: map[string][]storage.Fix{}}
	var logs testtool.Buffer
	d := NewDirectoryScanner(DirConfig{Interval: time.Hour, FirstDelay: time.Minute, Threads: 2, ThrottleMsPerSec: 500}, clk, newLog(&logs), f.ds, nil, rep)
	d.Start()
	defer d.Close()
	got := func() []storage.Fix {
		rep.mu.Lock()
		defer rep.mu.Unlock()
		return append([]storage.Fix(nil), rep.fixes[testPool]...)
	}
	drive(t, clk, 10*time.Second, "the first scan", func() bool { return len(got()) > 0 })
	fx := got()
	if len(fx) != 1 || fx[0].Action != storage.FixRemoved || fx[0].Replica.ID != 1 {
		t.Fatalf("fixes %+v", fx)
	}
	if _, ok := f.bp.Get(1); ok {
		t.Fatal("blk_1 still in the map")
	}
	if !strings.Contains(logs.String(), "BlockPool "+testPool+" total blocks: 2, missing metadata files: 0, missing block files: 1") {
		t.Fatalf("scan statistics not logged:\n%s", logs.String())
	}
	res, err := d.RunOnce(context.Background())
	if err != nil || len(res.Fixes[testPool]) != 0 {
		t.Fatalf("second scan: %+v, %v", res, err)
	}
}
