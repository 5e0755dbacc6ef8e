package namenode

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/version"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// The helpers' web servers (dfs.namenode.backup.http-address,
// dfs.namenode.secondary.http-address): an overview page at / (and
// /status.html, the Secondary's page in Hadoop), the image servlet, and
// /jmx with:
//
//   - Secondary NameNode: Hadoop:service=SecondaryNameNode,name=SecondaryNameNodeInfo
//     (HostAndPort, SecurityEnabled, StartTime, LastCheckpointTime,
//     LastCheckpointDeltaMs, CheckpointDirectories,
//     CheckpointEditlogDirectories, Version, SoftwareVersion, CompileInfo);
//   - Checkpoint and Backup Nodes: the NameNode's NameNodeInfo, FSNamesystem
//     and NameNodeStatus beans (NNRole "Checkpoint Node" / "Backup Node"),
//     the RPC bean, and Hadoop:service=BackupNode,name=BackupNodeInfo or
//     Hadoop:service=CheckpointNode,name=CheckpointNodeInfo with the same
//     attributes as SecondaryNameNodeInfo, plus, on a Backup Node,
//     JournalState and LastWrittenTransactionId (not Hadoop names: Hadoop
//     has no such bean).
//
// Every role has JvmMetrics under its service name.

// service is the role's JMX service name.
func (r Role) service() string { return strings.ReplaceAll(r.String(), " ", "") }

func (nn *NameNode) startHelperWeb() {
	srv := nn.web
	svc := nn.role.service()
	info := svc + "Info"
	if nn.role != RoleSecondary {
		srv.AddBean(web.Bean{Name: "Hadoop:service=NameNode,name=NameNodeInfo",
			ModelerType: "org.apache.hadoop.hdfs.server.namenode.FSNamesystem", Attrs: func() []web.Attr { return nn.infoAttrs(nn.snapshot()) }})
		srv.AddBean(web.Bean{Name: "Hadoop:service=NameNode,name=FSNamesystem",
			ModelerType: "FSNamesystem", Attrs: func() []web.Attr { return nn.namesystemAttrs(nn.snapshot()) }})
		srv.AddBean(web.Bean{Name: "Hadoop:service=NameNode,name=NameNodeStatus",
			ModelerType: "org.apache.hadoop.hdfs.server.namenode.NameNode", Attrs: nn.statusAttrs})
		rpc := fmt.Sprintf("RpcActivityForPort%d", tcpPort(nn.addr))
		srv.AddBean(web.Bean{Name: "Hadoop:service=" + svc + ",name=" + rpc, ModelerType: rpc, Attrs: nn.rpcAttrs})
	}
	srv.AddBean(web.Bean{Name: "Hadoop:service=" + svc + ",name=" + info,
		ModelerType: "org.apache.hadoop.hdfs.server.namenode." + svc, Attrs: nn.helperAttrs})
	srv.AddBean(web.RuntimeBean(svc))
	page := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { web.RenderPage(w, nn.helperPage()) })
	srv.Handle("GET /{$}", page)
	srv.Handle("GET /status.html", page)
	srv.Start()
}

// helperAttrs are SecondaryNameNodeInfo's attributes, for every helper.
func (nn *NameNode) helperAttrs() []web.Attr {
	st := nn.helper.status()
	host := nn.web.Addr().String()
	if nn.addr != nil {
		host = nn.addr.String()
	}
	delta := int64(-1)
	var lastMillis int64
	if st.done > 0 {
		lastMillis = st.last.UnixMilli()
		delta = nn.deps.Clock.Since(st.last).Milliseconds()
	}
	attrs := []web.Attr{
		{Name: "HostAndPort", Value: host},
		{Name: "SecurityEnabled", Value: false},
		{Name: "StartTime", Value: nn.started.UnixMilli()},
		{Name: "LastCheckpointTime", Value: lastMillis},
		{Name: "LastCheckpointDeltaMs", Value: delta},
		{Name: "CheckpointDirectories", Value: nn.cfg.NameDirs},
		{Name: "CheckpointEditlogDirectories", Value: nn.cfg.EditsDirs},
		{Name: "Version", Value: version.String()},
		{Name: "SoftwareVersion", Value: version.Release},
		{Name: "CompileInfo", Value: version.String()},
	}
	if st.journal != "" {
		attrs = append(attrs, web.Attr{Name: "JournalState", Value: st.journal},
			web.Attr{Name: "LastWrittenTransactionId", Value: st.journalLast})
	}
	return attrs
}

// helperPage is a helper's overview page.
func (nn *NameNode) helperPage() web.Page {
	st := nn.helper.status()
	k := nn.cfg.Checkpoint
	overview := web.Section{Heading: "Overview", Rows: [][2]string{
		{"Started", nn.started.Format(time.RFC1123)},
		{"Version", version.String()},
		{"NameNode", k.ActiveRPCAddress + " (web " + k.ActiveHTTPAddress + ")"},
		{"Cluster ID", nn.version.ClusterID},
		{"Namespace ID", strconv.Itoa(int(nn.version.NamespaceID))},
		{"Block pool ID", nn.version.BlockPoolID},
	}}
	if nn.addr != nil {
		overview.Rows = append(overview.Rows, [2]string{"RPC address", nn.addr.String()})
	}
	last := "never"
	if st.done > 0 {
		last = fmt.Sprintf("%s (%s ago), txid %d, took %s, image %s", st.last.Format(time.RFC1123),
			nn.deps.Clock.Since(st.last).Round(time.Second), st.lastTxID, st.lastTook.Round(time.Millisecond), web.Bytes(st.lastSize))
	}
	ckpt := web.Section{Heading: "Checkpoints", Rows: [][2]string{
		{"Last checkpoint", last},
		{"Checkpoints done", strconv.FormatInt(st.done, 10)},
		{"Checkpoints failed", strconv.FormatInt(st.failures, 10)},
		{"Images downloaded from the NameNode", strconv.FormatInt(st.downloads, 10)},
		{"Checkpoint period", nn.cfg.CheckpointPeriod.String() + " or " + strconv.FormatInt(nn.cfg.CheckpointTxns, 10) + " transactions"},
		{"Last transaction applied", strconv.FormatInt(st.applied, 10)},
	}}
	if st.lastErr != "" {
		ckpt.Rows = append(ckpt.Rows, [2]string{"Last failure", st.lastErr})
	}
	if st.journal != "" {
		ckpt.Rows = append(ckpt.Rows, [2]string{"Journal state", st.journal},
			[2]string{"Last transaction journaled", strconv.FormatInt(st.journalLast, 10)})
	}
	dirs := &web.Table{Header: []string{"Checkpoint directory", "Type"}}
	for _, d := range nn.cfg.allDirs() {
		kind := "EDITS"
		if isNameDir(&nn.cfg, d) {
			kind = "IMAGE"
			for _, e := range nn.cfg.EditsDirs {
				if e == d {
					kind = "IMAGE_AND_EDITS"
				}
			}
		}
		dirs.Rows = append(dirs.Rows, []string{d, kind})
	}
	s := nn.snapshot()
	ns := web.Section{Heading: "Namespace", Rows: [][2]string{
		{"Files and directories", strconv.FormatInt(s.files+s.dirs, 10)},
		{"Blocks", strconv.FormatInt(s.stats.TotalBlocks, 10)},
		{"Files under construction", strconv.Itoa(s.underConstruction)},
	}}
	return web.Page{
		Title:    nn.role.String() + " " + nn.web.Addr().String(),
		Subtitle: version.String(),
		Sections: []web.Section{overview, ckpt, ns, {Heading: "Checkpoint storage", Table: dirs}},
	}
}
