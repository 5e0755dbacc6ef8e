package zkfc

import (
	"context"
	"fmt"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/haservice"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/zkfc/elector"
	"github.com/hdfsgo/hdfsgo/internal/zkfc/health"
)

// attemptWaitExtra is what a graceful failover waits for the election
// beyond the cede period (Hadoop's 60000 ms).
const attemptWaitExtra = 60 * time.Second

// attemptRecheck is how often a graceful failover waiting for the election
// looks at the health state again.
const attemptRecheck = time.Second

// rpcService is the controller's ZKFCProtocol (Hadoop's ZKFCRpcServer).
type rpcService struct{ c *Controller }

var _ haservice.ZKFC = rpcService{}

// checkAdmin lets in the controller's own user and
// dfs.cluster.administrators (Hadoop's checkRpcAdminAccess).
func (s rpcService) checkAdmin(ctx context.Context) error {
	ci, _ := ipc.CallerFromContext(ctx)
	if ci.User == s.c.cfg.User || s.c.cfg.Admins.Allows(ci.User, osGroups(ci.User)) {
		s.c.log.Info(fmt.Sprintf("Allowed RPC access from %s at %v", ci.User, remoteHost(ci)))
		return nil
	}
	msg := fmt.Sprintf("Disallowed RPC access from %s at %v. Not listed in dfs.cluster.administrators", ci.User, remoteHost(ci))
	s.c.log.Warn(msg)
	return remoteerr.AccessControl(msg)
}

func remoteHost(ci ipc.Caller) string {
	if ci.Remote == nil {
		return "null"
	}
	return ci.Remote.String()
}

// CedeActive makes the local NameNode standby and keeps the controller out
// of the election for millis (Hadoop's doCedeActive); it returns once the
// loop has done so.
func (s rpcService) CedeActive(ctx context.Context, millis int32) error {
	if err := s.checkAdmin(ctx); err != nil {
		return err
	}
	c := s.c
	if millis > 0 {
		ci, _ := ipc.CallerFromContext(ctx)
		c.log.Info(fmt.Sprintf("Requested by %s at %s to cede active role.", ci.User, remoteHost(ci)))
	}
	done := make(chan struct{})
	if !c.inbox.post(func() { c.run(c.el.Cede(millis)); close(done) }) {
		return haservice.ServiceFailed("the failover controller is stopping")
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return haservice.ServiceFailed("the failover controller is stopping")
	}
}

// GracefulFailover makes the local NameNode active through the election
// (Hadoop's doGracefulFailover): check it is healthy; find the current
// active from the lock; ask the other controllers, the active's last, to
// cede for twice the graceful fence timeout; wait until this controller's
// election made an attempt; let the others rejoin.
func (s rpcService) GracefulFailover(ctx context.Context) error {
	if err := s.checkAdmin(ctx); err != nil {
		return err
	}
	c := s.c
	timeout := 2 * c.cfg.HA.GracefulFenceTimeout
	if c.healthState() != health.ServiceHealthy {
		return haservice.ServiceFailed(fmt.Sprintf("%s is not currently healthy. Cannot be failover target", c.cfg.Local))
	}
	data, found, err := c.readLock()
	if err != nil {
		return fmt.Errorf("Unexpected ZooKeeper issue fetching active node info: %w", err)
	}
	if !found {
		return haservice.ServiceFailed("No other node is currently active.")
	}
	old, err := c.dataToTarget(data)
	if err != nil {
		return err
	}
	if old.SameAddress(c.cfg.Local) {
		c.log.Info(fmt.Sprintf("Local node %s is already active. No need to failover. Returning success.", c.cfg.Local))
		return nil
	}
	start := c.deps.Clock.Now()
	var ceded []*haservice.ZKFCClient
	defer func() {
		for _, z := range ceded {
			z.Close()
		}
	}()
	cede := func(t *haservice.Target) error {
		c.log.Info(fmt.Sprintf("Asking %s to cede its active state for %dms", t, timeout.Milliseconds()))
		z := haservice.NewZKFCClient(haservice.ClientConfig{Address: t.ZKFCAddress(), User: c.cfg.User, Timeout: timeout,
			ConnectRetries: 1, RetryInterval: c.cfg.HA.ConnectRetryInterval, DialTimeout: c.cfg.HA.ConnectTimeout, Logger: c.log,
			Kerberos: c.cfg.HA.Kerberos, Protection: c.cfg.HA.Protection})
		ceded = append(ceded, z)
		return z.CedeActive(ctx, int32(timeout.Milliseconds()))
	}
	var active *haservice.Target
	for _, t := range c.cfg.Others {
		if t.SameAddress(old) {
			active = t
			continue
		}
		if err := cede(t); err != nil {
			return err
		}
	}
	if active == nil {
		return fmt.Errorf("%w: the active %s is not one of the other NameNodes", ErrBadZNodeData, old)
	}
	if err := cede(active); err != nil {
		return err
	}
	a, err := c.waitAttempt(ctx, start, timeout+attemptWaitExtra)
	if err != nil {
		return err
	}
	if a == nil {
		if c.healthState() != health.ServiceHealthy {
			return haservice.ServiceFailed("Unable to become active. Service became unhealthy while trying to failover.")
		}
		return haservice.ServiceFailed("Unable to become active. Local node did not get an opportunity to do so from ZooKeeper, or the local node took too long to transition to active.")
	}
	// Let the others rejoin: a quick failback is possible if this one dies.
	for _, z := range ceded {
		if err := z.CedeActive(ctx, -1); err != nil {
			return err
		}
	}
	if !a.ok {
		return haservice.ServiceFailed("Failed to become active. " + a.msg)
	}
	c.log.Info("Successfully became active. " + a.msg)
	return nil
}

func (c *Controller) healthState() health.State {
	c.pub.Lock()
	defer c.pub.Unlock()
	return c.pub.health
}

// readLock reads the lock's data (who is active now) with the elector's
// session, or a session of its own when the elector has none.
func (c *Controller) readLock() ([]byte, bool, error) {
	c.pub.Lock()
	s := c.pub.session
	c.pub.Unlock()
	if s == nil {
		var err error
		if s, err = openSession(c.ctx, &c.cfg, 0, c.log, func(int, sessionEvent) {}); err != nil {
			return nil, false, err
		}
		defer s.close()
	}
	data, _, err := s.get(c.cfg.LockPath())
	switch result(err).Code {
	case elector.OK:
		return data, true, nil
	case elector.NoNode:
		return nil, false, nil
	}
	return nil, false, err
}

// waitAttempt waits until an attempt to become active made since start is
// recorded, the local NameNode is no longer healthy (nil), or within has
// passed (nil).
func (c *Controller) waitAttempt(ctx context.Context, start time.Time, within time.Duration) (*attempt, error) {
	deadline := start.Add(within)
	for {
		c.pub.Lock()
		healthy := c.pub.health == health.ServiceHealthy
		var found *attempt
		for i := len(c.pub.attempts) - 1; i >= 0; i-- {
			if !c.pub.attempts[i].at.Before(start) {
				a := c.pub.attempts[i]
				found = &a
				break
			}
		}
		changed := c.pub.changed
		c.pub.Unlock()
		if !healthy {
			return nil, nil
		}
		if found != nil {
			return found, nil
		}
		now := c.deps.Clock.Now()
		if !now.Before(deadline) {
			c.log.Warn(fmt.Sprintf("%dms timeout elapsed waiting for an attempt to become active", within.Milliseconds()))
			return nil, nil
		}
		t := c.deps.Clock.NewTimer(min(attemptRecheck, deadline.Sub(now)))
		select {
		case <-changed:
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-c.ctx.Done():
			t.Stop()
			return nil, haservice.ServiceFailed("the failover controller is stopping")
		}
		t.Stop()
	}
}
