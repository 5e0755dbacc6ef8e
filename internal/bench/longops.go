package bench

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// OpLongOps measures what long operations do to other clients: getFileInfo
// latency while Threads writers create files, first while a recursive
// delete of a directory of Files files and a full block report of
// BlocksPerReport replicas (one simulated DataNode, reporting again and
// again for at least 3 s) run, then for as long again without them.
const OpLongOps = "longOps"

// Defaults of the longOps op.
const (
	DefaultLongOpsFiles  = 10000
	DefaultLongOpsBlocks = 10000
	// longOpsReaders is how many threads call getFileInfo.
	longOpsReaders = 4
	// longOpsMinPhase is how long the full reports go on, one after the
	// other, in the loaded phase.
	longOpsMinPhase = 3 * time.Second
)

type phaseResult struct {
	reads          stats
	creates        int
	elapsed        time.Duration
	lockMax        time.Duration
	pauses         int64         // slices of long operations that paused for others
	paused         time.Duration // and for how long in all
	deleteTook     time.Duration
	reportTook     time.Duration // the mean of the reports
	reports        int
	withBackground bool
}

func runLongOps(ctx context.Context, opts Options, out io.Writer) error {
	if opts.BlocksPerReport == 0 {
		opts.BlocksPerReport = DefaultLongOpsBlocks
	}
	if opts.BlocksPerFile == 0 {
		opts.BlocksPerFile = 100
	}
	opts.Datanodes = 1
	tg, err := openTarget(ctx, &opts)
	if err != nil {
		return err
	}
	defer tg.close()
	fmt.Fprintf(out, "NameNode: %s (%s), user %s, %d writer threads, %d reader threads\n", tg.addrs[0], tg.kind(), opts.User, opts.Threads, longOpsReaders)
	base := BaseDir + "/" + OpLongOps
	if err := (&opRun{tg: tg, base: base}).clean(ctx); err != nil {
		return err
	}
	r := &reportRun{opts: &opts, tg: tg, byUUID: map[string]*simNode{}, repl: 1}
	stop, err := r.start(ctx)
	if err != nil {
		return err
	}
	defer stop()

	prep := time.Now()
	files := (opts.BlocksPerReport + opts.BlocksPerFile - 1) / opts.BlocksPerFile
	if err := r.write(ctx, base+"/blocks", files); err != nil {
		return fmt.Errorf("bench: longOps: writing blocks: %w", err)
	}
	blockFiles := newNames(base+"/blocks", "ThroughputBench", files, max(opts.FilesPerDir, 1))
	victim := base + "/victim"
	if _, err := tg.timed(ctx, opts.Files, func(ctx context.Context, c *ipc.Client, th, i int) error {
		return createFile(ctx, c, fmt.Sprintf("%s/f%08d", victim, i), clientName(OpLongOps, th), true)
	}); err != nil {
		return fmt.Errorf("bench: longOps: filling %s: %w", victim, err)
	}
	fmt.Fprintf(out, "Prepared %d files in %s, %d blocks on one DataNode, in %.1f s\n", opts.Files, victim, len(r.nodes[0].blocks), time.Since(prep).Seconds())
	report := []*dnpb.StorageBlockReportProto{r.encode(r.nodes[0])}

	background := func(ctx context.Context, res *phaseResult) error {
		var wg sync.WaitGroup
		var derr, rerr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			s := time.Now()
			var resp hdfs.DeleteResponseProto
			derr = tg.admin.Call(ctx, "delete", &hdfs.DeleteRequestProto{Src: proto.String(victim), Recursive: proto.Bool(true)}, &resp)
			res.deleteTook = time.Since(s)
		}()
		go func() {
			// The report again and again for at least longOpsMinPhase,
			// so that the phase holds enough reads to give percentiles.
			defer wg.Done()
			n := r.nodes[0]
			s := time.Now()
			for rerr == nil && (res.reports == 0 || time.Since(s) < longOpsMinPhase) {
				var resp dnpb.BlockReportResponseProto
				rerr = n.c.Call(ctx, "blockReport", &dnpb.BlockReportRequestProto{
					Registration: n.reg, BlockPoolId: proto.String(r.pool), Reports: report,
					Context: &dnpb.BlockReportContextProto{TotalRpcs: proto.Int32(1), CurRpc: proto.Int32(0), Id: proto.Int64(int64(res.reports)), LeaseId: proto.Uint64(0)},
				}, &resp)
				res.reports++
			}
			res.reportTook = time.Since(s) / time.Duration(res.reports)
		}()
		wg.Wait()
		if derr != nil {
			return fmt.Errorf("delete %s: %w", victim, derr)
		}
		return rerr
	}
	during, err := r.phase(ctx, base+"/during", blockFiles, files, 0, background)
	if err != nil {
		return fmt.Errorf("bench: longOps: %w", err)
	}
	before, err := r.phase(ctx, base+"/quiet", blockFiles, files, during.elapsed, nil)
	if err != nil {
		return fmt.Errorf("bench: longOps: %w", err)
	}
	if !opts.KeepResults {
		if err := (&opRun{tg: tg, base: base}).clean(ctx); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "\n--- %s inputs ---\nvictimFiles = %d\nblocksPerReport = %d\nwriters = %d\nreaders = %d\n", OpLongOps, opts.Files, len(r.nodes[0].blocks), opts.Threads, longOpsReaders)
	fmt.Fprintf(out, "--- %s stats ---\n", OpLongOps)
	for _, p := range []struct {
		name string
		res  phaseResult
	}{{"quiet", before}, {"during", during}} {
		p50, p99, p999, n := p.res.reads.percentiles(nil)
		fmt.Fprintf(out, "%s: %.1f s, getFileInfo %d calls p50 / p99 / p99.9: %s / %s / %s ms, creates %.0f per sec",
			p.name, p.res.elapsed.Seconds(), n, ms(p50), ms(p99), ms(p999), float64(p.res.creates)/p.res.elapsed.Seconds())
		if tg.nn != nil {
			fmt.Fprintf(out, ", longest write lock hold %s ms, %d slice pauses (%s ms)", ms(p.res.lockMax), p.res.pauses, ms(p.res.paused))
		}
		fmt.Fprintln(out)
		if p.res.withBackground {
			fmt.Fprintf(out, "  recursive delete of %d files: %s ms; full block report of %d replicas: %s ms (mean of %d, one after the other)\n",
				opts.Files, ms(p.res.deleteTook), len(r.nodes[0].blocks), ms(p.res.reportTook), p.res.reports)
		}
	}
	return nil
}

// phase runs Threads writers creating files under dir and longOpsReaders
// readers calling getFileInfo on the block files, while bg runs (until it
// returns) or, without bg, for d.
func (r *reportRun) phase(ctx context.Context, dir string, reads names, nreads int, d time.Duration, bg func(context.Context, *phaseResult) error) (phaseResult, error) {
	var res phaseResult
	tg := r.tg
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := make(chan struct{})
	var creates atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	for th := range r.opts.Threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := tg.client(th)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := createFile(ctx, c, fmt.Sprintf("%s/t%02d/f%08d", dir, th, i), clientName(OpLongOps, th), false); err != nil {
					cancel(fmt.Errorf("create: %w", err))
					return
				}
				creates.Add(1)
			}
		}()
	}
	for th := range longOpsReaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := ipc.NewClient(ipc.ClientConfig{Addresses: tg.addrs, User: r.opts.User, Protocol: namenode.ClientProtocolName, MaxRetries: -1})
			defer c.Close()
			var mine []time.Duration
			defer func() {
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			}()
			for i := th; ; i += longOpsReaders {
				select {
				case <-stop:
					return
				default:
				}
				src := reads.path(i % nreads)
				s := time.Now()
				var resp hdfs.GetFileInfoResponseProto
				if err := c.Call(ctx, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(src)}, &resp); err != nil {
					cancel(fmt.Errorf("getFileInfo: %w", err))
					return
				}
				if resp.Fs == nil {
					cancel(fmt.Errorf("%w: getFileInfo %s: no such file", ErrCheck, src))
					return
				}
				mine = append(mine, max(time.Since(s), time.Nanosecond))
			}
		}()
	}
	var pauses0 int64
	var paused0 time.Duration
	if tg.nn != nil {
		tg.nn.WriteLockHoldMax(true)
		pauses0, paused0 = tg.nn.SlicePauses()
	}
	start := time.Now()
	var bgErr error
	if bg != nil {
		res.withBackground = true
		bgErr = bg(ctx, &res)
	} else {
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
	}
	close(stop)
	wg.Wait()
	res.elapsed = time.Since(start)
	if tg.nn != nil {
		res.lockMax, _ = tg.nn.WriteLockHoldMax(false)
		pauses, paused := tg.nn.SlicePauses()
		res.pauses, res.paused = pauses-pauses0, paused-paused0
	}
	res.creates = int(creates.Load())
	res.reads = stats{ops: len(lat), latency: lat}
	if err := context.Cause(ctx); err != nil {
		return res, err
	}
	return res, bgErr
}
