// Package fsshell is `hdfs dfs`: Hadoop's FsShell command line over the
// public client package, with Hadoop's syntax, messages, output formats and
// exit statuses, so scripts written for `hdfs dfs` keep working.
//
// Caller: internal/cli wires the dfs subcommand to Run, after building the
// FileSystem with DialFromConf from the loaded configuration.
//
// Concurrency: Run executes one command line and returns; it keeps no state
// between calls and may be called concurrently with different Envs. The
// goroutines of the client's readers and writers it uses are stopped
// before Run returns.
//
// # Commands
//
// Supported: -ls [-C] [-d] [-h] [-q] [-R] [-t] [-S] [-r] [-u] [-e], -lsr,
// -mkdir [-p], -rm [-f] [-r|-R] [-skipTrash] [-safely] (with the trash),
// -expunge [-immediate], -rmr, -rmdir [--ignore-fail-on-non-empty], -mv,
// -stat [format], -chmod [-R], -chown [-R], -chgrp [-R], -touchz,
// -touch [-a] [-m] [-c] [-t TIMESTAMP],
// -count [-q] [-h] [-v] [-t [TYPES]] [-u] [-x] [-e], -du [-s] [-h] [-v] [-x],
// -dus, -df [-h], -test -d|-e|-f|-s|-w|-r|-z, -setrep [-R] [-w] N,
// -setfattr {-n name [-v value] | -x name},
// -getfattr [-R] {-n name | -d} [-e text|hex|base64], -setfacl [-R]
// {-b|-k|-m|-x|--set}, -getfacl [-R],
// -find PATH... [-name P | -iname P | -print | -print0 | -a]..., -concat,
// -help, -usage, and the data commands: -put/-copyFromLocal [-f] [-p]
// [-t N] [-q N] (stdin with "-"), -moveFromLocal, -get/-copyToLocal [-f]
// [-p], -getmerge [-nl] [-skip-empty-file], -cat, -text (gzip is
// decompressed), -head, -tail [-f] (these two take their argument as one
// path, unglobbed, as Hadoop's do), -appendToFile (stdin with "-"),
// -checksum [-v], -cp [-f] [-p], -truncate [-w]. The others (taking
// snapshots, -moveToLocal) answer "<cmd>: not supported yet" with status 1.
//
// Every command takes file: URIs too: each path is resolved on its own
// file system, HDFS or the local one (Hadoop's LocalFileSystem without
// checksum files), both behind the fileSystem interface. With
// Env.LocalDefault (fs.defaultFS file:///) paths without a scheme are
// local and no HDFS client is needed.
//
// Copies into HDFS (-put, -cp) write <target>._COPYING_ and rename it to
// the target when complete, as Hadoop does; -get does the same locally.
// put, get and cp draw a progress bar on stderr for files of 64 MiB and
// more, only when stdout is a terminal. -checksum prints, tab-separated,
// the path, the algorithm and the checksum bytes in hex:
//
//	/d/b.txt	MD5-of-0MD5-of-512CRC32C	00000200000000000000000027c076e4987344253650d3335a5d08ce
//
// -setrep -w polls the block locations every 10 s (Env.PollInterval)
// printing "Waiting for <path> ...", a dot per round and " done";
// -truncate -w polls the length every second; -tail -f every second until
// the context ends.
//
// Paths may be absolute, relative to /user/<user>, or hdfs://host:port/...
// URIs of the configured file system. Arguments with * ? [..] {a,b} are
// expanded on the client by listing directories, component by component,
// and shown in the form they were typed (URI, absolute or relative).
//
// # Messages and exit status
//
// Errors go to stderr as "<cmd>: <message>", with Hadoop's path texts:
//
//	ls: `/nope': No such file or directory
//	mkdir: `/a': File exists
//	rm: `/d': Is a directory
//
// and, for exceptions from the NameNode, the first line of the exception's
// message. The status is 0, or 1 when any path failed (or a -test was
// false). A command-line error prints "-<cmd>: <why>" and the usage line
// and gives 255, Hadoop's -1.
//
// # Decisions where hdfsgo differs
//
//   - -rm prints "Moved: '<uri>' to trash at: <uri of .Trash/Current>" and
//     -expunge "Created trash checkpoint: ..." and "Deleted trash
//     checkpoint: ..." on stdout, where Hadoop logs them; checkpoint names
//     use Env.TZ.
//   - -put, -get and -cp do not take -t/-q (thread count and queue size);
//     -p keeps times and permissions, not owners.
//   - -tail does not take -s.
//   - -touchz on an existing empty file sets its times to now (Hadoop
//     re-creates it).
//   - -mv uses rename2 without overwrite and checks the target first: an
//     existing target is "File exists".
//   - Usage lines say "hdfs dfs" where Hadoop says "hadoop fs".
//
// # Output formats
//
// -ls (widths grow over one run; minimum 3 for replication, 10 for size):
//
//	Found 2 items
//	drwxr-xr-x   - alice supergroup          0 2026-12-01 20:00 /d/sub
//	-rw-r--r--   3 alice supergroup       1234 2026-12-01 20:00 /d/f
//
// -count columns are right-aligned to fixed widths, each followed by one
// space, then the path (the header row of -v uses the same widths):
//
//	-q/-u:  QUOTA 12, REM_QUOTA 15, SPACE_QUOTA 15, REM_SPACE_QUOTA 15
//	always: DIR_COUNT 12, FILE_COUNT 12, CONTENT_SIZE 18 (not with -u)
//
// -du and -df are tables with two spaces between columns; -df right-aligns
// the numbers. -h sizes use binary prefixes: 1023, "1 K", "1.5 K", "128 M".
//
// Example:
//
//	fsys, err := fsshell.DialFromConf(c, "", os.Stderr)
//	if err != nil {
//		return err
//	}
//	defer fsys.Close()
//	status := fsshell.Run(ctx, fsshell.Env{Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin,
//		Now: time.Now, TZ: time.Local}, fsys, []string{"-ls", "-R", "/data"})
package fsshell
