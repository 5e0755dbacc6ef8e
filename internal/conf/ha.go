package conf

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// NameNodeAddress is one NameNode RPC endpoint found in the configuration.
// Nameservice and NameNodeID are empty when the configuration does not
// name them.
type NameNodeAddress struct {
	Nameservice string
	NameNodeID  string
	Address     string // host:port
}

// Suffixed builds a per-nameservice / per-NameNode key: key.NS.NN. Empty
// parts are skipped, so Suffixed(k) == k.
func Suffixed(key string, parts ...string) string {
	var b strings.Builder
	b.WriteString(key)
	for _, p := range parts {
		if p != "" {
			b.WriteByte('.')
			b.WriteString(p)
		}
	}
	return b.String()
}

// Nameservices returns dfs.nameservices as a list.
func (c *Conf) Nameservices() []string {
	return c.Strings(DFSNameservices)
}

// NameNodeIDs returns the NameNode IDs of nameservice ns
// (dfs.ha.namenodes.NS).
func (c *Conf) NameNodeIDs(ns string) []string {
	return c.Strings(Suffixed(DFSHANameNodes, ns))
}

// NameNodeRPCAddresses returns every configured NameNode RPC address, in
// configuration order, as `hdfs getconf -nnRpcAddresses` finds them:
//
//   - with dfs.nameservices set: for each nameservice NS and each of its
//     NameNode IDs NN, dfs.namenode.rpc-address.NS.NN; a nameservice without
//     IDs uses dfs.namenode.rpc-address.NS; unset addresses are skipped;
//   - otherwise dfs.namenode.rpc-address;
//   - otherwise the authority of fs.defaultFS when it is an hdfs:// URI,
//     with port 8020 when it names none.
//
// It returns ErrNoNameNode when nothing is found.
func (c *Conf) NameNodeRPCAddresses() ([]NameNodeAddress, error) {
	var out []NameNodeAddress
	if nss := c.Nameservices(); len(nss) > 0 {
		for _, ns := range nss {
			ids := c.NameNodeIDs(ns)
			if len(ids) == 0 {
				if a := strings.TrimSpace(c.String(Suffixed(DFSNameNodeRPCAddress, ns))); a != "" {
					out = append(out, NameNodeAddress{Nameservice: ns, Address: a})
				}
				continue
			}
			for _, nn := range ids {
				if a := strings.TrimSpace(c.String(Suffixed(DFSNameNodeRPCAddress, ns, nn))); a != "" {
					out = append(out, NameNodeAddress{Nameservice: ns, NameNodeID: nn, Address: a})
				}
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%w (nameservices %v have no %s.* addresses)",
				ErrNoNameNode, c.Nameservices(), DFSNameNodeRPCAddress)
		}
		return out, nil
	}
	if a := strings.TrimSpace(c.String(DFSNameNodeRPCAddress)); a != "" {
		return []NameNodeAddress{{Address: a}}, nil
	}
	if a, ok := hdfsAuthority(c.String(FSDefaultFS)); ok {
		return []NameNodeAddress{{Address: a}}, nil
	}
	return nil, ErrNoNameNode
}

// hdfsAuthority returns host:port of an hdfs:// URI, adding port 8020 when
// the URI has none.
func hdfsAuthority(fsURI string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(fsURI))
	if err != nil || !strings.EqualFold(u.Scheme, "hdfs") || u.Hostname() == "" {
		return "", false
	}
	port := u.Port()
	if port == "" {
		port = DefaultNameNodeRPCPort
	}
	return net.JoinHostPort(u.Hostname(), port), true
}

// LocalNameNodeIDs returns the NameNode ids of ns (of ids) whose RPC
// address resolves to an address of this host; a loopback address counts
// as local. Hadoop picks a daemon's own NameNode id this way when
// dfs.ha.namenode.id is unset.
func (c *Conf) LocalNameNodeIDs(ns string, ids []string) []string {
	local := map[string]bool{}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				local[ipn.IP.String()] = true
			}
		}
	}
	var found []string
	for _, id := range ids {
		host, _, err := net.SplitHostPort(strings.TrimSpace(c.String(Suffixed(DFSNameNodeRPCAddress, ns, id))))
		if err != nil {
			continue
		}
		ips, err := net.LookupIP(host)
		if err != nil {
			continue
		}
		for _, ip := range ips {
			if local[ip.String()] || ip.IsLoopback() {
				found = append(found, id)
				break
			}
		}
	}
	return found
}
