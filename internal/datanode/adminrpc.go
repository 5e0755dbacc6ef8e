package datanode

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/version"
)

// configVersion is what getDatanodeInfo reports as the configuration
// version: Hadoop's "core-<hadoop.common.configuration.version>,hdfs-
// <hadoop.hdfs.configuration.version>" with the values its default files
// ship.
const configVersion = "core-3.0.0,hdfs-1"

// shutdownDelay lets the answer to shutdownDatanode leave before the
// DataNode stops.
const shutdownDelay = 200 * time.Millisecond

// registerAdminIPC registers the ClientDatanodeProtocol methods that
// `hdfs dfsadmin` calls: getDatanodeInfo, triggerBlockReport,
// shutdownDatanode and evictWriters.
func (dn *DataNode) registerAdminIPC(cdp *ipc.Service) {
	ipc.Handle(cdp, "getDatanodeInfo", func(ctx context.Context, _ *hdfs.GetDatanodeInfoRequestProto) (*hdfs.GetDatanodeInfoResponseProto, error) {
		up := time.Since(dn.started) / time.Second
		return &hdfs.GetDatanodeInfoResponseProto{LocalInfo: &hdfs.DatanodeLocalInfoProto{
			SoftwareVersion: proto.String(version.Release),
			ConfigVersion:   proto.String(configVersion),
			Uptime:          proto.Uint64(uint64(up)),
		}}, nil
	})
	ipc.Handle(cdp, "triggerBlockReport", func(ctx context.Context, req *hdfs.TriggerBlockReportRequestProto) (*hdfs.TriggerBlockReportResponseProto, error) {
		// The actors are all in place (and each has sent its first report)
		// once ready is closed.
		select {
		case <-dn.ready:
		default:
			return nil, remoteerr.New(remoteerr.ClassRetriable, "the DataNode is still registering with its NameNodes")
		}
		for _, a := range dn.actors {
			if nn := req.GetNnAddress(); nn != "" && nn != a.addr {
				continue
			}
			ch := a.reportNow
			if req.GetIncremental() {
				ch = a.kick
			}
			select {
			case ch <- struct{}{}:
			default: // one is pending already
			}
		}
		return &hdfs.TriggerBlockReportResponseProto{}, nil
	})
	ipc.Handle(cdp, "shutdownDatanode", func(ctx context.Context, req *hdfs.ShutdownDatanodeRequestProto) (*hdfs.ShutdownDatanodeResponseProto, error) {
		dn.log.Info("shutdown requested over IPC", "forUpgrade", req.GetForUpgrade())
		go func() {
			t := time.NewTimer(shutdownDelay)
			defer t.Stop()
			select {
			case <-t.C:
				dn.cancel()
			case <-dn.done: // stopped meanwhile
			}
		}()
		return &hdfs.ShutdownDatanodeResponseProto{}, nil
	})
	ipc.Handle(cdp, "evictWriters", func(ctx context.Context, _ *hdfs.EvictWritersRequestProto) (*hdfs.EvictWritersResponseProto, error) {
		if xs := dn.xs; xs != nil {
			dn.log.Info("evicting writers", "count", xs.evictWriters())
		}
		return &hdfs.EvictWritersResponseProto{}, nil
	})
}
