package blockmgmt

import "time"

// Standby mode (Hadoop's PendingDataNodeMessages and
// shouldPostponeBlocksFromFuture).
//
// A standby NameNode receives the same reports as the active, but its
// block map follows the edit log it tails, which lags: a DataNode may report
// a block the standby has not read yet, or a replica with a generation
// stamp the standby's block has not reached. Such a report is not acted on
// (an unknown block would be deleted, a newer stamp judged corrupt); it is
// queued by block, and processed as soon as an applied edit changes that
// block (explained), so that a later edit — a commit — sees what the
// replicas reported in between. A replica the standby would judge corrupt
// is queued too, never marked: it may be explained by edits not read yet;
// if nothing explains it, it is marked at failover, as the active marks it.
// Per storage only the newest report waits; an older one is superseded.
// Everything else in a report is processed at once, so that at failover the
// block map has every location and needs no new block reports.
//
// In standby mode the manager also schedules no work: no reconstruction,
// no deletion. It does leave start-up safe mode once enough blocks are
// reported, as Hadoop's standby does: a standby still in safe mode is not
// ready to become active. Leaving standby mode
// (SetStandby(false), becoming active) processes what is still queued as
// an active would, marks every DataNode stale until it heartbeats to this
// NameNode, and rebuilds the redundancy queues from every block.

// maxQueuedMessages bounds the queue: a DataNode cannot make a standby
// hold more than this many postponed replicas. Beyond it the oldest are
// dropped; the next block report tells again.
const maxQueuedMessages = 1 << 20

// queuedReport is one postponed replica report.
type queuedReport struct {
	uuid, storageID string
	blk             Block
	state           ReplicaState
	deleteHint      string
}

// SetStandby switches standby mode. Leaving it processes every queued
// report (an unknown block is then deleted on its DataNode, as on an
// active), marks the DataNodes stale and rebuilds the redundancy queues.
func (m *Manager) SetStandby(on bool, now time.Time) {
	if m.standby == on {
		return
	}
	m.standby = on
	// Orders decided in the other state are dropped: an active's are not a
	// standby's to give, and a standby decides none.
	m.clearQueues()
	if on {
		m.popNext = 0 // the queues are rebuilt when it is active again
		return
	}
	m.processQueued(now, true)
	for _, dn := range m.order {
		// Until its next heartbeat here, a node's state is what this
		// NameNode heard as a standby: not fresh enough to place on.
		if !dn.dead && now.Sub(dn.lastUpdate) < m.cfg.StaleInterval {
			dn.lastUpdate = now.Add(-m.cfg.StaleInterval)
		}
	}
	if m.sm.status == smOff {
		m.populating = false
		m.leaveStartup()
	}
	m.checkSafeMode(now)
}

// InStandby reports whether the manager is in standby mode.
func (m *Manager) InStandby() bool { return m.standby }

// postpone queues a report the standby cannot judge yet. Only the newest
// report of each storage counts: queued reports of the same storage with a
// stamp not above this one are superseded and dropped (otherwise an old
// report would wait in the queue until a failover and then mark a good
// replica corrupt).
func (m *Manager) postpone(dn *datanode, st *storage, rb Block, state ReplicaState, hint string) {
	m.dropQueued(st, rb.ID, rb.GenStamp)
	if m.queuedCount >= maxQueuedMessages {
		for id, q := range m.queued {
			m.queuedCount -= len(q)
			delete(m.queued, id)
			if m.queuedCount < maxQueuedMessages {
				break
			}
		}
	}
	m.queued[rb.ID] = append(m.queued[rb.ID], queuedReport{uuid: dn.id.UUID, storageID: st.id, blk: rb, state: state, deleteHint: hint})
	m.queuedCount++
}

// dropQueued forgets the queued reports of block id from st whose stamp is
// not above genStamp: a newer report of the replica supersedes them.
func (m *Manager) dropQueued(st *storage, id, genStamp int64) {
	q := m.queued[id]
	if len(q) == 0 {
		return
	}
	keep := q[:0]
	for _, r := range q {
		if r.uuid == st.dn.id.UUID && r.storageID == st.id && r.blk.GenStamp <= genStamp {
			m.queuedCount--
			continue
		}
		keep = append(keep, r)
	}
	if len(keep) == 0 {
		delete(m.queued, id)
	} else {
		m.queued[id] = keep
	}
}

// shouldPostpone reports whether a replica report must wait for the edits:
// on a standby, a block it does not know yet whose stamp is not older than
// the newest it read (an unknown block with an older stamp was deleted;
// the active has it deleted), or one whose reported stamp is newer than
// the block's.
func (m *Manager) shouldPostpone(b *blockInfo, rb Block) bool {
	if !m.standby {
		return false
	}
	if b == nil {
		return rb.GenStamp >= m.maxGenStamp
	}
	return rb.GenStamp > b.GenStamp
}

// ignoredOnStandby reports whether a standby drops a report of an unknown
// block outright (see shouldPostpone).
func (m *Manager) ignoredOnStandby(b *blockInfo) bool { return m.standby && b == nil }

// NumQueued is the number of postponed reports.
func (m *Manager) NumQueued() int { return m.queuedCount }

// ProcessQueued processes the postponed reports the edits applied since
// explain: their block is known and has reached their stamp.
func (m *Manager) ProcessQueued(now time.Time) { m.processQueued(now, false) }

func (m *Manager) processQueued(now time.Time, all bool) {
	if m.queuedCount == 0 {
		return
	}
	m.nowHint = now
	ids := make([]int64, 0, len(m.queued))
	for id := range m.queued {
		ids = append(ids, id)
	}
	for _, id := range ids {
		m.processQueuedFor(id, all)
	}
}

// explained processes the reports queued for a block an applied edit just
// changed (Hadoop's processQueuedMessagesForBlock): reports are judged
// against the block as the edits leave it, in the order the edits change
// it, before a later edit (a commit) relies on what the replicas reported.
func (m *Manager) explained(id int64) {
	if m.standby && len(m.queued[id]) > 0 {
		m.processQueuedFor(id, false)
	}
}

// processQueuedFor processes block id's queued reports, in arrival order;
// unless all, those the edits do not explain yet stay queued. A report
// still judged corrupt on a standby is queued again by reported.
func (m *Manager) processQueuedFor(id int64, all bool) {
	q := m.queued[id]
	delete(m.queued, id)
	m.queuedCount -= len(q)
	b := m.blocks.get(id)
	var res ReportResult
	for _, r := range q {
		dn := m.nodes[r.uuid]
		if dn == nil || dn.dead {
			continue
		}
		st := m.storage(dn, r.storageID)
		if !all && (b == nil || r.blk.GenStamp > b.GenStamp) {
			m.queued[id] = append(m.queued[id], r)
			m.queuedCount++
			continue
		}
		if b == nil {
			if !m.standby {
				m.unknownReplica(dn, r.blk, &res)
			}
			continue
		}
		m.deleteHintFor = r.deleteHint
		m.reported(b, st, r.blk, r.state, false, &res)
		m.deleteHintFor = ""
	}
}

// clearQueues forgets every order not yet given and the redundancy queues
// (Hadoop's clearQueues at an HA transition); leaveStartup rebuilds the
// queues from the blocks.
func (m *Manager) clearQueues() {
	for _, dn := range m.order {
		dn.transfers, dn.recoveries, dn.invReady = nil, nil, nil
		dn.invList, dn.invSet = nil, nil
	}
	m.needed.init()
	clear(m.pending)
}
