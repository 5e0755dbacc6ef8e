package scanner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/datanode/throttle"
)

// Defaults of the block scanner (hdfs-default.xml, Hadoop's BlockScanner).
const (
	DefaultBytesPerSecond     = 1 << 20          // dfs.block.scanner.volume.bytes.per.second
	DefaultPeriod             = 504 * time.Hour  // dfs.datanode.scan.period.hours: three weeks
	DefaultCursorSaveInterval = 10 * time.Minute // dfs.block.scanner.cursor.save.interval.ms
)

const (
	suspectMemory   = 10 * time.Minute     // a suspect is queued at most once in this time
	suspectQueueCap = 1000                 // suspects beyond this are dropped (and logged)
	recentResults   = 64                   // verifications kept per volume for ?listblocks
	cursorName      = "scanner"            // <vol>/current/<bpid>/scanner.cursor
	maxFailures     = 2                    // failed verifications before a replica is reported
	idleWait        = 365 * 24 * time.Hour // nothing to scan: wait for a wake-up
	hourBuckets     = 60                   // bytes verified in the last hour, per minute
	minuteLen       = time.Minute
)

// Config configures the block scanner.
type Config struct {
	// BytesPerSecond is dfs.block.scanner.volume.bytes.per.second
	// (1048576): the verification rate of each volume; 0 disables the
	// scanner.
	BytesPerSecond int64
	// Period is dfs.datanode.scan.period.hours (504; 0 means the
	// default): each replica is verified at most once per period. A
	// negative value disables the scanner.
	Period time.Duration
	// CursorSaveInterval is dfs.block.scanner.cursor.save.interval.ms
	// (600000): how often a pass saves its position.
	CursorSaveInterval time.Duration
}

// Enabled reports whether the configuration runs a scanner.
func (c Config) Enabled() bool { return c.BytesPerSecond > 0 && c.Period >= 0 }

func (c Config) withDefaults() Config {
	if c.Period == 0 {
		c.Period = DefaultPeriod
	}
	if c.CursorSaveInterval <= 0 {
		c.CursorSaveInterval = DefaultCursorSaveInterval
	}
	return c
}

// Reporter is told what the block scanner finds. Its methods are called
// from the volume scanners' goroutines and must not block for long.
type Reporter interface {
	// ReportBad says the replica b of pool on vol failed verification
	// twice (err is the second failure): the NameNode is to be told
	// (reportBadBlocks).
	ReportBad(pool string, vol *storage.Volume, b storage.Block, err error)
	// VolumeError says reading vol failed with an I/O error (not a
	// checksum mismatch): the volume is to be checked.
	VolumeError(vol *storage.Volume, err error)
}

// BlockScanner runs one volume scanner per volume.
type BlockScanner struct {
	cfg Config
	clk clock.Clock
	log *slog.Logger
	rep Reporter

	mu struct {
		sync.Mutex
		vols   []*volumeScanner
		pools  []*storage.BlockPool
		closed bool
	}
}

// New returns a block scanner; it scans nothing until volumes and pools
// are added. A disabled configuration returns a scanner that never scans
// and reports that it is not running.
func New(cfg Config, clk clock.Clock, log *slog.Logger, rep Reporter) *BlockScanner {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &BlockScanner{cfg: cfg.withDefaults(), clk: clk, log: log, rep: rep}
}

// Enabled reports whether the scanner runs.
func (s *BlockScanner) Enabled() bool { return s.cfg.Enabled() }

// AddVolume starts scanning a volume (every pool added so far and later).
func (s *BlockScanner) AddVolume(v *storage.Volume) {
	if !s.Enabled() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return
	}
	for _, vs := range s.mu.vols {
		if vs.vol == v {
			return
		}
	}
	vs := newVolumeScanner(s, v)
	for _, bp := range s.mu.pools {
		vs.addPool(bp)
	}
	s.mu.vols = append(s.mu.vols, vs)
	go vs.run()
}

// AddPool adds a block pool to every volume's scanner.
func (s *BlockScanner) AddPool(bp *storage.BlockPool) {
	if !s.Enabled() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return
	}
	s.mu.pools = append(s.mu.pools, bp)
	for _, vs := range s.mu.vols {
		vs.addPool(bp)
	}
}

// RemoveVolume stops scanning a volume (it left service) and waits for its
// scanner, which saves its cursors if it can.
func (s *BlockScanner) RemoveVolume(v *storage.Volume) {
	s.mu.Lock()
	var vs *volumeScanner
	for i, x := range s.mu.vols {
		if x.vol == v {
			vs = x
			s.mu.vols = append(s.mu.vols[:i:i], s.mu.vols[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	if vs != nil {
		vs.stop()
	}
}

func (s *BlockScanner) scannerOf(v *storage.Volume) *volumeScanner {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, vs := range s.mu.vols {
		if vs.vol == v {
			return vs
		}
	}
	return nil
}

// MarkSuspect queues the replica id of pool on v to be verified before
// anything else (an I/O error while reading it, a client's checksum error,
// a failed transfer). A replica queued in the last ten minutes is not
// queued again.
func (s *BlockScanner) MarkSuspect(pool string, v *storage.Volume, id int64) {
	if vs := s.scannerOf(v); vs != nil {
		vs.markSuspect(key{pool, id}, false)
	}
}

// MarkVerified records that a reader verified the whole replica id of pool
// on v (CHECKSUM_OK after a READ_BLOCK of the whole block): it counts as a
// scan, and a pass that comes to the replica within a period of it skips
// it, so that no replica is read for verification more than once a period.
func (s *BlockScanner) MarkVerified(pool string, v *storage.Volume, id int64) {
	if vs := s.scannerOf(v); vs != nil {
		vs.markVerified(key{pool, id})
	}
}

// Close stops every volume scanner and waits for them.
func (s *BlockScanner) Close() {
	s.mu.Lock()
	s.mu.closed = true
	vols := s.mu.vols
	s.mu.vols = nil
	s.mu.Unlock()
	for _, vs := range vols {
		vs.stop()
	}
}

// VolumeStats is the state of one volume's scanner (Hadoop's
// VolumeScanner.Statistics, plus what this scanner adds).
type VolumeStats struct {
	StorageID, Dir           string
	BytesScannedInPastHour   int64
	BlocksScannedInPeriod    int64
	BlocksScannedSinceStart  int64
	ScansSinceStart          int64 // pool passes begun
	ScanErrorsSinceStart     int64
	CorruptReported          int64
	SkippedVerifiedByReaders int64
	Suspects                 int
	NextPoolScanStart        time.Time // zero: a pass is running
	PeriodEnds               time.Time // when the current pool may be rescanned
	LastBlockScanned         string
	AtEnd                    bool // no more blocks to scan in this period
	Recent                   []Result
}

// Result is one verification, for ?listblocks.
type Result struct {
	Pool  string
	Block storage.Block
	At    time.Time
	Err   string // "" when it passed
}

// Stats returns every volume scanner's state, in the order volumes were
// added.
func (s *BlockScanner) Stats() []VolumeStats {
	s.mu.Lock()
	vols := append([]*volumeScanner(nil), s.mu.vols...)
	s.mu.Unlock()
	out := make([]VolumeStats, 0, len(vols))
	for _, vs := range vols {
		out = append(out, vs.statsNow())
	}
	return out
}

// Report writes the scanner's state as Hadoop's /blockScannerReport does;
// listBlocks adds the latest verifications of each volume.
func (s *BlockScanner) Report(w io.Writer, listBlocks bool) {
	if !s.Enabled() {
		fmt.Fprint(w, "Periodic block scanner is not running. Please check the datanode log if this is unexpected.")
		return
	}
	fmt.Fprint(w, "Block Scanner Statistics\n\n")
	now := s.clk.Now()
	for _, st := range s.Stats() {
		fmt.Fprintf(w, "Block scanner information for volume %s with base path %s\n", st.StorageID, st.Dir)
		fmt.Fprintf(w, "Bytes verified in last hour       : %57d\n", st.BytesScannedInPastHour)
		fmt.Fprintf(w, "Blocks scanned in current period  : %57d\n", st.BlocksScannedInPeriod)
		fmt.Fprintf(w, "Blocks scanned since restart      : %57d\n", st.BlocksScannedSinceStart)
		fmt.Fprintf(w, "Block pool scans since restart    : %57d\n", st.ScansSinceStart)
		fmt.Fprintf(w, "Block scan errors since restart   : %57d\n", st.ScanErrorsSinceStart)
		if !st.NextPoolScanStart.IsZero() {
			fmt.Fprintf(w, "Hours until next block pool scan  : %57.3f\n", hoursUntil(now, st.NextPoolScanStart))
		}
		if !st.PeriodEnds.IsZero() {
			fmt.Fprintf(w, "Hours until possible pool rescan  : %57.3f\n", hoursUntil(now, st.PeriodEnds))
		}
		last := st.LastBlockScanned
		if last == "" {
			last = "none"
		}
		fmt.Fprintf(w, "Last block scanned                : %57s\n", last)
		fmt.Fprintf(w, "More blocks to scan in period     : %57t\n", !st.AtEnd)
		fmt.Fprintf(w, "Corrupt replicas reported         : %57d\n", st.CorruptReported)
		fmt.Fprintf(w, "Blocks verified by readers        : %57d\n", st.SkippedVerifiedByReaders)
		fmt.Fprintf(w, "Suspect blocks queued             : %57d\n", st.Suspects)
		if listBlocks {
			for _, r := range st.Recent {
				status := "ok"
				if r.Err != "" {
					status = "failed: " + r.Err
				}
				fmt.Fprintf(w, "%-40s %s %s %s\n", r.Block.String(), r.Pool, r.At.UTC().Format(time.RFC3339), status)
			}
		}
		fmt.Fprintln(w)
	}
}

func hoursUntil(now, t time.Time) float64 {
	d := t.Sub(now)
	if d <= 0 {
		return 0
	}
	return d.Hours()
}

// key names a replica across pools.
type key struct {
	pool string
	id   int64
}

// volumeScanner scans one volume (Hadoop's VolumeScanner). Its goroutine
// (run) owns the iterators and the failure counts; the rest is under mu.
type volumeScanner struct {
	s     *BlockScanner
	vol   *storage.Volume
	th    *throttle.Throttler
	ctx   context.Context
	done  chan struct{}
	wake  chan struct{} // buffered, size 1
	abort context.CancelFunc

	// Owned by run.
	iters    []*storage.BlockIterator
	cur      int // index in iters of the pool being scanned, -1 none
	failures map[key]int

	mu struct {
		sync.Mutex
		newPools  []*storage.BlockPool
		suspects  []key
		again     []key // failed once: verified again before any suspect
		recent    map[key]time.Time
		verified  map[key]time.Time
		stats     VolumeStats
		hour      [hourBuckets]int64
		hourStart time.Time // start of the minute of hour[minute index]
		results   []Result
	}
}

func newVolumeScanner(s *BlockScanner, v *storage.Volume) *volumeScanner {
	ctx, cancel := context.WithCancel(context.Background())
	vs := &volumeScanner{s: s, vol: v, th: throttle.New(s.clk, s.cfg.BytesPerSecond), ctx: ctx, abort: cancel,
		done: make(chan struct{}), wake: make(chan struct{}, 1), cur: -1, failures: map[key]int{}}
	vs.mu.recent = map[key]time.Time{}
	vs.mu.verified = map[key]time.Time{}
	vs.mu.stats = VolumeStats{StorageID: v.StorageID(), Dir: v.Dir(), AtEnd: true}
	return vs
}

func (vs *volumeScanner) poke() {
	select {
	case vs.wake <- struct{}{}:
	default:
	}
}

func (vs *volumeScanner) stop() {
	vs.abort()
	<-vs.done
}

func (vs *volumeScanner) addPool(bp *storage.BlockPool) {
	vs.mu.Lock()
	vs.mu.newPools = append(vs.mu.newPools, bp)
	vs.mu.Unlock()
	vs.poke()
}

func (vs *volumeScanner) markSuspect(k key, again bool) {
	now := vs.s.clk.Now()
	vs.mu.Lock()
	if again {
		vs.mu.again = append(vs.mu.again, k)
		vs.mu.Unlock()
		vs.poke()
		return
	}
	if t, ok := vs.mu.recent[k]; ok && now.Sub(t) < suspectMemory {
		vs.mu.Unlock()
		return
	}
	for _, q := range vs.mu.suspects {
		if q == k {
			vs.mu.Unlock()
			return
		}
	}
	if len(vs.mu.suspects) >= suspectQueueCap {
		vs.mu.Unlock()
		vs.s.log.Warn("block scanner: suspect queue full, dropping", "volume", vs.vol.Dir(), "block", k.id)
		return
	}
	vs.mu.suspects = append(vs.mu.suspects, k)
	vs.mu.recent[k] = now
	vs.mu.Unlock()
	vs.s.log.Info("block scanner: replica queued for verification", "volume", vs.vol.Dir(), "pool", k.pool, "block", k.id)
	vs.poke()
}

func (vs *volumeScanner) markVerified(k key) {
	vs.mu.Lock()
	vs.mu.verified[k] = vs.s.clk.Now()
	vs.mu.Unlock()
}

// nextSuspect pops a replica to verify first, if any.
func (vs *volumeScanner) nextSuspect() (key, bool) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if len(vs.mu.again) > 0 {
		k := vs.mu.again[0]
		vs.mu.again = vs.mu.again[1:]
		return k, true
	}
	if len(vs.mu.suspects) > 0 {
		k := vs.mu.suspects[0]
		vs.mu.suspects = vs.mu.suspects[1:]
		return k, true
	}
	return key{}, false
}

func (vs *volumeScanner) takeNewPools() []*storage.BlockPool {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	p := vs.mu.newPools
	vs.mu.newPools = nil
	return p
}

// run is the volume scanner's loop.
func (vs *volumeScanner) run() {
	defer close(vs.done)
	defer vs.saveAll()
	vs.s.log.Info("block scanner started", "volume", vs.vol.Dir(), "storageID", vs.vol.StorageID(),
		"bytesPerSecond", vs.s.cfg.BytesPerSecond, "period", vs.s.cfg.Period)
	for vs.ctx.Err() == nil {
		for _, bp := range vs.takeNewPools() {
			vs.openIterator(bp)
		}
		if k, ok := vs.nextSuspect(); ok {
			if !vs.verify(k) {
				return
			}
			continue
		}
		wait := vs.step()
		if wait <= 0 {
			continue
		}
		t := vs.s.clk.NewTimer(wait)
		select {
		case <-vs.ctx.Done():
		case <-vs.wake:
		case <-t.C():
		}
		t.Stop()
	}
}

// openIterator loads the pool's saved cursor on this volume, or starts a
// new pass.
func (vs *volumeScanner) openIterator(bp *storage.BlockPool) {
	now := vs.s.clk.Now()
	it, err := bp.LoadBlockIterator(vs.vol, cursorName)
	switch {
	case err == nil:
		c := it.Cursor()
		vs.s.log.Info("block scanner resuming from cursor", "volume", vs.vol.Dir(), "pool", bp.ID,
			"position", c.Position(), "passStarted", it.IterStart().UTC().Format(time.RFC3339), "atEnd", c.AtEnd)
	default:
		if !errors.Is(err, fs.ErrNotExist) {
			vs.s.log.Warn("block scanner: unreadable cursor, starting a new pass", "volume", vs.vol.Dir(), "pool", bp.ID, "err", err)
		}
		it = bp.NewBlockIterator(vs.vol, cursorName, now)
		vs.s.log.Info("block scanner starting a new pass", "volume", vs.vol.Dir(), "pool", bp.ID)
		vs.countPass()
	}
	vs.iters = append(vs.iters, it)
}

// step scans the next block of the current pass, or picks the next pool
// to scan; it returns how long to wait when nothing is due.
func (vs *volumeScanner) step() time.Duration {
	if vs.cur < 0 || vs.iters[vs.cur].AtEnd() {
		wait := vs.pickIterator()
		if wait > 0 {
			vs.setNextStart(vs.s.clk.Now().Add(wait))
			return wait
		}
		vs.setNextStart(time.Time{})
	}
	it := vs.iters[vs.cur]
	id, ok, err := it.Next()
	if err != nil {
		vs.s.log.Warn("block scanner: listing failed, pass ends", "volume", vs.vol.Dir(), "pool", it.Pool().ID, "err", err)
		vs.s.rep.VolumeError(vs.vol, err)
	}
	now := vs.s.clk.Now()
	if !ok {
		vs.s.log.Info("block scanner finished a pass", "volume", vs.vol.Dir(), "pool", it.Pool().ID)
		vs.save(it, now)
		vs.updatePass(it)
		return 0
	}
	if now.Sub(it.LastSaved()) >= vs.s.cfg.CursorSaveInterval {
		vs.save(it, now)
	}
	k := key{it.Pool().ID, id}
	vs.mu.Lock()
	t, byReader := vs.mu.verified[k]
	if byReader && now.Sub(t) < vs.s.cfg.Period {
		vs.mu.stats.SkippedVerifiedByReaders++
		vs.mu.Unlock()
		return 0
	}
	vs.mu.Unlock()
	if !vs.verify(k) {
		// Stopped in the middle: the saved cursor points before this
		// block, so the next run verifies it.
		it.Back()
	}
	vs.updatePass(it)
	return 0
}

// pickIterator chooses the next pool whose pass is not over, or whose pass
// began a period ago (then rewound). It returns how long to wait when none
// is ready.
func (vs *volumeScanner) pickIterator() time.Duration {
	if len(vs.iters) == 0 {
		return idleWait
	}
	now := vs.s.clk.Now()
	wait := time.Duration(-1)
	for i := range vs.iters {
		idx := (vs.cur + 1 + i) % len(vs.iters)
		it := vs.iters[idx]
		if !it.AtEnd() {
			vs.cur = idx
			vs.updatePass(it)
			return 0
		}
		due := it.IterStart().Add(vs.s.cfg.Period)
		if !now.Before(due) {
			it.Rewind(now)
			vs.cur = idx
			vs.s.log.Info("block scanner rescanning a pool", "volume", vs.vol.Dir(), "pool", it.Pool().ID, "period", vs.s.cfg.Period)
			vs.countPass()
			vs.pruneVerified(now)
			vs.updatePass(it)
			return 0
		}
		if d := due.Sub(now); wait < 0 || d < wait {
			wait = d
		}
	}
	return wait
}

// verify verifies one replica and handles the outcome; false if the
// scanner stopped before it was done.
func (vs *volumeScanner) verify(k key) bool {
	bp := vs.poolOf(k.pool)
	if bp == nil {
		return true
	}
	pace := func(n int64) error { return vs.th.Take(vs.ctx, n) }
	r, n, err := bp.Verify(vs.vol, k.id, pace)
	now := vs.s.clk.Now()
	if vs.ctx.Err() != nil {
		return false
	}
	vs.account(n, now)
	switch {
	case err == nil:
		delete(vs.failures, k)
		vs.record(k.pool, r.Block, now, nil, true)
		return true
	case errors.Is(err, storage.ErrReplicaNotFound), errors.Is(err, storage.ErrWrongState):
		delete(vs.failures, k)
		return true
	}
	vs.record(k.pool, r.Block, now, err, false)
	vs.failures[k]++
	ioErr := !errors.Is(err, storage.ErrCorrupt)
	if ioErr {
		vs.s.rep.VolumeError(vs.vol, err)
	}
	if vs.failures[k] < maxFailures {
		vs.s.log.Warn("block scanner: verification failed, verifying again", "volume", vs.vol.Dir(), "pool", k.pool, "block", r.Block.String(), "err", err)
		vs.markSuspect(k, true)
		return true
	}
	delete(vs.failures, k)
	vs.mu.Lock()
	vs.mu.stats.CorruptReported++
	vs.mu.Unlock()
	vs.s.log.Warn("block scanner: reporting bad replica", "volume", vs.vol.Dir(), "pool", k.pool, "block", r.Block.String(), "err", err)
	vs.s.rep.ReportBad(k.pool, vs.vol, r.Block, err)
	return true
}

func (vs *volumeScanner) poolOf(id string) *storage.BlockPool {
	for _, it := range vs.iters {
		if it.Pool().ID == id {
			return it.Pool()
		}
	}
	return nil
}

func (vs *volumeScanner) save(it *storage.BlockIterator, now time.Time) {
	if err := it.Save(now); err != nil {
		vs.s.log.Warn("block scanner: saving the cursor failed", "volume", vs.vol.Dir(), "pool", it.Pool().ID, "err", err)
		return
	}
	vs.s.log.Debug("block scanner saved its cursor", "volume", vs.vol.Dir(), "pool", it.Pool().ID, "position", it.Cursor().Position())
}

func (vs *volumeScanner) saveAll() {
	now := vs.s.clk.Now()
	for _, it := range vs.iters {
		vs.save(it, now)
	}
	vs.s.log.Info("block scanner stopped", "volume", vs.vol.Dir())
}

// pruneVerified forgets reader verifications older than a period.
func (vs *volumeScanner) pruneVerified(now time.Time) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	for k, t := range vs.mu.verified {
		if now.Sub(t) >= vs.s.cfg.Period {
			delete(vs.mu.verified, k)
		}
	}
	for k, t := range vs.mu.recent {
		if now.Sub(t) >= suspectMemory {
			delete(vs.mu.recent, k)
		}
	}
}

// account adds n verified bytes to the last hour's figure.
func (vs *volumeScanner) account(n int64, now time.Time) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	vs.rollHourLocked(now)
	vs.mu.hour[minuteOf(now)] += n
}

func minuteOf(t time.Time) int { return int(t.Unix()/60) % hourBuckets }

// rollHourLocked zeroes the buckets of the minutes that passed since the
// last update.
func (vs *volumeScanner) rollHourLocked(now time.Time) {
	start := now.Truncate(minuteLen)
	if vs.mu.hourStart.IsZero() {
		vs.mu.hourStart = start
		return
	}
	for m := 0; m < hourBuckets && vs.mu.hourStart.Before(start); m++ {
		vs.mu.hourStart = vs.mu.hourStart.Add(minuteLen)
		vs.mu.hour[minuteOf(vs.mu.hourStart)] = 0
	}
	vs.mu.hourStart = start
}

func (vs *volumeScanner) record(pool string, b storage.Block, now time.Time, err error, ok bool) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	r := Result{Pool: pool, Block: b, At: now}
	if ok {
		vs.mu.stats.BlocksScannedInPeriod++
		vs.mu.stats.BlocksScannedSinceStart++
	} else {
		vs.mu.stats.ScanErrorsSinceStart++
		r.Err = err.Error()
	}
	vs.mu.stats.LastBlockScanned = b.String()
	vs.mu.results = append(vs.mu.results, r)
	if len(vs.mu.results) > recentResults {
		vs.mu.results = vs.mu.results[len(vs.mu.results)-recentResults:]
	}
}

func (vs *volumeScanner) countPass() {
	vs.mu.Lock()
	vs.mu.stats.ScansSinceStart++
	vs.mu.stats.BlocksScannedInPeriod = 0
	vs.mu.Unlock()
}

func (vs *volumeScanner) setNextStart(t time.Time) {
	vs.mu.Lock()
	vs.mu.stats.NextPoolScanStart = t
	vs.mu.Unlock()
}

func (vs *volumeScanner) updatePass(it *storage.BlockIterator) {
	vs.mu.Lock()
	vs.mu.stats.AtEnd = it.AtEnd()
	vs.mu.stats.PeriodEnds = it.IterStart().Add(vs.s.cfg.Period)
	vs.mu.Unlock()
}

func (vs *volumeScanner) statsNow() VolumeStats {
	now := vs.s.clk.Now()
	vs.mu.Lock()
	defer vs.mu.Unlock()
	vs.rollHourLocked(now)
	st := vs.mu.stats
	st.BytesScannedInPastHour = 0
	for _, n := range vs.mu.hour {
		st.BytesScannedInPastHour += n
	}
	st.Suspects = len(vs.mu.suspects) + len(vs.mu.again)
	st.Recent = append([]Result(nil), vs.mu.results...)
	sort.SliceStable(st.Recent, func(i, j int) bool { return st.Recent[i].At.Before(st.Recent[j].At) })
	return st
}
