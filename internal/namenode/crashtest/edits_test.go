package crashtest

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// segFile is one edit segment file of a name dir.
type segFile struct {
	path        string
	first, last int64 // last is -1 in progress
	inProgress  bool
}

// segmentFiles lists the edit segments of a name dir, by first txid.
func segmentFiles(t *testing.T, nameDir string) []segFile {
	t.Helper()
	cur := filepath.Join(nameDir, "current")
	ents, err := os.ReadDir(cur)
	if err != nil {
		t.Fatal(err)
	}
	var out []segFile
	for _, e := range ents {
		first, last, inProgress, ok := editlog.ParseSegmentName(e.Name())
		if ok {
			out = append(out, segFile{path: filepath.Join(cur, e.Name()), first: first, last: last, inProgress: inProgress})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].first < out[j].first })
	return out
}

// newestInProgress is the in-progress segment with the highest first txid.
func newestInProgress(t *testing.T, nameDir string) segFile {
	t.Helper()
	segs := segmentFiles(t, nameDir)
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i].inProgress {
			return segs[i]
		}
	}
	t.Fatalf("%s holds no in-progress segment: %v", nameDir, segs)
	return segFile{}
}

// newestFinalized is the finalized segment with the highest first txid.
func newestFinalized(t *testing.T, nameDir string) segFile {
	t.Helper()
	segs := segmentFiles(t, nameDir)
	for i := len(segs) - 1; i >= 0; i-- {
		if !segs[i].inProgress {
			return segs[i]
		}
	}
	t.Fatalf("%s holds no finalized segment: %v", nameDir, segs)
	return segFile{}
}

// lastTxID reads a segment and returns the txid of its last whole record.
func lastTxID(t *testing.T, file string) int64 {
	last, _ := segmentEnd(t, file)
	return last
}

// segmentEnd reads a segment and returns the txid of its last whole record
// and the offset just past it: the file's end, or where the zero fill of a
// preallocated in-progress segment starts.
func segmentEnd(t *testing.T, file string) (int64, int64) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	version, err := editlog.ReadSegmentHeader(f, file)
	if err != nil {
		t.Fatal(err)
	}
	d := editlog.NewDecoder(f, file, editlog.SegmentHeaderSize, version)
	var last int64 = -1
	for i := 0; ; i++ {
		txid, _, err := d.Next()
		var torn *editlog.TornRecordError
		if errors.Is(err, io.EOF) || (errors.As(err, &torn) && torn.Offset == d.Offset() && zeroFrom(t, f, torn.Offset)) {
			return last, d.Offset()
		}
		if err != nil {
			t.Fatalf("%s is damaged before the test touched it: %v", file, err)
		}
		last = txid
	}
}

// zeroFrom reports whether every byte of f from off on is zero.
func zeroFrom(t *testing.T, f *os.File, off int64) bool {
	t.Helper()
	b, err := io.ReadAll(io.NewSectionReader(f, off, 1<<40))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// writeAt writes b at off in file, as the NameNode's next write would have
// (inside the zero fill of a preallocated segment).
func writeAt(t *testing.T, file string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func appendBytes(t *testing.T, file string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, file string) int64 {
	t.Helper()
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// mkdirRecord is a well-formed edit record for txid.
func mkdirRecord(txid int64) []byte {
	rec, err := editlog.EncodeRecord(nil, txid, &op.Mkdir{
		InodeID: 1 << 40, Path: "/torn-write-never-acknowledged", Mtime: 1,
		Perm: op.Perm{User: "crash", Group: "supergroup", Mode: 0o755},
	})
	if err != nil {
		panic(err)
	}
	return rec
}

// TestTornTail kills the NameNode during writes, appends the bytes of an
// incomplete write to the newest edits_inprogress segment of one or both name
// dirs, and restarts it: the NameNode must start, cut the torn bytes off
// (the recovered segment is finalized with exactly the bytes it had before),
// and hold every acknowledged op, with the crash invariants of TestKill9.
// The torn record is never applied: its path does not appear.
func TestTornTail(t *testing.T) {
	needBinary(t)
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "name1"), filepath.Join(root, "name2")}
	nn := newNameNode(t, dirs, nil)
	nn.start()
	ws := newWorkers(4, seed)
	setupWorkers(t, nn.addr, ws)

	tails := []struct {
		name string
		dirs []int // which name dirs get the torn write
		tail func(next int64) []byte
		// append puts the tail after the file's end; otherwise it goes where
		// the next write would have (inside a preallocated segment's fill).
		append bool
	}{
		{"half a record", []int{0, 1}, func(next int64) []byte { r := mkdirRecord(next); return r[:len(r)/2] }, false},
		{"record header cut short", []int{1}, func(next int64) []byte { return mkdirRecord(next)[:editlog.RecordHeaderSize-4] }, false},
		{"whole record, bad checksum", []int{0}, func(next int64) []byte {
			r := mkdirRecord(next)
			r[len(r)-1] ^= 0xff
			return r
		}, false},
		{"zero fill", []int{0, 1}, func(int64) []byte { return make([]byte, 4096) }, true},
		{"different tails per dir", []int{0, 1}, func(next int64) []byte { return mkdirRecord(next)[:7+int(next%5)] }, false},
	}
	for _, tc := range tails {
		round(t, nn.addr, ws, 0, 1+rng.Int63n(300), 3*time.Millisecond, rng, nn.kill9)
		type cut struct {
			seg  segFile
			size int64
			last int64
		}
		var cuts []cut
		for _, d := range tc.dirs {
			seg := newestInProgress(t, dirs[d])
			last, end := segmentEnd(t, seg.path)
			c := cut{seg: seg, size: end, last: last}
			if tc.append {
				appendBytes(t, seg.path, tc.tail(c.last+1))
			} else {
				writeAt(t, seg.path, end, tc.tail(c.last+1))
			}
			cuts = append(cuts, c)
		}
		nn.start()
		verify(t, nn.addr, ws, afterCrash)
		for _, c := range cuts {
			fin := filepath.Join(filepath.Dir(c.seg.path), editlog.FinalizedName(c.seg.first, c.last))
			if got := fileSize(t, fin); got != c.size {
				t.Errorf("%s: %s holds %d bytes after recovery, want the %d before the torn write", tc.name, fin, got, c.size)
			}
		}
		t.Logf("%s: started and cut the torn tail of %d segment(s)", tc.name, len(cuts))
	}
	if code := nn.stop(); code != 0 {
		t.Fatalf("NameNode exited %d after SIGTERM", code)
	}
}

var corruptMsg = regexp.MustCompile(`corrupt edit log (\S+) at offset (\d+)`)

// TestCorruptSegment flips one byte in the middle of a finalized segment in
// both name dirs. Start-up must refuse, naming the file and an offset at or
// before the flipped byte; `hdfs namenode -recover -force` must then cut the
// log there and exit 0, and the NameNode must start and serve. The ops of the
// segments before the damaged one survive, the damaged segment's ops survive
// up to some point and the later segments' ops are gone: for each worker, the
// namespace equals its log replayed up to a point between the end of the
// first phase and the end of the second.
func TestCorruptSegment(t *testing.T) {
	needBinary(t)
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "name1"), filepath.Join(root, "name2")}
	nn := newNameNode(t, dirs, nil)
	nn.start()
	ws := newWorkers(4, seed)
	setupWorkers(t, nn.addr, ws)

	// Three phases, each ending with a clean stop, so each leaves a finalized
	// segment; the second one gets damaged.
	ends := make([][]int, 3)
	var damaged []segFile
	for phase := range ends {
		if phase > 0 {
			nn.start()
		}
		requireAllAcked(t, "phase "+strconv.Itoa(phase+1), round(t, nn.addr, ws, 60, 0, 0, rng, nn.kill9))
		if code := nn.stop(); code != 0 {
			t.Fatalf("NameNode exited %d after SIGTERM", code)
		}
		for _, w := range ws {
			ends[phase] = append(ends[phase], len(w.ops))
		}
		if phase == 1 {
			for _, d := range dirs {
				damaged = append(damaged, newestFinalized(t, d))
			}
		}
	}

	a, err := os.ReadFile(damaged[0].path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(damaged[1].path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("%s and %s differ; the edit log wrote different bytes to its two dirs", damaged[0].path, damaged[1].path)
	}
	flip := int64(len(a) / 2)
	for _, s := range damaged {
		data, err := os.ReadFile(s.path)
		if err != nil {
			t.Fatal(err)
		}
		data[flip] ^= 0x5a
		if err := os.WriteFile(s.path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("flipped byte %d of %s (%d bytes, txids %d-%d) in both dirs", flip, filepath.Base(damaged[0].path), len(a), damaged[0].first, damaged[0].last)

	code, out := nn.startFails()
	if code == 0 {
		t.Errorf("NameNode exited 0 on a corrupt edit log")
	}
	m := corruptMsg.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("start-up failure does not name a corrupt file and offset:\n%s", tail(out, 4000))
	}
	if m[1] != damaged[0].path && m[1] != damaged[1].path {
		t.Errorf("start-up names %s, want %s or %s", m[1], damaged[0].path, damaged[1].path)
	}
	if off, _ := strconv.ParseInt(m[2], 10, 64); off < editlog.SegmentHeaderSize || off > flip {
		t.Errorf("start-up names offset %d, want one in [%d, %d] (the record holding byte %d)", off, editlog.SegmentHeaderSize, flip, flip)
	}
	line, _ := logLine(out, "corrupt edit log")
	t.Logf("start-up refused: %s", line)

	code, out = nn.tool("namenode", "-recover", "-force")
	if code != 0 {
		t.Fatalf("hdfs namenode -recover -force exited %d:\n%s", code, tail(out, 4000))
	}
	if !strings.Contains(out, "recovery complete") {
		t.Errorf("recovery does not say it completed:\n%s", tail(out, 4000))
	}
	nn.start()
	verify(t, nn.addr, ws, func(w *worker) (int, int) { return ends[0][w.id], ends[1][w.id] })
	requireAllAcked(t, "after recovery", round(t, nn.addr, ws, 20, 0, 0, rng, nn.kill9))
	if code := nn.stop(); code != 0 {
		t.Fatalf("NameNode exited %d after SIGTERM", code)
	}
	nn.start()
	verify(t, nn.addr, ws, func(w *worker) (int, int) { return len(w.ops), len(w.ops) })
	if code := nn.stop(); code != 0 {
		t.Fatalf("NameNode exited %d after SIGTERM", code)
	}
}

// flipByte xors the byte at off of file with 0x5a.
func flipByte(t *testing.T, file string, off int64) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	data[off] ^= 0x5a
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptOneCopy damages an edit segment in one of the two name dirs
// only, so an intact copy of every record exists in the other, and checks
// that no acknowledged op is lost:
//
//   - a byte flipped in the middle of a finalized segment of one dir: the
//     NameNode starts, reading the other dir's copy, with every acknowledged
//     op in place;
//   - a byte flipped in the middle of the newest in-progress segment of one
//     dir after a kill -9: either the NameNode starts with every acknowledged
//     op, or it refuses naming that file and an offset at or before the
//     flipped byte, and after `hdfs namenode -recover -force` (which may cut
//     only the damaged copy) it starts with every acknowledged op.
func TestCorruptOneCopy(t *testing.T) {
	needBinary(t)
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "name1"), filepath.Join(root, "name2")}
	nn := newNameNode(t, dirs, nil)
	nn.start()
	ws := newWorkers(4, seed)
	setupWorkers(t, nn.addr, ws)

	// A finalized segment, damaged in name1.
	requireAllAcked(t, "first phase", round(t, nn.addr, ws, 60, 0, 0, rng, nn.kill9))
	if code := nn.stop(); code != 0 {
		t.Fatalf("NameNode exited %d after SIGTERM", code)
	}
	fin := newestFinalized(t, dirs[0])
	flipByte(t, fin.path, fileSize(t, fin.path)/2)
	nn.start()
	verify(t, nn.addr, ws, afterCrash)
	t.Logf("started with %s damaged", fin.path)

	// An in-progress segment, damaged in name2 after a crash.
	round(t, nn.addr, ws, 0, 200+rng.Int63n(200), 3*time.Millisecond, rng, nn.kill9)
	inp := newestInProgress(t, dirs[1])
	flip := fileSize(t, inp.path) / 2
	flipByte(t, inp.path, flip)
	code, out := nn.tryStart()
	if code == 0 {
		t.Logf("started with %s damaged", inp.path)
		verify(t, nn.addr, ws, afterCrash)
	} else {
		m := corruptMsg.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("start-up failed (exit %d) without naming a corrupt file and offset:\n%s", code, tail(out, 4000))
		}
		if m[1] != inp.path {
			t.Errorf("start-up names %s, want %s", m[1], inp.path)
		}
		if off, _ := strconv.ParseInt(m[2], 10, 64); off < editlog.SegmentHeaderSize || off > flip {
			t.Errorf("start-up names offset %d, want one in [%d, %d]", off, editlog.SegmentHeaderSize, flip)
		}
		line, _ := logLine(out, "corrupt edit log")
		t.Logf("start-up refused: %s", line)
		code, out = nn.tool("namenode", "-recover", "-force")
		if code != 0 {
			t.Fatalf("hdfs namenode -recover -force exited %d:\n%s", code, tail(out, 4000))
		}
		nn.start()
		verify(t, nn.addr, ws, afterCrash)
	}
	requireAllAcked(t, "afterwards", round(t, nn.addr, ws, 20, 0, 0, rng, nn.kill9))
	if code := nn.stop(); code != 0 {
		t.Fatalf("NameNode exited %d after SIGTERM", code)
	}
}
