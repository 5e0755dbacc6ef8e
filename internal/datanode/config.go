package datanode

import (
	"errors"
	"fmt"
	"math/rand"
	"net"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/datanode/scanner"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/dtsasl"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/security/spnego"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// Config is everything the DataNode reads from the configuration, typed. Build
// it with ConfigFrom; tests may fill it directly (then call Validate).
type Config struct {
	// DataDirs are the volumes (dfs.datanode.data.dir: file:// URIs or plain
	// paths, optionally tagged [DISK], [SSD], [ARCHIVE] or [RAM_DISK]; default
	// file://${hadoop.tmp.dir}/dfs/data). ConfigFrom leaves each as a plain
	// path, with its tag in front unless it is DISK: "/d1", "[SSD]/d2".
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
	// ReservedByType holds dfs.datanode.du.reserved.<type> (disk, ssd,
	// archive, ram_disk), which replaces Reserved for the volumes of that
	// storage type.
	ReservedByType map[storage.StorageType]int64
	// VolumePolicy is dfs.datanode.fsdataset.volume.choosing.policy: ""
	// or Hadoop's RoundRobinVolumeChoosingPolicy (round robin, the
	// default), or AvailableSpaceVolumeChoosingPolicy (either class name,
	// with or without its package).
	VolumePolicy string
	// BalancedSpaceThreshold and BalancedSpaceFraction are
	// dfs.datanode.available-space-volume-choosing-policy.balanced-space-threshold
	// (10 GiB) and ...balanced-space-preference-fraction (0.75); 0 means
	// the default.
	BalancedSpaceThreshold int64
	BalancedSpaceFraction  float64
	// FailedVolumesTolerated is dfs.datanode.failed.volumes.tolerated (0):
	// how many volumes may fail before the DataNode stops; -1 keeps it
	// running while one volume is left.
	FailedVolumesTolerated int
	// DiskCheckMinGap is dfs.datanode.disk.check.min.gap (15 min): a volume
	// is checked at most this often, and every volume at least this often;
	// 0 means the default.
	DiskCheckMinGap time.Duration
	// DiskCheckTimeout is dfs.datanode.disk.check.timeout (10 min): a check
	// that takes longer fails the volume; 0 means the default.
	DiskCheckTimeout time.Duration
	// BalanceBandwidth is dfs.datanode.balance.bandwidthPerSec (100 MiB/s):
	// the rate shared by balancer moves and re-replication copies; the
	// NameNode may change it (DNA_BALANCERBANDWIDTHUPDATE). 0 means the
	// default.
	BalanceBandwidth int64
	// BlockSize is dfs.blocksize (128 MiB): the space promised to a
	// replica being written (Hadoop's estimateBlockSize). 0 means the
	// default.
	BlockSize int64
	// BalanceMaxMoves is dfs.datanode.balance.max.concurrent.moves (100):
	// balancer moves (COPY_BLOCK and REPLACE_BLOCK together) this node
	// serves at once; more are refused with "threads quota is exceeded".
	// 0 means the default.
	BalanceMaxMoves int
	// Scanner is the block scanner: dfs.block.scanner.volume.bytes.per.second
	// (1 MiB/s; 0 disables), dfs.datanode.scan.period.hours (504 h; a unit
	// suffix such as 30s is accepted too; negative disables),
	// dfs.block.scanner.cursor.save.interval.ms (10 min). The zero value
	// (tests that build a Config) is a disabled scanner.
	Scanner scanner.Config
	// DirScan is the directory scanner: dfs.datanode.directoryscan.interval
	// (21600 s; 0 or negative disables),
	// dfs.datanode.directoryscan.throttle.limit.ms.per.sec (1000),
	// dfs.datanode.directoryscan.threads (1). The zero value is disabled.
	DirScan scanner.DirConfig
	// Hostname is dfs.datanode.hostname; "" means the host's name.
	Hostname string
	// NameNodes are the NameNode RPC addresses (host:port) the DataNode
	// reports to, one block-pool actor each (conf.NameNodeRPCAddresses).
	NameNodes []string
	// User is the user name the DataNode's RPC connections carry (the OS
	// user).
	User string
	// Kerberos is the DataNode's identity when
	// hadoop.security.authentication=kerberos (dfs.datanode.keytab.file,
	// dfs.datanode.kerberos.principal): its IPC server requires Kerberos
	// and it logs in to the NameNodes with it. nil for SIMPLE.
	Kerberos *security.Identity
	// HTTPAuth is the web server's SPNEGO filter with Kerberos (the
	// DataNode's WebHDFS takes delegation tokens only); nil without.
	HTTPAuth *spnego.Filter
	// NameNodePrincipal is dfs.namenode.kerberos.principal, the principal
	// the DataNode asks tickets for (Kerberos only).
	NameNodePrincipal string
	// RPCProtection is hadoop.rpc.protection (Kerberos only).
	RPCProtection security.QOP
	// DataTransfer is the protection of the streaming server and of the
	// connections to other DataNodes: dfs.data.transfer.protection,
	// dfs.encrypt.data.transfer and its cipher keys (see dtsasl.Config).
	DataTransfer dtsasl.Config
	// BlockTokens is dfs.block.access.token.enable (false), which a
	// DataNode with Kerberos requires (checkSecureConfig).
	BlockTokens bool
	// IgnoreSecurePorts is ignore.secure.ports.for.testing (false): a
	// DataNode with Kerberos may then listen on any port without SASL.
	IgnoreSecurePorts bool
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
	// Rollback is the start-up option of `hdfs datanode -rollback` (no
	// configuration key): every block pool whose storage keeps the state
	// before an upgrade (previous/) is rolled back to it when the pool is
	// joined, as after `hdfs namenode -rollback`.
	Rollback bool
}

// ConfigFrom builds a Config from Hadoop configuration. Errors name the key.
func ConfigFrom(c *conf.Conf) (Config, error) {
	var cfg Config
	var errs []error
	dur := c.Reader(&errs).Duration
	for _, v := range c.Strings(conf.DFSDataNodeDataDir) {
		d, st, err := parseDataDir(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("datanode: %s: %w (from %s)", conf.DFSDataNodeDataDir, err, c.Source(conf.DFSDataNodeDataDir)))
			continue
		}
		cfg.DataDirs = append(cfg.DataDirs, dataDirEntry(d, st))
	}
	for _, t := range []storage.StorageType{storage.Disk, storage.SSD, storage.Archive, storage.RAMDisk} {
		key := conf.DFSDataNodeDuReserved + "." + strings.ToLower(t.String())
		if _, ok := c.Get(key); !ok {
			continue
		}
		n, err := c.Size(key)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if cfg.ReservedByType == nil {
			cfg.ReservedByType = map[storage.StorageType]int64{}
		}
		cfg.ReservedByType[t] = n
	}
	cfg.VolumePolicy = c.String(conf.DFSDataNodeVolumeChoosingPolicy)
	if n, err := c.Size(conf.DFSDataNodeBalancedSpaceThreshold); err != nil {
		errs = append(errs, err)
	} else {
		cfg.BalancedSpaceThreshold = n
	}
	if f, err := c.Float(conf.DFSDataNodeBalancedSpaceFraction); err != nil {
		errs = append(errs, err)
	} else {
		cfg.BalancedSpaceFraction = f
	}
	if n, err := c.Int(conf.DFSDataNodeFailedVolumesTolerated); err != nil {
		errs = append(errs, err)
	} else {
		cfg.FailedVolumesTolerated = int(n)
	}
	cfg.DiskCheckMinGap = dur(conf.DFSDataNodeDiskCheckMinGap)
	cfg.DiskCheckTimeout = dur(conf.DFSDataNodeDiskCheckTimeout)
	if n, err := c.Size(conf.DFSDataNodeBalanceBandwidth); err != nil {
		errs = append(errs, err)
	} else {
		cfg.BalanceBandwidth = n
	}
	if n, err := c.Size(conf.DFSBlockSize); err != nil {
		errs = append(errs, err)
	} else {
		cfg.BlockSize = n
	}
	if n, err := c.Int(conf.DFSDataNodeBalanceMaxMoves); err != nil {
		errs = append(errs, err)
	} else {
		cfg.BalanceMaxMoves = int(n)
	}
	if n, err := c.Size(conf.DFSBlockScannerBytesPerSecond); err != nil {
		errs = append(errs, err)
	} else {
		cfg.Scanner.BytesPerSecond = n
	}
	cfg.Scanner.Period = dur(conf.DFSDataNodeScanPeriodHours)
	cfg.Scanner.CursorSaveInterval = dur(conf.DFSBlockScannerCursorSaveInterval)
	cfg.DirScan.Interval = dur(conf.DFSDataNodeDirectoryScanInterval)
	if n, err := c.Int(conf.DFSDataNodeDirectoryScanThrottle); err != nil {
		errs = append(errs, err)
	} else {
		cfg.DirScan.ThrottleMsPerSec = int(n)
	}
	if n, err := c.Int(conf.DFSDataNodeDirectoryScanThreads); err != nil {
		errs = append(errs, err)
	} else {
		cfg.DirScan.Threads = int(n)
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
	host := cfg.IPCAddress
	if cfg.Hostname != "" {
		host = cfg.Hostname
	}
	if cfg.Kerberos, err = security.RoleIdentity(c, security.DataNode, host, os.Getenv); err != nil {
		errs = append(errs, err)
	} else if cfg.Kerberos != nil {
		cfg.User = cfg.Kerberos.User
		if cfg.HTTPAuth, err = spnego.FromConf(c, cfg.Kerberos, conf.DFSDataNodeKeytabFile, security.HostOf(host), false); err != nil {
			errs = append(errs, fmt.Errorf("datanode: %w", err))
		}
		if cfg.NameNodePrincipal, err = security.ServerPrincipal(c, security.NameNode); err != nil {
			errs = append(errs, fmt.Errorf("datanode: %w", err))
		}
		if cfg.RPCProtection, err = security.Protection(c); err != nil {
			errs = append(errs, err)
		}
	}
	if cfg.DataTransfer, err = dtsasl.ConfigFrom(c); err != nil {
		errs = append(errs, fmt.Errorf("datanode: %w", err))
	}
	if cfg.BlockTokens, err = c.Bool(conf.DFSBlockAccessTokenEnable); err != nil {
		errs = append(errs, err)
	}
	if cfg.IgnoreSecurePorts, err = c.Bool(conf.IgnoreSecurePortsForTesting); err != nil {
		errs = append(errs, err)
	}
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
	for _, e := range cfg.DataDirs {
		d, _, err := parseDataDir(e)
		if err != nil {
			bad(conf.DFSDataNodeDataDir, "%v", err)
			continue
		}
		if seen[d] {
			bad(conf.DFSDataNodeDataDir, "%s is listed twice", d)
		}
		seen[d] = true
	}
	if n := cfg.FailedVolumesTolerated; n < -1 || (n >= len(cfg.DataDirs) && len(cfg.DataDirs) > 0) {
		bad(conf.DFSDataNodeFailedVolumesTolerated, "%d is less than -1 or not less than the %d volumes configured", n, len(cfg.DataDirs))
	}
	if _, err := policyFor(cfg, nil); err != nil {
		bad(conf.DFSDataNodeVolumeChoosingPolicy, "%v", err)
	}
	if f := cfg.BalancedSpaceFraction; f < 0 || f > 1 {
		bad(conf.DFSDataNodeBalancedSpaceFraction, "%v is not between 0 and 1", f)
	}
	if cfg.BalancedSpaceThreshold < 0 {
		bad(conf.DFSDataNodeBalancedSpaceThreshold, "%d must not be negative", cfg.BalancedSpaceThreshold)
	}
	if cfg.DiskCheckMinGap < 0 {
		bad(conf.DFSDataNodeDiskCheckMinGap, "%v must not be negative", cfg.DiskCheckMinGap)
	}
	if cfg.DiskCheckTimeout < 0 {
		bad(conf.DFSDataNodeDiskCheckTimeout, "%v must not be negative", cfg.DiskCheckTimeout)
	}
	if cfg.BlockSize < 0 {
		bad(conf.DFSBlockSize, "%d must not be negative", cfg.BlockSize)
	}
	if cfg.BalanceMaxMoves < 0 {
		bad(conf.DFSDataNodeBalanceMaxMoves, "%d must not be negative", cfg.BalanceMaxMoves)
	}
	if cfg.BalanceBandwidth < 0 {
		bad(conf.DFSDataNodeBalanceBandwidth, "%d must not be negative", cfg.BalanceBandwidth)
	}
	if cfg.Scanner.BytesPerSecond < 0 {
		bad(conf.DFSBlockScannerBytesPerSecond, "%d must not be negative", cfg.Scanner.BytesPerSecond)
	}
	if cfg.DirScan.Threads < 0 {
		bad(conf.DFSDataNodeDirectoryScanThreads, "%d must not be negative", cfg.DirScan.Threads)
	}
	for t, n := range cfg.ReservedByType {
		if n < 0 {
			bad(conf.DFSDataNodeDuReserved+"."+strings.ToLower(t.String()), "%d must not be negative", n)
		}
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
	if err := checkSecureConfig(cfg); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// parseDataDir turns "[SSD]file:///a/b", "file:/a/b" or "/a/b" into the
// path and the storage type (DISK when untagged).
func parseDataDir(v string) (string, storage.StorageType, error) {
	st := storage.Disk
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "[") {
		end := strings.IndexByte(v, ']')
		if end < 0 {
			return "", 0, fmt.Errorf("%q: unterminated storage type tag", v)
		}
		t, err := storage.ParseStorageType(v[1:end])
		if err != nil {
			return "", 0, fmt.Errorf("%q: %w", v, err)
		}
		st, v = t, v[end+1:]
	}
	if !strings.Contains(v, ":") {
		if !strings.HasPrefix(v, "/") {
			return "", 0, fmt.Errorf("%q is not an absolute path", v)
		}
		return filepath.Clean(v), st, nil
	}
	u, err := url.Parse(v)
	if err != nil {
		return "", 0, fmt.Errorf("%q: %v", v, err)
	}
	if u.Scheme != "file" {
		return "", 0, fmt.Errorf("%q: only file:// directories are supported", v)
	}
	if u.Path == "" || !strings.HasPrefix(u.Path, "/") {
		return "", 0, fmt.Errorf("%q has no absolute path", v)
	}
	return filepath.Clean(u.Path), st, nil
}

// dataDirEntry is a volume as Config.DataDirs holds it: the path, tagged
// unless DISK.
func dataDirEntry(dir string, st storage.StorageType) string {
	if st == storage.Disk || st == storage.AnyStorage {
		return dir
	}
	return "[" + st.String() + "]" + dir
}

// policyFor makes the volume choosing policy the configuration names.
func policyFor(cfg *Config, rnd *rand.Rand) (func() storage.VolumeChoosingPolicy, error) {
	name := strings.TrimSpace(cfg.VolumePolicy)
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	switch name {
	case "", "RoundRobinVolumeChoosingPolicy":
		return func() storage.VolumeChoosingPolicy { return &storage.RoundRobinPolicy{} }, nil
	case "AvailableSpaceVolumeChoosingPolicy":
		return func() storage.VolumeChoosingPolicy {
			r := rnd
			if r == nil {
				r = rand.New(rand.NewSource(1))
			}
			return storage.NewAvailableSpacePolicy(cfg.BalancedSpaceThreshold, cfg.BalancedSpaceFraction, rand.New(rand.NewSource(r.Int63())))
		}, nil
	}
	return nil, fmt.Errorf("%w: volume choosing policy %q (RoundRobinVolumeChoosingPolicy or AvailableSpaceVolumeChoosingPolicy)", ErrUnsupported, cfg.VolumePolicy)
}

// reservedFor is the space reserved on a volume of type st.
func (cfg *Config) reservedFor(st storage.StorageType) int64 {
	if n, ok := cfg.ReservedByType[st]; ok {
		return n
	}
	return cfg.Reserved
}

// currentUser is the OS user the DataNode runs as, the user of its RPC
// connections.
func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "hdfs"
}
