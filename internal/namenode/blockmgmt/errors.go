package blockmgmt

import "errors"

// Errors returned by the Manager. The RPC edge maps them to Java exceptions.
var (
	// ErrUnregistered: the DataNode is unknown or was declared dead; the caller
	// answers DNA_REGISTER (or UnregisteredNodeException for reports).
	ErrUnregistered = errors.New("blockmgmt: datanode not registered")
	// ErrUnknownBlock: the block id is not in the blocks map.
	ErrUnknownBlock = errors.New("blockmgmt: unknown block")
	// ErrBlockExists: AddBlock of an id that already belongs to another file.
	ErrBlockExists = errors.New("blockmgmt: block already exists")
	// ErrBadState: the block is not in a state that allows the operation.
	ErrBadState = errors.New("blockmgmt: block in wrong state")
	// ErrGenStamp: a generation stamp older than the NameNode's.
	ErrGenStamp = errors.New("blockmgmt: stale generation stamp")
	// ErrNotEnoughTargets: fewer DataNodes than dfs.namenode.replication.min
	// can take a new block (Hadoop: "could only be written to N of the M
	// minReplication nodes").
	ErrNotEnoughTargets = errors.New("blockmgmt: not enough datanodes for the block")
	// ErrBytesInFuture: leaving safe mode would delete replicas whose generation
	// stamps are in the future; use the force flag.
	ErrBytesInFuture = errors.New("blockmgmt: blocks with generation stamps in the future")
	// ErrDisallowed: the host files do not let this DataNode in (not in a
	// non-empty dfs.hosts); the caller answers DisallowedDatanodeException.
	ErrDisallowed = errors.New("blockmgmt: datanode denied communication with namenode")
	// ErrReportInProgress: a full block report was started while another
	// one is being processed (StartFullReport); the caller serializes them.
	ErrReportInProgress = errors.New("blockmgmt: another full block report is in progress")
	// ErrBadConfig: Config.Validate refused a value.
	ErrBadConfig = errors.New("blockmgmt: bad config")
)

// DisallowedError is ErrDisallowed for one node, named by its transfer
// address.
type DisallowedError struct{ Addr string }

func (e *DisallowedError) Error() string {
	return ErrDisallowed.Error() + " because the host is not in the include-list: " + e.Addr
}

func (e *DisallowedError) Unwrap() error { return ErrDisallowed }
