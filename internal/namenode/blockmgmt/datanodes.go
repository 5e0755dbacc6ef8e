package blockmgmt

import (
	"fmt"
	"time"
)

// RegisterDatanode records a DataNode (registerDatanode). A known UUID updates
// its address and, if the node was dead, brings it back to life (its replicas
// come back with its next block report). A new UUID with the transfer address
// of another descriptor replaces that descriptor (the node was reformatted).
// storages, when given, are applied as in a heartbeat. A node the host
// policy does not let in gets ErrDisallowed and is not recorded; one it
// excludes or puts in maintenance starts leaving service.
func (m *Manager) RegisterDatanode(id DatanodeID, now time.Time, storages ...StorageReport) error {
	if id.UUID == "" || id.IPAddr == "" {
		return fmt.Errorf("%w: datanode registration without uuid or ip (%q, %q)", ErrUnregistered, id.UUID, id.IPAddr)
	}
	if m.verdict(id).Disallowed {
		return &DisallowedError{Addr: id.XferAddr()}
	}
	m.nowHint = now
	addr := id.XferAddr()
	same := m.nodes[id.UUID]
	if other := m.byXfer[addr]; other != nil && other != same {
		m.removeDatanode(other)
	}
	if same == nil {
		same = &datanode{id: id, rack: m.resolve(id.IPAddr), lastUpdate: now, lastRoll: now}
		m.nodes[id.UUID] = same
		m.order = append(m.order, same)
		m.rackAdd(same.rack, 1)
	} else {
		if !same.dead {
			m.rackAdd(same.rack, -1)
			// A live node registering again has restarted (or lost the
			// NameNode for a while): the copies it was sending or
			// receiving are gone with its old process.
			m.forgetCopiesOf(id.UUID)
			same.scheduled, same.prevScheduled = 0, 0
		}
		wasDead := same.dead
		m.unindexAddr(same)
		same.id = id
		same.rack = m.resolve(id.IPAddr)
		same.dead = false
		same.lastUpdate = now
		m.rackAdd(same.rack, 1)
		if wasDead {
			// A node that died in maintenance kept its replicas; alive
			// again, they count as live copies from now on.
			for _, st := range same.storages {
				m.refreshAll(st)
			}
		}
	}
	same.reported = false // its blocks are known again after its next report
	m.byXfer[addr] = same
	m.byIP[id.IPAddr] = append(m.byIP[id.IPAddr], same)
	m.updateStorages(same, storages)
	m.applyVerdict(same, now, nil)
	m.checkSafeMode(now)
	return nil
}

func (m *Manager) rackAdd(rack string, d int) {
	if n := m.rackNodes[rack] + d; n > 0 {
		m.rackNodes[rack] = n
	} else {
		delete(m.rackNodes, rack)
	}
}

func (m *Manager) unindexAddr(dn *datanode) {
	if m.byXfer[dn.id.XferAddr()] == dn {
		delete(m.byXfer, dn.id.XferAddr())
	}
	list := m.byIP[dn.id.IPAddr]
	for i, d := range list {
		if d == dn {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(m.byIP, dn.id.IPAddr)
	} else {
		m.byIP[dn.id.IPAddr] = list
	}
}

// removeDatanode forgets a descriptor entirely.
func (m *Manager) removeDatanode(dn *datanode) {
	if !dn.dead {
		m.markDead(dn)
	}
	for _, st := range dn.storages { // those a node in maintenance kept
		m.dropStorageReplicas(st)
		m.removeStorage(st)
	}
	m.untrack(dn)
	m.unindexAddr(dn)
	delete(m.nodes, dn.id.UUID)
	for i, d := range m.order {
		if d == dn {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
}

// markDead drops the node's pending work and every replica of the node,
// except on a node in maintenance: its replicas stay in the blocks map, not
// live and not readable, so that its outage causes no re-replication.
func (m *Manager) markDead(dn *datanode) {
	dn.dead = true
	m.rackAdd(dn.rack, -1)
	if dn.admin.maintenance() {
		for _, st := range dn.storages {
			m.refreshAll(st)
		}
	} else {
		for _, st := range dn.storages {
			m.dropStorageReplicas(st)
		}
	}
	dn.transfers, dn.invList, dn.invSet, dn.invReady = nil, nil, nil, nil
	dn.scheduled, dn.prevScheduled = 0, 0
	m.forgetCopiesOf(dn.id.UUID)
}

// forgetCopiesOf drops the pending copies a node was to receive or send: it
// died or restarted, so they will never arrive. Forgetting them now rather
// than at the pending timeout (Hadoop waits the full
// dfs.namenode.reconstruction.pending.timeout-sec) lets the next
// ComputeWork schedule the blocks again.
func (m *Manager) forgetCopiesOf(uuid string) {
	for id, p := range m.pending {
		kept := p.copies[:0]
		for _, c := range p.copies {
			if c.target != uuid && c.source != uuid {
				kept = append(kept, c)
			}
		}
		if len(kept) == len(p.copies) {
			continue
		}
		p.copies = kept
		if len(kept) == 0 {
			delete(m.pending, id)
		}
		if b := m.blocks.get(id); b != nil {
			m.refresh(b)
		}
	}
}

// refreshAll refreshes every block with a replica on st (refresh may
// drop replicas from st's list, so the list is copied first).
func (m *Manager) refreshAll(st *storage) {
	for _, ix := range append([]uint32(nil), st.blocks...) {
		m.refresh(m.blocks.at(ix))
	}
}

func (m *Manager) dropStorageReplicas(st *storage) {
	for len(st.blocks) > 0 {
		b := m.blocks.at(st.blocks[len(st.blocks)-1])
		i := m.find(b, st)
		if i < 0 { // cannot happen: the two lists are kept in step
			st.blocks = st.blocks[:len(st.blocks)-1]
			continue
		}
		m.removeReplicaAt(b, i)
		m.refresh(b)
	}
}

func (m *Manager) storage(dn *datanode, id string) *storage {
	for _, st := range dn.storages {
		if st.id == id {
			return st
		}
	}
	st := &storage{id: id, dn: dn}
	m.addStorage(st)
	dn.storages = append(dn.storages, st)
	return st
}

func (m *Manager) updateStorages(dn *datanode, reports []StorageReport) {
	for _, r := range reports {
		st := m.storage(dn, r.StorageID)
		st.capacity, st.dfsUsed, st.remaining, st.bpUsed, st.typ = r.Capacity, r.DfsUsed, r.Remaining, r.BlockPoolUsed, r.StorageType
		if r.Failed && !st.failed {
			st.failed = true
			m.dropStorageReplicas(st)
		} else if !r.Failed {
			st.failed = false
		}
	}
}

// Heartbeat records a DataNode's heartbeat (sendHeartbeat) and returns the
// commands queued for it: at most ReplicationMaxStreams − xmitsInProgress
// transfers and at most BlocksInvalidatePerHeartbeat deletions. An unknown or
// dead node gets ErrUnregistered; the caller answers DNA_REGISTER.
func (m *Manager) Heartbeat(uuid string, reports []StorageReport, xceivers, xmitsInProgress int, now time.Time) ([]Command, error) {
	dn := m.nodes[uuid]
	if dn == nil || dn.dead {
		return nil, fmt.Errorf("%w: %s", ErrUnregistered, uuid)
	}
	m.nowHint = now
	if dn.disallowed {
		// refreshNodes took it out of the include list: it is cut off.
		m.markDead(dn)
		m.checkSafeMode(now)
		return nil, &DisallowedError{Addr: dn.id.XferAddr()}
	}
	dn.lastUpdate = now
	dn.xceivers, dn.xmits = xceivers, xmitsInProgress
	m.updateStorages(dn, reports)
	if now.Sub(dn.lastRoll) >= scheduledRoll {
		dn.prevScheduled, dn.scheduled, dn.lastRoll = dn.scheduled, 0, now
	}
	if m.standby {
		return nil, nil // a standby gives no orders
	}
	var cmds []Command
	// Transfers of blocks deleted since they were scheduled are dropped.
	live := dn.transfers[:0]
	for _, t := range dn.transfers {
		if m.blocks.get(t.Block.ID) != nil {
			live = append(live, t)
		}
	}
	clear(dn.transfers[len(live):])
	dn.transfers = live
	maxStreams := m.cfg.ReplicationMaxStreams
	if dn.admin == DecommissionInProgress || dn.admin == EnteringMaintenance {
		maxStreams = m.cfg.ReplicationMaxStreamsHardLimit // its replicas are being replaced
	}
	if n := maxStreams - xmitsInProgress; n > 0 && len(dn.transfers) > 0 {
		n = min(n, len(dn.transfers))
		for _, t := range dn.transfers[:n] {
			cmds = append(cmds, t)
		}
		dn.transfers = append(dn.transfers[:0], dn.transfers[n:]...)
	}
	for _, r := range dn.recoveries {
		cmds = append(cmds, r)
	}
	dn.recoveries = dn.recoveries[:0]
	if dn.bandwidth > 0 {
		cmds = append(cmds, BalancerBandwidth{Bandwidth: dn.bandwidth})
		dn.bandwidth = 0
	}
	if len(dn.invReady) > 0 {
		n := min(len(dn.invReady), m.cfg.BlocksInvalidatePerHeartbeat)
		blks := make([]Block, n)
		copy(blks, dn.invReady)
		dn.invReady = append(dn.invReady[:0], dn.invReady[n:]...)
		cmds = append(cmds, Invalidate{Blocks: blks})
	}
	return cmds, nil
}

func (m *Manager) isStale(dn *datanode, now time.Time) bool {
	return now.Sub(dn.lastUpdate) > m.cfg.StaleInterval
}

// CheckHeartbeats declares dead every node silent for longer than
// Config.DeadInterval, removes its replicas (queueing the blocks that fall
// short) and returns the nodes it declared dead.
func (m *Manager) CheckHeartbeats(now time.Time) []DatanodeID {
	m.nowHint = now
	var dead []DatanodeID
	limit := m.cfg.DeadInterval()
	for _, dn := range m.order {
		if !dn.dead && now.Sub(dn.lastUpdate) > limit {
			m.markDead(dn)
			dead = append(dead, dn.id)
		}
	}
	if dead != nil {
		m.checkSafeMode(now)
	}
	return dead
}

func (m *Manager) info(dn *datanode, now time.Time) DatanodeInfo {
	in := DatanodeInfo{
		ID: dn.id, Location: dn.rack, LastUpdate: dn.lastUpdate, Xceivers: dn.xceivers,
		AdminState: dn.admin, Dead: dn.dead, Stale: !dn.dead && m.isStale(dn, now),
		MaintenanceExpire: dn.maintUntil, LastBlockReport: dn.lastReport,
	}
	if dn.lv != nil {
		in.Leaving = dn.lv.status
	}
	for _, st := range dn.storages {
		in.NumBlocks += len(st.blocks)
		in.Storages = append(in.Storages, StorageReport{StorageID: st.id, Capacity: st.capacity, DfsUsed: st.dfsUsed,
			Remaining: st.remaining, BlockPoolUsed: st.bpUsed, Failed: st.failed, StorageType: st.typ})
		if st.failed || dn.dead {
			continue
		}
		in.Capacity += st.capacity
		in.DfsUsed += st.dfsUsed
		in.Remaining += st.remaining
		in.BlockPoolUsed += st.bpUsed
	}
	in.NonDfsUsed = max(0, in.Capacity-in.DfsUsed-in.Remaining)
	return in
}

// DatanodeReport lists nodes of the given kind in registration order
// (getDatanodeReport, dfsadmin -report). Nodes the host files no longer
// let in are left out, as Hadoop does.
func (m *Manager) DatanodeReport(kind ReportKind, now time.Time) []DatanodeInfo {
	var out []DatanodeInfo
	for _, dn := range m.order {
		var want bool
		switch kind {
		case ReportAll:
			want = true
		case ReportLive:
			want = !dn.dead
		case ReportDead:
			want = dn.dead
		case ReportDecommissioning:
			want = dn.admin == DecommissionInProgress
		case ReportEnteringMaintenance:
			want = dn.admin == EnteringMaintenance
		case ReportInMaintenance:
			want = dn.admin == InMaintenance
		}
		if want && !dn.disallowed {
			out = append(out, m.info(dn, now))
		}
	}
	return out
}

// NumLiveDatanodes is the number of registered nodes not declared dead.
func (m *Manager) NumLiveDatanodes() int {
	n := 0
	for _, dn := range m.order {
		if !dn.dead {
			n++
		}
	}
	return n
}

// Stats returns the cluster figures of getFsStats and the NameNode metrics.
// Capacity, used and remaining sum the live nodes' healthy storages.
func (m *Manager) Stats(now time.Time) Stats {
	s := Stats{TotalBlocks: int64(m.blocks.len()), CorruptBlocks: m.corruptBlocks}
	for _, dn := range m.order {
		switch {
		case dn.admin == DecommissionInProgress:
			s.DecommissioningNodes++
		case dn.admin == Decommissioned && dn.dead:
			s.DecomDeadNodes++
		case dn.admin == Decommissioned:
			s.DecomLiveNodes++
		case dn.admin == EnteringMaintenance:
			s.EnteringMaintenance++
		case dn.admin == InMaintenance && dn.dead:
			s.InMaintenanceDeadNodes++
		case dn.admin == InMaintenance:
			s.InMaintenanceLiveNodes++
		}
		if dn.dead {
			s.DeadNodes++
			continue
		}
		s.LiveNodes++
		if m.isStale(dn, now) {
			s.StaleNodes++
		}
		in := m.info(dn, now)
		s.Capacity += in.Capacity
		s.Used += in.DfsUsed
		s.Remaining += in.Remaining
		s.PendingDeletion += int64(len(dn.invSet) + len(dn.invReady))
	}
	s.MissingBlocks = int64(m.needed.count(levelCorrupt))
	s.UnderReplicated = int64(m.needed.size()) - s.MissingBlocks
	s.HighestPriorityLowRedundancy = int64(m.needed.count(levelHighest))
	s.MissingReplOneBlocks = int64(m.needed.countOnes(levelCorrupt))
	for _, n := range m.futureBytes {
		s.BlocksInFuture += n
	}
	for _, p := range m.pending {
		s.PendingReplication += int64(len(p.copies))
	}
	return s
}

// findNode resolves a writer or reader given as a DataNode UUID, an IP
// address, "ip:xferPort" or a hostname to a live descriptor, or nil.
func (m *Manager) findNode(who string) *datanode {
	if who == "" {
		return nil
	}
	if dn := m.nodes[who]; dn != nil && !dn.dead {
		return dn
	}
	if dn := m.byXfer[who]; dn != nil && !dn.dead {
		return dn
	}
	for _, dn := range m.byIP[who] {
		if !dn.dead {
			return dn
		}
	}
	for _, dn := range m.order {
		if !dn.dead && dn.id.Hostname == who {
			return dn
		}
	}
	return nil
}

// SetBalancerBandwidth queues DNA_BALANCERBANDWIDTHUPDATE with bytesPerSec
// for the next heartbeat of every live node (ClientProtocol
// setBalancerBandwidth). A node that misses it, dead or registering
// later, keeps its configured bandwidth.
func (m *Manager) SetBalancerBandwidth(bytesPerSec int64) error {
	if bytesPerSec <= 0 {
		return fmt.Errorf("%w: balancer bandwidth %d", ErrBadConfig, bytesPerSec)
	}
	for _, dn := range m.order {
		if !dn.dead {
			dn.bandwidth = bytesPerSec
		}
	}
	return nil
}
