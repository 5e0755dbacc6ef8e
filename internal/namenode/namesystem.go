package namenode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
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
	n.mu.Lock()
	if !anyMode && n.mu.bm.InSafeMode() {
		_, msg := n.mu.bm.SafeModeStatus(n.clock.Now())
		n.mu.Unlock()
		return remoteerr.New(remoteerr.ClassSafeMode, "Cannot modify the namespace. Name node is in safe mode.\n%s", msg)
	}
	ops, err := p(n.mu.tree, n.mu.bm, n.nowMillis())
	if err != nil {
		n.mu.Unlock()
		return err
	}
	var eff namespace.Effects
	last, err := n.logAndApplyLocked(ops, &eff)
	if len(eff.FreedBlocks) > 0 {
		ids := make([]int64, len(eff.FreedBlocks))
		for i, b := range eff.FreedBlocks {
			ids[i] = b.ID
		}
		n.mu.bm.RemoveBlocks(ids)
	}
	for _, id := range eff.RemovedUC {
		n.mu.leases.RemoveFile(id)
	}
	if err == nil && read != nil {
		read(n.mu.tree)
	}
	n.mu.Unlock()
	if err != nil {
		return err
	}
	return n.sync(ctx, last)
}

// logAndApplyLocked appends ops to the edit log and applies them. An op that
// does not apply after its plan accepted it is a bug that would make the log
// and the tree disagree: the NameNode stops.
func (n *namesystem) logAndApplyLocked(ops []op.Op, eff *namespace.Effects) (last int64, err error) {
	now := n.clock.Now()
	for _, o := range ops {
		var e namespace.Effects
		last = n.elog.Append(o)
		if err := n.mu.tree.ApplyEffects(o, &e); err != nil {
			err = fmt.Errorf("namenode: op %v (txid %d) planned but did not apply: %w", o.Code(), last, err)
			n.fail(err)
			return 0, fmt.Errorf("%w: %v", errFailed, err)
		}
		n.noteLeaseLocked(o, now)
		for _, id := range e.RemovedUC {
			n.mu.leases.RemoveFile(id)
		}
		if eff != nil {
			eff.FreedBlocks = append(eff.FreedBlocks, e.FreedBlocks...)
			eff.RemovedUC = append(eff.RemovedUC, e.RemovedUC...)
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
	n.mu.RLock()
	defer n.mu.RUnlock()
	f(n.mu.tree)
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
