package namenode_test

import (
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
)

// TestConfigNetworkLimits: the RPC and HTTP limits come from Hadoop's keys,
// and a bad value is refused naming its key.
func TestConfigNetworkLimits(t *testing.T) {
	base := conf.KeyValue{Key: conf.DFSNameNodeNameDir, Value: t.TempDir()}
	cfg, err := namenode.ConfigFrom(conf.Defaults().With(base,
		conf.KeyValue{Key: conf.IPCClientIdleThreshold, Value: "100"},
		conf.KeyValue{Key: conf.IPCServerMaxConnections, Value: "0"},
		conf.KeyValue{Key: conf.HadoopHTTPMaxThreads, Value: "32"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RPCLimits.IdleThreshold != 100 || cfg.RPCLimits.MaxConnections != ipc.NoLimit || cfg.HTTPLimits.MaxRequests != 32 {
		t.Fatalf("limits %+v %+v", cfg.RPCLimits, cfg.HTTPLimits)
	}
	for key, v := range map[string]string{
		conf.IPCClientKillMax:        "-1",
		conf.IPCServerPurgeInterval:  "often",
		conf.HadoopHTTPIdleTimeout:   "-1",
		conf.HadoopHTTPMaxThreads:    "0",
		conf.IPCServerMaxConnections: "-7",
	} {
		_, err := namenode.ConfigFrom(conf.Defaults().With(base, conf.KeyValue{Key: key, Value: v}))
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%s: %v", key, v, err)
		}
	}
}
