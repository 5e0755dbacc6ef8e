package blockmgmt

import (
	"fmt"
	"time"
)

// DefaultRack is the network location of nodes the topology cannot resolve
// (NetworkTopology.DEFAULT_RACK).
const DefaultRack = "/default-rack"

// Config holds the block manager's settings. Field docs name the Hadoop key and
// its default; DefaultConfig returns the defaults.
type Config struct {
	// DefaultReplication: dfs.replication (3); used when AddBlock gets 0.
	DefaultReplication int
	// MinReplication: dfs.namenode.replication.min (1); replicas a block needs to
	// be COMPLETE and safe.
	MinReplication int
	// MaxReplication: dfs.replication.max (512).
	MaxReplication int

	// HeartbeatInterval: dfs.heartbeat.interval (3 s).
	HeartbeatInterval time.Duration
	// HeartbeatRecheckInterval: dfs.namenode.heartbeat.recheck-interval (5 min).
	// A node is dead after 2 × recheck + 10 × heartbeat (10 min 30 s).
	HeartbeatRecheckInterval time.Duration
	// StaleInterval: dfs.namenode.stale.datanode.interval (30 s).
	StaleInterval time.Duration
	// AvoidStaleForRead: dfs.namenode.avoid.read.stale.datanode (false); when
	// set, stale nodes go last in block locations.
	AvoidStaleForRead bool
	// AvoidStaleForWrite: dfs.namenode.avoid.write.stale.datanode (false); when
	// set, placement skips stale nodes.
	AvoidStaleForWrite bool

	// ConsiderLoad: dfs.namenode.redundancy.considerLoad (true); placement skips
	// nodes with more than ConsiderLoadFactor × the average xceiver count.
	ConsiderLoad bool
	// ConsiderLoadFactor: dfs.namenode.redundancy.considerLoad.factor (2.0).
	ConsiderLoadFactor float64

	// ReplicationMaxStreams: dfs.namenode.replication.max-streams (2); transfers
	// a node may run at once for blocks below the highest priority.
	ReplicationMaxStreams int
	// ReplicationMaxStreamsHardLimit:
	// dfs.namenode.replication.max-streams-hard-limit (4), for every priority.
	ReplicationMaxStreamsHardLimit int
	// ReplicationWorkMultiplier:
	// dfs.namenode.replication.work.multiplier.per.iteration (2); blocks
	// scheduled per ComputeWork = multiplier × live nodes.
	ReplicationWorkMultiplier int
	// InvalidateWorkPct: dfs.namenode.invalidate.work.pct.per.iteration (0.32);
	// share of live nodes that get deletion work per ComputeWork.
	InvalidateWorkPct float64
	// BlocksInvalidatePerHeartbeat: dfs.block.invalidate.limit (1000).
	BlocksInvalidatePerHeartbeat int
	// PendingReconstructionTimeout:
	// dfs.namenode.reconstruction.pending.timeout-sec (5 min).
	PendingReconstructionTimeout time.Duration

	// SafeModeThresholdPct: dfs.namenode.safemode.threshold-pct (0.999). ≤ 0:
	// no block threshold; > 1: safe mode never ends by itself.
	SafeModeThresholdPct float64
	// SafeModeExtension: dfs.namenode.safemode.extension (30 s).
	SafeModeExtension time.Duration
	// SafeModeMinDataNodes: dfs.namenode.safemode.min.datanodes (0).
	SafeModeMinDataNodes int

	// MaintenanceReplicationMin: dfs.namenode.maintenance.replication.min
	// (1): live replicas a block must keep off nodes in maintenance.
	MaintenanceReplicationMin int
	// DecommissionBlocksPerInterval:
	// dfs.namenode.decommission.blocks.per.interval (500000): blocks the
	// admin monitor examines per pass (CheckAdmin); a pass stops between
	// nodes once it has examined this many.
	DecommissionBlocksPerInterval int
	// DecommissionMaxTrackedNodes:
	// dfs.namenode.decommission.max.concurrent.tracked.nodes (100): nodes
	// the monitor works on at once; the others wait in arrival order. 0
	// means no limit.
	DecommissionMaxTrackedNodes int

	// Topology resolves an IP address to a rack path such as "/dc1/rack3"
	// (net.topology.script.file.name / table mapping, resolved by the caller).
	// nil or an empty answer means DefaultRack. It must be pure and fast.
	Topology func(ip string) string

	// StoragePolicy resolves a block storage policy id (a file's effective
	// policy, 0 for the default) to the storage types its replicas go to.
	// nil means no storage-type preference. It must be pure and fast.
	StoragePolicy func(id uint8) StoragePolicy
}

// DefaultConfig returns Hadoop's defaults.
func DefaultConfig() Config {
	return Config{
		DefaultReplication:             3,
		MinReplication:                 1,
		MaxReplication:                 512,
		HeartbeatInterval:              3 * time.Second,
		HeartbeatRecheckInterval:       5 * time.Minute,
		StaleInterval:                  30 * time.Second,
		ConsiderLoad:                   true,
		ConsiderLoadFactor:             2.0,
		ReplicationMaxStreams:          2,
		ReplicationMaxStreamsHardLimit: 4,
		ReplicationWorkMultiplier:      2,
		InvalidateWorkPct:              0.32,
		BlocksInvalidatePerHeartbeat:   1000,
		PendingReconstructionTimeout:   5 * time.Minute,
		SafeModeThresholdPct:           0.999,
		SafeModeExtension:              30 * time.Second,
		MaintenanceReplicationMin:      1,
		DecommissionBlocksPerInterval:  500000,
		DecommissionMaxTrackedNodes:    100,
	}
}

// DeadInterval is how long without a heartbeat makes a node dead:
// 2 × HeartbeatRecheckInterval + 10 × HeartbeatInterval.
func (c Config) DeadInterval() time.Duration {
	return 2*c.HeartbeatRecheckInterval + 10*c.HeartbeatInterval
}

// Validate rejects impossible combinations, naming the Hadoop key.
func (c Config) Validate() error {
	bad := func(key string, v any) error {
		return fmt.Errorf("%w: %s = %v", ErrBadConfig, key, v)
	}
	switch {
	case c.MinReplication < 1:
		return bad("dfs.namenode.replication.min", c.MinReplication)
	case c.MaxReplication < c.MinReplication:
		return bad("dfs.replication.max", c.MaxReplication)
	case c.DefaultReplication < c.MinReplication || c.DefaultReplication > c.MaxReplication:
		return bad("dfs.replication", c.DefaultReplication)
	case c.HeartbeatInterval <= 0:
		return bad("dfs.heartbeat.interval", c.HeartbeatInterval)
	case c.HeartbeatRecheckInterval <= 0:
		return bad("dfs.namenode.heartbeat.recheck-interval", c.HeartbeatRecheckInterval)
	case c.StaleInterval <= 0:
		return bad("dfs.namenode.stale.datanode.interval", c.StaleInterval)
	case c.ReplicationMaxStreams < 1:
		return bad("dfs.namenode.replication.max-streams", c.ReplicationMaxStreams)
	case c.ReplicationMaxStreamsHardLimit < c.ReplicationMaxStreams:
		return bad("dfs.namenode.replication.max-streams-hard-limit", c.ReplicationMaxStreamsHardLimit)
	case c.ReplicationWorkMultiplier < 1:
		return bad("dfs.namenode.replication.work.multiplier.per.iteration", c.ReplicationWorkMultiplier)
	case c.InvalidateWorkPct <= 0 || c.InvalidateWorkPct > 1:
		return bad("dfs.namenode.invalidate.work.pct.per.iteration", c.InvalidateWorkPct)
	case c.BlocksInvalidatePerHeartbeat < 1:
		return bad("dfs.block.invalidate.limit", c.BlocksInvalidatePerHeartbeat)
	case c.PendingReconstructionTimeout <= 0:
		return bad("dfs.namenode.reconstruction.pending.timeout-sec", c.PendingReconstructionTimeout)
	case c.ConsiderLoad && c.ConsiderLoadFactor < 1:
		return bad("dfs.namenode.redundancy.considerLoad.factor", c.ConsiderLoadFactor)
	case c.SafeModeMinDataNodes < 0:
		return bad("dfs.namenode.safemode.min.datanodes", c.SafeModeMinDataNodes)
	case c.MaintenanceReplicationMin < 0:
		return fmt.Errorf("%w: dfs.namenode.maintenance.replication.min = %d < 0", ErrBadConfig, c.MaintenanceReplicationMin)
	case c.MaintenanceReplicationMin > c.DefaultReplication:
		return fmt.Errorf("%w: dfs.namenode.maintenance.replication.min = %d > dfs.replication = %d",
			ErrBadConfig, c.MaintenanceReplicationMin, c.DefaultReplication)
	case c.DecommissionBlocksPerInterval <= 0:
		return bad("dfs.namenode.decommission.blocks.per.interval", c.DecommissionBlocksPerInterval)
	case c.DecommissionMaxTrackedNodes < 0:
		return bad("dfs.namenode.decommission.max.concurrent.tracked.nodes", c.DecommissionMaxTrackedNodes)
	}
	return nil
}
