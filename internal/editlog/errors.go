package editlog

import (
	"errors"
	"fmt"
)

// Errors of the edit log. Typed errors below wrap (Unwrap) the matching sentinel.
var (
	// ErrTornRecord: the last record of a segment is incomplete (a crash cut
	// the write short). Matched by *TornRecordError.
	ErrTornRecord = errors.New("editlog: torn record at end of segment")
	// ErrCorrupt: a record or segment header is damaged where data follows, or
	// a record cannot be decoded. Matched by *CorruptionError.
	ErrCorrupt = errors.New("editlog: corrupt edit log")
	// ErrGap: transactions are missing from every journal. Matched by *GapError.
	ErrGap = errors.New("editlog: gap in edit log")
	// ErrNoJournals: fewer journals than the configured minimum accept writes;
	// the log has failed and acknowledges nothing more.
	ErrNoJournals = errors.New("editlog: too few journals left")
	// ErrState: the call is not allowed in the log's current state.
	ErrState = errors.New("editlog: call not allowed in this state")
	// ErrNotFound: no segment holds the requested transaction.
	ErrNotFound = errors.New("editlog: no such segment")
	// ErrRecordTooLarge: an op encodes to a body over MaxRecordBody. It is
	// refused before anything is logged; the caller answers its client with it.
	ErrRecordTooLarge = errors.New("editlog: edit record too large")
)

// TornRecordError locates a torn final record: everything from Offset to the
// end of File is an incomplete write and may be cut off.
type TornRecordError struct {
	File   string
	Offset int64
	// ZeroFill: everything from Offset to the end is zero bytes, nothing
	// was cut short (the unfilled preallocated space of a segment being
	// written, or space the file system extended but never filled).
	ZeroFill bool
}

func (e *TornRecordError) Error() string {
	return fmt.Sprintf("editlog: torn record at end of %s at offset %d", e.File, e.Offset)
}

// Unwrap returns ErrTornRecord.
func (e *TornRecordError) Unwrap() error { return ErrTornRecord }

// CorruptionError locates damage that is not a torn tail.
type CorruptionError struct {
	File   string
	Offset int64 // offset of the record (or header) that is bad
	Reason string
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("editlog: corrupt edit log %s at offset %d: %s", e.File, e.Offset, e.Reason)
}

// Unwrap returns ErrCorrupt.
func (e *CorruptionError) Unwrap() error { return ErrCorrupt }

// GapError reports transactions From..To (inclusive) that no journal holds.
type GapError struct {
	From, To int64
}

func (e *GapError) Error() string {
	return fmt.Sprintf("editlog: gap in edit log: missing transactions %d-%d", e.From, e.To)
}

// Unwrap returns ErrGap.
func (e *GapError) Unwrap() error { return ErrGap }
