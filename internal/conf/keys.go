package conf

import "time"

// Key names. Each constant is the Hadoop property name; its built-in default
// (see defaultTable) is the value shipped in Hadoop 3.x core-default.xml or
// hdfs-default.xml.
const (
	// core-default.xml

	FSDefaultFS                   = "fs.defaultFS"                      // file:///
	HadoopTmpDir                  = "hadoop.tmp.dir"                    // /tmp/hadoop-${user.name}
	HadoopSecurityAuthentication  = "hadoop.security.authentication"    // simple
	IPCMaximumDataLength          = "ipc.maximum.data.length"           // 134217728 bytes
	IPCServerHandlerQueueSize     = "ipc.server.handler.queue.size"     // 100 calls per handler
	IPCClientConnectMaxRetries    = "ipc.client.connect.max.retries"    // 10
	IPCClientConnectRetryInterval = "ipc.client.connect.retry.interval" // 1000 ms
	IPCClientConnectTimeout       = "ipc.client.connect.timeout"        // 20000 ms
	IPCServerListenQueueSize      = "ipc.server.listen.queue.size"      // 256
	IPCClientRPCTimeout           = "ipc.client.rpc-timeout.ms"         // 120000 ms

	// RPC server limits (internal/ipc.Limits). The server reads the
	// ipc.client.* keys too, as Hadoop's does: they describe how long a
	// client may leave its connection idle.

	IPCServerMaxConnections             = "ipc.server.max.connections"                  // 16384 (Hadoop: 0, unlimited)
	IPCClientConnectionMaxIdleTime      = "ipc.client.connection.maxidletime"           // 10000 ms
	IPCClientIdleThreshold              = "ipc.client.idlethreshold"                    // 4000 connections
	IPCClientKillMax                    = "ipc.client.kill.max"                         // 10 per scan
	IPCClientConnectionIdleScanInterval = "ipc.client.connection.idle-scan-interval.ms" // 10000 ms
	IPCServerPurgeInterval              = "ipc.server.purge.interval"                   // 15 minutes

	// HTTP server limits (internal/web.Limits).

	HadoopHTTPIdleTimeout          = "hadoop.http.idle_timeout.ms"         // 60000 ms
	HadoopHTTPMaxThreads           = "hadoop.http.max.threads"             // -1 (Jetty's pool: 250)
	HadoopHTTPMaxRequestHeaderSize = "hadoop.http.max.request.header.size" // 65536 bytes

	FSPermissionsUmaskMode    = "fs.permissions.umask-mode"     // 022
	FSTrashInterval           = "fs.trash.interval"             // 0 minutes (off)
	NetTopologyScriptFileName = "net.topology.script.file.name" // ""
	NetTopologyTableFileName  = "net.topology.table.file.name"  // ""
	IOFileBufferSize          = "io.file.buffer.size"           // 4096 bytes

	// hdfs-default.xml: blocks and replication

	DFSReplication              = "dfs.replication"              // 3
	DFSReplicationMax           = "dfs.replication.max"          // 512
	DFSNameNodeReplicationMin   = "dfs.namenode.replication.min" // 1
	DFSBlockSize                = "dfs.blocksize"                // 134217728 bytes
	DFSBytesPerChecksum         = "dfs.bytes-per-checksum"       // 512
	DFSChecksumType             = "dfs.checksum.type"            // CRC32C
	DFSClientWritePacketSize    = "dfs.client-write-packet-size" // 65536
	DFSClientRetryWindowBase    = "dfs.client.retry.window.base" // 3000 ms
	DFSNameNodeNameDir          = "dfs.namenode.name.dir"        // file://${hadoop.tmp.dir}/dfs/name
	DFSNameNodeEditsDir         = "dfs.namenode.edits.dir"       // ${dfs.namenode.name.dir}
	DFSNameNodeEditsDirMinimum  = "dfs.namenode.edits.dir.minimum"
	DFSNameNodeEditsDirRequired = "dfs.namenode.edits.dir.required"

	// NameNode addresses and handlers. DFSNameNodeRPCAddress and
	// DFSNameNodeHTTPAddress are also the family prefixes of the per
	// nameservice / per NameNode keys (see Suffixed).

	DFSNameNodeRPCAddress          = "dfs.namenode.rpc-address"        // "" (port 8020 when derived from fs.defaultFS)
	DFSNameNodeServiceRPCAddress   = "dfs.namenode.servicerpc-address" // ""
	DFSNameNodeHTTPAddress         = "dfs.namenode.http-address"       // 0.0.0.0:9870
	DFSNameNodeHandlerCount        = "dfs.namenode.handler.count"      // 10
	DFSNameNodeServiceHandlerCount = "dfs.namenode.service.handler.count"

	// Namespace limits and permissions.

	DFSPermissionsEnabled          = "dfs.permissions.enabled"        // true
	DFSPermissionsSuperUserGroup   = "dfs.permissions.superusergroup" // supergroup
	DFSNameNodeAccessTimePrecision = "dfs.namenode.accesstime.precision"
	DFSNameNodeMaxComponentLength  = "dfs.namenode.fs-limits.max-component-length"
	DFSNameNodeMaxDirectoryItems   = "dfs.namenode.fs-limits.max-directory-items"
	DFSNameNodeMinBlockSize        = "dfs.namenode.fs-limits.min-block-size"
	DFSNameNodeMaxBlocksPerFile    = "dfs.namenode.fs-limits.max-blocks-per-file"
	DFSNameNodeMaxXAttrsPerInode   = "dfs.namenode.fs-limits.max-xattrs-per-inode"
	DFSNameNodeMaxXAttrSize        = "dfs.namenode.fs-limits.max-xattr-size"
	DFSListLimit                   = "dfs.ls.limit"

	// Checkpoints and edit retention.

	DFSNameNodeNumCheckpointsRetained        = "dfs.namenode.num.checkpoints.retained"
	DFSNameNodeNumExtraEditsRetained         = "dfs.namenode.num.extra.edits.retained"
	DFSNameNodeMaxExtraEditsSegmentsRetained = "dfs.namenode.max.extra.edits.segments.retained"
	DFSNameNodeCheckpointPeriod              = "dfs.namenode.checkpoint.period"
	DFSNameNodeCheckpointTxns                = "dfs.namenode.checkpoint.txns"
	DFSNameNodeEditLogAutoRollMultiplier     = "dfs.namenode.edit.log.autoroll.multiplier.threshold"
	DFSNameNodeEditLogAutoRollCheckInterval  = "dfs.namenode.edit.log.autoroll.check.interval.ms"
	DFSImageTransferTimeout                  = "dfs.image.transfer.timeout"
	DFSImageTransferBandwidthPerSec          = "dfs.image.transfer.bandwidthPerSec"                   // 0 (unthrottled)
	DFSImageTransferBootstrapBandwidthPerSec = "dfs.image.transfer-bootstrap-standby.bandwidthPerSec" // 0 (unthrottled)
	DFSImageTransferChunkSize                = "dfs.image.transfer.chunksize"                         // 65536 bytes
	DFSNameNodeSupportAllowFormat            = "dfs.namenode.support.allow.format"

	// Checkpoint Node, Backup Node and Secondary NameNode.

	DFSNameNodeCheckpointDir        = "dfs.namenode.checkpoint.dir"         // file://${hadoop.tmp.dir}/dfs/namesecondary
	DFSNameNodeCheckpointEditsDir   = "dfs.namenode.checkpoint.edits.dir"   // ${dfs.namenode.checkpoint.dir}
	DFSNameNodeCheckpointMaxRetries = "dfs.namenode.checkpoint.max-retries" // 3
	DFSNameNodeBackupAddress        = "dfs.namenode.backup.address"         // 0.0.0.0:50100
	DFSNameNodeBackupHTTPAddress    = "dfs.namenode.backup.http-address"    // 0.0.0.0:50105
	DFSNameNodeSecondaryHTTPAddress = "dfs.namenode.secondary.http-address" // 0.0.0.0:9868

	// Safe mode.

	DFSNameNodeSafeModeThresholdPct = "dfs.namenode.safemode.threshold-pct"
	DFSNameNodeSafeModeExtension    = "dfs.namenode.safemode.extension"
	DFSNameNodeSafeModeMinDataNodes = "dfs.namenode.safemode.min.datanodes"

	// Heartbeats, staleness and block reports.

	DFSNameNodeHeartbeatRecheckInterval = "dfs.namenode.heartbeat.recheck-interval"
	DFSHeartbeatInterval                = "dfs.heartbeat.interval"
	DFSNameNodeStaleDataNodeInterval    = "dfs.namenode.stale.datanode.interval"
	DFSNameNodeAvoidReadStaleDataNode   = "dfs.namenode.avoid.read.stale.datanode"
	DFSNameNodeAvoidWriteStaleDataNode  = "dfs.namenode.avoid.write.stale.datanode"
	DFSBlockReportInterval              = "dfs.blockreport.intervalMsec"
	DFSBlockReportInitialDelay          = "dfs.blockreport.initialDelay"

	// DataNode.

	DFSDataNodeDataDir     = "dfs.datanode.data.dir"
	DFSDataNodeAddress     = "dfs.datanode.address"      // 0.0.0.0:9866
	DFSDataNodeHTTPAddress = "dfs.datanode.http.address" // 0.0.0.0:9864
	// DFSDomainSocketPath is the UNIX domain socket a DataNode serves
	// DataTransferProtocol on besides TCP ("_PORT" becomes its xfer port);
	// clients use it for node-local data traffic when
	// DFSClientDomainSocketDataTraffic is true.
	DFSDomainSocketPath              = "dfs.domain.socket.path"                // "" (off)
	DFSClientDomainSocketDataTraffic = "dfs.client.domain.socket.data.traffic" // false
	DFSDataNodeIPCAddress            = "dfs.datanode.ipc.address"              // 0.0.0.0:9867
	DFSDataNodeMaxTransferThreads    = "dfs.datanode.max.transfer.threads"
	DFSDataNodeDuReserved            = "dfs.datanode.du.reserved"
	DFSDataNodeHostname              = "dfs.datanode.hostname"
	DFSClientUseDataNodeHostname     = "dfs.client.use.datanode.hostname"

	// DataNode volumes, scanners and background data movement.

	DFSDataNodeFailedVolumesTolerated = "dfs.datanode.failed.volumes.tolerated"
	DFSDataNodeDiskCheckMinGap        = "dfs.datanode.disk.check.min.gap"
	DFSDataNodeDiskCheckTimeout       = "dfs.datanode.disk.check.timeout"
	DFSDataNodeVolumeChoosingPolicy   = "dfs.datanode.fsdataset.volume.choosing.policy"
	DFSDataNodeBalancedSpaceThreshold = "dfs.datanode.available-space-volume-choosing-policy.balanced-space-threshold"
	DFSDataNodeBalancedSpaceFraction  = "dfs.datanode.available-space-volume-choosing-policy.balanced-space-preference-fraction"
	DFSDataNodeBalanceBandwidth       = "dfs.datanode.balance.bandwidthPerSec"
	DFSDataNodeBalanceMaxMoves        = "dfs.datanode.balance.max.concurrent.moves" // 100
	DFSBlockScannerBytesPerSecond     = "dfs.block.scanner.volume.bytes.per.second"
	DFSDataNodeScanPeriodHours        = "dfs.datanode.scan.period.hours"
	DFSBlockScannerCursorSaveInterval = "dfs.block.scanner.cursor.save.interval.ms"
	DFSDataNodeDirectoryScanInterval  = "dfs.datanode.directoryscan.interval"
	DFSDataNodeDirectoryScanThrottle  = "dfs.datanode.directoryscan.throttle.limit.ms.per.sec"
	DFSDataNodeDirectoryScanThreads   = "dfs.datanode.directoryscan.threads"

	// Host files, decommissioning and maintenance.

	DFSHosts                                 = "dfs.hosts"                             // "" (every DataNode may register)
	DFSHostsExclude                          = "dfs.hosts.exclude"                     // ""
	DFSNameNodeHostsProviderClassname        = "dfs.namenode.hosts.provider.classname" // HostFileManager
	DFSNameNodeDecommissionInterval          = "dfs.namenode.decommission.interval"    // 30 s
	DFSNameNodeDecommissionBlocksPerInterval = "dfs.namenode.decommission.blocks.per.interval"
	DFSNameNodeDecommissionMaxTrackedNodes   = "dfs.namenode.decommission.max.concurrent.tracked.nodes"
	DFSNameNodeMaintenanceReplicationMin     = "dfs.namenode.maintenance.replication.min"

	// The balancer (hdfs balancer).

	DFSBalancerMovedWinWidth     = "dfs.balancer.movedWinWidth"            // 5400000 ms
	DFSBalancerMoverThreads      = "dfs.balancer.moverThreads"             // 1000
	DFSBalancerGetBlocksSize     = "dfs.balancer.getBlocks.size"           // 2 GiB
	DFSBalancerGetBlocksMinSize  = "dfs.balancer.getBlocks.min-block-size" // 10 MiB
	DFSBalancerMaxSizeToMove     = "dfs.balancer.max-size-to-move"         // 10 GiB
	DFSBalancerBlockMoveTimeout  = "dfs.balancer.block-move.timeout"       // 0 ms (none)
	DFSBalancerMaxNoMoveInterval = "dfs.balancer.max-no-move-interval"     // 60000 ms
	DFSBalancerMaxIterationTime  = "dfs.balancer.max-iteration-time"       // 1200000 ms

	// Leases and the write pipeline.

	DFSNameNodeLeaseRecheckInterval             = "dfs.namenode.lease-recheck-interval-ms"
	DFSNameNodeLeaseHardLimit                   = "dfs.namenode.lease-hard-limit-sec"
	DFSClientReplaceDataNodeOnFailureEnable     = "dfs.client.block.write.replace-datanode-on-failure.enable"
	DFSClientReplaceDataNodeOnFailurePolicy     = "dfs.client.block.write.replace-datanode-on-failure.policy"
	DFSClientReplaceDataNodeOnFailureBestEffort = "dfs.client.block.write.replace-datanode-on-failure.best-effort"

	// Retry cache.

	DFSNameNodeEnableRetryCache      = "dfs.namenode.enable.retrycache"
	DFSNameNodeRetryCacheExpiryTime  = "dfs.namenode.retrycache.expirytime.millis"
	DFSNameNodeRetryCacheHeapPercent = "dfs.namenode.retrycache.heap.percent"

	// High availability. DFSHANameNodes is a family prefix only:
	// the key read is dfs.ha.namenodes.<nameservice>.

	DFSNameservices               = "dfs.nameservices"
	DFSHANameNodes                = "dfs.ha.namenodes"
	DFSNameNodeSharedEditsDir     = "dfs.namenode.shared.edits.dir"
	DFSJournalNodeRPCAddress      = "dfs.journalnode.rpc-address"  // 0.0.0.0:8485
	DFSJournalNodeHTTPAddress     = "dfs.journalnode.http-address" // 0.0.0.0:8480
	DFSJournalNodeEditsDir        = "dfs.journalnode.edits.dir"
	DFSHAAutomaticFailoverEnabled = "dfs.ha.automatic-failover.enabled"
	DFSHANameNodeID               = "dfs.ha.namenode.id"
	DFSHAAllowStaleReads          = "dfs.ha.allow.stale.reads"
	DFSHATailEditsPeriod          = "dfs.ha.tail-edits.period"
	DFSHATailEditsInProgress      = "dfs.ha.tail-edits.in-progress"
	DFSHALogRollPeriod            = "dfs.ha.log-roll.period"
	DFSHAStandbyCheckpoints       = "dfs.ha.standby.checkpoints"
	DFSNameNodeCheckpointCheck    = "dfs.namenode.checkpoint.check.period"
	DFSNameNodeResourceReserved   = "dfs.namenode.resource.du.reserved"

	// Redundancy monitor.

	DFSNameNodeRedundancyInterval             = "dfs.namenode.redundancy.interval.seconds"
	DFSNameNodeReconstructionPendingTimeout   = "dfs.namenode.reconstruction.pending.timeout-sec"
	DFSNameNodeReplicationMaxStreams          = "dfs.namenode.replication.max-streams"
	DFSNameNodeReplicationMaxStreamsHardLimit = "dfs.namenode.replication.max-streams-hard-limit"
	DFSNameNodeReplicationWorkMultiplier      = "dfs.namenode.replication.work.multiplier.per.iteration"
	DFSNameNodeInvalidateWorkPct              = "dfs.namenode.invalidate.work.pct.per.iteration"

	// JournalNodes (hdfs journalnode) and the quorum journal client of the
	// NameNode (qjournal:// shared edits). The dfs.qjournal.* timeouts are
	// milliseconds, as in Hadoop.

	DFSJournalNodeHandlerCount           = "dfs.journalnode.handler.count"            // 5
	DFSJournalNodeEditCacheSize          = "dfs.journalnode.edit-cache-size.bytes"    // 1048576 bytes
	DFSJournalNodeEnableSync             = "dfs.journalnode.enable.sync"              // true
	DFSJournalNodeSyncInterval           = "dfs.journalnode.sync.interval"            // 120000 ms
	DFSQJournalQueueSizeLimit            = "dfs.qjournal.queued-edits.limit.mb"       // 10 MiB
	DFSQJournalStartSegmentTimeout       = "dfs.qjournal.start-segment.timeout.ms"    // 20000 ms
	DFSQJournalPrepareRecoveryTimeout    = "dfs.qjournal.prepare-recovery.timeout.ms" // 120000 ms
	DFSQJournalAcceptRecoveryTimeout     = "dfs.qjournal.accept-recovery.timeout.ms"  // 120000 ms
	DFSQJournalFinalizeSegmentTimeout    = "dfs.qjournal.finalize-segment.timeout.ms" // 120000 ms
	DFSQJournalSelectInputStreamsTimeout = "dfs.qjournal.select-input-streams.timeout.ms"
	DFSQJournalGetJournalStateTimeout    = "dfs.qjournal.get-journal-state.timeout.ms" // 120000 ms
	DFSQJournalNewEpochTimeout           = "dfs.qjournal.new-epoch.timeout.ms"         // 120000 ms
	DFSQJournalWriteTxnsTimeout          = "dfs.qjournal.write-txns.timeout.ms"        // 20000 ms
	DFSQJournalHTTPOpenTimeout           = "dfs.qjournal.http.open.timeout.ms"         // 60000 ms
	DFSQJournalHTTPReadTimeout           = "dfs.qjournal.http.read.timeout.ms"         // 60000 ms
	DFSQJMOperationsTimeout              = "dfs.qjm.operations.timeout"                // 60 s
	DFSHATailEditsQJMRPCMaxTxns          = "dfs.ha.tail-edits.qjm.rpc.max-txns"        // 5000

	// HA administration and fencing (hdfs haadmin, the failover
	// controller). DFSHAFencingMethods has no default: unset means no
	// fencer is configured, which Hadoop tells apart from an empty list.

	HAFCCLICheckRPCTimeout             = "ha.failover-controller.cli-check.rpc-timeout.ms"          // 20000 ms
	HAFCGracefulFenceRPCTimeout        = "ha.failover-controller.graceful-fence.rpc-timeout.ms"     // 5000 ms
	HAFCGracefulFenceConnectionRetries = "ha.failover-controller.graceful-fence.connection.retries" // 1
	HAFCNewActiveRPCTimeout            = "ha.failover-controller.new-active.rpc-timeout.ms"         // 60000 ms
	DFSHAFencingMethods                = "dfs.ha.fencing.methods"                                   // unset
	// HDFSGoHAFencingShellTimeout bounds one shell(...) fencing command;
	// Hadoop's shell fencer has none. 0 means no bound.
	HDFSGoHAFencingShellTimeout = "hdfsgo.ha.fencing.shell.timeout" // 300 s

	// Automatic failover: the ZooKeeper failover controller (hdfs zkfc).
	// The ha.zookeeper.* keys may also be set per nameservice and per
	// NameNode (key.NS, key.NS.NN), as Hadoop's ZKFC_CONF_KEYS.

	HAZooKeeperQuorum         = "ha.zookeeper.quorum"                                         // unset
	HAZooKeeperSessionTimeout = "ha.zookeeper.session-timeout.ms"                             // 10000 ms
	HAZooKeeperParentZNode    = "ha.zookeeper.parent-znode"                                   // /hadoop-ha
	HAZooKeeperACL            = "ha.zookeeper.acl"                                            // world:anyone:rwcda
	HAZooKeeperAuth           = "ha.zookeeper.auth"                                           // unset
	HAFCElectorZKOpRetries    = "ha.failover-controller.active-standby-elector.zk.op.retries" // 3
	HAHMCheckInterval         = "ha.health-monitor.check-interval.ms"                         // 1000 ms
	HAHMSleepAfterDisconnect  = "ha.health-monitor.sleep-after-disconnect.ms"                 // 1000 ms
	HAHMRPCTimeout            = "ha.health-monitor.rpc-timeout.ms"                            // 45000 ms
	HAHMRPCConnectMaxRetries  = "ha.health-monitor.rpc.connect.max.retries"                   // 1
	DFSHAZKFCPort             = "dfs.ha.zkfc.port"                                            // 8019
	DFSClusterAdministrators  = "dfs.cluster.administrators"                                  // " " (nobody)
	// HDFSGoHAZooKeeperBindHost is the local address the failover
	// controller's ZooKeeper connections come from; unset lets the system
	// choose. Hadoop has no such key. It serves hosts (and tests on
	// loopback) where the controller must be told apart from other
	// processes by its address.
	HDFSGoHAZooKeeperBindHost = "hdfsgo.ha.zookeeper.bind-host" // unset
)

// Namespace features: extended attributes, ACLs, storage policies, trash.
const (
	DFSNameNodeXAttrsEnabled  = "dfs.namenode.xattrs.enabled"  // true
	DFSNameNodeACLsEnabled    = "dfs.namenode.acls.enabled"    // true
	DFSStoragePolicyEnabled   = "dfs.storage.policy.enabled"   // true
	FSTrashCheckpointInterval = "fs.trash.checkpoint.interval" // 0 minutes (= fs.trash.interval)
)

// Quotas by storage type.
const (
	DFSQuotaByStorageTypeEnabled = "dfs.quota.by.storage.type.enabled" // true
)

// The shell's keys (hdfs dfs, hdfs dfsadmin, hdfs groups).
const (
	HadoopShellSafelyDeleteLimitNumFiles = "hadoop.shell.safely.delete.limit.num.files" // 100
	DFSNameNodeListOpenFilesNumResponses = "dfs.namenode.list.openfiles.num.responses"  // 1000
)

// NameNode at scale.
const (
	// DFSNameNodeEditsAsyncLogging makes a NameNode handler hand the wait
	// for an op's fsync to the edit log's syncer and go back to the pool,
	// the reply being sent once the op is durable (Hadoop's key, true by
	// default since Hadoop 3).
	DFSNameNodeEditsAsyncLogging = "dfs.namenode.edits.asynclogging" // true
)

// NameNode at scale: long operations in slices.
const (
	// DFSNameNodeBlockDeletionIncrement is how many blocks freed by one
	// delete (or another op freeing blocks) are removed from the block map
	// under one hold of the namesystem lock; the rest follow in holds of
	// their own (Hadoop's key and default).
	DFSNameNodeBlockDeletionIncrement = "dfs.namenode.block.deletion.increment" // 1000
)

// NameNode at scale: slices bounded by time.
const (
	// HDFSGoNameNodeLockSliceBudget is how long one slice of a long
	// operation (a full block report, the removal of a big delete's
	// blocks, a big setReplication) may hold the namesystem write lock
	// before it releases it for others; a slice also ends at its count
	// (dfs.namenode.block.deletion.increment for deletions).
	HDFSGoNameNodeLockSliceBudget = "hdfsgo.namenode.lock.slice-budget.ms" // 2 ms
)

// DefaultNameNodeRPCPort is the port used when a NameNode address is taken
// from an hdfs:// URI without a port.
const DefaultNameNodeRPCPort = "8020"

// keyDef is one row of the built-in default table.
type keyDef struct {
	key string
	// def is the default value, written as in Hadoop's *-default.xml.
	def string
	// unit is the unit of a bare number for Duration; zero for keys that
	// are not durations.
	unit time.Duration
}

const (
	ms     = time.Millisecond
	sec    = time.Second
	minute = time.Minute
)

// defaultTable returns the built-in defaults. It is a function so the table
// cannot be changed by anyone.
func defaultTable() []keyDef {
	return append(append(securityTable(), secauthTable()...), []keyDef{
		{FSDefaultFS, "file:///", 0},
		{HadoopTmpDir, "/tmp/hadoop-${user.name}", 0},
		{HadoopSecurityAuthentication, "simple", 0},
		{IPCMaximumDataLength, "134217728", 0},
		{IPCServerHandlerQueueSize, "100", 0},
		{IPCClientConnectMaxRetries, "10", 0},
		{IPCClientConnectRetryInterval, "1000", ms},
		{IPCClientConnectTimeout, "20000", ms},
		{IPCServerListenQueueSize, "256", 0},
		{IPCClientRPCTimeout, "120000", ms},
		// Not Hadoop's 0 (unlimited): see ipc.Limits.MaxConnections.
		{IPCServerMaxConnections, "16384", 0},
		{IPCClientConnectionMaxIdleTime, "10000", ms},
		{IPCClientIdleThreshold, "4000", 0},
		{IPCClientKillMax, "10", 0},
		{IPCClientConnectionIdleScanInterval, "10000", ms},
		{IPCServerPurgeInterval, "15", minute},
		{HadoopHTTPIdleTimeout, "60000", ms},
		{HadoopHTTPMaxThreads, "-1", 0},
		{HadoopHTTPMaxRequestHeaderSize, "65536", 0},
		{FSPermissionsUmaskMode, "022", 0},
		{FSTrashInterval, "0", minute},
		{NetTopologyScriptFileName, "", 0},
		{NetTopologyTableFileName, "", 0},
		{IOFileBufferSize, "4096", 0},

		{DFSReplication, "3", 0},
		{DFSReplicationMax, "512", 0},
		{DFSNameNodeReplicationMin, "1", 0},
		{DFSBlockSize, "134217728", 0},
		{DFSBytesPerChecksum, "512", 0},
		{DFSChecksumType, "CRC32C", 0},
		{DFSClientWritePacketSize, "65536", 0},
		{DFSClientRetryWindowBase, "3000", ms},
		{DFSNameNodeNameDir, "file://${hadoop.tmp.dir}/dfs/name", 0},
		{DFSNameNodeEditsDir, "${dfs.namenode.name.dir}", 0},
		{DFSNameNodeEditsDirMinimum, "1", 0},
		{DFSNameNodeEditsDirRequired, "", 0},

		{DFSNameNodeRPCAddress, "", 0},
		{DFSNameNodeServiceRPCAddress, "", 0},
		{DFSNameNodeHTTPAddress, "0.0.0.0:9870", 0},
		{DFSNameNodeHandlerCount, "10", 0},
		{DFSNameNodeServiceHandlerCount, "10", 0},

		{DFSPermissionsEnabled, "true", 0},
		{DFSPermissionsSuperUserGroup, "supergroup", 0},
		{DFSNameNodeAccessTimePrecision, "3600000", ms},
		{DFSNameNodeMaxComponentLength, "255", 0},
		{DFSNameNodeMaxDirectoryItems, "1048576", 0},
		{DFSNameNodeMinBlockSize, "1048576", 0},
		{DFSNameNodeMaxBlocksPerFile, "10000", 0},
		{DFSNameNodeMaxXAttrsPerInode, "32", 0},
		{DFSNameNodeMaxXAttrSize, "16384", 0},
		{DFSListLimit, "1000", 0},

		{DFSNameNodeNumCheckpointsRetained, "2", 0},
		{DFSNameNodeNumExtraEditsRetained, "1000000", 0},
		{DFSNameNodeMaxExtraEditsSegmentsRetained, "10000", 0},
		{DFSNameNodeCheckpointPeriod, "3600s", sec},
		{DFSNameNodeCheckpointTxns, "1000000", 0},
		{DFSNameNodeEditLogAutoRollMultiplier, "0.5", 0},
		{DFSNameNodeEditLogAutoRollCheckInterval, "300000", ms},
		{DFSImageTransferTimeout, "60000", ms},
		{DFSImageTransferBandwidthPerSec, "0", 0},
		{DFSImageTransferBootstrapBandwidthPerSec, "0", 0},
		{DFSImageTransferChunkSize, "65536", 0},
		{DFSNameNodeSupportAllowFormat, "true", 0},
		{DFSNameNodeCheckpointDir, "file://${hadoop.tmp.dir}/dfs/namesecondary", 0},
		{DFSNameNodeCheckpointEditsDir, "${dfs.namenode.checkpoint.dir}", 0},
		{DFSNameNodeCheckpointMaxRetries, "3", 0},
		{DFSNameNodeBackupAddress, "0.0.0.0:50100", 0},
		{DFSNameNodeBackupHTTPAddress, "0.0.0.0:50105", 0},
		{DFSNameNodeSecondaryHTTPAddress, "0.0.0.0:9868", 0},

		{DFSNameNodeSafeModeThresholdPct, "0.999f", 0},
		{DFSNameNodeSafeModeExtension, "30000", ms},
		{DFSNameNodeSafeModeMinDataNodes, "0", 0},

		{DFSNameNodeHeartbeatRecheckInterval, "300000", ms},
		{DFSHeartbeatInterval, "3s", sec},
		{DFSNameNodeStaleDataNodeInterval, "30000", ms},
		{DFSNameNodeAvoidReadStaleDataNode, "false", 0},
		{DFSNameNodeAvoidWriteStaleDataNode, "false", 0},
		{DFSBlockReportInterval, "21600000", ms},
		{DFSBlockReportInitialDelay, "0s", sec},

		{DFSDataNodeDataDir, "file://${hadoop.tmp.dir}/dfs/data", 0},
		{DFSDataNodeAddress, "0.0.0.0:9866", 0},
		{DFSDataNodeHTTPAddress, "0.0.0.0:9864", 0},
		{DFSDomainSocketPath, "", 0},
		{DFSClientDomainSocketDataTraffic, "false", 0},
		{DFSDataNodeIPCAddress, "0.0.0.0:9867", 0},
		{DFSDataNodeMaxTransferThreads, "4096", 0},
		{DFSDataNodeDuReserved, "0", 0},
		{DFSDataNodeHostname, "", 0},
		{DFSClientUseDataNodeHostname, "false", 0},
		{DFSDataNodeFailedVolumesTolerated, "0", 0},
		{DFSDataNodeDiskCheckMinGap, "15m", ms},
		{DFSDataNodeDiskCheckTimeout, "10m", ms},
		{DFSDataNodeVolumeChoosingPolicy, "", 0},
		{DFSDataNodeBalancedSpaceThreshold, "10737418240", 0},
		{DFSDataNodeBalancedSpaceFraction, "0.75f", 0},
		{DFSDataNodeBalanceBandwidth, "100m", 0},
		{DFSDataNodeBalanceMaxMoves, "100", 0},
		{DFSBlockScannerBytesPerSecond, "1048576", 0},
		{DFSDataNodeScanPeriodHours, "504", time.Hour},
		{DFSBlockScannerCursorSaveInterval, "600000", ms},
		{DFSDataNodeDirectoryScanInterval, "21600", sec},
		{DFSDataNodeDirectoryScanThrottle, "1000", 0},
		{DFSDataNodeDirectoryScanThreads, "1", 0},

		{DFSHosts, "", 0},
		{DFSHostsExclude, "", 0},
		{DFSNameNodeHostsProviderClassname, "org.apache.hadoop.hdfs.server.blockmanagement.HostFileManager", 0},
		{DFSNameNodeDecommissionInterval, "30s", sec},
		{DFSNameNodeDecommissionBlocksPerInterval, "500000", 0},
		{DFSNameNodeDecommissionMaxTrackedNodes, "100", 0},
		{DFSNameNodeMaintenanceReplicationMin, "1", 0},

		{DFSBalancerMovedWinWidth, "5400000", ms},
		{DFSBalancerMoverThreads, "1000", 0},
		{DFSBalancerGetBlocksSize, "2147483648", 0},
		{DFSBalancerGetBlocksMinSize, "10485760", 0},
		{DFSBalancerMaxSizeToMove, "10737418240", 0},
		{DFSBalancerBlockMoveTimeout, "0", ms},
		{DFSBalancerMaxNoMoveInterval, "60000", ms},
		{DFSBalancerMaxIterationTime, "1200000", ms},

		{DFSNameNodeLeaseRecheckInterval, "2000", ms},
		{DFSNameNodeLeaseHardLimit, "1200", sec},
		{DFSClientReplaceDataNodeOnFailureEnable, "true", 0},
		{DFSClientReplaceDataNodeOnFailurePolicy, "DEFAULT", 0},
		{DFSClientReplaceDataNodeOnFailureBestEffort, "false", 0},

		{DFSNameNodeEnableRetryCache, "true", 0},
		{DFSNameNodeRetryCacheExpiryTime, "600000", ms},
		{DFSNameNodeRetryCacheHeapPercent, "0.03f", 0},

		{DFSNameservices, "", 0},
		{DFSNameNodeSharedEditsDir, "", 0},
		{DFSJournalNodeRPCAddress, "0.0.0.0:8485", 0},
		{DFSJournalNodeHTTPAddress, "0.0.0.0:8480", 0},
		{DFSJournalNodeEditsDir, "/tmp/hadoop/dfs/journalnode/", 0},
		{DFSHAAutomaticFailoverEnabled, "false", 0},
		{DFSHANameNodeID, "", 0},
		{DFSHAAllowStaleReads, "false", 0},
		{DFSHATailEditsPeriod, "60s", sec},
		{DFSHATailEditsInProgress, "false", 0},
		{DFSHALogRollPeriod, "120s", sec},
		{DFSHAStandbyCheckpoints, "true", 0},
		{DFSNameNodeCheckpointCheck, "60s", sec},
		{DFSNameNodeResourceReserved, "104857600", 0},

		{DFSNameNodeRedundancyInterval, "3s", sec},
		{DFSNameNodeReconstructionPendingTimeout, "300", sec},
		{DFSNameNodeReplicationMaxStreams, "2", 0},
		{DFSNameNodeReplicationMaxStreamsHardLimit, "4", 0},
		{DFSNameNodeReplicationWorkMultiplier, "2", 0},
		{DFSNameNodeInvalidateWorkPct, "0.32f", 0},

		{DFSJournalNodeHandlerCount, "5", 0},
		{DFSJournalNodeEditCacheSize, "1048576", 0},
		{DFSJournalNodeEnableSync, "true", 0},
		{DFSJournalNodeSyncInterval, "120000", ms},
		{DFSQJournalQueueSizeLimit, "10", 0},
		{DFSQJournalStartSegmentTimeout, "20000", ms},
		{DFSQJournalPrepareRecoveryTimeout, "120000", ms},
		{DFSQJournalAcceptRecoveryTimeout, "120000", ms},
		{DFSQJournalFinalizeSegmentTimeout, "120000", ms},
		{DFSQJournalSelectInputStreamsTimeout, "20000", ms},
		{DFSQJournalGetJournalStateTimeout, "120000", ms},
		{DFSQJournalNewEpochTimeout, "120000", ms},
		{DFSQJournalWriteTxnsTimeout, "20000", ms},
		{DFSQJournalHTTPOpenTimeout, "60000", ms},
		{DFSQJournalHTTPReadTimeout, "60000", ms},
		{DFSQJMOperationsTimeout, "60s", ms},
		{DFSHATailEditsQJMRPCMaxTxns, "5000", 0},

		{HAFCCLICheckRPCTimeout, "20000", ms},
		{HAFCGracefulFenceRPCTimeout, "5000", ms},
		{HAFCGracefulFenceConnectionRetries, "1", 0},
		{HAFCNewActiveRPCTimeout, "60000", ms},
		{HDFSGoHAFencingShellTimeout, "300s", sec},

		{HAZooKeeperSessionTimeout, "10000", ms},
		{HAZooKeeperParentZNode, "/hadoop-ha", 0},
		{HAZooKeeperACL, "world:anyone:rwcda", 0},
		{HAFCElectorZKOpRetries, "3", 0},
		{HAHMCheckInterval, "1000", ms},
		{HAHMSleepAfterDisconnect, "1000", ms},
		{HAHMRPCTimeout, "45000", ms},
		{HAHMRPCConnectMaxRetries, "1", 0},
		{DFSHAZKFCPort, "8019", 0},
		{DFSClusterAdministrators, " ", 0},

		{DFSNameNodeXAttrsEnabled, "true", 0},
		{DFSNameNodeACLsEnabled, "true", 0},
		{DFSStoragePolicyEnabled, "true", 0},
		{DFSQuotaByStorageTypeEnabled, "true", 0},
		{FSTrashCheckpointInterval, "0", minute},
		{HadoopShellSafelyDeleteLimitNumFiles, "100", 0},
		{DFSNameNodeListOpenFilesNumResponses, "1000", 0},

		// Snapshots (keys_snapshot.go).
		{DFSNameNodeSnapshotMaxLimit, "65536", 0},
		{DFSNameNodeSnapshotDiffListingLimit, "1000", 0},

		// Web endpoints (keys_web.go).
		{HadoopPrometheusEndpointEnabled, "false", 0},
		// NameNode at scale.
		{DFSNameNodeEditsAsyncLogging, "true", 0},
		// NameNode at scale: long operations in slices.
		{DFSNameNodeBlockDeletionIncrement, "1000", 0},
		// NameNode at scale: slices bounded by time.
		{HDFSGoNameNodeLockSliceBudget, "2", ms},
	}...)
}
