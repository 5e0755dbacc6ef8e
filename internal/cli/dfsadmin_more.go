package cli

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// Quota values of ClientProtocol setQuota (HdfsConstants).
const (
	quotaDontSet = math.MaxInt64
	quotaReset   = -1
)

// dfsadminExtra runs the dfsadmin subcommands of this file; ok is false
// for any other.
func dfsadminExtra(inv *Invocation, cmd string, args []string) (code int, ok bool) {
	switch cmd {
	case "-setQuota", "-clrQuota", "-setSpaceQuota", "-clrSpaceQuota":
		return quotaCmd(inv, cmd, args), true
	case "-printTopology":
		return printTopology(inv, args), true
	case "-listOpenFiles":
		return listOpenFiles(inv, args), true
	case "-getDatanodeInfo", "-evictWriters", "-shutdownDatanode", "-triggerBlockReport":
		return datanodeAdmin(inv, cmd, args), true
	case "-refreshServiceAcl", "-refreshUserToGroupsMappings", "-refreshSuperUserGroupsConfiguration", "-refreshCallQueue":
		return refreshCmd(inv, cmd, args), true
	case "-fetchImage":
		return fetchImage(inv, args), true
	case "-refresh", "-refreshNamenodes", "-deleteBlockPool", "-restoreFailedStorage", "-getVolumeReport":
		fmt.Fprintf(inv.Env.Stderr, "%s: not supported yet\n", cmd[1:])
		return exitAdminError, true
	}
	return 0, false
}

func dfsadminUsageOf(inv *Invocation, cmd string) int {
	if h, ok := dfsadminHelp[cmd]; ok {
		fmt.Fprintf(inv.Env.Stderr, "Usage: hdfs dfsadmin [%s]\n", strings.SplitN(h, ":", 2)[0])
	} else {
		fmt.Fprint(inv.Env.Stderr, dfsadminUsage)
	}
	return exitAdminError
}

// quotaCmd is -setQuota, -clrQuota, -setSpaceQuota and -clrSpaceQuota: one
// setQuota call per directory, each failure reported as Hadoop does.
func quotaCmd(inv *Invocation, cmd string, args []string) int {
	name := cmd[1:]
	var storageType *hdfs.StorageTypeProto
	takeType := func() error {
		for i := 0; i < len(args); i++ {
			if args[i] != "-storageType" {
				continue
			}
			if i+1 >= len(args) {
				return fmt.Errorf("-storageType needs a storage type")
			}
			v, ok := hdfs.StorageTypeProto_value[strings.ToUpper(args[i+1])]
			if !ok || !quotaTypeSupported(strings.ToUpper(args[i+1])) {
				return fmt.Errorf("Storage type %s is not available. Available storage types are [RAM_DISK, NVDIMM, SSD, DISK, ARCHIVE]", args[i+1])
			}
			t := hdfs.StorageTypeProto(v)
			storageType = &t
			args = append(args[:i:i], args[i+2:]...)
			return nil
		}
		return nil
	}
	var ns, ss int64 = quotaDontSet, quotaDontSet
	switch cmd {
	case "-setQuota":
		if len(args) < 2 {
			return dfsadminUsageOf(inv, cmd)
		}
		n, err := strconv.ParseInt(args[0], 10, 64)
		if err != nil {
			fmt.Fprintf(inv.Env.Stderr, "%s: For input string: \"%s\"\n", name, args[0])
			return dfsadminUsageOf(inv, cmd)
		}
		ns, args = n, args[1:]
	case "-clrQuota":
		if len(args) < 1 {
			return dfsadminUsageOf(inv, cmd)
		}
		ns = quotaReset
	case "-setSpaceQuota":
		if len(args) < 2 {
			return dfsadminUsageOf(inv, cmd)
		}
		n, err := conf.ParseSize(args[0])
		if err != nil {
			fmt.Fprintf(inv.Env.Stderr, "%s: \"%s\" is not a valid value for a quota.\n", name, args[0])
			return dfsadminUsageOf(inv, cmd)
		}
		ss, args = n, args[1:]
		if err := takeType(); err != nil {
			fmt.Fprintf(inv.Env.Stderr, "%s: %v\n", name, err)
			return dfsadminUsageOf(inv, cmd)
		}
	case "-clrSpaceQuota":
		if err := takeType(); err != nil {
			fmt.Fprintf(inv.Env.Stderr, "%s: %v\n", name, err)
			return dfsadminUsageOf(inv, cmd)
		}
		if len(args) < 1 {
			return dfsadminUsageOf(inv, cmd)
		}
		ss = quotaReset
	}
	c, _, err := nnClient(inv)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "%s: %v\n", name, err)
		return exitAdminError
	}
	defer c.Close()
	ctx := context.Background()
	code := exitOK
	for _, p := range args {
		req := &hdfs.SetQuotaRequestProto{Path: proto.String(p), NamespaceQuota: proto.Uint64(uint64(ns)), StoragespaceQuota: proto.Uint64(uint64(ss))}
		if storageType != nil {
			// A quota of one storage type: the space quota is that type's.
			req.StorageType = storageType
		}
		if err := c.Call(ctx, "setQuota", req, &hdfs.SetQuotaResponseProto{}); err != nil {
			fmt.Fprintf(inv.Env.Stderr, "%s: %s\n", name, firstLineOf(errMessage(err)))
			code = exitAdminError
		}
	}
	return code
}

func quotaTypeSupported(t string) bool {
	switch t {
	case "RAM_DISK", "NVDIMM", "SSD", "DISK", "ARCHIVE":
		return true
	}
	return false
}

func firstLineOf(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// printTopology is -printTopology: the DataNodes by rack, racks and nodes
// sorted, each node as ip:port (hostname).
func printTopology(inv *Invocation, args []string) int {
	if len(args) != 0 {
		return dfsadminUsageOf(inv, "-printTopology")
	}
	c, _, err := nnClient(inv)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "printTopology: %v\n", err)
		return exitAdminError
	}
	defer c.Close()
	var resp hdfs.GetDatanodeReportResponseProto
	if err := c.Call(context.Background(), "getDatanodeReport", &hdfs.GetDatanodeReportRequestProto{Type: hdfs.DatanodeReportTypeProto_ALL.Enum()}, &resp); err != nil {
		fmt.Fprintf(inv.Env.Stderr, "printTopology: %s\n", firstLineOf(errMessage(err)))
		return exitAdminError
	}
	type node struct{ name, host string }
	racks := map[string][]node{}
	for _, d := range resp.GetDi() {
		id := d.GetId()
		loc := d.GetLocation()
		if loc == "" {
			loc = "/default-rack"
		}
		racks[loc] = append(racks[loc], node{fmt.Sprintf("%s:%d", id.GetIpAddr(), id.GetXferPort()), id.GetHostName()})
	}
	names := make([]string, 0, len(racks))
	for r := range racks {
		names = append(names, r)
	}
	sort.Strings(names)
	w := inv.Env.Stdout
	for _, r := range names {
		fmt.Fprintf(w, "Rack: %s\n", r)
		nodes := racks[r]
		sort.Slice(nodes, func(i, j int) bool { return nodes[i].name < nodes[j].name })
		for _, n := range nodes {
			fmt.Fprintf(w, "   %s", n.name)
			if n.host != "" {
				fmt.Fprintf(w, " (%s)", n.host)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
	return exitOK
}

// listOpenFiles is -listOpenFiles [-blockingDecommission] [-path PATH]:
// every batch of the NameNode's listOpenFiles, in Hadoop's columns.
func listOpenFiles(inv *Invocation, args []string) int {
	types := []hdfs.OpenFilesTypeProto{hdfs.OpenFilesTypeProto_ALL_OPEN_FILES}
	path := "/"
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-blockingDecommission":
			types = []hdfs.OpenFilesTypeProto{hdfs.OpenFilesTypeProto_BLOCKING_DECOMMISSION}
		case "-path":
			if i+1 >= len(args) || strings.TrimSpace(args[i+1]) == "" {
				return dfsadminUsageOf(inv, "-listOpenFiles")
			}
			i++
			path = args[i]
		default:
			return dfsadminUsageOf(inv, "-listOpenFiles")
		}
	}
	c, _, err := nnClient(inv)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "listOpenFiles: %v\n", err)
		return exitAdminError
	}
	defer c.Close()
	w := inv.Env.Stdout
	ctx := context.Background()
	var prev int64
	var out []*hdfs.OpenFilesBatchResponseProto
	for range 1 << 20 {
		var resp hdfs.ListOpenFilesResponseProto
		err := c.Call(ctx, "listOpenFiles", &hdfs.ListOpenFilesRequestProto{Id: proto.Int64(prev), Types: types, Path: proto.String(path)}, &resp)
		if err != nil {
			fmt.Fprintln(w, "List open files failed.")
			fmt.Fprintf(inv.Env.Stderr, "listOpenFiles: %s\n", firstLineOf(errMessage(err)))
			return exitAdminError
		}
		out = append(out, resp.GetEntries()...)
		if !resp.GetHasMore() || len(resp.GetEntries()) == 0 {
			break
		}
		prev = resp.GetEntries()[len(resp.GetEntries())-1].GetId()
	}
	fmt.Fprintf(w, "%-20s\t%-20s\t%s\n", "Client Host", "Client Name", "Open File Path")
	for _, e := range out {
		fmt.Fprintf(w, "%-20s\t%-20s\t%20s\n", e.GetClientMachine(), e.GetClientName(), e.GetPath())
	}
	return exitOK
}

// datanodeAdmin is -getDatanodeInfo, -evictWriters, -shutdownDatanode and
// -triggerBlockReport: ClientDatanodeProtocol on a DataNode's IPC port.
func datanodeAdmin(inv *Invocation, cmd string, args []string) int {
	name := cmd[1:]
	incremental := false
	nnAddr := ""
	upgrade := false
	switch cmd {
	case "-triggerBlockReport":
		for len(args) > 1 {
			switch args[0] {
			case "-incremental":
				incremental, args = true, args[1:]
				continue
			case "-namenode":
				nnAddr, args = args[1], args[2:]
				continue
			}
			break
		}
		if len(args) != 1 {
			return dfsadminUsageOf(inv, cmd)
		}
	case "-shutdownDatanode":
		if len(args) == 2 && strings.EqualFold(args[1], "upgrade") {
			upgrade, args = true, args[:1]
		}
		if len(args) != 1 {
			return dfsadminUsageOf(inv, cmd)
		}
	default:
		if len(args) != 1 {
			return dfsadminUsageOf(inv, cmd)
		}
	}
	dn := args[0]
	c, err := datanodeClient(inv, dn)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "%s: %v\n", name, err)
		return exitAdminError
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := inv.Env.Stdout
	unreachable := func(err error) int {
		fmt.Fprintf(inv.Env.Stderr, "%s: Datanode unreachable. %s\n", name, firstLineOf(errMessage(err)))
		return exitAdminError
	}
	switch cmd {
	case "-getDatanodeInfo":
		var resp hdfs.GetDatanodeInfoResponseProto
		if err := c.Call(ctx, "getDatanodeInfo", &hdfs.GetDatanodeInfoRequestProto{}, &resp); err != nil {
			return unreachable(err)
		}
		li := resp.GetLocalInfo()
		fmt.Fprintf(w, "Uptime: %d, Software version: %s, Config version: %s\n", li.GetUptime(), li.GetSoftwareVersion(), li.GetConfigVersion())
	case "-evictWriters":
		if err := c.Call(ctx, "evictWriters", &hdfs.EvictWritersRequestProto{}, &hdfs.EvictWritersResponseProto{}); err != nil {
			return unreachable(err)
		}
		fmt.Fprintf(w, "Requested writer eviction to datanode %s\n", dn)
	case "-shutdownDatanode":
		if err := c.Call(ctx, "shutdownDatanode", &hdfs.ShutdownDatanodeRequestProto{ForUpgrade: proto.Bool(upgrade)}, &hdfs.ShutdownDatanodeResponseProto{}); err != nil {
			fmt.Fprintf(inv.Env.Stderr, "%s: %s\n", name, firstLineOf(errMessage(err)))
			return exitAdminError
		}
		fmt.Fprintf(w, "Submitted a shutdown request to datanode %s\n", dn)
	case "-triggerBlockReport":
		req := &hdfs.TriggerBlockReportRequestProto{Incremental: proto.Bool(incremental)}
		if nnAddr != "" {
			req.NnAddress = proto.String(nnAddr)
		}
		if err := c.Call(ctx, "triggerBlockReport", req, &hdfs.TriggerBlockReportResponseProto{}); err != nil {
			fmt.Fprintf(inv.Env.Stderr, "%s: %s\n", name, firstLineOf(errMessage(err)))
			return exitAdminError
		}
		kind := "a full"
		if incremental {
			kind = "an incremental"
		}
		to := ""
		if nnAddr != "" {
			to = " to namenode " + nnAddr
		}
		fmt.Fprintf(w, "Triggering %s block report on %s%s.\n", kind, dn, to)
	}
	return exitOK
}
