// Package health is the failover controller's health monitor as a pure
// state machine (Hadoop's HealthMonitor): it takes the outcome of each
// check of the local service and says which state the service is in, and
// what to do before checking again. It does no I/O and reads no clock; the
// controller's driver makes the calls (getServiceStatus, then
// monitorHealth, bounded by ha.health-monitor.rpc-timeout.ms), feeds their
// outcome to Checked and waits as told.
//
//	                    ┌──────── Healthy ───────▶ SERVICE_HEALTHY
//	INITIALIZING ──check┼──────── Unhealthy ─────▶ SERVICE_UNHEALTHY     (next check after
//	                    └──────── NoAnswer ──────▶ SERVICE_NOT_RESPONDING  check-interval,
//	any state ──Failed──▶ HEALTH_MONITOR_FAILED (final)                    or after
//	                                                                       sleep-after-disconnect
//	                                                                       with a new connection
//	                                                                       when NoAnswer)
//
// A Monitor is not safe for concurrent use; one goroutine owns it.
//
//	m := health.New(health.Config{CheckInterval: time.Second, SleepAfterDisconnect: time.Second})
//	step := m.Checked(health.NoAnswer)
//	// step.Changed, step.Entered == health.ServiceNotResponding,
//	// step.Reconnect, step.Wait == time.Second
package health

import (
	"fmt"
	"time"
)

// State is the local service's health as the monitor sees it; the names
// are Hadoop's HealthMonitor.State.
type State int

// States.
const (
	Initializing State = iota
	ServiceNotResponding
	ServiceHealthy
	ServiceUnhealthy
	HealthMonitorFailed
)

func (s State) String() string {
	switch s {
	case Initializing:
		return "INITIALIZING"
	case ServiceNotResponding:
		return "SERVICE_NOT_RESPONDING"
	case ServiceHealthy:
		return "SERVICE_HEALTHY"
	case ServiceUnhealthy:
		return "SERVICE_UNHEALTHY"
	case HealthMonitorFailed:
		return "HEALTH_MONITOR_FAILED"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Outcome is what one check found.
type Outcome int

// Outcomes.
const (
	// Healthy: getServiceStatus and monitorHealth both answered.
	Healthy Outcome = iota
	// Unhealthy: monitorHealth answered HealthCheckFailedException.
	Unhealthy
	// NoAnswer: a call failed in any other way (no connection, a timeout,
	// any other exception): the service is not responding.
	NoAnswer
)

func (o Outcome) String() string {
	switch o {
	case Healthy:
		return "healthy"
	case Unhealthy:
		return "unhealthy"
	case NoAnswer:
		return "no-answer"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Config holds the monitor's periods.
type Config struct {
	// CheckInterval is the pause after a check that got an answer
	// (ha.health-monitor.check-interval.ms, 1000 ms).
	CheckInterval time.Duration
	// SleepAfterDisconnect is the pause after a check that got none,
	// before connecting again (ha.health-monitor.sleep-after-disconnect.ms,
	// 1000 ms).
	SleepAfterDisconnect time.Duration
}

// Step is what a check leads to.
type Step struct {
	// Changed is true when the check moved the monitor to Entered.
	Changed bool
	Entered State
	// Reconnect: drop the connection to the service; the next check makes
	// a new one.
	Reconnect bool
	// Wait is the pause before the next check.
	Wait time.Duration
	// Stop: the monitor has failed; no more checks.
	Stop bool
}

// Monitor is the health monitor's state.
type Monitor struct {
	cfg   Config
	state State
}

// New returns a monitor in state INITIALIZING.
func New(cfg Config) *Monitor { return &Monitor{cfg: cfg} }

// State is the current state.
func (m *Monitor) State() State { return m.state }

// Checked takes the outcome of one check.
func (m *Monitor) Checked(o Outcome) Step {
	if m.state == HealthMonitorFailed {
		return Step{Stop: true}
	}
	switch o {
	case Healthy:
		return m.enter(ServiceHealthy, Step{Wait: m.cfg.CheckInterval})
	case Unhealthy:
		return m.enter(ServiceUnhealthy, Step{Wait: m.cfg.CheckInterval})
	default:
		return m.enter(ServiceNotResponding, Step{Reconnect: true, Wait: m.cfg.SleepAfterDisconnect})
	}
}

// Failed records that the monitor itself broke (its driver could not go
// on): HEALTH_MONITOR_FAILED, after which the controller stops.
func (m *Monitor) Failed() Step {
	return m.enter(HealthMonitorFailed, Step{Stop: true})
}

func (m *Monitor) enter(s State, step Step) Step {
	if s != m.state {
		m.state = s
		step.Changed, step.Entered = true, s
	}
	return step
}
