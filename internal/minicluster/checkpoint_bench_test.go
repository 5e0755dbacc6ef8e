package minicluster

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// BenchmarkRestartWithCheckpointNode times a restart of the NameNode after
// a number of mkdirs, with a Checkpoint Node taking a checkpoint every
// 10,000 transactions and, for comparison, without one, where every edit is
// replayed. It reports the edits the start replayed and the start time:
//
//	go test -run '^$' -bench RestartWithCheckpointNode -benchtime 3x ./internal/minicluster/
func BenchmarkRestartWithCheckpointNode(b *testing.B) {
	for _, withCN := range []bool{true, false} {
		for _, n := range []int{20_000, 80_000, 320_000} {
			b.Run(fmt.Sprintf("checkpointNode=%v/mkdirs=%d", withCN, n), func(b *testing.B) { benchRestartCN(b, withCN, n) })
		}
	}
}

func benchRestartCN(b *testing.B, withCN bool, n int) {
	ctx := context.Background()
	kv := []conf.KeyValue{
		{Key: conf.DFSNameNodeCheckpointTxns, Value: "10000"},
		{Key: conf.DFSNameNodeCheckpointCheck, Value: "200ms"},
		{Key: conf.DFSNameNodeSafeModeExtension, Value: "0"},
	}
	c, err := Start(ctx, Options{Dir: b.TempDir(), DataNodes: -1, Conf: kv})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if withCN {
		cn, err := c.StartHelper(ctx, namenode.RoleCheckpoint, filepath.Join(c.opts.Dir, "cn"), kv...)
		if err != nil {
			b.Fatal(err)
		}
		defer cn.Close()
	}
	fsys, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, User: c.NameNode().SuperUser()})
	if err != nil {
		b.Fatal(err)
	}
	defer fsys.Close()
	mkdirsBench(b, fsys, n)
	if withCN {
		dir := filepath.Join(c.opts.Dir, "nn", "name")
		deadline := time.Now().Add(5 * time.Minute)
		for newestImageB(b, dir) < int64(n)-10_000 {
			if time.Now().After(deadline) {
				b.Fatalf("no checkpoint near txid %d came from the Checkpoint Node", n)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	b.ResetTimer()
	var replayed int64
	var took time.Duration
	for range b.N {
		start := time.Now()
		if err := c.RestartNameNode(ctx); err != nil {
			b.Fatal(err)
		}
		took += time.Since(start)
		replayed = c.NameNode().Loaded().Replayed
	}
	b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "restart-ms")
	b.ReportMetric(float64(replayed), "replayed-edits")
}

func mkdirsBench(b *testing.B, fsys *client.FileSystem, n int) {
	const threads = 16
	errs := make(chan error, threads)
	done := make(chan struct{})
	for w := range threads {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := w; i < n; i += threads {
				if err := fsys.MkdirAll(context.Background(), fmt.Sprintf("/d%d/%d", i%100, i), 0o755); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range threads {
		<-done
	}
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

func newestImageB(b *testing.B, dir string) int64 {
	imgs, err := fsimage.List(vfs.Default, dir)
	if err != nil {
		b.Fatal(err)
	}
	if len(imgs) == 0 {
		return -1
	}
	return imgs[len(imgs)-1].TxID
}
