package blockmgmt

import (
	"fmt"
	"time"
)

// Holders returns the live nodes holding a replica of block id, or expected to
// (a pipeline's targets before they report), with whether each is stale —
// the candidates for a block recovery, in a stable order.
func (m *Manager) Holders(id int64, now time.Time) ([]DatanodeID, []bool) {
	b := m.blocks.get(id)
	if b == nil {
		return nil, nil
	}
	seen := map[string]bool{}
	var ids []DatanodeID
	var stale []bool
	add := func(uuid string) {
		dn := m.nodes[uuid]
		if dn == nil || dn.dead || seen[uuid] {
			return
		}
		seen[uuid] = true
		ids = append(ids, dn.id)
		stale = append(stale, m.isStale(dn, now))
	}
	for _, r := range m.reps(b) {
		if r.flags&rCorrupt == 0 {
			add(m.stOf(r).dn.id.UUID)
		}
	}
	for _, u := range m.expected[id] {
		add(u)
	}
	return ids, stale
}

// StartRecovery marks block id UNDER_RECOVERY with recoveryID as the generation
// stamp it will get, and queues the recovery on the primary (delivered with its
// next heartbeat). holders are the nodes the primary must ask.
func (m *Manager) StartRecovery(id, recoveryID int64, primary string, holders []DatanodeID, newLength int64) error {
	b := m.blocks.get(id)
	if b == nil {
		return fmt.Errorf("%w: blk_%d", ErrUnknownBlock, id)
	}
	dn := m.nodes[primary]
	if dn == nil || dn.dead {
		return fmt.Errorf("%w: primary %s", ErrUnregistered, primary)
	}
	if recoveryID <= b.GenStamp {
		return fmt.Errorf("%w: recovery id %d not above %d for blk_%d", ErrGenStamp, recoveryID, b.GenStamp, id)
	}
	b.setState(UnderRecovery)
	dn.recoveries = append(dn.recoveries, RecoverBlock{Block: b.Block, NewGenStamp: recoveryID, Holders: append([]DatanodeID(nil), holders...), NewLength: newLength})
	return nil
}

// StartCopyRecovery starts the recovery of a copy-on-truncate: block id
// (the new last block of a file, recorded by the truncate with no replica
// yet) is marked UNDER_RECOVERY, and the primary is asked to have every
// holder of block src (which a snapshot keeps) copy its first newLength
// bytes into a finalized replica of id with stamp recoveryID. holders are
// src's.
func (m *Manager) StartCopyRecovery(id, src, recoveryID int64, primary string, holders []DatanodeID, newLength int64) error {
	b := m.blocks.get(id)
	if b == nil {
		return fmt.Errorf("%w: blk_%d", ErrUnknownBlock, id)
	}
	s := m.blocks.get(src)
	if s == nil {
		return fmt.Errorf("%w: copy-on-truncate source blk_%d", ErrUnknownBlock, src)
	}
	dn := m.nodes[primary]
	if dn == nil || dn.dead {
		return fmt.Errorf("%w: primary %s", ErrUnregistered, primary)
	}
	if recoveryID < b.GenStamp || recoveryID <= s.GenStamp {
		return fmt.Errorf("%w: recovery id %d below blk_%d's %d or not above blk_%d's %d", ErrGenStamp, recoveryID, id, b.GenStamp, src, s.GenStamp)
	}
	if newLength < 0 || newLength > s.NumBytes {
		return fmt.Errorf("%w: copy %d bytes of blk_%d (%d bytes)", ErrBadState, newLength, src, s.NumBytes)
	}
	b.setState(UnderRecovery)
	dn.recoveries = append(dn.recoveries, RecoverBlock{Block: s.Block, NewGenStamp: recoveryID,
		Holders: append([]DatanodeID(nil), holders...), NewLength: newLength, NewBlockID: id})
	return nil
}

// CheckRecovery reports whether a recovery of block id may commit
// newGenStamp (it changes nothing).
func (m *Manager) CheckRecovery(id, newGenStamp int64) error {
	b := m.blocks.get(id)
	if b == nil {
		return fmt.Errorf("%w: blk_%d", ErrUnknownBlock, id)
	}
	if newGenStamp < b.GenStamp {
		return fmt.Errorf("%w: recovery stamp %d below blk_%d's %d", ErrGenStamp, newGenStamp, id, b.GenStamp)
	}
	return nil
}

// CommitRecovery records the outcome of a block recovery
// (commitBlockSynchronization) once the op carrying the block's new stamp
// and length is applied: its replicas are those of targets (replicas with
// older stamps are stale and get deleted when reported); unless closed, the
// block is COMMITTED, and COMPLETE once minimally replicated.
func (m *Manager) CommitRecovery(id, newGenStamp, newLength int64, targets []DatanodeID, closed bool) error {
	if err := m.CheckRecovery(id, newGenStamp); err != nil {
		return err
	}
	b := m.blocks.get(id)
	b.GenStamp, b.NumBytes = newGenStamp, newLength
	m.explained(id)
	// Keep the replicas already reported with the new stamp and length; the
	// others are stale (their next report marks them corrupt, and they are
	// deleted once enough good copies exist).
	reported := map[*storage]Block{}
	for _, r := range m.ucReps[id] {
		reported[r.st] = r.blk
	}
	for i := len(m.reps(b)) - 1; i >= 0; i-- {
		rb, ok := reported[m.stOf(m.reps(b)[i])]
		if !ok || rb.GenStamp != newGenStamp || rb.NumBytes != newLength || m.reps(b)[i].state != Finalized {
			m.removeReplicaAt(b, i)
		}
	}
	delete(m.ucReps, id)
	uuids := make([]string, 0, len(targets))
	for _, t := range targets {
		uuids = append(uuids, t.UUID)
	}
	if closed {
		delete(m.expected, id)
	} else {
		m.expected[id] = uuids
		b.setState(Committed)
	}
	m.refresh(b)
	return nil
}

// ReopenForAppend turns the COMPLETE last block of a file being appended to back
// into UNDER_CONSTRUCTION: its current replica holders become the pipeline, and
// replicas are expected to come back with a longer length (and possibly a new
// generation stamp via UpdatePipeline).
func (m *Manager) ReopenForAppend(id int64) error {
	b := m.blocks.get(id)
	if b == nil {
		return fmt.Errorf("%w: blk_%d", ErrUnknownBlock, id)
	}
	if b.state() == UnderConstruction {
		return nil
	}
	if b.state() != Complete && b.state() != Committed {
		return fmt.Errorf("%w: append to %s blk_%d", ErrBadState, b.state(), id)
	}
	var uuids []string
	for _, r := range m.reps(b) {
		if r.flags&rCorrupt == 0 && !m.stOf(r).dn.dead {
			uuids = append(uuids, m.stOf(r).dn.id.UUID)
		}
	}
	m.expected[id] = uuids
	b.setState(UnderConstruction)
	m.explained(id)
	m.refresh(b)
	return nil
}
