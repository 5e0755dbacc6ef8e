package minicluster

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// BenchmarkRestartAfterEdits times a restart of the active NameNode (stop,
// start, and with HA the transition to active) after a number of edits on a
// namespace of fixed size (10,000 directories, then chmods of them), with a
// standby checkpointing every 10,000 transactions and, for comparison,
// without HA and without checkpoints, where every edit is replayed. The
// namespace does not grow with the edits, so the image costs the same at
// every size and what changes is the edits replayed. It reports the edits
// the start replayed and the start time:
//
//	go test -run '^$' -bench RestartAfterEdits -benchtime 3x ./internal/minicluster/
func BenchmarkRestartAfterEdits(b *testing.B) {
	for _, withHA := range []bool{true, false} {
		for _, n := range []int{20_000, 80_000, 320_000} {
			name := fmt.Sprintf("ha=%v/edits=%d", withHA, n)
			b.Run(name, func(b *testing.B) { benchRestart(b, withHA, n) })
		}
	}
}

func benchRestart(b *testing.B, withHA bool, n int) {
	ctx := context.Background()
	kv := []conf.KeyValue{
		{Key: conf.DFSHATailEditsPeriod, Value: "100ms"},
		{Key: conf.DFSHALogRollPeriod, Value: "1s"},
		{Key: conf.DFSNameNodeCheckpointTxns, Value: "10000"},
		{Key: conf.DFSNameNodeCheckpointCheck, Value: "200ms"},
	}
	c, err := Start(ctx, Options{Dir: b.TempDir(), DataNodes: 1, HA: withHA, Conf: kv})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	fsys, err := client.New(client.Options{Addresses: c.NameNodeAddrs(), User: c.NameNode().SuperUser()})
	if err != nil {
		b.Fatal(err)
	}
	defer fsys.Close()
	const threads, dirs = 16, 10_000
	for i := range dirs {
		if err := fsys.MkdirAll(ctx, fmt.Sprintf("/d%d/%d", i%100, i), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, threads)
	for w := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += threads {
				d := i % dirs
				if err := fsys.Chmod(ctx, fmt.Sprintf("/d%d/%d", d%100, d), fs.FileMode(0o700+i%64)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	if withHA {
		// Wait for the standby's checkpoint of nearly everything.
		dir := filepath.Join(c.opts.Dir, "nn1", "name")
		deadline := time.Now().Add(2 * time.Minute)
		for {
			imgs, err := fsimage.List(vfs.Default, dir)
			if err != nil {
				b.Fatal(err)
			}
			if len(imgs) > 0 && imgs[len(imgs)-1].TxID >= int64(n)-10_000 {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("no checkpoint near txid %d came from the standby", n)
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
		nn := c.NameNodes()[0]
		if withHA {
			if err := nn.TransitionToActive(ctx); err != nil {
				b.Fatal(err)
			}
		}
		took += time.Since(start)
		replayed = nn.Loaded().Replayed
	}
	b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "restart-ms")
	b.ReportMetric(float64(replayed), "replayed-edits")
}
