package zkfc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/haservice"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/security/authorize"
	"github.com/hdfsgo/hdfsgo/internal/zkfc/elector"
	"github.com/hdfsgo/hdfsgo/internal/zkfc/health"
)

// Deps are a controller's outside parts; zero fields take the real ones.
type Deps struct {
	Logger *slog.Logger
	// Clock drives the elector's timers and dates active attempts; nil is
	// the wall clock. Network timeouts use the wall clock.
	Clock clock.Clock
	// Listener serves ZKFCProtocol; nil listens on Config.RPCAddress.
	Listener net.Listener
	// Dial reaches the HA services (the local NameNode, an old active to
	// fence); nil is haservice.ClientDialer as Config.User.
	Dial haservice.Dialer
	// Fencer runs the fencing methods; nil runs them with
	// hdfsgo.ha.fencing.shell.timeout.
	Fencer *haservice.Fencer
	// Resolver resolves the host a znode names; nil is the system's.
	Resolver haservice.Resolver
}

// Controller is a running failover controller (Hadoop's
// DFSZKFailoverController): its health monitor, its elector loop and its
// ZKFCProtocol server. Close stops it; Done is closed when it stopped by
// itself (a fatal error: Err).
type Controller struct {
	cfg        Config
	deps       Deps
	healthDial haservice.Dialer // the health monitor's connections
	log        *slog.Logger
	data       []byte // the local NameNode's NodeInfo, as written in ZooKeeper
	rpc        *ipc.Server
	rpcAddr    net.Addr

	// ctx ends when the controller stops: it bounds fencing and calls.
	ctx    context.Context
	cancel context.CancelFunc

	inbox *inbox
	// Owned by the loop goroutine.
	el       *elector.Elector
	sessions map[int]*session

	pub struct {
		sync.Mutex
		health   health.State
		session  *session // the elector's current session, for queries
		attempts []attempt
		changed  chan struct{} // closed and replaced on every change
	}

	timers struct {
		sync.Mutex
		stopped bool
		all     map[clock.Timer]struct{}
	}

	wg        sync.WaitGroup
	closeOnce sync.Once
	stopLoop  chan struct{}
	done      chan struct{}
	fatalOnce sync.Once
	fatalMsg  string
	fatal     chan struct{}
	closeErr  error
}

// attempt is the outcome of one attempt to become active, for a graceful
// failover waiting on it.
type attempt struct {
	ok  bool
	msg string
	at  time.Time
}

// Start runs a controller for the local NameNode of cfg: it opens a
// ZooKeeper session (ErrNoZooKeeper), checks the parent znode
// (ErrNoParentZNode) and the fencing configuration (ErrNoFencer), serves
// ZKFCProtocol and starts monitoring the NameNode's health; the election
// follows from it.
func Start(ctx context.Context, cfg Config, deps Deps) (*Controller, error) {
	if !cfg.Local.AutoFailover {
		return nil, fmt.Errorf("%w: Automatic failover is not enabled for %s. Please ensure that automatic failover is enabled in the configuration before running the ZK failover controller.", ErrAutoFailoverDisabled, cfg.Local)
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Clock == nil {
		deps.Clock = clock.Real{}
	}
	healthDial := deps.Dial
	if deps.Dial == nil {
		deps.Dial = haservice.ClientDialer(cfg.User, cfg.HA, deps.Logger)
		// The health checks log their own failures, once per check.
		healthDial = haservice.ClientDialer(cfg.User, cfg.HA, nil)
	}
	if deps.Fencer == nil {
		deps.Fencer = &haservice.Fencer{Timeout: cfg.HA.ShellFenceTimeout, Logger: deps.Logger}
	}
	c := &Controller{cfg: cfg, deps: deps, healthDial: healthDial, log: deps.Logger, inbox: newInbox(), sessions: map[int]*session{},
		stopLoop: make(chan struct{}), done: make(chan struct{}), fatal: make(chan struct{})}
	c.pub.changed = make(chan struct{})
	c.timers.all = map[clock.Timer]struct{}{}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.log.Info("Failover controller configured for NameNode " + cfg.Local.String())
	// hadoop.security.authorization: callers of ZKFCProtocol must be in
	// security.zkfc.protocol.acl, as at every other daemon's RPC port.
	authz, err := authorize.IPC(cfg.Conf)
	if err != nil {
		c.cancel()
		return nil, fmt.Errorf("zkfc: service-level authorization: %w", err)
	}

	first, err := openSession(ctx, &c.cfg, 1, c.log, c.onSessionEvent)
	if err != nil {
		c.cancel()
		return nil, fmt.Errorf("Unable to start failover controller. Unable to connect to ZooKeeper quorum at %s. Please check the configured value for ha.zookeeper.quorum and ensure that ZooKeeper is running: %w", cfg.Quorum(), err)
	}
	fail := func(err error) (*Controller, error) {
		first.close()
		c.cancel()
		return nil, err
	}
	exists, err := first.parentExists()
	if err != nil {
		return fail(err)
	}
	if !exists {
		return fail(fmt.Errorf("%w: Unable to start failover controller. Parent znode does not exist.\nRun with -formatZK flag to initialize ZooKeeper.", ErrNoParentZNode))
	}
	if !cfg.Local.FencingConfigured || cfg.Local.FencingErr != nil {
		why := "no " + cfg.Local.FencingKey
		if cfg.Local.FencingErr != nil {
			why = cfg.Local.FencingErr.Error()
		}
		return fail(fmt.Errorf("%w: Fencing is not configured for %s.\nYou must configure a fencing method before using automatic failover. (%s)", ErrNoFencer, cfg.Local, why))
	}

	l := deps.Listener
	if l == nil {
		if l, err = net.Listen("tcp", cfg.RPCAddress); err != nil {
			return fail(fmt.Errorf("zkfc: ZKFC RpcServer binding to %s: %w", cfg.RPCAddress, err))
		}
	}
	c.rpcAddr = l.Addr()
	c.log.Info(fmt.Sprintf("ZKFC RpcServer binding to %s", c.rpcAddr))
	c.data = NodeInfo{Nameservice: cfg.Nameservice, NameNodeID: cfg.NameNodeID, Host: cfg.Local.Host,
		Port: cfg.Local.Port, ZKFCPort: l.Addr().(*net.TCPAddr).Port}.Encode()
	c.el = elector.New(elector.Config{Data: c.data, MaxRetries: cfg.MaxRetries,
		LockPath: cfg.LockPath(), BreadcrumbPath: cfg.BreadcrumbPath()}, first.id)
	c.sessions[first.id] = first
	c.pub.session = first

	c.rpc = ipc.NewServer(ipc.ServerConfig{Handlers: 3, Logger: c.log, Kerberos: cfg.Kerberos.ServerAcceptor(), Authorize: authz})
	haservice.RegisterZKFC(c.rpc, rpcService{c})
	c.wg.Add(3)
	go func() {
		defer c.wg.Done()
		if err := c.rpc.Serve(l); err != nil && !errors.Is(err, ipc.ErrServerClosed) {
			c.fail("ZKFC RPC server stopped: " + err.Error())
		}
	}()
	go func() { defer c.wg.Done(); c.loop() }()
	go func() { defer c.wg.Done(); c.monitorHealth() }()
	return c, nil
}

// RPCAddr is where ZKFCProtocol is served.
func (c *Controller) RPCAddr() net.Addr { return c.rpcAddr }

// Data is what the controller writes in ZooKeeper when its NameNode is
// active.
func (c *Controller) Data() []byte { return c.data }

// Done is closed when the controller stopped by itself on a fatal error.
func (c *Controller) Done() <-chan struct{} { return c.fatal }

// Err is the fatal error that stopped the controller, if any.
func (c *Controller) Err() error {
	select {
	case <-c.fatal:
		return fmt.Errorf("%w: %s", ErrFatal, c.fatalMsg)
	default:
		return nil
	}
}

// Close stops serving, leaves the election (the session is closed, so the
// lock is freed at once; the breadcrumb stays, so that the next active
// fences this NameNode if it is still active) and stops the health
// monitor. It waits for every goroutine the controller started.
func (c *Controller) Close() error {
	c.closeOnce.Do(func() {
		c.rpc.Close()
		// Calls in flight (a fence, a transition) end first; then the
		// loop quits the election.
		c.cancel()
		quit := make(chan struct{})
		if c.inbox.post(func() { c.run(c.el.Quit()); close(quit) }) {
			select {
			case <-quit:
			case <-c.done:
			}
		}
		c.inbox.close()
		close(c.stopLoop)
		c.stopTimers()
		c.wg.Wait()
		for id, s := range c.sessions {
			s.close()
			delete(c.sessions, id)
		}
		c.log.Info("ZK Failover Controller stopped")
	})
	return c.closeErr
}

// fail records a fatal error; the owner (the CLI) sees Done closed and
// closes the controller.
func (c *Controller) fail(msg string) {
	c.fatalOnce.Do(func() {
		c.log.Error("Fatal error occurred:" + msg)
		c.fatalMsg = msg
		close(c.fatal)
	})
}

// ---- The loop: the only goroutine that touches the elector ----

func (c *Controller) loop() {
	defer close(c.done)
	for {
		select {
		case <-c.inbox.ready:
			for _, f := range c.inbox.take() {
				f()
			}
		case <-c.stopLoop:
			return
		}
	}
}

// run performs the elector's actions in order; an action with an answer
// is answered, and the answer's actions performed, before the next one
// (the elector's contract).
func (c *Controller) run(actions []elector.Action) {
	for _, a := range actions {
		switch a.Kind {
		case elector.OpenSession:
			s, err := openSession(c.ctx, &c.cfg, a.Session, c.log, c.onSessionEvent)
			if err == nil {
				c.sessions[a.Session] = s
			}
			c.run(c.el.SessionOpened(a.Session, err))
		case elector.CloseSession:
			if s := c.sessions[a.Session]; s != nil {
				delete(c.sessions, a.Session)
				// Closing waits for ZooKeeper's answer; nothing depends on it.
				c.wg.Add(1)
				go func() { defer c.wg.Done(); s.close() }()
			}
		case elector.CreateLock:
			r := elector.Result{Code: elector.SessionExpired, Name: "SESSIONEXPIRED"}
			if s := c.sessions[a.Session]; s != nil {
				r = s.createLock(a.Data)
			}
			c.run(c.el.LockCreated(a.Session, r))
		case elector.StatLock:
			r, mine := elector.Result{Code: elector.SessionExpired, Name: "SESSIONEXPIRED"}, false
			if s := c.sessions[a.Session]; s != nil {
				r, mine = s.statLock()
			}
			c.run(c.el.LockStat(a.Session, r, mine))
		case elector.ReadBreadcrumb:
			var data []byte
			var version int32
			r := elector.Result{Code: elector.SessionExpired, Name: "SESSIONEXPIRED"}
			if s := c.sessions[a.Session]; s != nil {
				var err error
				data, version, err = s.get(c.cfg.BreadcrumbPath())
				r = result(err)
			}
			c.run(c.el.BreadcrumbRead(a.Session, r, data, version))
		case elector.FenceOldActive:
			ok, msg := c.fenceOldActive(a.Data)
			c.run(c.el.Fenced(ok, msg))
		case elector.WriteBreadcrumb:
			r := elector.Result{Code: elector.SessionExpired, Name: "SESSIONEXPIRED"}
			if s := c.sessions[a.Session]; s != nil {
				r = s.writeBreadcrumb(a.Data, a.Create, a.Version)
			}
			c.run(c.el.BreadcrumbWritten(a.Session, r))
		case elector.DeleteBreadcrumb:
			if s := c.sessions[a.Session]; s != nil {
				s.deleteOwnBreadcrumb(a.Data)
			}
		case elector.MakeActive:
			ok, msg := c.makeActive()
			c.run(c.el.BecameActive(ok, msg))
		case elector.MakeStandby:
			c.log.Info(fmt.Sprintf("ZK Election indicated that %s should become standby", c.cfg.Local))
			err := c.makeStandby()
			if err == nil {
				c.log.Info(fmt.Sprintf("Successfully transitioned %s to standby state", c.cfg.Local))
			}
			c.run(c.el.BecameStandby(err == nil, errText(err)))
		case elector.CedeStandby:
			err := c.makeStandby()
			c.run(c.el.CedeStandbyDone(err == nil, errText(err)))
		case elector.StartTimer:
			c.startTimer(a.Timer, a.After)
		case elector.RecordAttempt:
			c.recordAttempt(a.OK, a.Msg)
		case elector.Fatal:
			c.fail(a.Msg)
		case elector.Log:
			c.log.Log(c.ctx, slog.Level(4*int(a.Level)), a.Msg)
		}
	}
	c.publish()
}

// publish makes the elector's state visible to the RPC handlers.
func (c *Controller) publish() {
	st := c.el.Status()
	c.pub.Lock()
	defer c.pub.Unlock()
	c.pub.session = c.sessions[st.Session]
	if c.pub.health != st.Health {
		c.pub.health = st.Health
		close(c.pub.changed)
		c.pub.changed = make(chan struct{})
	}
}

func (c *Controller) recordAttempt(ok bool, msg string) {
	c.pub.Lock()
	defer c.pub.Unlock()
	c.pub.attempts = append(c.pub.attempts, attempt{ok: ok, msg: msg, at: c.deps.Clock.Now()})
	if len(c.pub.attempts) > 16 {
		c.pub.attempts = c.pub.attempts[len(c.pub.attempts)-16:]
	}
	close(c.pub.changed)
	c.pub.changed = make(chan struct{})
}

// onSessionEvent runs on the ZooKeeper client's goroutines: it only
// queues the event for the loop.
func (c *Controller) onSessionEvent(id int, ev sessionEvent) {
	c.inbox.post(func() {
		switch ev {
		case evConnected:
			c.run(c.el.Connected(id))
		case evDisconnected:
			c.run(c.el.Disconnected(id))
		case evExpired:
			c.run(c.el.Expired(id))
		case evAuthFailed:
			if id == c.el.Status().Session {
				c.fail("Unexpected Zookeeper watch event state: AuthFailed")
			}
		case evLockDeleted:
			c.run(c.el.LockDeleted(id))
		case evLockChanged:
			c.run(c.el.LockChanged(id))
		}
	})
}

func (c *Controller) startTimer(t elector.Timer, after time.Duration) {
	c.timers.Lock()
	defer c.timers.Unlock()
	if c.timers.stopped {
		return
	}
	var tm clock.Timer
	tm = c.deps.Clock.AfterFunc(after, func() {
		c.timers.Lock()
		delete(c.timers.all, tm)
		c.timers.Unlock()
		c.inbox.post(func() { c.run(c.el.Fire(t)) })
	})
	c.timers.all[tm] = struct{}{}
}

func (c *Controller) stopTimers() {
	c.timers.Lock()
	defer c.timers.Unlock()
	c.timers.stopped = true
	for t := range c.timers.all {
		t.Stop()
	}
	c.timers.all = nil
}

// ---- Calls to the NameNodes ----

func (c *Controller) makeActive() (bool, string) {
	c.log.Info(fmt.Sprintf("Trying to make %s active...", c.cfg.Local))
	conn := c.deps.Dial(c.cfg.Local, c.cfg.HA.NewActiveTimeout, 1)
	defer conn.Close()
	if err := conn.TransitionToActive(c.ctx, haservice.RequestByZKFC); err != nil {
		msg := fmt.Sprintf("Couldn't make %s active", c.cfg.Local)
		c.log.Error(msg, "err", err)
		return false, msg + "\n" + errText(err)
	}
	msg := fmt.Sprintf("Successfully transitioned %s to active state", c.cfg.Local)
	c.log.Info(msg)
	return true, msg
}

func (c *Controller) makeStandby() error {
	conn := c.deps.Dial(c.cfg.Local, c.cfg.HA.GracefulFenceTimeout, 1)
	defer conn.Close()
	err := conn.TransitionToStandby(c.ctx, haservice.RequestByZKFC)
	if err != nil {
		c.log.Error(fmt.Sprintf("Couldn't transition %s to standby state", c.cfg.Local), "err", err)
	}
	return err
}

// fenceOldActive fences the NameNode data names: gracefully if it answers,
// else with its fencing methods.
func (c *Controller) fenceOldActive(data []byte) (bool, string) {
	old, err := c.dataToTarget(data)
	if err != nil {
		c.log.Error("Couldn't fence the old active", "err", err)
		return false, err.Error()
	}
	c.log.Info("Should fence: " + old.String())
	fc := &haservice.FailoverController{Config: c.cfg.HA, Source: haservice.RequestByZKFC,
		Dial: c.deps.Dial, Fencer: c.deps.Fencer, Logger: c.log}
	if fc.TryGracefulFence(c.ctx, old) {
		c.log.Info(fmt.Sprintf("Successfully transitioned %s to standby state without fencing", old))
		return true, ""
	}
	if !old.FencingConfigured || old.FencingErr != nil {
		c.log.Error("Couldn't fence old active " + old.String())
		return false, "Unable to fence old active"
	}
	if !c.deps.Fencer.Fence(c.ctx, old) {
		return false, "Unable to fence " + old.String()
	}
	return true, ""
}

// dataToTarget resolves the NameNode a znode names from the configuration
// and checks that the address matches (Hadoop's dataToTarget).
func (c *Controller) dataToTarget(data []byte) (*haservice.Target, error) {
	n, err := DecodeNodeInfo(data)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.HA.ConnectTimeout)
	defer cancel()
	t, err := haservice.ResolveNameNode(ctx, c.cfg.Conf, n.Nameservice, n.NameNodeID, c.deps.Resolver)
	if err != nil {
		return nil, fmt.Errorf("%w: %s names %v", ErrBadZNodeData, n, err)
	}
	if !t.Matches(ctx, c.deps.Resolver, n.Host, n.Port) {
		return nil, fmt.Errorf("%w: Mismatched address stored in ZK for %s: Stored protobuf was %s, address from our own configuration for this NameNode was %s",
			ErrBadZNodeData, t, n, t.HostPort())
	}
	t.ZKFCPort = n.ZKFCPort
	return t, nil
}

// errText is an error's text as Hadoop's getMessage gives it.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return haservice.Message(err)
}

// ---- inbox ----

// inbox is the loop's queue: functions posted from any goroutine, run by
// the loop in order. It never blocks a poster (the ZooKeeper client's
// goroutines must not block); what is queued is small and bounded by the
// events of a few sessions and checks.
type inbox struct {
	ready chan struct{}
	mu    struct {
		sync.Mutex
		q      []func()
		closed bool
	}
}

func newInbox() *inbox { return &inbox{ready: make(chan struct{}, 1)} }

// post queues f; false once the inbox is closed.
func (b *inbox) post(f func()) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.closed {
		return false
	}
	b.mu.q = append(b.mu.q, f)
	select {
	case b.ready <- struct{}{}:
	default:
	}
	return true
}

// close makes post refuse from now on.
func (b *inbox) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.closed = true
}

func (b *inbox) take() []func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.mu.q
	b.mu.q = nil
	return q
}
