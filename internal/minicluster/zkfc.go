package minicluster

import (
	"context"
	"errors"
	"fmt"
	"os/user"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	"github.com/hdfsgo/hdfsgo/internal/zkfc"
)

// zkfcConfig is the failover controller configuration of NameNode i.
func (c *Cluster) zkfcConfig(ctx context.Context, i int) (zkfc.Config, error) {
	_, cc, err := c.haNameNodeConfig(i)
	if err != nil {
		return zkfc.Config{}, err
	}
	return zkfc.ConfigFrom(ctx, cc, currentUser(), nil)
}

// formatZK is hdfs zkfc -formatZK -force: the cluster owns
// ha.zookeeper.parent-znode/ns1 and starts every election afresh (a
// breadcrumb of an earlier run may name addresses that changed).
func (c *Cluster) formatZK(ctx context.Context) error {
	cfg, err := c.zkfcConfig(ctx, 0)
	if err != nil {
		return err
	}
	return zkfc.Format(ctx, cfg, zkfc.FormatOptions{Force: true, Logger: c.logger.With("role", "zkfc")})
}

// StartController starts (or restarts) the failover controller of HA
// NameNode i on its address.
func (c *Cluster) StartController(ctx context.Context, i int) error {
	if c.opts.ZooKeeper == "" {
		return errors.New("minicluster: failover controllers need Options.ZooKeeper")
	}
	cfg, err := c.zkfcConfig(ctx, i)
	if err != nil {
		return err
	}
	cfg.RPCAddress = c.zkfcAddrs[i]
	c.release(cfg.RPCAddress)
	ctl, err := zkfc.Start(ctx, cfg, zkfc.Deps{Logger: c.logger.With("role", "zkfc", "nn", nnIDs[i])})
	if err != nil {
		return fmt.Errorf("minicluster: failover controller of %s: %w", nnIDs[i], err)
	}
	c.mu.Lock()
	c.mu.zkfcs[i] = ctl
	c.mu.Unlock()
	return nil
}

// StopController stops the failover controller of NameNode i: it leaves
// the election (its lock is freed at once), its NameNode keeps its state.
func (c *Cluster) StopController(i int) error {
	c.mu.Lock()
	ctl := c.mu.zkfcs[i]
	c.mu.zkfcs[i] = nil
	c.mu.Unlock()
	if ctl == nil {
		return nil
	}
	return ctl.Close()
}

// Controllers lists the failover controllers by NameNode; stopped ones
// (and all, without ZooKeeper) are nil.
func (c *Cluster) Controllers() []*zkfc.Controller {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*zkfc.Controller(nil), c.mu.zkfcs...)
}

// ControllerAddrs are the controllers' ZKFCProtocol addresses by
// NameNode.
func (c *Cluster) ControllerAddrs() []string { return append([]string(nil), c.zkfcAddrs...) }

// closeControllers stops the controllers, those of standbys first.
func (c *Cluster) closeControllers() error {
	nns := c.NameNodes()
	var errs []error
	for _, active := range []bool{false, true} {
		for i, ctl := range c.Controllers() {
			if ctl == nil || (i < len(nns) && nns[i] != nil && (nns[i].HAState() == ha.Active) != active) {
				continue
			}
			errs = append(errs, c.StopController(i))
		}
	}
	return errors.Join(errs...)
}

// waitState waits until NameNode i is in state st.
func (c *Cluster) waitState(ctx context.Context, i int, st ha.State) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		if nn := c.NameNodes()[i]; nn != nil && nn.HAState() == st {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("minicluster: %s did not become %v: %w", nnIDs[i], st, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// currentUser is the user the controllers act as: the NameNodes' own,
// their superuser.
func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}
