// Package minicluster runs a whole hdfsgo cluster in one process: a NameNode and
// N DataNodes, each with its own directories under one base dir, talking to each
// other only over real TCP sockets on the loopback interface, exactly as separate
// processes would. It serves `hdfs minicluster` and the integration tests.
//
// DataNode i listens on 127.0.0.(11+i) when that address can be bound (every
// 127/8 address is loopback on Linux), so the NameNode sees distinct hosts;
// elsewhere all roles use 127.0.0.1.
//
// A Cluster is safe for concurrent use. Close stops every role.
//
//	c, err := minicluster.Start(ctx, minicluster.Options{Dir: dir, DataNodes: 3})
//	defer c.Close()
//	fmt.Println(c.URI()) // hdfs://127.0.0.1:NNNN
package minicluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/datanode"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/dnconn"
	"github.com/hdfsgo/hdfsgo/internal/failpoint"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/server"
	"github.com/hdfsgo/hdfsgo/internal/zkfc"
)

// Options describe a cluster.
type Options struct {
	// Dir holds every role's directories (nn/, dn0/, dn1/, ..., conf/).
	Dir string
	// DataNodes is how many DataNodes to run (default 3 when zero; negative
	// means none).
	DataNodes int
	// NameNodePort is the NameNode's RPC port on 127.0.0.1 (0: any free port).
	NameNodePort int
	// NameNodeHTTPPort is the NameNode's web port on 127.0.0.1 (0: any free
	// port). DataNodes' web servers always take free ports.
	NameNodeHTTPPort int
	// Conf overrides configuration for every role (e.g. test-sized
	// heartbeat intervals).
	Conf []conf.KeyValue
	// Reuse keeps an existing formatted NameNode directory instead of
	// formatting it (restarting a kept cluster).
	Reuse bool
	// Logger receives every role's log (discarded when nil).
	Logger *slog.Logger
	// HA runs two NameNodes, nn1 and nn2 of nameservice Nameservice, over
	// shared edits: by default three JournalNodes in this process
	// (qjournal://, each with Dir/jn<i>), or with SharedEditsDir a
	// directory (Dir/shared). nn1 is made active, nn2 is its standby.
	// fs.defaultFS is then hdfs://ns1, and the written client
	// configuration has the nameservice's keys.
	HA bool
	// ZooKeeper, with HA, is the ha.zookeeper.quorum of a running
	// ZooKeeper: each NameNode then gets a failover controller (hdfs zkfc,
	// in this process) and the election makes one of them active
	// (dfs.ha.automatic-failover.enabled). The cluster formats
	// ha.zookeeper.parent-znode/ns1 in it at every start. The controllers
	// fence with shell(/bin/true) unless Conf sets dfs.ha.fencing.methods:
	// in one process a NameNode that does not answer is one that stopped.
	ZooKeeper string
	// SharedEditsDir makes an HA cluster share a directory (file://)
	// instead of JournalNodes.
	SharedEditsDir bool
	// JournalNodes is how many JournalNodes an HA cluster runs (default 3).
	JournalNodes int
	// DomainSockets makes every DataNode serve a UNIX domain socket
	// (dfs.domain.socket.path = Dir/dn._PORT.sock, unless Conf sets one)
	// and the written client configuration use it for data traffic
	// (dfs.client.domain.socket.data.traffic). When Dir is too long for a
	// socket path, or not in safe directories, the cluster runs without
	// and logs why.
	DomainSockets bool
	// VolumesPerDataNode gives each DataNode that many volumes
	// (dn<i>/data0, dn<i>/data1, ...); 0 or 1: one, dn<i>/data.
	VolumesPerDataNode int
	// ScannerClock drives the DataNodes' block and directory scanners and
	// disk checkers (datanode.Deps.ScannerClock); nil: the real clock.
	ScannerClock clock.Clock
	// DataNodeCapacity, when positive, is the size of every DataNode
	// volume's file system as the DataNodes see it (Hadoop's
	// MiniDFSCluster storage capacities): capacity, DFS used and
	// remaining are then those of a volume of that size holding only the
	// DataNode's data, so that tests of utilization (the balancer) do not
	// depend on the disk they run on.
	DataNodeCapacity int64
	// StorageTypes, when StorageTypes[i] is not empty, gives DataNode i one
	// volume per entry (dn<i>/data0, dn<i>/data1, ...), tagged with that
	// storage type in dfs.datanode.data.dir ("DISK", "SSD", "ARCHIVE",
	// "RAM_DISK"); it overrides VolumesPerDataNode for that node.
	StorageTypes [][]string
}

// Cluster is a running cluster.
type Cluster struct {
	opts       Options
	conf       *conf.Conf
	domainKeys []string // the domain socket keys set in conf, for WriteConfig
	logger     *slog.Logger
	// nnAddrs and nnHTTPAddrs are the NameNodes' addresses, kept across
	// restarts (one NameNode, or nn1 and nn2 with HA).
	nnAddrs, nnHTTPAddrs []string
	// jnAddrs and jnHTTPAddrs are the JournalNodes' (HA over qjournal://).
	jnAddrs, jnHTTPAddrs []string

	// zkfcAddrs are the failover controllers' ZKFCProtocol addresses,
	// by NameNode (with HA and ZooKeeper).
	zkfcAddrs []string

	mu struct {
		sync.Mutex
		nns   []*namenode.NameNode  // nil where stopped
		dns   []*datanode.DataNode  // nil where stopped
		zkfcs []*zkfc.Controller    // nil where stopped
		jns   []*server.JournalNode // nil where stopped
		// reserved holds the listeners of the ports picked for the
		// NameNodes, JournalNodes and controllers until each first
		// starts on its own, so that nothing else takes a port between
		// the pick and the start.
		reserved map[string]net.Listener
	}
}

// Start formats (unless Reuse finds a formatted NameNode) and starts the cluster,
// and waits until every DataNode has registered and reported.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Dir == "" {
		return nil, errors.New("minicluster: no directory given")
	}
	if opts.DataNodes == 0 {
		opts.DataNodes = 3
	}
	if opts.DataNodes < 0 {
		opts.DataNodes = 0
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := &Cluster{opts: opts, logger: opts.Logger}
	c.conf = conf.Defaults().With(opts.Conf...)
	if opts.DomainSockets {
		if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("minicluster: %w", err)
		}
		c.enableDomainSockets()
	}
	c.mu.dns = make([]*datanode.DataNode, opts.DataNodes)
	if opts.HA {
		if err := c.startHA(ctx); err != nil {
			return nil, err
		}
	} else if err := c.startNameNode(ctx); err != nil {
		return nil, err
	}
	for i := range opts.DataNodes {
		if err := c.StartDataNode(ctx, i); err != nil {
			c.Close()
			return nil, err
		}
	}
	if err := c.WaitActive(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) nnConfig() (namenode.Config, *conf.Conf, error) {
	dir := filepath.Join(c.opts.Dir, "nn", "name")
	http := "127.0.0.1:" + strconv.Itoa(c.opts.NameNodeHTTPPort)
	if len(c.nnHTTPAddrs) > 0 {
		http = c.nnHTTPAddrs[0] // a restart keeps the port browsers know
	}
	cc := c.conf.With(
		conf.KeyValue{Key: conf.DFSNameNodeNameDir, Value: dir},
		conf.KeyValue{Key: conf.DFSNameNodeRPCAddress, Value: "127.0.0.1:" + strconv.Itoa(c.opts.NameNodePort)},
		conf.KeyValue{Key: conf.DFSNameNodeHTTPAddress, Value: http},
	)
	cfg, err := namenode.ConfigFrom(cc)
	return cfg, cc, err
}

func (c *Cluster) startNameNode(ctx context.Context) error {
	cfg, cc, err := c.nnConfig()
	if err != nil {
		return err
	}
	deps := namenode.Deps{Logger: c.logger.With("role", "namenode"), Conf: cc}
	formatted := false
	if c.opts.Reuse {
		if _, err := os.Stat(filepath.Join(cfg.NameDirs[0], "current", "VERSION")); err == nil {
			formatted = true
		}
	}
	if !formatted {
		if err := namenode.Format(ctx, cfg, deps, namenode.FormatOptions{Force: true}); err != nil {
			return err
		}
	}
	addr := cfg.RPCAddress
	if len(c.nnAddrs) > 0 {
		addr = c.nnAddrs[0] // a restart keeps the port clients know
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("minicluster: NameNode: listen on %s: %w", addr, err)
	}
	deps.Listener = l
	nn, err := namenode.Start(ctx, cfg, deps)
	if err != nil {
		l.Close()
		return err
	}
	c.nnAddrs = []string{nn.RPCAddr().String()}
	c.nnHTTPAddrs = []string{nn.HTTPAddr().String()}
	c.mu.Lock()
	c.mu.nns = []*namenode.NameNode{nn}
	c.mu.Unlock()
	return nil
}

// enableDomainSockets adds the domain socket settings to c.conf when the
// path will do.
func (c *Cluster) enableDomainSockets() {
	pattern := c.conf.String(conf.DFSDomainSocketPath)
	if pattern == "" {
		dir, err := filepath.Abs(c.opts.Dir)
		if err != nil {
			c.logger.Warn("no domain sockets", "err", err)
			return
		}
		pattern = filepath.Join(dir, "dn._PORT.sock")
	}
	if err := datanode.CheckDomainSocketPath(dnconn.DomainSocketPath(pattern, 65535)); err != nil {
		c.logger.Warn("DataNodes serve TCP only", "err", err)
		return
	}
	c.domainKeys = []string{conf.DFSDomainSocketPath, conf.DFSClientDomainSocketDataTraffic}
	c.conf = c.conf.With(conf.KeyValue{Key: conf.DFSDomainSocketPath, Value: pattern},
		conf.KeyValue{Key: conf.DFSClientDomainSocketDataTraffic, Value: "true"})
}

// DomainSocketPath is the dfs.domain.socket.path the DataNodes use, "" when
// they serve TCP only.
func (c *Cluster) DomainSocketPath() string {
	if len(c.domainKeys) == 0 {
		return ""
	}
	return c.conf.String(conf.DFSDomainSocketPath)
}

// dnHost is the loopback address DataNode i listens on.
func dnHost(i int) string {
	h := "127.0.0." + strconv.Itoa(11+i)
	if i < 200 {
		if l, err := net.Listen("tcp", h+":0"); err == nil {
			l.Close()
			return h
		}
	}
	return "127.0.0.1"
}

// StartDataNode starts (or restarts, on its old directories) DataNode i.
func (c *Cluster) StartDataNode(ctx context.Context, i int) error {
	return c.StartDataNodeWith(ctx, i, DataNodeStart{})
}

// DataNodeStart holds the start-up choices of one DataNode start.
type DataNodeStart struct {
	// Rollback is `hdfs datanode -rollback`.
	Rollback bool
	// Failpoint is datanode.Deps.Failpoint (crash tests).
	Failpoint failpoint.Func
}

// StartDataNodeWith starts (or restarts) DataNode i with the given
// start-up choices.
func (c *Cluster) StartDataNodeWith(ctx context.Context, i int, st DataNodeStart) error {
	host := dnHost(i)
	data := filepath.Join(c.opts.Dir, "dn"+strconv.Itoa(i), "data")
	if n := c.opts.VolumesPerDataNode; n > 1 {
		dirs := make([]string, n)
		for j := range dirs {
			dirs[j] = data + strconv.Itoa(j)
		}
		data = strings.Join(dirs, ",")
	}
	if i < len(c.opts.StorageTypes) && len(c.opts.StorageTypes[i]) > 0 {
		dirs := make([]string, len(c.opts.StorageTypes[i]))
		base := filepath.Join(c.opts.Dir, "dn"+strconv.Itoa(i), "data")
		for j, typ := range c.opts.StorageTypes[i] {
			dirs[j] = "[" + typ + "]" + base + strconv.Itoa(j)
		}
		data = strings.Join(dirs, ",")
	}
	cc := c.conf.With(
		conf.KeyValue{Key: conf.DFSDataNodeDataDir, Value: data},
		conf.KeyValue{Key: conf.DFSDataNodeAddress, Value: host + ":0"},
		conf.KeyValue{Key: conf.DFSDataNodeIPCAddress, Value: host + ":0"},
		conf.KeyValue{Key: conf.DFSDataNodeHTTPAddress, Value: host + ":0"},
		conf.KeyValue{Key: conf.DFSDataNodeHostname, Value: host},
		conf.KeyValue{Key: conf.FSDefaultFS, Value: c.URI()},
	)
	if c.opts.HA {
		cc = cc.With(c.haKeys()...)
	}
	cfg, err := datanode.ConfigFrom(cc)
	if err != nil {
		return err
	}
	cfg.Rollback = st.Rollback
	deps := datanode.Deps{Logger: c.logger.With("role", "datanode", "dn", i), Conf: cc,
		ScannerClock: c.opts.ScannerClock, Failpoint: st.Failpoint}
	if size := c.opts.DataNodeCapacity; size > 0 {
		deps.VolumeTesting.StatFS = func(string) (storage.DiskStat, error) {
			return storage.DiskStat{Total: size, Available: size}, nil
		}
	}
	dn, err := datanode.Start(ctx, cfg, deps)
	if err != nil {
		return fmt.Errorf("minicluster: DataNode %d: %w", i, err)
	}
	c.mu.Lock()
	if i >= len(c.mu.dns) {
		c.mu.dns = append(c.mu.dns, make([]*datanode.DataNode, i+1-len(c.mu.dns))...)
	}
	c.mu.dns[i] = dn
	c.mu.Unlock()
	return nil
}

// WaitActive waits until every running DataNode has registered and sent its
// first block report.
func (c *Cluster) WaitActive(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for _, dn := range c.DataNodes() {
		if dn == nil {
			continue
		}
		if err := dn.WaitReady(ctx); err != nil {
			return fmt.Errorf("minicluster: DataNode %s did not come up: %w", dn.DatanodeUUID(), err)
		}
	}
	return nil
}

// StopDataNode stops DataNode i cleanly (its data stays for a restart).
func (c *Cluster) StopDataNode(i int) error {
	c.mu.Lock()
	dn := c.mu.dns[i]
	c.mu.dns[i] = nil
	c.mu.Unlock()
	if dn == nil {
		return nil
	}
	return dn.Close()
}

// RestartNameNode stops the NameNode (the active one with HA) and starts
// it again on its directories and port.
func (c *Cluster) RestartNameNode(ctx context.Context) error {
	if c.opts.HA {
		i := c.activeIndex()
		if err := c.StopNameNode(i); err != nil {
			return err
		}
		return c.StartNameNode(ctx, i)
	}
	c.mu.Lock()
	var nn *namenode.NameNode
	if len(c.mu.nns) > 0 {
		nn = c.mu.nns[0]
		c.mu.nns[0] = nil
	}
	c.mu.Unlock()
	if nn != nil {
		nn.Close()
	}
	c.opts.Reuse = true
	return c.startNameNode(ctx)
}

// NameNodeConfig is NameNode i's configuration (i is 0 without HA), for
// running a NameNode command (-upgrade, -rollback) on its directories
// while it is stopped.
func (c *Cluster) NameNodeConfig(i int) (namenode.Config, error) {
	if c.opts.HA {
		cfg, _, err := c.haNameNodeConfig(i)
		return cfg, err
	}
	cfg, _, err := c.nnConfig()
	return cfg, err
}

// NameNode is the running NameNode — with HA the active one, or nn1 when
// none is active (nil while stopped).
func (c *Cluster) NameNode() *namenode.NameNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, nn := range c.mu.nns {
		if nn != nil && nn.HAState() == ha.Active {
			return nn
		}
	}
	if len(c.mu.nns) == 0 {
		return nil
	}
	return c.mu.nns[0]
}

// NameNodes lists the NameNodes by index (nn1, nn2 with HA); stopped ones
// are nil.
func (c *Cluster) NameNodes() []*namenode.NameNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*namenode.NameNode(nil), c.mu.nns...)
}

// DataNodes lists the DataNodes by index; stopped ones are nil.
func (c *Cluster) DataNodes() []*datanode.DataNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*datanode.DataNode(nil), c.mu.dns...)
}

// NameNodeAddr is the NameNode's RPC address (the active one's with HA).
func (c *Cluster) NameNodeAddr() string { return c.nnAddrs[c.activeIndex()] }

// NameNodeAddrs are every NameNode's RPC address, by index.
func (c *Cluster) NameNodeAddrs() []string { return append([]string(nil), c.nnAddrs...) }

// URI is the cluster's fs.defaultFS: the NameNode's address, or with HA the
// nameservice.
func (c *Cluster) URI() string {
	if c.opts.HA {
		return "hdfs://" + Nameservice
	}
	return "hdfs://" + c.nnAddrs[0]
}

// WriteConfig writes core-site.xml (fs.defaultFS) and hdfs-site.xml (the
// overrides the cluster runs with) into dir, for clients to use as
// HADOOP_CONF_DIR.
func (c *Cluster) WriteConfig(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	core := conf.Defaults().With(conf.KeyValue{Key: conf.FSDefaultFS, Value: c.URI()})
	if err := writeXML(filepath.Join(dir, conf.CoreSiteFile), core, conf.FSDefaultFS); err != nil {
		return err
	}
	var keys []string
	for _, kv := range c.opts.Conf {
		keys = append(keys, kv.Key)
	}
	keys = append(keys, c.domainKeys...)
	var hdfsConf *conf.Conf
	if c.opts.HA {
		kvs := c.haKeys()
		for _, kv := range kvs {
			keys = append(keys, kv.Key)
		}
		hdfsConf = c.conf.With(kvs...)
	} else {
		keys = append(keys, conf.DFSNameNodeRPCAddress, conf.DFSNameNodeHTTPAddress)
		hdfsConf = c.conf.With(conf.KeyValue{Key: conf.DFSNameNodeRPCAddress, Value: c.nnAddrs[0]},
			conf.KeyValue{Key: conf.DFSNameNodeHTTPAddress, Value: c.nnHTTPAddrs[0]})
	}
	return writeXML(filepath.Join(dir, conf.HDFSSiteFile), hdfsConf, keys...)
}

func writeXML(path string, c *conf.Conf, keys ...string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := c.WriteXML(f, keys...); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Close stops every role: the failover controllers (the standbys' first,
// so that nobody takes over), the DataNodes, the NameNodes, then the
// JournalNodes.
func (c *Cluster) Close() error {
	var errs []error
	errs = append(errs, c.closeControllers())
	c.mu.Lock()
	dns, nns, jns := c.mu.dns, c.mu.nns, c.mu.jns
	c.mu.dns, c.mu.nns = make([]*datanode.DataNode, len(dns)), make([]*namenode.NameNode, len(nns))
	c.mu.jns = make([]*server.JournalNode, len(jns))
	for _, l := range c.mu.reserved {
		l.Close()
	}
	c.mu.reserved = nil
	c.mu.Unlock()
	defer func() {
		for _, jn := range jns {
			if jn != nil {
				jn.Close()
			}
		}
	}()
	for _, dn := range dns {
		if dn != nil {
			if err := dn.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, nn := range nns {
		if nn != nil {
			if err := nn.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// HelperConf is the configuration of a Checkpoint Node, Backup Node or
// Secondary NameNode of the (non-HA) cluster's NameNode, keeping its
// storage in dir and listening on free loopback ports; kv override it.
func (c *Cluster) HelperConf(dir string, kv ...conf.KeyValue) *conf.Conf {
	return c.conf.With(
		conf.KeyValue{Key: conf.FSDefaultFS, Value: c.URI()},
		conf.KeyValue{Key: conf.DFSNameNodeRPCAddress, Value: c.nnAddrs[0]},
		conf.KeyValue{Key: conf.DFSNameNodeHTTPAddress, Value: c.nnHTTPAddrs[0]},
		conf.KeyValue{Key: conf.DFSNameNodeCheckpointDir, Value: dir},
		conf.KeyValue{Key: conf.DFSNameNodeBackupAddress, Value: "127.0.0.1:0"},
		conf.KeyValue{Key: conf.DFSNameNodeBackupHTTPAddress, Value: "127.0.0.1:0"},
		conf.KeyValue{Key: conf.DFSNameNodeSecondaryHTTPAddress, Value: "127.0.0.1:0"},
	).With(kv...)
}

// StartHelper starts a Checkpoint Node, Backup Node or Secondary NameNode
// (role) of the cluster's NameNode with HelperConf(dir, kv...). The caller
// closes it.
func (c *Cluster) StartHelper(ctx context.Context, role namenode.Role, dir string, kv ...conf.KeyValue) (*namenode.NameNode, error) {
	return c.StartHelperWith(ctx, role, dir, nil, kv...)
}

// StartHelperWith is StartHelper with tweak applied to the helper's Config
// before it starts (tests set its Testing knobs).
func (c *Cluster) StartHelperWith(ctx context.Context, role namenode.Role, dir string, tweak func(*namenode.Config), kv ...conf.KeyValue) (*namenode.NameNode, error) {
	cc := c.HelperConf(dir, kv...)
	cfg, err := namenode.HelperConfigFrom(cc, role)
	if err != nil {
		return nil, err
	}
	if tweak != nil {
		tweak(&cfg)
	}
	return namenode.StartHelper(ctx, role, cfg, namenode.Deps{Logger: c.logger.With("role", role.String()), Conf: cc}, namenode.HelperOptions{})
}
