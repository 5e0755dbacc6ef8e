package namenode

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// setBalancerBandwidth serves ClientProtocol setBalancerBandwidth
// (dfsadmin -setBalancerBandwidth): superusers only; every live DataNode
// gets DNA_BALANCERBANDWIDTHUPDATE with its next heartbeat. The value is
// soft state: it is not logged, and a DataNode that restarts goes back to
// its dfs.datanode.balance.bandwidthPerSec.
func (c *clientRPC) setBalancerBandwidth(ctx context.Context, req *hdfs.SetBalancerBandwidthRequestProto) (*hdfs.SetBalancerBandwidthResponseProto, error) {
	if err := c.checkSuper(ctx); err != nil {
		return nil, err
	}
	bw := req.GetBandwidth()
	var err error
	c.ns.writeLocked(func() { err = c.ns.mu.bm.SetBalancerBandwidth(bw) })
	if err != nil {
		return nil, remoteerr.New(remoteerr.ClassIllegalArgument, "setBalancerBandwidth: %v", err)
	}
	c.nn.deps.Logger.Info("balancer bandwidth set for every live DataNode", "bytesPerSecond", bw)
	return &hdfs.SetBalancerBandwidthResponseProto{}, nil
}

// balancerBandwidthCommand is DNA_BALANCERBANDWIDTHUPDATE on the wire.
func balancerBandwidthCommand(c blockmgmt.BalancerBandwidth) *datanode.DatanodeCommandProto {
	return &datanode.DatanodeCommandProto{
		CmdType:     datanode.DatanodeCommandProto_BalancerBandwidthCommand.Enum(),
		BalancerCmd: &datanode.BalancerBandwidthCommandProto{Bandwidth: proto.Uint64(uint64(c.Bandwidth))},
	}
}
