package haservice

import (
	"fmt"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// Config holds the timeouts and retries of HA administration, from
// Hadoop's keys (core-default.xml) and their defaults.
type Config struct {
	// Kerberos and Protection, when set, authenticate the calls to the
	// NameNodes' HAServiceProtocol (hadoop.security.authentication=kerberos);
	// the caller fills them (haadmin from the ticket cache). nil: SIMPLE.
	Kerberos   *security.Initiator
	Protection security.QOP
	// CLICheckTimeout bounds haadmin's getServiceState, checkHealth and
	// getAllServiceState calls (ha.failover-controller.cli-check.rpc-timeout.ms,
	// 20000 ms).
	CLICheckTimeout time.Duration
	// GracefulFenceTimeout bounds the transitionToStandby sent to the old
	// active before fencing (ha.failover-controller.graceful-fence.rpc-timeout.ms,
	// 5000 ms).
	GracefulFenceTimeout time.Duration
	// GracefulFenceConnectRetries is how often the graceful fence retries
	// to connect (ha.failover-controller.graceful-fence.connection.retries, 1).
	GracefulFenceConnectRetries int
	// NewActiveTimeout bounds the calls to the service being made active
	// (ha.failover-controller.new-active.rpc-timeout.ms, 60000 ms).
	NewActiveTimeout time.Duration
	// TransitionTimeout bounds haadmin's -transitionToActive,
	// -transitionToStandby and -transitionToObserver (ipc.client.rpc-timeout.ms,
	// 120000 ms; Hadoop's tool waits without a bound there).
	TransitionTimeout time.Duration
	// ConnectRetryInterval is the pause before a connection is tried again
	// (ipc.client.connect.retry.interval, 1000 ms).
	ConnectRetryInterval time.Duration
	// ConnectTimeout bounds one connection attempt
	// (ipc.client.connect.timeout, 20000 ms).
	ConnectTimeout time.Duration
	// ShellFenceTimeout bounds one shell(...) fencing command; the command
	// and everything it started are killed after it and the method counts
	// as failed (hdfsgo.ha.fencing.shell.timeout, 300 s; 0 means no bound,
	// which is Hadoop's behaviour).
	ShellFenceTimeout time.Duration
}

// ConfigFrom reads Config from c.
func ConfigFrom(c *conf.Conf) (Config, error) {
	var cfg Config
	var err error
	durations := []struct {
		key string
		dst *time.Duration
	}{
		{conf.HAFCCLICheckRPCTimeout, &cfg.CLICheckTimeout},
		{conf.HAFCGracefulFenceRPCTimeout, &cfg.GracefulFenceTimeout},
		{conf.HAFCNewActiveRPCTimeout, &cfg.NewActiveTimeout},
		{conf.IPCClientRPCTimeout, &cfg.TransitionTimeout},
		{conf.IPCClientConnectRetryInterval, &cfg.ConnectRetryInterval},
		{conf.IPCClientConnectTimeout, &cfg.ConnectTimeout},
		{conf.HDFSGoHAFencingShellTimeout, &cfg.ShellFenceTimeout},
	}
	for _, d := range durations {
		if *d.dst, err = c.Duration(d.key); err != nil {
			return Config{}, err
		}
	}
	n, err := c.Int32(conf.HAFCGracefulFenceConnectionRetries)
	if err != nil {
		return Config{}, err
	}
	cfg.GracefulFenceConnectRetries = int(n)
	return cfg, cfg.Validate()
}

// Validate rejects negative values, naming the key.
func (c Config) Validate() error {
	for _, d := range []struct {
		key string
		v   time.Duration
	}{
		{conf.HAFCCLICheckRPCTimeout, c.CLICheckTimeout},
		{conf.HAFCGracefulFenceRPCTimeout, c.GracefulFenceTimeout},
		{conf.HAFCNewActiveRPCTimeout, c.NewActiveTimeout},
		{conf.IPCClientRPCTimeout, c.TransitionTimeout},
		{conf.IPCClientConnectRetryInterval, c.ConnectRetryInterval},
		{conf.IPCClientConnectTimeout, c.ConnectTimeout},
		{conf.HDFSGoHAFencingShellTimeout, c.ShellFenceTimeout},
	} {
		if d.v < 0 {
			return fmt.Errorf("%w: %s must not be negative, got %v", ErrInvalidConfig, d.key, d.v)
		}
	}
	if c.GracefulFenceConnectRetries < 0 {
		return fmt.Errorf("%w: %s must not be negative, got %d",
			ErrInvalidConfig, conf.HAFCGracefulFenceConnectionRetries, c.GracefulFenceConnectRetries)
	}
	return nil
}

// DefaultConfig is Config with every default.
func DefaultConfig() Config {
	cfg, err := ConfigFrom(conf.Defaults())
	if err != nil {
		panic(err) // the built-in defaults are valid
	}
	return cfg
}
