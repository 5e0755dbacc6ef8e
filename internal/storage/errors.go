package storage

import "errors"

// Errors returned by this package, wrapped with the file or directory involved.
var (
	// ErrNotEmpty: Format found a directory that already has contents and was
	// not told to overwrite them.
	ErrNotEmpty = errors.New("storage: directory is not empty")
	// ErrLocked: another holder has the directory's in_use.lock.
	ErrLocked = errors.New("storage: directory is already locked")
	// ErrInvalidVersion: a VERSION file is missing a field or has a bad value.
	ErrInvalidVersion = errors.New("storage: invalid VERSION file")
	// ErrInvalidSeenTxID: a seen_txid file does not hold one decimal txid.
	ErrInvalidSeenTxID = errors.New("storage: invalid seen_txid file")
	// ErrInconsistentState: a storage directory holds a combination of
	// current, previous and transition directories that no interrupted
	// upgrade, rollback or finalize leaves.
	ErrInconsistentState = errors.New("storage: inconsistent storage directory")
	// ErrTooLarge: a small metadata file is larger than this package accepts.
	ErrTooLarge = errors.New("storage: file too large")
)
