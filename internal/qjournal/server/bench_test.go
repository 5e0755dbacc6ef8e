package server_test

import (
	"fmt"
	"sync"
	"testing"
)

// BenchmarkQuorumSync measures batches made durable on three JournalNodes
// on this machine's disk: one writer waiting for each op (latency), and
// 16 writers sharing flushes (group commit). Compare with the edit log's
// own BenchmarkSync over one local directory.
func BenchmarkQuorumSync(b *testing.B) {
	for _, writers := range []int{1, 16} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := startJNs(b, 3, nil)
			s.format()
			w := s.newWriter(nil)
			w.become()
			b.ResetTimer()
			var wg sync.WaitGroup
			per := b.N/writers + 1
			for k := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range per {
						if _, err := w.mkdirs(fmt.Sprintf("w%d-%d-", k, i), 1); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}
