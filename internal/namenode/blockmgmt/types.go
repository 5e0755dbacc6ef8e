package blockmgmt

import (
	"strconv"
	"time"
)

// DatanodeID identifies a DataNode (DatanodeIDProto without the proto).
type DatanodeID struct {
	UUID     string
	IPAddr   string
	Hostname string
	XferPort int
	InfoPort int
	IPCPort  int
}

// XferAddr is "ip:xferPort", the address a DataNode is known by.
func (id DatanodeID) XferAddr() string {
	return id.IPAddr + ":" + strconv.Itoa(id.XferPort)
}

// StorageReport is one storage's usage as a heartbeat reports it.
type StorageReport struct {
	StorageID     string
	Capacity      int64
	DfsUsed       int64
	Remaining     int64
	BlockPoolUsed int64
	Failed        bool
	// StorageType is the medium as the DataNode reports it
	// (StorageTypeProto numbering: 1 DISK, 2 SSD, 3 ARCHIVE, ...); passed
	// through to storage reports, 0 when not given.
	StorageType int32
}

// Block is a block id, its length and its generation stamp.
type Block struct {
	ID       int64
	NumBytes int64
	GenStamp int64
}

// ReplicaState is the state of a replica as its DataNode reports it
// (ReplicaStateProto numbering).
type ReplicaState uint8

// Replica states.
const (
	Finalized ReplicaState = 0 // FINALIZED
	RBW       ReplicaState = 1 // being written
	RWR       ReplicaState = 2 // waiting to be recovered
	RUR       ReplicaState = 3 // under recovery
	Temporary ReplicaState = 4 // being copied in
)

func (s ReplicaState) String() string {
	switch s {
	case Finalized:
		return "FINALIZED"
	case RBW:
		return "RBW"
	case RWR:
		return "RWR"
	case RUR:
		return "RUR"
	case Temporary:
		return "TEMPORARY"
	}
	return "ReplicaState(" + strconv.Itoa(int(s)) + ")"
}

// BlockUCState is the NameNode-side state of a block.
type BlockUCState uint8

// Block states; see the package doc.
const (
	Complete BlockUCState = iota
	UnderConstruction
	UnderRecovery
	Committed
)

func (s BlockUCState) String() string {
	switch s {
	case Complete:
		return "COMPLETE"
	case UnderConstruction:
		return "UNDER_CONSTRUCTION"
	case UnderRecovery:
		return "UNDER_RECOVERY"
	case Committed:
		return "COMMITTED"
	}
	return "BlockUCState(" + strconv.Itoa(int(s)) + ")"
}

// BlockInfo is what the manager knows about one block.
type BlockInfo struct {
	Block
	FileID      int64 // inode id of the owning file
	Replication int   // expected replicas
	State       BlockUCState
	Live        int // good FINALIZED replicas on live nodes
	Corrupt     int // replicas known corrupt
	// Deleted: the block's file is gone and the block waits for its
	// removal (MarkDeleted).
	Deleted bool
}

// ReportedReplica is one entry of a full block report.
type ReportedReplica struct {
	Block
	State ReplicaState
}

// ReceivedStatus is the kind of an incremental block report entry
// (ReceivedDeletedBlockInfoProto.BlockStatus numbering).
type ReceivedStatus uint8

// Incremental report statuses.
const (
	Receiving ReceivedStatus = 1 // RECEIVING_BLOCK: an RBW replica was created
	Received  ReceivedStatus = 2 // RECEIVED_BLOCK: a replica was finalized
	Deleted   ReceivedStatus = 3 // DELETED_BLOCK
)

// ReceivedDeleted is one entry of an incremental block report.
type ReceivedDeleted struct {
	Block
	Status ReceivedStatus
	// DeleteHint is the UUID of a node whose replica may be removed now that this
	// one exists (set by the balancer's moves); empty for none.
	DeleteHint string
}

// Command is an order for a DataNode, delivered in a heartbeat reply. The set is
// closed: Transfer, Invalidate, Register, RecoverBlock and BalancerBandwidth.
type Command interface{ command() }

// Transfer (DNA_TRANSFER) asks the node to copy Block to Targets, in pipeline
// order.
type Transfer struct {
	Block   Block
	Targets []DatanodeID
	// StorageIDs and StorageTypes name the storage chosen on each target
	// (parallel to Targets).
	StorageIDs   []string
	StorageTypes []int32
}

// Invalidate (DNA_INVALIDATE) asks the node to delete these replicas.
type Invalidate struct {
	Blocks []Block
}

// Register (DNA_REGISTER) asks the node to register again.
type Register struct{}

// RecoverBlock (DNA_RECOVERBLOCK) makes the node the primary of a block
// recovery: it asks every holder for its replica, agrees a length, brings all
// replicas to NewGenStamp and that length, and reports with
// commitBlockSynchronization. NewLength is -1 except for a truncate recovery.
// NewBlockID is 0 except for a copy-on-truncate: Block is then the block a
// snapshot keeps, which the holders copy (its first NewLength bytes) into a
// new block NewBlockID with stamp NewGenStamp, leaving Block as it is.
type RecoverBlock struct {
	Block       Block
	NewGenStamp int64
	Holders     []DatanodeID
	NewLength   int64
	NewBlockID  int64
}

// BalancerBandwidth (DNA_BALANCERBANDWIDTHUPDATE) sets the node's
// dfs.datanode.balance.bandwidthPerSec, in bytes per second, until it
// restarts (dfsadmin -setBalancerBandwidth).
type BalancerBandwidth struct {
	Bandwidth int64
}

func (BalancerBandwidth) command() {}
func (RecoverBlock) command()      {}
func (Transfer) command()          {}
func (Invalidate) command()        {}
func (Register) command()          {}

// AdminState is a node's administrative state (DatanodeInfoProto.AdminState
// numbering); see admin.go for the transitions.
type AdminState uint8

// Admin states.
const (
	Normal AdminState = iota
	DecommissionInProgress
	Decommissioned
	EnteringMaintenance
	InMaintenance
)

func (s AdminState) String() string {
	switch s {
	case Normal:
		return "NORMAL"
	case DecommissionInProgress:
		return "DECOMMISSION_INPROGRESS"
	case Decommissioned:
		return "DECOMMISSIONED"
	case EnteringMaintenance:
		return "ENTERING_MAINTENANCE"
	case InMaintenance:
		return "IN_MAINTENANCE"
	}
	return "AdminState(" + strconv.Itoa(int(s)) + ")"
}

// OutOfService reports whether the state takes the node's replicas out of
// the live count: decommissioning, decommissioned or in maintenance.
func (s AdminState) OutOfService() bool { return s != Normal }

// maintenance reports whether the state is one of the two maintenance
// states.
func (s AdminState) maintenance() bool { return s == EnteringMaintenance || s == InMaintenance }

// ReportKind selects nodes for DatanodeReport (DatanodeReportTypeProto).
type ReportKind uint8

// Report kinds.
const (
	ReportAll ReportKind = iota + 1
	ReportLive
	ReportDead
	ReportDecommissioning     // DECOMMISSION_INPROGRESS, live or dead
	ReportEnteringMaintenance // ENTERING_MAINTENANCE
	ReportInMaintenance       // IN_MAINTENANCE, live or dead
)

// DatanodeInfo is a snapshot of one DataNode for reports and block locations.
type DatanodeInfo struct {
	ID            DatanodeID
	Location      string // rack path
	Capacity      int64
	DfsUsed       int64
	Remaining     int64
	BlockPoolUsed int64
	NonDfsUsed    int64
	LastUpdate    time.Time
	Xceivers      int
	AdminState    AdminState
	Stale         bool
	Dead          bool
	NumBlocks     int
	// LastBlockReport is when the last full block report arrived (zero:
	// none yet).
	LastBlockReport time.Time
	// MaintenanceExpire is when the node's maintenance ends (zero when it is
	// not in maintenance; far in the future for no expiry).
	MaintenanceExpire time.Time
	// Leaving is the progress of a node being decommissioned or entering
	// maintenance, as the admin monitor last counted it.
	Leaving LeavingStatus
	// Storages are the node's storages as its last heartbeat reported them.
	Storages []StorageReport
}

// LeavingStatus counts, for a node leaving service, the blocks that still
// hold it back (Hadoop's LeavingServiceStatus).
type LeavingStatus struct {
	// UnderReplicated: blocks on the node without enough live replicas
	// elsewhere yet.
	UnderReplicated int
	// OutOfServiceOnly: blocks whose every readable replica is on nodes
	// leaving service (decommissionOnlyReplicas / maintenanceOnlyReplicas).
	OutOfServiceOnly int
	// InOpenFiles: the under-replicated blocks that belong to files still
	// being written.
	InOpenFiles int
}

// LocatedBlock is one block of a getBlockLocations answer. Locations are
// sorted for the reader; StorageIDs is parallel to Locations.
type LocatedBlock struct {
	Block
	Locations  []DatanodeInfo
	StorageIDs []string
	// StorageTypes is the storage type of each location (parallel to
	// Locations; DISK where the storage is not known yet).
	StorageTypes []int32
	// Corrupt: every location holds a corrupt replica.
	Corrupt bool
	// UnderConstruction: the block is not COMPLETE; the locations are the
	// replicas reported so far or, before any, the pipeline targets.
	UnderConstruction bool
}

// Stats are the cluster figures of getFsStats (GetFsStatsResponseProto).
type Stats struct {
	Capacity        int64
	Used            int64
	Remaining       int64
	UnderReplicated int64 // queued for reconstruction, missing blocks excluded
	// HighestPriorityLowRedundancy: blocks queued at the highest priority
	// (one live replica left).
	HighestPriorityLowRedundancy int64
	CorruptBlocks                int64
	MissingBlocks                int64
	MissingReplOneBlocks         int64
	BlocksInFuture               int64 // bytes in replicas with future generation stamps
	PendingDeletion              int64
	PendingReplication           int64
	LiveNodes                    int
	DeadNodes                    int
	StaleNodes                   int
	TotalBlocks                  int64

	// Nodes by admin state (FSNamesystemState's NumDecomLiveDataNodes, ...).
	DecommissioningNodes   int // DECOMMISSION_INPROGRESS, live or dead
	DecomLiveNodes         int // DECOMMISSIONED and live
	DecomDeadNodes         int // DECOMMISSIONED and dead
	EnteringMaintenance    int // ENTERING_MAINTENANCE
	InMaintenanceLiveNodes int // IN_MAINTENANCE and live
	InMaintenanceDeadNodes int // IN_MAINTENANCE and dead
}

// ReportResult summarises what a block report changed.
type ReportResult struct {
	Added       int // new locations recorded
	Removed     int // locations dropped (absent from a full report or deleted)
	Invalidated int // replicas queued for deletion on the reporting node
	Corrupt     int // replicas found corrupt
}
