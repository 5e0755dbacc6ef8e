package quorum

import (
	"fmt"
	"sort"
)

// SegmentState is a segment as a JournalNode holds it: its first and last
// txid and whether it is still in progress (SegmentStateProto).
type SegmentState struct {
	Start, End int64
	InProgress bool
}

func (s SegmentState) String() string {
	if s.InProgress {
		return fmt.Sprintf("%d-%d in progress", s.Start, s.End)
	}
	return fmt.Sprintf("%d-%d", s.Start, s.End)
}

// contains reports whether txid lies in the segment.
func (s SegmentState) contains(txid int64) bool { return txid >= s.Start && txid <= s.End }

// Accepted is a recovery a JournalNode accepted and persisted
// (paxos/<segment>, PersistedRecoveryPaxosData).
type Accepted struct {
	Segment SegmentState
	Epoch   uint64
}

// PrepareResponse is a JournalNode's answer to prepareRecovery.
type PrepareResponse struct {
	// Segment is the segment the node holds (or accepted), nil if none.
	Segment *SegmentState
	// AcceptedInEpoch is the epoch of a recovery the node accepted for
	// this segment (HasAccepted).
	AcceptedInEpoch uint64
	HasAccepted     bool
	// LastWriterEpoch is the epoch of the last writer that started a
	// segment on the node.
	LastWriterEpoch uint64
	// LastCommittedTxID is the highest committed txid the node heard of
	// (HasCommitted).
	LastCommittedTxID int64
	HasCommitted      bool
}

func (r PrepareResponse) String() string {
	s := "no segment"
	if r.Segment != nil {
		s = "segment " + r.Segment.String()
	}
	if r.HasAccepted {
		s += fmt.Sprintf(" accepted in epoch %d", r.AcceptedInEpoch)
	}
	s += fmt.Sprintf(" lastWriterEpoch %d", r.LastWriterEpoch)
	if r.HasCommitted {
		s += fmt.Sprintf(" committed %d", r.LastCommittedTxID)
	}
	return s
}

// PrepareAnswer is what a JournalNode answers to prepareRecovery:
// a recovery it accepted earlier wins over what its disk holds, unless the
// disk holds the segment finalized (a finalized segment is a decision).
// seg is the segment on disk (nil if none, or empty), prev the persisted
// accepted recovery (nil if none).
func PrepareAnswer(prev *Accepted, seg *SegmentState, lastWriter uint64, committed int64) PrepareResponse {
	r := PrepareResponse{LastWriterEpoch: lastWriter}
	if prev != nil && (seg == nil || seg.InProgress) {
		s := prev.Segment
		r.Segment, r.AcceptedInEpoch, r.HasAccepted = &s, prev.Epoch, true
	} else if seg != nil {
		s := *seg
		r.Segment = &s
	}
	if committed > 0 {
		r.LastCommittedTxID, r.HasCommitted = committed, true
	}
	return r
}

// Compare orders two answers to prepareRecovery for the same segment as
// HDFS's SegmentRecoveryComparator does: having the segment beats not
// having it; finalized beats in progress (two finalized copies must agree
// on their end); among in-progress copies the higher of (accepted epoch,
// last writer epoch) wins, then the longer one. It returns -1, 0 or 1, and
// an error when the answers cannot be compared (different first txids,
// finalized copies of different lengths).
func Compare(a, b PrepareResponse) (int, error) {
	if (a.Segment != nil) != (b.Segment != nil) {
		if a.Segment != nil {
			return 1, nil
		}
		return -1, nil
	}
	if a.Segment == nil {
		return 0, nil
	}
	sa, sb := *a.Segment, *b.Segment
	if sa.Start != sb.Start {
		return 0, refuse(KindIllegalArgument, "Should only be called with responses for corresponding segments: %v and %v do not have the same start txid.", a, b)
	}
	if sa.InProgress != sb.InProgress {
		if !sa.InProgress {
			return 1, nil
		}
		return -1, nil
	}
	if !sa.InProgress {
		if sa.End != sb.End {
			return 0, refuse(KindAssertion, "finalized segs with different lengths: %v, %v", a, b)
		}
		return 0, nil
	}
	ea := max(a.AcceptedInEpoch, a.LastWriterEpoch)
	eb := max(b.AcceptedInEpoch, b.LastWriterEpoch)
	switch {
	case ea != eb:
		return cmp64(int64(ea), int64(eb)), nil
	default:
		return cmp64(sa.End, sb.End), nil
	}
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ChooseRecovery picks, among the answers of a quorum to prepareRecovery,
// the copy every node must end up with: the greatest by Compare (the first
// such on ties). It returns -1 when no node holds the segment (the writer
// died before a majority had it: nothing to recover). It refuses a choice
// that ends before a txid some node heard was committed: that would lose
// an acknowledged transaction.
func ChooseRecovery(rs []PrepareResponse) (int, error) {
	best := -1
	for i := range rs {
		if best < 0 {
			if rs[i].Segment != nil {
				best = i
			}
			continue
		}
		c, err := Compare(rs[i], rs[best])
		if err != nil {
			return -1, err
		}
		if c > 0 {
			best = i
		}
	}
	if best < 0 {
		return -1, nil
	}
	end := rs[best].Segment.End
	for _, r := range rs {
		if r.HasCommitted && r.LastCommittedTxID > end {
			return -1, refuse(KindAssertion, "Decided to synchronize log to %v but a logger had seen txid %d committed",
				*rs[best].Segment, r.LastCommittedTxID)
		}
	}
	return best, nil
}

// PlanAccept decides what a JournalNode does with acceptRecovery(proposed)
// given the segment on its disk (nil if none), the recovery it accepted
// before (nil if none), its committed txid and the caller's epoch: whether
// it must fetch the proposed copy (sync), or refuse. The decision itself is
// persisted by the caller before it answers.
func PlanAccept(current *SegmentState, proposed SegmentState, prev *Accepted, committed int64, epoch uint64, jid string) (sync bool, err error) {
	if proposed.End <= 0 || proposed.End < proposed.Start {
		return false, refuse(KindIllegalArgument, "bad recovery state for segment %d: %v ; journal id: %s", proposed.Start, proposed, jid)
	}
	if prev != nil && prev.Epoch > epoch {
		return false, refuse(KindAssertion, "Bad paxos transition, out-of-order epochs. Old: %v in epoch %d New: %v in epoch %d JournalId: %s",
			prev.Segment, prev.Epoch, proposed, epoch, jid)
	}
	if current != nil && current.End == proposed.End {
		return false, nil
	}
	if current != nil {
		if committed > 0 && current.contains(committed) && !proposed.contains(committed) {
			return false, refuse(KindAssertion, "Cannot replace segment %v with new segment %v: would discard already-committed txn %d ; journal id: %s",
				*current, proposed, committed, jid)
		}
		if !current.InProgress {
			return false, refuse(KindAssertion, "Should never be asked to synchronize a different log on top of an already-finalized segment ; journal id: %s", jid)
		}
	}
	return true, nil
}

// Merged is one segment of the union of several manifests, with the
// indexes of the nodes holding it.
type Merged struct {
	Segment SegmentState
	Holders []int
}

// Union merges the manifests of several nodes (manifests[i] is node i's
// segments) into what a reader sees: every finalized segment with the
// nodes holding it, sorted by first txid, then the newest in-progress
// segment — the one that starts after every finalized segment — with the
// nodes holding it (a node's in-progress segment inside a finalized range
// is a leftover of a writer that died there, settled by recovery since).
// An in-progress segment's End is the highest End reported for it.
func Union(manifests [][]SegmentState) []Merged {
	type key struct {
		start, end int64
		inProgress bool
	}
	fin := map[key][]int{}
	var lastFinal int64
	for i, m := range manifests {
		for _, s := range m {
			if s.InProgress {
				continue
			}
			k := key{s.Start, s.End, false}
			fin[k] = append(fin[k], i)
			lastFinal = max(lastFinal, s.End)
		}
	}
	var out []Merged
	for k, holders := range fin {
		out = append(out, Merged{Segment: SegmentState{Start: k.start, End: k.end}, Holders: holders})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Segment.Start != out[b].Segment.Start {
			return out[a].Segment.Start < out[b].Segment.Start
		}
		return out[a].Segment.End > out[b].Segment.End
	})
	var ip *Merged
	for i, m := range manifests {
		for _, s := range m {
			if !s.InProgress || s.Start <= lastFinal {
				continue
			}
			switch {
			case ip == nil || s.Start > ip.Segment.Start:
				ip = &Merged{Segment: s, Holders: []int{i}}
			case s.Start == ip.Segment.Start:
				ip.Holders = append(ip.Holders, i)
				ip.Segment.End = max(ip.Segment.End, s.End)
			}
		}
	}
	if ip != nil {
		out = append(out, *ip)
	}
	return out
}
