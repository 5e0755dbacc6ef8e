package storage

import (
	"fmt"
	"path/filepath"
	"sort"
	"sync"
)

// ReplicaState is the state of a replica on a DataNode. The values are
// Hadoop's ReplicaState ids, which block reports carry.
type ReplicaState int

// Replica states (see the package doc for the transitions).
const (
	Finalized ReplicaState = 0 // complete; immutable until appended to
	RBW       ReplicaState = 1 // replica being written by a pipeline
	RWR       ReplicaState = 2 // replica waiting to be recovered: an RBW found at restart
	RUR       ReplicaState = 3 // replica under recovery
	Temporary ReplicaState = 4 // being copied in (replication, balancer); invisible to readers
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
	return fmt.Sprintf("ReplicaState(%d)", int(s))
}

// Block identifies a block of a block pool: id, generation stamp and length
// (ExtendedBlockProto without the pool id).
type Block struct {
	ID       int64
	GenStamp int64
	NumBytes int64
}

func (b Block) String() string { return fmt.Sprintf("blk_%d_%d", b.ID, b.GenStamp) }

// Replica is a snapshot of one replica, as listed in block reports.
type Replica struct {
	Block      // NumBytes: the length (finalized), bytes on disk (RBW, TEMPORARY) or validated length (RWR, RUR)
	State      ReplicaState
	BytesAcked int64  // RBW: bytes acknowledged downstream, the length visible to readers
	StorageID  string // the volume's storage id
	VolumeDir  string
	BlockPath  string
	MetaPath   string
	// RUR only: the recovery id (the new generation stamp the recovery will
	// give the replica) and the state the replica had before recovery.
	RecoveryID    int64
	OriginalState ReplicaState

	volume *Volume // for the directory scanner
}

// replica is the live record of a replica. Its fields are guarded by the
// ReplicaMap's mutex; writer, once set, is only replaced under that mutex.
type replica struct {
	id, gs     int64
	state      ReplicaState
	vol        *Volume
	dir        string // directory holding the block and meta files
	numBytes   int64
	bytesAcked int64
	reserved   int64 // space reserved on vol for a writer
	writer     *ReplicaWriter
	recoveryID int64        // RUR
	original   ReplicaState // RUR: state before recovery
}

func (r *replica) blockPath() string { return filepath.Join(r.dir, BlockFileName(r.id)) }
func (r *replica) metaPath() string  { return filepath.Join(r.dir, MetaFileName(r.id, r.gs)) }

func (r *replica) snapshot() Replica {
	rep := Replica{
		Block:      Block{ID: r.id, GenStamp: r.gs, NumBytes: r.numBytes},
		State:      r.state,
		BytesAcked: r.bytesAcked,
		BlockPath:  r.blockPath(),
		MetaPath:   r.metaPath(),
	}
	if r.state == RUR {
		rep.RecoveryID, rep.OriginalState = r.recoveryID, r.original
	}
	if r.vol != nil {
		rep.StorageID = r.vol.StorageID()
		rep.VolumeDir = r.vol.Dir()
		rep.volume = r.vol
	}
	return rep
}

// ReplicaMap holds the replicas of one block pool, keyed by block id. It is
// safe for concurrent use; one mutex guards the map and every replica in it.
type ReplicaMap struct {
	mu struct {
		sync.Mutex
		m map[int64]*replica
	}
}

func newReplicaMap() *ReplicaMap {
	rm := &ReplicaMap{}
	rm.mu.m = make(map[int64]*replica)
	return rm
}

// Get returns a snapshot of the replica of block id.
func (rm *ReplicaMap) Get(id int64) (Replica, bool) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	r, ok := rm.mu.m[id]
	if !ok {
		return Replica{}, false
	}
	return r.snapshot(), true
}

// Len returns the number of replicas.
func (rm *ReplicaMap) Len() int {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return len(rm.mu.m)
}

// List returns snapshots of every replica, sorted by block id: the material
// of a full block report.
func (rm *ReplicaMap) List() []Replica {
	rm.mu.Lock()
	out := make([]Replica, 0, len(rm.mu.m))
	for _, r := range rm.mu.m {
		out = append(out, r.snapshot())
	}
	rm.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// countOn returns the number of replicas on v.
func (rm *ReplicaMap) countOn(v *Volume) int {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	n := 0
	for _, r := range rm.mu.m {
		if r.vol == v {
			n++
		}
	}
	return n
}
