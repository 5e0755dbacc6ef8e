package editlog

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// TestTailingResumesInProgress: a reader following an in-progress segment
// (a standby with dfs.ha.tail-edits.in-progress) goes on from where its
// last read stopped instead of decoding the segment from its start: with
// the segment's first records damaged after the first read, the second
// read of the same journal gets the new records, while a journal without
// that resume point (another reader) decodes from the start and finds the
// damage.
func TestTailingResumesInProgress(t *testing.T) {
	ctx := context.Background()
	m := vfs.NewMem()
	dirs := memDirs(t, m, 1)
	w := NewFileJournal(m, dirs[0])
	if err := w.StartSegment(ctx, 1); err != nil {
		t.Fatal(err)
	}
	write := func(first, last int64) {
		t.Helper()
		var buf []byte
		for tx := first; tx <= last; tx++ {
			var o op.Op = mkdir(int(tx))
			if tx == 1 {
				o = &op.StartLogSegment{}
			}
			buf = mustEncode(buf, tx, o)
		}
		if err := w.Write(ctx, buf, first, last); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	read := func(j Journal, from int64) (int64, int, error) {
		n := 0
		last, err := ReadOps(ctx, []Journal{j}, ReadOptions{From: from, InProgress: true}, func(int64, op.Op) error {
			n++
			return nil
		})
		return last, n, err
	}
	write(1, 5)
	tail := NewFileJournal(m, dirs[0])
	if last, n, err := read(tail, 0); err != nil || last != 5 || n != 5 {
		t.Fatalf("first read: last %d, %d records, %v", last, n, err)
	}
	f, err := m.OpenReadWrite(filepath.Join(dirs[0], InProgressName(1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(SegmentHeaderSize+20, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{0xde, 0xad, 0xbe, 0xef}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	write(6, 8)
	if last, n, err := read(tail, 5); err != nil || last != 8 || n != 3 {
		t.Fatalf("second read: last %d, %d records, %v (want 6..8 from where the first stopped)", last, n, err)
	}
	if last, n, err := read(tail, 8); err != nil || last != 8 || n != 0 {
		t.Fatalf("read with nothing new: last %d, %d records, %v", last, n, err)
	}
	if _, _, err := read(NewFileJournal(m, dirs[0]), 5); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a reader without the resume point: %v, want the damage found", err)
	}
	// A resume point that is not where the read starts is not used: the
	// first copy's records are decoded (here, found damaged) and skipped.
	if _, _, err := read(tail, 6); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read from 6 with the resume point at 8: %v, want the damage found", err)
	}
}

// BenchmarkTailInProgress: one poll of a standby tailing an in-progress
// segment of 100,000 records that holds nothing new, going on from its
// last read (resumed) or decoding the segment from its start (a journal
// without a resume point, as every poll did before).
func BenchmarkTailInProgress(b *testing.B) {
	ctx := context.Background()
	m := vfs.NewMem()
	if err := m.MkdirAll("/e", 0o755); err != nil {
		b.Fatal(err)
	}
	w := NewFileJournal(m, "/e")
	if err := w.StartSegment(ctx, 1); err != nil {
		b.Fatal(err)
	}
	const n = 100_000
	var buf []byte
	for tx := int64(1); tx <= n; tx++ {
		var o op.Op = mkdir(int(tx))
		if tx == 1 {
			o = &op.StartLogSegment{}
		}
		var err error
		if buf, err = EncodeRecord(buf, tx, o); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Write(ctx, buf, 1, n); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	poll := func(b *testing.B, j Journal, from int64) {
		if last, err := ReadOps(ctx, []Journal{j}, ReadOptions{From: from, InProgress: true}, func(int64, op.Op) error { return nil }); err != nil || last != n {
			b.Fatalf("poll: %d, %v", last, err)
		}
	}
	b.Run("resumed", func(b *testing.B) {
		j := NewFileJournal(m, "/e")
		poll(b, j, 0)
		for range b.N {
			poll(b, j, n)
		}
	})
	b.Run("from-start", func(b *testing.B) {
		for range b.N {
			poll(b, NewFileJournal(m, "/e"), n)
		}
	})
}
