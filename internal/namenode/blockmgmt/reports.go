package blockmgmt

import (
	"fmt"
	"math"
	"time"
)

// verdict of a reported replica against the stored block.
type verdict uint8

const (
	vGood    verdict = iota // record the replica
	vIgnore                 // in transition; neither record nor delete
	vCorrupt                // record as corrupt
)

// judge compares a reported replica with the block the NameNode holds
// (BlockManager.checkReplicaCorrupt).
func judge(b *blockInfo, rb Block, state ReplicaState) verdict {
	done := b.state() == Complete || b.state() == Committed
	if state == Finalized {
		if done {
			if rb.GenStamp != b.GenStamp || rb.NumBytes != b.NumBytes {
				return vCorrupt
			}
			return vGood
		}
		if rb.GenStamp < b.GenStamp {
			return vCorrupt
		}
		return vGood
	}
	// RBW, RWR, RUR.
	if !done {
		return vGood
	}
	if rb.GenStamp != b.GenStamp {
		return vCorrupt
	}
	if state == RBW {
		return vIgnore // will be finalized and reported again
	}
	return vCorrupt
}

func (m *Manager) reportingNode(uuid string) (*datanode, error) {
	dn := m.nodes[uuid]
	if dn == nil || dn.dead {
		return nil, fmt.Errorf("%w: %s", ErrUnregistered, uuid)
	}
	return dn, nil
}

// unknownReplica handles a reported replica of a block not in the map.
func (m *Manager) unknownReplica(dn *datanode, rb Block, res *ReportResult) {
	if m.InSafeMode() && m.maxGenStamp > 0 && rb.GenStamp > m.maxGenStamp {
		m.futureBytes[rb.ID] = rb.NumBytes
		return
	}
	if m.queueInvalidate(dn, rb) {
		res.Invalidated++
	}
}

// reported records one replica on st, as a full or incremental report gives it.
// mark flags it as seen by the full report in progress.
func (m *Manager) reported(b *blockInfo, st *storage, rb Block, state ReplicaState, mark bool, res *ReportResult) {
	dn := st.dn
	if _, doomed := dn.invSet[b.ID]; doomed {
		return // already being deleted there
	}
	if !mark && m.touchedByOther(st, b.ID) {
		mark = true
	}
	v := judge(b, rb, state)
	i := m.find(b, st)
	if m.standby {
		m.dropQueued(st, b.ID, rb.GenStamp)
		if v == vCorrupt {
			// A standby's block map lags the DataNodes: what looks corrupt
			// may be explained by edits not read yet (HDFS-6289). It waits
			// in the queue, and is judged as an active would at failover.
			m.postpone(dn, st, rb, state, m.deleteHintFor)
			if i >= 0 && mark {
				m.reps(b)[i].flags |= rMark
			}
			return
		}
	}
	if i < 0 {
		if j := m.findOn(b, dn); j >= 0 { // moved to another volume of the node
			m.removeReplicaAt(b, j)
		}
	}
	if v == vIgnore {
		if i >= 0 && mark {
			m.reps(b)[i].flags |= rMark
		}
		return
	}
	var flags uint8
	if mark {
		flags = rMark
	}
	if i >= 0 {
		r := &m.reps(b)[i]
		r.state = state
		r.flags = r.flags&^rMark | flags
	} else {
		m.addReplica(b, st, state, flags)
		i = len(m.reps(b)) - 1
		if v == vGood {
			res.Added++
		}
	}
	if v == vCorrupt {
		res.Corrupt++
		m.markCorrupt(b, i, rb)
	}
	if b.state() == UnderConstruction || b.state() == UnderRecovery {
		m.noteUC(b.ID, st, rb)
	} else {
		m.dropUC(b.ID, st) // judged against the committed block already
	}
	if v == vGood && state == Finalized {
		if dn.scheduled > 0 {
			dn.scheduled--
		} else if dn.prevScheduled > 0 {
			dn.prevScheduled--
		}
		if p := m.pending[b.ID]; p != nil {
			for k, c := range p.copies {
				if c.target == dn.id.UUID {
					p.copies = append(p.copies[:k], p.copies[k+1:]...)
					break
				}
			}
			if len(p.copies) == 0 {
				delete(m.pending, b.ID)
			}
		}
	}
	m.refresh(b)
}

// dropUC forgets what st reported for block id while it was under
// construction.
func (m *Manager) dropUC(id int64, st *storage) {
	reps := m.ucReps[id]
	for k := range reps {
		if reps[k].st == st {
			reps[k] = reps[len(reps)-1]
			reps = reps[:len(reps)-1]
			break
		}
	}
	if len(reps) == 0 {
		delete(m.ucReps, id)
	} else {
		m.ucReps[id] = reps
	}
}

func (m *Manager) noteUC(id int64, st *storage, rb Block) {
	reps := m.ucReps[id]
	for k := range reps {
		if reps[k].st == st {
			reps[k].blk = rb
			return
		}
	}
	m.ucReps[id] = append(reps, ucRep{st: st, blk: rb})
}

// ProcessFullBlockReport reconciles one storage's full block report
// (blockReport, already decoded from its long-array form) with the blocks
// map: unknown replicas are deleted, known good ones recorded, stale or
// mis-sized ones marked corrupt, and replicas the map had on this storage but
// the report lacks are dropped (their blocks queued if short). It is
// StartFullReport, one ReportSlice and the whole sweep in one call.
func (m *Manager) ProcessFullBlockReport(uuid, storageID string, replicas []ReportedReplica, now time.Time) (ReportResult, error) {
	fr, err := m.StartFullReport(uuid, storageID, now)
	if err != nil {
		return ReportResult{}, err
	}
	if err := m.ReportSlice(fr, replicas, now); err != nil {
		m.AbortFullReport(fr)
		return fr.res, err
	}
	for {
		done, err := m.SweepSlice(fr, math.MaxInt, now)
		if err != nil {
			m.AbortFullReport(fr)
			return fr.res, err
		}
		if done {
			return fr.res, nil
		}
	}
}

// FullReport is one storage's full block report being processed in
// slices: StartFullReport, ReportSlice for each part of the replicas,
// SweepSlice until it is done (or AbortFullReport). The caller may release
// its lock between any two of these calls; see "Full block reports in
// slices" in the package doc for what other calls may do meanwhile.
type FullReport struct {
	dn *datanode
	st *storage
	// touched are the blocks whose replica on st an incremental report (or
	// a postponed report of a standby) changed since the report started:
	// the full report, older than that change, skips them.
	touched map[int64]struct{}
	// phase: reporting, then sweeping (dropping unmarked replicas), then
	// clearing (the marks); next is the sweep's or the clearing's cursor
	// into st.blocks, walking down.
	phase reportPhase
	next  int
	res   ReportResult
}

type reportPhase uint8

const (
	phaseReport reportPhase = iota
	phaseSweep
	phaseClear
)

// Result is what the report has changed so far.
func (fr *FullReport) Result() ReportResult { return fr.res }

// StartFullReport begins processing a full report of storageID of node
// uuid. One full report is processed at a time: a second start before the
// first ended fails with ErrReportInProgress.
func (m *Manager) StartFullReport(uuid, storageID string, now time.Time) (*FullReport, error) {
	if m.fbr != nil {
		return nil, fmt.Errorf("%w: %s storage %s", ErrReportInProgress, m.fbr.dn.id.UUID, m.fbr.st.id)
	}
	dn, err := m.reportingNode(uuid)
	if err != nil {
		return nil, err
	}
	m.nowHint = now
	dn.lastReport = now
	fr := &FullReport{dn: dn, st: m.storage(dn, storageID)}
	m.fbr = fr
	return fr, nil
}

// current checks that fr is the report in progress and its node is still
// registered and alive.
func (m *Manager) current(fr *FullReport) error {
	if m.fbr != fr {
		return fmt.Errorf("%w: the full report of %s storage %s ended", ErrBadState, fr.dn.id.UUID, fr.st.id)
	}
	if dn, err := m.reportingNode(fr.dn.id.UUID); err != nil || dn != fr.dn {
		return fmt.Errorf("%w: %s (died or was replaced during its full report)", ErrUnregistered, fr.dn.id.UUID)
	}
	return nil
}

// ReportSlice processes the next replicas of a full report.
func (m *Manager) ReportSlice(fr *FullReport, replicas []ReportedReplica, now time.Time) error {
	_, err := m.ReportFor(fr, replicas, now, nil)
	return err
}

// ReportFor is ReportSlice of a prefix of replicas: it stops when over
// says so and returns how many replicas it processed, at least one when
// replicas is not empty; the caller hands the rest to a later call.
func (m *Manager) ReportFor(fr *FullReport, replicas []ReportedReplica, now time.Time, over Over) (int, error) {
	if err := m.current(fr); err != nil {
		return 0, err
	}
	if fr.phase != phaseReport {
		return 0, fmt.Errorf("%w: replicas after the sweep of a full report began", ErrBadState)
	}
	m.nowHint = now
	dn, st := fr.dn, fr.st
	// The blocks of clockStride replicas are looked up first, then the
	// replicas processed: the lookups, each a likely cache miss in a big
	// map, do not depend on one another, so the processor overlaps them.
	// Processing a replica adds or removes no block.
	var found [clockStride]*blockInfo
	for k := range replicas {
		if over.done(k) {
			return k, nil
		}
		if k%clockStride == 0 {
			for j, rr := range replicas[k:min(k+clockStride, len(replicas))] {
				found[j] = m.live(rr.ID)
			}
		}
		rr := &replicas[k]
		if len(fr.touched) > 0 {
			if _, ok := fr.touched[rr.ID]; ok {
				continue
			}
		}
		b := found[k%clockStride]
		if m.shouldPostpone(b, rr.Block) {
			m.postpone(dn, st, rr.Block, rr.State, "")
			if b != nil && m.find(b, st) >= 0 {
				m.reps(b)[m.find(b, st)].flags |= rMark // kept until the edits explain it
			}
			continue
		}
		if m.ignoredOnStandby(b) {
			continue
		}
		if b == nil {
			m.unknownReplica(dn, rr.Block, &fr.res)
			continue
		}
		m.reported(b, st, rr.Block, rr.State, true, &fr.res)
	}
	return len(replicas), nil
}

// SweepSlice drops up to max replicas' worth of the storage's replicas
// that the report did not list (the first call ends the reporting), then
// clears the marks, and reports true when the report is done.
func (m *Manager) SweepSlice(fr *FullReport, max int, now time.Time) (bool, error) {
	return m.sweep(fr, max, nil, now)
}

// SweepFor is SweepSlice bounded by over instead of a count.
func (m *Manager) SweepFor(fr *FullReport, over Over, now time.Time) (bool, error) {
	return m.sweep(fr, math.MaxInt, over, now)
}

func (m *Manager) sweep(fr *FullReport, max int, over Over, now time.Time) (bool, error) {
	if err := m.current(fr); err != nil {
		return false, err
	}
	m.nowHint = now
	st := fr.st
	if fr.phase == phaseReport {
		fr.phase, fr.next = phaseSweep, len(st.blocks)-1
	}
	// Walk down from the end: a removal moves the last entry into the
	// hole, and the last entry is always one already walked (or the walk
	// has passed the end, and min brings it back), so nothing unwalked is
	// skipped; what is walked twice is marked and stays.
	i := min(fr.next, len(st.blocks)-1)
	for n := 0; i >= 0 && n < max && !over.done(n); i, n = i-1, n+1 {
		if i >= len(st.blocks) {
			continue
		}
		b := m.blocks.at(st.blocks[i])
		j := m.find(b, st)
		if j < 0 {
			continue
		}
		if fr.phase == phaseClear {
			m.reps(b)[j].flags &^= rMark
			continue
		}
		if m.reps(b)[j].flags&rMark != 0 {
			continue
		}
		m.removeReplicaAt(b, j)
		fr.res.Removed++
		m.refresh(b)
	}
	fr.next = i
	if i >= 0 {
		return false, nil
	}
	if fr.phase == phaseSweep {
		fr.phase, fr.next = phaseClear, len(st.blocks)-1
		return false, nil
	}
	m.fbr = nil
	fr.dn.reported = true
	m.checkSafeMode(now)
	return true, nil
}

// AbortFullReport ends a full report without its sweep: the replicas it
// recorded stay, none is dropped for lacking from it. The marks are
// cleared in one pass.
func (m *Manager) AbortFullReport(fr *FullReport) {
	if m.fbr != fr {
		return
	}
	m.fbr = nil
	for _, ix := range fr.st.blocks {
		b := m.blocks.at(ix)
		if j := m.find(b, fr.st); j >= 0 {
			m.reps(b)[j].flags &^= rMark
		}
	}
}

// touchedByOther notes that a call other than the full report in progress
// changed b's replica on st; it reports whether the replica must be marked
// as seen by that report.
func (m *Manager) touchedByOther(st *storage, id int64) bool {
	fr := m.fbr
	if fr == nil || fr.st != st {
		return false
	}
	if fr.touched == nil {
		fr.touched = make(map[int64]struct{})
	}
	fr.touched[id] = struct{}{}
	return fr.phase != phaseClear
}

// ProcessIncremental applies an incremental block report
// (blockReceivedAndDeleted) for one storage. RECEIVED records a finalized
// replica (completing a COMMITTED block once it has enough), RECEIVING an
// unfinished one, DELETED drops the location.
func (m *Manager) ProcessIncremental(uuid, storageID string, items []ReceivedDeleted, now time.Time) (ReportResult, error) {
	var res ReportResult
	dn, err := m.reportingNode(uuid)
	if err != nil {
		return res, err
	}
	m.nowHint = now
	st := m.storage(dn, storageID)
	for _, it := range items {
		switch it.Status {
		case Deleted:
			b := m.blocks.get(it.ID)
			m.touchedByOther(st, it.ID)
			delete(dn.invSet, it.ID)
			m.dropQueued(st, it.ID, math.MaxInt64)
			if b == nil {
				continue
			}
			if i := m.findOn(b, dn); i >= 0 {
				m.removeReplicaAt(b, i)
				res.Removed++
				m.refresh(b)
			}
		case Received, Receiving:
			b := m.live(it.ID)
			state := Finalized
			if it.Status == Receiving {
				state = RBW
			}
			if m.shouldPostpone(b, it.Block) {
				m.postpone(dn, st, it.Block, state, it.DeleteHint)
				continue
			}
			if m.ignoredOnStandby(b) {
				continue
			}
			if b == nil {
				m.unknownReplica(dn, it.Block, &res)
				continue
			}
			m.deleteHintFor = it.DeleteHint
			m.reported(b, st, it.Block, state, false, &res)
			m.deleteHintFor = ""
		default:
			return res, fmt.Errorf("%w: incremental report status %d for blk_%d", ErrBadState, it.Status, it.ID)
		}
	}
	m.checkSafeMode(now)
	return res, nil
}

// ReportBadBlocks marks the replicas of blk on the given nodes corrupt
// (reportBadBlocks from a client or a DataNode's scanner). A corrupt replica is
// deleted once enough good ones exist; until then the block is queued.
// Nodes that do not hold the block are ignored.
func (m *Manager) ReportBadBlocks(blk Block, uuids []string) error {
	b := m.blocks.get(blk.ID)
	if b == nil {
		return fmt.Errorf("%w: blk_%d", ErrUnknownBlock, blk.ID)
	}
	for _, u := range uuids {
		dn := m.nodes[u]
		if dn == nil {
			continue
		}
		if i := m.findOn(b, dn); i >= 0 {
			m.reps(b)[i].flags |= rCorrupt
		}
	}
	m.refresh(b)
	return nil
}

// IsRegistered reports whether uuid is a registered, live DataNode: the
// only kind whose reports are worth decoding.
func (m *Manager) IsRegistered(uuid string) bool {
	_, err := m.reportingNode(uuid)
	return err == nil
}
