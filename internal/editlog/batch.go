package editlog

import (
	"fmt"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// Batches.
//
// A batch is what the Log hands its journals in one Write: records of the
// current layout version, back to back, with consecutive txids, and no
// segment header. The active NameNode sends the same bytes to a Backup Node
// (JournalProtocol's journal call carries firstTxnId, numTxns and the
// records), which decodes them with DecodeBatch before logging and applying
// them.

// MinRecordSize is the size of the smallest record: a header, an empty
// body and the checksum.
const MinRecordSize = RecordHeaderSize + RecordTrailerSize

// DecodeBatch decodes a batch that must hold exactly n records with the
// txids first..first+n-1 and nothing after them. Any other content — a
// count the bytes cannot hold, a record that does not decode or fails its
// checksum, a txid out of sequence, bytes left over — is an error wrapping
// ErrCorrupt that names what was wrong, and nothing is returned. It
// allocates in proportion to len(b), never to n.
func DecodeBatch(b []byte, first int64, n int) ([]op.Op, error) {
	bad := func(off int, format string, args ...any) error {
		return &CorruptionError{File: "batch", Offset: int64(off), Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case n < 1:
		return nil, bad(0, "a batch of %d records", n)
	case first < 1:
		return nil, bad(0, "a batch starting at invalid txid %d", first)
	case n > len(b)/MinRecordSize:
		return nil, bad(0, "%d bytes cannot hold %d records", len(b), n)
	}
	ops := make([]op.Op, 0, n)
	off := 0
	for i := range n {
		if len(b)-off < RecordHeaderSize {
			return nil, bad(off, "record %d of %d is cut short", i+1, n)
		}
		length, reason := checkHeader(b[off : off+RecordHeaderSize])
		if reason != "" {
			return nil, bad(off, "record %d of %d: %s", i+1, n, reason)
		}
		end := off + RecordHeaderSize + length + RecordTrailerSize
		if end > len(b) {
			return nil, bad(off, "record %d of %d is cut short", i+1, n)
		}
		txid, o, _, reason := decodeChecked(b[off:end], LayoutVersion)
		if reason != "" {
			return nil, bad(off, "record %d of %d: %s", i+1, n, reason)
		}
		if want := first + int64(i); txid != want {
			return nil, bad(off, "record %d of %d has txid %d, want %d", i+1, n, txid, want)
		}
		ops = append(ops, o)
		off = end
	}
	if off != len(b) {
		return nil, bad(off, "%d bytes after the last of %d records", len(b)-off, n)
	}
	return ops, nil
}
