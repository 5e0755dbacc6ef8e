package blockmgmt

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// benchManager has nodes dn0..dn(n-1) and blocks 0..blocks-1 with three
// replicas each, out of safe mode.
func benchManager(b *testing.B, nodes, blocks int) (*Manager, [][]ReportedReplica) {
	b.Helper()
	m := New(DefaultConfig(), rand.New(rand.NewPCG(1, 2)))
	for i := range nodes {
		id := DatanodeID{UUID: fmt.Sprintf("dn%d", i), IPAddr: fmt.Sprintf("10.0.%d.%d", i/250, i%250), XferPort: 9866}
		if err := m.RegisterDatanode(id, t0, StorageReport{StorageID: fmt.Sprintf("s%d", i), Capacity: 1 << 40, Remaining: 1 << 40}); err != nil {
			b.Fatal(err)
		}
	}
	reports := make([][]ReportedReplica, nodes)
	for i := range blocks {
		blk := Block{ID: int64(1<<30 + i), NumBytes: 128 << 20, GenStamp: 1001}
		if err := m.AddBlock(int64(i/10), blk, 3, Complete, nil); err != nil {
			b.Fatal(err)
		}
		for r := range 3 {
			n := (i + r) % nodes
			reports[n] = append(reports[n], ReportedReplica{Block: blk, State: Finalized})
		}
	}
	m.Activate(t0)
	return m, reports
}

// BenchmarkFullBlockReport100k: one storage re-reporting 100,000 replicas it
// already holds (the steady-state six-hourly report).
func BenchmarkFullBlockReport100k(b *testing.B) {
	m, reps := benchManager(b, 3, 100_000)
	for n := range 3 {
		if _, err := m.ProcessFullBlockReport(fmt.Sprintf("dn%d", n), fmt.Sprintf("s%d", n), reps[n], t0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := m.ProcessFullBlockReport("dn0", "s0", reps[0], t0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100_000, "ns/replica")
}

// BenchmarkFirstBlockReport100k: the first report after a restart, when every
// replica is new to the map.
func BenchmarkFirstBlockReport100k(b *testing.B) {
	for range b.N {
		b.StopTimer()
		m, reps := benchManager(b, 3, 100_000)
		b.StartTimer()
		if _, err := m.ProcessFullBlockReport("dn0", "s0", reps[0], t0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMemoryPerBlock measures the heap held per block with 1,000,000
// blocks of three replicas each on 30 nodes.
func BenchmarkMemoryPerBlock(b *testing.B) {
	const blocks = 1_000_000
	for range b.N {
		before := heapAfterGC()
		m, reps := benchManager(b, 30, blocks)
		for n := range reps {
			if _, err := m.ProcessFullBlockReport(fmt.Sprintf("dn%d", n), fmt.Sprintf("s%d", n), reps[n], t0); err != nil {
				b.Fatal(err)
			}
		}
		reps = nil
		b.ReportMetric(float64(heapAfterGC()-before)/blocks, "bytes/block")
		runtime.KeepAlive(m)
	}
}

// heapAfterGC is the heap in use after a full collection.
func heapAfterGC() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkFullBlockReport1MSliced: one storage's report of 1,000,000
// replicas (the first after a restart, then a steady-state one), processed
// in slices as the NameNode does (batches of 16,384 replicas, each in
// slices of at most the default 2 ms budget): the longest slice is what a
// lock holder would hold. The longest slice is given in wall-clock time and
// in the thread's CPU time (on Linux), which leaves out the waits for a
// core that a loaded machine adds to the wall clock.
func BenchmarkFullBlockReport1MSliced(b *testing.B) {
	const blocks, batch, budget = 1_000_000, 16384, 2 * time.Millisecond
	for _, first := range []bool{true, false} {
		name := "steady"
		if first {
			name = "first"
		}
		b.Run(name, func(b *testing.B) {
			var longest, longestCPU, total, totalCPU time.Duration
			slices := 0
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for range b.N {
				b.StopTimer()
				m, reps := benchManager(b, 1, blocks)
				if !first {
					if _, err := m.ProcessFullBlockReport("dn0", "s0", reps[0], t0); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				b.StartTimer()
				timed := func(f func()) {
					s, sc := time.Now(), threadCPU()
					f()
					d := time.Since(s)
					longestCPU = max(longestCPU, threadCPU()-sc)
					totalCPU += threadCPU() - sc
					longest = max(longest, d)
					total += d
					slices++
				}
				var fr *FullReport
				var err error
				timed(func() { fr, err = m.StartFullReport("dn0", "s0", t0) })
				if err != nil {
					b.Fatal(err)
				}
				for k := 0; k < len(reps[0]); k += batch {
					for rest := reps[0][k:min(k+batch, len(reps[0]))]; len(rest) > 0; {
						var n int
						timed(func() { n, err = m.ReportFor(fr, rest, t0, budgetFrom(time.Now(), budget)) })
						if err != nil {
							b.Fatal(err)
						}
						rest = rest[n:]
					}
				}
				for done := false; !done; {
					timed(func() { done, err = m.SweepFor(fr, budgetFrom(time.Now(), budget), t0) })
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/report")
			b.ReportMetric(float64(longest.Microseconds())/1000, "ms-longest-slice")
			b.ReportMetric(float64(longestCPU.Microseconds())/1000, "ms-longest-slice-cpu")
			b.ReportMetric(float64(totalCPU.Microseconds())/1000/float64(b.N), "ms-cpu/report")
			b.ReportMetric(float64(slices)/float64(b.N), "slices/report")
		})
	}
}

// budgetFrom ends a slice begun at start once d has passed, as the
// NameNode's slices end.
func budgetFrom(start time.Time, d time.Duration) Over {
	return func() bool { return time.Since(start) >= d }
}
