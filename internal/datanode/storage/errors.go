package storage

import "errors"

// Errors returned by this package, wrapped with the block, file or volume
// involved.
var (
	// ErrReplicaExists: a replica of the block already exists with the same
	// or a newer generation stamp.
	ErrReplicaExists = errors.New("datanode/storage: replica already exists")
	// ErrReplicaNotFound: no replica of the block is in the block pool.
	ErrReplicaNotFound = errors.New("datanode/storage: replica not found")
	// ErrWrongState: the replica is not in a state that allows the operation.
	ErrWrongState = errors.New("datanode/storage: replica in wrong state")
	// ErrGenStamp: a generation stamp does not match what the operation needs.
	ErrGenStamp = errors.New("datanode/storage: generation stamp mismatch")
	// ErrLength: a length does not match the replica's.
	ErrLength = errors.New("datanode/storage: replica length mismatch")
	// ErrGap: a packet starts beyond the bytes the replica has on disk.
	ErrGap = errors.New("datanode/storage: packet leaves a gap in the replica")
	// ErrWriterStopped: the replica's writer was stopped (finalized, closed,
	// invalidated or taken over by recovery).
	ErrWriterStopped = errors.New("datanode/storage: replica writer stopped")
	// ErrBadMeta: a meta file's header or length is invalid.
	ErrBadMeta = errors.New("datanode/storage: invalid meta file")
	// ErrOutOfSpace: no volume has room for the replica.
	ErrOutOfSpace = errors.New("datanode/storage: out of space on all volumes")
	// ErrUnknownPool: the block pool was not added to the dataset.
	ErrUnknownPool = errors.New("datanode/storage: unknown block pool")
	// ErrBadVolume: a volume's VERSION or block-pool VERSION does not fit.
	ErrBadVolume = errors.New("datanode/storage: invalid volume")
	// ErrRecoveryInProgress: the replica is already under a recovery with
	// the same or a newer recovery id.
	ErrRecoveryInProgress = errors.New("datanode/storage: replica recovery in progress")
	// ErrCorrupt: a replica's data does not match its checksums (see
	// CorruptError).
	ErrCorrupt = errors.New("datanode/storage: corrupt replica")
	// ErrClosed: the volume or dataset is closed.
	ErrClosed = errors.New("datanode/storage: closed")
)
