package minicluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/haservice"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/server"
	"github.com/hdfsgo/hdfsgo/internal/zkfc"
)

// Nameservice is the HA cluster's nameservice id.
const Nameservice = "ns1"

// nnIDs are the HA NameNodes' ids, by index.
var nnIDs = []string{"nn1", "nn2"}

// haKeys are the nameservice's keys: what the NameNodes, the DataNodes and
// the clients of an HA cluster share.
func (c *Cluster) haKeys() []conf.KeyValue {
	kvs := []conf.KeyValue{
		{Key: conf.FSDefaultFS, Value: "hdfs://" + Nameservice},
		{Key: conf.DFSNameservices, Value: Nameservice},
		{Key: conf.Suffixed(conf.DFSHANameNodes, Nameservice), Value: nnIDs[0] + "," + nnIDs[1]},
		{Key: conf.DFSNameNodeSharedEditsDir, Value: c.sharedEditsURI()},
		{Key: "dfs.client.failover.proxy.provider." + Nameservice, Value: "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider"},
	}
	for i, id := range nnIDs {
		kvs = append(kvs,
			conf.KeyValue{Key: conf.Suffixed(conf.DFSNameNodeRPCAddress, Nameservice, id), Value: c.nnAddrs[i]},
			conf.KeyValue{Key: conf.Suffixed(conf.DFSNameNodeHTTPAddress, Nameservice, id), Value: c.nnHTTPAddrs[i]})
	}
	if c.opts.ZooKeeper != "" {
		kvs = append(kvs,
			conf.KeyValue{Key: conf.DFSHAAutomaticFailoverEnabled, Value: "true"},
			conf.KeyValue{Key: conf.HAZooKeeperQuorum, Value: c.opts.ZooKeeper})
		for i, id := range nnIDs {
			_, port, _ := net.SplitHostPort(c.zkfcAddrs[i])
			kvs = append(kvs, conf.KeyValue{Key: conf.Suffixed(conf.DFSHAZKFCPort, Nameservice, id), Value: port})
		}
		if _, ok := c.conf.Get(conf.DFSHAFencingMethods); !ok {
			kvs = append(kvs, conf.KeyValue{Key: conf.DFSHAFencingMethods, Value: "shell(/bin/true)"})
		}
	}
	return kvs
}

// sharedEditsURI is dfs.namenode.shared.edits.dir: the JournalNodes, or
// Dir/shared.
func (c *Cluster) sharedEditsURI() string {
	if c.opts.SharedEditsDir {
		return "file://" + filepath.Join(c.opts.Dir, "shared")
	}
	return "qjournal://" + strings.Join(c.jnAddrs, ";") + "/" + Nameservice
}

// JournalNodes lists the JournalNodes by index; stopped ones are nil.
func (c *Cluster) JournalNodes() []*server.JournalNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*server.JournalNode(nil), c.mu.jns...)
}

// JournalNodeAddrs are the JournalNodes' RPC addresses, by index.
func (c *Cluster) JournalNodeAddrs() []string { return append([]string(nil), c.jnAddrs...) }

// jnConfig is JournalNode i's configuration.
func (c *Cluster) jnConfig(i int) (server.Config, *conf.Conf, error) {
	cc := c.conf.With(c.haKeys()...).With(
		conf.KeyValue{Key: conf.DFSJournalNodeEditsDir, Value: filepath.Join(c.opts.Dir, fmt.Sprintf("jn%d", i))},
		conf.KeyValue{Key: conf.DFSJournalNodeRPCAddress, Value: c.jnAddrs[i]},
		conf.KeyValue{Key: conf.DFSJournalNodeHTTPAddress, Value: c.jnHTTPAddrs[i]},
	)
	cfg, err := server.ConfigFrom(cc)
	return cfg, cc, err
}

// StartJournalNode starts (or restarts) JournalNode i on its directory and
// addresses.
func (c *Cluster) StartJournalNode(ctx context.Context, i int) error {
	cfg, cc, err := c.jnConfig(i)
	if err != nil {
		return err
	}
	l, err := c.listen(c.jnAddrs[i])
	if err != nil {
		return fmt.Errorf("minicluster: jn%d: %w", i, err)
	}
	hl, err := c.listen(c.jnHTTPAddrs[i])
	if err != nil {
		l.Close()
		return fmt.Errorf("minicluster: jn%d: %w", i, err)
	}
	jn, err := server.Start(ctx, cfg, server.Deps{Logger: c.logger.With("role", "journalnode", "jn", i), Conf: cc,
		Listener: l, HTTPListener: hl})
	if err != nil {
		l.Close()
		hl.Close()
		return err
	}
	c.mu.Lock()
	c.mu.jns[i] = jn
	c.mu.Unlock()
	return nil
}

// StopJournalNode stops JournalNode i (its data stays).
func (c *Cluster) StopJournalNode(i int) error {
	c.mu.Lock()
	jn := c.mu.jns[i]
	c.mu.jns[i] = nil
	c.mu.Unlock()
	if jn == nil {
		return nil
	}
	return jn.Close()
}

// listenRetry listens on addr, waiting a little for a port just released.
func listenRetry(addr string) (net.Listener, error) {
	var err error
	for range 50 {
		var l net.Listener
		if l, err = net.Listen("tcp", addr); err == nil {
			return l, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, err
}

// startJournalNodes picks the JournalNodes' addresses and starts them.
func (c *Cluster) startJournalNodes(ctx context.Context) error {
	n := c.opts.JournalNodes
	if n <= 0 {
		n = 3
	}
	c.jnAddrs, c.jnHTTPAddrs = make([]string, n), make([]string, n)
	c.mu.jns = make([]*server.JournalNode, n)
	for i := range n {
		var err error
		if c.jnAddrs[i], err = c.pickPort(0); err != nil {
			return err
		}
		if c.jnHTTPAddrs[i], err = c.pickPort(0); err != nil {
			return err
		}
	}
	for i := range n {
		if err := c.StartJournalNode(ctx, i); err != nil {
			c.Close()
			return fmt.Errorf("minicluster: starting jn%d: %w", i, err)
		}
	}
	return nil
}

// haNameNodeConfig is NameNode i's configuration.
func (c *Cluster) haNameNodeConfig(i int) (namenode.Config, *conf.Conf, error) {
	cc := c.conf.With(c.haKeys()...).With(
		conf.KeyValue{Key: conf.DFSHANameNodeID, Value: nnIDs[i]},
		conf.KeyValue{Key: conf.DFSNameNodeNameDir, Value: filepath.Join(c.opts.Dir, nnIDs[i], "name")},
	)
	cfg, err := namenode.ConfigFrom(cc)
	return cfg, cc, err
}

// pickPort returns the configured loopback address (port != 0) or a free
// one (port 0), whose listener is kept in reserve for listen or release.
func (c *Cluster) pickPort(port int) (string, error) {
	if port != 0 {
		return "127.0.0.1:" + strconv.Itoa(port), nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.reserved == nil {
		c.mu.reserved = map[string]net.Listener{}
	}
	c.mu.reserved[l.Addr().String()] = l
	return l.Addr().String(), nil
}

// listen returns the listener reserved for addr, or (a restart, the port
// freed by the stopped node) a new one, waiting a little for the port.
func (c *Cluster) listen(addr string) (net.Listener, error) {
	c.mu.Lock()
	l := c.mu.reserved[addr]
	delete(c.mu.reserved, addr)
	c.mu.Unlock()
	if l != nil {
		return l, nil
	}
	return listenRetry(addr)
}

// release frees the port reserved for addr, for a daemon that listens by
// itself.
func (c *Cluster) release(addr string) {
	c.mu.Lock()
	l := c.mu.reserved[addr]
	delete(c.mu.reserved, addr)
	c.mu.Unlock()
	if l != nil {
		l.Close()
	}
}

// startHA formats (unless reused) and starts nn1 and nn2, and makes nn1
// active.
func (c *Cluster) startHA(ctx context.Context) error {
	c.nnAddrs, c.nnHTTPAddrs = make([]string, 2), make([]string, 2)
	for i := range nnIDs {
		rpcPort, httpPort := 0, 0
		if i == 0 {
			rpcPort, httpPort = c.opts.NameNodePort, c.opts.NameNodeHTTPPort
		}
		var err error
		if c.nnAddrs[i], err = c.pickPort(rpcPort); err != nil {
			return err
		}
		if c.nnHTTPAddrs[i], err = c.pickPort(httpPort); err != nil {
			return err
		}
	}
	c.mu.nns = make([]*namenode.NameNode, 2)
	if c.opts.ZooKeeper != "" {
		c.mu.zkfcs = make([]*zkfc.Controller, 2)
		c.zkfcAddrs = make([]string, 2)
		for i := range nnIDs {
			var err error
			if c.zkfcAddrs[i], err = c.pickPort(0); err != nil {
				return err
			}
		}
	}
	if !c.opts.SharedEditsDir {
		if err := c.startJournalNodes(ctx); err != nil {
			return err
		}
	}
	cfg0, _, err := c.haNameNodeConfig(0)
	if err != nil {
		return err
	}
	formatted := false
	if c.opts.Reuse {
		if _, err := os.Stat(filepath.Join(cfg0.NameDirs[0], "current", "VERSION")); err == nil {
			formatted = true
		}
	}
	// Hadoop's documented set-up: format nn1 (and the shared edits), start
	// it and make it active, then -bootstrapStandby nn2 from it.
	if !formatted {
		if err := namenode.Format(ctx, cfg0, namenode.Deps{Logger: c.logger.With("role", "namenode", "nn", nnIDs[0])}, namenode.FormatOptions{Force: true}); err != nil {
			c.Close()
			return err
		}
	}
	if err := c.StartNameNode(ctx, 0); err != nil {
		return err
	}
	if c.opts.ZooKeeper != "" {
		// The election makes nn1 active: the only controller.
		if err := c.formatZK(ctx); err != nil {
			c.Close()
			return err
		}
		if err := c.StartController(ctx, 0); err != nil {
			c.Close()
			return err
		}
		if err := c.waitState(ctx, 0, ha.Active); err != nil {
			c.Close()
			return err
		}
	} else if err := c.NameNodes()[0].TransitionToActive(ctx); err != nil {
		c.Close()
		return fmt.Errorf("minicluster: making %s active: %w", nnIDs[0], err)
	}
	if !formatted {
		cfg1, cc1, err := c.haNameNodeConfig(1)
		if err != nil {
			c.Close()
			return err
		}
		if err := namenode.BootstrapStandby(ctx, cfg1, namenode.Deps{Logger: c.logger.With("role", "namenode", "nn", nnIDs[1]), Conf: cc1},
			namenode.BootstrapOptions{Force: true}); err != nil {
			c.Close()
			return fmt.Errorf("minicluster: bootstrapping %s: %w", nnIDs[1], err)
		}
	}
	if err := c.StartNameNode(ctx, 1); err != nil {
		c.Close()
		return err
	}
	if c.opts.ZooKeeper != "" {
		if err := c.StartController(ctx, 1); err != nil {
			c.Close()
			return err
		}
	}
	return nil
}

// StartNameNode starts (or restarts) NameNode i on its directories and
// addresses; with HA it comes up as a standby.
func (c *Cluster) StartNameNode(ctx context.Context, i int) error {
	if !c.opts.HA {
		c.opts.Reuse = true
		return c.startNameNode(ctx)
	}
	cfg, cc, err := c.haNameNodeConfig(i)
	if err != nil {
		return err
	}
	l, err := c.listen(c.nnAddrs[i])
	if err != nil {
		return fmt.Errorf("minicluster: %s: listen on %s: %w", nnIDs[i], c.nnAddrs[i], err)
	}
	hl, err := c.listen(c.nnHTTPAddrs[i])
	if err != nil {
		l.Close()
		return fmt.Errorf("minicluster: %s: listen on %s: %w", nnIDs[i], c.nnHTTPAddrs[i], err)
	}
	nn, err := namenode.Start(ctx, cfg, namenode.Deps{Logger: c.logger.With("role", "namenode", "nn", nnIDs[i]), Conf: cc,
		Listener: l, HTTPListener: hl})
	if err != nil {
		l.Close()
		hl.Close()
		return err
	}
	c.mu.Lock()
	c.mu.nns[i] = nn
	c.mu.Unlock()
	return nil
}

// StopNameNode stops NameNode i (its data stays).
func (c *Cluster) StopNameNode(i int) error {
	c.mu.Lock()
	nn := c.mu.nns[i]
	c.mu.nns[i] = nil
	c.mu.Unlock()
	if nn == nil {
		return nil
	}
	return nn.Close()
}

// Failover makes HA NameNode from standby and NameNode to active, as
// `hdfs haadmin -failover` does when the old active answers; with
// ZooKeeper, through to's failover controller (gracefulFailover).
func (c *Cluster) Failover(ctx context.Context, from, to int) error {
	if c.opts.ZooKeeper != "" {
		cfg, err := c.zkfcConfig(ctx, to)
		if err != nil {
			return err
		}
		// The controller's own identity: with Kerberos, its NameNode's.
		z := haservice.NewZKFCClient(haservice.ClientConfig{Address: c.zkfcAddrs[to], User: cfg.User, Timeout: time.Minute,
			Kerberos: cfg.HA.Kerberos, Protection: cfg.HA.Protection})
		defer z.Close()
		return z.GracefulFailover(ctx)
	}
	nns := c.NameNodes()
	if nns[from] != nil {
		if err := nns[from].TransitionToStandby(ctx); err != nil {
			return err
		}
	}
	return nns[to].TransitionToActive(ctx)
}

// activeIndex is the index of the active NameNode (0 without HA or when
// none is active).
func (c *Cluster) activeIndex() int {
	for i, nn := range c.NameNodes() {
		if nn != nil && nn.HAState() == ha.Active {
			return i
		}
	}
	return 0
}
