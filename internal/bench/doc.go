// Package bench owns hdfsgo's benchmarks of a running system: today the
// NameNode's (`hdfs bench namenode`), modelled on Hadoop's
// NNThroughputBenchmark. The command line lives in internal/cli, which calls
// RunNameNode; docs/PERFORMANCE.md records the figures and how they were
// taken.
//
// # What an op measures
//
// Every RPC op works under /nnThroughputBenchmark/<op> on a NameNode reached
// over Hadoop RPC (package ipc), either one at Options.Addrs or one started in
// this process on a formatted temporary directory (removed afterwards). An op
// first prepares its namespace, untimed (open, delete, fileStatus, rename and
// listing need Files created and completed files), then Threads goroutines
// share Files calls as evenly as possible, each through its own ipc.Client
// and TCP connection unless SharedConnection is set. It prints, as Hadoop
// does:
//
//	--- create stats ---
//	# operations: 100000          calls made
//	Elapsed Time: 5131 ms         first call sent to last answer received
//	Ops per sec: 19488.3          operations / elapsed time
//	Average Time: 0.819 ms        mean latency of one call
//
// The calls:
//
//	create      create(CREATE|OVERWRITE, createParent), no blocks; with Close
//	            also complete
//	mkdirs      mkdirs(createParent), DirsPerDir directories per directory
//	open        getFileInfo + getBlockLocations, what a client's open asks;
//	            skipped with a clear message when the NameNode answers
//	            getBlockLocations with UnsupportedOperationException
//	delete      delete(recursive=false) of each file
//	fileStatus  getFileInfo of each file
//	rename      rename(f, f+".r")
//	listing     getListing of the leaf directories, round robin
//	stockCreate the stock Go client's (github.com/colinmarc/hdfs) Create
//	            and Close of an empty file, one client per thread:
//	            getFileInfo, create, complete (two logged ops)
//
// Beside every op it prints the user+sys CPU time this process spent in
// the timed phase per operation, and, with CPUPid, that of another process
// (a NameNode started apart and reached with -fs), read from
// /proc/PID/stat, so that client and server CPU are counted apart. With
// Readers, ops that write run that many more threads calling getFileInfo
// on 256 prepared files while the writers run, and print their rate and
// percentiles: what a reader waits while writers create.
//
// Files are laid out FilesPerDir to a directory, directories at most
// FilesPerDir to a directory:
// /nnThroughputBenchmark/create/ThroughputBenchDir0/ThroughputBenchDir3/ThroughputBench13.
//
// Two ops are not RPC throughput: memory builds Files empty files straight
// into a namespace.Tree with the ops the NameNode would log and reports the
// live heap per file (Layout "blocks": files of one block whose replicas
// simulated DataNodes report to a blockmgmt.Manager; "dirs": empty
// directories; MemProfile receives the heap profile); restart fills an
// in-process NameNode over RPC (90 % of the files then saveNamespace, the
// rest only in the edit log), stops it and times namenode.Start until the
// first call is answered, then does the same with everything in the image.
// With Offline, restart writes the NameNode's directory itself instead (an
// image of Files files through fsimage.Save, then a segment of Edits ops),
// which makes ten-million-file namespaces quick to set up.
//
// `hdfs bench scanner` (RunScanner) measures the DataNode's block scanner:
// on one volume of finalized replicas, the rate a scanner verifies at for
// each dfs.block.scanner.volume.bytes.per.second setting (the bytes of the
// replicas whose verification completed, between the first completion
// after a second of warm-up and the last, over that time); then, on an
// in-process cluster of one DataNode, the throughput of a write with no
// scanner and beside a scanner at each setting, restarted per setting on
// the same directories, every setting once per round, the order turned
// around each round.
//
// # Concurrency
//
// RunNameNode is safe to call from several goroutines only with distinct
// Options; the memory and restart figures read the process heap and are
// meaningful only when nothing else runs. Every goroutine it starts ends
// before it returns.
//
// # Example
//
//	err := bench.RunNameNode(ctx, bench.Options{Op: bench.OpCreate, Threads: 16, Files: 100000}, os.Stdout)
package bench
