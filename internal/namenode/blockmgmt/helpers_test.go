package blockmgmt

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

const (
	gib = int64(1) << 30
	mib = int64(1) << 20
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// harness drives a Manager with a manual clock.
type harness struct {
	t     testing.TB
	m     *Manager
	now   time.Time
	dns   []DatanodeID
	byN   map[string]DatanodeID // name → id
	space map[string]int64      // name → remaining bytes
}

// newHarness builds a manager with nodes named "a1", "b2", ...: the letter is
// the rack ("/a", "/b").
func newHarness(t testing.TB, cfg Config, seed uint64, names ...string) *harness {
	t.Helper()
	racks := map[string]string{}
	cfg.Topology = func(ip string) string { return racks[ip] }
	h := &harness{t: t, now: t0, byN: map[string]DatanodeID{}, space: map[string]int64{}}
	h.m = New(cfg, rand.New(rand.NewPCG(seed, seed^0x9e3779b9)))
	for i, n := range names {
		ip := fmt.Sprintf("10.0.0.%d", i+1)
		racks[ip] = "/" + n[:1]
		h.addNode(n, ip)
	}
	return h
}

func (h *harness) addNode(name, ip string) DatanodeID {
	h.t.Helper()
	id := DatanodeID{UUID: "uuid-" + name, IPAddr: ip, Hostname: name, XferPort: 9866, InfoPort: 9864, IPCPort: 9867}
	if err := h.m.RegisterDatanode(id, h.now); err != nil {
		h.t.Fatal(err)
	}
	h.byN[name] = id
	h.dns = append(h.dns, id)
	h.space[name] = 100 * gib
	h.heartbeat(name)
	return id
}

func (h *harness) id(name string) DatanodeID {
	id, ok := h.byN[name]
	if !ok {
		h.t.Fatalf("no node %q", name)
	}
	return id
}

func stID(name string) string { return "DS-" + name }

func (h *harness) heartbeatX(name string, xceivers int) []Command {
	h.t.Helper()
	r := StorageReport{StorageID: stID(name), Capacity: 200 * gib, DfsUsed: 1 * gib, Remaining: h.space[name]}
	cmds, err := h.m.Heartbeat(h.id(name).UUID, []StorageReport{r}, xceivers, 0, h.now)
	if err != nil {
		h.t.Fatalf("heartbeat %s: %v", name, err)
	}
	return cmds
}

func (h *harness) heartbeat(name string) []Command { return h.heartbeatX(name, 0) }

func (h *harness) heartbeatAll(except ...string) map[string][]Command {
	out := map[string][]Command{}
	for n := range h.byN {
		if !slices.Contains(except, n) {
			if c := h.heartbeat(n); len(c) > 0 {
				out[n] = c
			}
		}
	}
	return out
}

func (h *harness) advance(d time.Duration) { h.now = h.now.Add(d) }

func (h *harness) name(uuid string) string {
	for n, id := range h.byN {
		if id.UUID == uuid {
			return n
		}
	}
	return "?" + uuid
}

func (h *harness) names(ids []DatanodeID) []string {
	var out []string
	for _, id := range ids {
		out = append(out, h.name(id.UUID))
	}
	return out
}

func (h *harness) fbr(name string, reps ...ReportedReplica) ReportResult {
	h.t.Helper()
	res, err := h.m.ProcessFullBlockReport(h.id(name).UUID, stID(name), reps, h.now)
	if err != nil {
		h.t.Fatalf("fbr %s: %v", name, err)
	}
	h.check()
	return res
}

func (h *harness) ibr(name string, items ...ReceivedDeleted) ReportResult {
	h.t.Helper()
	res, err := h.m.ProcessIncremental(h.id(name).UUID, stID(name), items, h.now)
	if err != nil {
		h.t.Fatalf("ibr %s: %v", name, err)
	}
	h.check()
	return res
}

func fin(b Block) ReportedReplica { return ReportedReplica{Block: b, State: Finalized} }

// addComplete adds a COMPLETE block and reports it finalized on the nodes.
func (h *harness) addComplete(fileID int64, b Block, repl int, on ...string) {
	h.t.Helper()
	if err := h.m.AddBlock(fileID, b, repl, Complete, nil); err != nil {
		h.t.Fatal(err)
	}
	for _, n := range on {
		h.ibr(n, ReceivedDeleted{Block: b, Status: Received})
	}
}

// holders lists the nodes with a good replica of the block, sorted.
func (h *harness) holders(id int64) []string {
	b := h.m.blocks.get(id)
	if b == nil {
		return nil
	}
	var out []string
	for _, r := range h.m.reps(b) {
		if r.flags&rCorrupt == 0 && r.state == Finalized {
			out = append(out, h.name(h.m.stOf(r).dn.id.UUID))
		}
	}
	slices.Sort(out)
	return out
}

func (h *harness) check() {
	h.t.Helper()
	if err := h.m.checkInvariants(); err != nil {
		h.t.Fatal(err)
	}
}

// checkInvariants recomputes the derived state and compares.
func (m *Manager) checkInvariants() error {
	var complete, safe, corrupt int64
	var all []*blockInfo
	m.blocks.each(func(b *blockInfo) { all = append(all, b) })
	if len(all) != m.blocks.len() {
		return fmt.Errorf("the blocks map counts %d entries and holds %d", m.blocks.len(), len(all))
	}
	for _, b := range all {
		if got := m.blocks.get(b.ID); got != b {
			return fmt.Errorf("block %d is not found under its id", b.ID)
		}
		seen := map[*datanode]bool{}
		if (b.n() == overflowN) != (m.blocks.more[b.ID] != nil) || (b.n() == overflowN && len(m.blocks.more[b.ID]) <= inlineReplicas) {
			return fmt.Errorf("blk_%d: %d replicas in place, %d outside", b.ID, b.n(), len(m.blocks.more[b.ID]))
		}
		for _, r := range m.reps(b) {
			st := m.stOf(r)
			if st == nil || st.ix != r.si() {
				return fmt.Errorf("blk_%d: replica names storage %d, which is %v", b.ID, r.si(), st)
			}
			if seen[st.dn] {
				return fmt.Errorf("blk_%d: two replicas on %s", b.ID, st.dn.id.UUID)
			}
			seen[st.dn] = true
			if int(r.idx) >= len(st.blocks) || m.blocks.at(st.blocks[r.idx]) != b {
				return fmt.Errorf("blk_%d: storage index %d broken", b.ID, r.idx)
			}
			if st.dn.dead && !st.dn.admin.maintenance() {
				return fmt.Errorf("blk_%d: replica on dead node out of maintenance", b.ID)
			}
			if r.flags&rMark != 0 && (m.fbr == nil || m.fbr.st != st) {
				return fmt.Errorf("blk_%d: mark left set", b.ID)
			}
		}
		if b.deleted() {
			if b.flags()&(bComplete|bSafe|bCorrupt) != 0 {
				return fmt.Errorf("blk_%d: marked deleted and counted (flags %b)", b.ID, b.flags())
			}
			continue
		}
		live, c := m.counts(b)
		if b.state() == Complete {
			complete++
			if live >= m.cfg.MinReplication {
				safe++
			}
		}
		if c > 0 {
			corrupt++
		}
		if b.state() == Committed && live >= m.cfg.MinReplication {
			return fmt.Errorf("blk_%d: COMMITTED with %d live replicas", b.ID, live)
		}
	}
	for _, dn := range m.order {
		for _, st := range dn.storages {
			if m.stors[st.ix] != st {
				return fmt.Errorf("storage %s: index %d names another", st.id, st.ix)
			}
			for i, ix := range st.blocks {
				b := m.blocks.at(ix)
				if m.blocks.get(b.ID) != b {
					return fmt.Errorf("storage %s holds forgotten blk_%d", st.id, b.ID)
				}
				j := m.find(b, st)
				if j < 0 || int(m.reps(b)[j].idx) != i {
					return fmt.Errorf("storage %s: blk_%d back-pointer broken", st.id, b.ID)
				}
			}
		}
	}
	if complete != m.completeBlocks || safe != m.safeBlocks || corrupt != m.corruptBlocks {
		return fmt.Errorf("counters complete/safe/corrupt = %d/%d/%d, recomputed %d/%d/%d",
			m.completeBlocks, m.safeBlocks, m.corruptBlocks, complete, safe, corrupt)
	}
	for _, dn := range m.adm.pending {
		if dn.lv == nil || dn.lv.tracked {
			return fmt.Errorf("pending node %s has record %+v", dn.id.Hostname, dn.lv)
		}
	}
	for _, dn := range m.adm.tracked {
		if dn.lv == nil || !dn.lv.tracked || dn.admin == Normal || dn.admin == Decommissioned {
			return fmt.Errorf("tracked node %s in %v has record %+v", dn.id.Hostname, dn.admin, dn.lv)
		}
	}
	for k := range m.corruptRep {
		b := m.blocks.get(k.id)
		if b == nil {
			return fmt.Errorf("corrupt record of forgotten blk_%d", k.id)
		}
		if i := m.find(b, k.st); i < 0 || m.reps(b)[i].flags&rCorrupt == 0 {
			return fmt.Errorf("corrupt record of blk_%d without a corrupt replica", k.id)
		}
	}
	var ones [numLevels]int
	for id, i := range m.needed.where {
		b := m.blocks.get(id)
		if b == nil || b.deleted() {
			return fmt.Errorf("queued blk_%d is not in the map or is marked deleted", id)
		}
		if e := m.needed.at(i); e.one != (b.repl() == 1) {
			return fmt.Errorf("queued blk_%d of replication %d marked one=%v", id, b.repl(), e.one)
		} else if e.one {
			ones[e.level]++
		}
	}
	for lv := range numLevels {
		if ones[lv] != m.needed.countOnes(lv) {
			return fmt.Errorf("level %d counts %d blocks of replication 1, holds %d", lv, m.needed.countOnes(lv), ones[lv])
		}
	}
	n := 0
	var err error
	for lv := range numLevels {
		k := 0
		m.needed.each(lv, func(id int64) {
			if m.needed.level(id) != lv {
				err = fmt.Errorf("blk_%d in the list of level %d, indexed at %d", id, lv, m.needed.level(id))
			}
			k++
		})
		if k != m.needed.count(lv) {
			return fmt.Errorf("level %d lists %d blocks, counts %d", lv, k, m.needed.count(lv))
		}
		n += k
	}
	if err != nil {
		return err
	}
	if n != len(m.needed.where) || m.needed.inUse() != n {
		return fmt.Errorf("queue lists hold %d, index %d, entries in use %d", n, len(m.needed.where), m.needed.inUse())
	}
	n = 0
	for id, q := range m.queued {
		if len(q) == 0 {
			return fmt.Errorf("empty postponed queue kept for blk_%d", id)
		}
		n += len(q)
	}
	if n != m.queuedCount {
		return fmt.Errorf("postponed queues hold %d reports, count says %d", n, m.queuedCount)
	}
	return nil
}

// transfers pulls the Transfer commands out of heartbeat replies.
func transfers(cmds map[string][]Command) map[string][]Transfer {
	out := map[string][]Transfer{}
	for n, cs := range cmds {
		for _, c := range cs {
			if t, ok := c.(Transfer); ok {
				out[n] = append(out[n], t)
			}
		}
	}
	return out
}

func invalidated(cmds []Command) []int64 {
	var out []int64
	for _, c := range cmds {
		if inv, ok := c.(Invalidate); ok {
			for _, b := range inv.Blocks {
				out = append(out, b.ID)
			}
		}
	}
	slices.Sort(out)
	return out
}

// activeHarness is a harness out of safe mode.
func activeHarness(t testing.TB, cfg Config, seed uint64, names ...string) *harness {
	h := newHarness(t, cfg, seed, names...)
	h.m.Activate(h.now)
	if h.m.InSafeMode() {
		t.Fatal("empty namespace still in safe mode after Activate")
	}
	return h
}
