package fsshell

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/client/clienttest"
)

// dataEnv is a cluster with /user/alice, /d/a.txt ("hello\n"), /d/b.txt
// ("bar\n"), /d/empty (0 bytes), /d/sub/ and a local directory with
// l1.txt ("local one\n") and l2.txt ("local two\n").
type dataEnv struct {
	c     *clienttest.Cluster
	fs    *client.FileSystem
	local string
}

func newDataEnv(t *testing.T) *dataEnv {
	t.Helper()
	c, err := clienttest.Start(clienttest.Config{DataNodes: 2, Replication: 1, BlockSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := client.New(client.Options{Addresses: []string{c.Addr()}, User: "alice", Umask: 0o022})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		fsys.Close()
		c.Close()
	})
	c.Mkdir("/user/alice", "alice")
	c.Mkdir("/d/sub", "alice")
	ctx := context.Background()
	for name, data := range map[string]string{"/d/a.txt": "hello\n", "/d/b.txt": "bar\n", "/d/empty": ""} {
		if err := fsys.WriteFile(ctx, name, []byte(data), false); err != nil {
			t.Fatal(err)
		}
	}
	local := t.TempDir()
	for name, data := range map[string]string{"l1.txt": "local one\n", "l2.txt": "local two\n"} {
		if err := os.WriteFile(filepath.Join(local, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &dataEnv{c: c, fs: fsys, local: local}
}

func (e *dataEnv) run(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(stdin), PollInterval: time.Millisecond,
		Now: func() time.Time { return now }, TZ: time.UTC}
	code = Run(context.Background(), env, e.fs, args)
	return out.String(), errb.String(), code
}

func (e *dataEnv) read(t *testing.T, p string) string {
	t.Helper()
	b, err := e.fs.ReadFile(context.Background(), p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return string(b)
}

type dataCase struct {
	name   string
	stdin  string
	args   func(e *dataEnv) []string
	stdout func(e *dataEnv) string
	stderr func(e *dataEnv) string
	code   int
	check  func(t *testing.T, e *dataEnv)
}

func str(s string) func(*dataEnv) string { return func(*dataEnv) string { return s } }

func argv(a ...string) func(*dataEnv) []string { return func(*dataEnv) []string { return a } }

func runDataCases(t *testing.T, cases []dataCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newDataEnv(t)
			out, errs, code := e.run(t, tc.stdin, tc.args(e)...)
			wantOut, wantErr := "", ""
			if tc.stdout != nil {
				wantOut = tc.stdout(e)
			}
			if tc.stderr != nil {
				wantErr = tc.stderr(e)
			}
			if out != wantOut {
				t.Errorf("stdout:\n%q\nwant:\n%q", out, wantOut)
			}
			if errs != wantErr {
				t.Errorf("stderr:\n%q\nwant:\n%q", errs, wantErr)
			}
			if code != tc.code {
				t.Errorf("exit status %d, want %d", code, tc.code)
			}
			if tc.check != nil {
				tc.check(t, e)
			}
		})
	}
}

func content(p, want string) func(t *testing.T, e *dataEnv) {
	return func(t *testing.T, e *dataEnv) {
		t.Helper()
		if got := e.read(t, p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
}

func TestCatHeadTailText(t *testing.T) {
	long := strings.Repeat("0123456789", 300)
	runDataCases(t, []dataCase{
		{name: "cat", args: argv("-cat", "/d/a.txt", "/d/b.txt"), stdout: str("hello\nbar\n")},
		{name: "cat glob", args: argv("-cat", "/d/*.txt"), stdout: str("hello\nbar\n")},
		{name: "cat dir", args: argv("-cat", "/d"), stderr: str("cat: `/d': Is a directory\n"), code: 1},
		{name: "cat missing", args: argv("-cat", "/nope"), stderr: str("cat: `/nope': No such file or directory\n"), code: 1},
		{name: "text", args: argv("-text", "/d/a.txt", "d.txt"), stdout: str("hello\n"),
			stderr: str("text: `d.txt': No such file or directory\n"), code: 1},
		{name: "head", args: argv("-head", "/d/a.txt"), stdout: str("hello\n")},
		{name: "tail", args: argv("-tail", "/d/b.txt"), stdout: str("bar\n")},
		{name: "put then tail long", stdin: long, args: argv("-put", "-", "/long"), check: func(t *testing.T, e *dataEnv) {
			out, _, code := e.run(t, "", "-tail", "/long")
			if code != 0 || out != long[len(long)-1024:] {
				t.Errorf("tail = %d bytes, status %d", len(out), code)
			}
			out, _, _ = e.run(t, "", "-head", "/long")
			if out != long[:1024] {
				t.Errorf("head = %d bytes", len(out))
			}
		}},
	})
}

func TestTextGzip(t *testing.T) {
	e := newDataEnv(t)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte("compressed words\n"))
	zw.Close()
	if err := e.fs.WriteFile(context.Background(), "/z.gz", z.Bytes(), false); err != nil {
		t.Fatal(err)
	}
	out, errs, code := e.run(t, "", "-text", "/z.gz")
	if out != "compressed words\n" || errs != "" || code != 0 {
		t.Fatalf("text = %q, %q, %d", out, errs, code)
	}
}

func TestPut(t *testing.T) {
	runDataCases(t, []dataCase{
		{name: "file to dir", args: func(e *dataEnv) []string { return []string{"-put", filepath.Join(e.local, "l1.txt"), "/d"} },
			check: content("/d/l1.txt", "local one\n")},
		{name: "two files", args: func(e *dataEnv) []string {
			return []string{"-copyFromLocal", filepath.Join(e.local, "l1.txt"), filepath.Join(e.local, "l2.txt"), "/d/sub"}
		}, check: content("/d/sub/l2.txt", "local two\n")},
		{name: "exists", args: func(e *dataEnv) []string { return []string{"-put", filepath.Join(e.local, "l1.txt"), "/d/a.txt"} },
			stderr: str("put: `/d/a.txt': File exists\n"), code: 1, check: content("/d/a.txt", "hello\n")},
		{name: "overwrite", args: func(e *dataEnv) []string { return []string{"-put", "-f", filepath.Join(e.local, "l1.txt"), "/d/a.txt"} },
			check: content("/d/a.txt", "local one\n")},
		{name: "relative target", args: func(e *dataEnv) []string { return []string{"-put", filepath.Join(e.local, "l2.txt"), "x"} },
			check: content("/user/alice/x", "local two\n")},
		{name: "no parent", args: func(e *dataEnv) []string { return []string{"-put", filepath.Join(e.local, "l1.txt"), "/no/x"} },
			stderr: func(e *dataEnv) string {
				return "put: `/no/x': No such file or directory: `" + e.fs.URI() + "/no/x'\n"
			}, code: 1},
		{name: "missing local", args: argv("-put", "/nonexistent/q", "/d"),
			stderr: str("put: `/nonexistent/q': No such file or directory\n"), code: 1},
		{name: "stdin", stdin: "from stdin\n", args: argv("-put", "-", "/d/in"), check: content("/d/in", "from stdin\n")},
		{name: "stdin into dir", stdin: "x", args: argv("-put", "-", "/d/sub"), check: content("/d/sub/-", "x")},
		{name: "directory", args: func(e *dataEnv) []string { return []string{"-put", e.local, "/d/sub/tree"} },
			check: func(t *testing.T, e *dataEnv) {
				content("/d/sub/tree/l1.txt", "local one\n")(t, e)
				content("/d/sub/tree/l2.txt", "local two\n")(t, e)
			}},
		{name: "several to file", args: func(e *dataEnv) []string {
			return []string{"-put", filepath.Join(e.local, "l1.txt"), filepath.Join(e.local, "l2.txt"), "/d/a.txt"}
		}, stderr: str("put: `/d/a.txt': Is not a directory\n"), code: 1},
		{name: "move", args: func(e *dataEnv) []string { return []string{"-moveFromLocal", filepath.Join(e.local, "l1.txt"), "/d"} },
			check: func(t *testing.T, e *dataEnv) {
				content("/d/l1.txt", "local one\n")(t, e)
				if _, err := os.Stat(filepath.Join(e.local, "l1.txt")); !os.IsNotExist(err) {
					t.Errorf("local source still there: %v", err)
				}
			}},
	})
}

func TestGet(t *testing.T) {
	localFile := func(name, want string) func(t *testing.T, e *dataEnv) {
		return func(t *testing.T, e *dataEnv) {
			b, err := os.ReadFile(filepath.Join(e.local, name))
			if err != nil || string(b) != want {
				t.Errorf("local %s = %q, %v; want %q", name, b, err, want)
			}
		}
	}
	runDataCases(t, []dataCase{
		{name: "to dir", args: func(e *dataEnv) []string { return []string{"-get", "/d/a.txt", e.local} }, check: localFile("a.txt", "hello\n")},
		{name: "to name", args: func(e *dataEnv) []string { return []string{"-copyToLocal", "/d/b.txt", filepath.Join(e.local, "bee")} },
			check: localFile("bee", "bar\n")},
		{name: "exists", args: func(e *dataEnv) []string { return []string{"-get", "/d/a.txt", filepath.Join(e.local, "l1.txt")} },
			stderr: func(e *dataEnv) string { return "get: `" + filepath.Join(e.local, "l1.txt") + "': File exists\n" }, code: 1,
			check: localFile("l1.txt", "local one\n")},
		{name: "force", args: func(e *dataEnv) []string { return []string{"-get", "-f", "/d/a.txt", filepath.Join(e.local, "l1.txt")} },
			check: localFile("l1.txt", "hello\n")},
		{name: "missing", args: func(e *dataEnv) []string { return []string{"-get", "/nope", e.local} },
			stderr: str("get: `/nope': No such file or directory\n"), code: 1},
		{name: "tree", args: func(e *dataEnv) []string { return []string{"-get", "/d", filepath.Join(e.local, "dd")} },
			check: func(t *testing.T, e *dataEnv) {
				localFile("dd/a.txt", "hello\n")(t, e)
				localFile("dd/empty", "")(t, e)
				if fi, err := os.Stat(filepath.Join(e.local, "dd", "sub")); err != nil || !fi.IsDir() {
					t.Errorf("dd/sub: %v", err)
				}
			}},
		{name: "getmerge", args: func(e *dataEnv) []string { return []string{"-getmerge", "-nl", "/d", filepath.Join(e.local, "m")} },
			check: localFile("m", "hello\n\nbar\n\n\n")},
		{name: "getmerge skip empty", args: func(e *dataEnv) []string {
			return []string{"-getmerge", "-skip-empty-file", "/d", filepath.Join(e.local, "m")}
		}, check: localFile("m", "hello\nbar\n")},
	})
}

func TestAppendToFile(t *testing.T) {
	runDataCases(t, []dataCase{
		{name: "existing", args: func(e *dataEnv) []string {
			return []string{"-appendToFile", filepath.Join(e.local, "l1.txt"), filepath.Join(e.local, "l2.txt"), "/d/a.txt"}
		}, check: content("/d/a.txt", "hello\nlocal one\nlocal two\n")},
		{name: "new", stdin: "in\n", args: argv("-appendToFile", "-", "/d/new"), check: content("/d/new", "in\n")},
		{name: "dir", stdin: "in\n", args: argv("-appendToFile", "-", "/d"), stderr: str("appendToFile: `/d': Is a directory\n"), code: 1},
		{name: "missing local", args: argv("-appendToFile", "/nonexistent/q", "/d/a.txt"),
			stderr: str("appendToFile: `/nonexistent/q': No such file or directory\n"), code: 1, check: content("/d/a.txt", "hello\n")},
	})
}

func TestChecksumCmd(t *testing.T) {
	runDataCases(t, []dataCase{
		{name: "file", args: argv("-checksum", "/d/b.txt"),
			stdout: str("/d/b.txt\tMD5-of-0MD5-of-512CRC32C\t000002000000000000000000" + "27c076e4987344253650d3335a5d08ce\n")},
		{name: "dir", args: argv("-checksum", "/d"), stderr: str("checksum: `/d': Is a directory\n"), code: 1},
	})
}

func TestCp(t *testing.T) {
	runDataCases(t, []dataCase{
		{name: "file", args: argv("-cp", "/d/a.txt", "/d/c.txt"), check: content("/d/c.txt", "hello\n")},
		{name: "into dir", args: argv("-cp", "/d/a.txt", "/d/b.txt", "/d/sub"), check: content("/d/sub/b.txt", "bar\n")},
		{name: "exists", args: argv("-cp", "/d/a.txt", "/d/b.txt"), stderr: str("cp: `/d/b.txt': File exists\n"), code: 1},
		{name: "force", args: argv("-cp", "-f", "/d/a.txt", "/d/b.txt"), check: content("/d/b.txt", "hello\n")},
		{name: "tree", args: argv("-cp", "/d", "/e"), check: content("/e/a.txt", "hello\n")},
		{name: "into itself", args: argv("-cp", "/d", "/d/sub"), stderr: str("cp: `/d' to `/d/sub/d': is a subdirectory of itself\n"), code: 1},
		{name: "missing", args: argv("-cp", "/nope", "/d"), stderr: str("cp: `/nope': No such file or directory\n"), code: 1},
	})
}

func TestTruncateCmd(t *testing.T) {
	runDataCases(t, []dataCase{
		{name: "in block", args: argv("-truncate", "2", "/d/a.txt"),
			stdout: str("Truncating /d/a.txt to length: 2. Wait for block recovery to complete before further updating this file.\n"),
			check:  content("/d/a.txt", "he")},
		{name: "wait", args: argv("-truncate", "-w", "3", "/d/a.txt"),
			stdout: str("Waiting for /d/a.txt ...\nTruncated /d/a.txt to length: 3\n"), check: content("/d/a.txt", "hel")},
		{name: "boundary", args: argv("-truncate", "0", "/d/a.txt"), stdout: str("Truncated /d/a.txt to length: 0\n"), check: content("/d/a.txt", "")},
		{name: "larger", args: argv("-truncate", "100", "/d/a.txt"),
			stderr: str("truncate: Cannot truncate to a larger file size. Current size: 6, truncate size: 100.\n"), code: 1},
		{name: "dir", args: argv("-truncate", "1", "/d"), stderr: str("truncate: `/d': Is a directory\n"), code: 1},
	})
}

func TestSetrepWait(t *testing.T) {
	runDataCases(t, []dataCase{
		{name: "wait", args: argv("-setrep", "-w", "2", "/d/a.txt"),
			stdout: str("Replication 2 set: /d/a.txt\nWaiting for /d/a.txt ... done\n")},
	})
}

func TestTailFollow(t *testing.T) {
	e := newDataEnv(t)
	w, err := e.fs.Append(context.Background(), "/d/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() {
		env := Env{Stdout: pw, Stderr: pw, PollInterval: time.Millisecond}
		done <- Run(ctx, env, e.fs, []string{"-tail", "-f", "/d/a.txt"})
		pw.Close()
	}()
	buf := make([]byte, 64)
	readUntil := func(want string) {
		t.Helper()
		var got []byte
		for !strings.Contains(string(got), want) {
			n, err := pr.Read(buf)
			if err != nil {
				t.Fatalf("tail output %q: %v", got, err)
			}
			got = append(got, buf[:n]...)
		}
	}
	readUntil("hello\n")
	w.Write([]byte("more\n"))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	readUntil("more\n")
	cancel()
	go func() {
		for {
			if _, err := pr.Read(buf); err != nil {
				return
			}
		}
	}()
	if code := <-done; code != 0 {
		t.Errorf("tail -f status %d", code)
	}
	w.Close()
}

func TestProgress(t *testing.T) {
	var errb bytes.Buffer
	tty := true
	c := &cmd{env: Env{Stderr: &errb, Terminal: func() bool { return tty }}}
	data := bytes.Repeat([]byte{1}, progressMin)
	if _, err := io.Copy(io.Discard, c.progress(bytes.NewReader(data), int64(len(data)), "big")); err != nil {
		t.Fatal(err)
	}
	out := errb.String()
	if !strings.HasSuffix(out, "\rbig [========================================] 100% 64.0 MiB/64.0 MiB\n") {
		t.Errorf("progress output ends %q", out[max(0, len(out)-80):])
	}
	for _, tc := range []struct {
		name string
		tty  bool
		size int64
	}{{"piped", false, progressMin}, {"small", true, progressMin - 1}} {
		errb.Reset()
		tty = tc.tty
		r := bytes.NewReader(data[:tc.size])
		if got := c.progress(r, tc.size, "x"); got != io.Reader(r) {
			t.Errorf("%s: reader wrapped", tc.name)
		}
	}
	// Stdout that is not a file is never a terminal.
	if (&cmd{env: Env{Stdout: &errb}}).isTerminal() {
		t.Error("a buffer is a terminal")
	}
}
