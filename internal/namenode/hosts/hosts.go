// Package hosts is the NameNode's reading of its host files: which DataNodes
// may register, which are to be decommissioned, which are in maintenance and
// until when. It is a pure core: the caller reads the files and resolves
// host names; this package parses the bytes and answers per DataNode.
//
// # The two formats (dfs.namenode.hosts.provider.classname)
//
// HostFileManager (the default) reads two plain files, dfs.hosts (the
// include list: empty or unset lets every node in) and dfs.hosts.exclude
// (nodes to decommission). Entries are separated by white space; a token
// starting with '#' comments out the rest of its line:
//
//	# rack 1
//	dn1.example.com  dn2.example.com:9866
//	10.0.0.7         [2001:db8::7]:9866     # an IPv6 node
//
// CombinedHostFileManager reads one JSON file, dfs.hosts, and no exclude
// file: an array of objects (or, in the legacy form, the objects one after
// another without the array):
//
//	[
//	  {"hostName": "dn1.example.com"},
//	  {"hostName": "dn2.example.com", "port": 9866, "upgradeDomain": "ud1"},
//	  {"hostName": "dn3.example.com", "adminState": "DECOMMISSIONED"},
//	  {"hostName": "dn4.example.com", "adminState": "IN_MAINTENANCE",
//	   "maintenanceExpireTimeInMS": 1767225600000}
//	]
//
// Every entry lets its node in, unless no entry is NORMAL (then every node
// may register, as with an empty include list); DECOMMISSIONED decommissions
// it; IN_MAINTENANCE puts it in maintenance until the expiry (epoch
// milliseconds; none given means no expiry). Unknown fields are an error.
//
// # Matching
//
// A port of 0 (or none) matches every DataNode on the host; otherwise only
// the one with that transfer port. Hosts match by IP address: a name is
// resolved once, when the files are loaded (Resolve), and an entry that
// does not resolve is left out with a warning, as Hadoop does (a DataNode
// whose name does not resolve could not have registered anyway). Entries
// are never matched by the host name a DataNode claims for itself.
package hosts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
)

// Provider class names (dfs.namenode.hosts.provider.classname).
const (
	HostFileManager         = "org.apache.hadoop.hdfs.server.blockmanagement.HostFileManager"
	CombinedHostFileManager = "org.apache.hadoop.hdfs.server.blockmanagement.CombinedHostFileManager"
)

// Errors.
var (
	// ErrSyntax: a JSON hosts file that is not one.
	ErrSyntax = errors.New("hosts: malformed hosts file")
	// ErrProvider: an unknown dfs.namenode.hosts.provider.classname.
	ErrProvider = errors.New("hosts: unknown hosts provider")
)

// Admin states a JSON entry may carry (DatanodeInfo.AdminStates names).
const (
	StateNormal         = "NORMAL"
	StateDecommissioned = "DECOMMISSIONED"
	StateInMaintenance  = "IN_MAINTENANCE"
)

// Entry is one host of a hosts file.
type Entry struct {
	Host string // a name or an IP address, as written
	Port int    // 0: every DataNode on the host
	// AdminState, MaintenanceExpire and UpgradeDomain come from the JSON
	// format only. MaintenanceExpire is epoch milliseconds; math.MaxInt64
	// when none is given.
	AdminState        string
	MaintenanceExpire int64
	UpgradeDomain     string
}

func (e Entry) String() string {
	if e.Port == 0 {
		return e.Host
	}
	if strings.Contains(e.Host, ":") {
		return "[" + e.Host + "]:" + strconv.Itoa(e.Port)
	}
	return e.Host + ":" + strconv.Itoa(e.Port)
}

// ParsePlain reads a plain hosts file (dfs.hosts or dfs.hosts.exclude in
// HostFileManager's format). An entry that is not host or host:port is
// left out and named in the warnings.
func ParsePlain(data []byte) (entries []Entry, warnings []string) {
	for _, line := range bytes.Split(data, []byte("\n")) {
		for _, tok := range strings.Fields(string(line)) {
			if strings.HasPrefix(tok, "#") {
				break
			}
			e, err := parseHostPort(tok)
			if err != nil {
				warnings = append(warnings, err.Error())
				continue
			}
			entries = append(entries, e)
		}
	}
	return entries, warnings
}

// parseHostPort reads host, host:port, an IPv6 address or [v6]:port.
func parseHostPort(s string) (Entry, error) {
	bad := func(why string) (Entry, error) {
		return Entry{}, fmt.Errorf("hosts: ignoring %q: %s", s, why)
	}
	if a, err := netip.ParseAddr(s); err == nil {
		if a.Zone() != "" {
			return bad("an IPv6 zone never matches a DataNode's address")
		}
		return Entry{Host: a.String()}, nil
	}
	host, port := s, 0
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host = s[:i]
		p, err := strconv.Atoi(s[i+1:])
		if err != nil || p < 0 || p > 65535 {
			return bad("bad port")
		}
		port = p
		if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
			host = host[1 : len(host)-1]
			if !isIP(host) {
				return bad("bad IPv6 address")
			}
		}
	}
	if host == "" || strings.ContainsAny(host, "[]/@?#:") && !isIP(host) {
		return bad("not a host name or address")
	}
	return Entry{Host: host, Port: port}, nil
}

// isIP reports whether s is an IP address without a zone: DataNodes
// register addresses without one, so a zoned entry could never match.
func isIP(s string) bool { a, err := netip.ParseAddr(s); return err == nil && a.Zone() == "" }

// jsonEntry is DatanodeAdminProperties as the JSON file spells it.
type jsonEntry struct {
	HostName                  *string `json:"hostName"`
	Port                      int     `json:"port"`
	UpgradeDomain             string  `json:"upgradeDomain"`
	AdminState                string  `json:"adminState"`
	MaintenanceExpireTimeInMS *int64  `json:"maintenanceExpireTimeInMS"`
}

// ParseJSON reads CombinedHostFileManager's JSON hosts file, in the array
// form or the legacy one (objects one after another). Syntax errors,
// unknown fields, entries without hostName, bad ports and admin states
// other than NORMAL, DECOMMISSIONED and IN_MAINTENANCE are errors naming
// the entry; an empty file holds no entries.
func ParseJSON(data []byte) ([]Entry, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, nil
	}
	var raw []jsonEntry
	if trimmed[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%w: data after the array", ErrSyntax)
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, fmt.Errorf("%w: data after the array", ErrSyntax)
		}
	} else {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		for {
			var e jsonEntry
			err := dec.Decode(&e)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%w: entry %d: %v", ErrSyntax, len(raw)+1, err)
			}
			raw = append(raw, e)
		}
	}
	out := make([]Entry, 0, len(raw))
	for i, r := range raw {
		if r.HostName == nil || *r.HostName == "" {
			return nil, fmt.Errorf("%w: entry %d has no hostName", ErrSyntax, i+1)
		}
		if r.Port < 0 || r.Port > 65535 {
			return nil, fmt.Errorf("%w: entry %d (%s): port %d", ErrSyntax, i+1, *r.HostName, r.Port)
		}
		e := Entry{Host: *r.HostName, Port: r.Port, UpgradeDomain: r.UpgradeDomain, AdminState: StateNormal, MaintenanceExpire: math.MaxInt64}
		switch r.AdminState {
		case "", StateNormal:
		case StateDecommissioned, StateInMaintenance:
			e.AdminState = r.AdminState
		default:
			return nil, fmt.Errorf("%w: entry %d (%s): adminState %q (want NORMAL, DECOMMISSIONED or IN_MAINTENANCE)",
				ErrSyntax, i+1, *r.HostName, r.AdminState)
		}
		if r.MaintenanceExpireTimeInMS != nil {
			e.MaintenanceExpire = *r.MaintenanceExpireTimeInMS
		}
		if a, err := netip.ParseAddr(e.Host); err == nil {
			e.Host = a.String()
		}
		out = append(out, e)
	}
	return out, nil
}

// Files is the content of the host files, parsed.
type Files struct {
	// Combined: the JSON format (CombinedHostFileManager); Nodes holds its
	// entries. Otherwise Include (dfs.hosts) and Exclude
	// (dfs.hosts.exclude) hold the plain files'.
	Combined         bool
	Include, Exclude []Entry
	Nodes            []Entry
}

// Resolver turns a host name into its IP addresses (the caller's DNS).
type Resolver func(host string) ([]string, error)

// Policy answers for DataNodes from resolved host files.
type Policy struct {
	combined bool
	include  []resolved
	exclude  []resolved
	nodes    []resolved
	// anyIn: every node may register (an empty include list, or no NORMAL
	// entry in the JSON file).
	anyIn bool
}

type resolved struct {
	Entry
	ips []netip.Addr
}

// Resolve resolves the files' host names into a Policy. Entries that do not
// resolve are left out and named in the warnings.
func Resolve(f Files, lookup Resolver) (*Policy, []string) {
	var warnings []string
	res := func(list []Entry, what string) []resolved {
		var out []resolved
		for _, e := range list {
			var ips []netip.Addr
			if a, err := netip.ParseAddr(e.Host); err == nil {
				ips = []netip.Addr{a.Unmap()}
			} else if lookup != nil {
				names, err := lookup(e.Host)
				for _, n := range names {
					if a, err := netip.ParseAddr(n); err == nil {
						ips = append(ips, a.Unmap())
					}
				}
				if len(ips) == 0 {
					why := "no address"
					if err != nil {
						why = err.Error()
					}
					warnings = append(warnings, fmt.Sprintf("hosts: failed to resolve %s (%s); ignoring it in the %s list", e, why, what))
					continue
				}
			} else {
				warnings = append(warnings, fmt.Sprintf("hosts: cannot resolve %s; ignoring it in the %s list", e, what))
				continue
			}
			out = append(out, resolved{Entry: e, ips: ips})
		}
		return out
	}
	p := &Policy{combined: f.Combined}
	if f.Combined {
		p.nodes = res(f.Nodes, "hosts")
		p.anyIn = true
		for _, n := range p.nodes {
			if n.AdminState == StateNormal {
				p.anyIn = false
			}
		}
	} else {
		p.include = res(f.Include, "include")
		p.exclude = res(f.Exclude, "exclude")
		p.anyIn = len(p.include) == 0
	}
	return p, warnings
}

func (r resolved) matches(ip netip.Addr, port int) bool {
	if r.Port != 0 && r.Port != port {
		return false
	}
	for _, a := range r.ips {
		if a == ip {
			return true
		}
	}
	return false
}

// Verdict answers for one DataNode, known by its IP address and transfer
// port (a blockmgmt.HostPolicy).
func (p *Policy) Verdict(id blockmgmt.DatanodeID) blockmgmt.HostVerdict {
	ip, err := netip.ParseAddr(id.IPAddr)
	if err != nil {
		return blockmgmt.HostVerdict{Disallowed: !p.anyIn}
	}
	ip = ip.Unmap()
	var v blockmgmt.HostVerdict
	if !p.combined {
		v.Disallowed = !p.anyIn && !anyMatch(p.include, ip, id.XferPort)
		v.Decommission = anyMatch(p.exclude, ip, id.XferPort)
		return v
	}
	included := p.anyIn
	for _, n := range p.nodes {
		if !n.matches(ip, id.XferPort) {
			continue
		}
		included = true
		switch n.AdminState {
		case StateDecommissioned:
			v.Decommission = true
		case StateInMaintenance:
			if v.MaintenanceUntil.IsZero() {
				v.MaintenanceUntil = expiry(n.MaintenanceExpire)
			}
		}
	}
	v.Disallowed = !included
	return v
}

func anyMatch(list []resolved, ip netip.Addr, port int) bool {
	for _, r := range list {
		if r.matches(ip, port) {
			return true
		}
	}
	return false
}

// expiry turns epoch milliseconds into a time; no expiry (MaxInt64) is a
// time far in the future. A time at or before the epoch has expired.
func expiry(ms int64) time.Time {
	if ms <= 0 {
		return time.Unix(0, 0).Add(-time.Millisecond) // long past: not in maintenance
	}
	if ms >= math.MaxInt64/2 {
		return time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	}
	return time.UnixMilli(ms)
}

// Listed are the hosts of the include list (every JSON entry), each with
// its port (0: unknown) and, when it resolved, its first address: the
// DataNodes the administrator expects, which a report shows as dead until
// they register.
func (p *Policy) Listed() []Entry {
	var src []resolved
	if p.combined {
		src = p.nodes
	} else {
		src = p.include
	}
	out := make([]Entry, 0, len(src))
	for _, r := range src {
		e := r.Entry
		if len(r.ips) > 0 {
			e.Host = r.ips[0].String()
		}
		out = append(out, e)
	}
	return out
}

// Excluded reports whether the exclude list names the address (an
// expected node that never registered is shown decommissioned when it is).
func (p *Policy) Excluded(ip string, port int) bool {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	a = a.Unmap()
	if p.combined {
		for _, n := range p.nodes {
			if n.AdminState == StateDecommissioned && n.matches(a, port) {
				return true
			}
		}
		return false
	}
	return anyMatch(p.exclude, a, port)
}
