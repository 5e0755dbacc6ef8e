package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	_ "github.com/hdfsgo/hdfsgo/internal/proto/hdfsfast" // getFileInfo answers decoded by hand
)

// Errors of RunNameNode.
var (
	// ErrUnknownOp: Options.Op names no benchmark.
	ErrUnknownOp = errors.New("bench: unknown op")
	// ErrBadOptions: an option is out of range.
	ErrBadOptions = errors.New("bench: bad options")
	// ErrOpUnsupported: the NameNode does not support what the op measures
	// (see skipError).
	ErrOpUnsupported = errors.New("bench: op not supported by this NameNode")
	// ErrCheck: the NameNode's answer contradicts what the op just did.
	ErrCheck = errors.New("bench: unexpected NameNode answer")
)

// skipError says why an op cannot run against this NameNode; it matches
// ErrOpUnsupported.
type skipError struct {
	msg   string
	cause error
}

func (e *skipError) Error() string        { return e.msg }
func (e *skipError) Unwrap() error        { return e.cause }
func (e *skipError) Is(target error) bool { return target == ErrOpUnsupported }

// BaseDir is the directory every op works under, one subdirectory per op.
const BaseDir = "/nnThroughputBenchmark"

// Op names.
const (
	OpCreate     = "create"
	OpMkdirs     = "mkdirs"
	OpOpen       = "open"
	OpDelete     = "delete"
	OpFileStatus = "fileStatus"
	OpRename     = "rename"
	OpListing    = "listing"
	// OpMixed interleaves getFileInfo of existing files with creates of
	// new ones (Options.ReadPercent of the operations are reads).
	OpMixed   = "mixed"
	OpAll     = "all"
	OpMemory  = "memory"
	OpRestart = "restart"
)

// OpStockCreate is the stock Go client's (github.com/colinmarc/hdfs)
// create-and-close loop: Client.Create (getFileInfo, create) then
// FileWriter.Close (complete) of an empty file; two logged ops a file.
const OpStockCreate = "stockCreate"

// allOps is what OpAll runs, in Hadoop's order (listing is ours).
var allOps = []string{OpCreate, OpMkdirs, OpOpen, OpDelete, OpFileStatus, OpRename, OpListing}

// Defaults of Options.
const (
	// DefaultThreads is 16 where Hadoop's benchmark uses 3: our figures are
	// quoted for 16 client threads, the count where group commit and the
	// handler pool are both busy.
	DefaultThreads     = 16
	DefaultFiles       = 10
	DefaultFilesPerDir = 4
	// DefaultReplication is the replica count of the memory op's blocks
	// layout.
	DefaultReplication = 3
	DefaultDirsPerDir  = 2
	// DefaultEdits is how many ops the offline restart op logs after its
	// image.
	DefaultEdits = 1000
	// DefaultReadPercent is the share of reads in OpMixed.
	DefaultReadPercent = 90
	// blockSize is what the benchmark's files ask for; files have no blocks.
	blockSize = 128 << 20
)

// Options select and shape a NameNode benchmark.
type Options struct {
	// Op is one of the Op* names.
	Op string
	// Threads is the number of client threads (DefaultThreads when 0).
	Threads int
	// Files is the number of operations (files, or directories for mkdirs;
	// DefaultFiles when 0).
	Files int
	// FilesPerDir is how many files one directory holds (DefaultFilesPerDir
	// when 0); DirsPerDir is the same for mkdirs (DefaultDirsPerDir when 0).
	FilesPerDir int
	DirsPerDir  int
	// Close completes each created file right after create in the create op
	// (Hadoop's -close); the complete call then counts as part of the
	// operation.
	Close bool
	// ReadPercent is the share (0..100) of OpMixed's operations that are
	// getFileInfo calls; the rest create files. -1 means the default
	// (DefaultReadPercent); 0 is all writes.
	ReadPercent int
	// KeepResults leaves the op's directory in place afterwards.
	KeepResults bool
	// Features is what the memory op gives every file besides its inode:
	// "" (nothing), "xattr" (one user. attribute of 8 bytes) or "acl" (the
	// same ACL with a named user on every file, which the files share).
	Features string
	// Layout is what the memory op builds: "" or "files" (empty files),
	// "blocks" (files of one block each, its replicas reported by
	// Replication simulated DataNodes through the block manager) or "dirs"
	// (empty directories, FilesPerDir in each parent).
	Layout string
	// Replication is the replica count of the memory op's blocks layout
	// (DefaultReplication when 0).
	Replication int
	// MemProfile, when set, receives the memory op's heap profile, taken
	// after the build and a full collection.
	MemProfile io.Writer
	// Offline makes the restart op write the NameNode's directory
	// directly (an image of Files files and a segment of Edits ops after
	// it) instead of filling a NameNode over RPC; see runRestartOffline.
	Offline bool
	// Edits is the number of ops the offline restart op logs after the
	// image (DefaultEdits when 0).
	Edits int
	// SharedConnection makes every thread call through one ipc.Client (one
	// TCP connection, calls multiplexed); by default each thread has its
	// own client and connection, like separate client processes.
	SharedConnection bool

	// Addrs are the RPC addresses (host:port, in failover order) of the
	// NameNode to measure. None means: start one in this process on a
	// formatted temporary directory, listening on 127.0.0.1:0, and remove it
	// afterwards.
	Addrs []string
	// User is the user the calls run as. For an in-process NameNode it is
	// also the NameNode's superuser. Empty means the OS user.
	User string
	// Conf is the configuration an in-process NameNode starts from (its
	// name, edits and RPC address are replaced); nil means the defaults.
	Conf *conf.Conf
	// TempDir is where an in-process NameNode's directory is made; empty
	// means os.TempDir().
	TempDir string
	// Logger receives the in-process NameNode's log; nil discards it.
	Logger *slog.Logger
	// CPUProfile, when set, receives a CPU profile of the timed phases.
	CPUProfile io.Writer
	// CPUPid, when positive, is another process (a separate NameNode)
	// whose user+sys CPU time over each timed phase is reported beside
	// this process's, in total and per operation.
	CPUPid int
	// FsyncDir, when set, is a directory (on the disk of a separate
	// NameNode's name dir) whose raw fsync rates create and stockCreate
	// measure just before they run; an in-process NameNode's own dir is used
	// without it.
	FsyncDir string
	// Readers, for the ops that write (create, mkdirs, delete, rename,
	// stockCreate), is a number of extra threads, each with its own
	// connection, that call getFileInfo on files prepared beforehand for
	// as long as the writers run; their rate and latency percentiles are
	// printed beside the writers'.
	Readers int

	// The blockReport op (OpBlockReport): Files is the number of reports,
	// Datanodes the simulated DataNodes (DefaultDatanodes when 0),
	// BlocksPerReport the replicas each holds (DefaultBlocksPerReport),
	// BlocksPerFile the blocks of each file written to them
	// (DefaultBlocksPerFile). LegacyReport sends the long-list encoding
	// even to a NameNode that reads buffers.
	Datanodes, BlocksPerReport, BlocksPerFile int
	LegacyReport                              bool
}

func (o *Options) fill() error {
	if o.Threads == 0 {
		o.Threads = DefaultThreads
	}
	if o.Files == 0 {
		o.Files = DefaultFiles
	}
	if o.FilesPerDir == 0 {
		o.FilesPerDir = DefaultFilesPerDir
	}
	if o.DirsPerDir == 0 {
		o.DirsPerDir = DefaultDirsPerDir
	}
	if o.Edits == 0 {
		o.Edits = DefaultEdits
	}
	if o.ReadPercent < 0 {
		o.ReadPercent = DefaultReadPercent
	}
	if o.ReadPercent > 100 {
		return fmt.Errorf("%w: -readPercent must be between 0 and 100", ErrBadOptions)
	}
	if o.Threads < 1 || o.Files < 1 || o.FilesPerDir < 1 || o.DirsPerDir < 1 || o.Readers < 0 {
		return fmt.Errorf("%w: -threads, -files, -filesPerDir and -dirsPerDir must be positive, -readers not negative", ErrBadOptions)
	}
	if o.User == "" {
		o.User = osUser()
	}
	if o.Conf == nil {
		o.Conf = conf.Defaults()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return nil
}

func osUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "hdfs"
}

// RunNameNode runs the benchmark opts.Op names and writes its report to out.
// An op the NameNode cannot serve is reported and skipped; the error is
// ErrOpUnsupported only when nothing else ran.
func RunNameNode(ctx context.Context, opts Options, out io.Writer) error {
	if opts.Op == OpLongOps && opts.Files == 0 {
		opts.Files = DefaultLongOpsFiles
	}
	if err := opts.fill(); err != nil {
		return err
	}
	var ops []string
	switch opts.Op {
	case OpAll:
		ops = allOps
	case OpCreate, OpMkdirs, OpOpen, OpDelete, OpFileStatus, OpRename, OpListing, OpMixed, OpStockCreate:
		ops = []string{opts.Op}
	case OpMemory:
		return runMemory(opts, out)
	case OpRestart:
		if opts.Offline {
			return runRestartOffline(ctx, opts, out)
		}
		return runRestart(ctx, opts, out)
	case OpBlockReport:
		return runBlockReport(ctx, opts, out)
	case OpLongOps:
		return runLongOps(ctx, opts, out)
	default:
		return fmt.Errorf("%w %q (want create, mkdirs, open, delete, fileStatus, rename, listing, mixed, stockCreate, blockReport, longOps, all, memory or restart)", ErrUnknownOp, opts.Op)
	}

	tg, err := openTarget(ctx, &opts)
	if err != nil {
		return err
	}
	defer tg.close()
	fmt.Fprintf(out, "NameNode: %s (%s), user %s, %s\n", strings.Join(tg.addrs, ","), tg.kind(), opts.User, connMode(&opts))

	ran := 0
	var unsupported error
	for _, name := range ops {
		r := &opRun{opts: &opts, tg: tg, name: name}
		err := r.run(ctx, out)
		if errors.Is(err, ErrOpUnsupported) {
			fmt.Fprintf(out, "\n%v (skipped)\n", err)
			unsupported = err
			continue
		}
		if err != nil {
			return fmt.Errorf("bench: %s: %w", name, err)
		}
		ran++
	}
	if ran == 0 && unsupported != nil {
		return unsupported
	}
	return nil
}

func connMode(o *Options) string {
	if o.SharedConnection {
		return fmt.Sprintf("%d threads sharing one connection", o.Threads)
	}
	return fmt.Sprintf("%d threads, one connection each", o.Threads)
}

// target is the NameNode under test and the clients that call it.
type target struct {
	addrs   []string
	dir     string // in-process: the temporary directory (removed on close)
	cfg     namenode.Config
	deps    namenode.Deps
	nn      *namenode.NameNode
	admin   *ipc.Client
	clients []*ipc.Client // one per thread, or one shared
	opts    *Options
}

func (tg *target) kind() string {
	if tg.nn != nil {
		return "in-process, name dir " + tg.dir
	}
	return "external"
}

// openTarget connects to opts.Addrs or starts an in-process NameNode.
func openTarget(ctx context.Context, opts *Options) (*target, error) {
	tg := &target{opts: opts, addrs: opts.Addrs}
	if len(tg.addrs) == 0 {
		if err := tg.startLocal(ctx); err != nil {
			tg.close()
			return nil, err
		}
	}
	tg.connect()
	return tg, nil
}

// startLocal formats a temporary directory and starts a NameNode on it.
func (tg *target) startLocal(ctx context.Context) error {
	if err := tg.formatLocal(ctx); err != nil {
		return err
	}
	return tg.start(ctx)
}

// formatLocal makes and formats the directory of an in-process NameNode.
func (tg *target) formatLocal(ctx context.Context) error {
	dir, err := os.MkdirTemp(tg.opts.TempDir, "hdfsgo-bench-")
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	tg.dir = dir
	nameDir := filepath.Join(dir, "name")
	c := tg.opts.Conf.With(
		conf.KeyValue{Key: conf.DFSNameNodeNameDir, Value: nameDir},
		conf.KeyValue{Key: conf.DFSNameNodeEditsDir, Value: nameDir},
		conf.KeyValue{Key: conf.DFSNameNodeRPCAddress, Value: "127.0.0.1:0"},
	)
	cfg, err := namenode.ConfigFrom(c)
	if err != nil {
		return err
	}
	// Set the directories again on the typed config: a key marked final in
	// the site files keeps its value through With, and Format below wipes
	// whatever directories the config names.
	cfg.NameDirs, cfg.EditsDirs, cfg.EditsDirMinimum = []string{nameDir}, []string{nameDir}, 1
	cfg.RPCAddress, cfg.HTTPAddress = "127.0.0.1:0", "127.0.0.1:0"
	cfg.SuperUser = tg.opts.User
	if err := cfg.Validate(); err != nil {
		return err
	}
	tg.cfg = cfg
	tg.deps = namenode.Deps{Logger: tg.opts.Logger}
	return namenode.Format(ctx, cfg, tg.deps, namenode.FormatOptions{Force: true})
}

// start starts the in-process NameNode on its (formatted) directory.
func (tg *target) start(ctx context.Context) error {
	l, err := listenLoopback()
	if err != nil {
		return err
	}
	deps := tg.deps
	deps.Listener = l
	nn, err := namenode.Start(ctx, tg.cfg, deps)
	if err != nil {
		l.Close()
		return err
	}
	tg.nn = nn
	tg.addrs = []string{nn.RPCAddr().String()}
	return nil
}

// stop closes the clients and the in-process NameNode, keeping its directory.
func (tg *target) stop() error {
	tg.disconnect()
	if tg.nn == nil {
		return nil
	}
	err := tg.nn.Close()
	tg.nn = nil
	return err
}

func (tg *target) connect() {
	tg.admin = tg.newClient()
	n := tg.opts.Threads
	if tg.opts.SharedConnection {
		n = 1
	}
	tg.clients = make([]*ipc.Client, n)
	for i := range tg.clients {
		tg.clients[i] = tg.newClient()
	}
}

func (tg *target) disconnect() {
	if tg.admin != nil {
		tg.admin.Close()
		tg.admin = nil
	}
	for _, c := range tg.clients {
		c.Close()
	}
	tg.clients = nil
}

func (tg *target) newClient() *ipc.Client {
	return ipc.NewClient(ipc.ClientConfig{
		Addresses: tg.addrs,
		User:      tg.opts.User,
		Protocol:  namenode.ClientProtocolName,
		// The benchmark never retries: a failure is a result.
		MaxRetries: -1,
	})
}

// client is thread t's client.
func (tg *target) client(t int) *ipc.Client { return tg.clients[t%len(tg.clients)] }

func (tg *target) close() {
	if err := tg.stop(); err != nil {
		tg.opts.Logger.Warn("stopping the NameNode", "err", err)
	}
	if tg.dir != "" {
		os.RemoveAll(tg.dir)
	}
}

// opRun is one op's benchmark.
type opRun struct {
	opts  *Options
	tg    *target
	name  string
	base  string
	gen   names
	paths []string // gen's paths, made before the timed phase
	dsts  []string // rename targets
	dirs  []string // gen's leaf directories (listing)
	news  []string // files the mixed op's writes create
}

// stats is what one timed phase measured.
type stats struct {
	ops        int
	elapsed    time.Duration
	cumulative time.Duration // sum of the per-call latencies
	// latency is each operation's time by operation index (zero for
	// operations that did not run).
	latency []time.Duration
}

// percentiles returns the p50, p99 and p99.9 of the latencies of the
// operations keep selects (every one when keep is nil), and how many.
func (s stats) percentiles(keep func(i int) bool) (p50, p99, p999 time.Duration, n int) {
	var l []time.Duration
	for i, d := range s.latency {
		if d > 0 && (keep == nil || keep(i)) {
			l = append(l, d)
		}
	}
	if len(l) == 0 {
		return 0, 0, 0, 0
	}
	slices.Sort(l)
	at := func(q float64) time.Duration {
		k := int(math.Ceil(q*float64(len(l)))) - 1
		return l[min(max(k, 0), len(l)-1)]
	}
	return at(0.50), at(0.99), at(0.999), len(l)
}

func (s stats) opsPerSec() float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return float64(s.ops) / s.elapsed.Seconds()
}

func (s stats) average() time.Duration {
	if s.ops == 0 {
		return 0
	}
	return s.cumulative / time.Duration(s.ops)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/float64(time.Millisecond)) }

func (r *opRun) run(ctx context.Context, out io.Writer) error {
	o := r.opts
	r.base = BaseDir + "/" + r.name
	perDir := o.FilesPerDir
	if r.name == OpMkdirs {
		perDir = o.DirsPerDir
	}
	r.gen = newNames(r.base, "ThroughputBench", o.Files, perDir)
	r.paths = make([]string, o.Files)
	for i := range r.paths {
		r.paths[i] = r.gen.path(i)
	}
	if r.name == OpRename {
		r.dsts = make([]string, len(r.paths))
		for i, p := range r.paths {
			r.dsts[i] = p + ".r"
		}
	}
	if r.name == OpListing {
		r.dirs = make([]string, r.gen.numDirs())
		for i := range r.dirs {
			r.dirs[i] = r.gen.dir(i)
		}
	}

	var call func(ctx context.Context, c *ipc.Client, thread, i int) error
	var extra []string
	switch r.name {
	case OpCreate:
		call = r.create
		lines, err := r.rawFsyncs()
		if err != nil {
			return err
		}
		extra = append(extra, lines...)
	case OpMkdirs:
		call = r.mkdirs
	case OpOpen:
		if err := r.probeBlockLocations(ctx); err != nil {
			return err
		}
		call = r.open
	case OpDelete:
		call = r.delete
	case OpFileStatus:
		call = r.fileStatus
	case OpRename:
		call = r.rename
	case OpListing:
		call = r.listing
	case OpMixed:
		call = r.mixed
	case OpStockCreate:
		sc, err := r.stockClients()
		if err != nil {
			return err
		}
		defer sc.close()
		call = sc.createClose
		lines, err := r.rawFsyncs()
		if err != nil {
			return err
		}
		extra = append(extra, lines...)
	}
	if err := r.clean(ctx); err != nil {
		return err
	}
	if r.name == OpStockCreate {
		// The stock client's Create does not make parents.
		if err := r.prepareDirs(ctx); err != nil {
			return err
		}
	}
	if r.name != OpCreate && r.name != OpMkdirs && r.name != OpStockCreate {
		if r.name == OpMixed {
			// Reads go to the prepared files, writes create others.
			r.news = make([]string, len(r.paths))
			for i, p := range r.paths {
				r.news[i] = p + ".new"
			}
		}
		if err := r.prepareFiles(ctx); err != nil {
			return fmt.Errorf("preparing %d files: %w", o.Files, err)
		}
	}

	if o.CPUProfile != nil {
		if err := pprof.StartCPUProfile(o.CPUProfile); err != nil {
			return fmt.Errorf("bench: cpu profile: %w", err)
		}
	}
	var rd *readers
	if o.Readers > 0 && writes(r.name) {
		var err error
		if rd, err = r.startReaders(ctx); err != nil {
			return err
		}
	}
	flushesBefore := r.tg.flushes()
	cpu0 := cpuNow(o.CPUPid)
	st, err := r.tg.timed(ctx, o.Files, call)
	cpu1 := cpuNow(o.CPUPid)
	flushes := r.tg.flushes() - flushesBefore
	var rst readStats
	if rd != nil {
		var rerr error
		if rst, rerr = rd.stop(); rerr != nil && err == nil {
			err = rerr
		}
	}
	if o.CPUProfile != nil {
		pprof.StopCPUProfile()
		o.CPUProfile = nil // one profile per run
	}
	if err != nil {
		return err
	}
	if !o.KeepResults {
		if err := r.clean(ctx); err != nil {
			return err
		}
	}

	fmt.Fprintf(out, "\n--- %s inputs ---\n", r.name)
	switch r.name {
	case OpMkdirs:
		fmt.Fprintf(out, "nrDirs = %d\nnrThreads = %d\nnrDirsPerDir = %d\n", o.Files, o.Threads, o.DirsPerDir)
	case OpListing:
		fmt.Fprintf(out, "nrFiles = %d\nnrThreads = %d\nnrFilesPerDir = %d\nnrDirsListed = %d\n", o.Files, o.Threads, o.FilesPerDir, r.gen.numDirs())
	case OpMixed:
		fmt.Fprintf(out, "nrFiles = %d\nnrThreads = %d\nnrFilesPerDir = %d\nreadPercent = %d\n", o.Files, o.Threads, o.FilesPerDir, o.ReadPercent)
	default:
		fmt.Fprintf(out, "nrFiles = %d\nnrThreads = %d\nnrFilesPerDir = %d\n", o.Files, o.Threads, o.FilesPerDir)
	}
	fmt.Fprintf(out, "--- %s stats ---\n", r.name)
	fmt.Fprintf(out, "# operations: %d\n", st.ops)
	fmt.Fprintf(out, "Elapsed Time: %d ms\n", st.elapsed.Milliseconds())
	fmt.Fprintf(out, "Ops per sec: %.1f\n", st.opsPerSec())
	fmt.Fprintf(out, "Average Time: %s ms\n", ms(st.average()))
	p50, p99, p999, _ := st.percentiles(nil)
	fmt.Fprintf(out, "Latency p50 / p99 / p99.9: %s / %s / %s ms\n", ms(p50), ms(p99), ms(p999))
	if r.name == OpMixed {
		for _, k := range []struct {
			name string
			read bool
		}{{"getFileInfo", true}, {"create", false}} {
			p50, p99, p999, n := st.percentiles(func(i int) bool { return r.isRead(i) == k.read })
			if n > 0 {
				fmt.Fprintf(out, "  %s: %d ops, %.1f per sec, p50 / p99 / p99.9: %s / %s / %s ms\n",
					k.name, n, float64(n)/st.elapsed.Seconds(), ms(p50), ms(p99), ms(p999))
			}
		}
	}
	if r.tg.nn != nil && flushes > 0 && st.elapsed > 0 {
		fmt.Fprintf(out, "Edit-log fsyncs per sec (flushes during the run): %.1f (%.1f ops per flush)\n",
			float64(flushes)/st.elapsed.Seconds(), float64(st.ops)/float64(flushes))
	}
	if r.name == OpStockCreate {
		fmt.Fprintln(out, "(each operation is one file: getFileInfo, create and complete, two of them logged)")
	}
	if st.ops > 0 {
		self := cpu1.self - cpu0.self
		fmt.Fprintf(out, "CPU (user+sys), this process: %.2f s, %.1f µs per op\n", self.Seconds(), float64(self.Microseconds())/float64(st.ops))
		if o.CPUPid > 0 {
			other := cpu1.other - cpu0.other
			fmt.Fprintf(out, "CPU (user+sys), process %d: %.2f s, %.1f µs per op\n", o.CPUPid, other.Seconds(), float64(other.Microseconds())/float64(st.ops))
		}
	}
	if rd != nil {
		p50, p99, p999 := rst.percentiles()
		fmt.Fprintf(out, "Readers (getFileInfo) beside the writers: %d threads, %d ops, %.1f per sec, p50 / p99 / p99.9: %s / %s / %s ms\n",
			o.Readers, len(rst.lat), float64(len(rst.lat))/rst.elapsed.Seconds(), ms(p50), ms(p99), ms(p999))
	}
	for _, e := range extra {
		fmt.Fprintln(out, e)
	}
	return nil
}

// writes reports whether op name logs edits (the ops -readers runs beside).
func writes(name string) bool {
	switch name {
	case OpCreate, OpMkdirs, OpDelete, OpRename, OpStockCreate:
		return true
	}
	return false
}

// flushes is the in-process NameNode's count of edit-log flushes (0 for an
// external one).
func (tg *target) flushes() int64 {
	if tg.nn == nil {
		return 0
	}
	return tg.nn.EditLogStats().Flushes
}

// split divides n operations over t threads as evenly as possible: thread i
// gets the range [first[i], first[i+1]).
func split(n, t int) []int {
	first := make([]int, t+1)
	for i := 0; i < t; i++ {
		first[i+1] = first[i] + n/t
		if i < n%t {
			first[i+1]++
		}
	}
	return first
}

// timed runs call for operations 0..n-1 over the threads and measures them.
// The first error stops every thread and is returned.
func (tg *target) timed(ctx context.Context, n int, call func(ctx context.Context, c *ipc.Client, thread, i int) error) (stats, error) {
	t := tg.opts.Threads
	first := split(n, t)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	cum := make([]time.Duration, t)
	done := make([]int, t)
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	start := time.Now()
	for th := 0; th < t; th++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := tg.client(th)
			for i := first[th]; i < first[th+1]; i++ {
				if ctx.Err() != nil {
					return
				}
				s := time.Now()
				if err := call(ctx, c, th, i); err != nil {
					cancel(fmt.Errorf("thread %d, operation %d: %w", th, i, err))
					return
				}
				d := max(time.Since(s), time.Nanosecond)
				lat[i] = d
				cum[th] += d
				done[th]++
			}
		}()
	}
	wg.Wait()
	st := stats{elapsed: time.Since(start), latency: lat}
	for th := range cum {
		st.ops += done[th]
		st.cumulative += cum[th]
	}
	if err := context.Cause(ctx); err != nil && ctx.Err() != nil {
		return st, err
	}
	return st, nil
}

// clean removes the op's directory.
func (r *opRun) clean(ctx context.Context) error {
	var resp hdfs.DeleteResponseProto
	err := r.tg.admin.Call(ctx, "delete", &hdfs.DeleteRequestProto{Src: proto.String(r.base), Recursive: proto.Bool(true)}, &resp)
	if err != nil {
		return fmt.Errorf("removing %s: %w", r.base, err)
	}
	return nil
}

// prepareFiles creates (and completes) the op's files, untimed.
func (r *opRun) prepareFiles(ctx context.Context) error {
	_, err := r.tg.timed(ctx, r.opts.Files, func(ctx context.Context, c *ipc.Client, th, i int) error {
		return createFile(ctx, c, r.paths[i], clientName(OpCreate, th), true)
	})
	return err
}

func clientName(op string, thread int) string { return fmt.Sprintf("%s-client-%d", op, thread) }

// createFile creates src without blocks (CREATE|OVERWRITE, parents made) and,
// when complete is set, closes it.
func createFile(ctx context.Context, c *ipc.Client, src, client string, complete bool) error {
	var cr hdfs.CreateResponseProto
	err := c.Call(ctx, "create", &hdfs.CreateRequestProto{
		Src:          proto.String(src),
		Masked:       &hdfs.FsPermissionProto{Perm: proto.Uint32(0o644)},
		ClientName:   proto.String(client),
		CreateFlag:   proto.Uint32(0x01 | 0x02),
		CreateParent: proto.Bool(true),
		Replication:  proto.Uint32(3),
		BlockSize:    proto.Uint64(blockSize),
	}, &cr)
	if err != nil || !complete {
		return err
	}
	return completeFile(ctx, c, src, client, cr.GetFs().GetFileId())
}

func completeFile(ctx context.Context, c *ipc.Client, src, client string, fileID uint64) error {
	for {
		var resp hdfs.CompleteResponseProto
		err := c.Call(ctx, "complete", &hdfs.CompleteRequestProto{
			Src: proto.String(src), ClientName: proto.String(client), FileId: proto.Uint64(fileID),
		}, &resp)
		if err != nil || resp.GetResult() {
			return err
		}
		// A file without blocks completes at once; false means the last
		// block is not yet minimally replicated, so ask again.
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

func (r *opRun) create(ctx context.Context, c *ipc.Client, th, i int) error {
	return createFile(ctx, c, r.paths[i], clientName(r.name, th), r.opts.Close)
}

func (r *opRun) mkdirs(ctx context.Context, c *ipc.Client, th, i int) error {
	return mkdir(ctx, c, r.paths[i])
}

// mkdir makes src and its missing parents.
func mkdir(ctx context.Context, c *ipc.Client, src string) error {
	var resp hdfs.MkdirsResponseProto
	return c.Call(ctx, "mkdirs", &hdfs.MkdirsRequestProto{
		Src:          proto.String(src),
		Masked:       &hdfs.FsPermissionProto{Perm: proto.Uint32(0o755)},
		CreateParent: proto.Bool(true),
	}, &resp)
}

func (r *opRun) fileStatus(ctx context.Context, c *ipc.Client, th, i int) error {
	return statFile(ctx, c, r.paths[i])
}

// statFile is getFileInfo of src, which must exist.
func statFile(ctx context.Context, c *ipc.Client, src string) error {
	var resp hdfs.GetFileInfoResponseProto
	if err := c.Call(ctx, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(src)}, &resp); err != nil {
		return err
	}
	if resp.Fs == nil {
		return fmt.Errorf("%w: getFileInfo %s: no such file", ErrCheck, src)
	}
	return nil
}

// probeBlockLocations asks for the blocks of a path that does not exist: a
// NameNode that serves getBlockLocations says FileNotFound.
func (r *opRun) probeBlockLocations(ctx context.Context) error {
	var resp hdfs.GetBlockLocationsResponseProto
	err := r.tg.admin.Call(ctx, "getBlockLocations", &hdfs.GetBlockLocationsRequestProto{
		Src: proto.String(r.base + "/probe-does-not-exist"), Offset: proto.Uint64(0), Length: proto.Uint64(blockSize),
	}, &resp)
	if errors.Is(err, errors.ErrUnsupported) {
		return &skipError{msg: "open: getBlockLocations not supported by this NameNode", cause: err}
	}
	if errors.Is(err, os.ErrNotExist) || err == nil {
		return nil
	}
	return fmt.Errorf("getBlockLocations probe: %w", err)
}

// open is what a client's open does at the NameNode: getFileInfo, then
// getBlockLocations of the first block.
func (r *opRun) open(ctx context.Context, c *ipc.Client, th, i int) error {
	if err := r.fileStatus(ctx, c, th, i); err != nil {
		return err
	}
	var resp hdfs.GetBlockLocationsResponseProto
	return c.Call(ctx, "getBlockLocations", &hdfs.GetBlockLocationsRequestProto{
		Src: proto.String(r.paths[i]), Offset: proto.Uint64(0), Length: proto.Uint64(blockSize),
	}, &resp)
}

func (r *opRun) delete(ctx context.Context, c *ipc.Client, th, i int) error {
	var resp hdfs.DeleteResponseProto
	src := r.paths[i]
	if err := c.Call(ctx, "delete", &hdfs.DeleteRequestProto{Src: proto.String(src), Recursive: proto.Bool(false)}, &resp); err != nil {
		return err
	}
	if !resp.GetResult() {
		return fmt.Errorf("%w: delete %s returned false", ErrCheck, src)
	}
	return nil
}

func (r *opRun) rename(ctx context.Context, c *ipc.Client, th, i int) error {
	var resp hdfs.RenameResponseProto
	src := r.paths[i]
	if err := c.Call(ctx, "rename", &hdfs.RenameRequestProto{Src: proto.String(src), Dst: proto.String(r.dsts[i])}, &resp); err != nil {
		return err
	}
	if !resp.GetResult() {
		return fmt.Errorf("%w: rename %s returned false", ErrCheck, src)
	}
	return nil
}

// isRead says whether mixed operation i is a read: ReadPercent of the
// operations, spread evenly and the same in every run.
func (r *opRun) isRead(i int) bool {
	return int(uint64(i)*0x9e3779b97f4a7c15>>32%100) < r.opts.ReadPercent
}

// mixed is a getFileInfo of prepared file i or a create of a new file
// beside it, as isRead decides.
func (r *opRun) mixed(ctx context.Context, c *ipc.Client, th, i int) error {
	if r.isRead(i) {
		return r.fileStatus(ctx, c, th, i)
	}
	return createFile(ctx, c, r.news[i], clientName(r.name, th), false)
}

// listing lists leaf directory i mod the number of leaf directories: each
// call returns up to FilesPerDir entries.
func (r *opRun) listing(ctx context.Context, c *ipc.Client, th, i int) error {
	var resp hdfs.GetListingResponseProto
	d := r.dirs[i%len(r.dirs)]
	if err := c.Call(ctx, "getListing", &hdfs.GetListingRequestProto{
		Src: proto.String(d), StartAfter: []byte{}, NeedLocation: proto.Bool(false),
	}, &resp); err != nil {
		return err
	}
	if resp.DirList == nil || len(resp.DirList.PartialListing) == 0 {
		return fmt.Errorf("%w: getListing %s: empty", ErrCheck, d)
	}
	return nil
}

// setSafeMode runs a safe mode action and returns whether safe mode is on.
func setSafeMode(ctx context.Context, c *ipc.Client, a hdfs.SafeModeActionProto) (bool, error) {
	var resp hdfs.SetSafeModeResponseProto
	err := c.Call(ctx, "setSafeMode", &hdfs.SetSafeModeRequestProto{Action: a.Enum()}, &resp)
	return resp.GetResult(), err
}

// saveNamespace is `hdfs dfsadmin -safemode enter; -saveNamespace; -safemode
// leave`.
func saveNamespace(ctx context.Context, c *ipc.Client) error {
	_, err := saveNamespaceTimed(ctx, c, nil)
	return err
}

// saveTimes are the parts of saveNamespaceTimed.
type saveTimes struct{ enter, save, leave time.Duration }

func (s saveTimes) String() string {
	return fmt.Sprintf("safe mode enter %d ms, saveNamespace %d ms, leave %d ms",
		s.enter.Milliseconds(), s.save.Milliseconds(), s.leave.Milliseconds())
}

// saveNamespaceTimed enters safe mode, saves the namespace and leaves safe
// mode, as an administrator does before a planned restart, and times each;
// beforeLeave, when set, is called before the last step.
func saveNamespaceTimed(ctx context.Context, c *ipc.Client, beforeLeave func()) (saveTimes, error) {
	var st saveTimes
	start := time.Now()
	if _, err := setSafeMode(ctx, c, hdfs.SafeModeActionProto_SAFEMODE_ENTER); err != nil {
		return st, fmt.Errorf("safemode enter: %w", err)
	}
	st.enter = time.Since(start)
	start = time.Now()
	var resp hdfs.SaveNamespaceResponseProto
	if err := c.Call(ctx, "saveNamespace", &hdfs.SaveNamespaceRequestProto{}, &resp); err != nil {
		return st, fmt.Errorf("saveNamespace: %w", err)
	}
	st.save = time.Since(start)
	if beforeLeave != nil {
		beforeLeave()
	}
	start = time.Now()
	if _, err := setSafeMode(ctx, c, hdfs.SafeModeActionProto_SAFEMODE_LEAVE); err != nil {
		return st, fmt.Errorf("safemode leave: %w", err)
	}
	st.leave = time.Since(start)
	return st, nil
}

func listenLoopback() (net.Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench: listen: %w", err)
	}
	return l, nil
}
