package scanner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
)

// Defaults of the directory scanner (hdfs-default.xml).
const (
	DefaultDirInterval      = 21600 * time.Second // dfs.datanode.directoryscan.interval
	DefaultDirThrottleMsSec = 1000                // dfs.datanode.directoryscan.throttle.limit.ms.per.sec
	DefaultDirThreads       = 1                   // dfs.datanode.directoryscan.threads
)

// DirConfig configures the directory scanner.
type DirConfig struct {
	// Interval is dfs.datanode.directoryscan.interval (21600 s); zero or
	// negative disables the scanner.
	Interval time.Duration
	// ThrottleMsPerSec is dfs.datanode.directoryscan.throttle.limit.ms.per.sec
	// (1000, unthrottled): how many milliseconds of every second a lister
	// may work.
	ThrottleMsPerSec int
	// Threads is dfs.datanode.directoryscan.threads (1): volumes listed at
	// once.
	Threads int
	// FirstDelay is the wait before the first scan; Hadoop spreads it at
	// random over the interval so that DataNodes do not scan together.
	FirstDelay time.Duration
}

// DirReporter is told what a directory scan repaired, per block pool, so
// that the NameNode can be told.
type DirReporter interface {
	Reconciled(pool string, fixes []storage.Fix, st storage.DiffStats)
}

// DirResult is what one directory scan did.
type DirResult struct {
	Pools map[string]storage.DiffStats
	Fixes map[string][]storage.Fix
}

// DirectoryScanner reconciles the replica map with the disks every
// interval.
type DirectoryScanner struct {
	cfg      DirConfig
	clk      clock.Clock
	log      *slog.Logger
	ds       *storage.Dataset
	deleting func(pool string, id int64) bool
	rep      DirReporter

	ctx     context.Context
	cancel  context.CancelFunc
	started atomic.Bool
	done    chan struct{}
	runMu   sync.Mutex // one scan at a time
}

// NewDirectoryScanner returns a scanner over ds; Start runs it every
// interval. deleting says whether a replica is being deleted (its files
// on disk are no difference).
func NewDirectoryScanner(cfg DirConfig, clk clock.Clock, log *slog.Logger, ds *storage.Dataset,
	deleting func(pool string, id int64) bool, rep DirReporter) *DirectoryScanner {
	if cfg.ThrottleMsPerSec <= 0 || cfg.ThrottleMsPerSec > 1000 {
		cfg.ThrottleMsPerSec = DefaultDirThrottleMsSec
	}
	if cfg.Threads < 1 {
		cfg.Threads = DefaultDirThreads
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &DirectoryScanner{cfg: cfg, clk: clk, log: log, ds: ds, deleting: deleting, rep: rep,
		ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// Start runs the periodic scans on the scanner's goroutine (nothing when
// the interval disables it). Close stops it.
func (d *DirectoryScanner) Start() {
	if d.cfg.Interval <= 0 || d.started.Swap(true) {
		return
	}
	go d.run()
}

func (d *DirectoryScanner) run() {
	defer close(d.done)
	d.log.Info("directory scanner started", "interval", d.cfg.Interval, "firstScanIn", d.cfg.FirstDelay,
		"throttleMsPerSec", d.cfg.ThrottleMsPerSec, "threads", d.cfg.Threads)
	wait := d.cfg.FirstDelay
	for {
		t := d.clk.NewTimer(wait)
		select {
		case <-d.ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		if _, err := d.RunOnce(d.ctx); err != nil && d.ctx.Err() == nil {
			d.log.Warn("directory scan failed", "err", err)
		}
		wait = d.cfg.Interval
	}
}

// RunOnce scans every volume now and repairs the map.
func (d *DirectoryScanner) RunOnce(ctx context.Context) (DirResult, error) {
	d.runMu.Lock()
	defer d.runMu.Unlock()
	res := DirResult{Pools: map[string]storage.DiffStats{}, Fixes: map[string][]storage.Fix{}}
	start := d.clk.Now()
	var errs []error
	for _, bp := range d.ds.Pools() {
		disk, err := d.compile(ctx, bp)
		if err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			// A volume that cannot be listed is the disk checker's
			// business; the others are still reconciled.
			errs = append(errs, err)
		}
		deleting := func(id int64) bool { return d.deleting != nil && d.deleting(bp.ID, id) }
		diff, st := storage.Differences(bp.Replicas(), disk, deleting)
		var fixes []storage.Fix
		for _, si := range diff {
			if err != nil && !listed(disk, si) {
				continue // its volume was not listed: not a difference
			}
			f, ferr := bp.CheckAndUpdate(si)
			if ferr != nil {
				errs = append(errs, ferr)
				continue
			}
			if f.Message != "" {
				d.log.Warn("directory scanner: "+f.Message, "pool", bp.ID, "action", f.Action.String())
			}
			fixes = append(fixes, f)
		}
		d.log.Info(fmt.Sprintf("BlockPool %s %s", bp.ID, st), "took", d.clk.Since(start))
		res.Pools[bp.ID], res.Fixes[bp.ID] = st, fixes
		if d.rep != nil && len(fixes) > 0 {
			d.rep.Reconciled(bp.ID, fixes, st)
		}
	}
	return res, errors.Join(errs...)
}

// listed reports whether si's volume was in the disk report.
func listed(disk []storage.ScanInfo, si storage.ScanInfo) bool {
	for _, x := range disk {
		if x.Vol == si.Vol {
			return true
		}
	}
	return false
}

// compile lists the pool on every volume, Threads volumes at a time, and
// merges the reports by block id.
func (d *DirectoryScanner) compile(ctx context.Context, bp *storage.BlockPool) ([]storage.ScanInfo, error) {
	vols := d.ds.Volumes()
	reports := make([][]storage.ScanInfo, len(vols))
	errs := make([]error, len(vols))
	sem := make(chan struct{}, d.cfg.Threads)
	var wg sync.WaitGroup
	for i, v := range vols {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			reports[i], errs[i] = bp.CompileReport(v, d.pacer(ctx))
		}()
	}
	wg.Wait()
	var all []storage.ScanInfo
	for _, r := range reports {
		all = append(all, r...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all, errors.Join(errs...)
}

// pacer returns a lister's pace function: it lets the lister work
// ThrottleMsPerSec milliseconds of every second of the clock, then waits
// for the next second.
func (d *DirectoryScanner) pacer(ctx context.Context) func() error {
	limit := time.Duration(d.cfg.ThrottleMsPerSec) * time.Millisecond
	secStart := d.clk.Now()
	return func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if limit >= time.Second {
			return nil
		}
		now := d.clk.Now()
		busy := now.Sub(secStart)
		if busy < limit {
			return nil
		}
		if rest := time.Second - busy; rest > 0 {
			t := d.clk.NewTimer(rest)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C():
			}
		}
		secStart = d.clk.Now()
		return nil
	}
}

// Close stops the periodic scans and waits for a scan in progress.
func (d *DirectoryScanner) Close() {
	d.cancel()
	if d.started.Load() {
		<-d.done
	}
	d.runMu.Lock() // a RunOnce of another caller
	d.runMu.Unlock()
}
