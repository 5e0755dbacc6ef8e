package datanode

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/version"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// startWeb registers the DataNode's pages and beans on its web server
// (dfs.datanode.http.address) and starts it: the status page (/ and
// /datanode.html), the block scanner's report (/blockScannerReport,
// ?listblocks for its latest verifications), /jmx with the DataNodeInfo,
// FSDatasetState, DataNodeActivity and runtime beans; /conf and /stacks come
// with the server.
func (dn *DataNode) startWeb() {
	srv := dn.web
	host := dn.hostname()
	port := portOf(dn.XferAddr().String())
	srv.AddBean(web.Bean{Name: "Hadoop:service=DataNode,name=DataNodeInfo",
		ModelerType: "org.apache.hadoop.hdfs.server.datanode.DataNode", Attrs: dn.infoAttrs})
	srv.AddBean(web.Bean{Name: "Hadoop:service=DataNode,name=FSDatasetState",
		ModelerType: "FSDatasetState", Attrs: dn.datasetAttrs})
	act := fmt.Sprintf("DataNodeActivity-%s-%d", host, port)
	srv.AddBean(web.Bean{Name: "Hadoop:service=DataNode,name=" + act, ModelerType: act,
		Attrs: func() []web.Attr { return dn.activityAttrs(host) }})
	srv.AddBean(web.RuntimeBean("DataNode"))
	page := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { web.RenderPage(w, dn.statusPage()) })
	srv.Handle("GET /{$}", page)
	srv.Handle("GET /datanode.html", page)
	srv.Handle("GET /blockScannerReport", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, list := r.URL.Query()["listblocks"]
		dn.blockScan.Report(w, list)
	}))
	srv.SetWebHDFS(webHDFS{dn: dn})
	srv.Start()
}

// HTTPAddr is the web server's address.
func (dn *DataNode) HTTPAddr() net.Addr { return dn.web.Addr() }

// infoPort is the web port the DataNode registers with.
func (dn *DataNode) infoPort() uint32 { return portOf(dn.web.Addr().String()) }

// hostname is the name the DataNode gives itself (dfs.datanode.hostname, else
// the OS host name).
func (dn *DataNode) hostname() string {
	if dn.cfg.Hostname != "" {
		return dn.cfg.Hostname
	}
	if h, err := os.Hostname(); err == nil {
		return h
	}
	return "localhost"
}

// actorInfo is one NameNode connection as the web pages show it.
type actorInfo struct {
	NamenodeAddress string
	BlockPoolID     string
	ActorState      string
	LastHeartbeat   time.Time
	LastBlockReport time.Time
}

func (dn *DataNode) actorInfos() []actorInfo {
	out := make([]actorInfo, 0, len(dn.actors))
	for _, a := range dn.actors {
		a.mu.Lock()
		in := actorInfo{NamenodeAddress: a.addr, BlockPoolID: a.mu.ns.GetBlockPoolID(), ActorState: "CONNECTING",
			LastHeartbeat: a.mu.lastHeartbeat, LastBlockReport: a.mu.lastReport}
		if a.mu.reg != nil {
			in.ActorState = "RUNNING"
		}
		a.mu.Unlock()
		out = append(out, in)
	}
	return out
}

// volumeInfo is one volume as the web pages show it.
type volumeInfo struct {
	Dir, StorageID, StorageType                     string
	Capacity, Used, Remaining, Reserved, ForWriting int64
	Blocks                                          int
}

func (dn *DataNode) volumeInfos() []volumeInfo {
	dn.mu.Lock()
	ds := dn.mu.ds
	pools := make([]string, 0, len(dn.mu.pools))
	for id := range dn.mu.pools {
		pools = append(pools, id)
	}
	dn.mu.Unlock()
	blocks := map[string]int{}
	for _, id := range pools {
		if bp, err := dn.pool(id); err == nil {
			for _, r := range bp.Replicas() {
				blocks[r.StorageID]++
			}
		}
	}
	var out []volumeInfo
	if ds == nil {
		for _, v := range dn.vols {
			out = append(out, volumeInfo{Dir: v.Dir(), StorageID: v.StorageID(), StorageType: v.StorageType().String()})
		}
		return out
	}
	reports, _ := ds.Reports()
	for _, r := range reports {
		out = append(out, volumeInfo{Dir: r.Dir, StorageID: r.StorageID, StorageType: r.StorageType.String(), Capacity: r.Capacity, Used: r.DfsUsed,
			Remaining: r.Remaining, Reserved: r.Reserved, ForWriting: r.ReservedForReplicas, Blocks: blocks[r.StorageID]})
	}
	return out
}

func (dn *DataNode) clusterID() string {
	for _, v := range append(dn.volumes(), dn.vols...) {
		if ver := v.Version(); ver != nil && ver.ClusterID != "" {
			return ver.ClusterID
		}
	}
	return ""
}

func (dn *DataNode) infoAttrs() []web.Attr {
	actors := dn.actorInfos()
	nnAddrs := map[string]string{}
	var bpInfo []map[string]string
	now := dn.clk.Now()
	for _, a := range actors {
		nnAddrs[a.NamenodeAddress] = a.BlockPoolID
		bpInfo = append(bpInfo, map[string]string{
			"NamenodeAddress": a.NamenodeAddress, "BlockPoolID": a.BlockPoolID, "ActorState": a.ActorState,
			"LastHeartbeat": secondsSince(now, a.LastHeartbeat), "LastBlockReport": secondsSince(now, a.LastBlockReport),
		})
	}
	vols := map[string]map[string]any{}
	for _, v := range dn.volumeInfos() {
		vols[v.Dir] = map[string]any{"usedSpace": v.Used, "freeSpace": v.Remaining, "reservedSpace": v.Reserved,
			"reservedSpaceForReplicas": v.ForWriting, "numBlocks": v.Blocks, "storageType": v.StorageType}
	}
	return []web.Attr{
		{Name: "Version", Value: SoftwareVersion + ", " + version.String()},
		{Name: "SoftwareVersion", Value: SoftwareVersion},
		{Name: "ClusterId", Value: dn.clusterID()},
		{Name: "DatanodeHostname", Value: dn.hostname()},
		{Name: "DatanodeUuid", Value: dn.uuid},
		{Name: "XceiverCount", Value: dn.xs.active()},
		{Name: "XmitsInProgress", Value: int(dn.xmits.Load())},
		{Name: "DataPort", Value: strconv.Itoa(int(portOf(dn.XferAddr().String())))},
		{Name: "RpcPort", Value: strconv.Itoa(int(portOf(dn.IPCAddr().String())))},
		{Name: "HttpPort", Value: strconv.Itoa(int(portOf(dn.web.Addr().String())))},
		{Name: "DomainSocketPath", Value: dn.DomainSocket()},
		{Name: "NamenodeAddresses", Value: web.JSONString(nnAddrs)},
		{Name: "BPServiceActorInfo", Value: web.JSONString(bpInfo)},
		{Name: "VolumeInfo", Value: web.JSONString(vols)},
		{Name: "DNStartedTimeInMillis", Value: dn.started.UnixMilli()},
	}
}

// secondsSince is how many whole seconds ago t was, as Hadoop's actor info
// prints it ("-1" for never).
func secondsSince(now, t time.Time) string {
	if t.IsZero() {
		return "-1"
	}
	return strconv.FormatInt(int64(now.Sub(t)/time.Second), 10)
}

func (dn *DataNode) datasetAttrs() []web.Attr {
	var capacity, used, remaining int64
	for _, v := range dn.volumeInfos() {
		capacity += v.Capacity
		used += v.Used
		remaining += v.Remaining
	}
	return []web.Attr{
		{Name: "Capacity", Value: capacity},
		{Name: "DfsUsed", Value: used},
		{Name: "Remaining", Value: remaining},
		{Name: "NumFailedVolumes", Value: len(dn.failedVolumes())},
		{Name: "CacheCapacity", Value: 0},
		{Name: "CacheUsed", Value: 0},
		{Name: "NumBlocksCached", Value: 0},
		{Name: "StorageInfo", Value: "FSDataset{dirpath='" + fmt.Sprint(dn.dataDirs()) + "'}"},
	}
}

func (dn *DataNode) activityAttrs(host string) []web.Attr {
	a := &dn.act
	attrs := []web.Attr{
		{Name: "tag.Context", Value: "dfs"},
		{Name: "tag.Hostname", Value: host},
		{Name: "BytesWritten", Value: a.bytesWritten.Load()},
		{Name: "BytesRead", Value: a.bytesRead.Load()},
		{Name: "BlocksWritten", Value: a.blocksWritten.Load()},
		{Name: "BlocksRead", Value: a.blocksRead.Load()},
		{Name: "BlocksReplicated", Value: a.blocksReplicated.Load()},
		{Name: "BlocksRemoved", Value: a.blocksRemoved.Load()},
		{Name: "BlocksVerified", Value: a.blocksVerified.Load()},
		{Name: "BlockVerificationFailures", Value: a.verificationFailure.Load()},
		{Name: "ReadsFromLocalClient", Value: a.readsLocal.Load()},
		{Name: "ReadsFromRemoteClient", Value: a.readsRemote.Load()},
		{Name: "WritesFromLocalClient", Value: a.writesLocal.Load()},
		{Name: "WritesFromRemoteClient", Value: a.writesRemote.Load()},
		{Name: "HeartbeatsNumOps", Value: a.heartbeats.Load()},
		{Name: "BlockReportsNumOps", Value: a.blockReports.Load()},
		{Name: "IncrementalBlockReportsNumOps", Value: a.ibrs.Load()},
	}
	for i, name := range timedOpNames {
		attrs = append(attrs, web.Attr{Name: name + "NumOps", Value: a.ops[i].n.Load()},
			web.Attr{Name: name + "AvgTime", Value: a.ops[i].avgMillis()})
	}
	return attrs
}

// statusPage is the DataNode's overview page.
func (dn *DataNode) statusPage() web.Page {
	now := dn.clk.Now()
	socket := dn.DomainSocket()
	if socket == "" {
		socket = "off (dfs.domain.socket.path not set)"
	}
	overview := web.Section{Heading: "Overview", Rows: [][2]string{
		{"Cluster ID", dn.clusterID()},
		{"DataNode UUID", dn.uuid},
		{"Version", version.String() + " (speaks Hadoop " + SoftwareVersion + ")"},
		{"Started", dn.started.Format(time.RFC1123)},
		{"Data transfer address", dn.XferAddr().String()},
		{"IPC address", dn.IPCAddr().String()},
		{"Domain socket", socket},
		{"Active transfers (xceivers)", fmt.Sprintf("%d of at most %d", dn.xs.active(), dn.cfg.MaxTransferThreads)},
		{"Outgoing replications", strconv.Itoa(int(dn.xmits.Load()))},
	}}
	pools := &web.Table{Header: []string{"NameNode", "Block pool", "State", "Last heartbeat", "Last block report"},
		Empty: "No NameNodes configured"}
	for _, a := range dn.actorInfos() {
		pools.Rows = append(pools.Rows, []string{a.NamenodeAddress, a.BlockPoolID, a.ActorState,
			ago(now, a.LastHeartbeat), ago(now, a.LastBlockReport)})
	}
	vols := &web.Table{Header: []string{"Directory", "Type", "Storage ID", "Capacity", "Used", "Remaining", "Reserved", "Blocks"},
		Empty: "No volumes"}
	infos := dn.volumeInfos()
	sort.Slice(infos, func(i, j int) bool { return infos[i].Dir < infos[j].Dir })
	for _, v := range infos {
		vols.Rows = append(vols.Rows, []string{v.Dir, v.StorageType, v.StorageID, web.Bytes(v.Capacity), web.Bytes(v.Used),
			web.Bytes(v.Remaining), web.Bytes(v.Reserved), strconv.Itoa(v.Blocks)})
	}
	failed := &web.Table{Header: []string{"Directory", "Storage ID", "Failed", "Cause"},
		Empty: fmt.Sprintf("None (dfs.datanode.failed.volumes.tolerated: %d)", dn.cfg.FailedVolumesTolerated)}
	for _, f := range dn.failedVolumes() {
		failed.Rows = append(failed.Rows, []string{f.Dir, f.StorageID, ago(now, f.At), f.Err})
	}
	scan := &web.Table{Header: []string{"Volume", "Verified last hour", "Scanned this period", "Scanned since start",
		"Errors", "Reported corrupt", "Skipped (verified by readers)", "Pass"},
		Empty: "The block scanner is not running (dfs.block.scanner.volume.bytes.per.second is 0, or dfs.datanode.scan.period.hours negative)"}
	for _, st := range dn.blockScan.Stats() {
		pass := "running"
		if st.AtEnd {
			pass = "done; next in " + until(now, st.PeriodEnds)
		}
		scan.Rows = append(scan.Rows, []string{st.Dir, web.Bytes(st.BytesScannedInPastHour), strconv.FormatInt(st.BlocksScannedInPeriod, 10),
			strconv.FormatInt(st.BlocksScannedSinceStart, 10), strconv.FormatInt(st.ScanErrorsSinceStart, 10),
			strconv.FormatInt(st.CorruptReported, 10), strconv.FormatInt(st.SkippedVerifiedByReaders, 10), pass})
	}
	a := &dn.act
	activity := web.Section{Heading: "Activity since start", Rows: [][2]string{
		{"Written", fmt.Sprintf("%s in %d blocks", web.Bytes(a.bytesWritten.Load()), a.blocksWritten.Load())},
		{"Read", fmt.Sprintf("%s in %d block reads", web.Bytes(a.bytesRead.Load()), a.blocksRead.Load())},
		{"Blocks replicated to other DataNodes", strconv.FormatInt(a.blocksReplicated.Load(), 10)},
		{"Blocks deleted", strconv.FormatInt(a.blocksRemoved.Load(), 10)},
		{"Reads verified by clients", strconv.FormatInt(a.blocksVerified.Load(), 10)},
		{"Packets rejected for bad checksums", strconv.FormatInt(a.verificationFailure.Load(), 10)},
		{"Replicas the block scanner reported corrupt", strconv.FormatInt(a.scannerCorrupt.Load(), 10)},
		{"Balancer bandwidth", web.Bytes(dn.balance.Bandwidth()) + "/s"},
	}}
	return web.Page{
		Title:    "DataNode " + dn.hostname() + ":" + strconv.Itoa(int(portOf(dn.XferAddr().String()))),
		Subtitle: version.String(),
		Sections: []web.Section{overview, {Heading: "Block pools", Table: pools}, {Heading: "Volumes", Table: vols},
			{Heading: "Failed volumes", Table: failed}, {Heading: "Block scanner (text report at /blockScannerReport)", Table: scan}, activity},
	}
}

// ago prints how long ago t was ("never" for the zero time).
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return now.Sub(t).Round(time.Second).String() + " ago"
}

// until prints how long until t ("now" when past).
func until(now, t time.Time) string {
	if !t.After(now) {
		return "now"
	}
	return t.Sub(now).Round(time.Second).String()
}

// dataDirs is dfs.datanode.data.dir as last applied.
func (dn *DataNode) dataDirs() []string {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	return append([]string(nil), dn.mu.dataDirs...)
}
