package datanode

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os/user"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// Config is everything the DataNode reads from the configuration, typed. Build
// it with ConfigFrom; tests may fill it directly (then call Validate).
type Config struct {
	// DataDirs are the volumes (dfs.datanode.data.dir: file:// URIs or plain
	// paths, optionally tagged [DISK]; default file://${hadoop.tmp.dir}/dfs/data).
	DataDirs []string
	// XferAddress is the streaming (DataTransferProtocol) listen address
	// (dfs.datanode.address, 0.0.0.0:9866).
	XferAddress string
	// HTTPAddress is dfs.datanode.http.address (0.0.0.0:9864): the web
	// server's address, reported to the NameNode as the infoPort.
	HTTPAddress string
	// IPCAddress is the ClientDatanodeProtocol / InterDatanodeProtocol
	// listen address (dfs.datanode.ipc.address, 0.0.0.0:9867).
	IPCAddress string
	// HeartbeatInterval is dfs.heartbeat.interval (3 s).
	HeartbeatInterval time.Duration
	// BlockReportInterval is dfs.blockreport.intervalMsec (6 h).
	BlockReportInterval time.Duration
	// BlockReportInitialDelay is dfs.blockreport.initialDelay (0): the
	// first full report after registration waits this long.
	BlockReportInitialDelay time.Duration
	// MaxTransferThreads bounds concurrent streaming connections
	// (dfs.datanode.max.transfer.threads, 4096).
	MaxTransferThreads int
	// Reserved is dfs.datanode.du.reserved (0): bytes per volume left for
	// non-DFS use.
	Reserved int64
	// Hostname is dfs.datanode.hostname; "" means the host's name.
	Hostname string
	// NameNodes are the NameNode RPC addresses (host:port) the DataNode
	// reports to, one block-pool actor each (conf.NameNodeRPCAddresses).
	NameNodes []string
	// User is the user name the DataNode's RPC connections carry (the OS
	// user).
	User string
	// DomainSocketPath is dfs.domain.socket.path: a UNIX domain socket to
	// serve DataTransferProtocol on besides TCP, for clients on this host;
	// "_PORT" in it becomes the TCP streaming port. "" (the default): none.
	DomainSocketPath string
	// IPCLimits bound what clients of the DataNode's RPC port can make it
	// hold (ipc.server.max.connections, ipc.client.idlethreshold, ...; see
	// ipc.Limits for keys and defaults).
	IPCLimits ipc.Limits
	// HTTPLimits bound the web server's clients (hadoop.http.idle_timeout.ms,
	// hadoop.http.max.threads, ...; see web.Limits).
	HTTPLimits web.Limits
}

// ConfigFrom builds a Config from Hadoop configuration. Errors name the key.
func ConfigFrom(c *conf.Conf) (Config, error) {
	var cfg Config
	var errs []error
	dur := func(key string) time.Duration {
		v, err := c.Duration(key)
		if err != nil {
			errs = append(errs, err)
		}
		return v
	}
	for _, v := range c.Strings(conf.DFSDataNodeDataDir) {
		d, err := volumeDir(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("datanode: %s: %w (from %s)", conf.DFSDataNodeDataDir, err, c.Source(conf.DFSDataNodeDataDir)))
			continue
		}
		cfg.DataDirs = append(cfg.DataDirs, d)
	}
	cfg.XferAddress = c.String(conf.DFSDataNodeAddress)
	cfg.HTTPAddress = c.String(conf.DFSDataNodeHTTPAddress)
	cfg.IPCAddress = c.String(conf.DFSDataNodeIPCAddress)
	cfg.HeartbeatInterval = dur(conf.DFSHeartbeatInterval)
	cfg.BlockReportInterval = dur(conf.DFSBlockReportInterval)
	cfg.BlockReportInitialDelay = dur(conf.DFSBlockReportInitialDelay)
	if n, err := c.Int(conf.DFSDataNodeMaxTransferThreads); err != nil {
		errs = append(errs, err)
	} else {
		cfg.MaxTransferThreads = int(n)
	}
	if n, err := c.Size(conf.DFSDataNodeDuReserved); err != nil {
		errs = append(errs, err)
	} else {
		cfg.Reserved = n
	}
	cfg.Hostname = c.String(conf.DFSDataNodeHostname)
	cfg.DomainSocketPath = c.String(conf.DFSDomainSocketPath)
	cfg.User = currentUser()
	var err error
	if cfg.IPCLimits, err = ipc.LimitsFrom(c); err != nil {
		errs = append(errs, err)
	}
	if cfg.HTTPLimits, err = web.LimitsFrom(c); err != nil {
		errs = append(errs, err)
	}
	nns, err := c.NameNodeRPCAddresses()
	if err != nil {
		errs = append(errs, err)
	}
	for _, a := range nns {
		cfg.NameNodes = append(cfg.NameNodes, a.Address)
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return cfg, cfg.Validate()
}

// Validate rejects values the DataNode cannot run with, naming the key.
func (cfg *Config) Validate() error {
	var errs []error
	bad := func(key string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("datanode: %s: %s", key, fmt.Sprintf(format, args...)))
	}
	if len(cfg.DataDirs) == 0 {
		bad(conf.DFSDataNodeDataDir, "no data directory configured")
	}
	seen := map[string]bool{}
	for _, d := range cfg.DataDirs {
		if seen[d] {
			bad(conf.DFSDataNodeDataDir, "%s is listed twice", d)
		}
		seen[d] = true
	}
	for key, a := range map[string]string{
		conf.DFSDataNodeAddress:     cfg.XferAddress,
		conf.DFSDataNodeHTTPAddress: cfg.HTTPAddress,
		conf.DFSDataNodeIPCAddress:  cfg.IPCAddress,
	} {
		if _, _, err := net.SplitHostPort(a); err != nil {
			bad(key, "%q is not host:port", a)
		}
	}
	if cfg.HeartbeatInterval <= 0 {
		bad(conf.DFSHeartbeatInterval, "%v must be positive", cfg.HeartbeatInterval)
	}
	if cfg.BlockReportInterval <= 0 {
		bad(conf.DFSBlockReportInterval, "%v must be positive", cfg.BlockReportInterval)
	}
	if cfg.BlockReportInitialDelay < 0 {
		bad(conf.DFSBlockReportInitialDelay, "%v must not be negative", cfg.BlockReportInitialDelay)
	}
	if cfg.MaxTransferThreads < 1 {
		bad(conf.DFSDataNodeMaxTransferThreads, "%d must be at least 1", cfg.MaxTransferThreads)
	}
	if cfg.Reserved < 0 {
		bad(conf.DFSDataNodeDuReserved, "%d must not be negative", cfg.Reserved)
	}
	if len(cfg.NameNodes) == 0 {
		bad(conf.DFSNameNodeRPCAddress, "no NameNode address configured")
	}
	if err := cfg.IPCLimits.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := cfg.HTTPLimits.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// volumeDir turns "[DISK]file:///a/b", "file:/a/b" or "/a/b" into "/a/b".
func volumeDir(v string) (string, error) {
	if strings.HasPrefix(v, "[") {
		end := strings.IndexByte(v, ']')
		if end < 0 {
			return "", fmt.Errorf("%q: unterminated storage type tag", v)
		}
		if t := strings.ToUpper(v[1:end]); t != "DISK" {
			return "", fmt.Errorf("%q: storage type %s is not supported (only DISK)", v, t)
		}
		v = v[end+1:]
	}
	if !strings.Contains(v, ":") {
		if !strings.HasPrefix(v, "/") {
			return "", fmt.Errorf("%q is not an absolute path", v)
		}
		return v, nil
	}
	u, err := url.Parse(v)
	if err != nil {
		return "", fmt.Errorf("%q: %v", v, err)
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("%q: only file:// directories are supported", v)
	}
	if u.Path == "" || !strings.HasPrefix(u.Path, "/") {
		return "", fmt.Errorf("%q has no absolute path", v)
	}
	return u.Path, nil
}

// currentUser is the OS user the DataNode runs as, the user of its RPC
// connections.
func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "hdfs"
}
