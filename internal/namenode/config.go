package namenode

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/user"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/imagetransfer"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/hosts"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	qjclient "github.com/hdfsgo/hdfsgo/internal/qjournal/client"
	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/security/spnego"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// Config is everything the NameNode reads from the configuration, typed. Build it
// with ConfigFrom; tests may fill it directly.
type Config struct {
	// NameDirs are the image directories (dfs.namenode.name.dir; file:// URIs or
	// plain paths; default file://${hadoop.tmp.dir}/dfs/name).
	NameDirs []string
	// EditsDirs are the edit-log directories (dfs.namenode.edits.dir; default the
	// name dirs).
	EditsDirs []string
	// EditsDirMinimum is how many edits dirs must stay writable
	// (dfs.namenode.edits.dir.minimum, default 1); below it the NameNode stops.
	EditsDirMinimum int
	// AsyncEditLogging: a handler does not wait for its ops' fsync; the RPC
	// server holds the reply until the edit log's syncer made them durable
	// (dfs.namenode.edits.asynclogging, default true). False waits in the
	// handler.
	AsyncEditLogging bool
	// BlockDeletionIncrement is dfs.namenode.block.deletion.increment
	// (1000): the blocks an op frees are removed from the block map this
	// many per hold of the namesystem lock.
	BlockDeletionIncrement int
	// LockSliceBudget is hdfsgo.namenode.lock.slice-budget.ms (2 ms): the
	// longest a slice of a long operation holds the namesystem write lock
	// before releasing it (0: the default).
	LockSliceBudget time.Duration
	// RPCAddress is the ClientProtocol listen address (dfs.namenode.rpc-address;
	// else the authority of fs.defaultFS; else 0.0.0.0:8020).
	RPCAddress string
	// HTTPAddress is the web address (dfs.namenode.http-address, 0.0.0.0:9870).
	HTTPAddress string
	// Handlers is the RPC handler count (dfs.namenode.handler.count, 10).
	Handlers int
	// QueueSizePerHandler is ipc.server.handler.queue.size (100).
	QueueSizePerHandler int
	// MaxDataLength is ipc.maximum.data.length (128 MiB).
	MaxDataLength int
	// RPCLimits bound what RPC clients can make the NameNode hold
	// (ipc.server.max.connections, ipc.client.idlethreshold,
	// ipc.server.purge.interval, ...; see ipc.Limits for keys and defaults).
	RPCLimits ipc.Limits
	// HTTPLimits bound the web server's clients (hadoop.http.idle_timeout.ms,
	// hadoop.http.max.threads, ...; see web.Limits).
	HTTPLimits web.Limits

	// SuperUser is the NameNode's OS user, always a superuser; with
	// Kerberos, the short name of its principal.
	SuperUser string
	// Kerberos is the NameNode's identity when
	// hadoop.security.authentication=kerberos (its keytab, principal and
	// hadoop.rpc.protection); nil for SIMPLE.
	Kerberos *security.Identity
	// HTTPAuth is the web server's SPNEGO filter with Kerberos
	// (dfs.web.authentication.kerberos.principal and .keytab,
	// hadoop.http.authentication.type); nil without.
	HTTPAuth *spnego.Filter
	// BlockTokens is dfs.block.access.token.enable (false): block access
	// tokens with every located block, keys sent to the DataNodes.
	BlockTokens bool
	// EncryptDataTransfer is dfs.encrypt.data.transfer (false): the server
	// defaults tell clients to encrypt data transfer, and
	// getDataEncryptionKey hands out keys (block tokens must be on).
	// EncryptAlgorithm is dfs.encrypt.data.transfer.algorithm (unset),
	// carried in the keys.
	EncryptDataTransfer bool
	EncryptAlgorithm    string
	// NameNodePrincipal and JournalNodePrincipal are
	// dfs.namenode.kerberos.principal and
	// dfs.journalnode.kerberos.principal: what this process asks tickets
	// for when it calls another NameNode (tailer, bootstrap, checkpoints,
	// the Backup Node's stream) or the JournalNodes (Kerberos only).
	NameNodePrincipal, JournalNodePrincipal string
	// BlockKeyUpdateInterval is dfs.block.access.key.update.interval (600
	// minutes); BlockTokenLifetime is dfs.block.access.token.lifetime (600
	// minutes).
	BlockKeyUpdateInterval, BlockTokenLifetime time.Duration
	// Delegation tokens: a new master key every DelegationKeyUpdateInterval
	// (dfs.namenode.delegation.key.update-interval, 1 day), tokens live at
	// most DelegationTokenMaxLifetime (.token.max-lifetime, 7 days) and
	// expire DelegationTokenRenewInterval (.token.renew-interval, 1 day)
	// after each renewal.
	DelegationKeyUpdateInterval, DelegationTokenMaxLifetime, DelegationTokenRenewInterval time.Duration
	// SuperGroup is dfs.permissions.superusergroup (supergroup): members are
	// superusers.
	SuperGroup string
	// PermissionsEnabled is dfs.permissions.enabled (true).
	PermissionsEnabled bool
	// AccessTimePrecision is dfs.namenode.accesstime.precision (1 hour; 0 turns
	// access times off).
	AccessTimePrecision time.Duration
	// MaxComponentLength is dfs.namenode.fs-limits.max-component-length (255).
	MaxComponentLength int
	// MaxDirItems is dfs.namenode.fs-limits.max-directory-items (1048576).
	MaxDirItems int
	// MaxBlocksPerFile is dfs.namenode.fs-limits.max-blocks-per-file (10000).
	MaxBlocksPerFile int
	// MinBlockSize is dfs.namenode.fs-limits.min-block-size (1 MiB).
	MinBlockSize int64
	// ListLimit is dfs.ls.limit (1000): entries per getListing reply.
	ListLimit int
	// SnapshotMaxLimit is dfs.namenode.snapshot.max.limit (65536): the
	// snapshots one directory may have.
	SnapshotMaxLimit int
	// SnapshotDiffListingLimit is dfs.namenode.snapshotdiff.listing.limit
	// (1000): the entries of one getSnapshotDiffReportListing reply.
	SnapshotDiffListingLimit int

	// XAttrsEnabled is dfs.namenode.xattrs.enabled (true).
	XAttrsEnabled bool
	// MaxXAttrsPerInode is dfs.namenode.fs-limits.max-xattrs-per-inode (32).
	MaxXAttrsPerInode int
	// MaxXAttrSize is dfs.namenode.fs-limits.max-xattr-size (16384).
	MaxXAttrSize int
	// ACLsEnabled is dfs.namenode.acls.enabled (true).
	ACLsEnabled bool
	// StoragePolicyEnabled is dfs.storage.policy.enabled (true).
	StoragePolicyEnabled bool
	// QuotaByStorageTypeEnabled is dfs.quota.by.storage.type.enabled
	// (true).
	QuotaByStorageTypeEnabled bool
	// TrashCheckpointInterval is fs.trash.checkpoint.interval (0: the
	// trash interval).
	TrashCheckpointInterval time.Duration

	// BlockSize, Replication, BytesPerChecksum, WritePacketSize, FileBufferSize
	// and TrashInterval are the server defaults handed to clients.
	BlockSize        int64
	Replication      int
	MaxReplication   int
	BytesPerChecksum int
	WritePacketSize  int
	FileBufferSize   int
	TrashInterval    time.Duration

	// CheckpointsRetained is dfs.namenode.num.checkpoints.retained (2).
	CheckpointsRetained int
	// ExtraEditsRetained is dfs.namenode.num.extra.edits.retained (1000000).
	ExtraEditsRetained int64

	// RetryCacheEnabled is dfs.namenode.enable.retrycache (true).
	RetryCacheEnabled bool
	// RetryCacheExpiry is dfs.namenode.retrycache.expirytime.millis (10 min).
	RetryCacheExpiry time.Duration
	// RetryCacheHeapPercent is dfs.namenode.retrycache.heap.percent (0.03):
	// the share of the memory the NameNode may use that sizes the retry
	// cache (retryCacheCapacity).
	RetryCacheHeapPercent float64

	// Blocks configures block management: replication, liveness, placement
	// and safe mode (dfs.namenode.replication.*, dfs.heartbeat.interval,
	// dfs.namenode.heartbeat.recheck-interval, dfs.namenode.safemode.*, ...).
	Blocks blockmgmt.Config
	// RedundancyInterval is dfs.namenode.redundancy.interval.seconds (3 s):
	// how often replication and deletion work is computed.
	RedundancyInterval time.Duration
	// HostsFile is dfs.hosts (the include list; "" lets every DataNode
	// in), HostsExcludeFile dfs.hosts.exclude (DataNodes to decommission)
	// and HostsProvider dfs.namenode.hosts.provider.classname (Hadoop's
	// HostFileManager; CombinedHostFileManager reads HostsFile as JSON and
	// no exclude file). They are read at start-up and by refreshNodes.
	HostsFile, HostsExcludeFile, HostsProvider string
	// DecommissionInterval is dfs.namenode.decommission.interval (30 s):
	// how often the admin monitor checks nodes leaving service.
	DecommissionInterval time.Duration
	// TopologyTable is net.topology.table.file.name: "host rack" lines.
	TopologyTable string
	// TopologyScript is net.topology.script.file.name: run with IP addresses
	// as arguments, it prints one rack per address.
	TopologyScript string

	// AutoRollTxns is when the open edit segment is rolled by itself:
	// dfs.namenode.edit.log.autoroll.multiplier.threshold (0.5) ×
	// dfs.namenode.checkpoint.txns (1,000,000).
	AutoRollTxns int64

	// LeaseRecheckInterval is dfs.namenode.lease-recheck-interval-ms (2 s):
	// how often expired leases are looked for.
	LeaseRecheckInterval time.Duration
	// LeaseHardLimit is dfs.namenode.lease-hard-limit-sec (1200 s): after it
	// the NameNode recovers an abandoned file on its own.
	LeaseHardLimit time.Duration

	// HA is the NameNode's part of an HA nameservice (HA.Enabled false
	// otherwise).
	HA HAConfig
	// CheckpointPeriod and CheckpointTxns: a checkpointer (the standby's,
	// the Checkpoint Node's) saves an image once this much time has passed
	// or this many transactions were logged since the last one
	// (dfs.namenode.checkpoint.period 3600 s, dfs.namenode.checkpoint.txns
	// 1,000,000), looking every CheckpointCheckPeriod
	// (dfs.namenode.checkpoint.check.period, 60 s).
	CheckpointPeriod      time.Duration
	CheckpointTxns        int64
	CheckpointCheckPeriod time.Duration
	// ResourceReserved is the free space every name and edits dir must
	// keep (dfs.namenode.resource.du.reserved, 100 MiB); below it the
	// NameNode reports itself unhealthy to failover controllers.
	ResourceReserved int64
	// ImageTransfer configures the image servlet and its client
	// (dfs.image.transfer.*).
	ImageTransfer imagetransfer.Config
	// Checkpoint configures the helpers (Checkpoint Node, Backup Node,
	// Secondary NameNode) and the active's stream to a Backup Node.
	Checkpoint CheckpointConfig
	// QJournal configures the quorum journal client of qjournal:// shared
	// edits (dfs.qjournal.*, dfs.ha.tail-edits.in-progress).
	QJournal qjclient.Config

	// Audit is the audit log (hdfs-audit.log; audit.go).
	Audit AuditConfig
	// Access is proxy users, service-level authorization and static
	// groups (secauth.go).
	Access AccessConfig

	// Testing holds knobs no configuration file can set.
	Testing struct {
		// LeaseSoftLimit replaces Hadoop's fixed 60 s soft limit.
		LeaseSoftLimit time.Duration
		// RecoveryTimeout replaces 30 × dfs.heartbeat.interval, after
		// which a block recovery is retried with another primary.
		RecoveryTimeout time.Duration
		// BeforeApply, when set, runs before each logged op is applied,
		// with the write lock held (a test makes it panic to check that a
		// bug there stops the NameNode).
		BeforeApply func(op.Op)
		// BeforeJournal, when set, runs on a Backup Node before each
		// journal call from the active is handled (a test blocks in it to
		// make the node hang).
		BeforeJournal func()
		// NoErrorReport makes a helper stop without telling the active
		// (as a killed one would).
		NoErrorReport bool
	}
}

// ConfigFrom builds a Config from Hadoop configuration. Errors name the key.
func ConfigFrom(c *conf.Conf) (Config, error) {
	var cfg Config
	var errs []error
	r := c.Reader(&errs)
	num, size, dur, flag := r.Int, r.Size, r.Duration, r.Bool

	var err error
	if cfg.NameDirs, err = dirList(c, conf.DFSNameNodeNameDir); err != nil {
		errs = append(errs, err)
	}
	if cfg.EditsDirs, err = dirList(c, conf.DFSNameNodeEditsDir); err != nil {
		errs = append(errs, err)
	}
	cfg.EditsDirMinimum = int(num(conf.DFSNameNodeEditsDirMinimum))
	cfg.AsyncEditLogging = flag(conf.DFSNameNodeEditsAsyncLogging)
	cfg.BlockDeletionIncrement = int(num(conf.DFSNameNodeBlockDeletionIncrement))
	cfg.LockSliceBudget = dur(conf.HDFSGoNameNodeLockSliceBudget)
	cfg.RPCAddress = rpcAddress(c)
	cfg.HTTPAddress = c.String(conf.DFSNameNodeHTTPAddress)
	cfg.Handlers = int(num(conf.DFSNameNodeHandlerCount))
	cfg.QueueSizePerHandler = int(num(conf.IPCServerHandlerQueueSize))
	cfg.MaxDataLength = int(size(conf.IPCMaximumDataLength))
	if cfg.RPCLimits, err = ipc.LimitsFrom(c); err != nil {
		errs = append(errs, err)
	}
	if cfg.HTTPLimits, err = web.LimitsFrom(c); err != nil {
		errs = append(errs, err)
	}

	cfg.SuperUser = currentUser()
	cfg.BlockTokens = flag(conf.DFSBlockAccessTokenEnable)
	cfg.EncryptDataTransfer = flag(conf.DFSEncryptDataTransfer)
	cfg.EncryptAlgorithm = c.String(conf.DFSEncryptDataTransferAlgorithm)
	cfg.BlockKeyUpdateInterval = dur(conf.DFSBlockAccessKeyUpdateInterval)
	cfg.BlockTokenLifetime = dur(conf.DFSBlockAccessTokenLifetime)
	cfg.DelegationKeyUpdateInterval = dur(conf.DFSNameNodeDelegationKeyUpdateInterval)
	cfg.DelegationTokenMaxLifetime = dur(conf.DFSNameNodeDelegationTokenMaxLifetime)
	cfg.DelegationTokenRenewInterval = dur(conf.DFSNameNodeDelegationTokenRenewInterval)
	cfg.SuperGroup = c.String(conf.DFSPermissionsSuperUserGroup)
	cfg.PermissionsEnabled = flag(conf.DFSPermissionsEnabled)
	cfg.AccessTimePrecision = dur(conf.DFSNameNodeAccessTimePrecision)
	cfg.MaxComponentLength = int(num(conf.DFSNameNodeMaxComponentLength))
	cfg.MaxDirItems = int(num(conf.DFSNameNodeMaxDirectoryItems))
	cfg.MaxBlocksPerFile = int(num(conf.DFSNameNodeMaxBlocksPerFile))
	cfg.MinBlockSize = size(conf.DFSNameNodeMinBlockSize)
	cfg.ListLimit = int(num(conf.DFSListLimit))
	cfg.SnapshotMaxLimit = int(num(conf.DFSNameNodeSnapshotMaxLimit))
	cfg.SnapshotDiffListingLimit = int(num(conf.DFSNameNodeSnapshotDiffListingLimit))
	cfg.XAttrsEnabled = flag(conf.DFSNameNodeXAttrsEnabled)
	cfg.MaxXAttrsPerInode = int(num(conf.DFSNameNodeMaxXAttrsPerInode))
	cfg.MaxXAttrSize = int(num(conf.DFSNameNodeMaxXAttrSize))
	cfg.ACLsEnabled = flag(conf.DFSNameNodeACLsEnabled)
	cfg.StoragePolicyEnabled = flag(conf.DFSStoragePolicyEnabled)
	cfg.QuotaByStorageTypeEnabled = flag(conf.DFSQuotaByStorageTypeEnabled)
	cfg.TrashCheckpointInterval = dur(conf.FSTrashCheckpointInterval)

	cfg.BlockSize = size(conf.DFSBlockSize)
	cfg.Replication = int(num(conf.DFSReplication))
	cfg.MaxReplication = int(num(conf.DFSReplicationMax))
	cfg.BytesPerChecksum = int(num(conf.DFSBytesPerChecksum))
	cfg.WritePacketSize = int(num(conf.DFSClientWritePacketSize))
	cfg.FileBufferSize = int(num("io.file.buffer.size"))
	cfg.TrashInterval = dur(conf.FSTrashInterval)

	cfg.CheckpointsRetained = int(num(conf.DFSNameNodeNumCheckpointsRetained))
	cfg.CheckpointPeriod = dur(conf.DFSNameNodeCheckpointPeriod)
	cfg.CheckpointTxns = num(conf.DFSNameNodeCheckpointTxns)
	cfg.CheckpointCheckPeriod = dur(conf.DFSNameNodeCheckpointCheck)
	haConfigFrom(c, &cfg, &errs)
	cfg.Audit = auditConfigFrom(c, os.Getenv, &errs)
	cfg.Access = accessConfigFrom(c, &errs)
	// After the HA keys: _HOST is the host of this NameNode's own address.
	if cfg.Kerberos, err = security.RoleIdentity(c, security.NameNode, cfg.RPCAddress, os.Getenv); err != nil {
		errs = append(errs, err)
	} else if cfg.Kerberos != nil {
		cfg.SuperUser = cfg.Kerberos.User
		cfg.NameNodePrincipal = c.String(conf.DFSNameNodeKerberosPrincipal)
		if cfg.HTTPAuth, err = spnego.FromConf(c, cfg.Kerberos, conf.DFSNameNodeKeytabFile, security.HostOf(cfg.HTTPAddress), true); err != nil {
			errs = append(errs, fmt.Errorf("namenode: %w", err))
		} else if cfg.HTTPAuth != nil {
			// The checkpoint transfers between NameNodes do not negotiate.
			cfg.HTTPAuth.Exempt = []string{imagetransfer.Path}
		}
		cfg.JournalNodePrincipal = c.String(conf.DFSJournalNodeKerberosPrincipal)
	}
	if qc, err := qjclient.ConfigFrom(c); err != nil {
		errs = append(errs, err)
	} else {
		cfg.QJournal = qc
		cfg.QJournal.User, cfg.QJournal.NameserviceID = cfg.SuperUser, cfg.HA.Nameservice
		if cfg.Kerberos != nil {
			cfg.QJournal.Kerberos = cfg.Kerberos.InitiatorFor(cfg.JournalNodePrincipal)
			cfg.QJournal.Protection = cfg.Kerberos.Acceptor.Protection
		}
	}
	cfg.ResourceReserved = size(conf.DFSNameNodeResourceReserved)
	if cfg.ImageTransfer, err = imagetransfer.ConfigFrom(c); err != nil {
		errs = append(errs, err)
	}
	checkpointConfigFrom(c, &cfg, &errs)
	cfg.ExtraEditsRetained = num(conf.DFSNameNodeNumExtraEditsRetained)
	cfg.RetryCacheEnabled = flag(conf.DFSNameNodeEnableRetryCache)
	cfg.RetryCacheExpiry = dur(conf.DFSNameNodeRetryCacheExpiryTime)
	if v, err := c.Float(conf.DFSNameNodeRetryCacheHeapPercent); err != nil {
		errs = append(errs, err)
	} else if !(v > 0 && v <= 100) {
		errs = append(errs, fmt.Errorf("%s must be above 0 and at most 100: %v", conf.DFSNameNodeRetryCacheHeapPercent, v))
	} else {
		cfg.RetryCacheHeapPercent = v
	}

	b := blockmgmt.DefaultConfig()
	b.DefaultReplication = cfg.Replication
	b.MinReplication = int(num(conf.DFSNameNodeReplicationMin))
	b.MaxReplication = cfg.MaxReplication
	b.HeartbeatInterval = dur(conf.DFSHeartbeatInterval)
	b.HeartbeatRecheckInterval = dur(conf.DFSNameNodeHeartbeatRecheckInterval)
	b.StaleInterval = dur(conf.DFSNameNodeStaleDataNodeInterval)
	b.AvoidStaleForRead = flag(conf.DFSNameNodeAvoidReadStaleDataNode)
	b.AvoidStaleForWrite = flag(conf.DFSNameNodeAvoidWriteStaleDataNode)
	b.ReplicationMaxStreams = int(num(conf.DFSNameNodeReplicationMaxStreams))
	b.ReplicationMaxStreamsHardLimit = int(num(conf.DFSNameNodeReplicationMaxStreamsHardLimit))
	b.ReplicationWorkMultiplier = int(num(conf.DFSNameNodeReplicationWorkMultiplier))
	if v, err := c.Float(conf.DFSNameNodeInvalidateWorkPct); err == nil {
		b.InvalidateWorkPct = v
	} else {
		errs = append(errs, err)
	}
	b.PendingReconstructionTimeout = dur(conf.DFSNameNodeReconstructionPendingTimeout)
	if v, err := c.Float(conf.DFSNameNodeSafeModeThresholdPct); err == nil {
		b.SafeModeThresholdPct = v
	} else {
		errs = append(errs, err)
	}
	b.SafeModeExtension = dur(conf.DFSNameNodeSafeModeExtension)
	b.SafeModeMinDataNodes = int(num(conf.DFSNameNodeSafeModeMinDataNodes))
	b.MaintenanceReplicationMin = int(num(conf.DFSNameNodeMaintenanceReplicationMin))
	b.DecommissionBlocksPerInterval = int(num(conf.DFSNameNodeDecommissionBlocksPerInterval))
	b.DecommissionMaxTrackedNodes = int(num(conf.DFSNameNodeDecommissionMaxTrackedNodes))
	cfg.Blocks = b
	cfg.HostsFile = c.String(conf.DFSHosts)
	cfg.HostsExcludeFile = c.String(conf.DFSHostsExclude)
	cfg.HostsProvider = c.String(conf.DFSNameNodeHostsProviderClassname)
	cfg.DecommissionInterval = dur(conf.DFSNameNodeDecommissionInterval)
	cfg.RedundancyInterval = dur(conf.DFSNameNodeRedundancyInterval)
	cfg.TopologyTable = c.String(conf.NetTopologyTableFileName)
	cfg.TopologyScript = c.String(conf.NetTopologyScriptFileName)
	cfg.LeaseRecheckInterval = dur(conf.DFSNameNodeLeaseRecheckInterval)
	if mult, err := c.Float(conf.DFSNameNodeEditLogAutoRollMultiplier); err != nil {
		errs = append(errs, err)
	} else {
		cfg.AutoRollTxns = int64(mult * float64(num(conf.DFSNameNodeCheckpointTxns)))
	}
	cfg.LeaseHardLimit = dur(conf.DFSNameNodeLeaseHardLimit)
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return cfg, cfg.Validate()
}

// Validate rejects values the NameNode cannot run with, naming the key.
func (cfg *Config) Validate() error {
	var errs []error
	bad := func(key string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("namenode: %s: %s", key, fmt.Sprintf(format, args...)))
	}
	if len(cfg.NameDirs) == 0 {
		bad(conf.DFSNameNodeNameDir, "no name directory configured")
	}
	if _, _, err := net.SplitHostPort(cfg.HTTPAddress); err != nil {
		bad(conf.DFSNameNodeHTTPAddress, "%q is not host:port", cfg.HTTPAddress)
	}
	if len(cfg.EditsDirs) == 0 {
		bad(conf.DFSNameNodeEditsDir, "no edits directory configured")
	}
	if cfg.EditsDirMinimum < 1 || cfg.EditsDirMinimum > len(cfg.EditsDirs) {
		bad(conf.DFSNameNodeEditsDirMinimum, "%d is not between 1 and the %d configured edits dirs", cfg.EditsDirMinimum, len(cfg.EditsDirs))
	}
	if cfg.Handlers < 1 {
		bad(conf.DFSNameNodeHandlerCount, "%d must be at least 1", cfg.Handlers)
	}
	if cfg.QueueSizePerHandler < 1 {
		bad(conf.IPCServerHandlerQueueSize, "%d must be at least 1", cfg.QueueSizePerHandler)
	}
	if cfg.MaxDataLength < 1024 {
		bad(conf.IPCMaximumDataLength, "%d is too small", cfg.MaxDataLength)
	}
	if err := cfg.RPCLimits.Validate(); err != nil {
		errs = append(errs, err)
	}
	if cfg.MaxXAttrsPerInode < 0 {
		bad(conf.DFSNameNodeMaxXAttrsPerInode, "%d is negative", cfg.MaxXAttrsPerInode)
	}
	if cfg.MaxXAttrSize < 0 || cfg.MaxXAttrSize > namespace.MaxXAttrSizeLimit {
		bad(conf.DFSNameNodeMaxXAttrSize, "%d is outside [0, %d]", cfg.MaxXAttrSize, namespace.MaxXAttrSizeLimit)
	}
	if err := cfg.HTTPLimits.Validate(); err != nil {
		errs = append(errs, err)
	}
	if cfg.BlockDeletionIncrement < 1 {
		bad(conf.DFSNameNodeBlockDeletionIncrement, "%d must be at least 1", cfg.BlockDeletionIncrement)
	}
	if cfg.SnapshotDiffListingLimit <= 0 {
		bad(conf.DFSNameNodeSnapshotDiffListingLimit, "%d is not positive", cfg.SnapshotDiffListingLimit)
	}
	if cfg.LockSliceBudget < 0 || cfg.LockSliceBudget > time.Second {
		bad(conf.HDFSGoNameNodeLockSliceBudget, "%v is outside [0, 1s] (0: the default, 2 ms)", cfg.LockSliceBudget)
	}
	if cfg.SnapshotMaxLimit < 0 || cfg.SnapshotMaxLimit > namespace.DefaultSnapshotQuota {
		bad(conf.DFSNameNodeSnapshotMaxLimit, "%d is outside [0, %d]", cfg.SnapshotMaxLimit, namespace.DefaultSnapshotQuota)
	}
	if cfg.ListLimit < 1 {
		bad(conf.DFSListLimit, "%d must be at least 1", cfg.ListLimit)
	}
	if cfg.BlockSize < cfg.MinBlockSize {
		bad(conf.DFSBlockSize, "%d is below %s %d", cfg.BlockSize, conf.DFSNameNodeMinBlockSize, cfg.MinBlockSize)
	}
	if cfg.BytesPerChecksum <= 0 || cfg.BlockSize%int64(cfg.BytesPerChecksum) != 0 {
		bad(conf.DFSBytesPerChecksum, "%d must be positive and divide %s %d", cfg.BytesPerChecksum, conf.DFSBlockSize, cfg.BlockSize)
	}
	if cfg.Replication < 1 || cfg.Replication > cfg.MaxReplication {
		bad(conf.DFSReplication, "%d is not between 1 and %s %d", cfg.Replication, conf.DFSReplicationMax, cfg.MaxReplication)
	}
	if cfg.CheckpointsRetained < 1 {
		bad(conf.DFSNameNodeNumCheckpointsRetained, "%d must be at least 1", cfg.CheckpointsRetained)
	}
	if err := cfg.Blocks.Validate(); err != nil {
		errs = append(errs, err)
	}
	if cfg.AutoRollTxns < 1 {
		bad(conf.DFSNameNodeEditLogAutoRollMultiplier, "× %s gives %d transactions per segment; it must be at least 1", conf.DFSNameNodeCheckpointTxns, cfg.AutoRollTxns)
	}
	if cfg.LeaseRecheckInterval <= 0 {
		bad(conf.DFSNameNodeLeaseRecheckInterval, "%v must be positive", cfg.LeaseRecheckInterval)
	}
	if cfg.LeaseHardLimit <= 0 {
		bad(conf.DFSNameNodeLeaseHardLimit, "%v must be positive", cfg.LeaseHardLimit)
	}
	if cfg.Testing.LeaseSoftLimit < 0 {
		bad("lease soft limit", "%v must not be negative", cfg.Testing.LeaseSoftLimit)
	}
	if cfg.RedundancyInterval <= 0 {
		bad(conf.DFSNameNodeRedundancyInterval, "%v must be positive", cfg.RedundancyInterval)
	}
	switch cfg.HostsProvider {
	case "", hosts.HostFileManager, hosts.CombinedHostFileManager:
	default:
		bad(conf.DFSNameNodeHostsProviderClassname, "%s is not %s or %s", cfg.HostsProvider, hosts.HostFileManager, hosts.CombinedHostFileManager)
	}
	if cfg.DecommissionInterval <= 0 {
		bad(conf.DFSNameNodeDecommissionInterval, "%v must be positive", cfg.DecommissionInterval)
	}
	if cfg.ExtraEditsRetained < 0 {
		bad(conf.DFSNameNodeNumExtraEditsRetained, "%d must not be negative", cfg.ExtraEditsRetained)
	}
	return errors.Join(errs...)
}

// dirList reads a comma list of directories given as file:// URIs or paths.
func dirList(c *conf.Conf, key string) ([]string, error) {
	var dirs []string
	for _, v := range c.Strings(key) {
		d, err := conf.LocalDir(v)
		if err != nil {
			return nil, fmt.Errorf("namenode: %s: %w (from %s)", key, err, c.Source(key))
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
}

func rpcAddress(c *conf.Conf) string {
	if v := c.String(conf.DFSNameNodeRPCAddress); v != "" {
		return v
	}
	if u, err := url.Parse(c.String(conf.FSDefaultFS)); err == nil && u.Scheme == "hdfs" && u.Host != "" {
		if u.Port() == "" {
			return u.Host + ":8020"
		}
		return u.Host
	}
	return "0.0.0.0:8020"
}

func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "hdfs"
}

// peerAuth is how this process authenticates to another NameNode: its
// own Kerberos identity asking for the NameNode principal, or SIMPLE.
func (cfg Config) peerAuth(c ipc.ClientConfig) ipc.ClientConfig {
	if cfg.Kerberos != nil {
		c.Kerberos = cfg.Kerberos.InitiatorFor(cfg.NameNodePrincipal)
		c.Protection = cfg.Kerberos.Acceptor.Protection
	}
	return c
}
