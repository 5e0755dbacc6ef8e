package zkfc

import (
	"context"
	"fmt"
	"net"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/haservice"
	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/zkfc/health"
)

// Config is a failover controller's configuration, read from Hadoop's
// keys by ConfigFrom.
type Config struct {
	// Nameservice and NameNodeID name the local NameNode (dfs.nameservice.id
	// or the only nameservice; dfs.ha.namenode.id or the NameNode whose RPC
	// address is local).
	Nameservice, NameNodeID string
	// Local is the local NameNode; Others the other NameNodes of the
	// nameservice, in configuration order.
	Local  *haservice.Target
	Others []*haservice.Target
	// Conf is the configuration the targets were resolved from, used to
	// resolve the NameNode a znode names.
	Conf *conf.Conf

	// Servers are the ZooKeeper servers (ha.zookeeper.quorum, host:port,
	// port 2181 when unnamed); Chroot is the quorum's "/path" suffix, under
	// which every znode lives ("" for none).
	Servers []string
	Chroot  string
	// SessionTimeout is ha.zookeeper.session-timeout.ms (10000 ms).
	SessionTimeout time.Duration
	// ParentZNode is ha.zookeeper.parent-znode (/hadoop-ha) joined with the
	// nameservice: /hadoop-ha/ns1. It holds the lock and the breadcrumb.
	ParentZNode string
	// ACL is set on every znode the controller creates (ha.zookeeper.acl,
	// world:anyone:rwcda); Auth is added to every session
	// (ha.zookeeper.auth, none). Both may be "@file".
	ACL  []zk.ACL
	Auth []AuthInfo
	// MaxRetries bounds retries of ZooKeeper operations and of opening a
	// session (ha.failover-controller.active-standby-elector.zk.op.retries, 3).
	MaxRetries int
	// ZKBindHost, when set, is the local address ZooKeeper connections
	// come from (hdfsgo.ha.zookeeper.bind-host).
	ZKBindHost string

	// Health holds the health monitor's periods
	// (ha.health-monitor.check-interval.ms,
	// ha.health-monitor.sleep-after-disconnect.ms).
	Health health.Config
	// HealthRPCTimeout bounds each health check call
	// (ha.health-monitor.rpc-timeout.ms, 45000 ms); HealthConnectRetries is
	// how often a check retries connecting
	// (ha.health-monitor.rpc.connect.max.retries, 1).
	HealthRPCTimeout     time.Duration
	HealthConnectRetries int
	// HA holds the failover timeouts (graceful fence, new active, shell
	// fencing bound).
	HA haservice.Config

	// RPCAddress is where ZKFCProtocol is served: the bind host
	// (dfs.namenode.servicerpc-bind-host, else dfs.namenode.rpc-bind-host,
	// else the local NameNode's IP) and dfs.ha.zkfc.port (8019).
	RPCAddress string
	// Admins may call ZKFCProtocol besides the controller's own user
	// (dfs.cluster.administrators: "users groups", "*" for everyone).
	Admins AccessList
	// User is the user the controller calls the NameNodes as, and the
	// one always allowed to call it; with Kerberos, the short name of its
	// principal.
	User string
	// Kerberos is the controller's identity when
	// hadoop.security.authentication=kerberos (the NameNode's principal
	// and keytab, dfs.namenode.kerberos.principal and
	// dfs.namenode.keytab.file); nil for SIMPLE. HA.Kerberos is then the
	// initiator of its calls.
	Kerberos *security.Identity
}

// zkfcKeys are the keys Hadoop lets a nameservice or a NameNode override
// for its controller (ZKFC_CONF_KEYS): key.NS.NN wins over key.NS over key.
var zkfcKeys = []string{
	conf.HAZooKeeperQuorum, conf.HAZooKeeperSessionTimeout, conf.HAZooKeeperParentZNode,
	conf.HAZooKeeperACL, conf.HAZooKeeperAuth,
}

// ConfigFrom builds the controller's configuration for the local NameNode.
// user is the user it acts as. dns resolves host names (nil: the system's).
func ConfigFrom(ctx context.Context, c *conf.Conf, user string, dns haservice.Resolver) (Config, error) {
	ns, err := localNameservice(c)
	if err != nil {
		return Config{}, err
	}
	ids := c.NameNodeIDs(ns)
	if len(ids) < 2 {
		return Config{}, fmt.Errorf("%w: HA is not enabled for this namenode.", ErrBadConfig)
	}
	nn := strings.TrimSpace(c.String(conf.DFSHANameNodeID))
	if nn == "" {
		if nn, err = localNameNodeID(c, ns, ids); err != nil {
			return Config{}, err
		}
	}
	if !slices.Contains(ids, nn) {
		return Config{}, fmt.Errorf("%w: %s: %q is not one of %s.%s (%s)", ErrBadConfig, conf.DFSHANameNodeID, nn, conf.DFSHANameNodes, ns, strings.Join(ids, ","))
	}
	// The controller's own keys, per nameservice and NameNode.
	var kv []conf.KeyValue
	for _, k := range zkfcKeys {
		for _, variant := range []string{conf.Suffixed(k, ns, nn), conf.Suffixed(k, ns)} {
			if v, ok := c.Get(variant); ok {
				kv = append(kv, conf.KeyValue{Key: k, Value: v})
				break
			}
		}
	}
	c = c.With(kv...)
	cfg := Config{Nameservice: ns, NameNodeID: nn, Conf: c, User: user}
	if cfg.Local, err = haservice.ResolveNameNode(ctx, c, ns, nn, dns); err != nil {
		return Config{}, err
	}
	if !cfg.Local.AutoFailover {
		return Config{}, fmt.Errorf("%w: Automatic failover is not enabled for %s. Please ensure that automatic failover is enabled in the configuration before running the ZK failover controller.", ErrAutoFailoverDisabled, cfg.Local)
	}
	for _, id := range ids {
		if id == nn {
			continue
		}
		t, err := haservice.ResolveNameNode(ctx, c, ns, id, dns)
		if err != nil {
			return Config{}, err
		}
		cfg.Others = append(cfg.Others, t)
	}
	if cfg.HA, err = haservice.ConfigFrom(c); err != nil {
		return Config{}, err
	}

	quorum := strings.TrimSpace(c.String(conf.HAZooKeeperQuorum))
	if quorum == "" {
		return Config{}, fmt.Errorf("%w: Missing required configuration '%s' for ZooKeeper quorum", ErrBadConfig, conf.HAZooKeeperQuorum)
	}
	if cfg.Servers, cfg.Chroot, err = parseQuorum(quorum); err != nil {
		return Config{}, err
	}
	if cfg.SessionTimeout, err = c.Duration(conf.HAZooKeeperSessionTimeout); err != nil {
		return Config{}, err
	}
	if cfg.SessionTimeout <= 0 {
		return Config{}, fmt.Errorf("%w: Invalid ZK session timeout %d", ErrBadConfig, cfg.SessionTimeout.Milliseconds())
	}
	parent := c.String(conf.HAZooKeeperParentZNode)
	if !strings.HasPrefix(parent, "/") {
		return Config{}, fmt.Errorf("%w: %s: Invalid path: %s", ErrBadConfig, conf.HAZooKeeperParentZNode, parent)
	}
	cfg.ParentZNode = path.Join(parent, ns)
	aclText, err := resolveIndirection(conf.HAZooKeeperACL, c.String(conf.HAZooKeeperACL))
	if err != nil {
		return Config{}, err
	}
	if cfg.ACL, err = ParseACL(aclText); err != nil {
		return Config{}, fmt.Errorf("%s: %w", conf.HAZooKeeperACL, err)
	}
	authText, err := resolveIndirection(conf.HAZooKeeperAuth, c.String(conf.HAZooKeeperAuth))
	if err != nil {
		return Config{}, err
	}
	if cfg.Auth, err = ParseAuth(authText); err != nil {
		return Config{}, fmt.Errorf("%s: %w", conf.HAZooKeeperAuth, err)
	}
	retries, err := c.Int32(conf.HAFCElectorZKOpRetries)
	if err != nil {
		return Config{}, err
	}
	if retries < 1 {
		return Config{}, fmt.Errorf("%w: %s must be at least 1, got %d", ErrBadConfig, conf.HAFCElectorZKOpRetries, retries)
	}
	cfg.MaxRetries = int(retries)
	cfg.ZKBindHost = strings.TrimSpace(c.String(conf.HDFSGoHAZooKeeperBindHost))

	for _, d := range []struct {
		key string
		dst *time.Duration
	}{
		{conf.HAHMCheckInterval, &cfg.Health.CheckInterval},
		{conf.HAHMSleepAfterDisconnect, &cfg.Health.SleepAfterDisconnect},
		{conf.HAHMRPCTimeout, &cfg.HealthRPCTimeout},
	} {
		if *d.dst, err = c.Duration(d.key); err != nil {
			return Config{}, err
		}
		if *d.dst < 0 {
			return Config{}, fmt.Errorf("%w: %s must not be negative", ErrBadConfig, d.key)
		}
	}
	hr, err := c.Int32(conf.HAHMRPCConnectMaxRetries)
	if err != nil {
		return Config{}, err
	}
	if hr < 0 {
		return Config{}, fmt.Errorf("%w: %s must not be negative", ErrBadConfig, conf.HAHMRPCConnectMaxRetries)
	}
	cfg.HealthConnectRetries = int(hr)

	bind := strings.TrimSpace(c.String(conf.Suffixed("dfs.namenode.servicerpc-bind-host", ns, nn)))
	if bind == "" {
		bind = strings.TrimSpace(c.String(conf.Suffixed("dfs.namenode.rpc-bind-host", ns, nn)))
	}
	if bind == "" {
		bind = cfg.Local.IP
	}
	if bind == "" {
		bind = cfg.Local.Host
	}
	cfg.RPCAddress = net.JoinHostPort(bind, strconv.Itoa(cfg.Local.ZKFCPort))
	cfg.Admins = ParseAccessList(c.String(conf.DFSClusterAdministrators))
	// With Kerberos the controller is its NameNode's principal, logged in
	// from the NameNode's keytab (_HOST: the local NameNode's host), as
	// Hadoop's DFSZKFailoverController: its ZKFCProtocol server accepts
	// that principal's tickets, and its calls to the NameNodes and to the
	// other controllers ask tickets for it.
	if cfg.Kerberos, err = security.RoleIdentity(c, security.NameNode, cfg.Local.HostPort(), os.Getenv); err != nil {
		return Config{}, fmt.Errorf("%w: %v", ErrBadConfig, err)
	}
	if cfg.Kerberos != nil {
		cfg.User = cfg.Kerberos.User
		cfg.HA.Kerberos = cfg.Kerberos.InitiatorFor(c.String(conf.DFSNameNodeKerberosPrincipal))
		cfg.HA.Protection = cfg.Kerberos.Acceptor.Protection
	}
	return cfg, nil
}

// parseQuorum splits a ZooKeeper connect string, "h1:2181,h2:2181/chroot".
func parseQuorum(s string) ([]string, string, error) {
	hosts, chroot := s, ""
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hosts, chroot = s[:i], s[i:]
		if chroot == "/" {
			chroot = ""
		} else if strings.HasSuffix(chroot, "/") || path.Clean(chroot) != chroot {
			return nil, "", fmt.Errorf("%w: %s: invalid chroot path %q", ErrBadConfig, conf.HAZooKeeperQuorum, chroot)
		}
	}
	var servers []string
	for _, h := range splitTrim(hosts) {
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(h, "2181")
		}
		servers = append(servers, h)
	}
	if len(servers) == 0 {
		return nil, "", fmt.Errorf("%w: %s: no server in %q", ErrBadConfig, conf.HAZooKeeperQuorum, s)
	}
	return servers, chroot, nil
}

// localNameservice is Hadoop's getNamenodeNameServiceId: dfs.nameservice.id,
// else the only nameservice, else the one with a NameNode at a local
// address.
func localNameservice(c *conf.Conf) (string, error) {
	if ns := strings.TrimSpace(c.String("dfs.nameservice.id")); ns != "" {
		return ns, nil
	}
	nss := c.Nameservices()
	if len(nss) == 1 {
		return nss[0], nil
	}
	var found []string
	for _, ns := range nss {
		if ids := c.NameNodeIDs(ns); len(ids) > 0 {
			if _, err := localNameNodeID(c, ns, ids); err == nil {
				found = append(found, ns)
			}
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	return "", fmt.Errorf("%w: HA is not enabled for this namenode.", ErrBadConfig)
}

// localNameNodeID finds the one NameNode of ns whose RPC address is on this
// host (a loopback address counts as local).
func localNameNodeID(c *conf.Conf, ns string, ids []string) (string, error) {
	found := c.LocalNameNodeIDs(ns, ids)
	if len(found) == 1 {
		return found[0], nil
	}
	msg := "Could not get the namenode ID of this node. You may run zkfc on the node other than namenode."
	if len(found) > 1 {
		msg += " (NameNodes " + strings.Join(found, ",") + " are all local: set " + conf.DFSHANameNodeID + ")"
	}
	return "", fmt.Errorf("%w: %s", ErrBadConfig, msg)
}

// LockPath and BreadcrumbPath are the election's znodes under the parent.
func (c Config) LockPath() string       { return c.ParentZNode + "/ActiveStandbyElectorLock" }
func (c Config) BreadcrumbPath() string { return c.ParentZNode + "/ActiveBreadCrumb" }

// Quorum is the servers as configured, for messages.
func (c Config) Quorum() string { return strings.Join(c.Servers, ",") + c.Chroot }
