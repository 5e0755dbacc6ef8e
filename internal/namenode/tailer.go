package namenode

import (
	"context"
	"errors"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	nnpb "github.com/hdfsgo/hdfsgo/internal/proto/namenode"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// NamenodeProtocolName is NamenodeProtocol's Java interface name: what a
// standby, a Checkpoint Node or a Backup Node calls on the active.
const NamenodeProtocolName = "org.apache.hadoop.hdfs.server.protocol.NamenodeProtocol"

// tailEdits is the standby's EditLogTailer (seed 004). Every
// dfs.ha.tail-edits.period it applies what the shared journals hold beyond
// the last applied txid — finalized segments, and the one being written
// when dfs.ha.tail-edits.in-progress — through the one apply path, then
// lets the block map process the DataNode reports that waited for those
// edits. When no new edit arrived for dfs.ha.log-roll.period it asks the
// active to roll its segment, so that a standby reading finalized segments
// only does not fall behind by more than that.
func (nn *NameNode) tailEdits(ctx context.Context) {
	clk := nn.deps.Clock
	t := clk.NewTicker(nn.cfg.HA.TailEditsPeriod)
	defer t.Stop()
	lastLoad, lastRollAsk := clk.Now(), time.Time{}
	for {
		n, err := nn.tailOnce(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			nn.deps.Logger.Warn("edit log tailer: reading the shared edits", "err", err)
		case n > 0:
			lastLoad = clk.Now()
		}
		if p := nn.cfg.HA.LogRollPeriod; p > 0 {
			if now := clk.Now(); now.Sub(lastLoad) >= p && now.Sub(lastRollAsk) >= p {
				lastRollAsk = now
				if err := nn.askActiveToRoll(ctx); err != nil && ctx.Err() == nil {
					nn.deps.Logger.Warn("edit log tailer: asking the active to roll its edit log", "err", err)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// tailOnce applies the shared journals' new edits and returns how many.
func (nn *NameNode) tailOnce(ctx context.Context) (int64, error) {
	shared := nn.ns.elog.RequiredJournals()
	opts := editlog.ReadOptions{InProgress: nn.cfg.HA.TailEditsInProgress}
	_, n, err := nn.ns.catchUp(ctx, opts, func(ctx context.Context, opts editlog.ReadOptions, fn func(int64, op.Op) error) (int64, error) {
		return editlog.ReadOps(ctx, shared, opts, fn)
	})
	return n, err
}

// askActiveToRoll calls rollEditLog on the other NameNodes until the active
// one answers (the standby ones refuse with StandbyException).
func (nn *NameNode) askActiveToRoll(ctx context.Context) error {
	var errs []error
	for _, p := range nn.cfg.HA.Peers {
		c := ipc.NewClient(nn.cfg.peerAuth(ipc.ClientConfig{Addresses: []string{p.RPCAddress}, User: nn.cfg.SuperUser,
			Protocol: NamenodeProtocolName, MaxRetries: -1, DialTimeout: 5 * time.Second, Logger: nn.deps.Logger}))
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		var resp nnpb.RollEditLogResponseProto
		err := c.Call(cctx, "rollEditLog", &nnpb.RollEditLogRequestProto{}, &resp)
		cancel()
		c.Close()
		if err == nil {
			nn.deps.Logger.Info("the active rolled its edit log", "nn", p.ID, "segment", resp.GetSignature().GetCurSegmentTxId())
			return nil
		}
		if !remoteerr.IsStandby(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
