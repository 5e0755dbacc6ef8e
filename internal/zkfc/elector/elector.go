package elector

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/zkfc/health"
)

// Hadoop's fixed periods.
const (
	// RejoinAfterFailure is how long a controller that won the lock but
	// could not make its service active stays out before joining again,
	// so that another gets a chance (SLEEP_AFTER_FAILURE_TO_BECOME_ACTIVE).
	RejoinAfterFailure = time.Second
	// ReconnectPause is the pause between attempts to open a ZooKeeper
	// session when joining needs one.
	ReconnectPause = 5 * time.Second
	// MismatchPause keeps a controller out of the election after its
	// service reported a state other than the one it was put in.
	MismatchPause = time.Second
)

// State is the elector's view of the election (Hadoop's
// ActiveStandbyElector.State).
type State int

// Elector states.
const (
	Init State = iota
	Active
	Standby
	Neutral
)

func (s State) String() string {
	switch s {
	case Init:
		return "INIT"
	case Active:
		return "ACTIVE"
	case Standby:
		return "STANDBY"
	case Neutral:
		return "NEUTRAL"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// ServiceState is the local service's HA state: as the controller put it
// (ServiceStateNow) or as a health check reported it (ServiceReported).
type ServiceState int

// Service states.
const (
	ServiceInitializing ServiceState = iota
	ServiceActive
	ServiceStandby
	ServiceObserver
)

func (s ServiceState) String() string {
	switch s {
	case ServiceInitializing:
		return "INITIALIZING"
	case ServiceActive:
		return "ACTIVE"
	case ServiceStandby:
		return "STANDBY"
	case ServiceObserver:
		return "OBSERVER"
	}
	return fmt.Sprintf("ServiceState(%d)", int(s))
}

// Code classifies the result of a ZooKeeper operation.
type Code int

// Result codes.
const (
	OK Code = iota
	NoNode
	NodeExists
	// ConnectionLoss: the operation may or may not have happened
	// (CONNECTIONLOSS, OPERATIONTIMEOUT); it is retried.
	ConnectionLoss
	SessionExpired
	// Failed: any other error (NOAUTH, BADVERSION, ...); Name says which.
	Failed
)

// Result is a ZooKeeper operation's outcome. Name is ZooKeeper's name of
// the code (e.g. "NOAUTH"), used in messages.
type Result struct {
	Code Code
	Name string
}

func (r Result) String() string {
	if r.Name != "" {
		return r.Name
	}
	switch r.Code {
	case OK:
		return "OK"
	case NoNode:
		return "NONODE"
	case NodeExists:
		return "NODEEXISTS"
	case ConnectionLoss:
		return "CONNECTIONLOSS"
	case SessionExpired:
		return "SESSIONEXPIRED"
	}
	return "SYSTEMERROR"
}

// Config is what an Elector needs to know.
type Config struct {
	// Data is the local service's entry: what the lock and the breadcrumb
	// hold when it is active (an ActiveNodeInfo).
	Data []byte
	// MaxRetries bounds the retries of a ZooKeeper operation that lost
	// its connection, and the attempts to open a session
	// (ha.failover-controller.active-standby-elector.zk.op.retries, 3).
	MaxRetries int
	// LockPath and BreadcrumbPath name the znodes in messages.
	LockPath, BreadcrumbPath string
}

// connState is the state of the current ZooKeeper session.
type connState int

const (
	terminated connState = iota
	connected
	disconnected
)

// Elector is the state of one controller's election. Its zero value is
// not usable; see New.
type Elector struct {
	cfg Config
	out []Action

	// The controller's view (Hadoop's ZKFailoverController).
	health health.State
	// service is the state the controller put its service in.
	service ServiceState
	// ceded keeps the controller out of the election until the recheck
	// timer of generation cedeGen fires (delayJoiningUntilNanotime).
	ceded      bool
	cedeGen    int
	cedeMillis int32
	mismatches int
	quitOnBad  bool

	// The election (Hadoop's ActiveStandbyElector).
	state State
	// session is the current ZooKeeper session (0: none); nextSession
	// numbers the next one.
	session, nextSession int
	conn                 connState
	want                 bool
	data                 []byte // appData: nil until the first join
	createRetries        int
	statRetries          int
	// monitorPending: a StatLock of monitorSession awaits its result.
	monitorPending bool
	monitorSession int
	// opening is the session being opened for a join (0: none);
	// openRetries counts failed attempts, openGen voids old timers.
	opening     int
	openRetries int
	openGen     int
	rejoinGen   int
	// win is the attempt to become active in progress, nil when none.
	win *winning
	// activeSession is the session in which the service was made active
	// (0: none): while that session lives, the lock is this controller's.
	activeSession int
	// fatal: the controller gave up; every input is ignored.
	fatal bool
}

// winning is an attempt to become active after taking the lock.
type winning struct {
	// monitorAfter: watch the lock once active (the lock was just
	// created; when the win came from a watch, the watch is set already).
	monitorAfter bool
	version      int32
}

// New returns the elector of a controller whose ZooKeeper session
// `session` is open (Hadoop's elector is built connected): health and
// service INITIALIZING, not in the election.
func New(cfg Config, session int) *Elector {
	return &Elector{cfg: cfg, session: session, nextSession: session + 1, conn: connected}
}

// Status is a snapshot of the elector for queries and tests.
type Status struct {
	State      State
	Service    ServiceState
	Health     health.State
	Session    int
	InElection bool
	Ceded      bool
	Fatal      bool
}

// Status returns the current snapshot.
func (e *Elector) Status() Status {
	return Status{State: e.state, Service: e.service, Health: e.health, Session: e.session,
		InElection: e.want, Ceded: e.ceded, Fatal: e.fatal}
}

func (e *Elector) flush() []Action {
	out := e.out
	e.out = nil
	return out
}

// emit adds an action; nothing is added once the controller gave up.
func (e *Elector) emit(a Action) {
	if !e.fatal {
		e.out = append(e.out, a)
	}
}

func (e *Elector) logf(level Level, format string, args ...any) {
	e.emit(Action{Kind: Log, Level: level, Msg: fmt.Sprintf(format, args...)})
}

// stale reports an input of a session that is not the current one.
func (e *Elector) stale(session int) bool {
	if e.fatal {
		return true
	}
	if session != e.session || session == 0 {
		e.logf(LevelDebug, "Ignoring stale result from old session %d", session)
		return true
	}
	return false
}

// ---- Inputs from the controller: health, service state, cede, timers ----

// Health takes the health monitor's new state (Hadoop's HealthCallbacks).
func (e *Elector) Health(s health.State) []Action {
	if e.fatal {
		return nil
	}
	e.logf(LevelInfo, "Local service entered state: %v", s)
	e.health = s
	e.recheck()
	return e.flush()
}

// ServiceReported takes the state the service reported to a health check
// (Hadoop's verifyChangedServiceState): two reports in a row that differ
// from the state the controller put it in make the controller quit the
// election, leaving the service to be fenced, and stay out MismatchPause.
func (e *Elector) ServiceReported(s ServiceState) []Action {
	if e.fatal {
		return nil
	}
	switch {
	case e.service == ServiceInitializing:
		if e.quitOnBad {
			e.recheck()
		}
	case s == ServiceObserver:
		e.quitElection(true)
		e.service = ServiceObserver
	case s == e.service:
		e.mismatches = 0
	case e.mismatches == 0:
		// Once more: it may be a transition the report crossed.
		e.mismatches++
	default:
		e.logf(LevelError, "Local service has changed the serviceState to %v. Expected was %v. Quitting election marking fencing necessary.", s, e.service)
		e.delay(MismatchPause)
		e.quitElection(true)
		e.quitOnBad = true
		e.mismatches = 0
		e.service = ServiceInitializing
	}
	return e.flush()
}

// Cede is a cedeActive request (ZKFCProtocol): with millis > 0 the
// service is asked to become standby (CedeStandby, answered by
// CedeStandbyDone) and the controller leaves the election for millis;
// with millis <= 0 it may rejoin at once.
func (e *Elector) Cede(millis int32) []Action {
	if e.fatal {
		return nil
	}
	if millis <= 0 {
		e.ceded = false
		e.cedeGen++
		e.recheck()
		return e.flush()
	}
	e.logf(LevelDebug, "Requested to cede active role for %d ms.", millis)
	e.cedeMillis = millis
	e.emit(Action{Kind: CedeStandby})
	return e.flush()
}

// CedeStandbyDone is the answer to CedeStandby.
func (e *Elector) CedeStandbyDone(ok bool, msg string) []Action {
	if e.fatal {
		return nil
	}
	needFence := !ok
	if ok {
		e.logf(LevelInfo, "Successfully ensured local node is in standby mode")
	} else {
		e.logf(LevelWarn, "Unable to transition local node to standby: %s", msg)
		e.logf(LevelWarn, "Quitting election but indicating that fencing is necessary")
	}
	e.delay(time.Duration(e.cedeMillis) * time.Millisecond)
	e.quitElection(needFence)
	e.service = ServiceInitializing
	e.recheck()
	return e.flush()
}

// delay keeps the controller out of the election for d.
func (e *Elector) delay(d time.Duration) {
	e.ceded = true
	e.cedeGen++
	e.emit(Action{Kind: StartTimer, Timer: Timer{Kind: TimerRecheck, Gen: e.cedeGen}, After: d})
}

// Fire is a timer the elector started.
func (e *Elector) Fire(t Timer) []Action {
	if e.fatal {
		return nil
	}
	switch t.Kind {
	case TimerRecheck:
		if t.Gen == e.cedeGen && e.ceded {
			e.ceded = false
			e.recheck()
		}
	case TimerRejoin:
		if t.Gen == e.rejoinGen {
			e.rejoinNow()
		}
	case TimerReconnect:
		if t.Gen == e.openGen && e.opening == 0 && e.openRetries > 0 {
			e.openSession()
		}
	}
	return e.flush()
}

// recheck is Hadoop's recheckElectability: the health state decides
// whether the controller takes part in the election.
func (e *Elector) recheck() {
	if e.ceded {
		if e.health == health.ServiceHealthy {
			e.logf(LevelInfo, "Would have joined master election, but this node is prohibited from doing so for a while")
		}
		return
	}
	switch e.health {
	case health.ServiceHealthy:
		if e.service != ServiceObserver {
			e.joinElection()
		}
		e.quitOnBad = false
	case health.Initializing:
		e.logf(LevelInfo, "Ensuring that the local service does not participate in active master election")
		e.quitElection(false)
		e.service = ServiceInitializing
	case health.ServiceUnhealthy, health.ServiceNotResponding:
		e.logf(LevelInfo, "Quitting master election for the local service and marking that fencing is necessary")
		e.quitElection(true)
		e.service = ServiceInitializing
	case health.HealthMonitorFailed:
		e.fatalError("Health monitor failed!")
	}
}

// ---- The election ----

func (e *Elector) joinElection() {
	if e.want || e.opening != 0 {
		e.logf(LevelInfo, "Already in election. Not re-connecting.")
		return
	}
	e.data = e.cfg.Data
	e.joinInternal()
}

func (e *Elector) joinInternal() {
	if e.data == nil {
		return
	}
	if e.session == 0 {
		e.openRetries = 0
		e.openSession()
		return
	}
	e.createRetries = 0
	e.want = true
	e.createLock()
}

func (e *Elector) openSession() {
	e.opening = e.nextSession
	e.nextSession++
	e.emit(Action{Kind: OpenSession, Session: e.opening})
}

// SessionOpened answers OpenSession: err is nil when the session is
// connected (and authenticated).
func (e *Elector) SessionOpened(session int, err error) []Action {
	if e.fatal {
		return nil
	}
	if session != e.opening {
		// Opened for a join that was given up since.
		if err == nil {
			e.emit(Action{Kind: CloseSession, Session: session})
		}
		return e.flush()
	}
	e.opening = 0
	if err != nil {
		e.openRetries++
		e.logf(LevelWarn, "Could not open a ZooKeeper session (attempt %d of %d): %v", e.openRetries, e.cfg.MaxRetries, err)
		if e.openRetries >= e.cfg.MaxRetries {
			e.openRetries = 0
			e.fatalError("Failed to reEstablish connection with ZooKeeper")
			return e.flush()
		}
		e.openGen++
		e.emit(Action{Kind: StartTimer, Timer: Timer{Kind: TimerReconnect, Gen: e.openGen}, After: ReconnectPause})
		return e.flush()
	}
	e.openRetries = 0
	e.session, e.conn = session, connected
	e.createRetries = 0
	e.want = true
	e.createLock()
	return e.flush()
}

func (e *Elector) createLock() {
	e.emit(Action{Kind: CreateLock, Session: e.session, Data: e.data})
}

// LockCreated answers CreateLock.
func (e *Elector) LockCreated(session int, r Result) []Action {
	if e.stale(session) {
		return e.flush()
	}
	switch r.Code {
	case OK:
		e.becomeActive(true)
	case NodeExists:
		if e.createRetries == 0 {
			// Another controller holds the lock.
			e.becomeStandby()
		}
		// After a retry the lock may be ours from the first attempt: the
		// owner check of the stat tells.
		e.monitorActiveStatus()
	case ConnectionLoss:
		if e.createRetries < e.cfg.MaxRetries {
			e.createRetries++
			e.createLock()
			break
		}
		e.fatalError(fmt.Sprintf("Received create error from Zookeeper. code:%v for path %s. Not retrying further znode create connection errors.", r, e.cfg.LockPath))
	case SessionExpired:
		// The session event rejoins.
		e.logf(LevelWarn, "Lock acquisition failed because session was lost")
	default:
		e.fatalError(fmt.Sprintf("Received create error from Zookeeper. code:%v for path %s", r, e.cfg.LockPath))
	}
	return e.flush()
}

func (e *Elector) monitorActiveStatus() {
	e.statRetries = 0
	e.monitorLock()
}

func (e *Elector) monitorLock() {
	if e.monitorPending && e.monitorSession == e.session {
		e.logf(LevelInfo, "Ignore duplicate monitor lock-node request.")
		return
	}
	e.monitorPending, e.monitorSession = true, e.session
	e.emit(Action{Kind: StatLock, Session: e.session})
}

// LockStat answers StatLock (exists with a watch): mine says whether the
// lock's ephemeral owner is the current session.
func (e *Elector) LockStat(session int, r Result, mine bool) []Action {
	if e.stale(session) {
		return e.flush()
	}
	e.monitorPending = false
	switch r.Code {
	case OK:
		switch {
		case mine && e.state == Neutral && e.activeSession == e.session && e.service == ServiceActive:
			// Back from a disconnection in the session that won: the lock
			// was never anyone else's, so the service is still the active
			// one and the breadcrumb still names it. Hadoop writes the
			// breadcrumb again here, and a connection lost once more in
			// the middle makes it give the lock up; nothing needs writing.
			e.logf(LevelInfo, "Still holding the lock in the session that won it: the local service stays active.")
			e.state = Active
		case mine:
			e.becomeActive(false)
		default:
			e.becomeStandby()
		}
	case NoNode:
		// The lock went away before the watch was set.
		e.enterNeutral()
		e.joinInternal()
	case ConnectionLoss:
		if e.statRetries < e.cfg.MaxRetries {
			e.statRetries++
			e.monitorLock()
			break
		}
		e.fatalError(fmt.Sprintf("Received stat error from Zookeeper. code:%v. Not retrying further znode monitoring connection errors.", r))
	case SessionExpired:
		e.logf(LevelWarn, "Lock monitoring failed because session was lost")
	default:
		e.fatalError(fmt.Sprintf("Received stat error from Zookeeper. code:%v", r))
	}
	return e.flush()
}

// becomeActive starts the win: check the breadcrumb, fence, write it,
// make the service active.
func (e *Elector) becomeActive(monitorAfter bool) {
	if e.state == Active {
		if monitorAfter {
			e.monitorActiveStatus()
		}
		return
	}
	e.win = &winning{monitorAfter: monitorAfter}
	e.logf(LevelInfo, "Checking for any old active which needs to be fenced...")
	e.emit(Action{Kind: ReadBreadcrumb, Session: e.session})
}

// BreadcrumbRead answers ReadBreadcrumb with the breadcrumb's data and
// version (r.Code NoNode when there is none).
func (e *Elector) BreadcrumbRead(session int, r Result, data []byte, version int32) []Action {
	if e.stale(session) || e.win == nil {
		return e.flush()
	}
	switch r.Code {
	case NoNode:
		e.logf(LevelInfo, "No old node to fence")
		e.writeBreadcrumb(true, 0)
	case OK:
		e.logf(LevelInfo, "Old node exists: %s", hex.EncodeToString(data))
		if bytes.Equal(data, e.data) {
			e.logf(LevelInfo, "But old node has our own data, so don't need to fence it.")
			e.writeBreadcrumb(false, version)
			break
		}
		e.win.version = version
		e.emit(Action{Kind: FenceOldActive, Data: data})
	default:
		e.winFailed(fmt.Sprintf("reading %s: %v", e.cfg.BreadcrumbPath, r))
	}
	return e.flush()
}

// Fenced answers FenceOldActive: ok when the old active was made standby
// or fenced by a method; msg says how or why not.
func (e *Elector) Fenced(ok bool, msg string) []Action {
	if e.fatal || e.win == nil {
		return e.flush()
	}
	if !ok {
		e.emit(Action{Kind: RecordAttempt, OK: false, Msg: "Unable to fence old active: " + msg})
		e.winFailed(msg)
		return e.flush()
	}
	e.writeBreadcrumb(false, e.win.version)
	return e.flush()
}

func (e *Elector) writeBreadcrumb(create bool, version int32) {
	e.logf(LevelInfo, "Writing znode %s to indicate that the local node is the most recent active...", e.cfg.BreadcrumbPath)
	e.emit(Action{Kind: WriteBreadcrumb, Session: e.session, Data: e.data, Create: create, Version: version})
}

// BreadcrumbWritten answers WriteBreadcrumb.
func (e *Elector) BreadcrumbWritten(session int, r Result) []Action {
	if e.stale(session) || e.win == nil {
		return e.flush()
	}
	if r.Code != OK {
		e.winFailed(fmt.Sprintf("writing %s: %v", e.cfg.BreadcrumbPath, r))
		return e.flush()
	}
	e.emit(Action{Kind: MakeActive})
	return e.flush()
}

// BecameActive answers MakeActive: msg is the outcome as the attempt
// record states it.
func (e *Elector) BecameActive(ok bool, msg string) []Action {
	if e.fatal || e.win == nil {
		return e.flush()
	}
	e.emit(Action{Kind: RecordAttempt, OK: ok, Msg: msg})
	if !ok {
		e.winFailed(msg)
		return e.flush()
	}
	e.service = ServiceActive
	e.state = Active
	e.activeSession = e.session
	after := e.win.monitorAfter
	e.win = nil
	if after {
		e.monitorActiveStatus()
	}
	return e.flush()
}

// winFailed gives the lock up and rejoins after RejoinAfterFailure.
func (e *Elector) winFailed(why string) {
	e.logf(LevelWarn, "Exception handling the winning of election: %s", why)
	e.win = nil
	e.reJoinElection(RejoinAfterFailure)
}

func (e *Elector) becomeStandby() {
	e.activeSession = 0
	if e.state != Standby {
		e.state = Standby
		e.emit(Action{Kind: MakeStandby})
	}
}

// BecameStandby answers MakeStandby. The controller counts its service as
// standby either way: a service that did not answer is most likely being
// fenced by the new active.
func (e *Elector) BecameStandby(ok bool, msg string) []Action {
	if e.fatal {
		return nil
	}
	if !ok {
		e.logf(LevelError, "Couldn't transition the local service to standby state: %s", msg)
	}
	e.service = ServiceStandby
	return e.flush()
}

func (e *Elector) enterNeutral() {
	if e.state != Neutral {
		e.logf(LevelDebug, "Entering neutral mode")
		e.state = Neutral
	}
}

// ---- ZooKeeper session and watch events ----

// Connected is the session's (re)connection (SyncConnected).
func (e *Elector) Connected(session int) []Action {
	if e.stale(session) {
		return e.flush()
	}
	prev := e.conn
	e.conn = connected
	e.logf(LevelInfo, "Session connected.")
	if prev == disconnected && e.want {
		e.monitorActiveStatus()
	}
	return e.flush()
}

// Disconnected is the loss of the session's connection. The service keeps
// its state: the session may still be alive.
func (e *Elector) Disconnected(session int) []Action {
	if e.stale(session) {
		return e.flush()
	}
	e.logf(LevelInfo, "Session disconnected. Entering neutral mode...")
	e.conn = disconnected
	e.enterNeutral()
	return e.flush()
}

// Expired is ZooKeeper's word that the session expired: its lock is gone,
// another controller may hold it now.
func (e *Elector) Expired(session int) []Action {
	if e.stale(session) {
		return e.flush()
	}
	e.logf(LevelInfo, "Session expired. Entering neutral mode and rejoining...")
	e.enterNeutral()
	e.reJoinElection(0)
	return e.flush()
}

// LockDeleted is the watch on the lock firing with NodeDeleted.
func (e *Elector) LockDeleted(session int) []Action {
	if e.stale(session) {
		return e.flush()
	}
	if e.state == Active {
		e.enterNeutral()
	}
	e.joinInternal()
	return e.flush()
}

// LockChanged is the watch on the lock firing with any other event.
func (e *Elector) LockChanged(session int) []Action {
	if e.stale(session) {
		return e.flush()
	}
	e.monitorActiveStatus()
	return e.flush()
}

func (e *Elector) reJoinElection(pause time.Duration) {
	e.logf(LevelInfo, "Trying to re-establish ZK session")
	e.terminateConnection()
	e.rejoinGen++
	if pause > 0 {
		e.emit(Action{Kind: StartTimer, Timer: Timer{Kind: TimerRejoin, Gen: e.rejoinGen}, After: pause})
		return
	}
	e.rejoinNow()
}

func (e *Elector) rejoinNow() {
	if e.data == nil {
		e.logf(LevelInfo, "Not joining election since service has not yet been reported as healthy.")
		return
	}
	e.joinInternal()
}

func (e *Elector) terminateConnection() {
	e.activeSession = 0
	if e.session != 0 {
		e.emit(Action{Kind: CloseSession, Session: e.session})
		e.session = 0
	}
	e.conn = terminated
	e.want = false
	e.monitorPending = false
	// A session being opened for a join is not wanted any more.
	e.opening = 0
	e.openRetries = 0
	e.openGen++
}

func (e *Elector) reset() {
	e.state = Init
	e.terminateConnection()
}

// quitElection leaves the election, closing the session (which frees the
// lock). Without needFence an active deletes its breadcrumb first, so that
// the next active does not fence it.
func (e *Elector) quitElection(needFence bool) {
	e.logf(LevelInfo, "Yielding from election")
	if !needFence && e.state == Active && e.session != 0 {
		e.logf(LevelInfo, "Deleting bread-crumb of active node...")
		e.emit(Action{Kind: DeleteBreadcrumb, Session: e.session, Data: e.data})
	}
	e.reset()
	e.rejoinGen++
	e.win = nil
}

// Quit leaves the election for good, leaving the service to be fenced
// (the controller is stopping).
func (e *Elector) Quit() []Action {
	if e.fatal {
		return nil
	}
	e.quitElection(true)
	return e.flush()
}

func (e *Elector) fatalError(msg string) {
	e.logf(LevelError, "%s", msg)
	e.reset()
	e.emit(Action{Kind: Fatal, Msg: msg})
	e.fatal = true // after the Fatal action: nothing more is emitted
}
