package balancer

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// BenchmarkBalancerBandwidth measures the rate at which the balancer moves
// replicas onto an empty DataNode after dfsadmin -setBalancerBandwidth: the
// DataNodes throttle every copy at that rate, and the empty node, which
// receives every move, is the bottleneck. It reports the bytes moved per
// second of the first iteration (from the first move's start to the last
// one's end) and that rate as a percentage of the bandwidth set.
//
//	go test -run '^$' -bench BalancerBandwidth -benchtime 1x ./internal/balancer
//
// HDFSGO_BENCH_LOG=1 prints the balancer's log (every move) on stderr.
func BenchmarkBalancerBandwidth(b *testing.B) {
	for _, mib := range []int64{8, 16} {
		b.Run(fmt.Sprintf("%dMiBps", mib), func(b *testing.B) { benchBandwidth(b, mib<<20) })
	}
}

func benchBandwidth(b *testing.B, bandwidth int64) {
	for range b.N {
		b.StopTimer()
		// Nodes of 64 MiB per MiB/s of bandwidth, three of them 3/8
		// full: about 18 seconds of moves, so that the one period a
		// throttler may bank (half a second's worth) stays a few percent
		// of the run.
		capacity := 64 * bandwidth
		s := startSkewed(b, int(capacity*3/8)>>20, 1<<20, capacityKV(capacity)...)
		ctx := context.Background()
		if err := s.admin.Call(ctx, "setBalancerBandwidth", &hdfs.SetBalancerBandwidthRequestProto{Bandwidth: proto.Int64(bandwidth)},
			&hdfs.SetBalancerBandwidthResponseProto{}); err != nil {
			b.Fatal(err)
		}
		// Every DataNode takes the new rate with its next heartbeat.
		for _, dn := range s.c.DataNodes() {
			waitBandwidth(b, dn.IPCAddr().String(), bandwidth)
		}
		var first IterationStats
		cfg := s.config(b)
		if os.Getenv("HDFSGO_BENCH_LOG") != "" {
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
		}
		cfg.Observe = func(st IterationStats) {
			if st.Iteration == 0 {
				first = st
			}
		}
		b.StartTimer()
		var out nopWriter
		if st := Run(ctx, cfg, &out); st != Success {
			b.Fatalf("exit status %d", st)
		}
		b.StopTimer()
		secs := first.Last.Sub(first.First).Seconds()
		rate := float64(first.BytesMoved) / secs
		b.ReportMetric(float64(first.BytesMoved)/(1<<20), "MiB-moved")
		b.ReportMetric(secs, "s-moving")
		b.ReportMetric(rate/(1<<20), "MiB/s")
		b.ReportMetric(rate*100/float64(bandwidth), "%-of-bandwidth")
		b.ReportMetric(float64(first.FailedMoves), "failed-moves")
		s.c.Close()
	}
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// waitBandwidth waits until a DataNode reports the balancer bandwidth
// (ClientDatanodeProtocol getBalancerBandwidth, dfsadmin
// -getBalancerBandwidth).
func waitBandwidth(t testing.TB, ipcAddr string, want int64) {
	t.Helper()
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{ipcAddr}, Protocol: "org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol"})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var resp hdfs.GetBalancerBandwidthResponseProto
		if err := c.Call(context.Background(), "getBalancerBandwidth", &hdfs.GetBalancerBandwidthRequestProto{}, &resp); err != nil {
			t.Fatal(err)
		}
		if int64(resp.GetBandwidth()) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(fmt.Sprintf("%s: balancer bandwidth %d, want %d", ipcAddr, resp.GetBandwidth(), want))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
