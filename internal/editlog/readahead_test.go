package editlog

import (
	"errors"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// countingReader returns n records, then err.
type countingReader struct {
	n, i int
	err  error
}

func (r *countingReader) Next() (int64, op.Op, error) {
	if r.i >= r.n {
		return 0, nil, r.err
	}
	r.i++
	return int64(r.i), &op.Mkdir{Path: "/d"}, nil
}

func (r *countingReader) Close() error { return nil }

// TestReadAhead: records come in order across batch boundaries, followed by
// the reader's own error; closing early stops the goroutine.
func TestReadAhead(t *testing.T) {
	bad := errors.New("bad record")
	for _, n := range []int{0, 1, readAheadBatch - 1, readAheadBatch, 3*readAheadBatch + 7} {
		ra := newReadAhead(&countingReader{n: n, err: bad})
		for want := int64(1); want <= int64(n); want++ {
			txid, o, err := ra.Next()
			if err != nil || txid != want || o == nil {
				t.Fatalf("n=%d: record %d: got txid %d, op %v, err %v", n, want, txid, o, err)
			}
		}
		if _, _, err := ra.Next(); err != bad {
			t.Fatalf("n=%d: after the records: err %v, want %v", n, err, bad)
		}
		ra.close()
	}
	// Closed after one record while the goroutine is still reading ahead.
	ra := newReadAhead(&countingReader{n: 10 * readAheadBatch * readAheadDepth, err: bad})
	if txid, _, err := ra.Next(); err != nil || txid != 1 {
		t.Fatalf("first record: txid %d, err %v", txid, err)
	}
	ra.close()
}
