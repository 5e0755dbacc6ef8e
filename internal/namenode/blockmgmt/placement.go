package blockmgmt

import (
	"slices"
	"time"
)

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
	// need counts the replicas still wanted per storage type, and order
	// is the order of preference among those types; need is nil when any
	// storage will do.
	need     map[int32]int
	order    []int32
	chosenSt []*storage // the storage of each of chosenNew
}

// fits reports whether st can take a new replica of the block on its own:
// not failed, room for the block, and of a type still wanted.
func (p *placer) fits(st *storage) bool {
	if st.failed || st.remaining < p.blockSize*minBlocksForWrite {
		return false
	}
	return p.need == nil || p.need[typeOf(st)] > 0
}

// pickStorage chooses the storage of dn that takes the replica: of the
// most preferred wanted type, the one with the most room.
func (p *placer) pickStorage(dn *datanode) *storage {
	var best *storage
	if p.need == nil {
		for _, st := range dn.storages {
			if p.fits(st) && (best == nil || st.remaining > best.remaining) {
				best = st
			}
		}
		return best
	}
	for _, t := range p.order {
		if p.need[t] <= 0 {
			continue
		}
		for _, st := range dn.storages {
			if typeOf(st) == t && p.fits(st) && (best == nil || st.remaining > best.remaining) {
				best = st
			}
		}
		if best != nil {
			p.need[t]--
			return best
		}
	}
	return nil
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
		if p.fits(st) {
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
		p.chosenSt = append(p.chosenSt, p.pickStorage(dn))
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

// Target is where one new replica goes: a DataNode and the storage on it
// (StorageID empty when the node reported none).
type Target struct {
	DatanodeID
	StorageID   string
	StorageType int32
}

// targetIDs returns the DataNodes of ts.
func TargetIDs(ts []Target) []DatanodeID {
	out := make([]DatanodeID, len(ts))
	for i, t := range ts {
		out[i] = t.DatanodeID
	}
	return out
}

// ChooseTargets picks up to n DataNodes for a new block written from writer
// with no storage-type preference; see ChooseStorageTargets.
func (m *Manager) ChooseTargets(n int, writer string, excluded, favored []DatanodeID, blockSize int64, now time.Time) []DatanodeID {
	return TargetIDs(m.chooseNew(n, writer, excluded, favored, blockSize, StoragePolicy{}, now))
}

// ChooseStorageTargets picks up to n DataNodes, and a storage on each, for
// a new block written from writer, following Hadoop's default policy: the
// writer's node when it is a usable DataNode (else a random one), the second
// replica on another rack, the third on the second's rack, the rest at
// random with at most (total−1)/racks + 2 per rack. Favored nodes are taken
// first when usable. Nodes that are dead, excluded, out of space (remaining
// minus blocks already scheduled below one block), overloaded (xceivers above
// ConsiderLoadFactor × the average) or, with AvoidStaleForWrite, stale are
// skipped. Each replica goes to a storage of the type the storage policy
// (Config.StoragePolicy of policyID) asks for it, or of its creation
// fallback when no node has room on that type. It returns fewer than n
// targets when no more fit, in pipeline order (each the nearest to the one
// before).
func (m *Manager) ChooseStorageTargets(n int, writer string, excluded, favored []DatanodeID, blockSize int64, policyID uint8, now time.Time) []Target {
	return m.chooseNew(n, writer, excluded, favored, blockSize, m.policy(policyID), now)
}

// policy resolves a storage policy id (the zero policy without a resolver).
func (m *Manager) policy(id uint8) StoragePolicy {
	if m.cfg.StoragePolicy == nil {
		return StoragePolicy{}
	}
	return m.cfg.StoragePolicy(id)
}

func (m *Manager) chooseNew(n int, writer string, excluded, favored []DatanodeID, blockSize int64, pol StoragePolicy, now time.Time) []Target {
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
	return m.toTargets(m.chooseTargets(n, w, nil, nil, ex, fav, blockSize, pol, now, true))
}

func (m *Manager) toTargets(chosen []chosenTarget) []Target {
	out := make([]Target, len(chosen))
	for i, c := range chosen {
		out[i] = Target{DatanodeID: c.dn.id}
		if c.st != nil {
			out[i].StorageID, out[i].StorageType = c.st.id, typeOf(c.st)
		}
	}
	return out
}

// chosenTarget is a node chosen for a replica and the storage on it (nil
// when the node reported no storage).
type chosenTarget struct {
	dn *datanode
	st *storage
}

// maxPlacementRounds bounds the fallback rounds of one placement: each
// round either places every replica or marks at least one more storage
// type unavailable, and there are few types.
const maxPlacementRounds = 8

// chooseTargets is the policy shared by new blocks and reconstruction:
// existing are replicas already placed (they count for the rack rules) and
// existingTypes their storage types (they count against the policy's).
// Replicas whose storage type no node can take are tried again on the
// policy's fallback types.
func (m *Manager) chooseTargets(n int, writer *datanode, existing []*datanode, existingTypes []int32, excluded, favored []*datanode, blockSize int64, pol StoragePolicy, now time.Time, newBlock bool) []chosenTarget {
	if n <= 0 {
		return nil
	}
	total := n + len(existing)
	if len(pol.Types) == 0 {
		return m.placeRound(n, total, writer, existing, excluded, favored, blockSize, nil, now, newBlock)
	}
	var chosen []chosenTarget
	unavailable := map[int32]bool{}
	for range maxPlacementRounds {
		placedTypes := append([]int32(nil), existingTypes...)
		have := append([]*datanode(nil), existing...)
		for _, c := range chosen {
			have = append(have, c.dn)
			if c.st != nil {
				placedTypes = append(placedTypes, typeOf(c.st))
			}
		}
		types := pol.chooseTypes(total, placedTypes, unavailable, newBlock)
		if k := n - len(chosen); len(types) > k {
			types = types[:k]
		}
		if len(types) == 0 {
			break
		}
		got := m.placeRound(len(types), total, writer, have, excluded, favored, blockSize, types, now, newBlock)
		chosen = append(chosen, got...)
		if len(got) == len(types) {
			break
		}
		// The types left wanted found no node: try their fallbacks.
		left := slices.Clone(types)
		for _, c := range got {
			if c.st == nil {
				continue
			}
			if i := slices.Index(left, typeOf(c.st)); i >= 0 {
				left = slices.Delete(left, i, i+1)
			}
		}
		grew := false
		for _, t := range left {
			if !unavailable[t] {
				unavailable[t], grew = true, true
			}
		}
		if !grew {
			break
		}
	}
	if len(chosen) <= 1 {
		return chosen
	}
	// Rounds append: order the whole set as one pipeline.
	dns := make([]*datanode, len(chosen))
	st := make(map[*datanode]*storage, len(chosen))
	for i, c := range chosen {
		dns[i], st[c.dn] = c.dn, c.st
	}
	dns = pipeline(writer, dns)
	for i, dn := range dns {
		chosen[i] = chosenTarget{dn: dn, st: st[dn]}
	}
	return chosen
}

// placeRound places n replicas (of the given storage types, or anywhere
// when types is nil) in one pass of the default policy, total being the
// block's whole replica count for the rack rules.
func (m *Manager) placeRound(n, total int, writer *datanode, existing, excluded, favored []*datanode, blockSize int64, types []int32, now time.Time, newBlock bool) []chosenTarget {
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
		if types != nil {
			p.need = make(map[int32]int, len(types))
			for _, t := range types {
				if p.need[t] == 0 {
					p.order = append(p.order, t)
				}
				p.need[t]++
			}
		}
		if m.cfg.ConsiderLoad && live > 0 {
			p.maxLoad = m.cfg.ConsiderLoadFactor * float64(load) / float64(live)
		}
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
			st := make(map[*datanode]*storage, len(p.chosenNew))
			for i, dn := range p.chosenNew {
				st[dn] = p.chosenSt[i]
			}
			out := make([]chosenTarget, 0, len(p.chosenNew))
			for _, dn := range pipeline(writer, p.chosenNew) {
				out = append(out, chosenTarget{dn: dn, st: st[dn]})
			}
			return out
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
