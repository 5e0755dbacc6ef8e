package zkfc

import (
	"errors"
	"fmt"

	"github.com/hdfsgo/hdfsgo/internal/haservice"
	"github.com/hdfsgo/hdfsgo/internal/zkfc/elector"
	"github.com/hdfsgo/hdfsgo/internal/zkfc/health"
)

// monitorHealth is the health monitor's goroutine (Hadoop's
// HealthMonitor thread): it checks the local NameNode with
// getServiceStatus and monitorHealth, each bounded by
// ha.health-monitor.rpc-timeout.ms, feeds the outcome to the pure monitor
// and hands state changes and reported service states to the loop. It
// stops with the controller's ctx. HEALTH_MONITOR_FAILED, which Hadoop
// enters when its monitor thread dies of an unexpected exception, has no
// cause here: an unexpected failure of this goroutine is a panic.
func (c *Controller) monitorHealth() {
	m := health.New(c.cfg.Health)
	var conn haservice.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for c.ctx.Err() == nil {
		if conn == nil {
			conn = c.healthDial(c.cfg.Local, c.cfg.HealthRPCTimeout, c.cfg.HealthConnectRetries)
		}
		outcome := health.Healthy
		st, err := conn.GetServiceStatus(c.ctx)
		reported := err == nil
		if err == nil {
			err = conn.MonitorHealth(c.ctx)
		}
		if c.ctx.Err() != nil {
			return
		}
		switch {
		case err == nil:
		case errors.Is(err, haservice.ErrHealthCheckFailed):
			c.log.Warn(fmt.Sprintf("Service health check failed for %s: %s", c.cfg.Local, haservice.Message(err)))
			outcome = health.Unhealthy
		default:
			c.log.Warn(fmt.Sprintf("Transport-level exception trying to monitor health of %s: %s", c.cfg.Local, haservice.Message(err)))
			outcome = health.NoAnswer
		}
		step := m.Checked(outcome)
		// Hadoop's order: an unhealthy or silent service is entered before
		// its status is reported, a healthy one after. The monitor waits
		// until the loop took the check in, as Hadoop's monitor thread
		// waits for its callbacks: while the loop is busy (fencing, a
		// transition) checks do not pile up, and at most one report made
		// before a transition arrives after it (the elector tolerates one).
		taken := make(chan struct{})
		if !c.inbox.post(func() {
			defer close(taken)
			if step.Changed && outcome != health.Healthy {
				c.run(c.el.Health(step.Entered))
			}
			if reported {
				c.run(c.el.ServiceReported(serviceState(st.State)))
			}
			if step.Changed && outcome == health.Healthy {
				c.run(c.el.Health(step.Entered))
			}
		}) {
			return
		}
		select {
		case <-taken:
		case <-c.ctx.Done():
			return
		}
		if step.Stop {
			return
		}
		if step.Reconnect {
			conn.Close()
			conn = nil
		}
		t := c.deps.Clock.NewTimer(step.Wait)
		select {
		case <-t.C():
		case <-c.ctx.Done():
			t.Stop()
			return
		}
	}
}

func serviceState(s haservice.State) elector.ServiceState {
	switch s {
	case haservice.Active:
		return elector.ServiceActive
	case haservice.Standby:
		return elector.ServiceStandby
	case haservice.Observer:
		return elector.ServiceObserver
	}
	return elector.ServiceInitializing
}
