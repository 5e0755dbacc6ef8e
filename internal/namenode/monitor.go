package namenode

import (
	"context"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
)

// The NameNode's background loops. Each takes the namesystem lock for a
// step and never holds it while waiting.
//
// The liveness monitor runs for the NameNode's whole life, active or
// standby: a standby tracks which DataNodes are alive too, so that after a
// failover it places blocks on live nodes at once, and leaves start-up
// safe mode once enough blocks are reported (a standby in safe mode is not
// ready to become active, as in Hadoop). The active monitor runs only while
// the NameNode is active (started and stopped by the HA transitions):
// replication and deletion work, the lease monitor, and the edit log's
// automatic roll.

// livenessMonitor declares silent DataNodes dead, advances safe mode and,
// every dfs.namenode.decommission.interval, runs the admin monitor
// (decommissioning and maintenance).
func (nn *NameNode) livenessMonitor(ctx context.Context) {
	t := nn.deps.Clock.NewTicker(min(time.Second, nn.cfg.RedundancyInterval, nn.cfg.DecommissionInterval))
	defer t.Stop()
	ns := nn.ns
	var lastAdmin time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		var dead []blockmgmt.DatanodeID
		now := nn.deps.Clock.Now()
		if now.Sub(lastAdmin) >= nn.cfg.DecommissionInterval {
			lastAdmin = now
			nn.adminMonitorPass(now)
		}
		ns.writeLocked(func() {
			wasSafe := ns.mu.bm.InSafeMode()
			ns.mu.bm.Tick(now)
			if wasSafe && !ns.mu.bm.InSafeMode() {
				nn.deps.Logger.Info("safe mode is OFF", "blocks", ns.mu.bm.NumBlocks(), "datanodes", ns.mu.bm.NumLiveDatanodes())
			}
			dead = ns.mu.bm.CheckHeartbeats(now)
		})
		for _, d := range dead {
			nn.deps.Logger.Warn("DataNode is dead", "uuid", d.UUID, "addr", d.XferAddr())
		}
	}
}

// activeMonitor is the active NameNode's loop.
func (nn *NameNode) activeMonitor(ctx context.Context) {
	tick := min(time.Second, nn.cfg.RedundancyInterval, nn.cfg.LeaseRecheckInterval)
	t := nn.deps.Clock.NewTicker(tick)
	defer t.Stop()
	var lastWork, lastLease time.Time
	ns := nn.ns
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		now := nn.deps.Clock.Now()
		ns.writeLocked(func() {
			if now.Sub(lastWork) >= nn.cfg.RedundancyInterval {
				lastWork = now
				ns.mu.bm.ComputeWork(now)
			}
		})
		// Segments roll by themselves once they hold many transactions
		// (dfs.namenode.edit.log.autoroll.multiplier.threshold ×
		// dfs.namenode.checkpoint.txns), so no segment grows without bound.
		if ns.elog.ShouldRoll() {
			if first, err := nn.rollEdits(ctx); err != nil {
				nn.deps.Logger.Error("automatic edit log roll failed", "err", err)
			} else {
				nn.deps.Logger.Info("edit log rolled automatically", "newSegment", first)
			}
		}
		if now.Sub(lastLease) >= nn.cfg.LeaseRecheckInterval {
			lastLease = now
			ns.leaseMonitorPass(ctx)
		}
	}
}

// startActiveServices starts what only an active runs.
func (nn *NameNode) startActiveServices() []*service {
	svcs := []*service{startService("active monitor", nn.activeMonitor)}
	if nn.cfg.TrashInterval > 0 && nn.role == RoleNameNode {
		svcs = append(svcs, startService("trash emptier", nn.trashEmptier))
	}
	return svcs
}

// startStandbyServices starts what only a standby runs: the edit tailer
// (and the checkpointer, when dfs.ha.standby.checkpoints allows).
func (nn *NameNode) startStandbyServices() []*service {
	svcs := []*service{startService("edit log tailer", nn.tailEdits)}
	if nn.cfg.HA.StandbyCheckpoints {
		svcs = append(svcs, startService("standby checkpointer", nn.standbyCheckpointer))
	}
	return svcs
}
