package datanode

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/datanode/scanner"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/dtsasl"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

func TestConfigFromDefaults(t *testing.T) {
	c := conf.Defaults().With(conf.KeyValue{Key: conf.FSDefaultFS, Value: "hdfs://nn1:8020"},
		conf.KeyValue{Key: conf.HadoopTmpDir, Value: "/tmp/hadoop-x"})
	cfg, err := ConfigFrom(c)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		DataDirs:            []string{"/tmp/hadoop-x/dfs/data"},
		XferAddress:         "0.0.0.0:9866",
		HTTPAddress:         "0.0.0.0:9864",
		IPCAddress:          "0.0.0.0:9867",
		HeartbeatInterval:   3 * time.Second,
		BlockReportInterval: 6 * time.Hour,
		MaxTransferThreads:  4096,
		NameNodes:           []string{"nn1:8020"},
		User:                currentUser(),
		IPCLimits: ipc.Limits{MaxConnections: ipc.DefaultMaxConnections, MaxIdleTime: 10 * time.Second,
			IdleThreshold: 4000, KillMax: 10, IdleScanInterval: 10 * time.Second, PurgeInterval: 15 * time.Minute},
		HTTPLimits: web.Limits{IdleTimeout: time.Minute, MaxHeaderBytes: 65536},
		// No data transfer protection; AES keys of 128 bits if it is on.
		DataTransfer: dtsasl.Config{KeyBits: 128},

		BalancedSpaceThreshold: 10 << 30,
		BalancedSpaceFraction:  0.75,
		DiskCheckMinGap:        15 * time.Minute,
		DiskCheckTimeout:       10 * time.Minute,
		BalanceBandwidth:       100 << 20,
		BlockSize:              128 << 20,
		BalanceMaxMoves:        100,
		Scanner:                scanner.Config{BytesPerSecond: 1 << 20, Period: 504 * time.Hour, CursorSaveInterval: 10 * time.Minute},
		DirScan:                scanner.DirConfig{Interval: 21600 * time.Second, ThrottleMsPerSec: 1000, Threads: 1},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("ConfigFrom defaults:\n got %+v\nwant %+v", cfg, want)
	}
}

func TestConfigFrom(t *testing.T) {
	base := []conf.KeyValue{{Key: conf.FSDefaultFS, Value: "hdfs://nn1"}}
	tests := []struct {
		name    string
		kv      []conf.KeyValue
		check   func(Config) bool
		wantErr string
	}{
		{"several volumes", []conf.KeyValue{{Key: conf.DFSDataNodeDataDir, Value: "[DISK]file:///d1, /d2,file:/d3"}},
			func(c Config) bool { return reflect.DeepEqual(c.DataDirs, []string{"/d1", "/d2", "/d3"}) }, ""},
		{"reserved and threads", []conf.KeyValue{{Key: conf.DFSDataNodeDuReserved, Value: "1g"}, {Key: conf.DFSDataNodeMaxTransferThreads, Value: "10"}},
			func(c Config) bool { return c.Reserved == 1<<30 && c.MaxTransferThreads == 10 }, ""},
		{"hostname and intervals", []conf.KeyValue{{Key: conf.DFSDataNodeHostname, Value: "dn7"}, {Key: conf.DFSHeartbeatInterval, Value: "1"},
			{Key: conf.DFSBlockReportInitialDelay, Value: "30"}},
			func(c Config) bool {
				return c.Hostname == "dn7" && c.HeartbeatInterval == time.Second && c.BlockReportInitialDelay == 30*time.Second
			}, ""},
		{"default port", nil, func(c Config) bool { return reflect.DeepEqual(c.NameNodes, []string{"nn1:8020"}) }, ""},
		{"relative dir", []conf.KeyValue{{Key: conf.DFSDataNodeDataDir, Value: "data"}}, nil, "not an absolute path"},
		{"tagged volumes", []conf.KeyValue{{Key: conf.DFSDataNodeDataDir, Value: "[SSD]/d1,[archive]file:///d2,[RAM_DISK]/d3,[DISK]/d4"},
			{Key: conf.DFSDataNodeFailedVolumesTolerated, Value: "-1"}},
			func(c Config) bool {
				return reflect.DeepEqual(c.DataDirs, []string{"[SSD]/d1", "[ARCHIVE]/d2", "[RAM_DISK]/d3", "/d4"}) && c.FailedVolumesTolerated == -1
			}, ""},
		{"unknown storage type", []conf.KeyValue{{Key: conf.DFSDataNodeDataDir, Value: "[FLASH]/d"}}, nil, "storage type \"FLASH\""},
		{"reserved per type", []conf.KeyValue{{Key: conf.DFSDataNodeDuReserved, Value: "1g"}, {Key: conf.DFSDataNodeDuReserved + ".ssd", Value: "2g"}},
			func(c Config) bool {
				return c.reservedFor(storage.SSD) == 2<<30 && c.reservedFor(storage.Disk) == 1<<30
			}, ""},
		{"scanner and bandwidth", []conf.KeyValue{{Key: conf.DFSBlockScannerBytesPerSecond, Value: "0"}, {Key: conf.DFSDataNodeScanPeriodHours, Value: "30s"},
			{Key: conf.DFSDataNodeBalanceBandwidth, Value: "10m"}, {Key: conf.DFSDataNodeDirectoryScanInterval, Value: "60"}},
			func(c Config) bool {
				return !c.Scanner.Enabled() && c.Scanner.Period == 30*time.Second && c.BalanceBandwidth == 10<<20 && c.DirScan.Interval == time.Minute
			}, ""},
		{"available space policy", []conf.KeyValue{{Key: conf.DFSDataNodeVolumeChoosingPolicy, Value: "org.apache.hadoop.hdfs.server.datanode.fsdataset.AvailableSpaceVolumeChoosingPolicy"}},
			func(c Config) bool { return strings.HasSuffix(c.VolumePolicy, "AvailableSpaceVolumeChoosingPolicy") }, ""},
		{"unknown policy", []conf.KeyValue{{Key: conf.DFSDataNodeVolumeChoosingPolicy, Value: "MostFullFirst"}}, nil, conf.DFSDataNodeVolumeChoosingPolicy},
		{"too many failures tolerated", []conf.KeyValue{{Key: conf.DFSDataNodeDataDir, Value: "/d1,/d2"}, {Key: conf.DFSDataNodeFailedVolumesTolerated, Value: "2"}},
			nil, conf.DFSDataNodeFailedVolumesTolerated},
		{"hdfs dir", []conf.KeyValue{{Key: conf.DFSDataNodeDataDir, Value: "hdfs://x/d"}}, nil, "only file://"},
		{"duplicate dir", []conf.KeyValue{{Key: conf.DFSDataNodeDataDir, Value: "/d,/d"}}, nil, "listed twice"},
		{"zero threads", []conf.KeyValue{{Key: conf.DFSDataNodeMaxTransferThreads, Value: "0"}}, nil, conf.DFSDataNodeMaxTransferThreads},
		{"bad address", []conf.KeyValue{{Key: conf.DFSDataNodeAddress, Value: "nowhere"}}, nil, conf.DFSDataNodeAddress},
		{"zero heartbeat", []conf.KeyValue{{Key: conf.DFSHeartbeatInterval, Value: "0"}}, nil, conf.DFSHeartbeatInterval},
		{"network limits", []conf.KeyValue{{Key: conf.IPCClientIdleThreshold, Value: "50"}, {Key: conf.HadoopHTTPMaxThreads, Value: "8"}},
			func(c Config) bool { return c.IPCLimits.IdleThreshold == 50 && c.HTTPLimits.MaxRequests == 8 }, ""},
		{"negative kill max", []conf.KeyValue{{Key: conf.IPCClientKillMax, Value: "-1"}}, nil, conf.IPCClientKillMax},
		{"zero http threads", []conf.KeyValue{{Key: conf.HadoopHTTPMaxThreads, Value: "0"}}, nil, conf.HadoopHTTPMaxThreads},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ConfigFrom(conf.Defaults().With(append(append([]conf.KeyValue(nil), base...), tc.kv...)...))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(cfg) {
				t.Fatalf("unexpected config %+v", cfg)
			}
		})
	}
}

func TestConfigWithoutNameNode(t *testing.T) {
	if _, err := ConfigFrom(conf.Defaults()); err == nil {
		t.Fatal("no NameNode configured: no error")
	}
}

func TestCheckSecureConfig(t *testing.T) {
	krb := &security.Identity{}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"simple", Config{XferAddress: "127.0.0.1:9866"}, ""},
		{"no block tokens", Config{Kerberos: krb, XferAddress: "127.0.0.1:9866", DataTransfer: dtsasl.Config{Protection: security.QOPPrivacy}},
			"Security is enabled but block access tokens (via dfs.block.access.token.enable) aren't enabled"},
		{"unprivileged without SASL", Config{Kerberos: krb, BlockTokens: true, XferAddress: "127.0.0.1:9866"},
			"Cannot start secure DataNode due to incorrect config"},
		{"ephemeral port without SASL", Config{Kerberos: krb, BlockTokens: true, XferAddress: "127.0.0.1:0"},
			"Cannot start secure DataNode due to incorrect config"},
		{"privileged port", Config{Kerberos: krb, BlockTokens: true, XferAddress: "0.0.0.0:1004"}, ""},
		{"SASL", Config{Kerberos: krb, BlockTokens: true, XferAddress: "127.0.0.1:9866", DataTransfer: dtsasl.Config{Protection: security.QOPAuthentication}}, ""},
		{"ignore secure ports", Config{Kerberos: krb, BlockTokens: true, XferAddress: "127.0.0.1:9866", IgnoreSecurePorts: true}, ""},
	} {
		err := checkSecureConfig(&tc.cfg)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
