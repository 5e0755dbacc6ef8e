package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// runIn is run with stdin.
func runIn(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code = Run(e, append([]string{"hdfs"}, args...))
	return out.String(), errb.String(), code
}

var clusterIDRe = regexp.MustCompile(`(?m)^clusterID=(.*)$`)

func clusterIDOf(t *testing.T, nameDir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(nameDir, "current", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	m := clusterIDRe.FindSubmatch(b)
	if m == nil {
		t.Fatalf("no clusterID in VERSION:\n%s", b)
	}
	return string(m[1])
}

// TestNamenodeFormatConfirms: -format on a formatted directory asks as
// Hadoop does; -nonInteractive refuses, -force formats anyway, "N" aborts,
// "Y" formats; each says so with Hadoop's words.
func TestNamenodeFormatConfirms(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "name")
	d := []string{"-D", "dfs.namenode.name.dir=" + dir, "-D", "dfs.namenode.rpc-address=127.0.0.1:0"}
	nn := func(stdin string, args ...string) (string, int) {
		_, errOut, code := runIn(t, stdin, append(append([]string{"namenode"}, d...), args...)...)
		return errOut, code
	}
	if errOut, code := nn("", "-format", "-nonInteractive"); code != 0 {
		t.Fatalf("first format: code %d\n%s", code, errOut)
	}
	id := clusterIDOf(t, dir)
	sd := "Storage Directory root= " + dir + "; location= null"

	errOut, code := nn("", "-format", "-nonInteractive")
	if code != 1 || !strings.Contains(errOut, "Running in non-interactive mode, and data appears to exist in "+sd+". Not formatting.\n") {
		t.Fatalf("-nonInteractive on a formatted dir: code %d\n%s", code, errOut)
	}
	if clusterIDOf(t, dir) != id {
		t.Fatal("-nonInteractive re-formatted the directory")
	}

	errOut, code = nn("maybe\nN\n", "-format")
	want := "Re-format filesystem in " + sd + " ? (Y or N) Invalid input: maybe\nRe-format filesystem in " + sd + " ? (Y or N) Format aborted in " + sd + "\n"
	if code != 1 || !strings.Contains(errOut, want) {
		t.Fatalf("answer N: code %d\n%s\nwant containing\n%s", code, errOut, want)
	}
	if clusterIDOf(t, dir) != id {
		t.Fatal("answering N re-formatted the directory")
	}
	// The end of the input is a no.
	if errOut, code = nn("", "-format"); code != 1 || !strings.Contains(errOut, "Format aborted in "+sd) {
		t.Fatalf("no answer: code %d\n%s", code, errOut)
	}

	errOut, code = nn("y\n", "-format")
	if code != 0 || !strings.Contains(errOut, "Re-format filesystem in "+sd+" ? (Y or N) ") {
		t.Fatalf("answer y: code %d\n%s", code, errOut)
	}
	id2 := clusterIDOf(t, dir)
	if id2 == id {
		t.Fatal("answering y did not format")
	}

	errOut, code = nn("", "-format", "-force", "-clusterid", "CID-forced")
	if code != 0 || !strings.Contains(errOut, "Data exists in "+sd+". Formatting anyway.\n") {
		t.Fatalf("-force: code %d\n%s", code, errOut)
	}
	if got := clusterIDOf(t, dir); got != "CID-forced" {
		t.Fatalf("-force: clusterID %q", got)
	}
}

// startMinicluster runs `hdfs minicluster ARGS` until the returned stop is
// called (it sends the command a SIGTERM) and returns its output then.
func startMinicluster(t *testing.T, args ...string) (stop func() (stdout, stderr string, code int)) {
	t.Helper()
	var out, errb testtool.Buffer
	sig := make(chan os.Signal, 1)
	e := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" },
		Signals: func() (<-chan os.Signal, func()) { return sig, func() {} }}
	done := make(chan int, 1)
	go func() { done <- Run(e, append([]string{"hdfs", "minicluster"}, args...)) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "stops the cluster") {
		select {
		case code := <-done:
			t.Fatalf("minicluster %v exited with %d:\n%s\n%s", args, code, out.String(), errb.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("minicluster %v did not come up:\n%s\n%s", args, out.String(), errb.String())
		}
	}
	return func() (string, string, int) {
		sig <- os.Interrupt
		select {
		case code := <-done:
			return out.String(), errb.String(), code
		case <-time.After(30 * time.Second):
			t.Fatal("minicluster did not stop")
			return "", "", 0
		}
	}
}

// TestMiniclusterNeverReformats: a -dir that holds a cluster is started
// again with its data; only -format formats it afresh.
func TestMiniclusterNeverReformats(t *testing.T) {
	dir := t.TempDir()
	nameDir := filepath.Join(dir, "nn", "name")
	base := []string{"-dir", dir, "-datanodes", "0", "-nnport", "0", "-tcponly"}

	out, errOut, code := startMinicluster(t, base...)()
	if code != 0 {
		t.Fatalf("first run: code %d\n%s\n%s", code, out, errOut)
	}
	id := clusterIDOf(t, nameDir)

	out, errOut, code = startMinicluster(t, base...)()
	if code != 0 || !strings.Contains(errOut, dir+" holds a cluster: starting it again with its data (-format formats it afresh)") {
		t.Fatalf("second run: code %d\n%s\n%s", code, out, errOut)
	}
	if clusterIDOf(t, nameDir) != id {
		t.Fatal("the second run re-formatted the cluster")
	}
	if !strings.Contains(out, "minicluster -dir "+dir+")") {
		t.Fatalf("the stop message does not say how to restart:\n%s", out)
	}

	out, errOut, code = startMinicluster(t, append(base, "-format")...)()
	if code != 0 || strings.Contains(errOut, "holds a cluster") {
		t.Fatalf("-format run: code %d\n%s\n%s", code, out, errOut)
	}
	if clusterIDOf(t, nameDir) == id {
		t.Fatal("-format did not format the cluster")
	}

	if _, errOut, code := runIn(t, "", "minicluster", "-format"); code != 1 || !strings.Contains(errOut, "-format needs -dir") {
		t.Fatalf("-format without -dir: code %d\n%s", code, errOut)
	}
}

func TestGoRunCmdline(t *testing.T) {
	for _, tc := range []struct {
		cmdline string
		want    bool
	}{
		{"go\x00run\x00./cmd/hdfs\x00minicluster\x00", true},
		{"/usr/local/go/bin/go\x00run\x00.\x00", true},
		{"go\x00build\x00./cmd/hdfs\x00", false},
		{"bash\x00-c\x00go run x\x00", false},
		{"/usr/bin/nohup\x00hdfs\x00minicluster\x00", false},
		{"", false},
	} {
		if got := goRunCmdline([]byte(tc.cmdline)); got != tc.want {
			t.Errorf("%q: %v", tc.cmdline, got)
		}
	}
	if isGoRun(os.Getpid()) {
		t.Error("the test binary taken for go run")
	}
}

// TestSignalWhileStartingStopsCleanly: a SIGTERM that arrives while the
// NameNode starts — here before it begins — is held until it is up and
// then stops it as any other (exit 0, "shutting down"), instead of the
// signal's default action killing a process that may already answer calls.
func TestSignalWhileStartingStopsCleanly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "name")
	d := []string{"-D", "dfs.namenode.name.dir=" + dir, "-D", "dfs.namenode.rpc-address=127.0.0.1:0", "-D", "dfs.namenode.http-address=127.0.0.1:0"}
	if _, errOut, code := runIn(t, "", append(append([]string{"namenode"}, d...), "-format", "-nonInteractive")...); code != 0 {
		t.Fatalf("format: code %d\n%s", code, errOut)
	}
	sig := make(chan os.Signal, 1)
	sig <- syscall.SIGTERM
	var out, errb testtool.Buffer
	var late atomic.Bool // signals taken only once the NameNode served
	e := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" },
		Signals: func() (<-chan os.Signal, func()) {
			late.Store(strings.Contains(errb.String(), "NameNode started"))
			return sig, func() {}
		}}
	done := make(chan int, 1)
	go func() { done <- Run(e, append([]string{"hdfs", "namenode"}, d...)) }()
	select {
	case code := <-done:
		if late.Load() {
			t.Fatalf("signals were taken only after the NameNode started serving:\n%s", errb.String())
		}
		if code != 0 || !strings.Contains(errb.String(), "NameNode up") || !strings.Contains(errb.String(), "shutting down") {
			t.Fatalf("code %d, want 0 after starting and shutting down:\n%s", code, errb.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the NameNode did not stop")
	}
}
