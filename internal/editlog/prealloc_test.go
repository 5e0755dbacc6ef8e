package editlog

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

func fileSize(t *testing.T, fsys vfs.FS, name string) int64 {
	t.Helper()
	st, err := fsys.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestPreallocatedSegment: the in-progress segment is zero-filled ahead of
// its records in PreallocateBytes chunks, replay reads every record in it,
// a batch larger than a chunk gets enough fill, and finalizing cuts the fill.
func TestPreallocatedSegment(t *testing.T) {
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	l := openLog(t, m, dirs, 1, 1)
	for i := range 5 {
		if err := l.Sync(context.Background(), mustAppend(t, l, mkdir(i))); err != nil {
			t.Fatal(err)
		}
	}
	name := filepath.Join(dirs[0], InProgressName(1))
	end := recordsEnd(t, m, name)
	if size := fileSize(t, m, name); size != PreallocateBytes+SegmentHeaderSize {
		t.Fatalf("in-progress segment is %d bytes, want %d (records end at %d)", size, PreallocateBytes+SegmentHeaderSize, end)
	}
	if got, last, err := replay(t, m, dirs, 0); err != nil || last != 6 || len(got) != 6 {
		t.Fatalf("replay of the preallocated segment: %d ops, last %d, %v", len(got), last, err)
	}
	if torn := tailError(t, m, name); torn == nil || !torn.ZeroFill || torn.Offset != end {
		t.Fatalf("end of the in-progress segment: %+v, want zero fill at %d", torn, end)
	}

	// One batch of more than a chunk.
	var last int64
	for i := range 30000 {
		last = mustAppend(t, l, mkdir(100+i))
	}
	if err := l.Sync(context.Background(), last); err != nil {
		t.Fatal(err)
	}
	end = recordsEnd(t, m, name)
	size := fileSize(t, m, name)
	if end <= PreallocateBytes || size < end || (size-SegmentHeaderSize)%PreallocateBytes != 0 {
		t.Fatalf("after a large batch: records end at %d, file is %d bytes", end, size)
	}
	if _, got, err := replay(t, m, dirs, 0); err != nil || got != last {
		t.Fatalf("replay: last %d, %v, want %d", got, err, last)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(dirs[0], FinalizedName(1, last+1))
	if size, want := fileSize(t, m, final), recordsEnd(t, m, final); size != want {
		t.Fatalf("finalized segment is %d bytes, its records end at %d", size, want)
	}
	if _, got, err := replay(t, m, dirs, 0); err != nil || got != last+1 {
		t.Fatalf("replay after finalize: last %d, %v, want %d", got, err, last+1)
	}
}

// TestTornWriteInsideFill: a crash that kept only the first bytes of the
// last batch leaves a partial record followed by zero fill. Recovery cuts it
// (a torn tail, as when the file ended inside the record), wherever the cut
// falls; a record whose length swallows an intact record is still corruption.
func TestTornWriteInsideFill(t *testing.T) {
	for _, keep := range []int64{1, 5, RecordHeaderSize - 1, RecordHeaderSize, RecordHeaderSize + 3, -4, -1} {
		m, dirs, name := abandonedFiveMkdirs(t)
		end := recordsEnd(t, m, name)
		lastLen := int64(len(mustEncode(nil, 6, mkdir(4))))
		start := end - lastLen
		// Zero the last record from start+keep on (keep < 0: from its end).
		from := start + keep
		if keep < 0 {
			from = end + keep
		}
		f, err := m.OpenReadWrite(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Seek(from, io.SeekStart)
		f.Write(make([]byte, end-from))
		f.Sync()
		f.Close()

		if torn := tailError(t, m, name); torn == nil || torn.ZeroFill || torn.Offset != start {
			t.Fatalf("keep %d: end of the segment: %+v, want a torn record (not zero fill) at %d", keep, torn, start)
		}
		l2 := openLog(t, m, dirs, 1, 6)
		if got, want := listDir(t, m, dirs[0]), FinalizedName(1, 5)+" "+InProgressName(6); got != want {
			t.Fatalf("keep %d: after recovery: %q, want %q", keep, got, want)
		}
		if size := fileSize(t, m, filepath.Join(dirs[0], FinalizedName(1, 5))); size != start {
			t.Errorf("keep %d: recovered segment is %d bytes, want %d", keep, size, start)
		}
		l2.Close()
	}

	// A length grown over the next, intact record, with zero fill after it.
	m, dirs, name := abandonedFiveMkdirs(t)
	end := recordsEnd(t, m, name)
	n := int64(len(mustEncode(nil, 6, mkdir(4))))
	off := end - 2*n // record of txid 5
	f, _ := m.OpenReadWrite(name)
	b := make([]byte, 4)
	f.ReadAt(b, off+9)
	b[3] += byte(n + 20) // its body now runs over txid 6 into the fill
	f.Seek(off+9, io.SeekStart)
	f.Write(b)
	f.Sync()
	f.Close()
	l2, _ := New(Config{Logger: quietLogger}, nil, journals(m, dirs))
	err := l2.InitForWrite(context.Background())
	var ce *CorruptionError
	if !errors.As(err, &ce) || ce.Offset != off {
		t.Fatalf("InitForWrite = %v, want corruption at %d", err, off)
	}
	l2.Close()
}
