// Package proxyuser decides whether a user may act for another (Hadoop's
// proxy users, "doAs"): a connection that authenticated as super and
// names joe as its effective user works as joe only when
// hadoop.proxyuser.super.users or .groups lets super impersonate joe and
// hadoop.proxyuser.super.hosts lets super connect from the caller's
// address, as Hadoop's DefaultImpersonationProvider decides.
//
// Each key holds a comma-separated list or "*" (anyone, anywhere; "*"
// in .users or .groups lets super impersonate every user). Hosts are
// IP addresses, CIDR ranges (10.0.0.0/8) or host names, resolved when the
// configuration is read. A super user without a .hosts key may connect
// from nowhere; without .users and .groups it may impersonate nobody.
//
// A Policy is immutable and safe for concurrent use; a refresh
// (dfsadmin -refreshSuperUserGroupsConfiguration) builds a new one.
package proxyuser

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// Policy is the proxy-user configuration of one moment.
type Policy struct {
	supers map[string]*entry // by the real user's short name
}

type entry struct {
	users, groups acl
	hosts         machines
	hostsSet      bool
}

type acl struct {
	all   bool
	names []string
}

func parseACL(v string) acl {
	var a acl
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		switch s {
		case "":
		case "*":
			a.all = true
		default:
			a.names = append(a.names, s)
		}
	}
	return a
}

func (a acl) has(name string) bool { return a.all || slices.Contains(a.names, name) }

// machines is a list of addresses and networks.
type machines struct {
	all   bool
	addrs []netip.Addr
	nets  []netip.Prefix
}

func (m machines) includes(ip netip.Addr) bool {
	if m.all {
		return true
	}
	ip = ip.Unmap()
	if slices.Contains(m.addrs, ip) {
		return true
	}
	for _, n := range m.nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// Lookup resolves a host name to its addresses.
type Lookup func(host string) ([]string, error)

// FromConf reads every hadoop.proxyuser.NAME.{hosts,groups,users} key of c.
// lookup resolves host names (nil: the system resolver). A host that does
// not resolve is an error naming the key.
func FromConf(c *conf.Conf, lookup Lookup) (*Policy, error) {
	if lookup == nil {
		lookup = net.LookupHost
	}
	p := &Policy{supers: map[string]*entry{}}
	get := func(name string) *entry {
		e := p.supers[name]
		if e == nil {
			e = &entry{}
			p.supers[name] = e
		}
		return e
	}
	keys := c.Keys()
	sort.Strings(keys)
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, conf.HadoopProxyUserPrefix)
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, '.')
		if i <= 0 {
			continue
		}
		name, what := rest[:i], rest[i+1:]
		v := c.String(k)
		switch what {
		case "users":
			get(name).users = parseACL(v)
		case "groups":
			get(name).groups = parseACL(v)
		case "hosts":
			m, err := parseMachines(v, lookup)
			if err != nil {
				return nil, fmt.Errorf("%s: %v (from %s)", k, err, c.Source(k))
			}
			e := get(name)
			e.hosts, e.hostsSet = m, true
		}
	}
	return p, nil
}

func parseMachines(v string, lookup Lookup) (machines, error) {
	var m machines
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		switch {
		case s == "":
		case s == "*":
			m.all = true
		case strings.Contains(s, "/"):
			n, err := netip.ParsePrefix(s)
			if err != nil {
				return m, fmt.Errorf("bad CIDR %q: %v", s, err)
			}
			m.nets = append(m.nets, n.Masked())
		default:
			if ip, err := netip.ParseAddr(s); err == nil {
				m.addrs = append(m.addrs, ip.Unmap())
				continue
			}
			addrs, err := lookup(s)
			if err != nil {
				return m, fmt.Errorf("host %q does not resolve: %v", s, err)
			}
			for _, a := range addrs {
				if ip, err := netip.ParseAddr(a); err == nil {
					m.addrs = append(m.addrs, ip.Unmap())
				}
			}
		}
	}
	return m, nil
}

// Request is one impersonation to decide.
type Request struct {
	// Real is the authenticated user's short name (the key's NAME) and
	// RealName how messages print it (its principal with Kerberos).
	Real, RealName string
	// User is the effective user asked for, Groups its groups.
	User   string
	Groups []string
	// Addr is the caller's IP address.
	Addr netip.Addr
}

// Error is a refused impersonation; its message is Hadoop's
// AuthorizationException text.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Authorize returns nil when r.Real may act as r.User from r.Addr, else an
// *Error with Hadoop's message.
func (p *Policy) Authorize(r Request) error {
	name := r.RealName
	if name == "" {
		name = r.Real
	}
	var e *entry
	if p != nil {
		e = p.supers[r.Real]
	}
	allowed := e != nil && (e.users.all || e.groups.all || e.users.has(r.User) || slices.ContainsFunc(r.Groups, e.groups.has))
	if !allowed {
		return &Error{fmt.Sprintf("User: %s is not allowed to impersonate %s", name, r.User)}
	}
	if !e.hostsSet || !e.hosts.includes(r.Addr) {
		return &Error{fmt.Sprintf("Unauthorized connection for super-user: %s from IP %s", name, r.Addr)}
	}
	return nil
}
