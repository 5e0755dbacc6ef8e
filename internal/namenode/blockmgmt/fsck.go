package blockmgmt

import "time"

// FsckReplica is one reported replica of a block, as fsck shows it.
type FsckReplica struct {
	Node        DatanodeID
	Rack        string
	StorageID   string
	StorageType int32
	// State is what fsck -replicaDetails prints: LIVE, CORRUPT,
	// DECOMMISSIONED, DECOMMISSIONING, ENTERING_MAINTENANCE,
	// IN_MAINTENANCE, STALE_NODE.
	State string
}

// FsckBlock is what the block map knows of one block for fsck: its
// replicas counted as Hadoop's NumberReplicas counts them, and where they
// are.
type FsckBlock struct {
	Block
	Replication int
	State       BlockUCState
	// Live counts good FINALIZED replicas on live nodes in service (and,
	// for a block not yet complete, the replicas of its pipeline).
	Live            int
	Decommissioned  int
	Decommissioning int
	EnteringMaint   int
	InMaint         int
	Corrupt         int
	Stale           int // good replicas on stale nodes
	// AllCorrupt: the block has replicas and every one of them is
	// corrupt (a client reading it gets them marked corrupt).
	AllCorrupt bool
	// OneRack: every live replica is on one rack of a multi-rack cluster
	// (the placement policy is violated).
	OneRack  bool
	Replicas []FsckReplica
}

// Fsck reports block id for fsck; ok is false for a block the map does
// not hold.
func (m *Manager) Fsck(id int64, now time.Time) (FsckBlock, bool) {
	b := m.blocks.get(id)
	if b == nil {
		return FsckBlock{}, false
	}
	f := FsckBlock{Block: b.Block, Replication: int(b.repl()), State: b.state(), OneRack: m.oneRack(b)}
	usable := 0
	for i := range m.reps(b) {
		r := &m.reps(b)[i]
		if m.stOf(*r).failed || m.stOf(*r).dn.dead {
			continue
		}
		dn := m.stOf(*r).dn
		fr := FsckReplica{Node: dn.id, Rack: dn.rack, StorageID: m.stOf(*r).id, StorageType: m.stOf(*r).typ, State: "LIVE"}
		switch {
		case r.flags&rCorrupt != 0:
			f.Corrupt++
			fr.State = "CORRUPT"
		case r.state != Finalized && b.state() == Complete:
			continue // a stale or leftover copy of a complete block
		case r.state != Finalized:
			// A replica in the pipeline of a block still being written.
			f.Live++
		case dn.admin == Decommissioned:
			f.Decommissioned++
			fr.State = "DECOMMISSIONED"
		case dn.admin == DecommissionInProgress:
			f.Decommissioning++
			fr.State = "DECOMMISSIONING"
		case dn.admin == EnteringMaintenance:
			f.EnteringMaint++
			fr.State = "ENTERING_MAINTENANCE"
		case dn.admin == InMaintenance:
			f.InMaint++
			fr.State = "IN_MAINTENANCE"
		default:
			f.Live++
			if m.isStale(dn, now) {
				f.Stale++
				fr.State = "STALE_NODE"
			}
		}
		if fr.State != "CORRUPT" {
			usable++
		}
		f.Replicas = append(f.Replicas, fr)
	}
	f.AllCorrupt = usable == 0 && f.Corrupt > 0
	return f, true
}

// NumRacks is the number of racks with a live DataNode.
func (m *Manager) NumRacks() int { return len(m.rackNodes) }
