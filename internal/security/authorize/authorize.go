// Package authorize is Hadoop's service-level authorization: with
// hadoop.security.authorization=true every RPC connection is checked, when
// its connection context arrives, against the access control list of the
// protocol it names, read from hadoop-policy.xml in the configuration
// directory (security.client.protocol.acl for ClientProtocol, …). A user
// outside the list is refused with Hadoop's AuthorizationException text
// and the connection closed.
//
// An ACL is "users groups": a comma-separated list of user names, a space,
// a comma-separated list of groups; "*" lets everyone in; " " (or an empty
// value) lets nobody in. KEY.blocked is a list of who is refused even when
// KEY lets them in, and the protocol's .hosts and .hosts.blocked keys
// (security.client.protocol.hosts) limit the addresses allowed, as in
// Hadoop. A protocol whose key is not set takes
// security.service.authorization.default.acl (default "*") and
// security.service.authorization.default.acl.blocked.
//
// Also here: ACL, the same list syntax for dfs.cluster.administrators.
//
// A Policy is immutable and safe for concurrent use; dfsadmin
// -refreshServiceAcl builds a new one from the files.
package authorize

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// Protocols maps each Java protocol name to its hadoop-policy.xml key, as
// Hadoop's HDFSPolicyProvider does. JournalProtocol (the active's stream
// to a Backup Node) has no key in Hadoop; it takes the NameNode protocol's.
var Protocols = map[string]string{
	"org.apache.hadoop.hdfs.protocol.ClientProtocol":                          "security.client.protocol.acl",
	"org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol":                  "security.client.datanode.protocol.acl",
	"org.apache.hadoop.hdfs.server.protocol.DatanodeProtocol":                 "security.datanode.protocol.acl",
	"org.apache.hadoop.hdfs.server.protocol.InterDatanodeProtocol":            "security.inter.datanode.protocol.acl",
	"org.apache.hadoop.hdfs.server.protocol.NamenodeProtocol":                 "security.namenode.protocol.acl",
	"org.apache.hadoop.hdfs.server.protocol.JournalProtocol":                  "security.namenode.protocol.acl",
	"org.apache.hadoop.hdfs.qjournal.protocol.QJournalProtocol":               "security.qjournal.service.protocol.acl",
	"org.apache.hadoop.hdfs.qjournal.protocol.InterQJournalProtocol":          "security.interqjournal.service.protocol.acl",
	"org.apache.hadoop.ha.HAServiceProtocol":                                  "security.ha.service.protocol.acl",
	"org.apache.hadoop.ha.ZKFCProtocol":                                       "security.zkfc.protocol.acl",
	"org.apache.hadoop.security.authorize.RefreshAuthorizationPolicyProtocol": "security.refresh.policy.protocol.acl",
	"org.apache.hadoop.security.RefreshUserMappingsProtocol":                  "security.refresh.user.mappings.protocol.acl",
	"org.apache.hadoop.tools.GetUserMappingsProtocol":                         "security.get.user.mappings.protocol.acl",
	"org.apache.hadoop.ipc.RefreshCallQueueProtocol":                          "security.refresh.callqueue.protocol.acl",
	"org.apache.hadoop.ipc.GenericRefreshProtocol":                            "security.generic.refresh.protocol.acl",
	"org.apache.hadoop.hdfs.protocol.ReconfigurationProtocol":                 "security.reconfiguration.protocol.acl",
	"org.apache.hadoop.hdfs.server.protocol.DatanodeLifelineProtocol":         "security.datanode.lifeline.protocol.acl",
}

// ACL is an access control list: users and groups, or everyone.
type ACL struct {
	All    bool
	Users  []string
	Groups []string
}

// ParseACL reads "user1,user2 group1,group2" (or "*").
func ParseACL(s string) ACL {
	parts := strings.SplitN(s, " ", 2)
	for _, part := range parts {
		// Either part being the wildcard lets everyone in, as in Hadoop.
		if strings.TrimSpace(part) == "*" {
			return ACL{All: true}
		}
	}
	a := ACL{Users: splitList(parts[0])}
	if len(parts) == 2 {
		a.Groups = splitList(parts[1])
	}
	return a
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Allows reports whether user, a member of groups, is on the list.
func (a ACL) Allows(user string, groups []string) bool {
	if a.All || slices.Contains(a.Users, user) {
		return true
	}
	for _, g := range groups {
		if slices.Contains(a.Groups, g) {
			return true
		}
	}
	return false
}

// String prints the list as Hadoop does in messages: "*", or the users
// and groups.
func (a ACL) String() string {
	if a.All {
		return "*"
	}
	return strings.Join(a.Users, ",") + " " + strings.Join(a.Groups, ",")
}

// hosts is a list of addresses and networks ("*": all).
type hosts struct {
	all   bool
	addrs []netip.Addr
	nets  []netip.Prefix
}

func parseHosts(key, v string) (hosts, error) {
	var h hosts
	for _, s := range splitList(v) {
		switch {
		case s == "*":
			h.all = true
		case strings.Contains(s, "/"):
			n, err := netip.ParsePrefix(s)
			if err != nil {
				return h, fmt.Errorf("%s: bad CIDR %q: %v", key, s, err)
			}
			h.nets = append(h.nets, n.Masked())
		default:
			ip, err := netip.ParseAddr(s)
			if err != nil {
				return h, fmt.Errorf("%s: %q is not an IP address or CIDR (host names are not supported here)", key, s)
			}
			h.addrs = append(h.addrs, ip.Unmap())
		}
	}
	return h, nil
}

func (h hosts) includes(ip netip.Addr) bool {
	if h.all {
		return true
	}
	ip = ip.Unmap()
	if slices.Contains(h.addrs, ip) {
		return true
	}
	for _, n := range h.nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

type rule struct {
	key                 string
	acl, blocked        ACL
	hosts, blockedHosts hosts
}

// Policy is the authorization policy of one moment.
type Policy struct {
	rules map[string]*rule // by protocol name
	file  string           // where it came from, for messages
}

// Load reads the policy: the keys of c (core-site.xml, hdfs-site.xml, -D),
// then the policy file (hadoop.policy.file, default hadoop-policy.xml) in
// confDir, whose keys win. A missing policy file leaves every protocol at
// its default ACL.
func Load(c *conf.Conf, confDir string) (*Policy, error) {
	vals := map[string]string{}
	for _, k := range c.Keys() {
		if strings.HasPrefix(k, "security.") {
			vals[k] = c.String(k)
		}
	}
	file := ""
	if confDir != "" {
		name := c.String(conf.HadoopPolicyFile)
		if name == "" {
			name = "hadoop-policy.xml"
		}
		file = filepath.Join(confDir, name)
		kvs, err := conf.ReadFile(file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			file = ""
		case err != nil:
			return nil, err
		default:
			for _, kv := range kvs {
				vals[kv.Key] = kv.Value
			}
		}
	}
	p := &Policy{rules: map[string]*rule{}, file: file}
	def, ok := vals[conf.SecurityServiceAuthorizationDefaultACL]
	if !ok {
		def = "*"
	}
	defBlocked := vals[conf.SecurityServiceAuthorizationDefaultBlockedACL]
	for proto, key := range Protocols {
		r := &rule{key: key}
		v, ok := vals[key]
		if !ok {
			v = def
		}
		r.acl = ParseACL(v)
		b, ok := vals[key+".blocked"]
		if !ok {
			b = defBlocked
		}
		r.blocked = ParseACL(b)
		hk := strings.TrimSuffix(key, ".acl") + ".hosts"
		hv, ok := vals[hk]
		if !ok {
			hv = "*"
		}
		var err error
		if r.hosts, err = parseHosts(hk, hv); err != nil {
			return nil, err
		}
		if r.blockedHosts, err = parseHosts(hk+".blocked", vals[hk+".blocked"]); err != nil {
			return nil, err
		}
		p.rules[proto] = r
	}
	return p, nil
}

// File is the policy file the policy was read from ("" when there was
// none).
func (p *Policy) File() string { return p.file }

// Subject is who asks for a connection.
type Subject struct {
	User   string   // the effective user's short name
	Groups []string // its groups
	UGI    string   // how messages print it: "joe (auth:SIMPLE)"
	Addr   netip.Addr
}

// Error is a refused connection; its message is Hadoop's
// AuthorizationException text.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Authorize returns nil when s may use protocol, else an *Error.
func (p *Policy) Authorize(protocol string, s Subject) error {
	r := p.rules[protocol]
	if r == nil {
		return &Error{fmt.Sprintf("Protocol %s is not known.", protocol)}
	}
	if !r.acl.Allows(s.User, s.Groups) || (len(r.blocked.Users)+len(r.blocked.Groups) > 0 || r.blocked.All) && r.blocked.Allows(s.User, s.Groups) {
		return &Error{fmt.Sprintf("User %s is not authorized for protocol interface %s: denied by configured ACL", s.UGI, protocol)}
	}
	if s.Addr.IsValid() && (!r.hosts.includes(s.Addr) || r.blockedHosts.includes(s.Addr)) {
		return &Error{fmt.Sprintf("Host %s is not authorized for protocol interface %s", s.Addr.Unmap(), protocol)}
	}
	return nil
}

// Key is the policy key of protocol ("" when it has none).
func Key(protocol string) string { return Protocols[protocol] }
