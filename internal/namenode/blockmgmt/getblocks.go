package blockmgmt

import "fmt"

// BlockWithLocations is one block of a getBlocks answer: the block and the
// nodes holding a valid replica of it, with the storage of each.
type BlockWithLocations struct {
	Block
	Holders      []DatanodeID
	StorageIDs   []string
	StorageTypes []int32
}

// GetBlocks lists COMPLETE blocks with a replica on the node (NamenodeProtocol
// getBlocks, the balancer's source of blocks to move), skipping blocks
// smaller than minBlockSize and blocks marked deleted, until their sizes
// add up to at least size or the node has no more. The walk over the node's blocks starts at a random
// one and wraps around, so that successive calls spread over the node.
// Locations leave out corrupt replicas, replicas queued for deletion and
// dead nodes. An unknown node is ErrUnregistered.
func (m *Manager) GetBlocks(node DatanodeID, size, minBlockSize int64) ([]BlockWithLocations, error) {
	dn := m.nodes[node.UUID]
	if dn == nil {
		dn = m.byXfer[node.XferAddr()]
	}
	if dn == nil {
		return nil, fmt.Errorf("%w: Datanode %s not found.", ErrUnregistered, node.XferAddr())
	}
	total := 0
	for _, st := range dn.storages {
		total += len(st.blocks)
	}
	if total == 0 {
		return nil, nil
	}
	at := func(i int) *blockInfo {
		for _, st := range dn.storages {
			if i < len(st.blocks) {
				return m.blocks.at(st.blocks[i])
			}
			i -= len(st.blocks)
		}
		return nil
	}
	start := m.rnd.IntN(total)
	var out []BlockWithLocations
	var sum int64
	for k := 0; k < total && sum < size; k++ {
		b := at((start + k) % total)
		if b == nil || b.deleted() || b.state() != Complete || b.NumBytes < minBlockSize {
			continue
		}
		bl := BlockWithLocations{Block: b.Block}
		for i := range m.reps(b) {
			r := &m.reps(b)[i]
			if r.flags&rCorrupt != 0 || r.state != Finalized || m.stOf(*r).failed || m.stOf(*r).dn.dead {
				continue
			}
			if _, gone := m.stOf(*r).dn.invSet[b.ID]; gone {
				continue
			}
			bl.Holders = append(bl.Holders, m.stOf(*r).dn.id)
			bl.StorageIDs = append(bl.StorageIDs, m.stOf(*r).id)
			bl.StorageTypes = append(bl.StorageTypes, typeOf(m.stOf(*r)))
		}
		if len(bl.Holders) == 0 {
			continue
		}
		out = append(out, bl)
		sum += b.NumBytes
	}
	return out, nil
}
