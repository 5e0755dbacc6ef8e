package server

import (
	"fmt"
	"io"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

func encode(t testing.TB, first int64, n int) []byte {
	var b []byte
	for i := 0; i < n; i++ {
		var err error
		if b, err = editlog.EncodeRecord(b, first+int64(i), &op.Mkdir{InodeID: uint64(i + 1), Path: fmt.Sprintf("/d%d", i), Mtime: 7}); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func TestCheckBatch(t *testing.T) {
	good := encode(t, 10, 3)
	if offs, err := checkBatch(good, 10, 3); err != nil || len(offs) != 3 || offs[0] != 0 {
		t.Fatalf("a good batch: %v %v", offs, err)
	}
	for name, tc := range map[string]struct {
		b     []byte
		first int64
		n     int
	}{
		"wrong first txid": {good, 11, 3},
		"count too high":   {good, 10, 4},
		"count too low":    {good, 10, 2},
		"zero count":       {good, 10, 0},
		"torn last record": {good[:len(good)-3], 10, 3},
		"bit flipped":      {append(append([]byte(nil), good[:20]...), append([]byte{good[20] ^ 1}, good[21:]...)...), 10, 3},
		"trailing bytes":   {append(append([]byte(nil), good...), 0), 10, 3},
		"empty":            {nil, 10, 1},
	} {
		if _, err := checkBatch(tc.b, tc.first, tc.n); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzJournalBatch: the JournalNode's check of a journal() batch accepts
// exactly the batches whose records decode with the announced txids, and
// allocates in proportion to the bytes received, whatever count and txid
// the writer claims.
func FuzzJournalBatch(f *testing.F) {
	f.Add(encode(f, 1, 1), int64(1), 1)
	f.Add(encode(f, 5, 4), int64(5), 4)
	f.Add(encode(f, 5, 4), int64(5), 1<<30)
	f.Add([]byte{0x03, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff}, int64(1), 1)
	f.Fuzz(func(t *testing.T, b []byte, first int64, n int) {
		var offs []int32
		var err error
		testtool.AllocBound(t, len(b), 64, 256<<10, func() { offs, err = checkBatch(b, first, n) })
		if err != nil {
			return
		}
		if len(offs) != n {
			t.Fatalf("accepted %d records, announced %d", len(offs), n)
		}
		// An accepted batch is what a segment reader reads back.
		seg := append(editlog.AppendSegmentHeader(nil), b...)
		got := 0
		last, _, err := scanRecords(bytesReader(seg), "fuzz", first, -1)
		if err != nil {
			t.Fatalf("an accepted batch does not read back: %v", err)
		}
		got = int(last - first + 1)
		if got != n {
			t.Fatalf("an accepted batch of %d reads back %d records", n, got)
		}
	})
}

func bytesReader(b []byte) *byteReader { return &byteReader{b: b} }

type byteReader struct{ b []byte }

func (r *byteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}
