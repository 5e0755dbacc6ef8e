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
	done := b.state == Complete || b.state == Committed
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
	v := judge(b, rb, state)
	i := b.find(st)
	if m.standby {
		m.dropQueued(st, b.ID, rb.GenStamp)
		if v == vCorrupt {
			// A standby's block map lags the DataNodes: what looks corrupt
			// may be explained by edits not read yet (HDFS-6289). It waits
			// in the queue, and is judged as an active would at failover.
			m.postpone(dn, st, rb, state, m.deleteHintFor)
			if i >= 0 && mark {
				b.reps()[i].flags |= rMark
			}
			return
		}
	}
	if i < 0 {
		if j := b.findNode(dn); j >= 0 { // moved to another volume of the node
			m.removeReplicaAt(b, j)
		}
	}
	if v == vIgnore {
		if i >= 0 && mark {
			b.reps()[i].flags |= rMark
		}
		return
	}
	var flags uint8
	if mark {
		flags = rMark
	}
	if i >= 0 {
		r := &b.reps()[i]
		r.state = state
		r.flags = r.flags&rCorrupt | flags
	} else {
		m.addReplica(b, st, state, flags)
		i = len(b.reps()) - 1
		if v == vGood {
			res.Added++
		}
	}
	if v == vCorrupt {
		res.Corrupt++
		m.markCorrupt(b, i, rb)
	}
	if b.state == UnderConstruction || b.state == UnderRecovery {
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
// the report lacks are dropped (their blocks queued if short).
func (m *Manager) ProcessFullBlockReport(uuid, storageID string, replicas []ReportedReplica, now time.Time) (ReportResult, error) {
	var res ReportResult
	dn, err := m.reportingNode(uuid)
	if err != nil {
		return res, err
	}
	m.nowHint = now
	dn.reported = true
	dn.lastReport = now
	st := m.storage(dn, storageID)
	for _, rr := range replicas {
		b := m.blocks.get(rr.ID)
		if m.shouldPostpone(b, rr.Block) {
			m.postpone(dn, st, rr.Block, rr.State, "")
			if b != nil && b.find(st) >= 0 {
				b.reps()[b.find(st)].flags |= rMark // kept until the edits explain it
			}
			continue
		}
		if m.ignoredOnStandby(b) {
			continue
		}
		if b == nil {
			m.unknownReplica(dn, rr.Block, &res)
			continue
		}
		m.reported(b, st, rr.Block, rr.State, true, &res)
	}
	// Sweep from the end: swap-removal only moves entries already visited.
	for i := len(st.blocks) - 1; i >= 0; i-- {
		if i >= len(st.blocks) {
			continue
		}
		b := st.blocks[i]
		j := b.find(st)
		if j < 0 {
			continue
		}
		if b.reps()[j].flags&rMark != 0 {
			b.reps()[j].flags &^= rMark
			continue
		}
		m.removeReplicaAt(b, j)
		res.Removed++
		m.refresh(b)
	}
	m.checkSafeMode(now)
	return res, nil
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
		b := m.blocks.get(it.ID)
		switch it.Status {
		case Deleted:
			delete(dn.invSet, it.ID)
			m.dropQueued(st, it.ID, math.MaxInt64)
			if b == nil {
				continue
			}
			if i := b.findNode(dn); i >= 0 {
				m.removeReplicaAt(b, i)
				res.Removed++
				m.refresh(b)
			}
		case Received, Receiving:
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
		if i := b.findNode(dn); i >= 0 {
			b.reps()[i].flags |= rCorrupt
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
