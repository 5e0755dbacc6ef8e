package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/minicluster"
)

// shellRig is a running cluster (a NameNode and one DataNode on
// loopback ports, in this process) and `hdfs` command lines against it,
// run through Run as the binary runs them.
type shellRig struct {
	c    *minicluster.Cluster
	uri  string
	user string
}

func newShellRig(t *testing.T, conf ...conf.KeyValue) *shellRig {
	t.Helper()
	c, err := minicluster.Start(context.Background(), minicluster.Options{
		Dir: t.TempDir(), DataNodes: 1, Conf: append(conf, confKV("dfs.replication", "1")),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	name := os.Getenv("HADOOP_USER_NAME")
	if name == "" {
		name = u.Username
	}
	r := &shellRig{c: c, uri: c.URI(), user: name}
	r.ok(t, "", "dfs", "-mkdir", "-p", "/user/"+name)
	return r
}

func confKV(k, v string) conf.KeyValue { return conf.KeyValue{Key: k, Value: v} }

// run runs `hdfs CMD -fs URI ARGS...` with stdin.
func (r *shellRig) run(t *testing.T, stdin string, cmd string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code = Run(e, append([]string{"hdfs", cmd, "-fs", r.uri}, args...))
	return out.String(), errb.String(), code
}

// ok runs a command that must succeed and returns its stdout.
func (r *shellRig) ok(t *testing.T, stdin string, cmd string, args ...string) string {
	t.Helper()
	out, errOut, code := r.run(t, stdin, cmd, args...)
	if code != 0 {
		t.Fatalf("hdfs %s %v: exit %d\n%s%s", cmd, args, code, out, errOut)
	}
	return out
}

// want runs a command and checks its exit status, stdout and stderr.
func (r *shellRig) want(t *testing.T, code int, stdout, stderr string, cmd string, args ...string) {
	t.Helper()
	out, errOut, c := r.run(t, "", cmd, args...)
	if c != code || out != stdout || errOut != stderr {
		t.Fatalf("hdfs %s %v:\n got exit %d stdout %q stderr %q\nwant exit %d stdout %q stderr %q", cmd, args, c, out, errOut, code, stdout, stderr)
	}
}

func (r *shellRig) put(t *testing.T, dst, data string) {
	t.Helper()
	r.ok(t, data, "dfs", "-put", "-", dst)
}

// TestShellFind: -find with -name, -iname, -print, -print0 and -a, and
// its errors, as Hadoop's find prints them.
func TestShellFind(t *testing.T) {
	r := newShellRig(t)
	r.ok(t, "", "dfs", "-mkdir", "-p", "/d/sub")
	for _, f := range []string{"/d/a.txt", "/d/B.TXT", "/d/sub/c.log"} {
		r.put(t, f, "x\n")
	}
	r.want(t, 0, "/d\n/d/B.TXT\n/d/a.txt\n/d/sub\n/d/sub/c.log\n", "", "dfs", "-find", "/d")
	r.want(t, 0, "/d/a.txt\n", "", "dfs", "-find", "/d", "-name", "*.txt")
	r.want(t, 0, "/d/B.TXT\n/d/a.txt\n", "", "dfs", "-find", "/d", "-iname", "*.txt", "-print")
	r.want(t, 0, "/d/sub/c.log\x00", "", "dfs", "-find", "/d", "-name", "c*", "-print0")
	r.want(t, 0, "/d/sub/c.log\n", "", "dfs", "-find", "/d", "-name", "c*", "-a", "-iname", "*.LOG")
	r.want(t, 0, "", "", "dfs", "-find", "/d", "-name", "c*", "-and", "-name", "*.txt")
	// Relative paths stay relative; no path means the working directory.
	r.put(t, "rel.txt", "y")
	r.want(t, 0, "rel.txt\n", "", "dfs", "-find", "-name", "rel*")
	r.want(t, 1, "", "find: Unexpected argument: -type\n", "dfs", "-find", "/d", "-type", "f")
	r.want(t, 1, "", "find: `/nope': No such file or directory\n", "dfs", "-find", "/nope")
}

// TestShellConcat: -concat joins files as the NameNode's concat does and
// answers Hadoop's messages for bad arguments.
func TestShellConcat(t *testing.T) {
	r := newShellRig(t)
	r.ok(t, "", "dfs", "-mkdir", "/c")
	for _, f := range []string{"t", "s1", "s2"} {
		r.put(t, "/c/"+f, "data-"+f+"\n")
	}
	r.want(t, 0, "", "", "dfs", "-concat", "/c/t", "/c/s1", "/c/s2")
	r.want(t, 0, "data-t\ndata-s1\ndata-s2\n", "", "dfs", "-cat", "/c/t")
	r.want(t, 1, "", "", "dfs", "-test", "-e", "/c/s1")
	r.want(t, 1, "", "concat: The number of source paths is less than 2. <target path> <src path> <src path> ...\n", "dfs", "-concat", "/c/t", "/c/t")
	r.want(t, 1, "", "concat: Target path /nope does not exist or is not file.\n", "dfs", "-concat", "/nope", "/c/t", "/c/t")
	r.ok(t, "", "dfs", "-mkdir", "/c/dir")
	r.want(t, 1, "", "concat: /c/dir does not exist or is not file.\n", "dfs", "-concat", "/c/t", "/c/dir", "/c/t")
}

// TestShellCountLsDuChecksumOptions: -count -e -t -u -x, -ls -e -q, -du -x
// and -checksum -v print Hadoop's columns.
func TestShellCountLsDuChecksumOptions(t *testing.T) {
	r := newShellRig(t)
	r.ok(t, "", "dfs", "-mkdir", "/d")
	r.put(t, "/d/f", "hello\n")
	// ContentSummary's columns: %12s %12s %18s, then the policy and a space.
	r.want(t, 0,
		"   DIR_COUNT   FILE_COUNT       CONTENT_SIZE ERASURECODING_POLICY PATHNAME\n"+
			"           1            1                  6 EC: /d\n"+
			"           0            1                  6 Replicated /d/f\n",
		"", "dfs", "-count", "-v", "-e", "/d", "/d/f")
	r.want(t, 0,
		"q or u option is given, the -x option is ignored.\n"+
			"        none             inf            none             inf            1            1                  6 /d\n",
		"", "dfs", "-count", "-q", "-x", "/d")
	r.want(t, 0, "           1            1                  6 /d\n", "", "dfs", "-count", "-x", "/d")
	// Per storage type (%13s %17s per type), all types or those named.
	all := ""
	hdr := ""
	for _, ty := range []string{"RAM_DISK", "NVDIMM", "SSD", "DISK", "ARCHIVE"} {
		hdr += fmt.Sprintf("%13s %17s ", ty+"_QUOTA", "REM_"+ty+"_QUOTA")
		all += fmt.Sprintf("%13s %17s ", "none", "inf")
	}
	r.want(t, 0, hdr+"PATHNAME\n"+all+"/d\n", "", "dfs", "-count", "-q", "-t", "-v", "/d")
	r.want(t, 0, fmt.Sprintf("%13s %17s %13s %17s /d\n", "none", "inf", "none", "inf"), "", "dfs", "-count", "-u", "-t", "ssd,DISK", "/d")
	_, errOut, code := r.run(t, "", "dfs", "-count", "-q", "-t", "FLOPPY", "/d")
	if code != 255 || !strings.HasPrefix(errOut, "-count: No enum constant org.apache.hadoop.fs.StorageType.FLOPPY\n") {
		t.Fatalf("-count -t FLOPPY: %d %q", code, errOut)
	}

	// -ls -e: the policy after the replication column.
	out := r.ok(t, "", "dfs", "-ls", "-e", "/d")
	if !regexp.MustCompile(`^Found 1 items\n-rw-r--r--   \d  Replicated \S+ \S+ +6 \d{4}-\d\d-\d\d \d\d:\d\d /d/f\n$`).MatchString(out) {
		t.Fatalf("-ls -e:\n%s", out)
	}
	r.put(t, "/d/bad\x01name", "")
	out = r.ok(t, "", "dfs", "-ls", "-q", "/d")
	if !strings.Contains(out, " /d/bad?name\n") {
		t.Fatalf("-ls -q:\n%q", out)
	}

	if a, b := r.ok(t, "", "dfs", "-du", "-x", "/d"), r.ok(t, "", "dfs", "-du", "/d"); a != b || !strings.Contains(a, "/d/f") {
		t.Fatalf("-du -x %q, -du %q", a, b)
	}

	out = r.ok(t, "", "dfs", "-checksum", "-v", "/d/f")
	if !regexp.MustCompile(`^/d/f\tMD5-of-0MD5-of-512CRC32C\t[0-9a-f]+\tBlockSize=134217728\n$`).MatchString(out) {
		t.Fatalf("-checksum -v: %q", out)
	}
}

// TestShellRmSafelyAndPutThreads: -rm -safely asks before deleting more
// than hadoop.shell.safely.delete.limit.num.files files; -put -t copies
// several sources at once.
func TestShellRmSafelyAndPutThreads(t *testing.T) {
	r := newShellRig(t)
	local := t.TempDir()
	var srcs []string
	for i := range 5 {
		p := filepath.Join(local, fmt.Sprintf("f%d", i))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, p)
	}
	r.ok(t, "", "dfs", "-mkdir", "/p")
	r.ok(t, "", "dfs", append(append([]string{"-put", "-t", "3"}, srcs...), "/p")...)
	r.want(t, 0, "file 0\nfile 1\nfile 2\nfile 3\nfile 4\n", "", "dfs", "-cat", "/p/*")
	_, errOut, code := r.run(t, "", "dfs", "-put", "-t", "x", srcs[0], "/p/g")
	if code != 255 || !strings.HasPrefix(errOut, "-put: -t x: not a number\n") {
		t.Fatalf("-put -t x: %d %q", code, errOut)
	}
	// -l writes one replica; -d writes the destination itself, and like
	// any put refuses an existing one without -f.
	r.ok(t, "", "dfs", "-put", "-l", "-d", srcs[1], "/p/lazy")
	r.want(t, 0, "1 lazy\n", "", "dfs", "-stat", "%r %n", "/p/lazy")
	r.want(t, 0, "3 f0\n", "", "dfs", "-stat", "%r %n", "/p/f0")
	r.want(t, 0, "file 1\n", "", "dfs", "-cat", "/p/lazy")
	_, errOut, code = r.run(t, "", "dfs", "-put", "-d", srcs[2], "/p/lazy")
	if code != 1 || errOut != "put: `/p/lazy': File exists\n" {
		t.Fatalf("-put -d onto an existing file: %d %q", code, errOut)
	}
	r.ok(t, "", "dfs", "-put", "-d", "-f", srcs[2], "/p/lazy")
	r.want(t, 0, "file 2\n", "", "dfs", "-cat", "/p/lazy")
	r.ok(t, "", "dfs", "-rm", "-skipTrash", "/p/lazy")

	limit := []string{"-D", "hadoop.shell.safely.delete.limit.num.files=3"}
	out, errOut, code := r.run(t, "n\n", "dfs", append(limit, "-rm", "-r", "-safely", "/p")...)
	if code != 0 || out != "" || errOut != "Proceed deleting 5 files? (Y or N) Delete aborted at user request.\n\n" {
		t.Fatalf("-rm -safely, answer n: %d %q %q", code, out, errOut)
	}
	r.ok(t, "", "dfs", "-test", "-d", "/p")
	out, errOut, code = r.run(t, "y\n", "dfs", append(limit, "-rm", "-r", "-safely", "/p")...)
	if code != 0 || out != "Deleted /p\n" || errOut != "Proceed deleting 5 files? (Y or N) " {
		t.Fatalf("-rm -safely, answer y: %d %q %q", code, out, errOut)
	}
	// Under the limit nothing is asked.
	r.ok(t, "", "dfs", "-mkdir", "/q")
	r.put(t, "/q/one", "1")
	r.want(t, 0, "Deleted /q\n", "", "dfs", append(limit, "-rm", "-r", "-safely", "/q")...)
}

// TestShellGlobsAndLiteralPaths: an escaped wildcard is a literal
// character; -tail and -head take their argument as one path.
func TestShellGlobsAndLiteralPaths(t *testing.T) {
	r := newShellRig(t)
	r.ok(t, "", "dfs", "-mkdir", "/g")
	r.ok(t, "", "dfs", "-touchz", `/g/x\*y`)
	r.put(t, "/g/xay", "other\n")
	r.want(t, 0, "/g/x*y\n", "", "dfs", "-ls", "-C", `/g/x\*y`)
	r.want(t, 0, "/g/x*y\n/g/xay\n", "", "dfs", "-ls", "-C", "/g/x*y")
	r.ok(t, "", "dfs", "-appendToFile", "-", "/g/x*y")
	r.want(t, 0, "", "", "dfs", "-tail", "/g/x*y") // the file x*y, empty
	r.want(t, 1, "", "tail: `/g/x?y': No such file or directory\n", "dfs", "-tail", "/g/x?y")
	r.want(t, 1, "", "head: `/g/*': No such file or directory\n", "dfs", "-head", "/g/*")
	r.want(t, 0, "other\n", "", "dfs", "-cat", "hdfs:///g/xay")
}

// TestShellHadoopMessages: a missing parent names the fully qualified
// path; a refusal in safe mode names the operation.
func TestShellHadoopMessages(t *testing.T) {
	r := newShellRig(t)
	r.ok(t, "", "dfs", "-touchz", "file1")
	home := r.uri + "/user/" + r.user
	r.want(t, 1, "", "mv: `nodir/file2': No such file or directory: `"+home+"/nodir/file2'\n", "dfs", "-mv", "file1", "nodir/file2")
	r.want(t, 1, "", "cp: `nodir/file2': No such file or directory: `"+home+"/nodir/file2'\n", "dfs", "-cp", "file1", "nodir/file2")
	r.want(t, 1, "", "touchz: `nodir/f': No such file or directory: `"+home+"/nodir/f'\n", "dfs", "-touchz", "nodir/f")
	r.want(t, 1, "", "mkdir: `mkdir failed for path: nodir/z. Item parent path not found: nodir.': No such file or directory\n", "dfs", "-mkdir", "nodir/z")

	r.want(t, 0, "Safe mode is ON\n", "", "dfsadmin", "-safemode", "enter")
	p := "/user/" + r.user + "/file1"
	r.want(t, 1, "", "chmod: changing permissions of 'file1': Cannot set permission for "+p+". Name node is in safe mode.\n", "dfs", "-chmod", "600", "file1")
	r.want(t, 1, "", "mkdir: Cannot create directory /q. Name node is in safe mode.\n", "dfs", "-mkdir", "/q")
	r.want(t, 1, "", "rm: Cannot delete "+p+". Name node is in safe mode.\n", "dfs", "-rm", "-skipTrash", "file1")
	r.want(t, 1, "", "setrep: Cannot set replication for "+p+". Name node is in safe mode.\n", "dfs", "-setrep", "2", "file1")
	r.want(t, 0, "Safe mode is OFF\n", "", "dfsadmin", "-safemode", "leave")
}

// TestShellHelpAndConnectRetries: a lone -help prints every command's
// help; a refused connection is retried with Hadoop's lines.
func TestShellHelpAndConnectRetries(t *testing.T) {
	out, _, code := run(t, nil, "dfs", "-help")
	for _, want := range []string{"Usage: hdfs dfs [generic options]\n", "-find <path> ... <expression> ... :", "-concat <target path> <src path> <src path> ... :",
		"-count [-q] [-h] [-v] [-t [<storage type>]] [-u] [-x] [-e] [-s] <path> ... :", "-rm [-f] [-r|-R] [-skipTrash] [-safely] <src> ... :"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("dfs -help: code %d, no %q in\n%s", code, want, out)
		}
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, errOut, code := run(t, nil, "dfs", "-fs", "hdfs://"+addr, "-D", "ipc.client.connect.max.retries=2",
		"-D", "ipc.client.connect.retry.interval=10", "-ls", "/")
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	if code != 1 || len(lines) != 3 {
		t.Fatalf("code %d, stderr:\n%s", code, errOut)
	}
	for i := range 2 {
		want := fmt.Sprintf(" INFO ipc.Client: Retrying connect to server: 127.0.0.1/%s. Already tried %d time(s); retry policy is RetryUpToMaximumCountWithFixedSleep(maxRetries=2, sleepTime=10 MILLISECONDS)", addr, i)
		if !strings.HasSuffix(lines[i], want) {
			t.Fatalf("line %d: %q", i, lines[i])
		}
	}
	if !strings.HasPrefix(lines[2], "ls: Call From ") || !strings.HasSuffix(lines[2], " to "+addr+" failed on connection exception: java.net.ConnectException: Connection refused; For more details see:  http://wiki.apache.org/hadoop/ConnectionRefused") {
		t.Fatalf("last line %q", lines[2])
	}
}

// TestShellFileURIsOnTheLocalSide: the copy commands take file: URIs
// (file:/x, file:///x) where they take local paths.
func TestShellFileURIsOnTheLocalSide(t *testing.T) {
	r := newShellRig(t)
	local := t.TempDir()
	a := filepath.Join(local, "a")
	if err := os.WriteFile(a, []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.want(t, 0, "", "", "dfs", "-put", "file:"+a, "hdfs:///b")
	r.want(t, 0, "", "", "dfs", "-cp", "file://"+a, "/c")
	r.want(t, 0, "", "", "dfs", "-appendToFile", "file:"+a, "/c")
	r.want(t, 0, "alpha\n", "", "dfs", "-cat", "/b")
	r.want(t, 0, "alpha\nalpha\n", "", "dfs", "-cat", "/c")
	r.want(t, 0, "", "", "dfs", "-get", "/b", "file:"+filepath.Join(local, "y"))
	r.want(t, 0, "", "", "dfs", "-cp", "/c", "file://"+filepath.Join(local, "z"))
	r.ok(t, "", "dfs", "-mkdir", "/m")
	r.put(t, "/m/1", "one\n")
	r.put(t, "/m/2", "two\n")
	r.want(t, 0, "", "", "dfs", "-getmerge", "/m", "file:"+filepath.Join(local, "out"))
	for name, want := range map[string]string{"y": "alpha\n", "z": "alpha\nalpha\n", "out": "one\ntwo\n"} {
		b, err := os.ReadFile(filepath.Join(local, name))
		if err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", name, b, err, want)
		}
	}
	// Sources on both file systems: the target must be a directory.
	r.want(t, 1, "", "cp: `/d': No such file or directory\n", "dfs", "-cp", "file:"+a, "/b", "/d")
	r.ok(t, "", "dfs", "-mkdir", "/d")
	r.want(t, 0, "", "", "dfs", "-cp", "file:"+a, "/b", "/d")
	r.want(t, 0, "alpha\nalpha\n", "", "dfs", "-cat", "/d/a", "/d/b")
}
