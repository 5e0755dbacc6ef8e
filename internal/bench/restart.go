package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// imageShare is the part of the files the restart op puts in the image; the
// rest is only in the edit log.
const imageShare = 0.9

// runRestart builds an in-process NameNode holding opts.Files files, 90 % of
// them in a saved image and the rest in edits only, stops it and times the
// start until it answers a call; then it saves the whole namespace and times
// an image-only start.
func runRestart(ctx context.Context, opts Options, out io.Writer) error {
	if len(opts.Addrs) > 0 {
		return fmt.Errorf("%w: restart measures an in-process NameNode only (no -fs hdfs://)", ErrBadOptions)
	}
	tg := &target{opts: &opts}
	defer tg.close()
	if err := tg.startLocal(ctx); err != nil {
		return err
	}
	tg.connect()
	fmt.Fprintf(out, "NameNode: %s (%s), user %s, %s\n", tg.addrs[0], tg.kind(), opts.User, connMode(&opts))

	base := BaseDir + "/" + OpRestart
	gen := newNames(base, "ThroughputBench", opts.Files, opts.FilesPerDir)
	inImage := int(float64(opts.Files) * imageShare)
	create := func(from int) func(ctx context.Context, c *ipc.Client, th, i int) error {
		return func(ctx context.Context, c *ipc.Client, th, i int) error {
			return createFile(ctx, c, gen.path(from+i), clientName(OpRestart, th), true)
		}
	}
	buildStart := time.Now()
	if _, err := tg.timed(ctx, inImage, create(0)); err != nil {
		return fmt.Errorf("bench: restart: creating files: %w", err)
	}
	if err := saveNamespace(ctx, tg.admin); err != nil {
		return fmt.Errorf("bench: restart: %w", err)
	}
	if _, err := tg.timed(ctx, opts.Files-inImage, create(inImage)); err != nil {
		return fmt.Errorf("bench: restart: creating files: %w", err)
	}
	build := time.Since(buildStart)
	var txid hdfs.GetCurrentEditLogTxidResponseProto
	if err := tg.admin.Call(ctx, "getCurrentEditLogTxid", &hdfs.GetCurrentEditLogTxidRequestProto{}, &txid); err != nil {
		return fmt.Errorf("bench: restart: %w", err)
	}

	fmt.Fprintf(out, "\n--- %s inputs ---\nnrFiles = %d\nnrFilesPerDir = %d\nnrThreads = %d (building)\n", OpRestart, opts.Files, opts.FilesPerDir, opts.Threads)
	fmt.Fprintf(out, "Build Time: %d ms (create + complete over RPC; saveNamespace after %d files)\n", build.Milliseconds(), inImage)
	fmt.Fprintf(out, "Last txid: %d\n", txid.GetTxid())

	mixed, err := timeRestart(ctx, tg, base, opts.Files)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "--- %s stats (image + edits) ---\n", OpRestart)
	mixed.print(out, tg.dir)

	if err := saveNamespace(ctx, tg.admin); err != nil {
		return fmt.Errorf("bench: restart: %w", err)
	}
	imageOnly, err := timeRestart(ctx, tg, base, opts.Files)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "--- %s stats (image only) ---\n", OpRestart)
	imageOnly.print(out, tg.dir)
	return nil
}

// restartStats is one timed start.
type restartStats struct {
	elapsed  time.Duration
	cpu      time.Duration // process CPU time (all threads) during the start
	inodes   int64
	files    int64
	heap     int64 // live heap with the NameNode loaded, minus before
	imageLen int64
	editsLen int64
}

func (s restartStats) print(out io.Writer, dir string) {
	fmt.Fprintf(out, "# inodes: %d (%d files)\n", s.inodes, s.files)
	fmt.Fprintf(out, "Image bytes: %d, edits bytes (not yet in an image): %d\n", s.imageLen, s.editsLen)
	fmt.Fprintf(out, "Start Time: %d ms (namenode.Start until the first getFileInfo answer)\n", s.elapsed.Milliseconds())
	fmt.Fprintf(out, "Start CPU: %d ms (user + system, all threads of this process)\n", s.cpu.Milliseconds())
	fmt.Fprintf(out, "Inodes per sec: %.0f\n", float64(s.inodes)/s.elapsed.Seconds())
	fmt.Fprintf(out, "NameNode heap after start: %.1f MB, %.1f bytes per file\n", float64(s.heap)/1e6, float64(s.heap)/float64(s.files))
}

// timeRestart stops the NameNode and times a new start on the same
// directories; it checks the namespace holds the files.
func timeRestart(ctx context.Context, tg *target, base string, files int) (restartStats, error) {
	var st restartStats
	if err := tg.stop(); err != nil {
		return st, fmt.Errorf("bench: restart: stopping: %w", err)
	}
	st.imageLen, st.editsLen = storageSizes(filepath.Join(tg.dir, "name", "current"))
	before := heapInUse()
	if tg.opts.CPUProfile != nil {
		if err := pprof.StartCPUProfile(tg.opts.CPUProfile); err != nil {
			return st, fmt.Errorf("bench: cpu profile: %w", err)
		}
	}
	cpu0 := cpuNow(0).self
	start := time.Now()
	err := tg.start(ctx)
	if err == nil {
		tg.connect()
		var fi hdfs.GetFileInfoResponseProto
		err = tg.admin.Call(ctx, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/")}, &fi)
	}
	st.elapsed = time.Since(start)
	st.cpu = cpuNow(0).self - cpu0
	if tg.opts.CPUProfile != nil {
		pprof.StopCPUProfile()
		tg.opts.CPUProfile = nil
	}
	if err != nil {
		return st, fmt.Errorf("bench: restart: starting: %w", err)
	}
	st.heap = int64(heapInUse()) - int64(before)
	runtime.KeepAlive(tg.nn)

	var cs hdfs.GetContentSummaryResponseProto
	if err := tg.admin.Call(ctx, "getContentSummary", &hdfs.GetContentSummaryRequestProto{Path: proto.String("/")}, &cs); err != nil {
		return st, fmt.Errorf("bench: restart: %w", err)
	}
	s := cs.GetSummary()
	st.files = int64(s.GetFileCount())
	st.inodes = int64(s.GetFileCount() + s.GetDirectoryCount())
	if st.files != int64(files) {
		return st, fmt.Errorf("%w: after the restart / holds %d files, want %d", ErrCheck, st.files, files)
	}
	return st, nil
}

// storageSizes adds up the newest image and the edit segments after it in a
// name dir's current/.
func storageSizes(dir string) (image, edits int64) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0
	}
	var newest string
	var newestTxID int64 = -1
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "fsimage_")
		if !ok {
			continue
		}
		if txid, err := strconv.ParseInt(rest, 10, 64); err == nil && txid > newestTxID {
			newest, newestTxID = e.Name(), txid
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, newest)); err == nil && newest != "" {
		image = fi.Size()
	}
	for _, e := range ents {
		_, last, inProgress, ok := editlog.ParseSegmentName(e.Name())
		if !ok || (!inProgress && last <= newestTxID) {
			continue
		}
		if fi, err := e.Info(); err == nil {
			edits += fi.Size()
		}
	}
	return image, edits
}
