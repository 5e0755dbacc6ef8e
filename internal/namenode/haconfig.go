package namenode

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// HAConfig is a NameNode's part of an HA nameservice, from Hadoop's keys.
type HAConfig struct {
	// Enabled: this NameNode is one of the NameNodes of a nameservice
	// (dfs.nameservices and dfs.ha.namenodes.NS name two or more).
	Enabled bool
	// Nameservice and NameNodeID name this NameNode (dfs.ha.namenode.id,
	// else the one whose dfs.namenode.rpc-address.NS.NN is a local address).
	Nameservice, NameNodeID string
	// SharedEditsDirs are dfs.namenode.shared.edits.dir: the journals every
	// NameNode of the nameservice writes when active and tails when
	// standby (file:// URIs; qjournal:// once JournalNodes exist).
	SharedEditsDirs []string
	// Peers are the other NameNodes of the nameservice.
	Peers []Peer
	// AllowStaleReads lets a standby serve reads (dfs.ha.allow.stale.reads,
	// false).
	AllowStaleReads bool
	// TailEditsPeriod is how often a standby reads new edits
	// (dfs.ha.tail-edits.period, 60 s).
	TailEditsPeriod time.Duration
	// TailEditsInProgress makes a standby read the segment being written
	// too (dfs.ha.tail-edits.in-progress, false).
	TailEditsInProgress bool
	// LogRollPeriod: a standby that saw no new edits for this long asks the
	// active to roll its segment (dfs.ha.log-roll.period, 120 s; 0 never).
	LogRollPeriod time.Duration
	// StandbyCheckpoints lets the standby take checkpoints and upload them
	// to the active (dfs.ha.standby.checkpoints, true).
	StandbyCheckpoints bool
	// AutomaticFailover is dfs.ha.automatic-failover.enabled[.NS] (false).
	AutomaticFailover bool
}

// Peer is another NameNode of the same nameservice.
type Peer struct {
	ID          string
	RPCAddress  string
	HTTPAddress string
}

// errSharedWithoutHA is Hadoop's refusal of a shared edits dir outside HA.
const errSharedWithoutHA = "Invalid configuration: a shared edits dir must not be specified if HA is not enabled."

// haConfigFrom reads the HA keys; it fills cfg.HA and, for an HA NameNode,
// its RPC and HTTP addresses (dfs.namenode.rpc-address.NS.NN,
// dfs.namenode.http-address.NS.NN).
func haConfigFrom(c *conf.Conf, cfg *Config, errs *[]error) {
	bad := func(key, format string, args ...any) {
		*errs = append(*errs, fmt.Errorf("namenode: %s: %s", key, fmt.Sprintf(format, args...)))
	}
	h := &cfg.HA
	shared := c.Strings(conf.DFSNameNodeSharedEditsDir)
	ns, ids := haNameservice(c)
	if len(ids) < 2 {
		if len(shared) > 0 {
			*errs = append(*errs, fmt.Errorf("namenode: %s", errSharedWithoutHA))
		}
		return
	}
	h.Enabled, h.Nameservice = true, ns
	h.NameNodeID = strings.TrimSpace(c.String(conf.DFSHANameNodeID))
	if h.NameNodeID == "" {
		id, err := localNameNodeID(c, ns, ids)
		if err != nil {
			bad(conf.DFSHANameNodeID, "%v", err)
			return
		}
		h.NameNodeID = id
	}
	if !slices.Contains(ids, h.NameNodeID) {
		bad(conf.DFSHANameNodeID, "%q is not one of %s.%s (%s)", h.NameNodeID, conf.DFSHANameNodes, ns, strings.Join(ids, ","))
		return
	}
	if len(shared) == 0 {
		bad(conf.DFSNameNodeSharedEditsDir, "HA nameservice %s needs shared edits", ns)
	}
	h.SharedEditsDirs = shared
	for _, id := range ids {
		rpc := strings.TrimSpace(c.String(conf.Suffixed(conf.DFSNameNodeRPCAddress, ns, id)))
		http := strings.TrimSpace(c.String(conf.Suffixed(conf.DFSNameNodeHTTPAddress, ns, id)))
		if rpc == "" {
			bad(conf.Suffixed(conf.DFSNameNodeRPCAddress, ns, id), "not set")
		}
		if http == "" {
			http = c.String(conf.DFSNameNodeHTTPAddress)
		}
		if id == h.NameNodeID {
			cfg.RPCAddress, cfg.HTTPAddress = rpc, http
			continue
		}
		h.Peers = append(h.Peers, Peer{ID: id, RPCAddress: rpc, HTTPAddress: http})
	}
	var err error
	if h.AllowStaleReads, err = c.Bool(conf.DFSHAAllowStaleReads); err != nil {
		*errs = append(*errs, err)
	}
	if h.TailEditsInProgress, err = c.Bool(conf.DFSHATailEditsInProgress); err != nil {
		*errs = append(*errs, err)
	}
	if h.StandbyCheckpoints, err = c.Bool(conf.DFSHAStandbyCheckpoints); err != nil {
		*errs = append(*errs, err)
	}
	if h.TailEditsPeriod, err = c.Duration(conf.DFSHATailEditsPeriod); err != nil {
		*errs = append(*errs, err)
	}
	if h.LogRollPeriod, err = c.Duration(conf.DFSHALogRollPeriod); err != nil {
		*errs = append(*errs, err)
	}
	auto := conf.DFSHAAutomaticFailoverEnabled
	if c.Source(conf.Suffixed(auto, ns)) != "" && c.String(conf.Suffixed(auto, ns)) != "" {
		auto = conf.Suffixed(auto, ns)
	}
	if h.AutomaticFailover, err = c.Bool(auto); err != nil {
		*errs = append(*errs, err)
	}
	if h.TailEditsPeriod <= 0 {
		bad(conf.DFSHATailEditsPeriod, "%v must be positive", h.TailEditsPeriod)
	}
}

// haNameservice is the nameservice this NameNode serves and its NameNode
// ids: the only one of dfs.nameservices with dfs.ha.namenodes set, or the
// one fs.defaultFS names.
func haNameservice(c *conf.Conf) (string, []string) {
	var cands []string
	for _, ns := range c.Nameservices() {
		if len(c.NameNodeIDs(ns)) > 0 {
			cands = append(cands, ns)
		}
	}
	if len(cands) == 1 {
		return cands[0], c.NameNodeIDs(cands[0])
	}
	if a, ok := strings.CutPrefix(strings.TrimSpace(c.String(conf.FSDefaultFS)), "hdfs://"); ok {
		a = strings.TrimSuffix(a, "/")
		if slices.Contains(cands, a) {
			return a, c.NameNodeIDs(a)
		}
	}
	return "", nil
}

// localNameNodeID finds the NameNode id whose RPC address is bound to this
// host, as Hadoop does when dfs.ha.namenode.id is unset; several matches
// (all NameNodes on one host) are an error asking for the key.
func localNameNodeID(c *conf.Conf, ns string, ids []string) (string, error) {
	found := c.LocalNameNodeIDs(ns, ids)
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("none of the NameNodes of %s (%s) has a local RPC address: set it", ns, strings.Join(ids, ","))
	}
	return "", fmt.Errorf("the NameNodes %s of %s all have local RPC addresses: set it to the one this NameNode is", strings.Join(found, ","), ns)
}
