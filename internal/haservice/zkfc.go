package haservice

import (
	"context"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
)

// ZKFCProtocolName is ZKFCProtocol's Java name: the protocol a ZooKeeper
// failover controller serves on dfs.ha.zkfc.port (8019) so that haadmin
// and the other controllers can steer a failover through the election.
const ZKFCProtocolName = "org.apache.hadoop.ha.ZKFCProtocol"

// ZKFC is what a failover controller serves. Both methods may be called
// concurrently; each returns when ctx ends. Errors reach the caller with
// Hadoop's classes when they are ServiceFailed or remoteerr.AccessControl.
type ZKFC interface {
	// CedeActive makes the local service standby (asking it; if it does
	// not answer, the controller quits the election leaving the service to
	// be fenced) and keeps the controller out of the election for millis
	// milliseconds. millis <= 0 lets it rejoin at once.
	CedeActive(ctx context.Context, millis int32) error
	// GracefulFailover makes the local service the active one through the
	// election: the other controllers cede, this one wins. It returns nil
	// once the local service is active, ServiceFailed when it could not be
	// made so.
	GracefulFailover(ctx context.Context) error
}

// RegisterZKFC serves ZKFCProtocol on srv, calling z for every method.
func RegisterZKFC(srv *ipc.Server, z ZKFC) {
	s := srv.Service(ZKFCProtocolName)
	s.Describe(common.File_common_ZKFCProtocol_proto.Services().ByName("ZKFCProtocolService"))
	ipc.Handle(s, "cedeActive", func(ctx context.Context, req *common.CedeActiveRequestProto) (*common.CedeActiveResponseProto, error) {
		if err := z.CedeActive(ctx, int32(req.GetMillisToCede())); err != nil {
			return nil, err
		}
		return &common.CedeActiveResponseProto{}, nil
	})
	ipc.Handle(s, "gracefulFailover", func(ctx context.Context, _ *common.GracefulFailoverRequestProto) (*common.GracefulFailoverResponseProto, error) {
		if err := z.GracefulFailover(ctx); err != nil {
			return nil, err
		}
		return &common.GracefulFailoverResponseProto{}, nil
	})
}

// ZKFCClient calls ZKFCProtocol on one failover controller. It implements
// ZKFC; it is safe for concurrent use; Close releases its connection.
type ZKFCClient struct {
	cfg ClientConfig
	rpc *ipc.Client
}

// NewZKFCClient returns a client of the controller at cfg.Address; it
// connects on the first call. Every call is bounded by cfg.Timeout (Hadoop
// uses ha.failover-controller.new-active.rpc-timeout.ms for haadmin's
// gracefulFailover, twice the graceful fence timeout for cedeActive).
func NewZKFCClient(cfg ClientConfig) *ZKFCClient {
	cfg, rpc := newRPCClient(cfg, ZKFCProtocolName)
	return &ZKFCClient{cfg: cfg, rpc: rpc}
}

// Address returns the controller's address.
func (c *ZKFCClient) Address() string { return c.cfg.Address }

// Close closes the connection.
func (c *ZKFCClient) Close() error { return c.rpc.Close() }

// CedeActive calls cedeActive. millis is sent as Java sends its int, so -1
// arrives as -1.
func (c *ZKFCClient) CedeActive(ctx context.Context, millis int32) error {
	req := &common.CedeActiveRequestProto{MillisToCede: new(uint32(millis))}
	return boundedCall(ctx, c.rpc, c.cfg, "cedeActive", req, &common.CedeActiveResponseProto{})
}

// GracefulFailover calls gracefulFailover.
func (c *ZKFCClient) GracefulFailover(ctx context.Context) error {
	return boundedCall(ctx, c.rpc, c.cfg, "gracefulFailover", &common.GracefulFailoverRequestProto{}, &common.GracefulFailoverResponseProto{})
}
