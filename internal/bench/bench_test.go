package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSplit(t *testing.T) {
	tests := []struct {
		n, threads int
		want       []int
	}{
		{10, 3, []int{0, 4, 7, 10}},
		{2, 4, []int{0, 1, 2, 2, 2}},
		{16, 16, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
		{0, 2, []int{0, 0, 0}},
	}
	for _, tc := range tests {
		got := split(tc.n, tc.threads)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("split(%d, %d) = %v, want %v", tc.n, tc.threads, got, tc.want)
		}
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		n, perDir int
		first     string
		last      string
	}{
		{1, 4, "/b/ThroughputBenchDir0/f0", "/b/ThroughputBenchDir0/f0"},
		{16, 4, "/b/ThroughputBenchDir0/f0", "/b/ThroughputBenchDir3/f15"},
		{17, 4, "/b/ThroughputBenchDir0/ThroughputBenchDir0/f0", "/b/ThroughputBenchDir1/ThroughputBenchDir0/f16"},
		{100, 1000, "/b/ThroughputBenchDir0/f0", "/b/ThroughputBenchDir0/f99"},
		{3, 1, "/b/ThroughputBenchDir0/f0", "/b/ThroughputBenchDir2/f2"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d/%d", tc.n, tc.perDir), func(t *testing.T) {
			g := newNames("/b", "f", tc.n, tc.perDir)
			if got := g.path(0); got != tc.first {
				t.Errorf("first = %s, want %s", got, tc.first)
			}
			if got := g.path(tc.n - 1); got != tc.last {
				t.Errorf("last = %s, want %s", got, tc.last)
			}
			// Every path is distinct, no directory holds more than perDir
			// files or (for perDir > 1) more than perDir subdirectories.
			seen := map[string]bool{}
			files := map[string]int{}
			subdirs := map[string]map[string]bool{}
			for i := 0; i < tc.n; i++ {
				p := g.path(i)
				if seen[p] {
					t.Fatalf("path %s twice", p)
				}
				seen[p] = true
				files[path.Dir(p)]++
				for d := path.Dir(p); d != "/b"; d = path.Dir(d) {
					if subdirs[path.Dir(d)] == nil {
						subdirs[path.Dir(d)] = map[string]bool{}
					}
					subdirs[path.Dir(d)][d] = true
				}
			}
			for d, c := range files {
				if c > tc.perDir {
					t.Errorf("%s holds %d files", d, c)
				}
			}
			for d, s := range subdirs {
				if tc.perDir > 1 && len(s) > tc.perDir {
					t.Errorf("%s holds %d directories", d, len(s))
				}
			}
			if len(files) != g.numDirs() {
				t.Errorf("%d leaf dirs, numDirs says %d", len(files), g.numDirs())
			}
		})
	}
}

// stat pulls "name: number" lines out of a report.
func stat(t *testing.T, report, section, name string) string {
	t.Helper()
	i := strings.Index(report, "--- "+section+" stats")
	if i < 0 {
		t.Fatalf("no %s stats in\n%s", section, report)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `: (\S+)`).FindStringSubmatch(report[i:])
	if m == nil {
		t.Fatalf("no %q in the %s stats of\n%s", name, section, report)
	}
	return m[1]
}

func TestRunNameNodeOps(t *testing.T) {
	tests := []struct {
		op     string
		shared bool
	}{
		{OpCreate, false},
		{OpCreate, true},
		{OpMkdirs, false},
		{OpOpen, false},
		{OpDelete, false},
		{OpFileStatus, true},
		{OpRename, false},
		{OpListing, false},
		{OpMixed, false},
		{OpStockCreate, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/shared=%v", tc.op, tc.shared), func(t *testing.T) {
			var out bytes.Buffer
			opts := Options{Op: tc.op, Threads: 3, Files: 25, FilesPerDir: 4, SharedConnection: tc.shared, TempDir: t.TempDir(), Close: true, ReadPercent: 50}
			if err := RunNameNode(context.Background(), opts, &out); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if got := stat(t, out.String(), tc.op, "# operations"); got != "25" {
				t.Fatalf("# operations: %s, want 25\n%s", got, out.String())
			}
			stat(t, out.String(), tc.op, "Ops per sec")
			stat(t, out.String(), tc.op, "Average Time")
			stat(t, out.String(), tc.op, "Latency p50 / p99 / p99.9")
			if tc.op == OpMixed {
				// 50 % reads: both kinds ran, their counts adding up.
				m := regexp.MustCompile(`getFileInfo: (\d+) ops.*\n  create: (\d+) ops`).FindStringSubmatch(out.String())
				if m == nil {
					t.Fatalf("no per-kind lines\n%s", out.String())
				}
				r, _ := strconv.Atoi(m[1])
				w, _ := strconv.Atoi(m[2])
				if r+w != 25 || r == 0 || w == 0 {
					t.Fatalf("mixed: %d reads + %d creates, want 25 with both\n%s", r, w, out.String())
				}
			}
			if tc.op == OpCreate || tc.op == OpStockCreate {
				stat(t, out.String(), tc.op, "Edit-log fsyncs per sec (flushes during the run)")
			}
			stat(t, out.String(), tc.op, "CPU (user+sys), this process")
		})
	}
}

// TestRunNameNodeReadersAndCPUPid runs getFileInfo readers beside creates
// and reports the CPU of a process given by pid (this one).
func TestRunNameNodeReadersAndCPUPid(t *testing.T) {
	var out bytes.Buffer
	pid := os.Getpid()
	opts := Options{Op: OpCreate, Threads: 3, Files: 60, Readers: 2, CPUPid: pid, TempDir: t.TempDir()}
	if err := RunNameNode(context.Background(), opts, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	report := out.String()
	m := regexp.MustCompile(`Readers \(getFileInfo\) beside the writers: 2 threads, (\d+) ops, [0-9.]+ per sec, p50 / p99 / p99.9: [0-9.]+ / [0-9.]+ / [0-9.]+ ms`).FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("no readers line\n%s", report)
	}
	if n, _ := strconv.Atoi(m[1]); n < 1 {
		t.Fatalf("readers made %d calls\n%s", n, report)
	}
	if !regexp.MustCompile(fmt.Sprintf(`CPU \(user\+sys\), process %d: [0-9.]+ s, [0-9.]+ µs per op`, pid)).MatchString(report) {
		t.Fatalf("no CPU line for process %d\n%s", pid, report)
	}
}

// TestPercentiles checks the latency percentiles on a known distribution.
func TestPercentiles(t *testing.T) {
	st := stats{latency: make([]time.Duration, 1000)}
	for i := range st.latency {
		st.latency[i] = time.Duration(1000-i) * time.Millisecond // 1000 ms .. 1 ms
	}
	p50, p99, p999, n := st.percentiles(nil)
	if n != 1000 || p50 != 500*time.Millisecond || p99 != 990*time.Millisecond || p999 != 999*time.Millisecond {
		t.Errorf("percentiles = %v %v %v over %d", p50, p99, p999, n)
	}
	_, _, _, n = st.percentiles(func(i int) bool { return i%2 == 0 })
	if n != 500 {
		t.Errorf("filtered count = %d", n)
	}
	if _, _, _, n := (stats{}).percentiles(nil); n != 0 {
		t.Errorf("empty: %d", n)
	}
}

// TestRunNameNodeOpenUnsupported runs open against a server whose
// getBlockLocations answers UnsupportedOperationException, as a NameNode
// without a data path does: open is reported and skipped.
func TestRunNameNodeOpenUnsupported(t *testing.T) {
	srv := ipc.NewServer(ipc.ServerConfig{Handlers: 2, Logger: quiet()})
	ipc.Handle(srv.Service(namenode.ClientProtocolName), "getBlockLocations",
		func(ctx context.Context, req *hdfs.GetBlockLocationsRequestProto) (*hdfs.GetBlockLocationsResponseProto, error) {
			return nil, fmt.Errorf("getBlockLocations: %w", errors.ErrUnsupported)
		})
	l, err := listenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	defer func() {
		srv.Close()
		<-served
	}()

	var out bytes.Buffer
	err = RunNameNode(context.Background(), Options{Op: OpOpen, Threads: 2, Files: 4, Addrs: []string{l.Addr().String()}}, &out)
	if !errors.Is(err, ErrOpUnsupported) || err.Error() != "open: getBlockLocations not supported by this NameNode" {
		t.Fatalf("err = %v, want the open op reported unsupported", err)
	}
	if !strings.Contains(out.String(), "open: getBlockLocations not supported by this NameNode (skipped)") {
		t.Fatalf("report does not say open was skipped:\n%s", out.String())
	}
}

// TestRunNameNodeExternal runs every op against a NameNode the benchmark did
// not start.
func TestRunNameNodeExternal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg, err := namenode.ConfigFrom(defaultsWithDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	cfg.SuperUser = "benchuser"
	if err := namenode.Format(ctx, cfg, namenode.Deps{Logger: quiet()}, namenode.FormatOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	l, err := listenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	nn, err := namenode.Start(ctx, cfg, namenode.Deps{Listener: l, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer nn.Close()

	var out bytes.Buffer
	opts := Options{Op: OpAll, Threads: 4, Files: 30, Addrs: []string{nn.RPCAddr().String()}, User: "benchuser", FsyncDir: t.TempDir()}
	if err := RunNameNode(ctx, opts, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	report := out.String()
	// FsyncDir gives an external NameNode's create the raw fsync rates.
	for _, re := range []string{
		`Raw fsyncs/s in the name dir \(200 B append \+ fdatasync, measured just before\): [1-9][0-9]*\n`,
		`Raw fsyncs/s in the name dir \(200 B into preallocated space \+ fdatasync, as the edit log writes\): [1-9][0-9]*\n`,
	} {
		if n := len(regexp.MustCompile(re).FindAllString(report, -1)); n != 1 {
			t.Errorf("%d lines match %s, want 1 (create's)\n%s", n, re, report)
		}
	}
	for _, op := range allOps {
		if got := stat(t, report, op, "# operations"); got != "30" {
			t.Errorf("%s: # operations %s, want 30", op, got)
		}
	}
	if !strings.Contains(report, "(external)") {
		t.Errorf("report:\n%s", report)
	}
	// Without -keepResults every op removed its directory.
	if exists(t, nn.RPCAddr().String(), "benchuser", BaseDir+"/create") {
		t.Errorf("%s/create is still there", BaseDir)
	}
}

func TestRunNameNodeBadOptions(t *testing.T) {
	tests := []struct {
		opts Options
		want error
	}{
		{Options{Op: "nosuch"}, ErrUnknownOp},
		{Options{Op: OpCreate, Threads: -1}, ErrBadOptions},
		{Options{Op: OpCreate, FilesPerDir: -3}, ErrBadOptions},
		{Options{Op: OpRestart, Addrs: []string{"127.0.0.1:1"}}, ErrBadOptions},
	}
	for _, tc := range tests {
		if err := RunNameNode(context.Background(), tc.opts, &bytes.Buffer{}); !errors.Is(err, tc.want) {
			t.Errorf("%+v: err %v, want %v", tc.opts, err, tc.want)
		}
	}
}

func TestMemory(t *testing.T) {
	var out bytes.Buffer
	if err := RunNameNode(context.Background(), Options{Op: OpMemory, Files: 2000, FilesPerDir: 100}, &out); err != nil {
		t.Fatal(err)
	}
	if got := stat(t, out.String(), OpMemory, "# files"); got != "2000" {
		t.Fatalf("# files %s\n%s", got, out.String())
	}
	// 20 leaf dirs, the base dir, /nnThroughputBenchmark and /.
	if got := stat(t, out.String(), OpMemory, "# directories"); got != "23" {
		t.Fatalf("# directories %s\n%s", got, out.String())
	}
}

// TestMemoryLayouts builds one-block files whose replicas three simulated
// DataNodes report (the op checks every block has them), and empty
// directories.
func TestMemoryLayouts(t *testing.T) {
	var out bytes.Buffer
	if err := RunNameNode(context.Background(), Options{Op: OpMemory, Files: 2000, FilesPerDir: 100, Layout: "blocks"}, &out); err != nil {
		t.Fatal(err)
	}
	if got := stat(t, out.String(), OpMemory, "# blocks"); got != "2000" {
		t.Fatalf("# blocks %s\n%s", got, out.String())
	}
	out.Reset()
	if err := RunNameNode(context.Background(), Options{Op: OpMemory, Files: 2000, FilesPerDir: 100, Layout: "dirs"}, &out); err != nil {
		t.Fatal(err)
	}
	// 2,000 leaves, 20 parents, the base dir, /nnThroughputBenchmark and /.
	if got := stat(t, out.String(), OpMemory, "# directories"); got != "2023" {
		t.Fatalf("# directories %s\n%s", got, out.String())
	}
	if err := RunNameNode(context.Background(), Options{Op: OpMemory, Files: 10, Layout: "tables"}, &out); !errors.Is(err, ErrBadOptions) {
		t.Fatalf("layout tables: err %v", err)
	}
}

func TestRestart(t *testing.T) {
	var out bytes.Buffer
	opts := Options{Op: OpRestart, Files: 300, FilesPerDir: 50, Threads: 4, TempDir: t.TempDir()}
	if err := RunNameNode(context.Background(), opts, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	report := out.String()
	for _, section := range []string{"restart stats (image + edits)", "restart stats (image only)"} {
		i := strings.Index(report, section)
		if i < 0 {
			t.Fatalf("no %q in\n%s", section, report)
		}
		// 300 files, 6 leaf dirs, the base, /nnThroughputBenchmark and /.
		if !strings.Contains(report[i:], "# inodes: 309 (300 files)") {
			t.Fatalf("%s: wrong counts in\n%s", section, report)
		}
	}
	// 270 files went into the first image: edits hold the other 30.
	m := regexp.MustCompile(`edits bytes \(not yet in an image\): (\d+)`).FindAllStringSubmatch(report, -1)
	if len(m) != 2 || m[0][1] == "0" || len(m[0][1]) <= len(m[1][1]) {
		t.Fatalf("edits sizes %v; want the first restart to replay more edits than the second\n%s", m, report)
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func defaultsWithDir(dir string) *conf.Conf {
	return conf.Defaults().With(
		conf.KeyValue{Key: conf.DFSNameNodeNameDir, Value: dir},
		conf.KeyValue{Key: conf.DFSNameNodeRPCAddress, Value: "127.0.0.1:0"},
		conf.KeyValue{Key: conf.DFSNameNodeHTTPAddress, Value: "127.0.0.1:0"},
	)
}

// exists asks the NameNode at addr whether src exists.
func exists(t *testing.T, addr, user, src string) bool {
	t.Helper()
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{addr}, User: user, Protocol: namenode.ClientProtocolName})
	defer c.Close()
	var resp hdfs.GetFileInfoResponseProto
	if err := c.Call(context.Background(), "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(src)}, &resp); err != nil {
		t.Fatal(err)
	}
	return resp.Fs != nil
}

// TestInProcessNeverTouchesConfiguredDirs: the in-process NameNode is
// formatted (wiped) on a temporary directory even when the site files name a
// real name dir and mark it final.
func TestInProcessNeverTouchesConfiguredDirs(t *testing.T) {
	confDir, real := t.TempDir(), t.TempDir()
	marker := filepath.Join(real, "keep")
	if err := os.WriteFile(marker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	site := `<configuration>
  <property><name>dfs.namenode.name.dir</name><value>` + real + `</value><final>true</final></property>
  <property><name>dfs.namenode.edits.dir.minimum</name><value>1</value><final>true</final></property>
</configuration>`
	if err := os.WriteFile(filepath.Join(confDir, "hdfs-site.xml"), []byte(site), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := conf.Load(conf.Options{Dir: confDir})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := RunNameNode(context.Background(), Options{Op: OpMkdirs, Files: 3, Conf: c, TempDir: t.TempDir()}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the configured name dir was touched: %v", err)
	}
	if ents, _ := os.ReadDir(real); len(ents) != 1 {
		t.Fatalf("the configured name dir holds %d entries, want only the marker", len(ents))
	}
}

// BenchmarkLoopbackTCP measures one loopback TCP stream with 64 KiB and 1 MiB
// writes: the raw bandwidth the data path's figures are judged against.
func BenchmarkLoopbackTCP(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("write=%dKiB", size>>10), func(b *testing.B) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			done := make(chan error, 1)
			go func() {
				c, err := l.Accept()
				if err != nil {
					done <- err
					return
				}
				_, err = io.Copy(io.Discard, c)
				c.Close()
				done <- err
			}()
			c, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, size)
			b.SetBytes(int64(size))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			c.Close()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestRestartOffline writes the name dir directly: 300 files in the image
// and about 100 ops after it (the segment's start and end records, one
// OP_MKDIR and 49 files of OP_ADD and OP_CLOSE: 101); the restarts must
// find all 349 files, which timeRestart checks through getContentSummary.
func TestRestartOffline(t *testing.T) {
	var out bytes.Buffer
	opts := Options{Op: OpRestart, Offline: true, Files: 300, Edits: 100, FilesPerDir: 50, Threads: 2, TempDir: t.TempDir()}
	if err := RunNameNode(context.Background(), opts, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	report := out.String()
	for _, want := range []string{"nrFiles = 300 (in the image) + 49 (in the edits)", "101 edits after it",
		"restart stats (image + edits)", "restart stats (image only)", "saveNamespace Time:"} {
		if !strings.Contains(report, want) {
			t.Fatalf("no %q in\n%s", want, report)
		}
	}
	if n := strings.Count(report, "(349 files)"); n != 2 {
		t.Fatalf("%d restarts found the 349 files, want 2\n%s", n, report)
	}
	// Files of one block each: four ops a file in the edits.
	out.Reset()
	opts.Layout, opts.TempDir = "blocks", t.TempDir()
	if err := RunNameNode(context.Background(), opts, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	report = out.String()
	if !strings.Contains(report, "nrFiles = 300 (in the image) + 25 (in the edits)") || strings.Count(report, "(325 files)") != 2 {
		t.Fatalf("blocks layout:\n%s", report)
	}
}

// TestRunBlockReport runs the blockReport op in both encodings against an
// in-process NameNode: every node's replicas were accepted by it (a report
// the NameNode refused fails the op), and the figures are printed.
func TestRunBlockReport(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			var out bytes.Buffer
			opts := Options{Op: OpBlockReport, Threads: 2, Files: 6, Datanodes: 3, BlocksPerReport: 40, BlocksPerFile: 3,
				LegacyReport: legacy, TempDir: t.TempDir()}
			if err := RunNameNode(context.Background(), opts, &out); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if got := stat(t, out.String(), OpBlockReport, "# operations"); got != "6" {
				t.Fatalf("# operations: %s, want 6\n%s", got, out.String())
			}
			want := "encoding = blocksBuffers"
			if legacy {
				want = "encoding = long list (-legacyReport)"
			}
			if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "Prepared 42 blocks (126 replicas) in 14 files") {
				t.Fatalf("want %q and 42 blocks of 3 replicas in\n%s", want, out.String())
			}
			stat(t, out.String(), OpBlockReport, "Replicas reported per sec")
			stat(t, out.String(), OpBlockReport, "Longest namesystem write lock hold during the reports")
		})
	}
}

// TestRunLongOps runs the longOps op small: both phases ran reads and
// creates, and the delete and the report finished.
func TestRunLongOps(t *testing.T) {
	var out bytes.Buffer
	opts := Options{Op: OpLongOps, Threads: 2, Files: 50, BlocksPerReport: 30, BlocksPerFile: 10, TempDir: t.TempDir()}
	if err := RunNameNode(context.Background(), opts, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, p := range []string{"quiet", "during"} {
		if !regexp.MustCompile(`(?m)^` + p + `: .* getFileInfo \d+ calls p50 / p99 / p99.9: .* creates \d+ per sec`).MatchString(out.String()) {
			t.Fatalf("no %s line in\n%s", p, out.String())
		}
	}
	if !strings.Contains(out.String(), "recursive delete of 50 files: ") || !strings.Contains(out.String(), "full block report of 30 replicas: ") {
		t.Fatalf("no background figures in\n%s", out.String())
	}
}
