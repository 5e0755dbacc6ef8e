package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/bench"
	"github.com/hdfsgo/hdfsgo/internal/cli/fsshell"
	"github.com/hdfsgo/hdfsgo/internal/conf"
)

const benchUsage = `Usage: hdfs bench [GENERIC OPTIONS] namenode -op OP [-threads T] [-files N]
                            [-filesPerDir P] [-dirsPerDir P] [-close]
                            [-readPercent R] [-features xattr|acl|snapshot]
                            [-layout files|blocks|dirs] [-replication R]
                            [-offline] [-edits E]
                            [-keepResults] [-sharedConnection] [-logLevel L]
                            [-cpuprofile FILE] [-memprofile FILE]
                            [-cpupid PID] [-fsyncDir DIR] [-readers R]
       hdfs bench [GENERIC OPTIONS] namenode -op blockReport [-reports N]
                            [-datanodes D] [-blocksPerReport B]
                            [-blocksPerFile F] [-legacyReport] [-threads T]
       hdfs bench [GENERIC OPTIONS] namenode -op longOps [-files N]
                            [-blocksPerReport B] [-threads T]
       hdfs bench [GENERIC OPTIONS] io [-write] [-read] [-nrFiles N] [-size S]
                            [-replication R] [-blockSize B] [-concurrency C]
                            [-datanodes N] [-cpupid PID] [-dropcaches]
                            [-protection P,P,...]
       hdfs bench scanner [-rates R,R,...] [-data S] [-replicaSize S]
                            [-window D] [-write S] [-writeRates R,...]
                            [-rounds N]

  Measures a NameNode the way Hadoop's NNThroughputBenchmark does: each op
  prepares its namespace untimed, then T client threads run N calls and the
  throughput, mean latency and the p50, p99 and p99.9 latencies are
  printed, with the CPU time this process used per operation, and, for an
  in-process NameNode, the edit-log fsyncs it did meanwhile. With
  -fs hdfs://host:port (or an
  hdfs:// fs.defaultFS) the NameNode there is measured; otherwise one is
  started in this process on a temporary directory and removed afterwards.

  -op OP              create, mkdirs, open, delete, fileStatus, rename,
                      listing, mixed (getFileInfo of existing files and
                      creates of new ones, see -readPercent), stockCreate
                      (the stock Go client's Create and Close of an empty
                      file per operation), all (the
                      seven before mixed), blockReport and longOps
                      (see below), memory (heap per
                      empty file, no RPC) or restart (start-up time of a
                      NameNode holding N files, in-process only)
  -threads T          client threads, each with its own connection (16)
  -files N            operations; directories for mkdirs (10)
  -filesPerDir P      files per directory (4)
  -dirsPerDir P       directories per directory, for mkdirs (2)
  -close              create: complete each file after creating it
  -readPercent R      mixed: the share of getFileInfo calls, 0..100 (90)
  -features F         memory: give every file one 8-byte user. xattr
                      (xattr) or the same ACL with a named user (acl);
                      or (snapshot) take 20 snapshots of the directory
                      holding the files and report their create time
                      beside a mkdir's and the memory that chmods and
                      deletes after them cost
  -layout L           memory: what to build: empty files (files), files
                      of one block each whose replicas R simulated
                      DataNodes report through the block manager (blocks),
                      or empty directories (dirs); restart -offline:
                      empty files (files) or files of one block (blocks)
  -replication R      memory -layout blocks: replicas per block (3)
  -offline            restart: write the NameNode's directory directly (an
                      image of N files, then a segment of -edits E ops
                      creating more) instead of filling it over RPC; also
                      times the image save and a saveNamespace over RPC
  -edits E            restart -offline: ops logged after the image (1000)
  -keepResults        leave the op's directory under /nnThroughputBenchmark
  -sharedConnection   all threads call over one connection
  -logLevel L         log level of the in-process NameNode (ERROR)
  -cpuprofile FILE    write a CPU profile of the first timed phase (for
                      restart: the first timed start)
  -cpupid PID         also report the CPU time (user+sys, /proc/PID/stat)
                      of process PID, e.g. a NameNode started apart, over
                      each timed phase, in total and per operation
  -fsyncDir DIR       create, stockCreate against -fs: measure the raw
                      fsync rates (append, and writes into preallocated
                      space) of DIR, on the NameNode's disk, just before
  -readers R          for ops that write: R more threads call getFileInfo
                      while the writers run; their rate and p50/p99/p99.9
  -memprofile FILE    memory: write a heap profile taken after the build
                      and a full collection

  blockReport is NNThroughputBenchmark's op: D simulated DataNodes (10)
  register over DatanodeProtocol; files of F blocks (10) are written to them
  (addBlock, then incremental reports from the targets) until each holds
  about B replicas (100; replication min(3, D)); then N full block reports
  (-reports or -files; 10), report i from node i mod D, are timed. It prints
  the per-report latency, replicas reported per second and, in-process, the
  longest hold of the namesystem write lock meanwhile. Reports use the
  blocksBuffers encoding when the NameNode advertises it, or the long list
  with -legacyReport.

  longOps measures what long operations do to other clients: T writer
  threads create files and 4 reader threads call getFileInfo, first while a
  recursive delete of a directory of N files (-files; 10000) and a full
  block report of B replicas (-blocksPerReport; 10000) from one simulated
  DataNode run, then as long again without them. It prints the getFileInfo
  p50/p99/p99.9 and the creates per second of both phases, how long the
  delete and the report took and, in-process, the longest write lock hold.

  io measures the data path the way Hadoop's TestDFSIO does: N files of S
  bytes (default 4 × 128m) written, then read, by C concurrent clients
  (default 1), with replication R (3) and block size B (128m). It prints
  throughput (Σbytes / Σ per-file time), the average per-file rate, the
  aggregate rate and CPU seconds per GiB. Without -fs it starts a minicluster
  of -datanodes N (3) DataNodes in this process; -cpupid reports the CPU use of
  another process (a separate minicluster); -dropcaches empties the page cache
  before reading (root). -protection runs the whole benchmark once per data
  transfer protection listed (none, authentication, integrity, privacy,
  privacy+aes, encrypt; "all" for every one), each on a fresh in-process
  cluster with block tokens and TCP only, and ends with a table of MB/s and
  CPU milliseconds per MiB beside the first one listed.

  scanner measures the DataNode's block scanner: on one volume holding -data
  bytes (512m) in replicas of -replicaSize (4m), the rate it verifies at for
  each dfs.block.scanner.volume.bytes.per.second in -rates (1m,4m,16m,64m,
  256m,0; 0 is no limit), each measured for at least -window (10s) and five
  replicas; then, on an in-process cluster of one DataNode, a -write (1g)
  file written with no scanner and beside a scanner at each of -writeRates
  (1m,0), -rounds (3) times, the order turned around every round.

  Generic options (-fs hdfs://host:port, -D key=value) may come before
  "namenode" or among the options above; -D settings also configure the
  in-process NameNode (e.g. -D dfs.namenode.handler.count=32).
`

// runBench is `hdfs bench`.
func runBench(inv *Invocation) int {
	args := inv.Args
	if len(args) == 0 {
		fmt.Fprint(inv.Env.Stderr, benchUsage)
		return exitUsage
	}
	switch args[0] {
	case "namenode":
		return runBenchNameNode(inv, args[1:])
	case "io":
		return runBenchIO(inv, args[1:])
	case "scanner":
		return runBenchScanner(inv, args[1:])
	case "-help", "--help", "-h":
		fmt.Fprint(inv.Env.Stdout, benchUsage)
		return exitOK
	}
	fmt.Fprintf(inv.Env.Stderr, "hdfs bench: unknown benchmark %q\n", args[0])
	fmt.Fprint(inv.Env.Stderr, benchUsage)
	return exitUsage
}

func runBenchNameNode(inv *Invocation, args []string) int {
	usage := func(format string, a ...any) int {
		fmt.Fprintf(inv.Env.Stderr, "hdfs bench namenode: "+format+"\n", a...)
		fmt.Fprint(inv.Env.Stderr, benchUsage)
		return exitUsage
	}
	opts := bench.Options{ReadPercent: -1}
	level := slog.LevelError
	var profile, memProfile string
	// -fs and -D are generic options, taken before "namenode" by Run; they
	// are accepted among the benchmark's options too.
	var overrides []conf.KeyValue
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, bool) {
			if i+1 >= len(args) {
				return "", false
			}
			i++
			return args[i], true
		}
		number := func(dst *int) bool {
			v, ok := value()
			if !ok {
				return false
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return false
			}
			*dst = n
			return true
		}
		ok := true
		switch a {
		case "-op":
			opts.Op, ok = value()
		case "-threads":
			ok = number(&opts.Threads)
		case "-datanodes":
			ok = number(&opts.Datanodes)
		case "-blocksPerReport":
			ok = number(&opts.BlocksPerReport)
		case "-blocksPerFile":
			ok = number(&opts.BlocksPerFile)
		case "-legacyReport":
			opts.LegacyReport = true
		case "-files", "-dirs", "-reports":
			ok = number(&opts.Files)
		case "-filesPerDir":
			ok = number(&opts.FilesPerDir)
		case "-dirsPerDir":
			ok = number(&opts.DirsPerDir)
		case "-close":
			opts.Close = true
		case "-features":
			opts.Features, ok = value()
		case "-offline":
			opts.Offline = true
		case "-edits":
			ok = number(&opts.Edits)
		case "-layout":
			opts.Layout, ok = value()
		case "-replication":
			ok = number(&opts.Replication)
		case "-memprofile":
			memProfile, ok = value()
		case "-readPercent":
			var v string
			if v, ok = value(); ok {
				n, err := strconv.Atoi(v)
				if ok = err == nil && n >= 0 && n <= 100; ok {
					opts.ReadPercent = n
				} else {
					return usage("-readPercent %s: want a whole number from 0 to 100", v)
				}
			}
		case "-keepResults":
			opts.KeepResults = true
		case "-sharedConnection":
			opts.SharedConnection = true
		case "-logLevel":
			var v string
			if v, ok = value(); ok {
				l, err := parseLevel(v)
				if err != nil {
					return usage("%v", err)
				}
				level = l
			}
		case "-cpuprofile":
			profile, ok = value()
		case "-cpupid":
			ok = number(&opts.CPUPid)
		case "-fsyncDir":
			opts.FsyncDir, ok = value()
		case "-readers":
			ok = number(&opts.Readers)
		case "-fs":
			var v string
			if v, ok = value(); ok {
				overrides = append(overrides, conf.KeyValue{Key: conf.FSDefaultFS, Value: v})
			}
		case "-D":
			var v string
			if v, ok = value(); ok {
				kv, err := conf.ParseKeyValue(v)
				if err != nil {
					return usage("%v", err)
				}
				overrides = append(overrides, kv)
			}
		case "-help", "--help", "-h":
			fmt.Fprint(inv.Env.Stdout, benchUsage)
			return exitOK
		default:
			return usage("unknown option %s", a)
		}
		if !ok {
			return usage("%s needs a value (a positive number for counts)", a)
		}
	}
	if opts.Op == "" {
		return usage("-op is required")
	}

	c := inv.Conf
	if len(overrides) > 0 {
		c = c.With(overrides...)
	}
	opts.Conf = c
	addrs, err := benchTarget(c)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "hdfs bench namenode: %v\n", err)
		return exitFail
	}
	opts.Addrs = addrs
	opts.User = inv.Env.Getenv("HADOOP_USER_NAME")
	opts.Logger = slog.New(slog.NewTextHandler(inv.Env.Stderr, &slog.HandlerOptions{Level: level}))
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			fmt.Fprintf(inv.Env.Stderr, "hdfs bench namenode: %v\n", err)
			return exitFail
		}
		defer f.Close()
		opts.CPUProfile = f
	}
	if memProfile != "" {
		f, err := os.Create(memProfile)
		if err != nil {
			fmt.Fprintf(inv.Env.Stderr, "hdfs bench namenode: %v\n", err)
			return exitFail
		}
		defer f.Close()
		opts.MemProfile = f
	}
	var out io.Writer = inv.Env.Stdout
	if err := bench.RunNameNode(context.Background(), opts, out); err != nil {
		fmt.Fprintf(inv.Env.Stderr, "hdfs bench namenode: %v\n", err)
		return exitFail
	}
	return exitOK
}

// benchTarget is the NameNode addresses of fs.defaultFS when it is an
// hdfs:// URI (every NameNode of the nameservice when its authority names
// one), else nil: measure an in-process NameNode.
func benchTarget(c *conf.Conf) ([]string, error) {
	fs := c.String(conf.FSDefaultFS)
	u, err := url.Parse(strings.TrimSpace(fs))
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", conf.FSDefaultFS, fs, err)
	}
	if !strings.EqualFold(u.Scheme, "hdfs") {
		return nil, nil
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("%s %q names no host", conf.FSDefaultFS, fs)
	}
	if u.Port() == "" {
		for _, ns := range c.Nameservices() {
			if ns != u.Hostname() {
				continue
			}
			all, err := c.NameNodeRPCAddresses()
			if err != nil {
				return nil, err
			}
			var addrs []string
			for _, a := range all {
				if a.Nameservice == ns {
					addrs = append(addrs, a.Address)
				}
			}
			if len(addrs) > 0 {
				return addrs, nil
			}
		}
		return []string{net.JoinHostPort(u.Hostname(), conf.DefaultNameNodeRPCPort)}, nil
	}
	return []string{u.Host}, nil
}

func runBenchIO(inv *Invocation, args []string) int {
	o := bench.IOOptions{Files: 4, Size: 128 << 20, Replication: 3, BlockSize: 128 << 20, Concurrency: 1, Logger: inv.Logger}
	var protections []string
	bad := func(format string, a ...any) int {
		fmt.Fprintf(inv.Env.Stderr, "hdfs bench io: "+format+"\n", a...)
		fmt.Fprint(inv.Env.Stderr, benchUsage)
		return exitUsage
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func() (string, bool) {
			if i+1 >= len(args) {
				return "", false
			}
			i++
			return args[i], true
		}
		switch a {
		case "-fs", "-D":
			// Generic options are also accepted among the io options.
			v, ok := val()
			if !ok {
				return bad("%s needs a value", a)
			}
			kv := conf.KeyValue{Key: conf.FSDefaultFS, Value: v}
			if a == "-D" {
				var err error
				if kv, err = conf.ParseKeyValue(v); err != nil {
					return bad("%v", err)
				}
			}
			inv.Conf = inv.Conf.With(kv)
		case "-write":
			o.Write = true
		case "-read":
			o.Read = true
		case "-dropcaches":
			o.DropCaches = true
		case "-protection":
			v, ok := val()
			if !ok || v == "" {
				return bad("-protection needs a list such as none,privacy")
			}
			if v == "all" {
				protections = bench.ProtectionNames
			} else {
				protections = strings.Split(v, ",")
			}
		case "-nrFiles", "-replication", "-concurrency", "-datanodes", "-cpupid":
			v, ok := val()
			n, err := strconv.Atoi(v)
			if !ok || err != nil || n < 0 {
				return bad("%s needs a number", a)
			}
			switch a {
			case "-nrFiles":
				o.Files = n
			case "-replication":
				o.Replication = n
			case "-concurrency":
				o.Concurrency = n
			case "-datanodes":
				o.DataNodes = n
			case "-cpupid":
				o.CPUPid = n
			}
		case "-size", "-blockSize":
			v, ok := val()
			n, err := conf.ParseSize(strings.TrimSuffix(strings.ToLower(v), "b"))
			if !ok || err != nil || n <= 0 {
				return bad("%s needs a size such as 128m or 1g", a)
			}
			if a == "-size" {
				o.Size = n
			} else {
				o.BlockSize = n
			}
		default:
			return bad("unknown option %s", a)
		}
	}
	if u, err := url.Parse(inv.Conf.String(conf.FSDefaultFS)); err == nil && u.Scheme == "hdfs" && u.Host != "" {
		addrs, _, err := fsshell.NameNodeAddresses(inv.Conf)
		if err != nil {
			return bad("%v", err)
		}
		o.Addrs = addrs
	}
	o.User = inv.Env.Getenv("HADOOP_USER_NAME")
	if o.Addrs != nil {
		var err error
		if o.DomainSocketPath, err = fsshell.DomainSocketPath(inv.Conf); err != nil {
			return bad("%v", err)
		}
	}
	run := bench.RunIO
	if protections != nil {
		run = func(ctx context.Context, o bench.IOOptions, out io.Writer) error {
			return bench.RunIOProtections(ctx, o, protections, out)
		}
	}
	if err := run(context.Background(), o, inv.Env.Stdout); err != nil {
		fmt.Fprintf(inv.Env.Stderr, "hdfs bench io: %v\n", err)
		return exitFail
	}
	return exitOK
}
