package namenode

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/version"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// haState is what the web server and /isActive report: "active",
// "standby", ...
func (nn *NameNode) haState() string { return nn.ha.State().String() }

// startWeb registers the NameNode's pages and beans on its web server
// (dfs.namenode.http-address) and starts it: the overview page (/ and
// /dfshealth.html), /isActive, and /jmx with the NameNodeInfo, FSNamesystem,
// FSNamesystemState, NameNodeStatus, RPC and runtime beans. /conf and
// /stacks come with the server.
func (nn *NameNode) startWeb() {
	srv := nn.web
	srv.AddBean(web.Bean{Name: "Hadoop:service=NameNode,name=NameNodeInfo",
		ModelerType: "org.apache.hadoop.hdfs.server.namenode.FSNamesystem", Attrs: func() []web.Attr { return nn.infoAttrs(nn.snapshot()) }})
	srv.AddBean(web.Bean{Name: "Hadoop:service=NameNode,name=FSNamesystem",
		ModelerType: "FSNamesystem", Attrs: func() []web.Attr { return nn.namesystemAttrs(nn.snapshot()) }})
	srv.AddBean(web.Bean{Name: "Hadoop:service=NameNode,name=FSNamesystemState",
		ModelerType: "org.apache.hadoop.hdfs.server.namenode.FSNamesystem", Attrs: func() []web.Attr { return nn.stateAttrs(nn.snapshot()) }})
	srv.AddBean(web.Bean{Name: "Hadoop:service=NameNode,name=NameNodeStatus",
		ModelerType: "org.apache.hadoop.hdfs.server.namenode.NameNode", Attrs: nn.statusAttrs})
	rpc := fmt.Sprintf("RpcActivityForPort%d", tcpPort(nn.addr))
	srv.AddBean(web.Bean{Name: "Hadoop:service=NameNode,name=" + rpc, ModelerType: rpc, Attrs: nn.rpcAttrs})
	srv.AddBean(web.Bean{Name: "Hadoop:service=NameNode,name=NameNodeActivity", ModelerType: "NameNodeActivity", Attrs: nn.activityAttrs})
	srv.AddBean(web.RuntimeBean("NameNode"))
	srv.AddBean(web.Bean{Name: "Hadoop:service=NameNode,name=StartupProgress", ModelerType: "StartupProgress", Attrs: nn.startupAttrs})
	page := func(build func() web.Page) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { web.RenderPage(w, build()) })
	}
	overview := page(func() web.Page { return nn.overviewPage(nn.snapshot()) })
	srv.Handle("GET /{$}", overview)
	srv.Handle("GET /dfshealth.html", overview)
	srv.Handle("GET /datanodes.html", page(func() web.Page { return nn.datanodesPage(nn.snapshot()) }))
	srv.Handle("GET /volumefailures.html", page(func() web.Page { return nn.volumeFailuresPage(nn.snapshot()) }))
	srv.Handle("GET /snapshots.html", page(nn.snapshotsPage))
	srv.Handle("GET /startup.html", page(nn.startupPage))
	srv.Handle("GET /startupProgress", http.HandlerFunc(nn.serveStartupProgress))
	srv.Handle("GET /explorer.html", http.HandlerFunc(serveExplorer))
	srv.Handle("GET /fsck", http.HandlerFunc(nn.handleFsck))
	srv.Handle("GET /isActive", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if nn.haState() != "active" {
			w.WriteHeader(http.StatusMethodNotAllowed)
			fmt.Fprint(w, "I am not Active!")
			return
		}
		fmt.Fprint(w, "I am Active!")
	}))
	srv.Start()
}

// HTTPAddr is the web server's address.
func (nn *NameNode) HTTPAddr() net.Addr { return nn.web.Addr() }

func tcpPort(a net.Addr) int {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.Port
	}
	return 0
}

// nnSnapshot is what the pages and beans of one request show, read under one
// hold of the namesystem's read lock.
type nnSnapshot struct {
	now               time.Time
	stats             blockmgmt.Stats
	live, dead        []blockmgmt.DatanodeInfo
	decommissioning   []blockmgmt.DatanodeInfo // DECOMMISSION_INPROGRESS
	entering          []blockmgmt.DatanodeInfo // ENTERING_MAINTENANCE
	inMaintenance     []blockmgmt.DatanodeInfo // IN_MAINTENANCE
	files, dirs       int64
	underConstruction int
	leases            int
	safeMode          bool
	safeModeMsg       string
	log               editlog.Stats
	segmentTxns       int64
}

func (nn *NameNode) snapshot() *nnSnapshot {
	ns := nn.ns
	s := &nnSnapshot{now: nn.deps.Clock.Now()}
	ns.readLocked(func() {
		s.stats = ns.mu.bm.Stats(s.now)
		s.live = ns.mu.bm.DatanodeReport(blockmgmt.ReportLive, s.now)
		s.dead = ns.datanodeReportLocked(blockmgmt.ReportDead, s.now)
		s.decommissioning = ns.mu.bm.DatanodeReport(blockmgmt.ReportDecommissioning, s.now)
		s.entering = ns.mu.bm.DatanodeReport(blockmgmt.ReportEnteringMaintenance, s.now)
		s.inMaintenance = ns.mu.bm.DatanodeReport(blockmgmt.ReportInMaintenance, s.now)
		s.files, s.dirs = ns.mu.tree.NumFiles(), ns.mu.tree.NumDirs()
		s.underConstruction = ns.mu.tree.NumUnderConstruction()
		s.leases = ns.mu.leases.NumLeases()
		s.safeMode, s.safeModeMsg = ns.mu.bm.SafeModeStatus(s.now)
	})
	s.log = ns.elog.Stats()
	s.segmentTxns = ns.elog.SegmentTxns()
	return s
}

// nodeName is how Hadoop keys DataNodes in NameNodeInfo: "host:xferPort".
func nodeName(d blockmgmt.DatanodeInfo) string {
	h := d.ID.Hostname
	if h == "" {
		h = d.ID.IPAddr
	}
	return h + ":" + strconv.Itoa(d.ID.XferPort)
}

// nodeLabel names a DataNode on the overview page: "host:port (ip:port)",
// or just the address when the host name is the IP.
func nodeLabel(d blockmgmt.DatanodeInfo) string {
	if n := nodeName(d); n != d.ID.XferAddr() {
		return n + " (" + d.ID.XferAddr() + ")"
	}
	return d.ID.XferAddr()
}

func adminStateName(d blockmgmt.DatanodeInfo) string {
	switch d.AdminState {
	case blockmgmt.DecommissionInProgress:
		return "Decommission In Progress"
	case blockmgmt.Decommissioned:
		return "Decommissioned"
	case blockmgmt.EnteringMaintenance:
		return "Entering Maintenance"
	case blockmgmt.InMaintenance:
		return "In Maintenance"
	}
	return "In Service"
}

func percent(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return float64(part) * 100 / float64(whole)
}

func (nn *NameNode) nameDirStatuses() map[string]map[string]string {
	active := map[string]string{}
	for _, d := range nn.cfg.allDirs() {
		kind := "EDITS"
		if isNameDir(&nn.cfg, d) {
			kind = "IMAGE"
			for _, e := range nn.cfg.EditsDirs {
				if filepath.Clean(e) == d {
					kind = "IMAGE_AND_EDITS"
				}
			}
		}
		active[d] = kind
	}
	return map[string]map[string]string{"active": active, "failed": {}}
}

func (nn *NameNode) infoAttrs(s *nnSnapshot) []web.Attr {
	live := map[string]map[string]any{}
	for _, d := range s.live {
		live[nodeName(d)] = map[string]any{
			"infoAddr": d.ID.IPAddr + ":" + strconv.Itoa(d.ID.InfoPort), "xferaddr": d.ID.XferAddr(),
			"location": d.Location, "lastContact": int64(s.now.Sub(d.LastUpdate) / time.Second),
			"usedSpace": d.DfsUsed, "adminState": adminStateName(d), "nonDfsUsedSpace": d.NonDfsUsed,
			"capacity": d.Capacity, "numBlocks": d.NumBlocks, "used": d.DfsUsed, "remaining": d.Remaining,
			"blockPoolUsed": d.BlockPoolUsed, "blockPoolUsedPercent": percent(d.BlockPoolUsed, d.Capacity),
			"volfails": 0,
		}
	}
	dead := map[string]map[string]any{}
	for _, d := range s.dead {
		dead[nodeName(d)] = map[string]any{"lastContact": int64(s.now.Sub(d.LastUpdate) / time.Second),
			"decommissioned": d.AdminState == blockmgmt.Decommissioned, "adminState": adminStateName(d),
			"xferaddr": d.ID.XferAddr()}
	}
	st := s.stats
	nonDFS := max(0, st.Capacity-st.Used-st.Remaining)
	return []web.Attr{
		{Name: "Version", Value: version.String()},
		{Name: "SoftwareVersion", Value: version.Release},
		{Name: "ClusterId", Value: nn.ClusterID()},
		{Name: "BlockPoolId", Value: nn.BlockPoolID()},
		{Name: "Total", Value: st.Capacity},
		{Name: "Used", Value: st.Used},
		{Name: "Free", Value: st.Remaining},
		{Name: "NonDfsUsedSpace", Value: nonDFS},
		{Name: "PercentUsed", Value: percent(st.Used, st.Capacity)},
		{Name: "PercentRemaining", Value: percent(st.Remaining, st.Capacity)},
		{Name: "BlockPoolUsedSpace", Value: st.Used},
		{Name: "TotalBlocks", Value: st.TotalBlocks},
		{Name: "TotalFiles", Value: s.files + s.dirs},
		{Name: "NumberOfMissingBlocks", Value: st.MissingBlocks},
		{Name: "NumberOfMissingBlocksWithReplicationFactorOne", Value: st.MissingReplOneBlocks},
		{Name: "Safemode", Value: s.safeModeMsg},
		{Name: "LiveNodes", Value: web.JSONString(live)},
		{Name: "DeadNodes", Value: web.JSONString(dead)},
		{Name: "DecomNodes", Value: web.JSONString(leavingJSON(s.decommissioning, "decommissionOnlyReplicas"))},
		{Name: "EnteringMaintenanceNodes", Value: web.JSONString(leavingJSON(s.entering, "maintenanceOnlyReplicas"))},
		{Name: "NameDirStatuses", Value: web.JSONString(nn.nameDirStatuses())},
		{Name: "UpgradeFinalized", Value: nn.UpgradeFinalized()},
		{Name: "NNStartedTimeInMillis", Value: nn.started.UnixMilli()},
	}
}

// sharedAttrs are the figures the FSNamesystem and FSNamesystemState beans
// both carry.
func sharedAttrs(s *nnSnapshot) []web.Attr {
	st := s.stats
	return []web.Attr{
		{Name: "CapacityTotal", Value: st.Capacity},
		{Name: "CapacityUsed", Value: st.Used},
		{Name: "CapacityRemaining", Value: st.Remaining},
		{Name: "TotalLoad", Value: totalLoad(s.live)},
		{Name: "BlocksTotal", Value: st.TotalBlocks},
		{Name: "FilesTotal", Value: s.files + s.dirs},
		{Name: "PendingReplicationBlocks", Value: st.PendingReplication},
		{Name: "UnderReplicatedBlocks", Value: st.UnderReplicated},
		{Name: "NumLiveDataNodes", Value: st.LiveNodes},
		{Name: "NumDeadDataNodes", Value: st.DeadNodes},
	}
}

func (nn *NameNode) namesystemAttrs(s *nnSnapshot) []web.Attr {
	st := s.stats
	gb := func(v int64) float64 { return float64(v) / (1 << 30) }
	attrs := []web.Attr{
		{Name: "tag.Context", Value: "dfs"},
		{Name: "tag.HAState", Value: nn.haState()},
		{Name: "tag.Hostname", Value: hostname()},
		{Name: "MissingBlocks", Value: st.MissingBlocks},
		{Name: "MissingReplOneBlocks", Value: st.MissingReplOneBlocks},
		{Name: "LastWrittenTransactionId", Value: s.log.LastTxID},
		{Name: "TransactionsSinceLastLogRoll", Value: s.segmentTxns},
	}
	attrs = append(attrs, sharedAttrs(s)...)
	return append(attrs,
		web.Attr{Name: "CapacityTotalGB", Value: gb(st.Capacity)},
		web.Attr{Name: "CapacityUsedGB", Value: gb(st.Used)},
		web.Attr{Name: "CapacityRemainingGB", Value: gb(st.Remaining)},
		web.Attr{Name: "CapacityUsedNonDFS", Value: max(0, st.Capacity-st.Used-st.Remaining)},
		web.Attr{Name: "LowRedundancyBlocks", Value: st.UnderReplicated},
		web.Attr{Name: "CorruptBlocks", Value: st.CorruptBlocks},
		web.Attr{Name: "PendingDeletionBlocks", Value: st.PendingDeletion},
		web.Attr{Name: "StaleDataNodes", Value: st.StaleNodes},
		web.Attr{Name: "NumFilesUnderConstruction", Value: s.underConstruction},
		web.Attr{Name: "NumActiveClients", Value: s.leases},
		web.Attr{Name: "TotalSyncCount", Value: s.log.Flushes},
	)
}

func (nn *NameNode) stateAttrs(s *nnSnapshot) []web.Attr {
	state := "Operational"
	if s.safeMode {
		state = "safeMode"
	}
	attrs := append([]web.Attr{{Name: "FSState", Value: state}}, sharedAttrs(s)...)
	st := s.stats
	return append(attrs,
		web.Attr{Name: "NumDecomLiveDataNodes", Value: st.DecomLiveNodes},
		web.Attr{Name: "NumDecomDeadDataNodes", Value: st.DecomDeadNodes},
		web.Attr{Name: "NumDecommissioningDataNodes", Value: st.DecommissioningNodes},
		web.Attr{Name: "NumInMaintenanceLiveDataNodes", Value: st.InMaintenanceLiveNodes},
		web.Attr{Name: "NumInMaintenanceDeadDataNodes", Value: st.InMaintenanceDeadNodes},
		web.Attr{Name: "NumEnteringMaintenanceDataNodes", Value: st.EnteringMaintenance},
		web.Attr{Name: "NumStaleDataNodes", Value: st.StaleNodes},
	)
}

func (nn *NameNode) statusAttrs() []web.Attr {
	return []web.Attr{
		{Name: "NNRole", Value: nn.role.String()},
		{Name: "HostAndPort", Value: nn.addr.String()},
		{Name: "SecurityEnabled", Value: false},
		{Name: "State", Value: nn.haState()},
		{Name: "LastHATransitionTime", Value: 0},
	}
}

func (nn *NameNode) rpcAttrs() []web.Attr {
	st := nn.rpc.Stats()
	return []web.Attr{
		{Name: "tag.port", Value: strconv.Itoa(tcpPort(nn.addr))},
		{Name: "tag.Context", Value: "rpc"},
		{Name: "NumOpenConnections", Value: st.Open},
		{Name: "CallQueueLength", Value: st.Queued},
		{Name: "RpcCallsTotal", Value: st.Calls},
		{Name: "RpcCallsInFlight", Value: st.InFlight},
		{Name: "RpcErrorResponses", Value: st.Errors},
		{Name: "RpcFatalResponses", Value: st.Fatal},
		{Name: "RpcConnectionsAccepted", Value: st.Accepted},
		{Name: "RpcQueueTimeNumOps", Value: st.TimedCalls},
		{Name: "RpcQueueTimeAvgTime", Value: avgMillis(int64(st.QueueTimeTotal), st.TimedCalls)},
		{Name: "RpcProcessingTimeNumOps", Value: st.TimedCalls},
		{Name: "RpcProcessingTimeAvgTime", Value: avgMillis(int64(st.ProcessingTimeTotal), st.TimedCalls)},
	}
}

func totalLoad(live []blockmgmt.DatanodeInfo) int {
	n := 0
	for _, d := range live {
		n += d.Xceivers
	}
	return n
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "localhost"
	}
	return h
}

// overviewPage is the NameNode's status page, the counterpart of Hadoop's
// dfshealth.html.
func (nn *NameNode) overviewPage(s *nnSnapshot) web.Page {
	st := s.stats
	safe := "Safe mode is off."
	if s.safeMode {
		safe = s.safeModeMsg
	}
	if !nn.UpgradeFinalized() {
		// Hadoop's dfshealth page says the same.
		safe += " Upgrade in progress. Not yet finalized."
	}
	overview := web.Section{Heading: "Overview", Rows: [][2]string{
		{"Started", nn.started.Format(time.RFC1123)},
		{"Version", version.String()},
		{"Cluster ID", nn.ClusterID()},
		{"Block pool ID", nn.BlockPoolID()},
		{"Namespace ID", strconv.Itoa(int(nn.NamespaceID()))},
		{"RPC address", nn.addr.String()},
	}}
	summary := web.Section{Heading: "Summary", Note: safe, Rows: [][2]string{
		{"Files and directories", fmt.Sprintf("%d files and directories, %d blocks = %d total filesystem object(s)",
			s.files+s.dirs, st.TotalBlocks, s.files+s.dirs+st.TotalBlocks)},
		{"Configured capacity", web.Bytes(st.Capacity)},
		{"DFS used", fmt.Sprintf("%s (%.2f%%)", web.Bytes(st.Used), percent(st.Used, st.Capacity))},
		{"Non DFS used", web.Bytes(max(0, st.Capacity-st.Used-st.Remaining))},
		{"DFS remaining", fmt.Sprintf("%s (%.2f%%)", web.Bytes(st.Remaining), percent(st.Remaining, st.Capacity))},
		{"Live nodes", fmt.Sprintf("%d (stale: %d)", st.LiveNodes, st.StaleNodes)},
		{"Dead nodes", strconv.Itoa(st.DeadNodes)},
		{"Decommissioning nodes", strconv.Itoa(st.DecommissioningNodes)},
		{"Decommissioned nodes", fmt.Sprintf("%d live, %d dead", st.DecomLiveNodes, st.DecomDeadNodes)},
		{"Entering maintenance nodes", strconv.Itoa(st.EnteringMaintenance)},
		{"In maintenance nodes", fmt.Sprintf("%d live, %d dead", st.InMaintenanceLiveNodes, st.InMaintenanceDeadNodes)},
		{"Under-replicated blocks", strconv.FormatInt(st.UnderReplicated, 10)},
		{"Pending replications", strconv.FormatInt(st.PendingReplication, 10)},
		{"Blocks with corrupt replicas", strconv.FormatInt(st.CorruptBlocks, 10)},
		{"Missing blocks", strconv.FormatInt(st.MissingBlocks, 10)},
		{"Blocks pending deletion", strconv.FormatInt(st.PendingDeletion, 10)},
		{"Files under construction", fmt.Sprintf("%d (%d lease holders)", s.underConstruction, s.leases)},
		{"Last transaction ID", strconv.FormatInt(s.log.LastTxID, 10)},
		{"Transactions in the current edits segment", strconv.FormatInt(s.segmentTxns, 10)},
	}}
	dirs := &web.Table{Header: []string{"Storage directory", "Type", "State"}}
	for d, kind := range nn.nameDirStatuses()["active"] {
		dirs.Rows = append(dirs.Rows, []string{d, kind, "Active"})
	}
	sort.Slice(dirs.Rows, func(i, j int) bool { return dirs.Rows[i][0] < dirs.Rows[j][0] })
	return nn.tabPage("Overview", overview, summary, web.Section{Heading: "NameNode storage", Table: dirs})
}

// datanodesPage is the Datanodes tab: live nodes (each linked to its own
// page), dead ones, and those leaving service.
func (nn *NameNode) datanodesPage(s *nnSnapshot) web.Page {
	live := &web.Table{Header: []string{"Node", "HTTP address", "Last contact", "Capacity", "Used", "Non DFS used",
		"Remaining", "Blocks", "State"}, Empty: "No live DataNodes"}
	for _, d := range s.live {
		state := adminStateName(d)
		if d.Stale {
			state += " (stale)"
		}
		httpAddr := d.ID.IPAddr + ":" + strconv.Itoa(d.ID.InfoPort)
		live.Hrefs = append(live.Hrefs, []string{"", "http://" + httpAddr + "/"})
		live.Rows = append(live.Rows, []string{nodeLabel(d),
			httpAddr, s.now.Sub(d.LastUpdate).Round(time.Second).String() + " ago",
			web.Bytes(d.Capacity), web.Bytes(d.DfsUsed), web.Bytes(d.NonDfsUsed), web.Bytes(d.Remaining),
			strconv.Itoa(d.NumBlocks), state})
	}
	dead := &web.Table{Header: []string{"Node", "Last contact"}, Empty: "No dead DataNodes"}
	for _, d := range s.dead {
		seen := "never (listed in " + conf.DFSHosts + ")"
		if !d.LastUpdate.IsZero() {
			seen = s.now.Sub(d.LastUpdate).Round(time.Second).String() + " ago"
		}
		if d.AdminState != blockmgmt.Normal {
			seen += ", " + adminStateName(d)
		}
		dead.Rows = append(dead.Rows, []string{nodeLabel(d), seen})
	}
	leaving := func(nodes []blockmgmt.DatanodeInfo, empty string) *web.Table {
		t := &web.Table{Header: []string{"Node", "Under-replicated blocks", "Blocks with no live replicas",
			"Under-replicated blocks in files under construction", "Maintenance ends"}, Empty: empty}
		for _, d := range nodes {
			ends := ""
			if !d.MaintenanceExpire.IsZero() {
				ends = "never"
				if d.MaintenanceExpire.Year() < 9999 {
					ends = d.MaintenanceExpire.Format(time.RFC1123)
				}
			}
			t.Rows = append(t.Rows, []string{nodeLabel(d), strconv.Itoa(d.Leaving.UnderReplicated),
				strconv.Itoa(d.Leaving.OutOfServiceOnly), strconv.Itoa(d.Leaving.InOpenFiles), ends})
		}
		return t
	}
	maint := append(append([]blockmgmt.DatanodeInfo(nil), s.entering...), s.inMaintenance...)
	return nn.tabPage("Datanodes", web.Section{Heading: "Live DataNodes", Table: live}, web.Section{Heading: "Dead DataNodes", Table: dead},
		web.Section{Heading: "Decommissioning", Table: leaving(s.decommissioning, "No DataNodes are being decommissioned")},
		web.Section{Heading: "In maintenance", Table: leaving(maint, "No DataNodes are in maintenance")})
}

// nnTabs are the NameNode UI's tabs, as Hadoop's dfshealth page has them.
var nnTabs = []web.NavLink{
	{Label: "Overview", Href: "/dfshealth.html"},
	{Label: "Datanodes", Href: "/datanodes.html"},
	{Label: "Datanode Volume Failures", Href: "/volumefailures.html"},
	{Label: "Snapshot", Href: "/snapshots.html"},
	{Label: "Startup Progress", Href: "/startup.html"},
	// Hadoop's Utilities menu: the file browser over WebHDFS, the logs.
	{Label: "Browse the file system", Href: "/explorer.html"},
	{Label: "Logs", Href: "/logs/"},
}

// tabPage is a page of the NameNode UI with tab current marked.
func (nn *NameNode) tabPage(tab string, sections ...web.Section) web.Page {
	nav := append([]web.NavLink(nil), nnTabs...)
	for i := range nav {
		nav[i].Current = nav[i].Label == tab
	}
	return web.Page{
		Title:    fmt.Sprintf("NameNode %s (%s)", nn.addr.String(), nn.haState()),
		Subtitle: version.String(),
		Nav:      nav,
		Sections: sections,
	}
}

// volumeFailures keeps what each DataNode's last heartbeat reported of its
// failed volumes. It is soft state, as in Hadoop: rebuilt from heartbeats
// after a restart.
type volumeFailures struct {
	mu     sync.Mutex
	byUUID map[string]*dnpb.VolumeFailureSummaryProto
}

func (v *volumeFailures) note(uuid string, s *dnpb.VolumeFailureSummaryProto) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(s.GetFailedStorageLocations()) == 0 {
		delete(v.byUUID, uuid)
		return
	}
	if v.byUUID == nil {
		v.byUUID = map[string]*dnpb.VolumeFailureSummaryProto{}
	}
	v.byUUID[uuid] = s
}

func (v *volumeFailures) get(uuid string) *dnpb.VolumeFailureSummaryProto {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.byUUID[uuid]
}

// volumeFailuresPage is the Datanode Volume Failures tab: the live nodes
// with failed volumes, when the last failed, the capacity lost.
func (nn *NameNode) volumeFailuresPage(s *nnSnapshot) web.Page {
	t := &web.Table{Header: []string{"Datanode", "Address", "Last failure date", "Failed volumes", "Estimated capacity lost", "Failed storage locations"},
		Empty: "There are no reported volume failures."}
	for _, d := range s.live {
		f := nn.volFailures.get(d.ID.UUID)
		if f == nil {
			continue
		}
		httpAddr := d.ID.IPAddr + ":" + strconv.Itoa(d.ID.InfoPort)
		t.Hrefs = append(t.Hrefs, []string{"", "http://" + httpAddr + "/"})
		t.Rows = append(t.Rows, []string{nodeLabel(d), httpAddr,
			time.UnixMilli(int64(f.GetLastVolumeFailureDate())).UTC().Format(time.RFC1123),
			strconv.Itoa(len(f.GetFailedStorageLocations())), web.Bytes(int64(f.GetEstimatedCapacityLostTotal())),
			strings.Join(f.GetFailedStorageLocations(), ", ")})
	}
	return nn.tabPage("Datanode Volume Failures", web.Section{Heading: "Datanode Volume Failures", Table: t})
}

// snapshotsPage is the Snapshot tab: the snapshottable directories (as
// the superuser's getSnapshottableDirListing has them) and their snapshots.
func (nn *NameNode) snapshotsPage() web.Page {
	var dirs []namespace.SnapshottableDir
	var snaps [][]namespace.SnapshotInfo
	super := namespace.Caller{User: nn.cfg.SuperUser, Super: true}
	nn.ns.read(func(t *namespace.Tree) {
		dirs = t.SnapshottableDirs(super)
		for _, d := range dirs {
			s, _ := t.Snapshots(super, d.Path)
			snaps = append(snaps, s)
		}
	})
	t := &web.Table{Header: []string{"Path", "Snapshot Number", "Snapshot Quota", "Modification Time", "Permission", "Owner", "Group"},
		Empty: "No snapshottable directories"}
	st := &web.Table{Header: []string{"Snapshot ID", "Snapshot Directory", "Modification Time"}, Empty: "No snapshots"}
	n := 0
	for i, d := range dirs {
		t.Rows = append(t.Rows, []string{d.Path, strconv.Itoa(len(snaps[i])), strconv.Itoa(namespace.DefaultSnapshotQuota),
			time.UnixMilli(d.Info.Mtime).UTC().Format(time.RFC1123), modeText(d.Info.Perm.Mode), d.Info.Perm.User, d.Info.Perm.Group})
		for _, s := range snaps[i] {
			n++
			st.Rows = append(st.Rows, []string{strconv.Itoa(int(s.ID)), namespace.SnapshotPath(d.Path, s.Name),
				time.UnixMilli(s.Ctime).UTC().Format(time.RFC1123)})
		}
	}
	return nn.tabPage("Snapshot", web.Section{Heading: "Snapshottable directories: " + strconv.Itoa(len(dirs)), Table: t},
		web.Section{Heading: "Snapshotted directories: " + strconv.Itoa(n), Table: st})
}

// modeText is a directory's permission as ls writes it ("drwxr-xr-x").
func modeText(mode uint16) string {
	b := []byte("drwxrwxrwx")
	for i := range 9 {
		if mode&(1<<(8-i)) == 0 {
			b[i+1] = '-'
		}
	}
	if mode&0o1000 != 0 {
		if b[9] == 'x' {
			b[9] = 't'
		} else {
			b[9] = 'T'
		}
	}
	return string(b)
}
