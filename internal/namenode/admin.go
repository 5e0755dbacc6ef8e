package namenode

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/hosts"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// Decommissioning and maintenance: the host files (dfs.hosts,
// dfs.hosts.exclude, or the JSON file of CombinedHostFileManager) are read
// at start-up and by refreshNodes into a hosts.Policy, which the block
// manager asks about every DataNode; the liveness monitor runs the admin
// monitor (blockmgmt.CheckAdmin) every dfs.namenode.decommission.interval.
// Host files are configuration, not namespace: nothing here is logged, and
// each NameNode of an HA pair reads its own (dfsadmin -refreshNodes asks
// every NameNode).

// classDisallowedDatanode is what Hadoop answers a DataNode the host files
// keep out.
const classDisallowedDatanode = "org.apache.hadoop.hdfs.server.protocol.DisallowedDatanodeException"

// maxHostsFile bounds a host file: a million entries are far less.
const maxHostsFile = 64 << 20

// disallowed is Hadoop's DisallowedDatanodeException for a node.
func disallowed(e *blockmgmt.DisallowedError) error {
	return remoteerr.New(classDisallowedDatanode,
		"Datanode denied communication with namenode because the host is not in the include-list: %s", e.Addr)
}

// readHostFiles reads and resolves the configured host files. Entries that
// are not host[:port], or whose names do not resolve, are left out and
// logged, as Hadoop does; a file that cannot be read, or a JSON file that is
// not one, is an error naming the key and the file.
func (nn *NameNode) readHostFiles() (*hosts.Policy, error) {
	return readHostFiles(&nn.cfg, nn.deps)
}

func readHostFiles(cfg *Config, deps Deps) (*hosts.Policy, error) {
	read := func(key, path string) ([]byte, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("namenode: %s: %w", key, err)
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxHostsFile+1))
		if err != nil {
			return nil, fmt.Errorf("namenode: %s: %w", key, err)
		}
		if len(data) > maxHostsFile {
			return nil, fmt.Errorf("namenode: %s: %s is over %d bytes", key, path, maxHostsFile)
		}
		return data, nil
	}
	var f hosts.Files
	var warnings []string
	if cfg.HostsProvider == hosts.CombinedHostFileManager {
		f.Combined = true
		if cfg.HostsFile != "" {
			data, err := read(conf.DFSHosts, cfg.HostsFile)
			if err != nil {
				return nil, err
			}
			if f.Nodes, err = hosts.ParseJSON(data); err != nil {
				return nil, fmt.Errorf("namenode: %s: %s: %w", conf.DFSHosts, cfg.HostsFile, err)
			}
		}
	} else {
		for _, h := range []struct {
			key, path string
			into      *[]hosts.Entry
		}{{conf.DFSHosts, cfg.HostsFile, &f.Include}, {conf.DFSHostsExclude, cfg.HostsExcludeFile, &f.Exclude}} {
			if h.path == "" {
				continue
			}
			data, err := read(h.key, h.path)
			if err != nil {
				return nil, err
			}
			var w []string
			*h.into, w = hosts.ParsePlain(data)
			for _, s := range w {
				warnings = append(warnings, h.path+": "+s)
			}
		}
	}
	lookup := deps.LookupHost
	if lookup == nil {
		lookup = lookupHost
	}
	p, w := hosts.Resolve(f, lookup)
	for _, s := range append(warnings, w...) {
		deps.Logger.Warn(s)
	}
	return p, nil
}

// lookupHost resolves a name with the system resolver, in bounded time.
func lookupHost(host string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return net.DefaultResolver.LookupHost(ctx, host)
}

// applyHostPolicy installs a policy in the block manager and logs what
// changed.
func (nn *NameNode) applyHostPolicy(p *hosts.Policy) {
	ns := nn.ns
	var ch []blockmgmt.AdminChange
	ns.writeLocked(func() {
		ns.mu.hosts = p
		ch = ns.mu.bm.SetHostPolicy(p.Verdict, ns.clock.Now())
	})
	nn.logAdminChanges(ch)
}

func (nn *NameNode) logAdminChanges(ch []blockmgmt.AdminChange) {
	for _, c := range ch {
		nn.deps.Logger.Info("DataNode admin state changed", "addr", c.ID.XferAddr(), "uuid", c.ID.UUID,
			"from", c.From.String(), "to", c.To.String())
	}
}

// adminMonitorPass is one pass of the admin monitor.
func (nn *NameNode) adminMonitorPass(now time.Time) {
	var ch []blockmgmt.AdminChange
	nn.ns.writeLocked(func() { ch = nn.ns.mu.bm.CheckAdmin(now) })
	nn.logAdminChanges(ch)
}

// refreshNodes serves ClientProtocol refreshNodes (dfsadmin -refreshNodes):
// superusers only; the host files are read again and applied. A file that
// cannot be read leaves the previous answers in force.
func (c *clientRPC) refreshNodes(ctx context.Context, _ *hdfs.RefreshNodesRequestProto) (*hdfs.RefreshNodesResponseProto, error) {
	if err := c.checkSuper(ctx); err != nil {
		return nil, err
	}
	p, err := c.nn.readHostFiles()
	if err != nil {
		return nil, remoteerr.New(remoteerr.ClassIOException, "%v", err)
	}
	c.nn.applyHostPolicy(p)
	c.nn.deps.Logger.Info("refreshNodes: host files read again", "include", c.nn.cfg.HostsFile, "exclude", c.nn.cfg.HostsExcludeFile)
	return &hdfs.RefreshNodesResponseProto{}, nil
}

// reportKind maps a DatanodeReportTypeProto.
func reportKind(t hdfs.DatanodeReportTypeProto) (blockmgmt.ReportKind, bool) {
	switch t {
	case hdfs.DatanodeReportTypeProto_ALL:
		return blockmgmt.ReportAll, true
	case hdfs.DatanodeReportTypeProto_LIVE:
		return blockmgmt.ReportLive, true
	case hdfs.DatanodeReportTypeProto_DEAD:
		return blockmgmt.ReportDead, true
	case hdfs.DatanodeReportTypeProto_DECOMMISSIONING:
		return blockmgmt.ReportDecommissioning, true
	case hdfs.DatanodeReportTypeProto_ENTERING_MAINTENANCE:
		return blockmgmt.ReportEnteringMaintenance, true
	case hdfs.DatanodeReportTypeProto_IN_MAINTENANCE:
		return blockmgmt.ReportInMaintenance, true
	}
	return 0, false
}

// datanodeReport lists the nodes of a kind, under the read lock. For ALL
// and DEAD it adds the nodes of the include list that never registered,
// as dead (decommissioned when the exclude list names them too), as
// Hadoop's report does.
func (ns *namesystem) datanodeReportLocked(kind blockmgmt.ReportKind, now time.Time) []blockmgmt.DatanodeInfo {
	infos := ns.mu.bm.DatanodeReport(kind, now)
	if (kind != blockmgmt.ReportAll && kind != blockmgmt.ReportDead) || ns.mu.hosts == nil {
		return infos
	}
	all := ns.mu.bm.DatanodeReport(blockmgmt.ReportAll, now)
	for _, e := range ns.mu.hosts.Listed() {
		seen := false
		for _, d := range all {
			if d.ID.IPAddr == e.Host && (e.Port == 0 || e.Port == d.ID.XferPort) {
				seen = true
				break
			}
		}
		if seen {
			continue
		}
		port := e.Port
		if port == 0 {
			port = defaultXferPort
		}
		d := blockmgmt.DatanodeInfo{ID: blockmgmt.DatanodeID{IPAddr: e.Host, Hostname: e.Host, XferPort: port,
			InfoPort: defaultInfoPort, IPCPort: defaultIPCPort}, Location: blockmgmt.DefaultRack, Dead: true}
		if ns.mu.hosts.Excluded(e.Host, port) {
			d.AdminState = blockmgmt.Decommissioned
		}
		infos = append(infos, d)
	}
	return infos
}

// Hadoop's default DataNode ports, used for listed nodes never seen.
const (
	defaultXferPort = 9866
	defaultInfoPort = 9864
	defaultIPCPort  = 9867
)

// getDatanodeStorageReport serves ClientProtocol getDatanodeStorageReport:
// each node of the kind with its storages as last reported.
func (c *clientRPC) getDatanodeStorageReport(ctx context.Context, req *hdfs.GetDatanodeStorageReportRequestProto) (*hdfs.GetDatanodeStorageReportResponseProto, error) {
	kind, ok := reportKind(req.GetType())
	if !ok {
		return nil, remoteerr.New(remoteerr.ClassIllegalArgument, "getDatanodeStorageReport: unknown report type %d", req.GetType())
	}
	var infos []blockmgmt.DatanodeInfo
	c.ns.readLocked(func() { infos = c.ns.datanodeReportLocked(kind, c.ns.clock.Now()) })
	resp := &hdfs.GetDatanodeStorageReportResponseProto{}
	for _, d := range infos {
		r := &hdfs.DatanodeStorageReportProto{DatanodeInfo: datanodeInfoProto(d)}
		for _, s := range d.Storages {
			typ := hdfs.StorageTypeProto(s.StorageType)
			if s.StorageType == 0 {
				typ = hdfs.StorageTypeProto_DISK
			}
			r.StorageReports = append(r.StorageReports, &hdfs.StorageReportProto{
				StorageUuid: proto.String(s.StorageID), Failed: proto.Bool(s.Failed), Capacity: proto.Uint64(uint64(max(s.Capacity, 0))),
				DfsUsed: proto.Uint64(uint64(max(s.DfsUsed, 0))), Remaining: proto.Uint64(uint64(max(s.Remaining, 0))),
				BlockPoolUsed: proto.Uint64(uint64(max(s.BlockPoolUsed, 0))),
				Storage:       &hdfs.DatanodeStorageProto{StorageUuid: proto.String(s.StorageID), StorageType: typ.Enum()},
			})
		}
		resp.DatanodeStorageReports = append(resp.DatanodeStorageReports, r)
	}
	return resp, nil
}

// leavingJSON is one node of NameNodeInfo's DecomNodes and
// EnteringMaintenanceNodes: its progress, keyed by "host:xferPort".
func leavingJSON(nodes []blockmgmt.DatanodeInfo, onlyKey string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, d := range nodes {
		out[nodeName(d)] = map[string]any{
			"xferaddr":                  d.ID.XferAddr(),
			"underReplicatedBlocks":     d.Leaving.UnderReplicated,
			onlyKey:                     d.Leaving.OutOfServiceOnly,
			"underReplicateInOpenFiles": d.Leaving.InOpenFiles,
		}
	}
	return out
}
