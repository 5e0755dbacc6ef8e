package ipc

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// BenchmarkRoundTrip measures calls per second of a trivial method on ONE
// loopback TCP connection shared by 1, 16 and 64 concurrent callers.
func BenchmarkRoundTrip(b *testing.B) {
	for _, callers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			srv := NewServer(ServerConfig{})
			Handle(srv.Service(clientProtocol), "renewLease", func(ctx context.Context, req *hdfs.RenewLeaseRequestProto) (*hdfs.RenewLeaseResponseProto, error) {
				return &hdfs.RenewLeaseResponseProto{}, nil
			})
			addr := startServer(b, srv)
			c := newTestClient(b, addr)
			req := &hdfs.RenewLeaseRequestProto{ClientName: proto.String("go-hdfs-ABCDEFGHIJKLMNOP")}
			ctx := context.Background()
			var resp hdfs.RenewLeaseResponseProto
			if err := c.Call(ctx, "renewLease", req, &resp); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			start := time.Now()
			var wg sync.WaitGroup
			per := b.N / callers
			extra := b.N % callers
			for i := range callers {
				n := per
				if i < extra {
					n++
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					var resp hdfs.RenewLeaseResponseProto
					for range n {
						if err := c.Call(ctx, "renewLease", req, &resp); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/call")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkRoundTripConns is BenchmarkRoundTrip with one connection (one
// Client) per caller, as hdfs bench namenode's threads have by default: the
// raw figure for its -threads T without -sharedConnection.
func BenchmarkRoundTripConns(b *testing.B) {
	for _, callers := range []int{16, 64} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			srv := NewServer(ServerConfig{})
			Handle(srv.Service(clientProtocol), "renewLease", func(ctx context.Context, req *hdfs.RenewLeaseRequestProto) (*hdfs.RenewLeaseResponseProto, error) {
				return &hdfs.RenewLeaseResponseProto{}, nil
			})
			addr := startServer(b, srv)
			req := &hdfs.RenewLeaseRequestProto{ClientName: proto.String("go-hdfs-ABCDEFGHIJKLMNOP")}
			ctx := context.Background()
			clients := make([]*Client, callers)
			for i := range clients {
				clients[i] = newTestClient(b, addr)
				var resp hdfs.RenewLeaseResponseProto
				if err := clients[i].Call(ctx, "renewLease", req, &resp); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			start := time.Now()
			var wg sync.WaitGroup
			per := b.N / callers
			extra := b.N % callers
			for i := range callers {
				n := per
				if i < extra {
					n++
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					var resp hdfs.RenewLeaseResponseProto
					for range n {
						if err := clients[i].Call(ctx, "renewLease", req, &resp); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/call")
			b.ReportMetric(0, "ns/op")
		})
	}
}
