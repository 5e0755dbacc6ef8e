package haservice

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// Target is one HA service that an administrator or a failover controller
// acts on (Hadoop's HAServiceTarget): where it listens, how to fence it and
// the configuration its fencing commands see. Build NameNode targets with
// ResolveNameNode. A Target is not modified after it is built.
type Target struct {
	// Kind names the role in messages ("NameNode").
	Kind string
	// Addr is the RPC address as configured, host:port.
	Addr string
	// Host is the configured host name; for a configured IP address, the
	// name it resolves back to (Java's getHostName), else the address.
	Host string
	// IP is the address Host resolved to; "" when it did not resolve.
	IP   string
	Port int
	// literalIP: the configured host was an IP address.
	literalIP bool
	// Health is a separate address for health checks (the NameNode's
	// lifeline RPC address, printed as Java prints it), "" when none;
	// Hadoop names the target by it.
	Health string

	// Nameservice and NameNodeID identify a NameNode target.
	Nameservice, NameNodeID string
	// AutoFailover: dfs.ha.automatic-failover.enabled holds for the target;
	// a failover controller, not haadmin, manages its state.
	AutoFailover bool
	// ZKFCPort is the port of the target's failover controller
	// (dfs.ha.zkfc.port, 8019), on the target's host.
	ZKFCPort int

	// Fencing is the parsed fencing configuration, from FencingKey. It is
	// nil when the key is unset (FencingConfigured false) or unparsable
	// (FencingErr, a *FenceConfigError).
	Fencing           []FenceMethod
	FencingKey        string
	FencingConfigured bool
	FencingErr        error

	// Conf is the target's configuration: the per-nameservice and
	// per-NameNode keys copied over the generic ones, as Hadoop's
	// initializeGenericKeys does. Shell fencing commands see all of it.
	Conf *conf.Conf
}

// String is Hadoop's name for the target, e.g.
// "NameNode at nn1.example.com/10.0.0.1:8020".
func (t *Target) String() string {
	if t.Health != "" {
		return t.Kind + " at " + t.Health
	}
	return t.Kind + " at " + t.javaAddress()
}

// javaAddress prints the address as Java's InetSocketAddress does:
// "host/ip:port" when resolved ("/ip:port" for a configured IP), else
// "host:port".
func (t *Target) javaAddress() string {
	port := strconv.Itoa(t.Port)
	if t.IP == "" {
		return t.Host + ":" + port
	}
	host := t.Host
	if t.literalIP {
		host = ""
	}
	return host + "/" + t.IP + ":" + port
}

// HostPort is Host:Port, how haadmin -getAllServiceState names a target.
func (t *Target) HostPort() string { return t.Host + ":" + strconv.Itoa(t.Port) }

// DialAddress is the address to connect to: the resolved IP when there is
// one, so that every call of a command reaches the same process.
func (t *Target) DialAddress() string {
	if t.IP != "" {
		return net.JoinHostPort(t.IP, strconv.Itoa(t.Port))
	}
	return t.Addr
}

// ZKFCAddress is the address of the target's failover controller: the
// target's IP (its host when unresolved) and ZKFCPort.
func (t *Target) ZKFCAddress() string {
	host := t.IP
	if host == "" {
		host = t.Host
	}
	return net.JoinHostPort(host, strconv.Itoa(t.ZKFCPort))
}

// Matches reports whether host:port, as another process wrote it (e.g. in
// ZooKeeper), names t: host is resolved with dns and compared as
// SameAddress compares (Java's InetSocketAddress.equals).
func (t *Target) Matches(ctx context.Context, dns Resolver, host string, port int) bool {
	if dns == nil {
		dns = net.DefaultResolver
	}
	o := &Target{Addr: net.JoinHostPort(host, strconv.Itoa(port))}
	if err := o.resolve(ctx, dns, strconv.Itoa(port)); err != nil {
		return false
	}
	return t.SameAddress(o)
}

// SameAddress reports whether t and o are the same service (Java's
// InetSocketAddress.equals: the resolved address and port, or the host
// name when unresolved).
func (t *Target) SameAddress(o *Target) bool {
	if t.Port != o.Port {
		return false
	}
	if t.IP != "" || o.IP != "" {
		return t.IP == o.IP
	}
	return strings.EqualFold(t.Host, o.Host)
}

// FenceParam is one fencing parameter; a shell command sees it as
// $target_<Name>.
type FenceParam struct{ Name, Value string }

// FenceParameters are the values Hadoop hands to fencing methods: address,
// host and port, and for a NameNode nameserviceid and namenodeid.
func (t *Target) FenceParameters() []FenceParam {
	ps := []FenceParam{
		{"address", t.javaAddress()},
		{"host", t.Host},
		{"port", strconv.Itoa(t.Port)},
	}
	if t.Kind == kindNameNode {
		ps = append(ps, FenceParam{"nameserviceid", t.Nameservice}, FenceParam{"namenodeid", t.NameNodeID})
	}
	return ps
}

const kindNameNode = "NameNode"

// Resolver looks up host names; *net.Resolver is one.
type Resolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
	LookupAddr(ctx context.Context, addr string) ([]string, error)
}

// Keys Hadoop lets a nameservice or a NameNode override (NameNode's
// NAMENODE_SPECIFIC_KEYS): key.NS.NN wins over key.NS over key.
var nameNodeSpecificKeys = []string{
	conf.DFSNameNodeRPCAddress,
	"dfs.namenode.rpc-bind-host",
	conf.DFSNameNodeNameDir,
	conf.DFSNameNodeEditsDir,
	conf.DFSNameNodeSharedEditsDir,
	"dfs.namenode.checkpoint.dir",
	"dfs.namenode.checkpoint.edits.dir",
	keyLifelineRPCAddress,
	"dfs.namenode.lifeline.rpc-bind-host",
	conf.DFSNameNodeServiceRPCAddress,
	"dfs.namenode.servicerpc-bind-host",
	conf.DFSNameNodeHTTPAddress,
	"dfs.namenode.https-address",
	"dfs.namenode.http-bind-host",
	"dfs.namenode.https-bind-host",
	"dfs.namenode.keytab.file",
	"dfs.namenode.secondary.http-address",
	"dfs.namenode.secondary.https-address",
	"dfs.secondary.namenode.keytab.file",
	"dfs.namenode.backup.address",
	"dfs.namenode.backup.http-address",
	"dfs.namenode.backup.dnrpc-address",
	"dfs.namenode.kerberos.principal",
	"dfs.namenode.kerberos.internal.spnego.principal",
	conf.DFSHAFencingMethods,
	conf.DFSHAZKFCPort,
}

const (
	keyLifelineRPCAddress = "dfs.namenode.lifeline.rpc-address"
	keyNameserviceID      = "dfs.nameservice.id"
	keyNameNodeID         = "dfs.ha.namenode.id"
)

// Nameservice picks the nameservice of a command that named none, as
// Hadoop's NNHAServiceTarget does: the only one in dfs.nameservices, else
// an error with Hadoop's text.
func Nameservice(c *conf.Conf) (string, error) {
	nss := c.Nameservices()
	if len(nss) == 1 {
		return nss[0], nil
	}
	msg := "Unable to determine the name service ID."
	if len(nss) > 1 {
		msg = "Unable to determine the name service ID. This is an HA configuration with multiple name services configured. " +
			conf.DFSNameservices + " is set to [" + strings.Join(nss, ", ") + "]. Please re-run with the -ns option."
	}
	return "", fmt.Errorf("%w: %s", ErrNoTarget, msg)
}

// NameNodeIDs lists the NameNodes of nameservice ns (dfs.ha.namenodes.NS),
// as haadmin's -getAllServiceState and -transitionToActive's check of the
// others see them. With ns "" it uses dfs.nameservice.id, else the only
// nameservice; with none of these it reads dfs.ha.namenodes itself.
func NameNodeIDs(c *conf.Conf, ns string) []string {
	if ns == "" {
		ns = strings.TrimSpace(c.String(keyNameserviceID))
	}
	if ns == "" {
		if nss := c.Nameservices(); len(nss) == 1 {
			ns = nss[0]
		}
	}
	return c.Strings(conf.Suffixed(conf.DFSHANameNodes, ns))
}

// ResolveNameNode builds the target for NameNode nn of nameservice ns ("":
// the only configured one), as Hadoop's NNHAServiceTarget: the service RPC
// address (dfs.namenode.servicerpc-address) when set, else the RPC address;
// the fencing methods and automatic failover flag of that NameNode. dns
// resolves the host (nil means net.DefaultResolver). An unknown NameNode
// or an unusable address is an ErrNoTarget with Hadoop's text.
func ResolveNameNode(ctx context.Context, c *conf.Conf, ns, nn string, dns Resolver) (*Target, error) {
	if dns == nil {
		dns = net.DefaultResolver
	}
	if ns == "" {
		var err error
		if ns, err = Nameservice(c); err != nil {
			return nil, err
		}
	}
	tc := targetConf(c, ns, nn)
	addr := strings.TrimSpace(tc.String(conf.Suffixed(conf.DFSNameNodeServiceRPCAddress, ns, nn)))
	if addr == "" {
		addr = strings.TrimSpace(tc.String(conf.Suffixed(conf.DFSNameNodeRPCAddress, ns, nn)))
	}
	if addr == "" {
		return nil, fmt.Errorf("%w: Unable to determine service address for namenode '%s'", ErrNoTarget, nn)
	}
	t := &Target{Kind: kindNameNode, Addr: addr, Nameservice: ns, NameNodeID: nn, Conf: tc}
	if err := t.resolve(ctx, dns, conf.DefaultNameNodeRPCPort); err != nil {
		return nil, err
	}
	if lifeline := strings.TrimSpace(tc.String(keyLifelineRPCAddress)); lifeline != "" {
		h := &Target{Addr: lifeline}
		if err := h.resolve(ctx, dns, conf.DefaultNameNodeRPCPort); err != nil {
			return nil, err
		}
		t.Health = h.javaAddress()
	}
	auto, err := tc.Bool(conf.DFSHAAutomaticFailoverEnabled)
	if err != nil {
		return nil, err
	}
	t.AutoFailover = auto
	zkfcPort, err := tc.Int32(conf.DFSHAZKFCPort)
	if err != nil {
		return nil, err
	}
	if zkfcPort < 0 || zkfcPort > 65535 {
		return nil, fmt.Errorf("%w: %s must be a port number, got %d", ErrInvalidConfig, conf.DFSHAZKFCPort, zkfcPort)
	}
	t.ZKFCPort = int(zkfcPort)
	t.FencingKey = conf.DFSHAFencingMethods
	for _, k := range []string{conf.Suffixed(conf.DFSHAFencingMethods, ns, nn), conf.Suffixed(conf.DFSHAFencingMethods, ns)} {
		if _, ok := c.Get(k); ok {
			t.FencingKey = k
			break
		}
	}
	if spec, ok := tc.Get(conf.DFSHAFencingMethods); ok {
		t.FencingConfigured = true
		if t.Fencing, err = ParseFenceMethods(spec); err != nil {
			if fe, ok := err.(*FenceConfigError); ok {
				fe.Key = t.FencingKey
			}
			t.Fencing, t.FencingErr = nil, err
		}
	}
	return t, nil
}

// targetConf is c with the generic keys set from their nameservice and
// NameNode variants (Hadoop's NameNode.initializeGenericKeys).
func targetConf(c *conf.Conf, ns, nn string) *conf.Conf {
	kv := []conf.KeyValue{{Key: keyNameserviceID, Value: ns}, {Key: keyNameNodeID, Value: nn}}
	for _, k := range nameNodeSpecificKeys {
		for _, variant := range []string{conf.Suffixed(k, ns, nn), conf.Suffixed(k, ns)} {
			if v, ok := c.Get(variant); ok {
				kv = append(kv, conf.KeyValue{Key: k, Value: v})
				break
			}
		}
	}
	// dfs.ha.automatic-failover.enabled is per nameservice only.
	if v, ok := c.Get(conf.Suffixed(conf.DFSHAAutomaticFailoverEnabled, ns)); ok {
		kv = append(kv, conf.KeyValue{Key: conf.DFSHAAutomaticFailoverEnabled, Value: v})
	}
	tc := c.With(kv...)
	if rpc := strings.TrimSpace(tc.String(conf.DFSNameNodeRPCAddress)); rpc != "" {
		tc = tc.With(conf.KeyValue{Key: conf.FSDefaultFS, Value: "hdfs://" + rpc})
	}
	return tc
}

// resolve fills Host, IP and Port from Addr, defaultPort applying when Addr
// names none. A host that does not resolve is kept by name, as Java keeps
// an unresolved address.
func (t *Target) resolve(ctx context.Context, dns Resolver, defaultPort string) error {
	host, port, err := net.SplitHostPort(t.Addr)
	if err != nil {
		host, port = t.Addr, defaultPort
		if strings.Count(t.Addr, ":") > 0 && !strings.HasPrefix(t.Addr, "[") {
			return fmt.Errorf("%w: Does not contain a valid host:port authority: %s", ErrNoTarget, t.Addr)
		}
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || host == "" {
		return fmt.Errorf("%w: Does not contain a valid host:port authority: %s", ErrNoTarget, t.Addr)
	}
	t.Port, t.Host = int(p), host
	if ip := net.ParseIP(host); ip != nil {
		t.literalIP, t.IP = true, ip.String()
		if names, err := dns.LookupAddr(ctx, t.IP); err == nil && len(names) > 0 {
			t.Host = strings.TrimSuffix(names[0], ".")
		} else {
			t.Host = t.IP
		}
		return nil
	}
	addrs, err := dns.LookupHost(ctx, host)
	if err != nil || len(addrs) == 0 {
		return nil
	}
	t.IP = addrs[0]
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip != nil && ip.To4() != nil {
			t.IP = a
			break
		}
	}
	return nil
}
