package editlog

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// BenchmarkGroupCommit measures Append+Sync of a small mkdir on a real disk
// (the test's temp dir, vfs.Default) with 1, 16 and 64 concurrent writers.
func BenchmarkGroupCommit(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "current")
			if err := vfs.Default.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			l, err := New(Config{Logger: quietLogger}, nil, []Journal{NewFileJournal(vfs.Default, dir)})
			if err != nil {
				b.Fatal(err)
			}
			if err := l.InitForWrite(context.Background()); err != nil {
				b.Fatal(err)
			}
			if err := l.StartSegment(context.Background(), 1); err != nil {
				b.Fatal(err)
			}
			o := &op.Mkdir{InodeID: 16390, Path: "/user/bench/dir-000001", Mtime: 1700000000000,
				Perm: op.Perm{User: "hdfs", Group: "supergroup", Mode: 0o755}}
			flushes0 := l.Stats().Flushes
			var left atomic.Int64
			left.Store(int64(b.N))
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for left.Add(-1) >= 0 {
						if err := l.Sync(context.Background(), mustAppend(b, l, o)); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			flushes := l.Stats().Flushes - flushes0
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "txns/s")
			if flushes > 0 {
				b.ReportMetric(float64(b.N)/float64(flushes), "txns/fsync")
			}
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkFsyncOnly is the baseline: append 200 bytes and fdatasync, in a loop.
func BenchmarkFsyncOnly(b *testing.B) {
	f, err := vfs.Default.Create(filepath.Join(b.TempDir(), "raw"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	rec := make([]byte, 200)
	b.ResetTimer()
	for range b.N {
		if _, err := f.Write(rec); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "fsyncs/s")
}
