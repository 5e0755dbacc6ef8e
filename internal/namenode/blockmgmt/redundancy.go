package blockmgmt

import (
	"math"
	"slices"
	"time"
)

// Priority levels of the low-redundancy queues (LowRedundancyBlocks).
const (
	levelHighest          = 0 // one live replica left
	levelVeryLow          = 1 // live × 3 < expected
	levelLow              = 2 // other shortfalls
	levelBadlyDistributed = 3 // enough replicas, all on one rack
	levelCorrupt          = 4 // no live replica: only corrupt ones, or none
	numLevels             = 5
	levelNone             = -1
)

// lowRedundancy holds blocks needing reconstruction, one FIFO per level, with
// a bookmark per level so that blocks that cannot be scheduled do not starve
// the ones behind them. The FIFOs are doubly linked lists threaded through
// entries named by index (0 is no entry), kept in fixed chunks so that
// growing never copies them: a queued block costs an entry of 24 bytes and
// an index in where, with nothing for the collector to trace. After a start
// or a failover every block can pass through here, and with many DataNodes
// down millions stay.
type lowRedundancy struct {
	chunks   []*[lrChunk]lrNode
	used     int32   // indices handed out, 0 (no entry) included
	free     []int32 // indices of removed entries, to reuse
	head     [numLevels]int32
	tail     [numLevels]int32
	n        [numLevels]int
	ones     [numLevels]int   // of n, the blocks of replication 1
	where    map[int64]int32  // block id → entry index
	bookmark [numLevels]int32 // next entry to visit; 0 = the front
}

type lrNode struct {
	id         int64
	prev, next int32
	level      int8
	one        bool // the block's replication is 1
}

const (
	lrShift = 12
	lrChunk = 1 << lrShift // entries per chunk (96 KiB)
)

func (q *lowRedundancy) init() {
	*q = lowRedundancy{used: 1, where: make(map[int64]int32)}
}

// at is entry i (non-zero).
func (q *lowRedundancy) at(i int32) *lrNode { return &q.chunks[i>>lrShift][i&(lrChunk-1)] }

// alloc takes a free index, adding a chunk when none is left.
func (q *lowRedundancy) alloc() int32 {
	if k := len(q.free); k > 0 {
		i := q.free[k-1]
		q.free = q.free[:k-1]
		return i
	}
	if q.used == math.MaxInt32 {
		panic("blockmgmt: more than 2^31 blocks queued for reconstruction")
	}
	i := q.used
	if int(i>>lrShift) == len(q.chunks) {
		q.chunks = append(q.chunks, new([lrChunk]lrNode))
	}
	q.used++
	return i
}

// inUse is the number of entries holding a block.
func (q *lowRedundancy) inUse() int { return int(q.used) - 1 - len(q.free) }

func (q *lowRedundancy) size() int { return len(q.where) }

// count is the number of blocks queued at level lv.
func (q *lowRedundancy) count(lv int) int { return q.n[lv] }

// countOnes is the number of blocks of replication 1 queued at level lv.
func (q *lowRedundancy) countOnes(lv int) int { return q.ones[lv] }

// each calls fn with the ids queued at level lv, in queue order.
func (q *lowRedundancy) each(lv int, fn func(id int64)) {
	for i := q.head[lv]; i != 0; i = q.at(i).next {
		fn(q.at(i).id)
	}
}

func (q *lowRedundancy) level(id int64) int {
	if i, ok := q.where[id]; ok {
		return int(q.at(i).level)
	}
	return levelNone
}

func (q *lowRedundancy) remove(id int64) {
	i, ok := q.where[id]
	if !ok {
		return
	}
	e := q.at(i)
	lv := e.level
	if q.bookmark[lv] == i {
		q.bookmark[lv] = e.next
	}
	if e.prev != 0 {
		q.at(e.prev).next = e.next
	} else {
		q.head[lv] = e.next
	}
	if e.next != 0 {
		q.at(e.next).prev = e.prev
	} else {
		q.tail[lv] = e.prev
	}
	q.n[lv]--
	if e.one {
		q.ones[lv]--
	}
	*e = lrNode{}
	q.free = append(q.free, i)
	delete(q.where, id)
}

// put queues block id at level (at the back unless it is there already);
// one says whether its replication is 1.
func (q *lowRedundancy) put(id int64, level int, one bool) {
	if i, ok := q.where[id]; ok {
		if e := q.at(i); int(e.level) == level {
			if e.one != one {
				e.one = one
				if one {
					q.ones[level]++
				} else {
					q.ones[level]--
				}
			}
			return
		}
		q.remove(id)
	}
	i := q.alloc()
	*q.at(i) = lrNode{id: id, prev: q.tail[level], level: int8(level), one: one}
	if one {
		q.ones[level]++
	}
	if t := q.tail[level]; t != 0 {
		q.at(t).next = i
	} else {
		q.head[level] = i
	}
	q.tail[level] = i
	q.n[level]++
	q.where[id] = i
}

// choose returns up to n block ids, highest priority first, continuing each
// level from its bookmark. Missing blocks (levelCorrupt) are never chosen: no
// good source exists for them.
func (q *lowRedundancy) choose(n int) []int64 {
	var out []int64
	for lv := 0; lv < levelCorrupt && len(out) < n; lv++ {
		i := q.bookmark[lv]
		if i == 0 {
			i = q.head[lv]
		}
		for ; i != 0 && len(out) < n; i = q.at(i).next {
			out = append(out, q.at(i).id)
		}
		q.bookmark[lv] = i // 0 at the end: the next pass restarts the level
	}
	return out
}

// priority is Hadoop's getPriority for a replicated block: live replicas
// against the required number, with outOfService readable replicas on nodes
// leaving service (a block with only those is as urgent as one with a single
// replica left).
func priority(live, outOfService, expected int) int {
	switch {
	case live >= expected:
		return levelBadlyDistributed
	case live == 0 && outOfService > 0:
		return levelHighest
	case live == 0:
		return levelCorrupt
	case live == 1:
		return levelHighest
	case live*3 < expected:
		return levelVeryLow
	}
	return levelLow
}

// oneRack reports whether every live in-service replica of b is on one rack
// while the cluster has more than one.
func (m *Manager) oneRack(b *blockInfo) bool {
	if len(m.rackNodes) < 2 || b.repl() < 2 {
		return false
	}
	rack := ""
	for i := range m.reps(b) {
		r := &m.reps(b)[i]
		if r.flags&rCorrupt != 0 || r.state != Finalized || m.stOf(*r).dn.dead || m.stOf(*r).dn.admin != Normal {
			continue
		}
		if rack == "" {
			rack = m.stOf(*r).dn.rack
		} else if rack != m.stOf(*r).dn.rack {
			return false
		}
	}
	return true
}

// updateNeeded puts b in the right low-redundancy queue, or takes it out.
func (m *Manager) updateNeeded(b *blockInfo, c replicaCount) {
	if b.state() != Complete {
		m.needed.remove(b.ID)
		return
	}
	exp := m.required(b, c)
	pend := 0
	if p := m.pending[b.ID]; p != nil {
		pend = len(p.copies)
	}
	switch {
	case c.live == 0 && c.outOfService == 0 && (c.corrupt > 0 || pend == 0):
		m.needed.put(b.ID, levelCorrupt, b.repl() == 1)
	case c.live+pend < exp:
		m.needed.put(b.ID, priority(c.live, c.outOfService, exp), b.repl() == 1)
	case c.live >= exp && pend == 0 && m.oneRack(b):
		m.needed.put(b.ID, levelBadlyDistributed, b.repl() == 1)
	default:
		m.needed.remove(b.ID)
	}
}

// removeExcess deletes n replicas of b chosen like Hadoop's
// chooseReplicasToDelete: among the replicas on storage types the block's
// storage policy has too many of (all when none), the deletion hint when it
// is safe, else from the
// racks holding more than one replica (all racks when none does), the node
// with the oldest heartbeat if it is stale, else the one with the least
// remaining space.
func (m *Manager) removeExcess(b *blockInfo, n int) {
	for ; n > 0; n-- {
		perRack := make(map[string]int)
		var cands []int
		for i := range m.reps(b) {
			r := &m.reps(b)[i]
			// Only live replicas in service are excess: a node leaving
			// service keeps its copy until it is gone.
			if r.flags&rCorrupt != 0 || r.state != Finalized || m.stOf(*r).dn.dead || m.stOf(*r).dn.admin != Normal {
				continue
			}
			perRack[m.stOf(*r).dn.rack]++
			cands = append(cands, i)
		}
		if len(cands) == 0 {
			return
		}
		cands = m.excessByType(b, cands)
		pick := -1
		if m.deleteHintFor != "" {
			for _, i := range cands {
				dn := m.stOf(m.reps(b)[i]).dn
				// Deleting the hinted replica must not reduce the rack count.
				if dn.id.UUID == m.deleteHintFor && (perRack[dn.rack] > 1 || len(perRack) > 2) {
					pick = i
				}
			}
		}
		if pick < 0 {
			pool := cands[:0:0]
			for _, i := range cands {
				if perRack[m.stOf(m.reps(b)[i]).dn.rack] > 1 {
					pool = append(pool, i)
				}
			}
			if len(pool) == 0 {
				pool = cands
			}
			// The most out-of-date node when it is stale, else the fullest.
			oldest, least := -1, -1
			for _, i := range pool {
				dn := m.stOf(m.reps(b)[i]).dn
				if oldest < 0 || dn.lastUpdate.Before(m.stOf(m.reps(b)[oldest]).dn.lastUpdate) {
					oldest = i
				}
				if least < 0 || dn.remainingSum() < m.stOf(m.reps(b)[least]).dn.remainingSum() {
					least = i
				}
			}
			pick = least
			if m.nowHint.Sub(m.stOf(m.reps(b)[oldest]).dn.lastUpdate) > m.cfg.StaleInterval {
				pick = oldest
			}
		}
		m.invalidateReplicaAt(b, pick)
	}
}

func (dn *datanode) remainingSum() int64 {
	var s int64
	for _, st := range dn.storages {
		if !st.failed {
			s += st.remaining
		}
	}
	return s
}

// WorkResult says what one ComputeWork call scheduled.
type WorkResult struct {
	Transfers     int // blocks given a Transfer
	Invalidates   int // replicas handed to nodes for deletion
	TimedOut      int // pending reconstructions that expired and were requeued
	Unschedulable int // blocks examined that found no source or target
}

// ComputeWork is one pass of the redundancy monitor (every
// dfs.namenode.redundancy.interval.seconds): it requeues timed-out pending
// reconstructions, schedules up to ReplicationWorkMultiplier × live-nodes
// reconstructions, and hands deletions to InvalidateWorkPct of the live nodes
// (BlocksInvalidatePerHeartbeat each). The commands go out with each node's
// next heartbeat. It does nothing in safe mode.
func (m *Manager) ComputeWork(now time.Time) WorkResult {
	if m.standby {
		return WorkResult{}
	}
	var res WorkResult
	if m.InSafeMode() {
		return res
	}
	m.nowHint = now
	res.TimedOut = m.expirePending(now)
	live := m.NumLiveDatanodes()
	if live == 0 {
		return res
	}
	for _, id := range m.needed.choose(m.cfg.ReplicationWorkMultiplier * live) {
		b := m.blocks.get(id)
		if b == nil {
			m.needed.remove(id)
			continue
		}
		if m.scheduleReconstruction(b, now) {
			res.Transfers++
		} else if m.needed.level(id) != levelNone {
			res.Unschedulable++
		}
	}
	res.Invalidates = m.computeInvalidateWork(live)
	return res
}

func (m *Manager) expirePending(now time.Time) int {
	var expired []int64
	for id, p := range m.pending {
		if !now.Before(p.deadline) {
			expired = append(expired, id)
		}
	}
	slices.Sort(expired)
	for _, id := range expired {
		delete(m.pending, id)
		if b := m.blocks.get(id); b != nil {
			m.refresh(b)
		}
	}
	return len(expired)
}

// scheduleReconstruction tries to give b its missing replicas.
func (m *Manager) scheduleReconstruction(b *blockInfo, now time.Time) bool {
	level := m.needed.level(b.ID)
	c := m.count(b)
	live, exp := c.live, m.required(b, c)
	pend := 0
	if p := m.pending[b.ID]; p != nil {
		pend = len(p.copies)
	}
	need := exp - live - pend
	if level == levelBadlyDistributed && need <= 0 && pend == 0 {
		if !m.oneRack(b) { // the racks changed since it was queued
			m.refresh(b)
			return false
		}
		need = 1
	}
	if b.state() != Complete || need <= 0 {
		m.refresh(b)
		return false
	}
	src := m.chooseSource(b, level)
	if src == nil {
		return false
	}
	var existing, excluded []*datanode
	var existingTypes []int32
	for i := range m.reps(b) {
		r := &m.reps(b)[i]
		excluded = append(excluded, m.stOf(*r).dn)
		if r.flags&rCorrupt == 0 && r.state == Finalized && !m.stOf(*r).dn.dead && m.stOf(*r).dn.admin == Normal {
			existing = append(existing, m.stOf(*r).dn)
			existingTypes = append(existingTypes, typeOf(m.stOf(*r)))
		}
	}
	if p := m.pending[b.ID]; p != nil {
		for _, c := range p.copies {
			if dn := m.nodes[c.target]; dn != nil {
				excluded = append(excluded, dn)
			}
		}
	}
	targets := m.chooseTargets(need, src, existing, existingTypes, excluded, nil, b.NumBytes, m.policy(b.policy()), now, false)
	if len(targets) == 0 {
		return false
	}
	t := Transfer{Block: b.Block, Targets: make([]DatanodeID, len(targets))}
	for _, c := range m.toTargets(targets) {
		t.StorageIDs = append(t.StorageIDs, c.StorageID)
		t.StorageTypes = append(t.StorageTypes, c.StorageType)
	}
	p := m.pending[b.ID]
	if p == nil {
		p = &pendingWork{}
		m.pending[b.ID] = p
	}
	p.deadline = now.Add(m.cfg.PendingReconstructionTimeout)
	for i, c := range targets {
		dn := c.dn
		t.Targets[i] = dn.id
		p.copies = append(p.copies, pendingCopy{target: dn.id.UUID, source: src.id.UUID})
		dn.scheduled++
	}
	src.transfers = append(src.transfers, t)
	m.refresh(b)
	return true
}

// chooseSource picks a live node holding a good finalized replica whose
// transfer queue is below the stream limit: the hard limit for the highest
// priority and for nodes leaving service, which are preferred (their
// replicas are the ones being replaced); decommissioned nodes are not used.
// Among equals the choice is random.
func (m *Manager) chooseSource(b *blockInfo, level int) *datanode {
	var cands, leaving []*datanode
	for i := range m.reps(b) {
		r := &m.reps(b)[i]
		dn := m.stOf(*r).dn
		if r.flags&rCorrupt != 0 || r.state != Finalized || m.stOf(*r).failed || dn.dead || dn.admin == Decommissioned {
			continue
		}
		if _, gone := dn.invSet[b.ID]; gone {
			continue
		}
		q := len(dn.transfers)
		out := dn.admin == DecommissionInProgress || dn.admin == EnteringMaintenance
		if level != levelHighest && !out && q >= m.cfg.ReplicationMaxStreams {
			continue
		}
		if q >= m.cfg.ReplicationMaxStreamsHardLimit {
			continue
		}
		if out {
			leaving = append(leaving, dn)
		} else {
			cands = append(cands, dn)
		}
	}
	if len(leaving) > 0 {
		cands = leaving
	}
	if len(cands) == 0 {
		return nil
	}
	return cands[m.rnd.IntN(len(cands))]
}

// computeInvalidateWork moves pending deletions to the send queues of
// ceil(InvalidateWorkPct × live) nodes chosen at random among those with
// deletions waiting.
func (m *Manager) computeInvalidateWork(live int) int {
	var nodes []*datanode
	for _, dn := range m.order {
		if !dn.dead && len(dn.invSet) > 0 {
			nodes = append(nodes, dn)
		}
	}
	m.rnd.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
	k := max(1, int(math.Ceil(float64(live)*m.cfg.InvalidateWorkPct)))
	total := 0
	for _, dn := range nodes[:min(k, len(nodes))] {
		n := 0
		for n < m.cfg.BlocksInvalidatePerHeartbeat && len(dn.invList) > 0 {
			blk := dn.invList[0]
			dn.invList = dn.invList[1:]
			if _, ok := dn.invSet[blk.ID]; !ok {
				continue
			}
			delete(dn.invSet, blk.ID)
			dn.invReady = append(dn.invReady, blk)
			n++
		}
		if len(dn.invList) == 0 {
			dn.invList = nil
		}
		total += n
	}
	return total
}
