package lease

import "fmt"

// BlockState is the NameNode's state of a block (Hadoop's BlockUCState).
type BlockState uint8

// Block states. NoBlock stands for "there is no such block" (a file with one
// block has no penultimate block).
const (
	NoBlock           BlockState = iota
	Complete                     // enough FINALIZED replicas reported
	Committed                    // the client is done with it; replicas not reported yet
	UnderConstruction            // being written
	UnderRecovery                // block recovery running
)

func (s BlockState) String() string {
	switch s {
	case NoBlock:
		return "NONE"
	case Complete:
		return "COMPLETE"
	case Committed:
		return "COMMITTED"
	case UnderConstruction:
		return "UNDER_CONSTRUCTION"
	case UnderRecovery:
		return "UNDER_RECOVERY"
	}
	return fmt.Sprintf("BlockState(%d)", uint8(s))
}

// Holder is one expected replica holder of the last block (the pipeline's
// DataNodes, or those that reported a replica).
type Holder struct {
	Stale bool // no heartbeat for dfs.namenode.stale.datanode.interval (30 s)
	Dead  bool // not live; never chosen, never asked
}

// FileState is what DecideRelease needs to know of a file under construction.
type FileState struct {
	NumBlocks int
	// EarlierIncomplete: some block before the penultimate is not COMPLETE.
	EarlierIncomplete bool
	// Penultimate is the state of the block before the last (NoBlock if the
	// file has fewer than two blocks).
	Penultimate BlockState
	// PenultimateMinReplicated: the penultimate block has at least
	// MinReplication FINALIZED replicas (only consulted when it is COMMITTED).
	PenultimateMinReplicated bool
	// Last is the state of the last block (NoBlock if NumBlocks is 0).
	Last BlockState
	// LastFinalized is the number of FINALIZED replicas reported for the last block.
	LastFinalized int
	// MinReplication is dfs.namenode.replication.min (1).
	MinReplication int
	// LastNumBytes is the last block's length as the NameNode knows it.
	LastNumBytes int64
	// Holders are the last block's expected replica holders.
	Holders []Holder
	// PrevPrimary is the index in Holders of the previous recovery's primary,
	// or -1 if there was none.
	PrevPrimary int
	// RecoveryPending: a recovery of the last block is running and has not
	// timed out (RecoveryTracker.Pending).
	RecoveryPending bool
}

// DecisionKind is what to do with a file whose lease is released.
type DecisionKind uint8

// Decisions; see the table in the package doc.
const (
	// CloseFile: every block is COMPLETE; close the file (OP_CLOSE).
	CloseFile DecisionKind = iota + 1
	// CompleteLastAndClose: the COMMITTED last block is minimally replicated;
	// complete it and close the file.
	CompleteLastAndClose
	// RemoveEmptyLastBlockAndClose: the last block never got a byte or a
	// replica (the client died before writing); drop it and close the file.
	RemoveEmptyLastBlockAndClose
	// StartBlockRecovery: allocate a new generation stamp (the recovery id),
	// mark the last block UNDER_RECOVERY, send DNA_RECOVERBLOCK to
	// Holders[Primary] naming Participants, and hand the lease to the NameNode.
	StartBlockRecovery
	// RecoveryInProgress: a recovery already runs; hand the lease to the
	// NameNode (if not yet) and wait for commitBlockSynchronization.
	RecoveryInProgress
	// Wait: nothing can be done yet (COMMITTED blocks waiting to be minimally
	// replicated); keep the lease and try again later.
	Wait
	// Fail: no live holder of the last block; hand the lease to the NameNode,
	// the file stays open until a holder reports and the lease expires again.
	Fail
	// Invalid: the block list breaks the under-construction invariants; keep
	// the lease, report Reason.
	Invalid
)

func (k DecisionKind) String() string {
	switch k {
	case CloseFile:
		return "CloseFile"
	case CompleteLastAndClose:
		return "CompleteLastAndClose"
	case RemoveEmptyLastBlockAndClose:
		return "RemoveEmptyLastBlockAndClose"
	case StartBlockRecovery:
		return "StartBlockRecovery"
	case RecoveryInProgress:
		return "RecoveryInProgress"
	case Wait:
		return "Wait"
	case Fail:
		return "Fail"
	case Invalid:
		return "Invalid"
	}
	return fmt.Sprintf("DecisionKind(%d)", uint8(k))
}

// Decision is DecideRelease's answer.
type Decision struct {
	Kind DecisionKind
	// NewGenStampNeeded: the caller must allocate a new generation stamp, the
	// recovery id (StartBlockRecovery only).
	NewGenStampNeeded bool
	// Primary is the index in FileState.Holders of the DataNode to run the
	// recovery (StartBlockRecovery only; -1 otherwise).
	Primary int
	// Participants are the indexes in FileState.Holders of the DataNodes the
	// primary is to recover (StartBlockRecovery only).
	Participants []int
	// Reason says why for Wait, Fail and Invalid, in words fit for a log line
	// or an exception message.
	Reason string
}

// DecideRelease decides what releasing the lease of file f requires (Hadoop's
// FSNamesystem.internalReleaseLease, as a table: see the package doc).
func DecideRelease(f FileState) Decision {
	none := Decision{Primary: -1}
	if f.NumBlocks <= 0 {
		none.Kind = CloseFile
		return none
	}
	if f.EarlierIncomplete || f.Penultimate == UnderConstruction || f.Penultimate == UnderRecovery {
		none.Kind = Invalid
		none.Reason = fmt.Sprintf("unexpected block states: only the last block may be under construction, penultimate is %v", f.Penultimate)
		if f.EarlierIncomplete {
			none.Reason = "unexpected block states: a block before the penultimate is not COMPLETE"
		}
		return none
	}
	penultimateOK := f.Penultimate == NoBlock || f.Penultimate == Complete || f.PenultimateMinReplicated
	switch f.Last {
	case Complete:
		if f.Penultimate == Committed {
			none.Kind = Invalid
			none.Reason = "unexpected block states: last block COMPLETE but penultimate COMMITTED"
			return none
		}
		none.Kind = CloseFile
		return none
	case Committed:
		if penultimateOK && f.LastFinalized >= f.MinReplication {
			none.Kind = CompleteLastAndClose
			return none
		}
		none.Kind = Wait
		none.Reason = "committed blocks are waiting to be minimally replicated"
		return none
	case UnderConstruction, UnderRecovery:
		if len(f.Holders) == 0 && f.LastNumBytes == 0 {
			none.Kind = RemoveEmptyLastBlockAndClose
			return none
		}
		if f.RecoveryPending {
			none.Kind = RecoveryInProgress
			return none
		}
		p := choosePrimary(f.Holders, f.PrevPrimary)
		if p < 0 {
			none.Kind = Fail
			none.Reason = fmt.Sprintf("no live DataNode holds the last block (%d expected holders)", len(f.Holders))
			return none
		}
		return Decision{
			Kind:              StartBlockRecovery,
			NewGenStampNeeded: true,
			Primary:           p,
			Participants:      participants(f.Holders),
		}
	}
	none.Kind = Invalid
	none.Reason = fmt.Sprintf("unexpected state %v of the last block", f.Last)
	return none
}

// choosePrimary returns the first holder after prev (wrapping) that is live and
// not stale, else the first that is live, else -1.
func choosePrimary(hs []Holder, prev int) int {
	n := len(hs)
	if n == 0 {
		return -1
	}
	start := 0
	if prev >= 0 {
		start = (prev + 1) % n
	}
	fallback := -1
	for k := range n {
		i := (start + k) % n
		switch {
		case hs[i].Dead:
		case !hs[i].Stale:
			return i
		case fallback < 0:
			fallback = i
		}
	}
	return fallback
}

// participants returns the live non-stale holders if there are at least two,
// else every live holder.
func participants(hs []Holder) []int {
	var fresh, live []int
	for i, h := range hs {
		if h.Dead {
			continue
		}
		live = append(live, i)
		if !h.Stale {
			fresh = append(fresh, i)
		}
	}
	if len(fresh) > 1 {
		return fresh
	}
	return live
}
