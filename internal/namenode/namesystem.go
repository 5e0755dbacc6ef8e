package namenode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/lease"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// namesystem is the state every RPC service shares: the tree, the edit log and
// the lock that orders them (Hadoop's FSNamesystem, without its other jobs).
type namesystem struct {
	cfg   Config
	clock clock.Clock
	log   *slog.Logger
	elog  *editlog.Log

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
	}

	// failed is set once the log can no longer make edits durable; every
	// later mutation is refused and the NameNode stops.
	failed   atomic.Pointer[error]
	failOnce sync.Once
	failedCh chan struct{}
}

func newNamesystem(cfg Config, clk clock.Clock, logger *slog.Logger, tree *namespace.Tree, elog *editlog.Log) *namesystem {
	n := &namesystem{cfg: cfg, clock: clk, log: logger, elog: elog, failedCh: make(chan struct{})}
	n.mu.tree = tree
	n.mu.bm = blockmgmt.New(cfg.Blocks, rand.New(rand.NewPCG(uint64(clk.Now().UnixNano()), 0x9e3779b97f4a7c15)))
	// The second relation is rebuilt from the first: every block the
	// namespace knows, without locations until DataNodes report them.
	tree.EachFileWithBlocks(func(id uint64, repl uint16, blocks []op.Block, uc bool) {
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
	n.mu.bm.Activate(clk.Now())
	return n
}

// nowMillis is the current time in Hadoop's unit.
func (n *namesystem) nowMillis() int64 { return n.clock.Now().UnixMilli() }

// fail records a fatal error: the NameNode can no longer promise durability.
func (n *namesystem) fail(err error) {
	n.failOnce.Do(func() {
		n.failed.Store(&err)
		n.log.Error("NameNode can no longer log edits durably; stopping", "err", err)
		// Nothing logged after this point may become durable: an op
		// whose apply failed half-way must not reach the journals.
		n.elog.Fail(err)
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

// plan computes the ops for one mutation with the write lock held. It returns
// the ops and a result the caller passes back to the client.
type plan func(t *namespace.Tree, now int64) (ops []op.Op, err error)

// mutate runs one mutation: plan, log and apply under the write lock, then wait
// for the ops to be durable. It returns the plan's error unchanged; log
// failures come back as errFailed-wrapped I/O errors. Blocks the ops free go to
// the block manager for deletion on their DataNodes.
func (n *namesystem) mutate(ctx context.Context, p plan) error {
	return n.mutateBlocks(ctx, func(t *namespace.Tree, _ *blockmgmt.Manager, now int64) ([]op.Op, error) {
		return p(t, now)
	})
}

// blockPlan is a plan that also consults or updates the block manager.
type blockPlan func(t *namespace.Tree, bm *blockmgmt.Manager, now int64) ([]op.Op, error)

// mutateBlocks is mutate for plans that need the block manager.
func (n *namesystem) mutateBlocks(ctx context.Context, p blockPlan) error {
	return n.doMutate(ctx, p, false, nil)
}

// mutateThenRead is mutate, with read run on the tree right after the ops
// are applied, under the same lock hold: it sees exactly the result of p
// (a reply built from the new state needs no second lookup, which a
// concurrent operation could have overtaken). read runs before the ops are
// durable; its result must only be used once mutateThenRead returns nil.
func (n *namesystem) mutateThenRead(ctx context.Context, p plan, read func(t *namespace.Tree)) error {
	return n.doMutate(ctx, func(t *namespace.Tree, _ *blockmgmt.Manager, now int64) ([]op.Op, error) {
		return p(t, now)
	}, false, read)
}

// mutateBlocksAnyMode is mutateBlocks that runs in safe mode too (DataNode
// reports of block recovery, which Hadoop accepts in safe mode).
func (n *namesystem) mutateBlocksAnyMode(ctx context.Context, p blockPlan) error {
	return n.doMutate(ctx, p, true, nil)
}

func (n *namesystem) doMutate(ctx context.Context, p blockPlan, anyMode bool, read func(t *namespace.Tree)) error {
	if err := n.Err(); err != nil {
		return fmt.Errorf("%w: %v", errFailed, err)
	}
	var last int64
	var err error
	n.writeLocked(func() {
		if !anyMode && n.mu.bm.InSafeMode() {
			_, msg := n.mu.bm.SafeModeStatus(n.clock.Now())
			err = remoteerr.New(remoteerr.ClassSafeMode, "Cannot modify the namespace. Name node is in safe mode.\n%s", msg)
			return
		}
		var ops []op.Op
		if ops, err = p(n.mu.tree, n.mu.bm, n.nowMillis()); err != nil {
			return
		}
		if last, err = n.logAndApplyLocked(ops); err == nil && read != nil {
			read(n.mu.tree)
		}
	})
	if err != nil {
		return err
	}
	return n.sync(ctx, last)
}

// writeLocked runs f with the namesystem write lock held and releases it on
// every path. A panic inside f is a bug that may have left the namesystem
// half-changed: the namesystem fails (nothing more is logged or
// acknowledged, and the NameNode stops with a non-zero exit) before the
// panic goes on to the caller, which for an RPC handler is the RPC server's
// recovery, answering that one call with an error.
func (n *namesystem) writeLocked(f func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	defer n.failOnPanic()
	f()
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
// them. A batch the log refuses (an op too large to be a record) changes
// nothing and is the caller's error. An op that does not apply after its
// plan accepted it is a bug that would make the log and the tree disagree:
// the NameNode stops. Blocks the ops free go to the block manager for
// deletion on their DataNodes; files they remove lose their leases.
func (n *namesystem) logAndApplyLocked(ops []op.Op) (last int64, err error) {
	if len(ops) == 0 {
		return 0, nil
	}
	last, err = n.elog.Append(ops...)
	if errors.Is(err, editlog.ErrRecordTooLarge) {
		return 0, remoteerr.New(remoteerr.ClassIOException, "The operation is too large to be logged: %v", err)
	}
	if err != nil {
		return 0, err
	}
	now := n.clock.Now()
	txid := last - int64(len(ops)) + 1
	for _, o := range ops {
		if hook := n.cfg.Testing.BeforeApply; hook != nil {
			hook(o)
		}
		var e namespace.Effects
		if err := n.mu.tree.ApplyEffects(o, &e); err != nil {
			err = fmt.Errorf("namenode: op %v (txid %d) planned but did not apply: %w", o.Code(), txid, err)
			n.fail(err)
			return 0, fmt.Errorf("%w: %v", errFailed, err)
		}
		txid++
		n.noteLeaseLocked(o, now)
		for _, id := range e.RemovedUC {
			n.mu.leases.RemoveFile(id)
		}
		if len(e.FreedBlocks) > 0 {
			ids := make([]int64, len(e.FreedBlocks))
			for i, b := range e.FreedBlocks {
				ids[i] = b.ID
			}
			n.mu.bm.RemoveBlocks(ids)
		}
	}
	return last, nil
}

// sync waits until txid is durable. A log failure is fatal.
func (n *namesystem) sync(ctx context.Context, txid int64) error {
	if txid == 0 {
		return nil
	}
	// The op is already visible in the tree: it must become durable even if
	// the caller stops waiting, so the wait ignores the caller's cancellation.
	if err := n.elog.Sync(context.WithoutCancel(ctx), txid); err != nil {
		n.fail(err)
		return fmt.Errorf("%w: %v", errFailed, err)
	}
	return nil
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
func (n *namesystem) setSafeMode(on, force bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	was := n.mu.bm.InSafeMode()
	if on {
		n.mu.bm.EnterSafeMode()
	} else if err := n.mu.bm.LeaveSafeMode(force); err != nil {
		return remoteerr.New(remoteerr.ClassIOException, "%v", err)
	}
	if now := n.mu.bm.InSafeMode(); now != was {
		if now {
			n.log.Info("safe mode is ON (entered manually)")
		} else {
			n.log.Info("safe mode is OFF")
		}
	}
	return nil
}

// dump writes the whole namespace, deterministically (for tests and -metasave).
func (n *namesystem) dump(w io.Writer) error {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.mu.tree.Dump(w)
}
