package crashtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Bounds of the process harness.
const (
	startTimeout = 30 * time.Second // until "NameNode started" or exit
	exitTimeout  = 30 * time.Second // after SIGTERM or SIGKILL
	toolTimeout  = 60 * time.Second // format, recover
	bindAttempts = 5
)

// nameNode runs the hdfs binary as a NameNode process on fixed directories.
// Only the test goroutine uses it.
type nameNode struct {
	t       *testing.T
	confDir string
	// nameDirs is dfs.namenode.name.dir; tests change it between runs.
	nameDirs []string
	// props are further hdfs-site.xml properties; tests change them between runs.
	props map[string]string

	proc *process // the running (or last) NameNode process
	addr string   // its RPC address
	runs int
}

// process is one child process with its stderr collected.
type process struct {
	cmd    *exec.Cmd
	out    *logBuffer
	exited chan struct{}
	err    error // cmd.Wait's result, set before exited is closed
}

// logBuffer collects a process's stderr and signals when a marker line shows up.
type logBuffer struct {
	marker string
	seen   chan struct{}
	mu     struct {
		sync.Mutex
		buf  bytes.Buffer
		seen bool
	}
}

func newLogBuffer(marker string) *logBuffer {
	return &logBuffer{marker: marker, seen: make(chan struct{})}
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.buf.Write(p)
	if !b.mu.seen && b.marker != "" && bytes.Contains(b.mu.buf.Bytes(), []byte(b.marker)) {
		b.mu.seen = true
		close(b.seen)
	}
	return len(p), nil
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.buf.String()
}

// newNameNode makes a configuration dir under t's temp dir and formats
// nameDirs. The NameNode process, if still running, is killed when t ends.
func newNameNode(t *testing.T, nameDirs []string, props map[string]string) *nameNode {
	t.Helper()
	needBinary(t)
	n := &nameNode{t: t, confDir: filepath.Join(t.TempDir(), "conf"), nameDirs: nameDirs, props: map[string]string{}}
	for k, v := range props {
		n.props[k] = v
	}
	if err := os.MkdirAll(n.confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if n.proc != nil && !n.proc.done() {
			n.proc.kill()
			n.proc.wait(exitTimeout)
		}
		if t.Failed() && n.proc != nil {
			t.Logf("stderr of the last NameNode run:\n%s", tail(n.proc.out.String(), 6000))
		}
	})
	if err := n.writeConf("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	code, out := n.tool("namenode", "-format", "-nonInteractive")
	if code != 0 {
		t.Fatalf("hdfs namenode -format exited %d:\n%s", code, out)
	}
	return n
}

// writeConf writes hdfs-site.xml for the current dirs and properties.
func (n *nameNode) writeConf(rpcAddr string) error {
	props := map[string]string{
		"dfs.namenode.name.dir":      strings.Join(n.nameDirs, ","),
		"dfs.namenode.rpc-address":   rpcAddr,
		"dfs.namenode.http-address":  "127.0.0.1:0",
		"dfs.permissions.enabled":    "false",
		"dfs.namenode.handler.count": "16",
	}
	for k, v := range n.props {
		props[k] = v
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<configuration>\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "  <property><name>%s</name><value>%s</value></property>\n", html.EscapeString(k), html.EscapeString(props[k]))
	}
	b.WriteString("</configuration>\n")
	return os.WriteFile(filepath.Join(n.confDir, "hdfs-site.xml"), []byte(b.String()), 0o644)
}

// tool runs `hdfs --config DIR args...` to completion and returns its exit
// code and combined output.
func (n *nameNode) tool(args ...string) (int, string) {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, hdfsBin, append([]string{"--config", n.confDir}, args...)...)
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		n.t.Fatalf("hdfs %s did not finish within %v:\n%s", strings.Join(args, " "), toolTimeout, out)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		n.t.Fatalf("hdfs %s: %v", strings.Join(args, " "), err)
	}
	return 0, string(out)
}

// launch starts a NameNode process on rpcAddr.
func (n *nameNode) launch(rpcAddr string) *process {
	n.t.Helper()
	if err := n.writeConf(rpcAddr); err != nil {
		n.t.Fatal(err)
	}
	p := &process{out: newLogBuffer("NameNode started"), exited: make(chan struct{})}
	p.cmd = exec.Command(hdfsBin, "--config", n.confDir, "namenode")
	p.cmd.Stdin = strings.NewReader("")
	p.cmd.Stdout = p.out
	p.cmd.Stderr = p.out
	if err := p.cmd.Start(); err != nil {
		n.t.Fatalf("start the NameNode: %v", err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	n.proc = p
	n.runs++
	return p
}

// tryStart runs the NameNode and returns 0 once it serves, or the exit code
// and output of a NameNode that exited during start-up.
func (n *nameNode) tryStart() (int, string) {
	n.t.Helper()
	for attempt := 1; ; attempt++ {
		addr := freeAddr(n.t)
		p := n.launch(addr)
		select {
		case <-p.out.seen:
			n.addr = addr
			return 0, p.out.String()
		case <-p.exited:
			out := p.out.String()
			if attempt < bindAttempts && strings.Contains(out, "dfs.namenode.rpc-address") && strings.Contains(out, "address already in use") {
				continue
			}
			if code := p.exitCode(); code != 0 {
				return code, out
			}
			n.t.Fatalf("NameNode exited 0 during start-up:\n%s", tail(out, 6000))
		case <-time.After(startTimeout):
			p.kill()
			p.wait(exitTimeout)
			n.t.Fatalf("NameNode not started within %v:\n%s", startTimeout, tail(p.out.String(), 6000))
		}
	}
}

// start runs the NameNode and waits until it serves. A port another program
// took between probing and binding is retried with a new one.
func (n *nameNode) start() {
	n.t.Helper()
	if code, out := n.tryStart(); code != 0 {
		n.t.Fatalf("NameNode exited %d during start-up:\n%s", code, tail(out, 6000))
	}
}

// startFails runs the NameNode expecting it to exit before serving; it
// returns the exit code and output.
func (n *nameNode) startFails() (int, string) {
	n.t.Helper()
	p := n.launch(freeAddr(n.t))
	select {
	case <-p.out.seen:
		n.t.Fatalf("NameNode started, but it should have refused to:\n%s", tail(p.out.String(), 6000))
	case <-p.exited:
	case <-time.After(startTimeout):
		p.kill()
		p.wait(exitTimeout)
		n.t.Fatalf("NameNode neither started nor exited within %v:\n%s", startTimeout, tail(p.out.String(), 6000))
	}
	return p.exitCode(), p.out.String()
}

// kill9 sends SIGKILL to the running NameNode and waits for it to be gone.
func (n *nameNode) kill9() {
	n.t.Helper()
	n.proc.kill()
	if !n.proc.wait(exitTimeout) {
		n.t.Fatalf("NameNode still running %v after SIGKILL", exitTimeout)
	}
}

// stop sends SIGTERM and returns the exit code.
func (n *nameNode) stop() int {
	n.t.Helper()
	if err := n.proc.cmd.Process.Signal(syscall.SIGTERM); err != nil && !n.proc.done() {
		n.t.Fatalf("SIGTERM: %v", err)
	}
	return n.waitExit()
}

// waitExit waits for the NameNode to exit on its own and returns its code.
func (n *nameNode) waitExit() int {
	n.t.Helper()
	if !n.proc.wait(exitTimeout) {
		n.t.Fatalf("NameNode did not exit within %v:\n%s", exitTimeout, tail(n.proc.out.String(), 6000))
	}
	return n.proc.exitCode()
}

// log is the stderr of the current (or last) run.
func (n *nameNode) log() string { return n.proc.out.String() }

// kill sends SIGKILL unless the process was already reaped (its pid may
// belong to someone else by then).
func (p *process) kill() {
	if p.done() {
		return
	}
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		panic(fmt.Sprintf("SIGKILL %d: %v", p.cmd.Process.Pid, err))
	}
}

func (p *process) done() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// wait reports whether the process exited within d.
func (p *process) wait(d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// exitCode is the exit status of an exited process; -1 when a signal ended it.
func (p *process) exitCode() int {
	<-p.exited
	if p.err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "...\n" + s[len(s)-n:]
}
