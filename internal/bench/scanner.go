package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/datanode/scanner"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/minicluster"
	hstorage "github.com/hdfsgo/hdfsgo/internal/storage"
)

// ScannerOptions configure `hdfs bench scanner`: the block scanner's
// verification rate against dfs.block.scanner.volume.bytes.per.second, and
// its cost to a write running beside it.
type ScannerOptions struct {
	// Rates are the dfs.block.scanner.volume.bytes.per.second settings
	// measured (bytes/s); 0 stands for no limit worth the name (1 TiB/s).
	Rates []int64
	// Data is how many bytes of finalized replicas the scanned volume
	// holds (and the cluster of the write phase, before its writes).
	Data int64
	// ReplicaSize is the size of each of those replicas.
	ReplicaSize int64
	// MinWindow is the shortest measurement of a rate; each lasts at least
	// until five replicas were verified after the first.
	MinWindow time.Duration
	// WriteSize is the size of the file each write measurement writes;
	// WriteRates the scanner settings the write runs beside (0: no limit;
	// the write without a scanner is always measured); Rounds how many
	// times each is measured, the order turned around every round.
	WriteSize  int64
	WriteRates []int64
	Rounds     int
	TempDir    string
	Logger     *slog.Logger
}

// nopReporter ignores what the scanner finds (the benchmark's data is good).
type nopReporter struct{}

func (nopReporter) ReportBad(string, *storage.Volume, storage.Block, error) {}
func (nopReporter) VolumeError(*storage.Volume, error)                      {}

// unlimited stands for "no limit" in a rate list.
const unlimited = 1 << 40

// RunScanner measures the block scanner and prints the two tables of
// docs/PERFORMANCE.md.
func RunScanner(ctx context.Context, o ScannerOptions, out io.Writer) error {
	if o.Data <= 0 || o.ReplicaSize <= 0 || o.WriteSize <= 0 || o.Rounds <= 0 || len(o.Rates) == 0 {
		return fmt.Errorf("%w: -data, -replicaSize, -write, -rounds and -rates must be positive", ErrBadOptions)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MinWindow <= 0 {
		o.MinWindow = 3 * time.Second
	}
	dir, err := os.MkdirTemp(o.TempDir, "hdfsgo-bench-scanner-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintf(out, "hdfs bench scanner: %d MiB in %d MiB replicas, in %s\n\n", o.Data>>20, o.ReplicaSize>>20, dir)
	if err := scanRates(ctx, o, filepath.Join(dir, "vol"), out); err != nil {
		return err
	}
	if len(o.WriteRates) == 0 {
		return nil
	}
	return scanWriteCost(ctx, o, filepath.Join(dir, "cluster"), out)
}

func rateName(r int64) string {
	if r <= 0 || r >= unlimited {
		return "unlimited"
	}
	return fmt.Sprintf("%d MiB/s", r>>20)
}

// scanRates fills one volume with replicas and, for each rate, runs a block
// scanner over it and measures how fast it verifies: the bytes of the
// replicas verified between the first completion seen and the last, over
// that time. Verification drops the pages it read from the cache, so every
// pass reads the disk.
func scanRates(ctx context.Context, o ScannerOptions, volDir string, out io.Writer) error {
	vol, err := storage.OpenVolume(storage.VolumeConfig{Dir: volDir})
	if err != nil {
		return err
	}
	if err := vol.Format(&hstorage.Version{LayoutVersion: hstorage.DataNodeLayoutVersion, StorageType: hstorage.StorageTypeDataNode,
		ClusterID: "CID-bench", StorageID: "DS-bench", DatanodeUUID: "bench"}, time.Now()); err != nil {
		vol.Close()
		return err
	}
	ds, err := storage.NewDataset(storage.Config{}, []*storage.Volume{vol})
	if err != nil {
		vol.Close()
		return err
	}
	defer ds.Close()
	bp, _, err := ds.AddBlockPool(&hstorage.Version{LayoutVersion: hstorage.DataNodeLayoutVersion, NamespaceID: 1,
		BlockPoolID: "BP-1-127.0.0.1-1"}, time.Now())
	if err != nil {
		return err
	}
	if err := fillPool(bp, o.Data, o.ReplicaSize); err != nil {
		return err
	}
	fmt.Fprintf(out, "Verification rate (one volume, %d replicas):\n", o.Data/o.ReplicaSize)
	fmt.Fprintf(out, "  %-24s %12s %10s %10s\n", "configured rate", "measured", "ratio", "window")
	for _, r := range o.Rates {
		rate := r
		if rate <= 0 {
			rate = unlimited
		}
		got, window, err := measureScan(ctx, o, vol, bp, rate)
		if err != nil {
			return err
		}
		ratio := "-"
		if rate < unlimited {
			ratio = fmt.Sprintf("%.3f", got/float64(rate))
		}
		fmt.Fprintf(out, "  %-24s %9.1f MiB/s %10s %9.1fs\n", rateName(rate), got/(1<<20), ratio, window.Seconds())
	}
	fmt.Fprintln(out)
	return nil
}

// fillPool writes finalized replicas of size bytes each, data bytes in all.
func fillPool(bp *storage.BlockPool, data, size int64) error {
	ck := datatransfer.DefaultChecksum()
	buf := make([]byte, 64<<10)
	r := rand.NewChaCha8([32]byte{9})
	r.Read(buf)
	sums := ck.Compute(nil, buf)
	for id := int64(1); id*size <= data; id++ {
		w, err := bp.CreateRBW(storage.Block{ID: id, GenStamp: 1001}, ck, size)
		if err != nil {
			return err
		}
		for off := int64(0); off < size; off += int64(len(buf)) {
			n := min(int64(len(buf)), size-off)
			if err := w.WritePacket(off, buf[:n], sums[:ck.ChecksumLen(int(n))]); err != nil {
				w.Close()
				return err
			}
			w.SetBytesAcked(off + n)
		}
		if _, err := w.Finalize(size); err != nil {
			w.Close()
			return err
		}
	}
	return nil
}

// measureScan runs a scanner at rate over the pool and returns the rate it
// verified at and over how long.
func measureScan(ctx context.Context, o ScannerOptions, vol *storage.Volume, bp *storage.BlockPool, rate int64) (float64, time.Duration, error) {
	// A short period: the scanner passes over the volume again as soon as
	// it is done, so it never idles while measured.
	s := scanner.New(scanner.Config{BytesPerSecond: rate, Period: 50 * time.Millisecond, CursorSaveInterval: time.Hour},
		clock.Real{}, o.Logger, nopReporter{})
	defer s.Close()
	s.AddVolume(vol)
	s.AddPool(bp)
	// Completions are seen as jumps of the verified-bytes figure.
	bytesNow := func() int64 {
		var n int64
		for _, st := range s.Stats() {
			n += st.BytesScannedInPastHour
		}
		return n
	}
	minWindow := max(o.MinWindow, time.Duration(float64(5*o.ReplicaSize)/float64(rate)*float64(time.Second)))
	deadline := time.Now().Add(minWindow + 2*time.Minute)
	// The throttle lets its first period's allowance through at once;
	// completions in the first second are not measured.
	warm := time.Now().Add(time.Second)
	var first, last time.Time
	var firstBytes, lastBytes, seen int64
	completions := 0
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-tick.C:
		}
		now, n := time.Now(), bytesNow()
		if n != seen && now.After(warm) {
			completions++
			if first.IsZero() {
				first, firstBytes = now, n
			}
			last, lastBytes = now, n
		}
		seen = n
		if !first.IsZero() && completions >= 6 && last.Sub(first) >= minWindow {
			break
		}
		if now.After(deadline) {
			return 0, 0, fmt.Errorf("bench: the scanner verified %d replicas in %v at %s", completions, minWindow+2*time.Minute, rateName(rate))
		}
	}
	w := last.Sub(first)
	return float64(lastBytes-firstBytes) / w.Seconds(), w, nil
}

// scanWriteCost measures a write of WriteSize bytes (replication 1, one
// DataNode, in-process) with no block scanner and beside a scanner at each
// of WriteRates, Rounds times, on a cluster that first holds Data bytes for
// the scanner to verify. Each setting is a restart of the cluster on the
// same directories with dfs.block.scanner.volume.bytes.per.second set and
// dfs.datanode.scan.period.hours at one second, so the scanner never
// idles while the write runs.
func scanWriteCost(ctx context.Context, o ScannerOptions, dir string, out io.Writer) error {
	settings := append([]int64{-1}, o.WriteRates...) // -1: scanner off
	name := func(r int64) string {
		if r < 0 {
			return "no scanner"
		}
		return "scanner at " + rateName(r)
	}
	start := func(r int64, reuse bool) (*minicluster.Cluster, *client.FileSystem, error) {
		kv := []conf.KeyValue{{Key: conf.DFSNameNodeSafeModeExtension, Value: "0"},
			{Key: conf.DFSBlockScannerBytesPerSecond, Value: "0"}}
		if r >= 0 {
			rate := r
			if rate == 0 {
				rate = unlimited
			}
			kv = append(kv, conf.KeyValue{Key: conf.DFSBlockScannerBytesPerSecond, Value: strconv.FormatInt(rate, 10)},
				conf.KeyValue{Key: conf.DFSDataNodeScanPeriodHours, Value: "1s"})
		}
		c, err := minicluster.Start(ctx, minicluster.Options{Dir: dir, DataNodes: 1, Reuse: reuse, Logger: o.Logger, Conf: kv, DomainSockets: true})
		if err != nil {
			return nil, nil, err
		}
		fsys, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, DomainSocketPath: c.DomainSocketPath()})
		if err != nil {
			c.Close()
			return nil, nil, err
		}
		return c, fsys, nil
	}
	buf := make([]byte, 4<<20)
	rand.NewChaCha8([32]byte{3}).Read(buf)
	write := func(fsys *client.FileSystem, path string, size int64) (time.Duration, error) {
		t0 := time.Now()
		w, err := fsys.CreateFile(ctx, path, client.CreateOptions{Replication: 1, Perm: 0o644, Overwrite: true})
		if err != nil {
			return 0, err
		}
		for n := int64(0); n < size; {
			k := min(int64(len(buf)), size-n)
			if _, err := w.Write(buf[:k]); err != nil {
				w.Close()
				return 0, err
			}
			n += k
		}
		err = w.Close()
		return time.Since(t0), err
	}
	// The data the scanner verifies during the writes.
	c, fsys, err := start(-1, false)
	if err != nil {
		return err
	}
	if _, err := write(fsys, "/scanned", o.Data); err != nil {
		fsys.Close()
		c.Close()
		return err
	}
	fsys.Close()
	c.Close()

	fmt.Fprintf(out, "A %d MiB write (replication 1) beside the scanner, %d MiB already stored:\n", o.WriteSize>>20, o.Data>>20)
	results := map[int64][]float64{}
	for round := range o.Rounds {
		order := append([]int64(nil), settings...)
		if round%2 == 1 {
			for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
				order[i], order[j] = order[j], order[i]
			}
		}
		for _, r := range order {
			c, fsys, err := start(r, true)
			if err != nil {
				return err
			}
			if r >= 0 {
				// Let the scanner get going before the write starts.
				time.Sleep(500 * time.Millisecond)
			}
			d, err := write(fsys, "/write", o.WriteSize)
			var verified int64
			for _, dn := range c.DataNodes() {
				for _, st := range dn.ScannerStats() {
					verified += st.BytesScannedInPastHour
				}
			}
			if err == nil {
				err = fsys.Remove(ctx, "/write")
			}
			fsys.Close()
			c.Close()
			if err != nil {
				return err
			}
			mbs := float64(o.WriteSize) / d.Seconds() / 1e6
			results[r] = append(results[r], mbs)
			fmt.Fprintf(out, "  round %d  %-28s %8.0f MB/s   (the scanner verified %d MiB since the DataNode started)\n", round+1, name(r), mbs, verified>>20)
		}
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "  %-28s %s\n", "setting", "write MB/s, every round, then the median")
	for _, r := range settings {
		v := append([]float64(nil), results[r]...)
		fmt.Fprintf(out, "  %-28s %v  median %.0f\n", name(r), roundAll(v), median(v))
	}
	return nil
}

func roundAll(v []float64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x + 0.5)
	}
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}
