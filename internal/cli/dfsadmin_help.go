package cli

import (
	"fmt"
	"sort"
	"strings"
)

// dfsadminHelp is each subcommand's "-help CMD" text: its usage, a colon,
// then what it does, in Hadoop's layout (description lines indented by
// two tabs).
var dfsadminHelp = map[string]string{
	"-report": "-report [-live] [-dead] [-decommissioning] [-enteringmaintenance] [-inmaintenance]: Reports basic filesystem information and statistics.\n" +
		"\t\tThe filters name which DataNodes to list; without one, every DataNode.\n" +
		"\t\tOnly superusers may run it.",
	"-safemode": "-safemode <enter | leave | get | wait | forceExit>: Safe mode maintenance command.\n" +
		"\t\tIn safe mode the NameNode refuses every change to the namespace and\n" +
		"\t\tdoes not replicate or delete blocks. It enters safe mode at start-up\n" +
		"\t\tand leaves it once enough blocks are reported; enter and leave switch\n" +
		"\t\tit by hand, get prints the state, wait waits until it is off.",
	"-saveNamespace": "-saveNamespace: Save the current namespace into the storage directories and\n" +
		"\t\tstart a new edit log segment. Needs safe mode.",
	"-rollEdits": "-rollEdits:\tRolls the edit log on the active NameNode.",
	"-refreshNodes": "-refreshNodes: \tReads dfs.hosts and dfs.hosts.exclude again: DataNodes\n" +
		"\t\tnewly excluded are decommissioned, those allowed again return to service.",
	"-setQuota": "-setQuota <quota> <dirname>...<dirname>: Set the quota <quota> for each directory <dirName>.\n" +
		"\t\tThe quota bounds the number of names (files and directories) in the\n" +
		"\t\ttree below the directory, the directory included. A directory that\n" +
		"\t\tdoes not exist, a file, a quota that is not a positive integer or a\n" +
		"\t\tcaller who is not an administrator is reported as an error.\n" +
		"\t\tA quota of 1 keeps the directory empty.",
	"-clrQuota": "-clrQuota <dirname>...<dirname>: Clear the quota for each directory <dirName>.\n" +
		"\t\tA directory that does not exist, a file or a caller who is not an\n" +
		"\t\tadministrator is reported as an error; a directory without a quota is not.",
	"-setSpaceQuota": "-setSpaceQuota <quota> [-storageType <storagetype>] <dirname>...<dirname>: Set the space quota <quota> for each directory <dirName>.\n" +
		"\t\tThe space quota bounds the bytes of every replica of every file below the\n" +
		"\t\tdirectory: a 1 GB file with 3 replicas takes 3 GB of it. The quota takes\n" +
		"\t\tbinary prefixes (50t, 5m, 3p). With -storageType, the quota of that\n" +
		"\t\tstorage type is set.",
	"-clrSpaceQuota": "-clrSpaceQuota [-storageType <storagetype>] <dirname>...<dirname>: Clear the space quota for each directory <dirName>.\n" +
		"\t\tWith -storageType, the quota of that storage type is cleared.",
	"-finalizeUpgrade": "-finalizeUpgrade: Finalize upgrade of HDFS.\n" +
		"\t\tThe NameNode and the DataNodes delete the state kept for a rollback.",
	"-upgrade": "-upgrade <query | finalize>:\n" +
		"\t\tquery: query the current upgrade status.\n" +
		"\t\tfinalize: finalize the upgrade of HDFS (same as -finalizeUpgrade).",
	"-rollingUpgrade":                      "-rollingUpgrade [<query|prepare|finalize>]: not supported: hdfsgo has no rolling upgrades.",
	"-refreshServiceAcl":                   "-refreshServiceAcl: Reload the service-level authorization policy file.",
	"-refreshUserToGroupsMappings":         "-refreshUserToGroupsMappings: Refresh user-to-groups mappings. Not supported yet.",
	"-refreshSuperUserGroupsConfiguration": "-refreshSuperUserGroupsConfiguration: Refresh superuser proxy groups mappings",
	"-refreshCallQueue":                    "-refreshCallQueue: Reload the call queue from config. Not supported yet.",
	"-printTopology": "-printTopology: Print a tree of the racks and their\n" +
		"\t\tnodes as reported by the Namenode",
	"-setBalancerBandwidth": "-setBalancerBandwidth <bandwidth in bytes per second>:\n" +
		"\t\tChanges the network bandwidth each DataNode may use for balancing\n" +
		"\t\t(dfs.datanode.balance.bandwidthPerSec) until it restarts.",
	"-getBalancerBandwidth": "-getBalancerBandwidth <datanode_host:ipc_port>:\n" +
		"\t\tGet the network bandwidth for the given datanode, in bytes per second.",
	"-fetchImage": "-fetchImage <local directory>:\n" +
		"\t\tDownloads the most recent fsimage from the Name Node and saves it in\n" +
		"\t\tthe specified local directory (as fsimage_<txid>).",
	"-listOpenFiles": "-listOpenFiles [-blockingDecommission] [-path <path>]:\n" +
		"\t\tList every file open for write, with its client's name and host.\n" +
		"\t\t-path lists only those at or below the path. -blockingDecommission\n" +
		"\t\t(the files that keep a DataNode from leaving service) is not supported yet.",
	"-metasave": "-metasave <filename>: \tSave the NameNode's primary data structures\n" +
		"\t\tto <filename> in the directory named by hadoop.log.dir.",
	"-shutdownDatanode": "-shutdownDatanode <datanode_host:ipc_port> [upgrade]\n" +
		"\t\tAsk the DataNode to stop; upgrade is accepted (hdfsgo has no rolling\n" +
		"\t\tupgrades, so it changes nothing).",
	"-evictWriters": "-evictWriters <datanode_host:ipc_port>\n" +
		"\t\tClose every write pipeline through the DataNode; the writers go on\n" +
		"\t\twithout it. Useful before taking it out of service.",
	"-getDatanodeInfo": "-getDatanodeInfo <datanode_host:ipc_port>\n" +
		"\t\tGet the DataNode's uptime, software version and configuration version.",
	"-triggerBlockReport": "-triggerBlockReport [-incremental] [-namenode <namenode_host:ipc_port>] <datanode_host:ipc_port>\n" +
		"\t\tMake the DataNode send a full block report now, or with -incremental\n" +
		"\t\tits pending incremental report; -namenode sends it to that NameNode only.",
	"-reconfig": "-reconfig <datanode|namenode> <host:ipc_port> <start|status|properties>:\n" +
		"\t\tStart a reconfiguration, get its status, or list the properties that\n" +
		"\t\tcan change without a restart (DataNodes only).",
	"-help": "-help [cmd]: \tDisplays help for the given command or all commands if none\n" +
		"\t\tis specified.",
}

// dfsadminHelpCmd is "hdfs dfsadmin -help [CMD]": the help of CMD, or of
// every command when CMD is absent or unknown (as Hadoop's printHelp
// does); it always exits 0.
func dfsadminHelpCmd(inv *Invocation, args []string) int {
	w := inv.Env.Stdout
	if len(args) > 0 {
		name := args[0]
		if !strings.HasPrefix(name, "-") {
			name = "-" + name
		}
		if h, ok := dfsadminHelp[name]; ok {
			fmt.Fprintln(w, h)
			return exitOK
		}
	}
	fmt.Fprint(w, dfsadminUsage)
	fmt.Fprintln(w)
	names := make([]string, 0, len(dfsadminHelp))
	for k := range dfsadminHelp {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(w, "%s\n\n", dfsadminHelp[k])
	}
	return exitOK
}
