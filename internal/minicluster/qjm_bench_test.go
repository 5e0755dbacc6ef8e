package minicluster

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// BenchmarkTailLag measures how far behind the active the standby is with
// in-progress tailing over three JournalNodes (dfs.ha.tail-edits.in-progress,
// the JournalNodes' edit caches, dfs.ha.tail-edits.period 5ms): for each
// mkdir, the time from its acknowledgement by the active to the standby
// having applied it. It reports the 50th and 99th percentile in
// milliseconds.
//
//	go test -run '^$' -bench BenchmarkTailLag -benchtime 2000x ./internal/minicluster
func BenchmarkTailLag(b *testing.B) {
	ctx := context.Background()
	c, err := Start(ctx, Options{Dir: b.TempDir(), DataNodes: -1, HA: true, Conf: []conf.KeyValue{
		{Key: conf.DFSHATailEditsPeriod, Value: "5ms"},
		{Key: conf.DFSHATailEditsInProgress, Value: "true"},
		{Key: conf.DFSHALogRollPeriod, Value: "0"},
		{Key: conf.DFSHAStandbyCheckpoints, Value: "false"},
		{Key: conf.DFSNameNodeSafeModeExtension, Value: "0"},
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	nns := c.NameNodes()
	active, standby := nns[0], nns[1]
	fsys, err := client.New(client.Options{Addresses: []string{active.RPCAddr().String()}, User: active.SuperUser()})
	if err != nil {
		b.Fatal(err)
	}
	defer fsys.Close()
	lags := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := fsys.Mkdir(ctx, fmt.Sprintf("/lag%07d", i), 0o755); err != nil {
			b.Fatal(err)
		}
		acked := time.Now()
		want := active.LastAppliedOrWrittenTxID()
		for standby.LastAppliedOrWrittenTxID() < want {
			if time.Since(acked) > 30*time.Second {
				b.Fatalf("the standby did not reach txid %d (at %d)", want, standby.LastAppliedOrWrittenTxID())
			}
			time.Sleep(50 * time.Microsecond)
		}
		lags = append(lags, time.Since(acked))
	}
	b.StopTimer()
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	pct := func(p float64) float64 {
		return float64(lags[min(int(p*float64(len(lags))), len(lags)-1)]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-lag-ms")
	b.ReportMetric(pct(0.99), "p99-lag-ms")
	b.ReportMetric(pct(1.0), "max-lag-ms")
}
