// Package plan is the balancer's decision logic, a pure core: which
// DataNodes send and receive how many bytes in one iteration (Plan), and
// which block moves next, to which node, through which proxy (ChooseMove).
// Package balancer drives it: it reads the DataNodes and their blocks from
// the NameNode and moves the chosen replicas over DataTransferProtocol.
//
// # One iteration (Hadoop's Balancer.init and chooseStorageGroups)
//
// Each node's utilization is used ÷ capacity in percent (used is DFS used,
// or the block pool's used space with the blockpool policy); the average is
// the cluster's total used ÷ total capacity. A node is
//
//	over-utilized    utilization > average + threshold
//	above average    average < utilization ≤ average + threshold
//	below average    average − threshold ≤ utilization ≤ average
//	under-utilized   utilization < average − threshold
//
// and may move (send or receive) up to |utilization − average| of its
// capacity, capped by dfs.balancer.max-size-to-move and, to receive, by its
// remaining space (counted only when at least one block fits). The cluster
// is balanced when no node is over- or under-utilized; otherwise the bytes
// left to move are the larger of the excess above average + threshold and
// the shortfall below average − threshold.
//
// Pairs are chosen on the same rack first, then anywhere: over-utilized
// sources to under-utilized targets, then over-utilized to below-average,
// then above-average sources to under-utilized targets; each pair moves the
// smaller of what the two may still move.
//
// # One move (Dispatcher.chooseNextMove and isGoodBlockCandidate)
//
// For a source, its tasks are tried in order: a target with a free move
// slot, and the first block of the source's list that the target does not
// hold, that was not moved recently, and whose move does not reduce the
// number of racks holding it; the proxy (the node the target copies from)
// is a holder on the target's rack, else any holder, with a free slot.
package plan

import (
	"sort"
	"strconv"
)

// Node is one DataNode as the balancer sees it.
type Node struct {
	UUID     string
	IP       string
	Hostname string
	XferPort int
	Rack     string
	// Capacity, Used and Remaining in bytes; Used is DFS used (datanode
	// policy) or block pool used (blockpool policy).
	Capacity, Used, Remaining int64
}

// Class is where a node stands against the average.
type Class uint8

// Classes, in Hadoop's order.
const (
	OverUtilized Class = iota
	AboveAverage
	BelowAverage
	UnderUtilized
)

func (c Class) String() string {
	return [...]string{"over-utilized", "above-average", "below-average", "underutilized"}[c]
}

// Params are the iteration's settings.
type Params struct {
	// Threshold is -threshold, in percent of capacity (1 to 100).
	Threshold float64
	// MaxSizeToMove is dfs.balancer.max-size-to-move: what a node may move
	// in one iteration at most.
	MaxSizeToMove int64
	// BlockSize is dfs.blocksize: remaining space below it counts as none.
	BlockSize int64
	// Source, when set, says which nodes may send (-source); a node above
	// average that may not is left out.
	Source func(Node) bool
	// SortTopNodes (-sortTopNodes) schedules the most utilized
	// over-utilized nodes first.
	SortTopNodes bool
}

// Group is a node taking part in an iteration.
type Group struct {
	Node
	Utilization float64 // percent
	Class       Class
	// MaxSize is what the node may send or receive in this iteration;
	// Scheduled what the pairs have taken of it.
	MaxSize, Scheduled int64
}

func (g *Group) available() int64 { return g.MaxSize - g.Scheduled }

// Task is an amount for a source to send to a target.
type Task struct {
	Source, Target string // UUIDs
	Size           int64
}

// Iteration is the plan of one iteration.
type Iteration struct {
	Average float64 // percent
	// BytesLeftToMove is what the cluster is from balanced: 0 when it is.
	BytesLeftToMove int64
	// BytesToMove is what the tasks schedule (Hadoop's "bytes being
	// moved").
	BytesToMove int64
	Groups      []Group // by class, each in input order
	Tasks       []Task  // in the order they were decided
}

// Plan classifies the nodes and pairs senders with receivers. Nodes
// without capacity take no part. The order of nodes decides among equals
// (the caller shuffles, as Hadoop does).
func Plan(nodes []Node, p Params) Iteration {
	var it Iteration
	var capSum, usedSum int64
	for _, n := range nodes {
		if n.Capacity > 0 {
			capSum += n.Capacity
			usedSum += n.Used
		}
	}
	if capSum == 0 {
		return it
	}
	it.Average = float64(usedSum) * 100 / float64(capSum)
	var classes [4][]*Group
	var over, under int64
	for _, n := range nodes {
		if n.Capacity <= 0 {
			continue
		}
		util := float64(n.Used) * 100 / float64(n.Capacity)
		if util >= it.Average && p.Source != nil && !p.Source(n) {
			continue
		}
		diff := util - it.Average
		beyond := abs(diff) - p.Threshold
		remaining := n.Remaining
		if remaining < p.BlockSize {
			remaining = 0
		}
		g := &Group{Node: n, Utilization: util, MaxSize: maxSizeToMove(n.Capacity, remaining, diff, p.MaxSizeToMove)}
		switch {
		case diff > 0 && beyond > 0:
			g.Class = OverUtilized
			over += percentBytes(beyond, n.Capacity)
		case diff > 0:
			g.Class = AboveAverage
		case beyond > 0:
			g.Class = UnderUtilized
			under += percentBytes(beyond, n.Capacity)
		default:
			g.Class = BelowAverage
		}
		classes[g.Class] = append(classes[g.Class], g)
	}
	if p.SortTopNodes {
		sort.SliceStable(classes[OverUtilized], func(i, j int) bool {
			return classes[OverUtilized][i].Utilization > classes[OverUtilized][j].Utilization
		})
	}
	it.BytesLeftToMove = max(over, under)
	for _, list := range classes {
		for _, g := range list {
			it.Groups = append(it.Groups, *g)
		}
	}
	if it.BytesLeftToMove == 0 {
		return it
	}
	sameRack := func(a, b *Group) bool { return a.Rack == b.Rack }
	anyNode := func(a, b *Group) bool { return true }
	for _, match := range []func(a, b *Group) bool{sameRack, anyNode} {
		// Over-utilized → under-utilized, over-utilized → below average,
		// under-utilized ← above average.
		classes[OverUtilized], classes[UnderUtilized] = it.pair(classes[OverUtilized], classes[UnderUtilized], match, true)
		classes[OverUtilized], classes[BelowAverage] = it.pair(classes[OverUtilized], classes[BelowAverage], match, true)
		classes[UnderUtilized], classes[AboveAverage] = it.pair(classes[UnderUtilized], classes[AboveAverage], match, false)
	}
	// Report the groups with what was scheduled on them.
	sched := map[string]int64{}
	for _, t := range it.Tasks {
		sched[t.Source] += t.Size
		sched[t.Target] += t.Size
		it.BytesToMove += t.Size
	}
	for i := range it.Groups {
		it.Groups[i].Scheduled = sched[it.Groups[i].UUID]
	}
	return it
}

// pair gives each group of groups as many candidates as it can take,
// removing the groups and candidates that have nothing left to move.
// groupsSend says whether groups are the senders.
func (it *Iteration) pair(groups, cands []*Group, match func(a, b *Group) bool, groupsSend bool) ([]*Group, []*Group) {
	keptGroups := groups[:0]
	for _, g := range groups {
		for g.available() > 0 {
			var chosen *Group
			kept := cands[:0]
			for i, c := range cands {
				if chosen != nil {
					kept = append(kept, cands[i:]...)
					break
				}
				if c.available() <= 0 {
					continue // nothing left: dropped
				}
				if match(c, g) {
					chosen = c
				}
				kept = append(kept, c)
			}
			cands = kept
			if chosen == nil {
				break
			}
			size := min(g.available(), chosen.available())
			g.Scheduled += size
			chosen.Scheduled += size
			t := Task{Source: g.UUID, Target: chosen.UUID, Size: size}
			if !groupsSend {
				t.Source, t.Target = chosen.UUID, g.UUID
			}
			it.Tasks = append(it.Tasks, t)
		}
		if g.available() > 0 {
			keptGroups = append(keptGroups, g)
		}
	}
	kept := cands[:0]
	for _, c := range cands {
		if c.available() > 0 {
			kept = append(kept, c)
		}
	}
	return keptGroups, kept
}

// maxSizeToMove is Hadoop's computeMaxSize2Move.
func maxSizeToMove(capacity, remaining int64, diff float64, limit int64) int64 {
	size := percentBytes(abs(diff), capacity)
	if diff < 0 {
		size = min(remaining, size)
	}
	return min(limit, size)
}

func percentBytes(pct float64, capacity int64) int64 { return int64(pct * float64(capacity) / 100) }

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// Matches reports whether a host list (-include, -exclude, -source)
// names the node: by host name or IP address, alone or with the transfer
// port, as Hadoop's balancer matches.
func Matches(list map[string]bool, n Node) bool {
	port := ":" + strconv.Itoa(n.XferPort)
	for _, h := range []string{n.Hostname, n.IP} {
		if h != "" && (list[h] || list[h+port]) {
			return true
		}
	}
	return false
}
