package blockmgmt

import "time"

// Decommissioning and maintenance (Hadoop's DatanodeAdminManager and its
// default monitor).
//
// The host files decide (HostPolicy, applied at registration and by
// SetHostPolicy on refreshNodes); the admin monitor (CheckAdmin, every
// dfs.namenode.decommission.interval) finishes what they start:
//
//	                 excluded                      every block on the node has
//	NORMAL ──────────────────────► DECOMMISSION_   its expected live replicas
//	  ▲  ▲   (a dead node goes      INPROGRESS ──► elsewhere, the node sent a
//	  │  │   straight to the end)       │          block report, and it is live
//	  │  │                              │          (or dead with nothing low
//	  │  │   no longer excluded         │          in redundancy anywhere)
//	  │  └──────────────────────────────┴──────────────► DECOMMISSIONED
//	  │
//	  │      IN_MAINTENANCE in the JSON hosts file, until T
//	  ├────────────────────────────► ENTERING_MAINTENANCE ──► IN_MAINTENANCE
//	  │   (a dead node goes            every block keeps          │
//	  │    straight to the end)        max(expected − replicas    │
//	  │                                in maintenance, dfs.       │
//	  │                                namenode.maintenance.      │
//	  │                                replication.min) live      │
//	  │                                replicas elsewhere         │
//	  └───────────── T passed, or no longer listed ──────────────┘
//
// A node leaving service keeps serving reads (its replicas are sorted last
// in block locations) and is the preferred source for the copies that
// replace its replicas, bounded only by the hard stream limit. Its replicas
// do not count as live: blocks are queued for reconstruction as if they were
// missing, at the highest priority when only out-of-service replicas are
// left. No new replica is placed on it. A node in maintenance that dies
// keeps its replicas in the blocks map (they are neither readable nor live)
// so that a short outage causes no re-replication; when its maintenance
// ends while it is still dead, they are dropped and the blocks queued.
// Returning to NORMAL removes the replicas that are now in excess.
//
// The monitor tracks at most DecommissionMaxTrackedNodes nodes at once (the
// rest wait in arrival order) and stops a pass between nodes once it has
// examined DecommissionBlocksPerInterval blocks; the next pass starts with
// the nodes it did not reach. A node's first pass looks
// at every block on it (queueing those that fall short); later passes look
// only at the blocks that were still short.

// HostVerdict is what the host files say about one DataNode.
type HostVerdict struct {
	// Disallowed: a non-empty include list (dfs.hosts) does not name the
	// node. It may not register, and a registered one is cut off at its
	// next heartbeat (Hadoop's DisallowedDatanodeException).
	Disallowed bool
	// Decommission: dfs.hosts.exclude names the node, or the JSON hosts
	// file gives it adminState DECOMMISSIONED.
	Decommission bool
	// MaintenanceUntil: the JSON hosts file puts the node IN_MAINTENANCE
	// until this time (far in the future for no expiry); zero when it does
	// not. Maintenance wins over decommissioning while it lasts.
	MaintenanceUntil time.Time
}

// HostPolicy answers for a node. A nil policy lets every node in and takes
// none out of service.
type HostPolicy func(DatanodeID) HostVerdict

// AdminChange is one admin-state transition of a node.
type AdminChange struct {
	ID       DatanodeID
	From, To AdminState
}

// leaving is the monitor's record of a node it tracks.
type leaving struct {
	tracked bool // being worked on; false: waiting in pending
	scanned bool // the first full pass over the node's blocks is done
	// short are the blocks on the node still without enough live replicas
	// elsewhere, as of the last pass, by id.
	short  []int64
	status LeavingStatus
}

// adminMonitor holds the nodes the monitor works on.
type adminMonitor struct {
	pending []*datanode // waiting, in arrival order
	tracked []*datanode
}

// SetHostPolicy installs the host files' answers and applies them to every
// known node (refreshNodes), returning the transitions that follows.
func (m *Manager) SetHostPolicy(p HostPolicy, now time.Time) []AdminChange {
	m.hosts = p
	m.nowHint = now
	var ch []AdminChange
	for _, dn := range m.order {
		ch = m.applyVerdict(dn, now, ch)
	}
	return ch
}

func (m *Manager) verdict(id DatanodeID) HostVerdict {
	if m.hosts == nil {
		return HostVerdict{}
	}
	return m.hosts(id)
}

// applyVerdict brings a node's admin state in line with the host files
// (DatanodeManager.refreshDatanodes).
func (m *Manager) applyVerdict(dn *datanode, now time.Time, ch []AdminChange) []AdminChange {
	v := m.verdict(dn.id)
	if v.Disallowed {
		dn.disallowed = true
		return ch
	}
	dn.disallowed = false
	switch {
	case !v.MaintenanceUntil.IsZero() && now.Before(v.MaintenanceUntil):
		return m.startMaintenance(dn, v.MaintenanceUntil, ch)
	case v.Decommission:
		return m.startDecommission(dn, ch)
	}
	ch = m.stopMaintenance(dn, ch)
	return m.stopDecommission(dn, ch)
}

func (m *Manager) startDecommission(dn *datanode, ch []AdminChange) []AdminChange {
	if dn.admin == DecommissionInProgress || dn.admin == Decommissioned {
		return ch
	}
	m.untrack(dn)
	if dn.dead {
		// Nothing to wait for: its replicas left with it.
		return m.setAdmin(dn, Decommissioned, ch)
	}
	ch = m.setAdmin(dn, DecommissionInProgress, ch)
	m.track(dn)
	return ch
}

func (m *Manager) stopDecommission(dn *datanode, ch []AdminChange) []AdminChange {
	if dn.admin != DecommissionInProgress && dn.admin != Decommissioned {
		return ch
	}
	m.untrack(dn)
	return m.setAdmin(dn, Normal, ch)
}

func (m *Manager) startMaintenance(dn *datanode, until time.Time, ch []AdminChange) []AdminChange {
	dn.maintUntil = until // a new expiry applies even to a node already in maintenance
	if dn.admin.maintenance() {
		return ch
	}
	m.untrack(dn)
	to := EnteringMaintenance
	if dn.dead {
		to = InMaintenance
	}
	ch = m.setAdmin(dn, to, ch)
	m.track(dn) // in maintenance too: the monitor ends it when it expires
	return ch
}

func (m *Manager) stopMaintenance(dn *datanode, ch []AdminChange) []AdminChange {
	if !dn.admin.maintenance() {
		return ch
	}
	m.untrack(dn)
	return m.setAdmin(dn, Normal, ch)
}

// setAdmin moves a node to another admin state and repairs what depends on
// it: a dead node leaving maintenance loses the replicas it kept, and a live
// node back in service has its blocks re-examined (excess replicas go).
func (m *Manager) setAdmin(dn *datanode, to AdminState, ch []AdminChange) []AdminChange {
	from := dn.admin
	if from == to {
		return ch
	}
	dn.admin = to
	if !to.maintenance() {
		dn.maintUntil = time.Time{}
	}
	ch = append(ch, AdminChange{ID: dn.id, From: from, To: to})
	switch {
	case from.maintenance() && !to.maintenance() && dn.dead:
		for _, st := range dn.storages {
			m.dropStorageReplicas(st)
		}
	case to == Normal && !dn.dead:
		m.refreshNode(dn)
	}
	return ch
}

// refreshNode re-examines every block with a replica on dn.
// It returns the ids of the blocks examined.
func (m *Manager) refreshNode(dn *datanode) []int64 {
	var ids []int64
	for _, st := range dn.storages {
		for _, ix := range st.blocks {
			ids = append(ids, m.blocks.at(ix).ID)
		}
	}
	for _, id := range ids {
		if b := m.blocks.get(id); b != nil {
			m.refresh(b)
		}
	}
	return ids
}

func (m *Manager) track(dn *datanode) {
	if dn.lv != nil {
		return
	}
	dn.lv = &leaving{}
	m.adm.pending = append(m.adm.pending, dn)
}

func (m *Manager) untrack(dn *datanode) {
	if dn.lv == nil {
		return
	}
	dn.lv = nil
	m.adm.pending = removeNode(m.adm.pending, dn)
	m.adm.tracked = removeNode(m.adm.tracked, dn)
}

func removeNode(list []*datanode, dn *datanode) []*datanode {
	for i, d := range list {
		if d == dn {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// CheckAdmin is one pass of the admin monitor (every
// dfs.namenode.decommission.interval): it ends expired maintenance, checks
// the blocks of the nodes leaving service and moves the nodes whose blocks
// are all safe elsewhere to DECOMMISSIONED or IN_MAINTENANCE. It returns the
// transitions.
func (m *Manager) CheckAdmin(now time.Time) []AdminChange {
	m.nowHint = now
	max := m.cfg.DecommissionMaxTrackedNodes
	for len(m.adm.pending) > 0 && (max == 0 || len(m.adm.tracked) < max) {
		dn := m.adm.pending[0]
		m.adm.pending = m.adm.pending[1:]
		dn.lv.tracked = true
		m.adm.tracked = append(m.adm.tracked, dn)
	}
	if len(m.adm.pending) == 0 {
		m.adm.pending = nil
	}
	var ch []AdminChange
	checked := 0
	kept := make([]*datanode, 0, len(m.adm.tracked))
	var rest []*datanode // not reached in this pass: they go first next time
	for i, dn := range m.adm.tracked {
		if checked >= m.cfg.DecommissionBlocksPerInterval {
			rest = m.adm.tracked[i:]
			break
		}
		keep := true
		switch {
		case dn.admin.maintenance() && !now.Before(dn.maintUntil):
			dn.lv, keep = nil, false
			ch = m.setAdmin(dn, Normal, ch)
		case dn.admin == DecommissionInProgress || dn.admin == EnteringMaintenance:
			checked += m.scanLeaving(dn)
			if len(dn.lv.short) == 0 && m.healthyForLeaving(dn) {
				if dn.admin == DecommissionInProgress {
					dn.lv, keep = nil, false
					ch = m.setAdmin(dn, Decommissioned, ch)
				} else {
					ch = m.setAdmin(dn, InMaintenance, ch)
				}
			}
		case dn.admin == InMaintenance:
			// Tracked only for the expiry.
		default:
			dn.lv, keep = nil, false
		}
		if keep {
			kept = append(kept, dn)
		}
	}
	m.adm.tracked = append(append(make([]*datanode, 0, len(rest)+len(kept)), rest...), kept...)
	return ch
}

// scanLeaving updates the node's list of blocks still short of live
// replicas elsewhere and returns how many blocks it examined.
func (m *Manager) scanLeaving(dn *datanode) int {
	lv := dn.lv
	var cands []int64
	if !lv.scanned {
		// First pass: every block on the node, re-examined for the new
		// admin state (which queues those that now fall short).
		lv.scanned = true
		cands = m.refreshNode(dn)
	} else {
		cands = lv.short
	}
	short := cands[:0:0]
	st := LeavingStatus{}
	for _, id := range cands {
		b := m.blocks.get(id)
		if b == nil || m.findOn(b, dn) < 0 {
			continue // deleted, or no longer on this node
		}
		c := m.count(b)
		if m.sufficient(b, c) {
			continue
		}
		short = append(short, id)
		st.UnderReplicated++
		if c.live == 0 {
			st.OutOfServiceOnly++
		}
		if b.state() != Complete {
			st.InOpenFiles++
		}
	}
	lv.short, lv.status = short, st
	return len(cands)
}

// sufficient reports whether a block on a node leaving service has enough
// live replicas elsewhere: the required number (see required), or, for a
// block still being written, the minimal replication.
func (m *Manager) sufficient(b *blockInfo, c replicaCount) bool {
	if b.state() != Complete {
		return c.live >= m.cfg.MinReplication
	}
	return c.live >= m.required(b, c)
}

// healthyForLeaving: a node may finish leaving service once it has sent a
// block report (else its blocks are not known) and is live, or is dead
// while nothing in the cluster is low in redundancy or being copied.
func (m *Manager) healthyForLeaving(dn *datanode) bool {
	if !dn.reported {
		return false
	}
	if !dn.dead {
		return true
	}
	return m.needed.size() == 0 && len(m.pending) == 0
}

// AdminState returns a node's admin state and whether the node is known.
func (m *Manager) AdminState(uuid string) (AdminState, bool) {
	dn := m.nodes[uuid]
	if dn == nil {
		return Normal, false
	}
	return dn.admin, true
}
