package blockmgmt

import "time"

// minBlocksForWrite is how many blocks of free space a target needs
// (HdfsServerConstants.MIN_BLOCKS_FOR_WRITE).
const minBlocksForWrite = 1

// staleWriteRatio: when more than this share of live nodes is stale, placement
// stops avoiding stale nodes (dfs.namenode.write.stale.datanode.ratio).
const staleWriteRatio = 0.5

// placer carries one placement decision (BlockPlacementPolicyDefault).
type placer struct {
	m          *Manager
	now        time.Time
	blockSize  int64
	avoidStale bool
	maxLoad    float64
	maxPerRack int
	excluded   map[*datanode]bool
	perRack    map[string]int
	results    []*datanode // chosen, pre-chosen replicas first
	chosenNew  []*datanode // chosen by this call
}

func (p *placer) good(dn *datanode) bool {
	if dn.dead || dn.admin != Normal || p.excluded[dn] {
		return false
	}
	if p.avoidStale && p.m.isStale(dn, p.now) {
		return false
	}
	if p.maxLoad > 0 && float64(dn.xceivers) > p.maxLoad {
		return false
	}
	if p.perRack[dn.rack] >= p.maxPerRack {
		return false
	}
	need := p.blockSize * minBlocksForWrite
	var remaining int64
	for _, st := range dn.storages {
		if !st.failed && st.remaining >= need {
			remaining += st.remaining
		}
	}
	scheduled := p.blockSize * int64(dn.scheduled+dn.prevScheduled)
	return need <= remaining-scheduled
}

func (p *placer) add(dn *datanode, isNew bool) {
	p.results = append(p.results, dn)
	p.excluded[dn] = true
	p.perRack[dn.rack]++
	if isNew {
		p.chosenNew = append(p.chosenNew, dn)
	}
}

// chooseRandom adds up to k good nodes from scope, uniformly at random, and
// returns how many it added.
func (p *placer) chooseRandom(k int, scope func(*datanode) bool) int {
	if k <= 0 {
		return 0
	}
	var cands []*datanode
	for _, dn := range p.m.order {
		if (scope == nil || scope(dn)) && p.good(dn) {
			cands = append(cands, dn)
		}
	}
	added := 0
	for added < k && len(cands) > 0 {
		i := p.m.rnd.IntN(len(cands))
		dn := cands[i]
		cands[i] = cands[len(cands)-1]
		cands = cands[:len(cands)-1]
		if !p.good(dn) { // the rack may have filled up
			continue
		}
		p.add(dn, true)
		added++
	}
	return added
}

func onRack(rack string) func(*datanode) bool {
	return func(dn *datanode) bool { return dn.rack == rack }
}

func offRack(rack string) func(*datanode) bool {
	return func(dn *datanode) bool { return dn.rack != rack }
}

// chooseLocalRack adds one node on ref's rack, else anywhere.
func (p *placer) chooseLocalRack(ref *datanode) bool {
	if ref != nil && p.chooseRandom(1, onRack(ref.rack)) == 1 {
		return true
	}
	return p.chooseRandom(1, nil) == 1
}

// chooseRemoteRack adds one node off ref's rack, else on it.
func (p *placer) chooseRemoteRack(ref *datanode) bool {
	if p.chooseRandom(1, offRack(ref.rack)) == 1 {
		return true
	}
	return p.chooseRandom(1, onRack(ref.rack)) == 1
}

// ChooseTargets picks up to n DataNodes for a new block written from writer
// (a client address or a DataNode UUID/address), following Hadoop's default
// policy: the writer's node when it is a usable DataNode (else a random one),
// the second replica on another rack, the third on the second's rack, the
// rest at random with at most (total−1)/racks + 2 per rack. Favored nodes are
// taken first when usable. Nodes that are dead, excluded, out of space
// (remaining minus blocks already scheduled below one block), overloaded
// (xceivers above ConsiderLoadFactor × the average) or, with
// AvoidStaleForWrite, stale are skipped. It returns fewer than n nodes when no
// more fit, in pipeline order (each the nearest to the one before).
func (m *Manager) ChooseTargets(n int, writer string, excluded, favored []DatanodeID, blockSize int64, now time.Time) []DatanodeID {
	var ex []*datanode
	for _, id := range excluded {
		if dn := m.nodes[id.UUID]; dn != nil {
			ex = append(ex, dn)
		} else if dn := m.byXfer[id.XferAddr()]; dn != nil {
			ex = append(ex, dn)
		}
	}
	var fav []*datanode
	for _, id := range favored {
		if dn := m.nodes[id.UUID]; dn != nil {
			fav = append(fav, dn)
		} else if dn := m.byXfer[id.XferAddr()]; dn != nil {
			fav = append(fav, dn)
		}
	}
	w := m.findNode(writer)
	chosen := m.chooseTargets(n, w, nil, ex, fav, blockSize, now, true)
	out := make([]DatanodeID, len(chosen))
	for i, dn := range chosen {
		out[i] = dn.id
	}
	return out
}

// chooseTargets is the policy shared by new blocks and reconstruction:
// existing are replicas already placed (they count for the rack rules).
func (m *Manager) chooseTargets(n int, writer *datanode, existing, excluded, favored []*datanode, blockSize int64, now time.Time, newBlock bool) []*datanode {
	if n <= 0 {
		return nil
	}
	live, stale := 0, 0
	var load int64
	for _, dn := range m.order {
		if dn.dead || dn.admin != Normal {
			continue
		}
		live++
		load += int64(dn.xceivers)
		if m.isStale(dn, now) {
			stale++
		}
	}
	avoidStale := m.cfg.AvoidStaleForWrite && float64(stale) <= staleWriteRatio*float64(live)
	for {
		p := &placer{
			m: m, now: now, blockSize: blockSize, avoidStale: avoidStale,
			excluded: make(map[*datanode]bool), perRack: make(map[string]int),
		}
		if m.cfg.ConsiderLoad && live > 0 {
			p.maxLoad = m.cfg.ConsiderLoadFactor * float64(load) / float64(live)
		}
		total := n + len(existing)
		racks := len(m.rackNodes)
		p.maxPerRack = total
		if racks > 1 && total > 1 {
			p.maxPerRack = (total-1)/racks + 2
			if p.maxPerRack == total {
				p.maxPerRack--
			}
		}
		for _, dn := range excluded {
			p.excluded[dn] = true
		}
		for _, dn := range existing {
			p.add(dn, false)
		}
		m.place(p, n, writer, favored, newBlock)
		if len(p.chosenNew) == n || !avoidStale {
			return pipeline(writer, p.chosenNew)
		}
		avoidStale = false // retry, stale nodes allowed
	}
}

func (m *Manager) place(p *placer, n int, writer *datanode, favored []*datanode, newBlock bool) {
	want := func() int { return n - len(p.chosenNew) }
	for _, dn := range favored {
		if want() > 0 && p.good(dn) {
			p.add(dn, true)
		}
	}
	if want() > 0 && len(p.results) == 0 {
		switch {
		case writer != nil && p.good(writer):
			p.add(writer, true)
		case writer != nil:
			p.chooseLocalRack(writer)
		default:
			p.chooseRandom(1, nil)
		}
	}
	if want() > 0 && len(p.results) == 1 {
		p.chooseRemoteRack(p.results[0])
	}
	if want() > 0 && len(p.results) == 2 {
		r0, r1 := p.results[0], p.results[1]
		switch {
		case r0.rack == r1.rack:
			p.chooseRemoteRack(r0)
		case newBlock:
			p.chooseLocalRack(r1)
		default:
			ref := writer
			if ref == nil {
				ref = r0
			}
			p.chooseLocalRack(ref)
		}
	}
	p.chooseRandom(want(), nil)
}

// nodeDistance is the network distance between two nodes (0 for the same).
func nodeDistance(a, b *datanode) int {
	if a == b {
		return 0
	}
	return distance(a.rack, b.rack)
}

// pipeline orders targets so each is the nearest remaining one to the one
// before, starting from the writer (or the first target).
func pipeline(writer *datanode, ts []*datanode) []*datanode {
	if len(ts) <= 1 {
		return ts
	}
	prev := writer
	start := 0
	if prev == nil {
		prev, start = ts[0], 1
	}
	for i := start; i < len(ts); i++ {
		best := i
		for j := i + 1; j < len(ts); j++ {
			if nodeDistance(prev, ts[j]) < nodeDistance(prev, ts[best]) {
				best = j
			}
		}
		ts[i], ts[best] = ts[best], ts[i]
		prev = ts[i]
	}
	return ts
}
