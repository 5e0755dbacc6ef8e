package cli

// commands is the table of every subcommand Hadoop's hdfs script knows plus
// hdfsgo's own. A nil run means "not supported yet": the command answers so with
// exit status 1 instead of pretending to work.
var commands []command

func init() {
	commands = []command{
		// Admin commands.
		{name: "cacheadmin", group: "Admin Commands", summary: "configure the HDFS cache"},
		{name: "crypto", group: "Admin Commands", summary: "configure HDFS encryption zones"},
		{name: "debug", group: "Admin Commands", summary: "run a debug admin command (e.g. recoverLease)", run: runDebug, usage: debugUsage},
		{name: "dfsadmin", group: "Admin Commands", summary: "run a DFS admin client", run: runDfsadmin, usage: dfsadminUsage},
		{name: "dfsrouteradmin", group: "Admin Commands", summary: "manage Router-based federation"},
		{name: "ec", group: "Admin Commands", summary: "run an HDFS erasure coding command"},
		{name: "fsck", group: "Admin Commands", summary: "run a DFS filesystem checking utility", run: runFsck, usage: fsckUsage},
		{name: "haadmin", group: "Admin Commands", summary: "run a DFS HA admin client", run: runHAAdmin, usage: haadminUsage},
		{name: "jmxget", group: "Admin Commands", summary: "get JMX exported values from the NameNode or DataNode"},
		{name: "oev", group: "Admin Commands", summary: "apply the offline edits viewer to an edits file", run: runOev, usage: oevUsage},
		{name: "oiv", group: "Admin Commands", summary: "apply the offline fsimage viewer to an fsimage", run: runOiv, usage: oivUsage},
		{name: "storagepolicies", group: "Admin Commands", summary: "list, get or set block storage policies", run: runStoragePolicies, usage: storagepoliciesUsage},

		// Client commands.
		{name: "classpath", group: "Client Commands", summary: "print the class path (not meaningful for hdfsgo)"},
		{name: "dfs", group: "Client Commands", summary: "run a filesystem command on the file system", run: runDfs},
		{name: "envvars", group: "Client Commands", summary: "display the computed environment variables"},
		{name: "fetchdt", group: "Client Commands", summary: "fetch a delegation token from the NameNode", run: runFetchdt, usage: fetchdtUsage},
		{name: "getconf", group: "Client Commands", summary: "get configuration values from the configuration", run: runGetconf, usage: getconfUsage},
		{name: "groups", group: "Client Commands", summary: "get the groups which users belong to", run: runGroups, usage: groupsUsage},
		{name: "lsSnapshottableDir", group: "Client Commands", summary: "list all snapshottable dirs owned by the current user", run: runLsSnapshottableDir, usage: lsSnapshottableDirUsage},
		{name: "lsSnapshot", group: "Client Commands", summary: "list all snapshots for a snapshottable directory", run: runLsSnapshot, usage: lsSnapshotUsage},
		{name: "snapshotDiff", group: "Client Commands", summary: "diff two snapshots of a directory or diff the current directory contents with a snapshot", run: runSnapshotDiff, usage: snapshotDiffUsage},
		{name: "version", group: "Client Commands", summary: "print the version", run: runVersion},

		// Daemon commands.
		{name: "balancer", group: "Daemon Commands", summary: "run a cluster balancing utility", run: runBalancer, usage: balancerUsage},
		{name: "datanode", group: "Daemon Commands", summary: "run a DFS DataNode", run: runDatanode, usage: datanodeUsage},
		{name: "dfsrouter", group: "Daemon Commands", summary: "run the DFS router"},
		{name: "diskbalancer", group: "Daemon Commands", summary: "distribute data evenly among disks on a given node"},
		{name: "httpfs", group: "Daemon Commands", summary: "run HttpFS server, the HDFS HTTP gateway"},
		{name: "journalnode", group: "Daemon Commands", summary: "run the DFS JournalNode", run: runJournalnode, usage: journalnodeUsage},
		{name: "mover", group: "Daemon Commands", summary: "run a utility to move block replicas across storage types"},
		{name: "namenode", group: "Daemon Commands", summary: "run the DFS NameNode", run: runNamenode, usage: namenodeUsage},
		{name: "nfs3", group: "Daemon Commands", summary: "run an NFS version 3 gateway"},
		{name: "portmap", group: "Daemon Commands", summary: "run a portmap service"},
		{name: "secondarynamenode", group: "Daemon Commands", summary: "run the DFS Secondary NameNode", run: runSecondary, usage: secondaryUsage},
		{name: "sps", group: "Daemon Commands", summary: "run the external storage policy satisfier"},
		{name: "zkfc", group: "Daemon Commands", summary: "run the ZK Failover Controller daemon", run: runZKFC, usage: zkfcUsage},

		// hdfsgo's own.
		{name: "daemonlog", group: "hdfsgo Commands", summary: "get or set a daemon's log level (Hadoop's hadoop daemonlog)", run: runDaemonlog, usage: daemonlogUsage},
		{name: "bench", group: "hdfsgo Commands", summary: "run a benchmark (namenode, io, scanner)", run: runBench, usage: benchUsage},
		{name: "help", group: "hdfsgo Commands", summary: "print this usage", run: func(*Invocation) int { return exitOK }},
		{name: "minicluster", group: "hdfsgo Commands", summary: "run a NameNode and DataNodes in one process", run: runMinicluster, usage: miniclusterUsage},
	}
}
