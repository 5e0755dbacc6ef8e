package namenode

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// The NameNode's HA state (package ha holds the rules).
//
// A NameNode that is not part of an HA nameservice becomes active at once.
// An HA NameNode starts in standby: its edit log is open for reading, the
// tailer applies the shared edits through the one apply path, and the
// checkpointer saves images and uploads them to the active. An
// administrator (hdfs haadmin, HAServiceProtocol) makes it active:
//
//	transitionToActive: stop the standby services; recover the shared and
//	  local journals' in-progress segments (the old writer is fenced by
//	  then); apply every edit not applied yet, the recovered tail included;
//	  start a segment after the last; leave block-map standby mode
//	  (process the postponed DataNode reports, mark the nodes stale,
//	  rebuild the redundancy queues); renew every lease; start the active
//	  services (redundancy and safe-mode monitor, lease monitor, edit-log
//	  auto roll); serve writes.
//	transitionToStandby: refuse writes (under the namesystem lock, so no
//	  write is half-way); stop the active services; end the segment
//	  (finalized in every journal); open the log for reading; enter
//	  block-map standby mode; start the standby services.
//
// Transitions are serialized by transMu. The state is read without locks
// for the RPC edge's check and again under the namesystem lock by the write
// path (namesystem.writable), so that no op is logged once a NameNode has
// started to become standby. A failure once the log was opened for writing
// stops the NameNode: it cannot know what it left in the journals.
type haContext struct {
	nn      *NameNode
	transMu sync.Mutex
	state   atomic.Int32 // ha.State

	// Services of the current state, owned by transMu.
	active  []*service
	standby []*service
}

func newHAContext(nn *NameNode) *haContext {
	h := &haContext{nn: nn}
	h.state.Store(int32(ha.Initializing))
	return h
}

// State is the current HA state.
func (h *haContext) State() ha.State { return ha.State(h.state.Load()) }

// check is the RPC edge's check for a call of category c.
func (h *haContext) check(c ha.Category) error {
	var err error
	if r := h.nn.role; r != RoleNameNode {
		err = ha.CheckAt(r.String(), r == RoleBackup, c)
	} else {
		err = ha.Check(h.State(), c, h.nn.cfg.HA.AllowStaleReads)
	}
	var se *ha.StandbyError
	if errors.As(err, &se) {
		return remoteerr.New(remoteerr.ClassStandby, "%s", se.Error())
	}
	return err
}

// start moves INITIALIZING to the first state: active without HA, standby
// with it.
func (h *haContext) start(ctx context.Context) error {
	if !h.nn.cfg.HA.Enabled {
		return h.becomeActive(ctx)
	}
	h.transMu.Lock()
	defer h.transMu.Unlock()
	h.enterStandbyLocked()
	return nil
}

// transitionTo moves to state to, as HAServiceProtocol asks.
func (h *haContext) transitionTo(ctx context.Context, to ha.State) error {
	if err := ha.CanTransition(h.State(), to); err != nil {
		return err
	}
	// A transition that fails halfway stops the NameNode, so it runs to
	// its end even when the caller (haadmin, a failover controller) hangs
	// up or times out.
	ctx = context.WithoutCancel(ctx)
	if to == ha.Active {
		return h.becomeActive(ctx)
	}
	return h.becomeStandby(ctx)
}

func (h *haContext) becomeActive(ctx context.Context) error {
	h.transMu.Lock()
	defer h.transMu.Unlock()
	if h.State() == ha.Active {
		return nil
	}
	nn := h.nn
	log := nn.deps.Logger
	log.Info("transitioning to active")
	stopAll(h.standby)
	h.standby = nil
	ns := nn.ns
	// A NameNode starting without HA opened its log for writing already.
	if ns.elog.State() != editlog.StateBetweenSegments {
		if err := ns.elog.InitForWrite(ctx); err != nil {
			err = fmt.Errorf("namenode: opening the edit log for writing: %w", err)
			ns.fail(err)
			return err
		}
	}
	last, n, err := ns.catchUp(ctx, editlog.ReadOptions{InProgress: true}, ns.elog.ReadOps)
	if err != nil {
		err = fmt.Errorf("namenode: reading the edits before becoming active: %w", err)
		ns.fail(err)
		return err
	}
	next := last + 1
	if err := ns.elog.StartSegment(ctx, next); err != nil {
		err = fmt.Errorf("namenode: starting edit segment %d: %w", next, err)
		ns.fail(err)
		return err
	}
	writeSeenTxID(&nn.cfg, &nn.deps, next)
	ns.writeLocked(func() {
		now := ns.clock.Now()
		ns.mu.bm.SetStandby(false, now)
		ns.mu.leases.RenewAll(now)
		h.state.Store(int32(ha.Active))
	})
	h.active = nn.startActiveServices()
	// The other NameNode may have finalized the shared edits' upgrade.
	if err := nn.refreshUpgradeState(); err != nil {
		log.Warn("reading the upgrade state", "err", err)
	}
	log.Info("NameNode is active", "caughtUp", n, "segment", next)
	return nil
}

func (h *haContext) becomeStandby(ctx context.Context) error {
	h.transMu.Lock()
	defer h.transMu.Unlock()
	if h.State() == ha.Standby {
		return nil
	}
	nn, ns := h.nn, h.nn.ns
	nn.deps.Logger.Info("transitioning to standby")
	// No write gets in once the state says standby: the write path checks
	// it under the same lock.
	ns.writeLocked(func() { h.state.Store(int32(ha.Standby)) })
	stopAll(h.active)
	h.active = nil
	if err := ns.elog.EndSegment(ctx); err != nil {
		err = fmt.Errorf("namenode: ending the edit segment: %w", err)
		ns.fail(err)
		return err
	}
	if err := ns.elog.InitForRead(); err != nil {
		ns.fail(err)
		return err
	}
	ns.setApplied(ns.elog.Stats().LastTxID)
	h.enterStandbyLocked()
	return nil
}

// enterStandbyLocked puts the block map in standby mode and starts the
// standby services. Called with transMu held.
func (h *haContext) enterStandbyLocked() {
	ns := h.nn.ns
	ns.writeLocked(func() {
		ns.mu.bm.SetStandby(true, ns.clock.Now())
		h.state.Store(int32(ha.Standby))
	})
	h.standby = h.nn.startStandbyServices()
	h.nn.deps.Logger.Info("NameNode is standby", "lastApplied", ns.applied())
}

// stop ends every service (Close).
func (h *haContext) stop() {
	h.transMu.Lock()
	defer h.transMu.Unlock()
	h.state.Store(int32(ha.Stopping))
	stopAll(h.active)
	stopAll(h.standby)
	h.active, h.standby = nil, nil
}

// service is a goroutine a state runs: run's ctx is cancelled by stop,
// which waits for run to return.
type service struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
}

func startService(name string, run func(ctx context.Context)) *service {
	ctx, cancel := context.WithCancel(context.Background())
	s := &service{name: name, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		run(ctx)
	}()
	return s
}

func stopAll(svcs []*service) {
	for _, s := range svcs {
		s.cancel()
	}
	for _, s := range svcs {
		<-s.done
	}
}

// HAState is the NameNode's HA state.
func (nn *NameNode) HAState() ha.State { return nn.ha.State() }

// LastAppliedOrWrittenTxID is the last txid the active logged, or the
// last one a standby applied (Hadoop's LastAppliedOrWrittenTxId).
func (nn *NameNode) LastAppliedOrWrittenTxID() int64 {
	if nn.ha.State() == ha.Active {
		return nn.ns.elog.Stats().LastTxID
	}
	return nn.ns.applied()
}

// TransitionToActive makes a standby NameNode active (haadmin
// -transitionToActive, HAServiceProtocol). The caller has fenced the old
// active: two writers of the shared edits corrupt them.
func (nn *NameNode) TransitionToActive(ctx context.Context) error {
	return nn.ha.transitionTo(ctx, ha.Active)
}

// TransitionToStandby makes an active NameNode standby.
func (nn *NameNode) TransitionToStandby(ctx context.Context) error {
	if !nn.cfg.HA.Enabled {
		return errors.New("namenode: not part of an HA nameservice: a NameNode without HA is always active")
	}
	return nn.ha.transitionTo(ctx, ha.Standby)
}
