package plan

// Block is a replica a source may send: a block of getBlocks with the
// nodes holding it (UUIDs) that take part in the iteration.
type Block struct {
	ID, GenStamp, Size int64
	Holders            []string
	// Type is the storage type (StorageTypeProto number, 0 for DISK) of
	// the source's replica: a move keeps it.
	Type int32
}

// Pending is a task with what is still to send.
type Pending struct {
	Target string
	Left   int64
}

// Cluster is what ChooseMove needs to know about the nodes.
type Cluster struct {
	// Rack of a node ("" when unknown).
	Rack func(uuid string) string
	// Free reports whether a node can take one more move now, as target or
	// proxy (fewer than dfs.datanode.balance.max.concurrent.moves in
	// flight, and not resting after a failed move).
	Free func(uuid string) bool
	// Moved reports whether a block was moved recently
	// (dfs.balancer.movedWinWidth) or is being moved.
	Moved func(id int64) bool
}

// Move is one replica to move: the target copies Block from Proxy, and the
// NameNode then drops the source's replica.
type Move struct {
	Block  Block
	Target string
	Proxy  string
	// Task is the index of the task in the pending list; BlockIndex the
	// block's index in the source's list.
	Task, BlockIndex int
}

// ChooseMove picks the source's next move, or reports that none is
// possible now.
func ChooseMove(source string, tasks []Pending, blocks []Block, c Cluster) (Move, bool) {
	for ti, t := range tasks {
		if t.Left <= 0 || !c.Free(t.Target) {
			continue
		}
		for bi, b := range blocks {
			if !GoodCandidate(source, t.Target, b, c) {
				continue
			}
			if proxy, ok := chooseProxy(t.Target, b, c); ok {
				return Move{Block: b, Target: t.Target, Proxy: proxy, Task: ti, BlockIndex: bi}, true
			}
		}
	}
	return Move{}, false
}

// GoodCandidate reports whether moving b from source to target is allowed:
// the target does not hold it, it was not moved recently, and the move
// keeps the number of racks holding it.
func GoodCandidate(source, target string, b Block, c Cluster) bool {
	if c.Moved(b.ID) {
		return false
	}
	held := false
	for _, h := range b.Holders {
		if h == target {
			return false
		}
		held = held || h == source
	}
	return held && !reducesRacks(source, target, b, c)
}

// reducesRacks: the target's rack already holds a replica while the
// source's replica is the only one on its rack.
func reducesRacks(source, target string, b Block, c Cluster) bool {
	srcRack, tgtRack := c.Rack(source), c.Rack(target)
	if srcRack == tgtRack {
		return false
	}
	onTargetRack := false
	for _, h := range b.Holders {
		if c.Rack(h) == tgtRack {
			onTargetRack = true
		}
	}
	if !onTargetRack {
		return false // a new rack
	}
	for _, h := range b.Holders {
		if h != source && c.Rack(h) == srcRack {
			return false // the source's rack keeps a replica
		}
	}
	return true
}

// chooseProxy picks the holder the target copies from: one on the
// target's rack, else any, that is free.
func chooseProxy(target string, b Block, c Cluster) (string, bool) {
	rack := c.Rack(target)
	for _, h := range b.Holders {
		if c.Rack(h) == rack && c.Free(h) {
			return h, true
		}
	}
	for _, h := range b.Holders {
		if c.Free(h) {
			return h, true
		}
	}
	return "", false
}
