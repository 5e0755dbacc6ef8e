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

// replica is one location of a block: 8 bytes. The storage is named by
// its index in Manager.stors (22 bits: the low 16 in st, the high 6 in the
// top of flags); Manager.stOf resolves it.
type replica struct {
	idx   int32 // position of the block in the storage's list
	st    uint16
	state ReplicaState
	flags uint8 // rCorrupt, rMark; bits 2-7: storage index bits 16-21
}

// maxStorages is how many storages the 22-bit index can name (index 0 is
// none).
const maxStorages = 1<<22 - 1

// si is the replica's storage index.
func (r replica) si() uint32 { return uint32(r.st) | uint32(r.flags>>2)<<16 }

// blockInfo flags: which counters the block is included in.
const (
	bComplete uint8 = 1 << iota // counted in Manager.completeBlocks
	bSafe                       // counted in Manager.safeBlocks
	bCorrupt                    // counted in Manager.corruptBlocks
)

// blockInfo is one entry of the blocks map: 56 bytes, kept in the map's
// slab (blockmap.go). Millions of these live in memory; it holds no
// pointer, so the collector does not scan them.
type blockInfo struct {
	Block
	// The replicas: the first n() in inl, or, when n() is overflowN, all
	// of them in the map's more (more than inlineReplicas of them).
	inl [inlineReplicas]replica
	// meta packs the owning file's inode id (36 bits; larger ids, which
	// take 68 billion inode allocations to reach, go to Manager.bigFile),
	// the expected replication (15 bits), the state (2), the counter
	// flags (3), n (3) and the file's effective storage policy id (5;
	// HDFS's ids have 4 bits).
	meta uint64
}

// The fields of blockInfo.meta: shift and width.
const (
	mFile, mFileBits     = 0, 36
	mRepl, mReplBits     = 36, 15
	mState, mStateBits   = 51, 2
	mFlags, mFlagsBits   = 53, 3
	mN, mNBits           = 56, 3
	mPolicy, mPolicyBits = 59, 5
	// bigFileID in the file field: the id is in Manager.bigFile.
	bigFileID = 1<<mFileBits - 1
	// deletedFileID in the file field: the block's file is gone and the
	// block waits in the map for its removal (MarkDeleted): in no counter
	// or queue, and a reported replica of it is deleted, not recorded
	// (Hadoop marks such a block with an invalid file id too).
	deletedFileID = bigFileID - 1
)

// deleted reports whether b is marked deleted (MarkDeleted).
func (b *blockInfo) deleted() bool { return b.get(mFile, mFileBits) == deletedFileID }

func (b *blockInfo) get(shift, bits uint) uint64 { return b.meta >> shift & (1<<bits - 1) }

func (b *blockInfo) set(shift, bits uint, v uint64) {
	mask := uint64(1<<bits-1) << shift
	b.meta = b.meta&^mask | v<<shift&mask
}

func (b *blockInfo) repl() int16 { return int16(b.get(mRepl, mReplBits)) }

// setRepl takes a replication clipRepl has bounded to 15 bits.
func (b *blockInfo) setRepl(r int16) { b.set(mRepl, mReplBits, uint64(r)) }

func (b *blockInfo) state() BlockUCState     { return BlockUCState(b.get(mState, mStateBits)) }
func (b *blockInfo) setState(s BlockUCState) { b.set(mState, mStateBits, uint64(s)) }
func (b *blockInfo) flags() uint8            { return uint8(b.get(mFlags, mFlagsBits)) }
func (b *blockInfo) setFlags(f uint8)        { b.set(mFlags, mFlagsBits, uint64(f)) }
func (b *blockInfo) n() uint8                { return uint8(b.get(mN, mNBits)) }
func (b *blockInfo) setN(n uint8)            { b.set(mN, mNBits, uint64(n)) }
func (b *blockInfo) policy() uint8           { return uint8(b.get(mPolicy, mPolicyBits)) }

// setPolicy records a storage policy id; one beyond 5 bits (HDFS has
// none) is recorded as 0, which resolves to the default policy.
func (b *blockInfo) setPolicy(id uint8) {
	if id >= 1<<mPolicyBits {
		id = 0
	}
	b.set(mPolicy, mPolicyBits, uint64(id))
}

// fileOf is the inode id of the file b belongs to, -1 once b is marked
// deleted.
func (m *Manager) fileOf(b *blockInfo) int64 {
	switch f := b.get(mFile, mFileBits); f {
	case deletedFileID:
		return -1
	case bigFileID:
	default:
		return int64(f)
	}
	return m.bigFile[b.ID]
}

// setFile records the file b belongs to.
func (m *Manager) setFile(b *blockInfo, id int64) {
	if id >= 0 && id < deletedFileID {
		if b.get(mFile, mFileBits) == bigFileID {
			delete(m.bigFile, b.ID)
		}
		b.set(mFile, mFileBits, uint64(id))
		return
	}
	if m.bigFile == nil {
		m.bigFile = make(map[int64]int64)
	}
	m.bigFile[b.ID] = id
	b.set(mFile, mFileBits, bigFileID)
}

// inlineReplicas is how many replicas a blockInfo holds in place: the
// default replication.
const inlineReplicas = 3

// overflowN in blockInfo.n(): the replicas are in blockMap.more.
const overflowN = 1<<mNBits - 1

// reps is the block's replicas; entries may be changed in place, the
// list only through addReplica and removeReplicaAt.
func (m *Manager) reps(b *blockInfo) []replica {
	if n := b.n(); n != overflowN {
		return b.inl[:n]
	}
	return m.blocks.more[b.ID]
}

// storage is one volume of a DataNode.
type storage struct {
	id                                   string
	dn                                   *datanode
	capacity, dfsUsed, remaining, bpUsed int64
	failed                               bool
	typ                                  int32    // StorageReport.StorageType
	blocks                               []uint32 // replicas on this storage: slab indices of their blocks
	ix                                   uint32   // index in Manager.stors
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

	blocks blockMap
	// bigFile holds the file ids that do not fit blockInfo.meta, by block.
	bigFile map[int64]int64
	// stors are the storages by index (0: none), as replicas name them;
	// storFree are the indices of removed storages.
	stors    []*storage
	storFree []uint32
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
	// popNext is the slab index of the next block the population of the
	// redundancy queues judges (leaveStartup, PopulateFor); 0 when none
	// is left.
	popNext uint32

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

// stOf is the storage a replica is on.
func (m *Manager) stOf(r replica) *storage { return m.stors[r.si()] }

// addStorage gives st its index.
func (m *Manager) addStorage(st *storage) {
	if len(m.stors) == 0 {
		m.stors = append(m.stors, nil) // index 0 is none
	}
	if k := len(m.storFree); k > 0 {
		st.ix = m.storFree[k-1]
		m.storFree = m.storFree[:k-1]
		m.stors[st.ix] = st
		return
	}
	if len(m.stors) > maxStorages {
		// Four million storages: a hundred times the largest clusters.
		panic("blockmgmt: more than 4,194,303 storages")
	}
	st.ix = uint32(len(m.stors))
	m.stors = append(m.stors, st)
}

// removeStorage frees st's index; it must hold no replica.
func (m *Manager) removeStorage(st *storage) {
	if st.ix == 0 || m.stors[st.ix] != st {
		return
	}
	m.stors[st.ix] = nil
	m.storFree = append(m.storFree, st.ix)
	st.ix = 0
}

func (m *Manager) find(b *blockInfo, st *storage) int {
	rs := m.reps(b)
	for i := range rs {
		if rs[i].si() == st.ix {
			return i
		}
	}
	return -1
}

func (m *Manager) findOn(b *blockInfo, dn *datanode) int {
	rs := m.reps(b)
	for i := range rs {
		if m.stOf(rs[i]).dn == dn {
			return i
		}
	}
	return -1
}

// counts returns the usable (good FINALIZED on live nodes, whatever their
// admin state: readable) and corrupt replica counts. Completion, safe mode
// and minimal replication go by these; redundancy goes by count.
func (m *Manager) counts(b *blockInfo) (live, corrupt int) {
	for _, r := range m.reps(b) {
		switch {
		case r.flags&rCorrupt != 0:
			corrupt++
		case r.state == Finalized:
			if st := m.stOf(r); !st.failed && !st.dn.dead {
				live++
			}
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
	for _, r := range m.reps(b) {
		if r.flags&rCorrupt != 0 {
			c.corrupt++
			continue
		}
		st := m.stOf(r)
		if r.state != Finalized || st.failed {
			continue
		}
		dn := st.dn
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

// addReplica records a replica of b on st. The block's slab index is
// looked up again (the entry does not hold it): one probe of the slots
// just walked.
func (m *Manager) addReplica(b *blockInfo, st *storage, state ReplicaState, flags uint8) {
	r := replica{idx: int32(len(st.blocks)), st: uint16(st.ix), state: state, flags: flags&(rCorrupt|rMark) | uint8(st.ix>>16)<<2}
	switch {
	case b.n() == overflowN:
		m.blocks.more[b.ID] = append(m.blocks.more[b.ID], r)
	case int(b.n()) < len(b.inl):
		b.inl[b.n()] = r
		b.setN(b.n() + 1)
	default:
		more := make([]replica, 0, len(b.inl)+1)
		more = append(append(more, b.inl[:]...), r)
		if m.blocks.more == nil {
			m.blocks.more = make(map[int64][]replica)
		}
		m.blocks.more[b.ID] = more
		b.inl = [inlineReplicas]replica{}
		b.setN(overflowN)
	}
	st.blocks = append(st.blocks, m.blocks.index(b.ID))
}

// removeReplicaAt drops m.reps(b)[i] from the block and from its storage.
func (m *Manager) removeReplicaAt(b *blockInfo, i int) {
	r := m.reps(b)[i]
	st := m.stOf(r)
	if r.flags&rCorrupt != 0 && len(m.corruptRep) > 0 {
		delete(m.corruptRep, repKey{st, b.ID})
	}
	last := len(st.blocks) - 1
	if int(r.idx) != last {
		moved := st.blocks[last]
		st.blocks[r.idx] = moved
		mb := m.blocks.at(moved)
		if j := m.find(mb, st); j >= 0 {
			m.reps(mb)[j].idx = r.idx
		}
	}
	st.blocks = st.blocks[:last]
	rs := m.reps(b)
	copy(rs[i:], rs[i+1:])
	rs[len(rs)-1] = replica{}
	rs = rs[:len(rs)-1]
	switch {
	case b.n() != overflowN:
		b.setN(b.n() - 1)
	case len(rs) <= len(b.inl):
		b.setN(uint8(copy(b.inl[:], rs)))
		delete(m.blocks.more, b.ID)
	default:
		m.blocks.more[b.ID] = rs
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
	r := m.reps(b)[i]
	st := m.stOf(r)
	blk := b.Block
	if r.flags&rCorrupt != 0 {
		if rb, ok := m.corruptRep[repKey{st, b.ID}]; ok {
			blk = rb
		}
	}
	m.removeReplicaAt(b, i)
	m.queueInvalidate(st.dn, blk)
}

func (m *Manager) expectedRepl(b *blockInfo) int { return int(b.repl()) }

// refresh re-derives everything that depends on a block's replicas after a
// change: auto-completion of COMMITTED blocks, deletion of corrupt and excess
// replicas, the safe/complete/corrupt counters and the redundancy queues.
func (m *Manager) refresh(b *blockInfo) {
	if b.deleted() {
		return
	}
	live, corrupt := m.counts(b)
	minR := m.cfg.MinReplication
	exp := m.expectedRepl(b)
	if b.state() == Committed && live >= minR {
		b.setState(Complete)
		m.pendPipelineReplicas(b)
	}
	if b.state() == Complete {
		if len(m.expected) > 0 {
			delete(m.expected, b.ID)
		}
		if len(m.ucReps) > 0 {
			delete(m.ucReps, b.ID)
		}
	}
	// A standby judges nothing to delete: its view lags the active's.
	if corrupt > 0 && live >= minR && (live >= exp || live+corrupt > exp) && !m.standby {
		for i := len(m.reps(b)) - 1; i >= 0; i-- {
			if m.reps(b)[i].flags&rCorrupt != 0 {
				m.invalidateReplicaAt(b, i)
			}
		}
		corrupt = 0
	}
	if c := m.count(b); b.state() == Complete && c.live > exp && m.populating && !m.standby {
		m.removeExcess(b, c.live-exp)
		live, corrupt = m.counts(b)
	}
	m.setFlag(b, bComplete, b.state() == Complete, &m.completeBlocks)
	m.setFlag(b, bSafe, b.state() == Complete && live >= minR, &m.safeBlocks)
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
		if i := m.findOn(b, dn); i >= 0 && m.reps(b)[i].state == Finalized && m.reps(b)[i].flags&rCorrupt == 0 {
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
	was := b.flags()&f != 0
	switch {
	case on && !was:
		b.setFlags(b.flags() | f)
		*counter++
	case !on && was:
		b.setFlags(b.flags() &^ f)
		*counter--
	}
}

// markCorrupt flags replica i, remembering the block as its node reported it.
func (m *Manager) markCorrupt(b *blockInfo, i int, reported Block) {
	r := &m.reps(b)[i]
	r.flags |= rCorrupt
	if reported != b.Block {
		m.corruptRep[repKey{m.stOf(*r), b.ID}] = reported
	}
}

// forget removes a block from the map and from every counter and queue.
func (m *Manager) forget(b *blockInfo) {
	m.leaveCounters(b)
	if q := m.queued[b.ID]; len(q) > 0 {
		// The active deletes these replicas; as an unknown block's they
		// are deleted if reported again after a failover.
		m.queuedCount -= len(q)
		delete(m.queued, b.ID)
	}
	m.blocks.del(b.ID)
}

// leaveCounters takes a block out of the complete, safe and corrupt
// counters, the redundancy queues, pending copies, expected locations and
// the side map of large file ids: what forget and MarkDeleted both do.
func (m *Manager) leaveCounters(b *blockInfo) {
	m.setFlag(b, bComplete, false, &m.completeBlocks)
	m.setFlag(b, bSafe, false, &m.safeBlocks)
	m.setFlag(b, bCorrupt, false, &m.corruptBlocks)
	m.needed.remove(b.ID)
	delete(m.pending, b.ID)
	delete(m.expected, b.ID)
	delete(m.ucReps, b.ID)
	if len(m.bigFile) > 0 {
		delete(m.bigFile, b.ID)
	}
}
