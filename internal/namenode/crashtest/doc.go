// Package crashtest holds process-level fault tests of the NameNode: it builds
// the real hdfs binary, runs `hdfs namenode` as a child process on directories
// of its own, drives it over Hadoop RPC from several concurrent clients, and
// then breaks it from outside: kill -9 at random moments, a name directory on
// a tmpfs that runs out of space, bytes appended to or flipped in edit
// segments between runs. After each fault it restarts the NameNode on the
// same directories and compares the namespace with what the clients were told.
//
// The package has no API; everything is in its tests, which are skipped with
// -short. Nobody imports it.
//
// # The workload and its model
//
// Each worker owns one directory /w<i> and issues one call at a time in it:
// mkdirs, create followed by complete, rename2 and delete, with names that are
// never reused (d<k>, f<k>, r<k> for a per-worker counter k). Each call is
// logged before it is sent and marked acknowledged when its success answer
// arrives. Because a worker's calls are sequential and its directory is its
// own, the transaction order of its ops in the edit log is the order of its
// log, and its directory after any crash must equal the model (the result of
// replaying the log in order) after some prefix of the log:
//
//	acked ops       | ops without an answer | not sent
//	[0 ............ lo) [lo ............... hi)
//	                    ^ the state must equal model(prefix L) for one L in [lo, hi]
//
// lo is the first op that has no success answer; hi is the number of ops sent.
// So every acknowledged op's effect is present (unless a later op of the
// same worker, itself present, undid it), an op without an answer either
// happened entirely or not at all, and every path in the namespace is
// explained by an op that was at least sent. A create whose answer was lost is
// either absent or present and under construction; a create that was answered
// whose complete was not is under construction or closed. Directories the
// workload makes are always empty, so a dir with children is unexplained too.
//
// Each test documents the fault it injects and the checks it makes. The tests
// need 2 cores for well under a minute; the failed-disk test needs root (it
// mounts a tmpfs) and skips with a message otherwise. Every test logs its
// seed; CRASHTEST_SEED=<seed> repeats its op and kill choices, and
// CRASHTEST_HDFS=<path> tests that hdfs binary instead of building one:
//
//	go test ./internal/namenode/crashtest/ -run TestKill9 -v
//	CRASHTEST_SEED=42 CRASHTEST_HDFS=/opt/hdfsgo/bin/hdfs go test ./internal/namenode/crashtest/
package crashtest
