package blockmgmt

import (
	"math/rand/v2"
	"time"
)

// replica flags.
const (
	rCorrupt uint8 = 1 << iota // known corrupt
	rMark                      // seen in the full block report being processed
)

// replica is one location of a block: 16 bytes.
type replica struct {
	st    *storage
	idx   int32 // position of the block in st.blocks
	state ReplicaState
	flags uint8
}

// blockInfo flags: which counters the block is included in.
const (
	bComplete uint8 = 1 << iota // counted in Manager.completeBlocks
	bSafe                       // counted in Manager.safeBlocks
	bCorrupt                    // counted in Manager.corruptBlocks
	// bDeleted: the block's file is gone and the block waits in the map
	// for its removal (MarkDeleted): in no counter or queue, and a
	// reported replica of it is deleted, not recorded.
	bDeleted
)

// blockInfo is one entry of the blocks map. Kept small: millions of these live
// in memory.
type blockInfo struct {
	Block
	fileID int64
	// The replicas: the first inlineReplicas in inl (n of them), all of
	// them in *more once there are more.
	inl   [inlineReplicas]replica
	more  *[]replica
	repl  int16
	state BlockUCState
	flags uint8
	n     uint8
	// policy is the file's effective storage policy id (0: default).
	policy uint8
}

// inlineReplicas is how many replicas a blockInfo holds without a second
// allocation: the default replication.
const inlineReplicas = 3

// reps is the block's replicas; entries may be changed in place, the
// list only through addReplica and removeReplicaAt.
func (b *blockInfo) reps() []replica {
	if b.more != nil {
		return *b.more
	}
	return b.inl[:b.n]
}

// storage is one volume of a DataNode.
type storage struct {
	id                                   string
	dn                                   *datanode
	capacity, dfsUsed, remaining, bpUsed int64
	failed                               bool
	typ                                  int32        // StorageReport.StorageType
	blocks                               []*blockInfo // replicas on this storage
}

// datanode is the descriptor of one DataNode.
type datanode struct {
	id         DatanodeID
	rack       string
	lastUpdate time.Time
	dead       bool
	admin      AdminState
	// maintUntil ends the node's maintenance (admin.go); zero otherwise.
	maintUntil time.Time
	// disallowed: the host files no longer let the node in; its next
	// heartbeat is refused and it is declared dead.
	disallowed bool
	// reported: a full block report arrived since the node registered.
	reported bool
	// lastReport is when the node's last full block report arrived.
	lastReport time.Time
	// lv is the admin monitor's record while it tracks the node.
	lv       *leaving
	storages []*storage
	xceivers int
	xmits    int

	// transfers are scheduled copies not yet sent (DNA_TRANSFER).
	transfers []Transfer
	// recoveries are block recoveries this node leads, not yet sent
	// (DNA_RECOVERBLOCK).
	recoveries []RecoverBlock
	// bandwidth is a balancer bandwidth not yet sent to the node (0: none).
	bandwidth int64
	// invList/invSet: replicas to delete on this node, not yet handed to the
	// node (InvalidateBlocks). invList keeps arrival order; an entry is valid
	// while its id is in invSet.
	invList []Block
	invSet  map[int64]struct{}
	// invReady: deletions chosen by ComputeWork, sent with the next heartbeats.
	invReady []Block

	// blocks scheduled to be written here, for the free-space estimate; rolled
	// every scheduledRoll.
	scheduled, prevScheduled int
	lastRoll                 time.Time
}

// scheduledRoll is how often the scheduled-blocks estimate rolls over
// (DatanodeDescriptor.BLOCKS_SCHEDULED_ROLL_INTERVAL).
const scheduledRoll = 10 * time.Minute

// Manager is the block manager. See the package doc; not safe for concurrent
// use.
type Manager struct {
	cfg Config
	rnd *rand.Rand

	blocks   blockMap
	expected map[int64][]string // pipeline targets (uuids) of blocks not yet COMPLETE
	// ucReps: what each replica of a block not yet committed reported, checked
	// against the block when the client commits it.
	ucReps map[int64][]ucRep
	// corruptRep: the block as reported for replicas found corrupt by a
	// report, so that their deletion names the replica's own stamp (a
	// DataNode refuses to delete a replica whose stamp differs).
	corruptRep map[repKey]Block

	nodes     map[string]*datanode   // by uuid, dead ones included
	byXfer    map[string]*datanode   // by ip:xferPort
	byIP      map[string][]*datanode // by ip
	order     []*datanode            // registration order, for determinism
	rackNodes map[string]int         // live nodes per rack

	// fbr is the full block report being processed in slices, if any.
	fbr *FullReport

	needed  lowRedundancy
	pending map[int64]*pendingWork

	completeBlocks int64
	safeBlocks     int64
	corruptBlocks  int64

	sm safeMode
	// populating: the redundancy queues are maintained (false during start-up
	// safe mode, as Hadoop's replication queues are initialised on leaving it).
	populating bool

	// standby: the NameNode is a standby (see standby.go); queued holds
	// the reports it postponed, by block id.
	standby     bool
	queued      map[int64][]queuedReport
	queuedCount int

	// hosts answers for the host files (nil: everyone in, nobody out);
	// adm are the nodes the admin monitor works on (admin.go).
	hosts HostPolicy
	adm   adminMonitor

	maxGenStamp   int64           // newest GS of the namespace; 0 = unknown
	futureBytes   map[int64]int64 // block id → bytes of future-GS replicas
	deleteHintFor string          // node to prefer when removing an excess replica
	nowHint       time.Time       // latest time passed in, for paths without one
}

// ucRep is a replica reported for a block under construction.
type ucRep struct {
	st  *storage
	blk Block
}

// repKey names one replica.
type repKey struct {
	st *storage
	id int64
}

// pendingWork is a scheduled reconstruction waiting for its targets.
type pendingWork struct {
	copies   []pendingCopy // not yet reported by their targets
	deadline time.Time
}

// pendingCopy is one replica a source DataNode was told to copy to a
// target; both are DataNode UUIDs.
type pendingCopy struct {
	target, source string
}

// New returns a manager in start-up safe mode; the caller loads the blocks of
// the namespace with AddBlock and then calls Activate. cfg is used as given
// (call Validate first); rnd drives every random choice.
func New(cfg Config, rnd *rand.Rand) *Manager {
	if cfg.Topology == nil {
		cfg.Topology = func(string) string { return DefaultRack }
	}
	m := &Manager{
		cfg:         cfg,
		rnd:         rnd,
		expected:    make(map[int64][]string),
		ucReps:      make(map[int64][]ucRep),
		corruptRep:  make(map[repKey]Block),
		nodes:       make(map[string]*datanode),
		byXfer:      make(map[string]*datanode),
		byIP:        make(map[string][]*datanode),
		rackNodes:   make(map[string]int),
		pending:     make(map[int64]*pendingWork),
		futureBytes: make(map[int64]int64),
		queued:      make(map[int64][]queuedReport),
	}
	m.needed.init()
	m.sm.status = smInit
	return m
}

// Config returns the configuration in use.
func (m *Manager) Config() Config { return m.cfg }

// SetMaxGenStamp tells the manager the newest generation stamp the namespace
// has handed out; while in safe mode, reported replicas of unknown blocks with
// a newer stamp are counted as bytes in the future instead of being deleted.
func (m *Manager) SetMaxGenStamp(gs int64) { m.maxGenStamp = gs }

func (m *Manager) resolve(ip string) string {
	r := m.cfg.Topology(ip)
	if r == "" {
		return DefaultRack
	}
	return r
}

// ---- replica bookkeeping ----

func (b *blockInfo) find(st *storage) int {
	for i := range b.reps() {
		if b.reps()[i].st == st {
			return i
		}
	}
	return -1
}

func (b *blockInfo) findNode(dn *datanode) int {
	for i := range b.reps() {
		if b.reps()[i].st.dn == dn {
			return i
		}
	}
	return -1
}

// counts returns the usable (good FINALIZED on live nodes, whatever their
// admin state: readable) and corrupt replica counts. Completion, safe mode
// and minimal replication go by these; redundancy goes by count.
func (b *blockInfo) counts() (live, corrupt int) {
	for i := range b.reps() {
		r := &b.reps()[i]
		switch {
		case r.flags&rCorrupt != 0:
			corrupt++
		case r.state == Finalized && !r.st.failed && !r.st.dn.dead:
			live++
		}
	}
	return live, corrupt
}

// replicaCount splits a block's good finalized replicas by where they are
// (Hadoop's NumberReplicas).
type replicaCount struct {
	live         int // on live nodes in service
	outOfService int // on live nodes leaving or out of service: readable, not live
	maint        int // on nodes in maintenance, live or dead
	corrupt      int
}

func (m *Manager) count(b *blockInfo) replicaCount {
	var c replicaCount
	for i := range b.reps() {
		r := &b.reps()[i]
		if r.flags&rCorrupt != 0 {
			c.corrupt++
			continue
		}
		if r.state != Finalized || r.st.failed {
			continue
		}
		dn := r.st.dn
		if dn.admin.maintenance() {
			c.maint++
		}
		switch {
		case dn.dead:
		case dn.admin == Normal:
			c.live++
		default:
			c.outOfService++
		}
	}
	return c
}

// required is how many live replicas a block needs: its replication, less
// the replicas on nodes in maintenance but not below
// dfs.namenode.maintenance.replication.min (getExpectedLiveRedundancyNum).
func (m *Manager) required(b *blockInfo, c replicaCount) int {
	exp := m.expectedRepl(b)
	if c.maint == 0 {
		return exp
	}
	return max(exp-c.maint, min(m.cfg.MaintenanceReplicationMin, exp))
}

func (m *Manager) addReplica(b *blockInfo, st *storage, state ReplicaState, flags uint8) {
	r := replica{st: st, idx: int32(len(st.blocks)), state: state, flags: flags}
	switch {
	case b.more != nil:
		*b.more = append(*b.more, r)
	case int(b.n) < len(b.inl):
		b.inl[b.n] = r
		b.n++
	default:
		more := make([]replica, 0, len(b.inl)+1)
		more = append(append(more, b.inl[:]...), r)
		b.more = &more
		b.inl, b.n = [inlineReplicas]replica{}, 0
	}
	st.blocks = append(st.blocks, b)
}

// removeReplicaAt drops b.reps()[i] from the block and from its storage.
func (m *Manager) removeReplicaAt(b *blockInfo, i int) {
	r := b.reps()[i]
	st := r.st
	if r.flags&rCorrupt != 0 && len(m.corruptRep) > 0 {
		delete(m.corruptRep, repKey{st, b.ID})
	}
	last := len(st.blocks) - 1
	if int(r.idx) != last {
		moved := st.blocks[last]
		st.blocks[r.idx] = moved
		if j := moved.find(st); j >= 0 {
			moved.reps()[j].idx = r.idx
		}
	}
	st.blocks[last] = nil
	st.blocks = st.blocks[:last]
	rs := b.reps()
	copy(rs[i:], rs[i+1:])
	rs[len(rs)-1] = replica{}
	rs = rs[:len(rs)-1]
	switch {
	case b.more == nil:
		b.n--
	case len(rs) <= len(b.inl):
		b.n = uint8(copy(b.inl[:], rs))
		b.more = nil
	default:
		*b.more = rs
	}
}

// queueInvalidate schedules deletion of blk on dn.
func (m *Manager) queueInvalidate(dn *datanode, blk Block) bool {
	if dn.dead {
		return false
	}
	if dn.invSet == nil {
		dn.invSet = make(map[int64]struct{})
	}
	if _, ok := dn.invSet[blk.ID]; ok {
		return false
	}
	dn.invSet[blk.ID] = struct{}{}
	dn.invList = append(dn.invList, blk)
	return true
}

// invalidateReplicaAt removes replica i from the block and orders its deletion.
func (m *Manager) invalidateReplicaAt(b *blockInfo, i int) {
	r := b.reps()[i]
	blk := b.Block
	if r.flags&rCorrupt != 0 {
		if rb, ok := m.corruptRep[repKey{r.st, b.ID}]; ok {
			blk = rb
		}
	}
	m.removeReplicaAt(b, i)
	m.queueInvalidate(r.st.dn, blk)
}

func (m *Manager) expectedRepl(b *blockInfo) int { return int(b.repl) }

// refresh re-derives everything that depends on a block's replicas after a
// change: auto-completion of COMMITTED blocks, deletion of corrupt and excess
// replicas, the safe/complete/corrupt counters and the redundancy queues.
func (m *Manager) refresh(b *blockInfo) {
	if b.flags&bDeleted != 0 {
		return
	}
	live, corrupt := b.counts()
	minR := m.cfg.MinReplication
	exp := m.expectedRepl(b)
	if b.state == Committed && live >= minR {
		b.state = Complete
		m.pendPipelineReplicas(b)
	}
	if b.state == Complete {
		if len(m.expected) > 0 {
			delete(m.expected, b.ID)
		}
		if len(m.ucReps) > 0 {
			delete(m.ucReps, b.ID)
		}
	}
	// A standby judges nothing to delete: its view lags the active's.
	if corrupt > 0 && live >= minR && (live >= exp || live+corrupt > exp) && !m.standby {
		for i := len(b.reps()) - 1; i >= 0; i-- {
			if b.reps()[i].flags&rCorrupt != 0 {
				m.invalidateReplicaAt(b, i)
			}
		}
		corrupt = 0
	}
	if c := m.count(b); b.state == Complete && c.live > exp && m.populating && !m.standby {
		m.removeExcess(b, c.live-exp)
		live, corrupt = b.counts()
	}
	m.setFlag(b, bComplete, b.state == Complete, &m.completeBlocks)
	m.setFlag(b, bSafe, b.state == Complete && live >= minR, &m.safeBlocks)
	m.setFlag(b, bCorrupt, corrupt > 0, &m.corruptBlocks)
	if m.populating {
		m.updateNeeded(b, m.count(b))
	}
}

// pendPipelineReplicas counts the replicas that b's write pipeline still
// owes as pending copies, as Hadoop does when a block completes with the
// minimal replication: the other pipeline nodes report their replicas
// moments later, and without this the redundancy monitor would schedule
// copies to other nodes first (then delete the excess). Each copy is
// forgotten when its node reports it, dies or restarts, or at the pending
// timeout, after which the block is judged as usual.
func (m *Manager) pendPipelineReplicas(b *blockInfo) {
	if m.standby {
		return
	}
	var owed []pendingCopy
	for _, u := range m.expected[b.ID] {
		dn := m.nodes[u]
		if dn == nil || dn.dead {
			continue
		}
		if i := b.findNode(dn); i >= 0 && b.reps()[i].state == Finalized && b.reps()[i].flags&rCorrupt == 0 {
			continue
		}
		owed = append(owed, pendingCopy{target: u})
	}
	if len(owed) == 0 {
		return
	}
	p := m.pending[b.ID]
	if p == nil {
		p = &pendingWork{}
		m.pending[b.ID] = p
	}
	p.copies = append(p.copies, owed...)
	if d := m.nowHint.Add(m.cfg.PendingReconstructionTimeout); d.After(p.deadline) {
		p.deadline = d
	}
}

func (m *Manager) setFlag(b *blockInfo, f uint8, on bool, counter *int64) {
	was := b.flags&f != 0
	switch {
	case on && !was:
		b.flags |= f
		*counter++
	case !on && was:
		b.flags &^= f
		*counter--
	}
}

// markCorrupt flags replica i, remembering the block as its node reported it.
func (m *Manager) markCorrupt(b *blockInfo, i int, reported Block) {
	r := &b.reps()[i]
	r.flags |= rCorrupt
	if reported != b.Block {
		m.corruptRep[repKey{r.st, b.ID}] = reported
	}
}

// forget removes a block from the map and from every counter and queue.
func (m *Manager) forget(b *blockInfo) {
	m.setFlag(b, bComplete, false, &m.completeBlocks)
	m.setFlag(b, bSafe, false, &m.safeBlocks)
	m.setFlag(b, bCorrupt, false, &m.corruptBlocks)
	m.needed.remove(b.ID)
	delete(m.pending, b.ID)
	delete(m.expected, b.ID)
	delete(m.ucReps, b.ID)
	if q := m.queued[b.ID]; len(q) > 0 {
		// The active deletes these replicas; as an unknown block's they
		// are deleted if reported again after a failover.
		m.queuedCount -= len(q)
		delete(m.queued, b.ID)
	}
	m.blocks.del(b.ID)
}
