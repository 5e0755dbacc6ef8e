package namenode

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/hosts"
	"github.com/hdfsgo/hdfsgo/internal/namenode/lease"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/namenode/retrycache"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// namesystem is the state every RPC service shares: the tree, the edit log and
// the lock that orders them (Hadoop's FSNamesystem, without its other jobs).
type namesystem struct {
	cfg   Config
	clock clock.Clock
	log   *slog.Logger
	// elog is the edit log ops are written to (set once the log is open;
	// start-up replays into the namesystem before that).
	elog *editlog.Log
	// retry is the retry cache (nil when dfs.namenode.enable.retrycache is
	// false); replayed ops fill it too.
	retry *retrycache.Cache
	// rpc is the NameNode's RPC server once it has one: paceSlice asks it
	// whether other calls are waiting.
	rpc atomic.Pointer[ipc.Server]
	// reporting counts the full block reports being handled, waiting for
	// their turn or processed: paceSlice does not count them as others.
	reporting atomic.Int64
	// pauses and pauseNanos count paceSlice's pauses and their time
	// (NameNodeActivity's SlicePauseNumOps and SlicePauseTotalTime).
	pauses, pauseNanos atomic.Int64
	// logTimes time the edit log's appends and syncs (NameNodeActivity).
	logTimes logTimes
	// lockHold measures the write lock's holds (NameNodeActivity).
	lockHold lockHolds

	// mu is the namesystem lock: writers hold it while planning, logging
	// (buffering) and applying ops; readers while reading the tree. Nobody
	// holds it during I/O.
	mu struct {
		sync.RWMutex
		tree *namespace.Tree
		// bm is the block manager: block → DataNodes, DataNode liveness,
		// replication work and safe mode. It shares the namesystem lock.
		bm *blockmgmt.Manager
		// leases and recoveries track files open for write (package lease).
		leases     *lease.Manager
		recoveries *lease.RecoveryTracker
		// hosts is the host files' policy in force (admin.go); nil
		// before the NameNode starts.
		hosts *hosts.Policy
		// toFree are blocks freed by applied ops and not yet removed from
		// bm (freeBlocksLocked); freeing is their number, read without
		// the lock. Those from toFree[marked] on are not yet marked
		// deleted in bm.
		toFree []int64
		marked int
		// setrep are the blocks of big files whose replication an
		// applied op changed and the block map has not taken yet
		// (setReplicationLocked); resetting is their number, read
		// without the lock.
		setrep []replWork
	}
	freeing, resetting atomic.Int64
	// detaching is the number of inodes of deleted subtrees the tree has
	// not released yet (releaseSliceLocked), read without the lock.
	detaching atomic.Int64
	// populating: the block map has blocks left to judge into its
	// redundancy queues (holdWriteLock), read without the lock.
	populating atomic.Bool

	// lastApplied is the last txid applied from the edit log by catchUp.
	lastApplied atomic.Int64
	// cpMu is the checkpoint lock: catchUp holds it while it applies, and a
	// standby's checkpointer while it writes an image, which it does
	// without the namesystem lock since nothing else changes a standby's
	// tree.
	cpMu sync.Mutex
	// writable, when set, is asked under the write lock before anything
	// is logged: a NameNode that is not active refuses (HA).
	writable func() error

	// failed is set once the log can no longer make edits durable; every
	// later mutation is refused and the NameNode stops.
	failed   atomic.Pointer[error]
	failOnce sync.Once
	failedCh chan struct{}
}

// newNamesystem builds the namesystem of an image's tree: the block map and
// the leases are rebuilt from it (the blocks of every file, the last block
// of an open file under construction; a lease per open file). Edits after
// the image are then applied with replayLocked; activate ends the loading.
func newNamesystem(cfg Config, clk clock.Clock, logger *slog.Logger, tree *namespace.Tree, retry *retrycache.Cache) *namesystem {
	n := &namesystem{cfg: cfg, clock: clk, log: logger, retry: retry, failedCh: make(chan struct{})}
	n.resetLocked(tree)
	return n
}

// resetLocked makes tree the namesystem's and rebuilds from it everything
// else that follows from an image: the block map and the leases. A new
// namesystem starts so; a checkpointer that downloads an image in place of
// its namespace (the gap path) does it with the write lock held.
func (n *namesystem) resetLocked(tree *namespace.Tree) {
	cfg, clk, logger := n.cfg, n.clock, n.log
	n.mu.tree = tree
	n.mu.toFree, n.mu.marked = nil, 0
	n.freeing.Store(0)
	n.mu.setrep = nil
	n.resetting.Store(0)
	n.detaching.Store(tree.Detached())
	bcfg := cfg.Blocks
	bcfg.StoragePolicy = blockPolicy
	n.mu.bm = blockmgmt.New(bcfg, rand.New(&lockedSource{src: rand.NewPCG(uint64(clk.Now().UnixNano()), 0x9e3779b97f4a7c15)}))
	// The second relation is rebuilt from the first: every block the
	// namespace knows, without locations until DataNodes report them.
	tree.EachFileWithBlocks(func(id uint64, repl uint16, policy uint8, blocks []op.Block, uc bool) {
		defer n.mu.bm.SetStoragePolicy(blockIDs(blocks), policy)
		for i, b := range blocks {
			st := blockmgmt.Complete
			if uc && i == len(blocks)-1 {
				st = blockmgmt.UnderConstruction
			}
			if err := n.mu.bm.AddBlock(int64(id), blockmgmt.Block(b), int(repl), st, nil); err != nil {
				logger.Error("block map rebuild", "block", b.ID, "err", err)
			}
		}
	})
	n.mu.bm.SetMaxGenStamp(tree.GenStamp())
	n.mu.leases = lease.NewManager(lease.Limits{Soft: cfg.Testing.LeaseSoftLimit, Hard: cfg.LeaseHardLimit})
	n.mu.recoveries = lease.NewRecoveryTracker()
	var ucs []lease.UC
	tree.UnderConstruction(func(id uint64, path, client string) {
		ucs = append(ucs, lease.UC{FileID: id, Holder: client})
	})
	n.mu.leases.Rebuild(ucs, clk.Now())
}

// reader reads edits, as editlog.ReadOps does for some set of journals.
type reader func(ctx context.Context, opts editlog.ReadOptions, fn func(txid int64, o op.Op) error) (int64, error)

// catchUp applies the edits read after the last applied txid (opts.From is
// set to it) through the one apply path, and returns the last txid applied
// and how many. Start-up replay, the standby's tailer and a standby
// becoming active all use it. Each op takes the write lock for itself, so
// readers and DataNode reports go on meanwhile. The DataNode reports that
// waited for these edits are processed after them.
func (n *namesystem) catchUp(ctx context.Context, opts editlog.ReadOptions, read reader) (last int64, applied int64, err error) {
	n.cpMu.Lock()
	defer n.cpMu.Unlock()
	opts.From = n.applied()
	last, err = read(ctx, opts, func(txid int64, o op.Op) error {
		if err := n.applyEdit(txid, o); err != nil {
			return err
		}
		applied++
		return nil
	})
	if applied > 0 {
		n.writeLocked(func() { n.mu.bm.ProcessQueued(n.clock.Now()) })
	}
	return max(last, n.applied()), applied, err
}

// applyEdit applies the edit txid, read from a log, through the one apply
// path and records it as the last applied. The caller holds cpMu.
func (n *namesystem) applyEdit(txid int64, o op.Op) error {
	var err error
	n.writeLocked(func() { err = n.applyLocked(o, true) })
	if err != nil {
		return fmt.Errorf("namenode: edit %d (%v) does not apply: %w", txid, o.Code(), err)
	}
	n.lastApplied.Store(txid)
	return nil
}

// applied is the last txid applied from the edit log (a standby's and a
// loading NameNode's progress; an active's log is ahead of it).
func (n *namesystem) applied() int64 { return n.lastApplied.Load() }

func (n *namesystem) setApplied(txid int64) { n.lastApplied.Store(txid) }

// activate ends the loading phase: safe mode starts counting reported blocks.
func (n *namesystem) activate() {
	n.writeLocked(func() { n.mu.bm.Activate(n.clock.Now()) })
}

// nowMillis is the current time in Hadoop's unit.
func (n *namesystem) nowMillis() int64 { return n.clock.Now().UnixMilli() }

// fail records a fatal error: the NameNode can no longer promise durability.
func (n *namesystem) fail(err error) {
	n.stop(err, "NameNode can no longer log edits durably; stopping")
}

// stop records a fatal error, logged with why, and stops the NameNode.
func (n *namesystem) stop(err error, why string) {
	n.failOnce.Do(func() {
		n.failed.Store(&err)
		n.log.Error(why, "err", err)
		// Nothing logged after this point may become durable: an op
		// whose apply failed half-way must not reach the journals.
		if n.elog != nil {
			n.elog.Fail(err)
		}
		close(n.failedCh)
	})
}

// Err returns the fatal error, if any.
func (n *namesystem) Err() error {
	if p := n.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// errFailed is what clients get once the namesystem has failed.
var errFailed = errors.New("namenode: the edit log failed; the NameNode is shutting down")

// plan decides one namespace mutation with the write lock held: it reads
// the tree and returns the ops that carry the mutation out, or an error.
// It changes nothing itself.
type plan func(t *namespace.Tree, now int64) (ops []op.Op, err error)

// followUp changes soft state (not in the edit log: pipelines, recoveries
// under way, committed lengths) once a step's ops are applied, with the
// write lock still held.
type followUp func()

// blockPlan is a plan that also reads the block map. Besides its ops it may
// return a followUp, and it may return ops together with an error: the ops
// are logged, applied and synced, and then the error is the answer (as when
// a create finds an abandoned file and starts its lease recovery first).
type blockPlan func(t *namespace.Tree, bm blockmgmt.View, now int64) ([]op.Op, followUp, error)

func namespacePlan(p plan) blockPlan {
	return func(t *namespace.Tree, _ blockmgmt.View, now int64) ([]op.Op, followUp, error) {
		ops, err := p(t, now)
		return ops, nil, err
	}
}

// mutate runs one mutation: plan, log and apply under the write lock, then wait
// for the ops to be durable. It returns the plan's error unchanged; log
// failures come back as errFailed-wrapped I/O errors.
func (n *namesystem) mutate(ctx context.Context, p plan) error {
	return n.run(ctx, false, nil, namespacePlan(p))
}

// mutateBlocks is mutate for plans that need the block map; steps run in
// order under one hold of the lock, each seeing what the ones before
// applied, and the first error ends the run.
func (n *namesystem) mutateBlocks(ctx context.Context, steps ...blockPlan) error {
	return n.run(ctx, false, nil, steps...)
}

// mutateThenRead is mutateBlocks, with read run on the tree right after the
// ops are applied, under the same lock hold: it sees exactly the result of
// the steps (a reply built from the new state needs no second lookup, which
// a concurrent operation could have overtaken). read runs before the ops
// are durable; its result must only be used once mutateThenRead returns nil.
func (n *namesystem) mutateThenRead(ctx context.Context, read func(t *namespace.Tree), steps ...blockPlan) error {
	return n.run(ctx, false, read, steps...)
}

// mutateBlocksAnyMode is mutateBlocks that runs in safe mode too (DataNode
// reports of block recovery, which Hadoop accepts in safe mode).
func (n *namesystem) mutateBlocksAnyMode(ctx context.Context, steps ...blockPlan) error {
	return n.run(ctx, true, nil, steps...)
}

// run is the write path: under the write lock, each step plans, its ops are
// logged as one batch and applied, and its follow-up runs; then, outside the
// lock, the caller waits until everything logged is durable — also when a
// step failed after logging — and gets the first error.
func (n *namesystem) run(ctx context.Context, anyMode bool, read func(t *namespace.Tree), steps ...blockPlan) error {
	if err := n.Err(); err != nil {
		return fmt.Errorf("%w: %v", errFailed, err)
	}
	var last int64
	var err error
	n.writeLocked(func() {
		if n.writable != nil {
			if err = n.writable(); err != nil {
				return
			}
		}
		if !anyMode && n.mu.bm.InSafeMode() {
			_, msg := n.mu.bm.SafeModeStatus(n.clock.Now())
			err = remoteerr.New(remoteerr.ClassSafeMode, "%s. Name node is in safe mode.\n%s", safeModeOp(ctx), msg)
			return
		}
		for _, step := range steps {
			ops, after, perr := step(n.mu.tree, n.mu.bm, n.nowMillis())
			stampCall(ctx, ops)
			if len(ops) > 0 {
				txid, lerr := n.logAndApplyLocked(ops)
				if lerr != nil {
					err = lerr
					return
				}
				last = txid
			}
			if after != nil {
				after()
			}
			if perr != nil {
				err = perr
				return
			}
		}
		if read != nil {
			read(n.mu.tree)
		}
	})
	if last > 0 {
		if serr := n.sync(ctx, last); serr != nil {
			return serr
		}
	}
	return err
}

// writeLocked runs f with the namesystem write lock held and releases it on
// every path. A panic inside f is a bug that may have left the namesystem
// half-changed: the namesystem fails (nothing more is logged or
// acknowledged, and the NameNode stops with a non-zero exit) before the
// panic goes on to the caller, which for an RPC handler is the RPC server's
// recovery, answering that one call with an error.
//
// Work that ops left queued (blocks freed, freeBlocksLocked; a big file's
// new replication, setReplicationLocked; a deleted subtree to release,
// releaseSliceLocked) is then done, a slice per further hold of the lock,
// before writeLocked returns.
func (n *namesystem) writeLocked(f func()) {
	n.holdWriteLock(f)
	for start := time.Now(); n.freeing.Load() > 0 || n.resetting.Load() > 0 || n.detaching.Load() > 0 || n.populating.Load(); {
		start = n.paceSlice(start)
		n.holdWriteLock(func() {
			switch {
			case len(n.mu.setrep) > 0:
				n.setrepSliceLocked()
			case n.mu.tree.Detached() > 0:
				n.releaseSliceLocked()
			case len(n.mu.toFree) > 0:
				n.freeSliceLocked()
			case n.mu.bm.Populating():
				n.mu.bm.PopulateFor(n.sliceOver())
			default:
				n.detaching.Store(0)
			}
		})
	}
}

// paceSlice is called between two slices of a long operation (a full
// block report, releasing a deleted tree, removing blocks, a big setrep,
// populating the redundancy queues), the last of which began at start; it
// returns when the next may begin. Releasing the lock between slices lets
// other callers take it, but on two cores they would still wait for a CPU
// while the long operation keeps one busy: while other calls are in flight
// on the RPC server (two or more besides full block reports, which wait
// for one another and must not slow one another down: a NameNode starting
// takes every DataNode's report at full speed), it waits as long as the
// last slice ran, so a long operation takes at most half a CPU from them
// and its slices at most double its time (docs/PERFORMANCE.md, "Pacing").
// In safe mode it does not wait: a NameNode starting serves reads only, and
// leaves safe mode sooner the sooner the reports are processed. Otherwise
// it goes on at once, but first lets the goroutines waiting for its
// processor run.
func (n *namesystem) paceSlice(start time.Time) time.Time {
	if s := n.rpc.Load(); s != nil && s.InFlight()-n.reporting.Load() > 1 && !n.inSafeMode() {
		d := time.Since(start)
		time.Sleep(d)
		n.pauses.Add(1)
		n.pauseNanos.Add(int64(d))
	} else {
		runtime.Gosched()
	}
	return time.Now()
}

// holdWriteLock runs f with the write lock held, then notes whether the
// block map has redundancy queues left to populate (blockmgmt.PopulateFor:
// after start-up safe mode or a failover, in slices like the rest).
func (n *namesystem) holdWriteLock(f func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	defer n.lockHold.note(time.Now())
	defer n.failOnPanic()
	f()
	n.populating.Store(n.mu.bm.Populating())
}

// lockHolds measures the holds of the write lock taken by writeLocked:
// how many, and the longest since the last reset (NameNodeActivity's
// WriteLockHold figures; the bench reads them too).
type lockHolds struct {
	n, maxNanos atomic.Int64
}

func (h *lockHolds) note(start time.Time) {
	d := int64(time.Since(start))
	h.n.Add(1)
	for {
		m := h.maxNanos.Load()
		if d <= m || h.maxNanos.CompareAndSwap(m, d) {
			return
		}
	}
}

// failOnPanic, deferred by holders of the write lock, turns a panic into a
// namesystem failure and re-raises it.
func (n *namesystem) failOnPanic() {
	if r := recover(); r != nil {
		n.fail(fmt.Errorf("namenode: panic with the namesystem write lock held: %v", r))
		n.log.Error("namesystem panic", "panic", r, "stack", string(debug.Stack()))
		panic(r)
	}
}

// logAndApplyLocked appends ops to the edit log as one batch and applies
// them through applyLocked. A batch the log refuses (an op too large to be a
// record) changes nothing and is the caller's error. An op that does not
// apply after its plan accepted it is a bug that would make the log and the
// state disagree: the NameNode stops.
func (n *namesystem) logAndApplyLocked(ops []op.Op) (last int64, err error) {
	if len(ops) == 0 {
		return 0, nil
	}
	start := n.clock.Now()
	last, err = n.elog.Append(ops...)
	n.logTimes.txnNanos.Add(int64(n.clock.Now().Sub(start)))
	n.logTimes.txns.Add(int64(len(ops)))
	if errors.Is(err, editlog.ErrRecordTooLarge) {
		return 0, remoteerr.New(remoteerr.ClassIOException, "The operation is too large to be logged: %v", err)
	}
	if err != nil {
		return 0, err
	}
	txid := last - int64(len(ops)) + 1
	for _, o := range ops {
		if hook := n.cfg.Testing.BeforeApply; hook != nil {
			hook(o)
		}
		if err := n.applyLocked(o, false); err != nil {
			err = fmt.Errorf("namenode: op %v (txid %d) planned but did not apply: %w", o.Code(), txid, err)
			n.fail(err)
			return 0, fmt.Errorf("%w: %v", errFailed, err)
		}
		txid++
	}
	return last, nil
}

// sync waits until txid is durable. A log failure is fatal.
//
// With asynchronous edit logging and a ctx of an RPC handler, it does not
// wait: the call's reply is held (ipc.DeferReply) and the edit log's syncer
// releases it once txid is durable, or replaces it by the failure; sync
// returns nil at once and the handler builds its reply as if the wait had
// succeeded (see the package doc).
func (n *namesystem) sync(ctx context.Context, txid int64) error {
	if txid <= 0 {
		return nil
	}
	if n.cfg.AsyncEditLogging {
		if release, ok := ipc.DeferReply(ctx); ok {
			start := n.clock.Now()
			n.elog.SyncAsync(txid, func(err error) {
				n.logTimes.syncNanos.Add(int64(n.clock.Now().Sub(start)))
				n.logTimes.syncs.Add(1)
				if err != nil {
					n.fail(err)
					err = fmt.Errorf("%w: %v", errFailed, err)
				}
				release(err)
			})
			return nil
		}
	}
	// The op is already visible in the tree: it must become durable even if
	// the caller stops waiting, so the wait ignores the caller's cancellation.
	start := n.clock.Now()
	err := n.elog.Sync(context.WithoutCancel(ctx), txid)
	n.logTimes.syncNanos.Add(int64(n.clock.Now().Sub(start)))
	n.logTimes.syncs.Add(1)
	if err != nil {
		n.fail(err)
		return fmt.Errorf("%w: %v", errFailed, err)
	}
	return nil
}

// irreversibleTxID returns the last txid appended so far when cmds change
// replicas for good — a deletion (DNA_INVALIDATE) or a block recovery
// (DNA_RECOVERBLOCK: replicas cut by a truncate, copied, or given the
// recovery's stamp) — and some appended op is not yet durable, else 0: the
// commands may not leave before that txid is durable, since the op that
// asked for them (a delete, a truncate, the recovery's stamp) may be among
// those not synced, and a NameNode killed before the sync comes back
// without it. Called with the write lock held.
func (n *namesystem) irreversibleTxID(cmds []blockmgmt.Command) int64 {
	if n.elog == nil {
		return 0
	}
	for _, c := range cmds {
		switch c.(type) {
		case blockmgmt.Invalidate, blockmgmt.RecoverBlock:
			if st := n.elog.Stats(); st.LastTxID > st.SyncedTxID {
				return st.LastTxID
			}
			return 0
		}
	}
	return 0
}

// syncAppended waits, as sync does, until everything appended so far is
// durable: a retried call answered from the retry cache must not be
// answered before the first call's ops are.
func (n *namesystem) syncAppended(ctx context.Context) error {
	if n.elog == nil {
		return nil
	}
	st := n.elog.Stats()
	if st.LastTxID <= st.SyncedTxID {
		return nil
	}
	return n.sync(ctx, st.LastTxID)
}

// read runs f with the read lock held.
func (n *namesystem) read(f func(t *namespace.Tree)) {
	n.readLocked(func() { f(n.mu.tree) })
}

// readLocked runs f with the read lock held and releases it on every path.
// Readers change nothing, so a panic in f is contained: the RPC server
// answers that call with an error and the NameNode goes on.
func (n *namesystem) readLocked(f func()) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	f()
}

// inSafeMode reports whether the namespace is read-only: at start-up until
// enough blocks are reported, or when an administrator turned it on.
func (n *namesystem) inSafeMode() bool {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.mu.bm.InSafeMode()
}

// setSafeMode enters or leaves safe mode (dfsadmin -safemode enter|leave|forceExit).
// Leaving it starts the redundancy queues' population, which writeLocked
// finishes in slices before the call returns.
func (n *namesystem) setSafeMode(on, force bool) error {
	var err error
	n.writeLocked(func() {
		was := n.mu.bm.InSafeMode()
		if on {
			n.mu.bm.EnterSafeMode()
		} else if lerr := n.mu.bm.LeaveSafeMode(force); lerr != nil {
			err = remoteerr.New(remoteerr.ClassIOException, "%v", lerr)
			return
		}
		if now := n.mu.bm.InSafeMode(); now != was {
			if now {
				n.log.Info("safe mode is ON (entered manually)")
			} else {
				n.log.Info("safe mode is OFF")
			}
		}
	})
	return err
}

// dumpLocations writes every block with the DataNodes that reported a good
// finalized replica of it: what an active and its standby, which hear the
// same reports, must agree on too.
func (n *namesystem) dumpLocations(w io.Writer) error {
	n.mu.RLock()
	defer n.mu.RUnlock()
	bw := bufio.NewWriter(w)
	n.mu.bm.EachBlock(func(b blockmgmt.BlockInfo) {
		fmt.Fprintf(bw, "blk_%d_%d %v\n", b.ID, b.GenStamp, n.mu.bm.Replicas(b.ID))
	})
	return bw.Flush()
}

// dump writes, deterministically, everything the edit log determines: the
// namespace, the block map's blocks (file, length, stamp, replication and
// whether the length is final) and the leases. Two namesystems that applied
// the same edits dump the same text whatever their DataNodes reported (a
// block is "final" once committed or complete, a state its replicas decide
// between). Tests compare dumps across restarts and between an active and a
// standby.
func (n *namesystem) dump(w io.Writer) error {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if err := n.mu.tree.Dump(w); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	n.mu.bm.EachBlock(func(b blockmgmt.BlockInfo) {
		state := "final"
		if b.State == blockmgmt.UnderConstruction || b.State == blockmgmt.UnderRecovery {
			state = "uc"
		}
		fmt.Fprintf(bw, "block blk_%d_%d len=%d file=%d repl=%d %s\n", b.ID, b.GenStamp, b.NumBytes, b.FileID, b.Replication, state)
	})
	leases := n.mu.leases.Leases()
	slices.SortFunc(leases, func(a, b lease.Info) int { return strings.Compare(a.Holder, b.Holder) })
	for _, l := range leases {
		fmt.Fprintf(bw, "lease %q files=%v\n", l.Holder, l.FileIDs)
	}
	return bw.Flush()
}

// lockedSource is the block manager's random source. Readers holding only
// the namesystem's read lock draw from it concurrently (getBlockLocations
// shuffles replicas of equal distance, getBlocks picks where to start), so
// it serializes the draws itself.
type lockedSource struct {
	mu  sync.Mutex
	src rand.Source
}

func (l *lockedSource) Uint64() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.src.Uint64()
}
