package haservice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// ClientConfig configures a Client.
type ClientConfig struct {
	// Address of the service, host:port.
	Address string
	// User is the effective user of the calls.
	User string
	// Timeout bounds every call (Hadoop's per-proxy rpcTimeout: the CLI
	// checks use ha.failover-controller.cli-check.rpc-timeout.ms, the
	// graceful fence ...graceful-fence.rpc-timeout.ms, the new active
	// ...new-active.rpc-timeout.ms). 0 leaves the bound to the caller's ctx.
	Timeout time.Duration
	// ConnectRetries is how often a call that could not connect is tried
	// again (Hadoop sets ipc.client.connect.max.retries to 1 for HA
	// proxies, and ha.failover-controller.graceful-fence.connection.retries
	// for the graceful fence). Negative means none; 0 means 1.
	ConnectRetries int
	// RetryInterval is the pause before the first retry
	// (ipc.client.connect.retry.interval; 0 means 1 s).
	RetryInterval time.Duration
	// DialTimeout bounds each connection attempt (ipc.client.connect.timeout;
	// 0 means 20 s).
	DialTimeout time.Duration
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
	// Kerberos and Protection authenticate the connection (nil: SIMPLE).
	Kerberos   *security.Initiator
	Protection security.QOP
}

// Client calls HAServiceProtocol on one service. It implements Service, so
// a failover controller drives a remote service and a fake alike. It is
// safe for concurrent use; Close releases its connection.
type Client struct {
	cfg ClientConfig
	rpc *ipc.Client
}

// NewClient returns a client; it connects on the first call.
func NewClient(cfg ClientConfig) *Client {
	cfg, rpc := newRPCClient(cfg, Protocol)
	return &Client{cfg: cfg, rpc: rpc}
}

// newRPCClient is the ipc client of an HA protocol whose every method is
// @Idempotent in Hadoop (HAServiceProtocol, ZKFCProtocol).
func newRPCClient(cfg ClientConfig, protocol string) (ClientConfig, *ipc.Client) {
	if cfg.ConnectRetries == 0 {
		cfg.ConnectRetries = 1
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = time.Second
	}
	rpc := ipc.NewClient(ipc.ClientConfig{
		Addresses:   []string{cfg.Address},
		User:        cfg.User,
		Protocol:    protocol,
		DialTimeout: cfg.DialTimeout,
		MaxRetries:  cfg.ConnectRetries,
		RetryBase:   cfg.RetryInterval,
		Idempotent:  func(string) bool { return true },
		Logger:      cfg.Logger,
		Kerberos:    cfg.Kerberos,
		Protection:  cfg.Protection,
	})
	return cfg, rpc
}

// Address returns the service's address.
func (c *Client) Address() string { return c.cfg.Address }

// Close closes the connection.
func (c *Client) Close() error { return c.rpc.Close() }

func (c *Client) call(ctx context.Context, method string, req, resp proto.Message) error {
	return boundedCall(ctx, c.rpc, c.cfg, method, req, resp)
}

// boundedCall makes one call bounded by cfg.Timeout, naming the bound in
// the error when it passed.
func boundedCall(ctx context.Context, rpc *ipc.Client, cfg ClientConfig, method string, req, resp proto.Message) error {
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	err := rpc.Call(ctx, method, req, resp)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && cfg.Timeout > 0 {
		return fmt.Errorf("%s to %s: %d millis timeout: %w", method, cfg.Address, cfg.Timeout.Milliseconds(), err)
	}
	return err
}

// MonitorHealth calls monitorHealth.
func (c *Client) MonitorHealth(ctx context.Context) error {
	return c.call(ctx, "monitorHealth", &common.MonitorHealthRequestProto{}, &common.MonitorHealthResponseProto{})
}

// TransitionToActive calls transitionToActive.
func (c *Client) TransitionToActive(ctx context.Context, src RequestSource) error {
	return c.call(ctx, "transitionToActive", &common.TransitionToActiveRequestProto{ReqInfo: src.proto()}, &common.TransitionToActiveResponseProto{})
}

// TransitionToStandby calls transitionToStandby.
func (c *Client) TransitionToStandby(ctx context.Context, src RequestSource) error {
	return c.call(ctx, "transitionToStandby", &common.TransitionToStandbyRequestProto{ReqInfo: src.proto()}, &common.TransitionToStandbyResponseProto{})
}

// TransitionToObserver calls transitionToObserver.
func (c *Client) TransitionToObserver(ctx context.Context, src RequestSource) error {
	return c.call(ctx, "transitionToObserver", &common.TransitionToObserverRequestProto{ReqInfo: src.proto()}, &common.TransitionToObserverResponseProto{})
}

// GetServiceStatus calls getServiceStatus.
func (c *Client) GetServiceStatus(ctx context.Context) (Status, error) {
	var resp common.GetServiceStatusResponseProto
	if err := c.call(ctx, "getServiceStatus", &common.GetServiceStatusRequestProto{}, &resp); err != nil {
		return Status{}, err
	}
	return statusFromProto(&resp)
}
