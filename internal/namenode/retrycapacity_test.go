package namenode

import (
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// TestRetryCacheCapacity: the retry cache is sized as Hadoop sizes it from
// dfs.namenode.retrycache.heap.percent — about 4,096 calls for every 64 MB
// at the default 0.03 %, a power of two, at least 2^10 — and a percent
// outside (0, 100] is refused naming the key.
func TestRetryCacheCapacity(t *testing.T) {
	for _, tc := range []struct {
		memory  int64
		percent float64
		want    int
	}{
		{64 << 20, 0.03, 4096},
		{24 << 30, 0.03, 1 << 20},
		{4 << 30, 0.03, 1 << 18},
		{1 << 20, 0.03, 1 << 10},
		{1 << 50, 100, 1 << 30},
	} {
		if got := retryCacheCapacity(tc.memory, tc.percent); got != tc.want {
			t.Errorf("retryCacheCapacity(%d, %v) = %d, want %d", tc.memory, tc.percent, got, tc.want)
		}
	}
	for _, v := range []string{"0", "-1", "101"} {
		_, err := ConfigFrom(conf.Defaults().With(conf.KeyValue{Key: conf.DFSNameNodeRetryCacheHeapPercent, Value: v}))
		if err == nil || !strings.Contains(err.Error(), conf.DFSNameNodeRetryCacheHeapPercent) {
			t.Errorf("heap percent %s: %v", v, err)
		}
	}
	cfg, err := ConfigFrom(conf.Defaults())
	if err != nil || cfg.RetryCacheHeapPercent != 0.03 {
		t.Fatalf("default heap percent %v, %v", cfg.RetryCacheHeapPercent, err)
	}
}
