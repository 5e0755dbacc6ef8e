package namenode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
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
		tree     *namespace.Tree
		safeMode bool // entered by an administrator; left only by one
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
// failures come back as errFailed-wrapped I/O errors.
func (n *namesystem) mutate(ctx context.Context, p plan) error {
	return n.mutateEffects(ctx, p, nil)
}

// mutateEffects is mutate that also reports what the ops removed.
func (n *namesystem) mutateEffects(ctx context.Context, p plan, eff *namespace.Effects) error {
	if err := n.Err(); err != nil {
		return fmt.Errorf("%w: %v", errFailed, err)
	}
	n.mu.Lock()
	if n.mu.safeMode {
		n.mu.Unlock()
		return remoteerr.New(remoteerr.ClassSafeMode, "Cannot modify the namespace. Name node is in safe mode.\n%s", n.safeModeTipLocked())
	}
	ops, err := p(n.mu.tree, n.nowMillis())
	if err != nil {
		n.mu.Unlock()
		return err
	}
	last, err := n.logAndApplyLocked(ops, eff)
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
	for _, o := range ops {
		last = n.elog.Append(o)
		if err := n.mu.tree.ApplyEffects(o, eff); err != nil {
			err = fmt.Errorf("namenode: op %v (txid %d) planned but did not apply: %w", o.Code(), last, err)
			n.fail(err)
			return 0, fmt.Errorf("%w: %v", errFailed, err)
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

// safeModeTipLocked explains how safe mode ends.
func (n *namesystem) safeModeTipLocked() string {
	return "It was turned on manually. Use \"hdfs dfsadmin -safemode leave\" to turn safe mode off."
}

// safeModeStatus reports safe mode as `hdfs dfsadmin -safemode get` prints it.
func (n *namesystem) inSafeMode() bool {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.mu.safeMode
}

func (n *namesystem) setSafeMode(on bool) {
	n.mu.Lock()
	changed := n.mu.safeMode != on
	n.mu.safeMode = on
	n.mu.Unlock()
	if changed {
		if on {
			n.log.Info("safe mode is ON (entered manually)")
		} else {
			n.log.Info("safe mode is OFF")
		}
	}
}

// dump writes the whole namespace, deterministically (for tests and -metasave).
func (n *namesystem) dump(w io.Writer) error {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.mu.tree.Dump(w)
}
