package blockmgmt

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

func (m *Manager) clipRepl(n int) int16 {
	if n <= 0 {
		n = m.cfg.DefaultReplication
	}
	n = min(max(n, 1), m.cfg.MaxReplication, 1<<15-1)
	return int16(n)
}

// AddBlock records a block of file fileID. The allocation path calls it with
// UnderConstruction and the pipeline targets ChooseTargets returned (after the
// allocation op is logged); image and edit-log loading call it with Complete
// (closed files) or UnderConstruction (the last block of an open file). For an
// id already recorded for the same file it updates length, generation stamp,
// replication and (forward only) state, which is what replaying OP_UPDATE_BLOCKS
// and OP_CLOSE needs; for another file it fails with ErrBlockExists.
func (m *Manager) AddBlock(fileID int64, blk Block, replication int, state BlockUCState, targets []DatanodeID) error {
	if b := m.blocks.get(blk.ID); b != nil {
		if f := m.fileOf(b); f != fileID {
			return fmt.Errorf("%w: blk_%d belongs to inode %d, not %d", ErrBlockExists, blk.ID, f, fileID)
		}
		b.NumBytes, b.GenStamp = blk.NumBytes, blk.GenStamp
		b.setRepl(m.clipRepl(replication))
		if state == Complete || (state == Committed && b.state() != Complete) {
			b.setState(state)
		}
		if b.state() == Complete {
			delete(m.expected, b.ID)
		}
		m.explained(b.ID)
		m.refresh(b)
		return nil
	}
	b := m.blocks.add(blockInfo{Block: blk})
	m.setFile(b, fileID)
	b.setRepl(m.clipRepl(replication))
	b.setState(state)
	if state != Complete && len(targets) > 0 {
		m.SetPipeline(blk.ID, targets)
	}
	m.explained(b.ID)
	m.refresh(b)
	return nil
}

// SetPipeline records the pipeline a client writes block id through (addBlock
// targets, or the nodes of a rebuilt pipeline): they hold the block before
// they report it, and a new block counts against their free space. Pipelines
// are not in the edit log; a standby learns the holders from reports.
func (m *Manager) SetPipeline(id int64, targets []DatanodeID) {
	b := m.blocks.get(id)
	if b == nil || b.state() == Complete {
		return
	}
	_, had := m.expected[id]
	uuids := make([]string, 0, len(targets))
	for _, t := range targets {
		uuids = append(uuids, t.UUID)
		if dn := m.nodes[t.UUID]; dn != nil && !dn.dead && !had {
			dn.scheduled++
		}
	}
	m.expected[id] = uuids
}

// UpdateBlock gives a block under construction or recovery a new generation
// stamp and length (replay of OP_UPDATE_BLOCKS after updatePipeline or a
// recovery). Unfinished replicas with an older stamp are dropped: the new
// pipeline's nodes report the block again under the new stamp. A complete
// block, or one with the same stamp, only takes the length.
func (m *Manager) UpdateBlock(blk Block) {
	b := m.blocks.get(blk.ID)
	if b == nil {
		return
	}
	if blk.GenStamp > b.GenStamp && b.state() != Complete {
		for i := len(m.reps(b)) - 1; i >= 0; i-- {
			if r := m.reps(b)[i]; r.flags&rCorrupt == 0 && r.state != Finalized {
				m.removeReplicaAt(b, i)
			}
		}
	}
	if blk.GenStamp > b.GenStamp {
		b.GenStamp = blk.GenStamp
	}
	b.NumBytes = blk.NumBytes
	m.explained(b.ID)
	m.refresh(b)
}

// MoveToFile makes blocks part of file fileID with its replication (replay
// of OP_CONCAT_DELETE: the sources' blocks join the target).
func (m *Manager) MoveToFile(ids []int64, fileID int64, replication int) {
	r := m.clipRepl(replication)
	for _, id := range ids {
		if b := m.blocks.get(id); b != nil {
			m.setFile(b, fileID)
			b.setRepl(r)
			m.refresh(b)
		}
	}
}

// ChoosePipeline chooses the pipeline for a new block of a file with the
// given replication and effective storage policy (addBlock); it changes
// nothing. Fewer usable nodes than
// MinReplication fail with ErrNotEnoughTargets; otherwise up to replication
// targets are returned in pipeline order. The caller logs the block, applies
// it (AddBlock) and then records the pipeline (SetPipeline).
func (m *Manager) ChoosePipeline(replication int, writer string, excluded, favored []DatanodeID, blockSize int64, policyID uint8, now time.Time) ([]Target, error) {
	n := int(m.clipRepl(replication))
	targets := m.ChooseStorageTargets(n, writer, excluded, favored, blockSize, policyID, now)
	if len(targets) < m.cfg.MinReplication {
		return targets, fmt.Errorf("%w: could only be written to %d of the %d minReplication nodes; %d datanode(s) running and %d excluded",
			ErrNotEnoughTargets, len(targets), m.cfg.MinReplication, m.NumLiveDatanodes(), len(excluded))
	}
	return targets, nil
}

// BlockInfo returns what the manager knows about a block.
func (m *Manager) BlockInfo(id int64) (BlockInfo, bool) {
	b := m.blocks.get(id)
	if b == nil {
		return BlockInfo{}, false
	}
	live, corrupt := m.counts(b)
	return BlockInfo{Block: b.Block, FileID: m.fileOf(b), Replication: int(b.repl()), State: b.state(), Live: live, Corrupt: corrupt, Deleted: b.deleted()}, true
}

// NumBlocks is the size of the blocks map.
func (m *Manager) NumBlocks() int { return m.blocks.len() }

// IsMinimallyReplicated reports whether the block has at least MinReplication
// good FINALIZED replicas (matching generation stamp, and length once
// committed).
func (m *Manager) IsMinimallyReplicated(id int64) bool {
	b := m.blocks.get(id)
	if b == nil {
		return false
	}
	live, _ := m.counts(b)
	return live >= m.cfg.MinReplication
}

// IsComplete reports whether the block is COMPLETE.
func (m *Manager) IsComplete(id int64) bool {
	b := m.blocks.get(id)
	return b != nil && b.state() == Complete
}

// CommitBlock records the client's final length and generation stamp of a
// block under construction (addBlock of the next block, complete): the block
// becomes COMMITTED, and COMPLETE at once when it already has MinReplication
// good replicas. Finalized replicas that disagree with the committed block are
// marked corrupt. Committing a COMMITTED or COMPLETE block again with the same
// values is a no-op. It returns the resulting state.
func (m *Manager) CommitBlock(blk Block) (BlockUCState, error) {
	b := m.blocks.get(blk.ID)
	if b == nil {
		return 0, fmt.Errorf("%w: blk_%d", ErrUnknownBlock, blk.ID)
	}
	switch b.state() {
	case Complete, Committed:
		if b.NumBytes != blk.NumBytes || b.GenStamp != blk.GenStamp {
			return b.state(), fmt.Errorf("%w: commit of %s blk_%d_%d len %d, recorded blk_%d_%d len %d",
				ErrBadState, b.state(), blk.ID, blk.GenStamp, blk.NumBytes, b.ID, b.GenStamp, b.NumBytes)
		}
		return b.state(), nil
	}
	if blk.GenStamp < b.GenStamp {
		return b.state(), fmt.Errorf("%w: commit of blk_%d_%d, recorded stamp %d", ErrGenStamp, blk.ID, blk.GenStamp, b.GenStamp)
	}
	b.NumBytes, b.GenStamp = blk.NumBytes, blk.GenStamp
	b.setState(Committed)
	m.explained(b.ID)
	m.verifyReplicas(b)
	m.refresh(b)
	return b.state(), nil
}

// verifyReplicas checks the replicas reported while the block was under
// construction against the committed block: a finalized replica with another
// stamp or length is corrupt; an unfinished one with an older stamp is dropped.
func (m *Manager) verifyReplicas(b *blockInfo) {
	reps := m.ucReps[b.ID]
	delete(m.ucReps, b.ID)
	for i := len(m.reps(b)) - 1; i >= 0; i-- {
		r := &m.reps(b)[i]
		if r.flags&rCorrupt != 0 {
			continue
		}
		rb, ok := Block{}, false
		for _, u := range reps {
			if u.st == m.stOf(*r) {
				rb, ok = u.blk, true
			}
		}
		if !ok {
			continue
		}
		switch {
		case r.state == Finalized && (rb.GenStamp != b.GenStamp || rb.NumBytes != b.NumBytes):
			if m.standby {
				m.postpone(m.stOf(*r).dn, m.stOf(*r), rb, Finalized, "") // see reported
				continue
			}
			m.markCorrupt(b, i, rb)
		case r.state != Finalized && rb.GenStamp < b.GenStamp:
			m.removeReplicaAt(b, i)
		}
	}
}

// ForceComplete makes a block COMPLETE whatever its replicas (replay of
// OP_CLOSE, commitBlockSynchronization closing a recovered file).
func (m *Manager) ForceComplete(id int64) error {
	b := m.blocks.get(id)
	if b == nil {
		return fmt.Errorf("%w: blk_%d", ErrUnknownBlock, id)
	}
	b.setState(Complete)
	delete(m.expected, id)
	m.explained(b.ID)
	m.refresh(b)
	return nil
}

// UpdatePipeline records a new generation stamp, length and target list for a
// block under construction (updatePipeline after a pipeline failure).
// Unfinished replicas with an older stamp are dropped: the new pipeline's nodes
// report the block again under the new stamp.
func (m *Manager) UpdatePipeline(id, newGenStamp, numBytes int64, targets []DatanodeID) error {
	b := m.blocks.get(id)
	if b == nil {
		return fmt.Errorf("%w: blk_%d", ErrUnknownBlock, id)
	}
	if b.state() != UnderConstruction && b.state() != UnderRecovery {
		return fmt.Errorf("%w: update pipeline of %s blk_%d", ErrBadState, b.state(), id)
	}
	if newGenStamp <= b.GenStamp {
		return fmt.Errorf("%w: new stamp %d not above %d for blk_%d", ErrGenStamp, newGenStamp, b.GenStamp, id)
	}
	b.GenStamp, b.NumBytes = newGenStamp, numBytes
	for i := len(m.reps(b)) - 1; i >= 0; i-- {
		if r := m.reps(b)[i]; r.flags&rCorrupt == 0 && r.state != Finalized {
			m.removeReplicaAt(b, i)
		}
	}
	uuids := make([]string, 0, len(targets))
	for _, t := range targets {
		uuids = append(uuids, t.UUID)
	}
	m.expected[id] = uuids
	m.explained(b.ID)
	m.refresh(b)
	return nil
}

// EachBlock calls fn for every block of the map, in id order.
func (m *Manager) EachBlock(fn func(BlockInfo)) {
	ids := make([]int64, 0, m.blocks.len())
	m.blocks.each(func(b *blockInfo) { ids = append(ids, b.ID) })
	slices.Sort(ids)
	for _, id := range ids {
		info, _ := m.BlockInfo(id)
		fn(info)
	}
}

// Replicas returns the DataNodes (UUIDs, sorted) that hold a good
// finalized replica of block id, as the reports told.
func (m *Manager) Replicas(id int64) []string {
	b := m.blocks.get(id)
	if b == nil {
		return nil
	}
	var out []string
	for _, r := range m.reps(b) {
		if r.flags&rCorrupt == 0 && r.state == Finalized {
			out = append(out, m.stOf(r).dn.id.UUID)
		}
	}
	slices.Sort(out)
	return out
}

// RemoveBlocks forgets blocks of deleted files and queues their replicas for
// deletion on every holder. Unknown ids are ignored.
func (m *Manager) RemoveBlocks(ids []int64) {
	m.RemoveBlocksFor(ids, nil)
}

// RemoveBlocksFor is RemoveBlocks of a prefix of ids: it stops when over
// says so and returns how many ids it handled, at least one when ids is
// not empty.
func (m *Manager) RemoveBlocksFor(ids []int64, over Over) int {
	for k, id := range ids {
		if over.done(k) {
			return k
		}
		b := m.blocks.get(id)
		if b == nil {
			continue
		}
		for i := len(m.reps(b)) - 1; i >= 0; i-- {
			m.invalidateReplicaAt(b, i)
		}
		m.forget(b)
	}
	return len(ids)
}

// MarkDeleted marks the blocks of deleted files that wait for
// RemoveBlocks (the NameNode removes a big delete's blocks a slice at a
// time): they leave every counter and queue at once, nothing schedules
// copies of them, and a report of one of their replicas orders the
// replica deleted instead of recording it, as for a block not in the map
// (Hadoop's BlockInfo.isDeleted). It stops when over says so and returns
// how many ids it handled, at least one when ids is not empty. Unknown ids
// are ignored.
func (m *Manager) MarkDeleted(ids []int64, over Over) int {
	for k, id := range ids {
		if over.done(k) {
			return k
		}
		b := m.blocks.get(id)
		if b == nil || b.deleted() {
			continue
		}
		m.leaveCounters(b)
		b.set(mFile, mFileBits, deletedFileID)
	}
	return len(ids)
}

// live is the block id in the map, nil when it is not there or is marked
// deleted: what a report's replica is judged against.
func (m *Manager) live(id int64) *blockInfo {
	b := m.blocks.get(id)
	if b != nil && b.deleted() {
		return nil
	}
	return b
}

// Over ends a slice of work done under the caller's lock: asked every
// clockStride items (never before the first), it returns true once the
// slice has held the lock long enough. A nil Over never ends a slice.
type Over func() bool

// clockStride is how many items a slice handles between two questions to
// its Over (a reading of the clock costs about as much as one item).
const clockStride = 64

// done reports whether the slice must end before item k.
func (o Over) done(k int) bool {
	return o != nil && k > 0 && k%clockStride == 0 && o()
}

// SetReplication changes the expected replication of blocks (setReplication):
// missing replicas are queued for reconstruction and excess ones for deletion
// (no command goes out before safe mode ends).
func (m *Manager) SetReplication(ids []int64, n int) {
	m.SetReplicationFor(ids, n, nil)
}

// SetReplicationFor is SetReplication of a prefix of ids: it stops when
// over says so and returns how many ids it handled, at least one when ids
// is not empty.
func (m *Manager) SetReplicationFor(ids []int64, n int, over Over) int {
	r := m.clipRepl(n)
	for k, id := range ids {
		if over.done(k) {
			return k
		}
		if b := m.blocks.get(id); b != nil {
			b.setRepl(r)
			m.refresh(b)
		}
	}
	return len(ids)
}

// distance is the network distance between two rack paths plus the node hop
// on each side: 2 within a rack, 4 across racks under one parent, and so on.
func distance(a, b string) int {
	if a == b {
		return 2
	}
	pa := strings.Split(strings.Trim(a, "/"), "/")
	pb := strings.Split(strings.Trim(b, "/"), "/")
	c := 0
	for c < len(pa) && c < len(pb) && pa[c] == pb[c] {
		c++
	}
	return len(pa) - c + len(pb) - c + 2
}

// GetBlockLocations returns each block with its holders sorted for the reader
// (a DataNode UUID, IP address or hostname, or a client address the topology
// resolves): the reader's own node first, then its rack, then farther racks,
// random among equals; decommissioning nodes (and stale ones when
// AvoidStaleForRead) last. Corrupt replicas are left out unless every replica
// is corrupt, in which case they are all returned with Corrupt set. A block
// with no reported replica yet returns its pipeline targets.
func (m *Manager) GetBlockLocations(ids []int64, reader string, now time.Time) ([]LocatedBlock, error) {
	rdn := m.findNode(reader)
	rrack := DefaultRack
	if rdn != nil {
		rrack = rdn.rack
	} else if reader != "" {
		rrack = m.resolve(reader)
	}
	out := make([]LocatedBlock, 0, len(ids))
	for _, id := range ids {
		b := m.blocks.get(id)
		if b == nil {
			return out, fmt.Errorf("%w: blk_%d", ErrUnknownBlock, id)
		}
		lb := LocatedBlock{Block: b.Block, UnderConstruction: b.state() != Complete}
		var good, bad []*storage
		for i := range m.reps(b) {
			r := &m.reps(b)[i]
			if m.stOf(*r).failed || m.stOf(*r).dn.dead {
				continue
			}
			if r.flags&rCorrupt != 0 {
				bad = append(bad, m.stOf(*r))
				continue
			}
			if r.state != Finalized && !lb.UnderConstruction {
				continue
			}
			good = append(good, m.stOf(*r))
		}
		type loc struct {
			dn   *datanode
			stID string
			typ  int32
			key  int
		}
		var locs []loc
		if len(good) == 0 && len(bad) > 0 {
			lb.Corrupt = true
			good = bad
		}
		for _, st := range good {
			locs = append(locs, loc{dn: st.dn, stID: st.id, typ: typeOf(st)})
		}
		if len(locs) == 0 && lb.UnderConstruction {
			for _, u := range m.expected[id] {
				if dn := m.nodes[u]; dn != nil && !dn.dead {
					locs = append(locs, loc{dn: dn, typ: TypeDisk})
				}
			}
		}
		m.rnd.Shuffle(len(locs), func(i, j int) { locs[i], locs[j] = locs[j], locs[i] })
		for i := range locs {
			dn := locs[i].dn
			switch {
			case dn == rdn:
				locs[i].key = 0
			default:
				locs[i].key = distance(rrack, dn.rack)
			}
			if dn.admin != Normal || (m.cfg.AvoidStaleForRead && m.isStale(dn, now)) {
				locs[i].key += 1 << 20
			}
		}
		slices.SortStableFunc(locs, func(a, b loc) int { return a.key - b.key })
		for _, l := range locs {
			lb.Locations = append(lb.Locations, m.info(l.dn, now))
			lb.StorageIDs = append(lb.StorageIDs, l.stID)
			lb.StorageTypes = append(lb.StorageTypes, l.typ)
		}
		out = append(out, lb)
	}
	return out, nil
}
