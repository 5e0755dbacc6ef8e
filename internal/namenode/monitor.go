package namenode

import (
	"context"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
)

// monitor is the NameNode's background loop over block management: safe-mode
// progress, dead-DataNode detection and replication/deletion work. It takes the
// namesystem lock for each step and never holds it while waiting. Started by
// Start, stopped by Close.
func (nn *NameNode) monitor(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.Second
	tick = min(tick, nn.cfg.RedundancyInterval, nn.cfg.LeaseRecheckInterval)
	t := nn.deps.Clock.NewTicker(tick)
	defer t.Stop()
	var lastWork, lastLease time.Time
	ns := nn.ns
	for {
		select {
		case <-stop:
			return
		case <-t.C():
		}
		now := nn.deps.Clock.Now()
		var dead []blockmgmt.DatanodeID
		ns.writeLocked(func() {
			wasSafe := ns.mu.bm.InSafeMode()
			ns.mu.bm.Tick(now)
			if wasSafe && !ns.mu.bm.InSafeMode() {
				nn.deps.Logger.Info("safe mode is OFF", "blocks", ns.mu.bm.NumBlocks(), "datanodes", ns.mu.bm.NumLiveDatanodes())
			}
			dead = ns.mu.bm.CheckHeartbeats(now)
			if now.Sub(lastWork) >= nn.cfg.RedundancyInterval {
				lastWork = now
				ns.mu.bm.ComputeWork(now)
			}
		})
		for _, d := range dead {
			nn.deps.Logger.Warn("DataNode is dead", "uuid", d.UUID, "addr", d.XferAddr())
		}
		// Segments roll by themselves once they hold many transactions
		// (dfs.namenode.edit.log.autoroll.multiplier.threshold ×
		// dfs.namenode.checkpoint.txns), so no segment grows without bound.
		if ns.elog.ShouldRoll() {
			if first, err := nn.rollEdits(); err != nil {
				nn.deps.Logger.Error("automatic edit log roll failed", "err", err)
			} else {
				nn.deps.Logger.Info("edit log rolled automatically", "newSegment", first)
			}
		}
		if now.Sub(lastLease) >= nn.cfg.LeaseRecheckInterval {
			lastLease = now
			ns.leaseMonitorPass(context.Background())
		}
	}
}
