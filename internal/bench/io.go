package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/minicluster"
)

// IOOptions configure `hdfs bench io`, modelled on Hadoop's TestDFSIO: Files
// files of Size bytes are written (and then read) by Concurrency clients.
type IOOptions struct {
	Write, Read bool
	Files       int   // -nrFiles (4)
	Size        int64 // -size per file (128 MiB)
	Replication int   // -replication (3)
	BlockSize   int64 // -blockSize (128 MiB)
	Concurrency int   // -concurrency: clients working at once (1)
	// Addrs are the NameNode addresses; empty starts an in-process
	// minicluster of DataNodes nodes under TempDir.
	Addrs     []string
	User      string
	DataNodes int
	TempDir   string
	// CPUPid, when set, is a process (e.g. a separate `hdfs minicluster`)
	// whose CPU seconds per GiB are reported.
	CPUPid int
	// DropCaches drops the page cache before reading (root only), for cold
	// reads.
	DropCaches bool
	// DomainSocketPath is the client's Options.DomainSocketPath for an
	// external cluster; the in-process one always uses domain sockets when
	// its directory allows.
	DomainSocketPath string
	// Protection is the data transfer protection of the in-process
	// cluster and its client (see protections: "none", "authentication",
	// "integrity", "privacy", "privacy+aes", "encrypt"); "" is the plain
	// cluster, with domain sockets. Any other value than "" turns block
	// tokens on and domain sockets off (a handshake is made on TCP only).
	Protection string
	Logger     *slog.Logger
}

const ioDir = "/benchmarks/TestDFSIO/io_data"

type fileResult struct {
	bytes int64
	dur   time.Duration
}

// RunIO runs the I/O benchmark and prints TestDFSIO-style results.
func RunIO(ctx context.Context, o IOOptions, out io.Writer) error {
	_, err := runIO(ctx, o, out)
	return err
}

// phaseSummary is one phase's totals.
type phaseSummary struct {
	phase string
	bytes int64
	sumT  time.Duration // Σ per-file time
	cpu   time.Duration // this process
}

func runIO(ctx context.Context, o IOOptions, out io.Writer) ([]phaseSummary, error) {
	var sums []phaseSummary
	if o.Files <= 0 || o.Size <= 0 || o.Concurrency <= 0 || o.Replication <= 0 || o.BlockSize <= 0 {
		return nil, fmt.Errorf("%w: -nrFiles, -size, -concurrency, -replication and -blockSize must be positive", ErrBadOptions)
	}
	if !o.Write && !o.Read {
		o.Write, o.Read = true, true
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	addrs := o.Addrs
	where := "external cluster " + strings.Join(addrs, ",")
	if len(addrs) == 0 {
		dir, err := os.MkdirTemp(o.TempDir, "hdfsgo-bench-io-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		n := o.DataNodes
		if n <= 0 {
			n = 3
		}
		mo := minicluster.Options{Dir: dir, DataNodes: n, Logger: o.Logger, DomainSockets: o.Protection == ""}
		if o.Protection != "" {
			p, ok := protections[o.Protection]
			if !ok {
				return nil, fmt.Errorf("%w: unknown protection %q", ErrBadOptions, o.Protection)
			}
			mo.Conf = p.keys
		}
		c, err := minicluster.Start(ctx, mo)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		addrs = []string{c.NameNodeAddr()}
		where = fmt.Sprintf("in-process minicluster, %d DataNodes, in %s", n, dir)
		if o.Protection == "" {
			o.DomainSocketPath = c.DomainSocketPath()
		}
		o.User = "" // the process owner: the superuser of its own cluster
	}
	if o.DomainSocketPath != "" {
		where += ", node-local data traffic over domain sockets"
	}
	copts := client.Options{Addresses: addrs, User: o.User, DomainSocketPath: o.DomainSocketPath}
	if p, ok := protections[o.Protection]; ok {
		p.client(&copts)
		where += ", data transfer protection " + o.Protection
	}
	fsys, err := client.New(copts)
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	fmt.Fprintf(out, "hdfs bench io: %s\n", where)
	fmt.Fprintf(out, "  files %d × %d MiB, replication %d, block size %d MiB, %d concurrent client(s)\n\n",
		o.Files, o.Size>>20, o.Replication, o.BlockSize>>20, o.Concurrency)

	// One buffer of random bytes, written over and over: checksums and
	// transfers cost the same as for unique data, and it takes no time to make.
	buf := make([]byte, 4<<20)
	r := rand.NewChaCha8([32]byte{42})
	r.Read(buf)

	if o.Write {
		fsys.RemoveAll(ctx, ioDir)
		if err := fsys.MkdirAll(ctx, ioDir, 0o755); err != nil {
			return nil, err
		}
		res, wall, cpu, err := runPhase(ctx, o, func(ctx context.Context, name string) (int64, error) {
			w, err := fsys.CreateFile(ctx, name, client.CreateOptions{Replication: uint16(o.Replication), BlockSize: o.BlockSize, Perm: 0o644, Overwrite: true})
			if err != nil {
				return 0, err
			}
			var n int64
			for n < o.Size {
				k := min(int64(len(buf)), o.Size-n)
				if _, err := w.Write(buf[:k]); err != nil {
					w.Close()
					return n, err
				}
				n += k
			}
			return n, w.Close()
		})
		if err != nil {
			return nil, fmt.Errorf("write phase: %w", err)
		}
		sums = append(sums, report(out, "write", o, res, wall, cpu))
	}
	if o.Read {
		if o.DropCaches {
			if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0); err != nil {
				return nil, fmt.Errorf("-dropcaches: %w (needs root)", err)
			}
		}
		res, wall, cpu, err := runPhase(ctx, o, func(ctx context.Context, name string) (int64, error) {
			rd, err := fsys.Open(ctx, name)
			if err != nil {
				return 0, err
			}
			defer rd.Close()
			return rd.WriteTo(io.Discard)
		})
		if err != nil {
			return nil, fmt.Errorf("read phase: %w", err)
		}
		sums = append(sums, report(out, "read", o, res, wall, cpu))
	}
	return sums, nil
}

type cpuTimes struct{ self, other time.Duration }

func cpuNow(pid int) cpuTimes {
	var c cpuTimes
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		c.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if pid > 0 {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			s := string(b)
			if i := strings.LastIndexByte(s, ')'); i > 0 {
				f := strings.Fields(s[i+1:])
				if len(f) > 13 {
					ut, _ := strconv.ParseInt(f[11], 10, 64)
					st, _ := strconv.ParseInt(f[12], 10, 64)
					c.other = time.Duration(ut+st) * (time.Second / 100) // USER_HZ
				}
			}
		}
	}
	return c
}

func runPhase(ctx context.Context, o IOOptions, one func(ctx context.Context, name string) (int64, error)) ([]fileResult, time.Duration, cpuTimes, error) {
	res := make([]fileResult, o.Files)
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	c0 := cpuNow(o.CPUPid)
	start := time.Now()
	for range o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				n, err := one(ctx, fmt.Sprintf("%s/test_io_%d", ioDir, i))
				res[i] = fileResult{bytes: n, dur: time.Since(t0)}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range o.Files {
		next <- i
	}
	close(next)
	wg.Wait()
	wall := time.Since(start)
	c1 := cpuNow(o.CPUPid)
	return res, wall, cpuTimes{self: c1.self - c0.self, other: c1.other - c0.other}, firstErr
}

func report(out io.Writer, phase string, o IOOptions, res []fileResult, wall time.Duration, cpu cpuTimes) phaseSummary {
	var total int64
	var sumT time.Duration
	var rates []float64
	for _, r := range res {
		total += r.bytes
		sumT += r.dur
		rates = append(rates, float64(r.bytes)/1e6/r.dur.Seconds())
	}
	mean, sq := 0.0, 0.0
	for _, r := range rates {
		mean += r
	}
	mean /= float64(len(rates))
	for _, r := range rates {
		sq += (r - mean) * (r - mean)
	}
	gib := float64(total) / (1 << 30)
	fmt.Fprintf(out, "----- TestDFSIO ----- : %s\n", phase)
	fmt.Fprintf(out, "            Date & time: %s\n", time.Now().Format(time.UnixDate))
	fmt.Fprintf(out, "        Number of files: %d\n", len(res))
	fmt.Fprintf(out, " Total MBytes processed: %.2f\n", float64(total)/1e6)
	fmt.Fprintf(out, "      Throughput mb/sec: %.2f\n", float64(total)/1e6/sumT.Seconds())
	fmt.Fprintf(out, " Average IO rate mb/sec: %.2f\n", mean)
	fmt.Fprintf(out, "  IO rate std deviation: %.2f\n", math.Sqrt(sq/float64(len(rates))))
	fmt.Fprintf(out, "     Test exec time sec: %.3f\n", wall.Seconds())
	fmt.Fprintf(out, "   Aggregate mb/sec (Σbytes/wall): %.2f\n", float64(total)/1e6/wall.Seconds())
	fmt.Fprintf(out, "   CPU seconds per GiB, this process: %.3f\n", cpu.self.Seconds()/gib)
	if o.CPUPid > 0 {
		fmt.Fprintf(out, "   CPU seconds per GiB, process %d: %.3f\n", o.CPUPid, cpu.other.Seconds()/gib)
	}
	fmt.Fprintln(out)
	return phaseSummary{phase: phase, bytes: total, sumT: sumT, cpu: cpu.self}
}
