package datanode

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
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
		{"ssd volume", []conf.KeyValue{{Key: conf.DFSDataNodeDataDir, Value: "[SSD]/d"}}, nil, "storage type SSD"},
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
