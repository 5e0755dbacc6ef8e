package recovery

import (
	"errors"
	"fmt"

	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
)

// Errors of the recovery decisions.
var (
	// ErrAllFailed: initReplicaRecovery failed on every location.
	ErrAllFailed = errors.New("recovery: all datanodes failed")
	// ErrNoUsableReplica: replicas were found, but none was FINALIZED, RBW or
	// RWR before recovery.
	ErrNoUsableReplica = errors.New("recovery: no replica in RWR or better state")
	// ErrFinalizedMismatch: FINALIZED replicas of different lengths.
	ErrFinalizedMismatch = errors.New("recovery: inconsistent size of finalized replicas")
	// ErrTruncateTooShort: no participant is as long as the truncate length.
	ErrTruncateTooShort = errors.New("recovery: no replica as long as the truncate length")
	// ErrAllUpdatesFailed: updateReplicaUnderRecovery failed on every participant.
	ErrAllUpdatesFailed = errors.New("recovery: cannot recover block, every participant failed")
	// ErrStaleReplica: the replica's generation stamp is older than the block's.
	ErrStaleReplica = errors.New("recovery: replica generation stamp older than the block's")
	// ErrNotBelowRecoveryID: the replica's generation stamp is not below the
	// recovery id (the NameNode hands out recovery ids above every stamp).
	ErrNotBelowRecoveryID = errors.New("recovery: replica generation stamp not below the recovery id")
	// ErrRecoveryInProgress: the replica is under a recovery with the same or
	// a newer id.
	ErrRecoveryInProgress = errors.New("recovery: replica recovery in progress")
	// ErrNotUnderRecovery: an update for a replica that is not RUR.
	ErrNotUnderRecovery = errors.New("recovery: replica is not under recovery")
	// ErrRecoveryIDMismatch: an update under another recovery id than the
	// replica's (a straggler of an older recovery, or a newer one took over).
	ErrRecoveryIDMismatch = errors.New("recovery: recovery id does not match the replica's")
	// ErrBackInTime: an update that would move the replica back in time: an
	// older generation stamp, or the same one with a different length.
	ErrBackInTime = errors.New("recovery: update would move the replica back in time")
	// ErrGrow: an update to a length beyond the replica's.
	ErrGrow = errors.New("recovery: update longer than the replica")
	// ErrBadLength: a negative length.
	ErrBadLength = errors.New("recovery: negative length")
)

// Block is the block a DNA_RECOVERBLOCK command names (RecoveringBlock).
type Block struct {
	ID       int64
	GenStamp int64 // the NameNode's stamp of the block before recovery
	NumBytes int64 // the NameNode's length (informational)
	// RecoveryID is the new generation stamp the recovery gives the replicas.
	RecoveryID int64
	// Truncate: a truncate recovery; the replicas are cut to NewLength.
	Truncate  bool
	NewLength int64
	// NewBlockID is the id of the block a copy-on-truncate recovery creates
	// (0, or ID, for an in-place recovery).
	NewBlockID int64
}

// CopyOnTruncate reports whether the recovery writes a new block.
func (b Block) CopyOnTruncate() bool {
	return b.Truncate && b.NewBlockID != 0 && b.NewBlockID != b.ID
}

// ReplicaInfo is what initReplicaRecovery reports of a replica
// (ReplicaRecoveryInfo; from storage.RecoveryInfo: State is OriginalState,
// Length is NumBytes).
type ReplicaInfo struct {
	Node     int                  // which location answered
	State    storage.ReplicaState // the state before it became RUR
	Length   int64
	GenStamp int64
}

// Outcome is how one initReplicaRecovery call ended.
type Outcome uint8

// Outcomes.
const (
	Replied    Outcome = iota // the location has a replica, described by the answer
	NoReplica                 // the location has no replica of the block
	CallFailed                // the call failed (network, disk, a stale stamp)
	InProgress                // ErrRecoveryInProgress: a newer or equal recovery runs there
)

func (o Outcome) String() string {
	switch o {
	case Replied:
		return "replied"
	case NoReplica:
		return "no-replica"
	case CallFailed:
		return "failed"
	case InProgress:
		return "in-progress"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Answer is one location's answer to initReplicaRecovery.
type Answer struct {
	Outcome
	ReplicaInfo // Node is always set; the rest only for Replied
}

// Action is what the primary does after Decide.
type Action uint8

// Actions.
const (
	// PlanUpdate: update the participants, then commit what succeeded.
	PlanUpdate Action = iota + 1
	// PlanDelete: no location has data; commit length 0 with deleteBlock set
	// and no nodes (the NameNode removes the block and closes the file).
	PlanDelete
	// PlanAbort: another recovery of the block runs on some location; do
	// nothing, the NameNode retries when its recovery times out.
	PlanAbort
)

func (a Action) String() string {
	switch a {
	case PlanUpdate:
		return "update"
	case PlanDelete:
		return "delete"
	case PlanAbort:
		return "abort"
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// Plan is the primary's decision for one block.
type Plan struct {
	Action Action
	// Block is the block as the command named it.
	Block Block
	// BlockID is the id the updated replicas get (updateReplicaUnderRecovery's
	// newBlockId): NewBlockID for copy-on-truncate, else Block.ID.
	BlockID int64
	// NewGenStamp is the recovery id, the replicas' new stamp.
	NewGenStamp int64
	NewLength   int64
	// BestState is the best state before recovery among the usable replicas.
	BestState storage.ReplicaState
	// Participants are the nodes to update, in answer order.
	Participants []int
}

// Commit is the commitBlockSynchronization call that ends a recovery.
type Commit struct {
	// BlockID and GenStamp name the block as the NameNode sent it.
	BlockID     int64
	GenStamp    int64
	NewGenStamp int64
	NewLength   int64
	CloseFile   bool
	DeleteBlock bool
	Nodes       []int // the nodes whose replicas were updated
}

// Decide chooses, from every location's answer to initReplicaRecovery, the
// new length and the replicas to keep (see the tables in the package doc).
func Decide(b Block, answers []Answer) (Plan, error) {
	failed := 0
	var usable []ReplicaInfo
	candidates := 0
	for _, a := range answers {
		switch a.Outcome {
		case InProgress:
			return Plan{Action: PlanAbort}, nil
		case NoReplica:
			continue
		case Replied:
		default: // CallFailed, or an outcome this code does not know
			failed++
			continue
		}
		r := a.ReplicaInfo
		if r.GenStamp < b.GenStamp || r.GenStamp >= b.RecoveryID || r.Length <= 0 {
			continue
		}
		candidates++
		switch r.State {
		case storage.Finalized, storage.RBW, storage.RWR:
			usable = append(usable, r)
		}
	}
	if failed == len(answers) {
		return Plan{}, fmt.Errorf("%w: block blk_%d_%d, %d locations", ErrAllFailed, b.ID, b.GenStamp, len(answers))
	}
	if candidates > 0 && len(usable) == 0 {
		return Plan{}, fmt.Errorf("%w: block blk_%d_%d, %d replicas found", ErrNoUsableReplica, b.ID, b.GenStamp, candidates)
	}
	id := b.ID
	if b.CopyOnTruncate() {
		id = b.NewBlockID
	}
	p := Plan{Block: b, BlockID: id, NewGenStamp: b.RecoveryID}
	if len(usable) == 0 {
		p.Action = PlanDelete
		return p, nil
	}
	p.Action = PlanUpdate

	best := storage.RWR
	finalized := int64(-1)
	for _, r := range usable {
		if r.State < best {
			best = r.State
		}
		if r.State == storage.Finalized {
			if finalized >= 0 && finalized != r.Length {
				return Plan{}, fmt.Errorf("%w: block blk_%d_%d: %d and %d bytes", ErrFinalizedMismatch, b.ID, b.GenStamp, finalized, r.Length)
			}
			finalized = r.Length
		}
	}
	p.BestState = best
	var kept []ReplicaInfo
	if best == storage.Finalized {
		p.NewLength = finalized
		for _, r := range usable {
			if r.State == storage.Finalized || r.State == storage.RBW && r.Length == finalized {
				kept = append(kept, r)
			}
		}
	} else {
		p.NewLength = -1
		for _, r := range usable {
			if r.State != best {
				continue
			}
			if p.NewLength < 0 || r.Length < p.NewLength {
				p.NewLength = r.Length
			}
			kept = append(kept, r)
		}
	}
	if b.Truncate {
		if b.NewLength < 0 {
			return Plan{}, fmt.Errorf("%w: truncate blk_%d_%d to %d", ErrBadLength, b.ID, b.GenStamp, b.NewLength)
		}
		p.NewLength = b.NewLength
		long := kept[:0]
		for _, r := range kept {
			if r.Length >= b.NewLength {
				long = append(long, r)
			}
		}
		if kept = long; len(kept) == 0 {
			return Plan{}, fmt.Errorf("%w: truncate blk_%d_%d to %d", ErrTruncateTooShort, b.ID, b.GenStamp, b.NewLength)
		}
	}
	for _, r := range kept {
		p.Participants = append(p.Participants, r.Node)
	}
	return p, nil
}

// Commit builds the commitBlockSynchronization call once the participants
// were updated; updated are the nodes whose update succeeded. A PlanUpdate
// with no success is ErrAllUpdatesFailed; a PlanAbort has nothing to commit.
func (p Plan) Commit(updated []int) (Commit, error) {
	c := Commit{BlockID: p.Block.ID, GenStamp: p.Block.GenStamp, NewGenStamp: p.NewGenStamp, CloseFile: true}
	switch p.Action {
	case PlanDelete:
		c.DeleteBlock = true
		return c, nil
	case PlanUpdate:
		if len(updated) == 0 {
			return Commit{}, fmt.Errorf("%w: blk_%d_%d, participants %v", ErrAllUpdatesFailed, p.Block.ID, p.Block.GenStamp, p.Participants)
		}
		c.NewLength, c.Nodes = p.NewLength, updated
		return c, nil
	}
	return Commit{}, fmt.Errorf("recovery: plan %v has nothing to commit", p.Action)
}

// Current describes a replica as a participant holds it.
type Current struct {
	State      storage.ReplicaState
	Length     int64 // bytes on disk
	GenStamp   int64
	RecoveryID int64 // the recovery it is under (RUR only)
}

// CheckInit says whether initReplicaRecovery(block stamp blockGS, recoveryID)
// may take cur under recovery (see "Per-replica rules" in the package doc).
func CheckInit(cur Current, blockGS, recoveryID int64) error {
	switch {
	case cur.GenStamp < blockGS:
		return fmt.Errorf("%w: replica %d, block %d", ErrStaleReplica, cur.GenStamp, blockGS)
	case cur.GenStamp >= recoveryID:
		return fmt.Errorf("%w: replica %d, recovery id %d", ErrNotBelowRecoveryID, cur.GenStamp, recoveryID)
	case cur.State == storage.RUR && cur.RecoveryID >= recoveryID:
		return fmt.Errorf("%w: under %d, asked for %d", ErrRecoveryInProgress, cur.RecoveryID, recoveryID)
	}
	return nil
}

// CheckUpdate says whether updateReplicaUnderRecovery(recoveryID, newGS,
// newLength) may be applied to cur (see "Per-replica rules" in the package
// doc). A nil error with cur already at (newGS, newLength) means the update
// was applied before: nothing to do.
func CheckUpdate(cur Current, recoveryID, newGS, newLength int64, copyOnTruncate bool) error {
	switch {
	case newLength < 0:
		return fmt.Errorf("%w: %d", ErrBadLength, newLength)
	case newGS < cur.GenStamp:
		return fmt.Errorf("%w: stamp %d, replica has %d", ErrBackInTime, newGS, cur.GenStamp)
	case newGS == cur.GenStamp && newLength != cur.Length:
		return fmt.Errorf("%w: stamp %d with %d bytes, replica has %d", ErrBackInTime, newGS, newLength, cur.Length)
	case newGS == cur.GenStamp:
		return nil // already applied
	case cur.State != storage.RUR:
		return fmt.Errorf("%w: replica is %v", ErrNotUnderRecovery, cur.State)
	case cur.RecoveryID != recoveryID:
		return fmt.Errorf("%w: update under %d, replica under %d", ErrRecoveryIDMismatch, recoveryID, cur.RecoveryID)
	case !copyOnTruncate && newLength > cur.Length:
		return fmt.Errorf("%w: %d bytes, replica has %d", ErrGrow, newLength, cur.Length)
	}
	return nil
}
