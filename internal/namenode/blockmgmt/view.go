package blockmgmt

import (
	"fmt"
	"time"
)

// View is the read-only face of a Manager that the NameNode's plans get:
// a plan decides from the block map but changes it only through the ops it
// returns (applied by the one apply path) and the follow-ups it asks for.
// Manager implements it.
type View interface {
	Config() Config
	BlockInfo(id int64) (BlockInfo, bool)
	IsComplete(id int64) bool
	IsMinimallyReplicated(id int64) bool
	CommitWouldComplete(blk Block) bool
	Holders(id int64, now time.Time) ([]DatanodeID, []bool)
	GetBlockLocations(ids []int64, reader string, now time.Time) ([]LocatedBlock, error)
	ChooseTargets(n int, writer string, excluded, favored []DatanodeID, blockSize int64, now time.Time) []DatanodeID
	ChooseStorageTargets(n int, writer string, excluded, favored []DatanodeID, blockSize int64, policyID uint8, now time.Time) []Target
	ChoosePipeline(replication int, writer string, excluded, favored []DatanodeID, blockSize int64, policyID uint8, now time.Time) ([]Target, error)
	CheckRecovery(id, newGenStamp int64) error
	CheckCommit(blk Block) error
	NumLiveDatanodes() int
	InSafeMode() bool
}

var _ View = (*Manager)(nil)

// CommitWouldComplete reports whether committing blk (a client's final
// stamp and length for a block under construction) would leave it with
// MinReplication good replicas, without committing it: complete() decides
// with it whether the file can close.
func (m *Manager) CommitWouldComplete(blk Block) bool {
	b := m.blocks.get(blk.ID)
	if b == nil {
		return false
	}
	if b.state() == Complete || b.state() == Committed {
		live, _ := m.counts(b)
		return live >= m.cfg.MinReplication
	}
	live := 0
	for i := range m.reps(b) {
		r := &m.reps(b)[i]
		if r.flags&rCorrupt != 0 || r.state != Finalized || m.stOf(*r).failed || m.stOf(*r).dn.dead {
			continue
		}
		if rb, ok := m.ucReported(b.ID, m.stOf(*r)); ok && (rb.GenStamp != blk.GenStamp || rb.NumBytes != blk.NumBytes) {
			continue // would be marked corrupt by the commit
		}
		live++
	}
	return live >= m.cfg.MinReplication
}

// ucReported is what st reported for block id while it was under
// construction.
func (m *Manager) ucReported(id int64, st *storage) (Block, bool) {
	rb, ok := Block{}, false
	for _, u := range m.ucReps[id] {
		if u.st == st {
			rb, ok = u.blk, true
		}
	}
	return rb, ok
}

// CompleteBlock makes blk, of file fileID, COMPLETE with its final stamp
// and length (replay of OP_CLOSE, and the live close that logged it): a
// block still under construction is committed first, so that finalized
// replicas that disagree with it are marked corrupt; an unknown block is
// recorded.
func (m *Manager) CompleteBlock(fileID int64, blk Block, replication int) error {
	if b := m.blocks.get(blk.ID); b != nil && m.fileOf(b) == fileID && (b.state() == UnderConstruction || b.state() == UnderRecovery) && blk.GenStamp >= b.GenStamp {
		b.NumBytes, b.GenStamp = blk.NumBytes, blk.GenStamp
		b.setState(Committed)
		m.explained(b.ID)
		m.verifyReplicas(b)
	}
	return m.AddBlock(fileID, blk, replication, Complete, nil)
}

// CheckCommit reports whether blk (a client's final stamp and length) may be
// committed, changing nothing: the block is known, its stamp is not older
// than the recorded one, and a block already committed or complete is
// committed again only with the same values.
func (m *Manager) CheckCommit(blk Block) error {
	b := m.blocks.get(blk.ID)
	if b == nil {
		return fmt.Errorf("%w: blk_%d", ErrUnknownBlock, blk.ID)
	}
	switch b.state() {
	case Complete, Committed:
		if b.NumBytes != blk.NumBytes || b.GenStamp != blk.GenStamp {
			return fmt.Errorf("%w: commit of %s blk_%d_%d len %d, recorded blk_%d_%d len %d",
				ErrBadState, b.state(), blk.ID, blk.GenStamp, blk.NumBytes, b.ID, b.GenStamp, b.NumBytes)
		}
		return nil
	}
	if blk.GenStamp < b.GenStamp {
		return fmt.Errorf("%w: commit of blk_%d_%d, recorded stamp %d", ErrGenStamp, blk.ID, blk.GenStamp, b.GenStamp)
	}
	return nil
}
