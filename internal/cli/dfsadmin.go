package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/user"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/cli/fsshell"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

const dfsadminUsage = `Usage: hdfs dfsadmin
Note: Administrative commands can only be run as the HDFS superuser.
	[-report [-live] [-dead] [-decommissioning] [-enteringmaintenance] [-inmaintenance]]
	[-safemode <enter | leave | get | wait | forceExit>]
	[-saveNamespace]
	[-rollEdits]
	[-refreshNodes]
	[-setQuota <quota> <dirname>...<dirname>]
	[-clrQuota <dirname>...<dirname>]
	[-setSpaceQuota <quota> [-storageType <storagetype>] <dirname>...<dirname>]
	[-clrSpaceQuota [-storageType <storagetype>] <dirname>...<dirname>]
	[-finalizeUpgrade]
	[-upgrade <query | finalize>]
	[-rollingUpgrade [<query|prepare|finalize>]]
	[-refreshServiceAcl]
	[-refreshUserToGroupsMappings]
	[-refreshSuperUserGroupsConfiguration]
	[-refreshCallQueue]
	[-reconfig <datanode> <host:ipc_port> <start|status|properties>]
	[-printTopology]
	[-setBalancerBandwidth <bandwidth in bytes per second>]
	[-allowSnapshot <snapshotDir>]
	[-disallowSnapshot <snapshotDir>]
	[-getBalancerBandwidth <datanode_host:ipc_port>]
	[-fetchImage <local directory>]
	[-shutdownDatanode <datanode_host:ipc_port> [upgrade]]
	[-evictWriters <datanode_host:ipc_port>]
	[-getDatanodeInfo <datanode_host:ipc_port>]
	[-metasave filename]
	[-triggerBlockReport [-incremental] [-namenode <namenode_host:ipc_port>] <datanode_host:ipc_port>]
	[-listOpenFiles [-blockingDecommission] [-path <path>]]
	[-help [cmd]]
`

const clientProtocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

// nnClient dials the configured NameNode as the invoking user.
func nnClient(inv *Invocation) (*ipc.Client, string, error) {
	addrs, authority, err := fsshell.NameNodeAddresses(inv.Conf)
	if err != nil {
		return nil, "", err
	}
	if authority == "" {
		authority = addrs[0]
	}
	var opts client.Options
	if err := fsshell.ConnectRetryFromConf(inv.Conf, inv.Env.Stderr, &opts); err != nil {
		return nil, "", err
	}
	cfg := ipc.ClientConfig{Addresses: addrs, User: clientUser(inv), Protocol: clientProtocol,
		ConnectRetry: ipc.ConnectRetry{MaxRetries: opts.ConnectMaxRetries, Interval: opts.ConnectRetryInterval, Notify: opts.OnConnectRetry}}
	if err := withKerberos(inv, &cfg, security.NameNode); err != nil {
		return nil, "", err
	}
	return ipc.NewClient(cfg), "hdfs://" + authority, nil
}

// clientUser is the user the tools call as: HADOOP_USER_NAME, else the
// operating-system user.
func clientUser(inv *Invocation) string {
	u := inv.Env.Getenv("HADOOP_USER_NAME")
	if u == "" {
		if cu, err := user.Current(); err == nil {
			u = cu.Username
		}
	}
	return u
}

// exitAdminError is the exit status of a failed dfsadmin command: Hadoop's
// DFSAdmin returns -1 (255 to the shell) for usage errors, unknown
// commands and failed calls alike; only -reconfig's node errors exit 1.
const exitAdminError = exitMinusOne

// runDfsadmin is `hdfs dfsadmin`; it exits 0, or exitAdminError on any
// error, as Hadoop's does.
func runDfsadmin(inv *Invocation) int {
	args := inv.Args
	if len(args) == 0 {
		fmt.Fprint(inv.Env.Stderr, dfsadminUsage)
		return exitAdminError
	}
	if args[0] == "-help" {
		return dfsadminHelpCmd(inv, args[1:])
	}
	cmd := args[0]
	if code, ok := dfsadminExtra(inv, cmd, args[1:]); ok {
		return code
	}
	switch cmd {
	case "-getBalancerBandwidth":
		return getBalancerBandwidth(inv, args[1:])
	case "-reconfig":
		return reconfig(inv, args[1:])
	case "-finalizeUpgrade":
		return finalizeUpgradeCmd(inv, args[1:])
	case "-upgrade":
		return upgradeCmd(inv, args[1:])
	case "-rollingUpgrade":
		return rollingUpgradeCmd(inv, args[1:])
	case "-refreshNodes":
		return refreshNodes(inv, args[1:])
	case "-report", "-safemode", "-saveNamespace", "-rollEdits", "-metasave", "-setBalancerBandwidth",
		"-allowSnapshot", "-disallowSnapshot":
	default:
		if strings.HasPrefix(cmd, "-") {
			fmt.Fprintf(inv.Env.Stderr, "dfsadmin: %s is not supported yet\n", cmd)
		} else {
			fmt.Fprintf(inv.Env.Stderr, "%s: Unknown command\n", cmd)
			fmt.Fprint(inv.Env.Stderr, dfsadminUsage)
		}
		return exitAdminError
	}
	c, uri, err := nnClient(inv)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "dfsadmin: %v\n", err)
		return exitAdminError
	}
	defer c.Close()
	ctx := context.Background()
	w := inv.Env.Stdout
	fail := func(err error) int {
		fmt.Fprintf(inv.Env.Stderr, "%s: %s\n", cmd[1:], errMessage(err))
		return exitAdminError
	}
	switch cmd {
	case "-safemode":
		if len(args) != 2 {
			fmt.Fprintln(inv.Env.Stderr, "Usage: hdfs dfsadmin [-safemode enter | leave | get | wait | forceExit]")
			return exitAdminError
		}
		return safemode(ctx, inv, c, args[1])
	case "-saveNamespace":
		if err := c.Call(ctx, "saveNamespace", &hdfs.SaveNamespaceRequestProto{}, &hdfs.SaveNamespaceResponseProto{}); err != nil {
			return fail(err)
		}
		fmt.Fprintln(w, "Save namespace successful")
	case "-rollEdits":
		var resp hdfs.RollEditsResponseProto
		if err := c.Call(ctx, "rollEdits", &hdfs.RollEditsRequestProto{}, &resp); err != nil {
			return fail(err)
		}
		fmt.Fprintf(w, "Successfully rolled edit logs.\nNew segment starts at txid %d\n", resp.GetNewSegmentTxId())
	case "-metasave":
		if len(args) != 2 {
			fmt.Fprintln(inv.Env.Stderr, "Usage: hdfs dfsadmin [-metasave filename]")
			return exitAdminError
		}
		if err := c.Call(ctx, "metaSave", &hdfs.MetaSaveRequestProto{Filename: proto.String(args[1])}, &hdfs.MetaSaveResponseProto{}); err != nil {
			return fail(err)
		}
		fmt.Fprintf(w, "Created metasave file %s in the log directory of namenode %s\n", args[1], uri)
	case "-report":
		return report(ctx, inv, c, args[1:])
	case "-allowSnapshot", "-disallowSnapshot":
		if len(args) != 2 {
			fmt.Fprintf(inv.Env.Stderr, "Usage: hdfs dfsadmin [%s <snapshotDir>]\n", cmd)
			return exitAdminError
		}
		var err error
		verb := "Allowing"
		if cmd == "-allowSnapshot" {
			err = c.Call(ctx, "allowSnapshot", &hdfs.AllowSnapshotRequestProto{SnapshotRoot: proto.String(args[1])}, &hdfs.AllowSnapshotResponseProto{})
		} else {
			verb = "Disallowing"
			err = c.Call(ctx, "disallowSnapshot", &hdfs.DisallowSnapshotRequestProto{SnapshotRoot: proto.String(args[1])}, &hdfs.DisallowSnapshotResponseProto{})
		}
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(w, "%s snapshot on %s succeeded\n", verb, args[1])
	case "-setBalancerBandwidth":
		usage := "Usage: hdfs dfsadmin [-setBalancerBandwidth <bandwidth in bytes per second>]"
		if len(args) != 2 {
			fmt.Fprintln(inv.Env.Stderr, usage)
			return exitAdminError
		}
		bw, err := conf.ParseSize(args[1])
		if err != nil {
			fmt.Fprintf(inv.Env.Stderr, "NumberFormatException: %v\n%s\n", err, usage)
			return exitAdminError
		}
		if bw < 0 {
			fmt.Fprintln(inv.Env.Stderr, "Bandwidth should be a non-negative integer")
			return exitAdminError
		}
		if err := c.Call(ctx, "setBalancerBandwidth", &hdfs.SetBalancerBandwidthRequestProto{Bandwidth: proto.Int64(bw)},
			&hdfs.SetBalancerBandwidthResponseProto{}); err != nil {
			fmt.Fprintln(inv.Env.Stderr, "Balancer bandwidth is set failed.")
			return fail(err)
		}
		fmt.Fprintf(w, "Balancer bandwidth is set to %d\n", bw)
	}
	return exitOK
}

// datanodeClient dials a DataNode's IPC port (ClientDatanodeProtocol).
func datanodeClient(inv *Invocation, addr string) (*ipc.Client, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("%q is not host:ipc_port", addr)
	}
	u := inv.Env.Getenv("HADOOP_USER_NAME")
	if u == "" {
		if cu, err := user.Current(); err == nil {
			u = cu.Username
		}
	}
	cfg := ipc.ClientConfig{Addresses: []string{addr}, User: u, Protocol: clientDatanodeProtocol, MaxRetries: 2}
	if err := withKerberos(inv, &cfg, security.DataNode); err != nil {
		return nil, err
	}
	return ipc.NewClient(cfg), nil
}

const clientDatanodeProtocol = "org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol"

// getBalancerBandwidth is dfsadmin -getBalancerBandwidth HOST:IPC_PORT.
func getBalancerBandwidth(inv *Invocation, args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(inv.Env.Stderr, "Usage: hdfs dfsadmin [-getBalancerBandwidth <datanode_host:ipc_port>]")
		return exitAdminError
	}
	c, err := datanodeClient(inv, args[0])
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "getBalancerBandwidth: %v\n", err)
		return exitAdminError
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var resp hdfs.GetBalancerBandwidthResponseProto
	if err := c.Call(ctx, "getBalancerBandwidth", &hdfs.GetBalancerBandwidthRequestProto{}, &resp); err != nil {
		fmt.Fprintf(inv.Env.Stderr, "getBalancerBandwidth: Datanode unreachable. %s\n", errMessage(err))
		return exitAdminError
	}
	fmt.Fprintf(inv.Env.Stdout, "Balancer bandwidth is %d bytes per second.\n", resp.GetBandwidth())
	return exitOK
}

// reconfig is dfsadmin -reconfig datanode HOST:IPC_PORT start|status|properties.
// As in Hadoop, a node type that cannot reconfigure and a failed call to
// the node exit 1; bad arguments exit 255.
func reconfig(inv *Invocation, args []string) int {
	usage := "Usage: hdfs dfsadmin [-reconfig <namenode|datanode> <host:ipc_port> <start|status|properties>]"
	if len(args) != 3 {
		fmt.Fprintln(inv.Env.Stderr, usage)
		return exitAdminError
	}
	kind, addr, op := args[0], args[1], args[2]
	if kind != "datanode" {
		fmt.Fprintf(inv.Env.Stderr, "Node type %s does not support reconfiguration.\n", kind)
		return exitFail
	}
	if op != "start" && op != "status" && op != "properties" {
		fmt.Fprintf(inv.Env.Stderr, "Unknown operation: %s\n", op)
		return exitAdminError
	}
	c, err := datanodeClient(inv, addr)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "reconfig: %v\n", err)
		return exitAdminError
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, errw := inv.Env.Stdout, inv.Env.Stderr
	switch op {
	case "start":
		if err := c.Call(ctx, "startReconfiguration", &hdfs.StartReconfigurationRequestProto{}, &hdfs.StartReconfigurationResponseProto{}); err != nil {
			fmt.Fprintf(errw, "Node [%s] reconfiguring: %s.\n", addr, errMessage(err))
			return exitFail
		}
		fmt.Fprintf(out, "Started reconfiguration task on node [%s].\n", addr)
	case "status":
		var st hdfs.GetReconfigurationStatusResponseProto
		if err := c.Call(ctx, "getReconfigurationStatus", &hdfs.GetReconfigurationStatusRequestProto{}, &st); err != nil {
			fmt.Fprintf(errw, "Node [%s] reloading configuration: %s.\n", addr, errMessage(err))
			return exitFail
		}
		fmt.Fprintf(out, "Reconfiguring status for node [%s]: ", addr)
		if st.GetStartTime() <= 0 {
			fmt.Fprintln(out, "no task was found.")
			return exitOK
		}
		fmt.Fprint(out, "started at "+javaDate(st.GetStartTime()))
		if st.EndTime == nil {
			fmt.Fprintln(out, " and is still running.")
			return exitOK
		}
		fmt.Fprintln(out, " and finished at "+javaDate(st.GetEndTime())+".")
		for _, ch := range st.GetChanges() {
			if ch.ErrorMessage == nil {
				fmt.Fprintf(out, "SUCCESS: Changed property %s\n\tFrom: \"%s\"\n\tTo: \"%s\"\n", ch.GetName(), ch.GetOldValue(), ch.GetNewValue())
			} else {
				fmt.Fprintf(out, "FAILED: Change property %s\n\tFrom: \"%s\"\n\tTo: \"%s\"\n\tError: %s.\n", ch.GetName(), ch.GetOldValue(), ch.GetNewValue(), ch.GetErrorMessage())
			}
		}
	case "properties":
		var resp hdfs.ListReconfigurablePropertiesResponseProto
		if err := c.Call(ctx, "listReconfigurableProperties", &hdfs.ListReconfigurablePropertiesRequestProto{}, &resp); err != nil {
			fmt.Fprintf(errw, "Node [%s] reconfiguration: %s.\n", addr, errMessage(err))
			return exitFail
		}
		fmt.Fprintf(out, "Node [%s] Reconfigurable properties:\n", addr)
		for _, n := range resp.GetName() {
			fmt.Fprintln(out, n)
		}
	}
	return exitOK
}

// javaDate prints epoch milliseconds as Java's Date.toString does.
func javaDate(ms int64) string {
	return time.UnixMilli(ms).Format("Mon Jan 02 15:04:05 MST 2006")
}

func safemode(ctx context.Context, inv *Invocation, c *ipc.Client, action string) int {
	var a hdfs.SafeModeActionProto
	switch strings.ToLower(action) {
	case "enter":
		a = hdfs.SafeModeActionProto_SAFEMODE_ENTER
	case "leave":
		a = hdfs.SafeModeActionProto_SAFEMODE_LEAVE
	case "forceexit":
		a = hdfs.SafeModeActionProto_SAFEMODE_FORCE_EXIT
	case "get", "wait":
		a = hdfs.SafeModeActionProto_SAFEMODE_GET
	default:
		fmt.Fprintln(inv.Env.Stderr, "Usage: hdfs dfsadmin [-safemode enter | leave | get | wait | forceExit]")
		return exitAdminError
	}
	call := func() (bool, error) {
		var resp hdfs.SetSafeModeResponseProto
		err := c.Call(ctx, "setSafeMode", &hdfs.SetSafeModeRequestProto{Action: a.Enum()}, &resp)
		return resp.GetResult(), err
	}
	on, err := call()
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "safemode: %s\n", errMessage(err))
		return exitAdminError
	}
	if strings.EqualFold(action, "wait") {
		// Safe mode ends on its own at start-up; wait for it, as Hadoop does.
		for on {
			time.Sleep(5 * time.Second)
			if on, err = call(); err != nil {
				fmt.Fprintf(inv.Env.Stderr, "safemode: %s\n", errMessage(err))
				return exitAdminError
			}
		}
	}
	if on {
		fmt.Fprintln(inv.Env.Stdout, "Safe mode is ON")
	} else {
		fmt.Fprintln(inv.Env.Stdout, "Safe mode is OFF")
	}
	return exitOK
}

// humanBytes formats a size like Hadoop's StringUtils.byteDesc: an exact
// multiple of its unit without decimals ("24 KB"), else two ("75.16 GB").
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	units := "KMGTPE"
	div, i := int64(unit), 0
	for n/div >= unit && i < len(units)-1 {
		div *= unit
		i++
	}
	if n%div == 0 {
		return fmt.Sprintf("%d %cB", n/div, units[i])
	}
	return fmt.Sprintf("%.2f %cB", float64(n)/float64(div), units[i])
}

func percent(part, whole int64) string {
	if whole <= 0 {
		return "0.00%"
	}
	return fmt.Sprintf("%.2f%%", float64(part)*100/float64(whole))
}

func report(ctx context.Context, inv *Invocation, c *ipc.Client, args []string) int {
	want := map[string]bool{}
	for _, a := range args {
		switch a {
		case "-live", "-dead", "-decommissioning", "-enteringmaintenance", "-inmaintenance":
			want[a] = true
		default:
			fmt.Fprintln(inv.Env.Stderr, "Usage: hdfs dfsadmin [-report] [-live] [-dead] [-decommissioning] [-enteringmaintenance] [-inmaintenance]")
			return exitAdminError
		}
	}
	all := len(want) == 0
	var st hdfs.GetFsStatsResponseProto
	if err := c.Call(ctx, "getFsStats", &hdfs.GetFsStatusRequestProto{}, &st); err != nil {
		fmt.Fprintf(inv.Env.Stderr, "report: %s\n", errMessage(err))
		return exitAdminError
	}
	w := inv.Env.Stdout
	capacity, used, remaining := int64(st.GetCapacity()), int64(st.GetUsed()), int64(st.GetRemaining())
	present := used + remaining
	fmt.Fprintf(w, "Configured Capacity: %d (%s)\n", capacity, humanBytes(capacity))
	fmt.Fprintf(w, "Present Capacity: %d (%s)\n", present, humanBytes(present))
	fmt.Fprintf(w, "DFS Remaining: %d (%s)\n", remaining, humanBytes(remaining))
	fmt.Fprintf(w, "DFS Used: %d (%s)\n", used, humanBytes(used))
	fmt.Fprintf(w, "DFS Used%%: %s\n", percent(used, present))
	var rs hdfs.GetFsReplicatedBlockStatsResponseProto
	if err := c.Call(ctx, "getFsReplicatedBlockStats", &hdfs.GetFsReplicatedBlockStatsRequestProto{}, &rs); err != nil {
		fmt.Fprintf(inv.Env.Stderr, "report: %s\n", errMessage(err))
		return exitAdminError
	}
	fmt.Fprintf(w, "Replicated Blocks:\n")
	fmt.Fprintf(w, "\tUnder replicated blocks: %d\n", rs.GetLowRedundancy())
	fmt.Fprintf(w, "\tBlocks with corrupt replicas: %d\n", rs.GetCorruptBlocks())
	fmt.Fprintf(w, "\tMissing blocks: %d\n", rs.GetMissingBlocks())
	fmt.Fprintf(w, "\tMissing blocks (with replication factor 1): %d\n", rs.GetMissingReplOneBlocks())
	if rs.HighestPrioLowRedundancyBlocks != nil {
		fmt.Fprintf(w, "\tLow redundancy blocks with highest priority to recover: %d\n", rs.GetHighestPrioLowRedundancyBlocks())
	}
	fmt.Fprintf(w, "\tPending deletion blocks: %d\n", rs.GetPendingDeletionBlocks())
	var ec hdfs.GetFsECBlockGroupStatsResponseProto
	if err := c.Call(ctx, "getFsECBlockGroupStats", &hdfs.GetFsECBlockGroupStatsRequestProto{}, &ec); err != nil {
		fmt.Fprintf(inv.Env.Stderr, "report: %s\n", errMessage(err))
		return exitAdminError
	}
	fmt.Fprintf(w, "Erasure Coded Block Groups: \n")
	fmt.Fprintf(w, "\tLow redundancy block groups: %d\n", ec.GetLowRedundancy())
	fmt.Fprintf(w, "\tBlock groups with corrupt internal blocks: %d\n", ec.GetCorruptBlocks())
	fmt.Fprintf(w, "\tMissing block groups: %d\n", ec.GetMissingBlocks())
	if ec.HighestPrioLowRedundancyBlocks != nil {
		fmt.Fprintf(w, "\tLow redundancy blocks with highest priority to recover: %d\n", ec.GetHighestPrioLowRedundancyBlocks())
	}
	fmt.Fprintf(w, "\tPending deletion blocks: %d\n", ec.GetPendingDeletionBlocks())
	fmt.Fprintln(w)
	fmt.Fprintln(w, "-------------------------------------------------")
	// Hadoop's sections: each listed when asked for, or, with no filter,
	// when it has nodes.
	kinds := []struct {
		flag  string
		typ   hdfs.DatanodeReportTypeProto
		title string
	}{
		{"-live", hdfs.DatanodeReportTypeProto_LIVE, "Live"},
		{"-dead", hdfs.DatanodeReportTypeProto_DEAD, "Dead"},
		{"-decommissioning", hdfs.DatanodeReportTypeProto_DECOMMISSIONING, "Decommissioning"},
		{"-enteringmaintenance", hdfs.DatanodeReportTypeProto_ENTERING_MAINTENANCE, "Entering maintenance"},
		{"-inmaintenance", hdfs.DatanodeReportTypeProto_IN_MAINTENANCE, "In maintenance"},
	}
	for _, k := range kinds {
		if !all && !want[k.flag] {
			continue
		}
		var rep hdfs.GetDatanodeReportResponseProto
		if err := c.Call(ctx, "getDatanodeReport", &hdfs.GetDatanodeReportRequestProto{Type: k.typ.Enum()}, &rep); err != nil {
			fmt.Fprintf(inv.Env.Stderr, "report: %s\n", errMessage(err))
			return exitAdminError
		}
		if len(rep.GetDi()) > 0 || want[k.flag] {
			fmt.Fprintf(w, "%s datanodes (%d):\n\n", k.title, len(rep.GetDi()))
		}
		for _, d := range rep.GetDi() {
			writeDatanode(w, d)
		}
	}
	return exitOK
}

// refreshNodes is dfsadmin -refreshNodes: the NameNode reads its host
// files again. With HA every NameNode of the nameservice is asked.
func refreshNodes(inv *Invocation, args []string) int {
	if len(args) != 0 {
		fmt.Fprintln(inv.Env.Stderr, "Usage: hdfs dfsadmin [-refreshNodes]")
		return exitAdminError
	}
	addrs, _, err := fsshell.NameNodeAddresses(inv.Conf)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "refreshNodes: %v\n", err)
		return exitAdminError
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	call := func(addrs []string) error {
		cfg := ipc.ClientConfig{Addresses: addrs, User: clientUser(inv), Protocol: clientProtocol}
		if err := withKerberos(inv, &cfg, security.NameNode); err != nil {
			return err
		}
		c := ipc.NewClient(cfg)
		defer c.Close()
		return c.Call(ctx, "refreshNodes", &hdfs.RefreshNodesRequestProto{}, &hdfs.RefreshNodesResponseProto{})
	}
	if len(addrs) == 1 {
		if err := call(addrs); err != nil {
			fmt.Fprintf(inv.Env.Stderr, "refreshNodes: %s\n", errMessage(err))
			return exitAdminError
		}
		fmt.Fprintln(inv.Env.Stdout, "Refresh nodes successful")
		return exitOK
	}
	failed := false
	for _, a := range addrs {
		if err := call([]string{a}); err != nil {
			fmt.Fprintf(inv.Env.Stdout, "Refresh nodes failed for %s\n", javaAddr(a))
			fmt.Fprintf(inv.Env.Stderr, "refreshNodes: %s: %s\n", a, errMessage(err))
			failed = true
			continue
		}
		fmt.Fprintf(inv.Env.Stdout, "Refresh nodes successful for %s\n", javaAddr(a))
	}
	if failed {
		return exitAdminError
	}
	return exitOK
}

// javaAddr prints host:port as Java's InetSocketAddress does: host/ip:port,
// or /ip:port for an address given as an IP.
func javaAddr(hostport string) string {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport
	}
	if ip := net.ParseIP(host); ip != nil {
		return "/" + host + ":" + port
	}
	ips, err := net.LookupHost(host)
	if err != nil || len(ips) == 0 {
		return hostport
	}
	return host + "/" + ips[0] + ":" + port
}

func writeDatanode(w io.Writer, d *hdfs.DatanodeInfoProto) {
	id := d.GetId()
	capacity, used, remaining, nonDFS := int64(d.GetCapacity()), int64(d.GetDfsUsed()), int64(d.GetRemaining()), int64(d.GetNonDfsUsed())
	fmt.Fprintf(w, "Name: %s:%d (%s)\n", id.GetIpAddr(), id.GetXferPort(), id.GetHostName())
	fmt.Fprintf(w, "Hostname: %s\n", id.GetHostName())
	if loc := d.GetLocation(); loc != "" && loc != "/default-rack" {
		fmt.Fprintf(w, "Rack: %s\n", loc)
	}
	status := "Normal"
	switch d.GetAdminState() {
	case hdfs.DatanodeInfoProto_DECOMMISSION_INPROGRESS:
		status = "Decommission in progress"
	case hdfs.DatanodeInfoProto_DECOMMISSIONED:
		status = "Decommissioned"
	case hdfs.DatanodeInfoProto_IN_MAINTENANCE:
		status = "In maintenance"
	case hdfs.DatanodeInfoProto_ENTERING_MAINTENANCE:
		status = "Entering maintenance"
	}
	fmt.Fprintf(w, "Decommission Status : %s\n", status)
	fmt.Fprintf(w, "Configured Capacity: %d (%s)\n", capacity, humanBytes(capacity))
	fmt.Fprintf(w, "DFS Used: %d (%s)\n", used, humanBytes(used))
	fmt.Fprintf(w, "Non DFS Used: %d (%s)\n", nonDFS, humanBytes(nonDFS))
	fmt.Fprintf(w, "DFS Remaining: %d (%s)\n", remaining, humanBytes(remaining))
	fmt.Fprintf(w, "DFS Used%%: %s\n", percent(used, capacity))
	fmt.Fprintf(w, "DFS Remaining%%: %s\n", percent(remaining, capacity))
	cc, cu := int64(d.GetCacheCapacity()), int64(d.GetCacheUsed())
	cr := max(cc-cu, 0)
	fmt.Fprintf(w, "Configured Cache Capacity: %d (%s)\n", cc, humanBytes(cc))
	fmt.Fprintf(w, "Cache Used: %d (%s)\n", cu, humanBytes(cu))
	fmt.Fprintf(w, "Cache Remaining: %d (%s)\n", cr, humanBytes(cr))
	// As Hadoop's: with no cache, all of it counts as used.
	cacheUsedPct, cacheRemPct := "100.00%", "0.00%"
	if cc > 0 {
		cacheUsedPct, cacheRemPct = percent(cu, cc), percent(cr, cc)
	}
	fmt.Fprintf(w, "Cache Used%%: %s\n", cacheUsedPct)
	fmt.Fprintf(w, "Cache Remaining%%: %s\n", cacheRemPct)
	fmt.Fprintf(w, "Xceivers: %d\n", d.GetXceiverCount())
	fmt.Fprintf(w, "Last contact: %s\n", javaDate(int64(d.GetLastUpdate())))
	if br := int64(d.GetLastBlockReportTime()); br > 0 {
		fmt.Fprintf(w, "Last Block Report: %s\n", javaDate(br))
	} else {
		fmt.Fprintln(w, "Last Block Report: Never")
	}
	fmt.Fprintf(w, "Num of Blocks: %d\n", d.GetNumBlocks())
	fmt.Fprintln(w)
	fmt.Fprintln(w)
}

// errMessage is what Hadoop's tools print for an error: a NameNode's
// exception message without its class name.
func errMessage(err error) string {
	var re *remoteerr.Error
	if errors.As(err, &re) {
		return re.Message
	}
	return err.Error()
}
