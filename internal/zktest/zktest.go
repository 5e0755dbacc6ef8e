// Package zktest runs real ZooKeeper servers for tests: Debian's zookeeper
// package (3.8), each server a java process on its own loopback address
// with its data in the test's temp dir, started with the package's
// zkServer.sh start-foreground. A test that needs ZooKeeper skips with the
// install command when the package is absent (testtool.Require), or fails
// under HDFSGO_REQUIRE_TOOLS=1. Test-support only.
//
//	zk := zktest.Start(t, zktest.Options{Servers: 3})
//	quorum := zk.Quorum() // "127.0.0.51:p1,127.0.0.52:p2,127.0.0.53:p3"
//	zk.StopAll()          // SIGKILL every server; zk.StartAll() brings them back
//
// The servers use tickTime 200 ms, so that sessions from 400 ms to 60 s are
// granted as asked and expire within a tick of their timeout. An Ensemble
// is safe for use by one test goroutine at a time.
package zktest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// Script is the server start script of Debian's zookeeper package.
const Script = "/usr/share/zookeeper/bin/zkServer.sh"

// Install is the command that installs it.
const Install = "apt-get install -y zookeeper"

// TickTime is the servers' tick.
const TickTime = 200 * time.Millisecond

// startTimeout bounds a server's (or an ensemble's) start: a JVM on a busy
// 2-core machine takes seconds.
const startTimeout = 90 * time.Second

// Options configure an ensemble.
type Options struct {
	// Servers is the number of servers (default 1).
	Servers int
	// Hosts are their loopback addresses; default 127.0.0.1 for one
	// server, 127.0.0.51, .52, ... for more.
	Hosts []string
}

// Ensemble is a running set of ZooKeeper servers, stopped when the test
// ends.
type Ensemble struct {
	t       testing.TB
	script  string
	servers []*server
}

type server struct {
	id                int
	host              string
	client, peer, elc int
	dir, cfg          string
	mu                sync.Mutex
	log               bytes.Buffer
	cmd               *exec.Cmd
	done              chan struct{}
}

// Start starts an ensemble and waits until every server serves (its srvr
// four-letter word shows a Mode).
func Start(t testing.TB, opts Options) *Ensemble {
	t.Helper()
	script := testtool.Require(t, Script, Install)
	if _, err := exec.LookPath("java"); err != nil {
		testtool.Require(t, "java", Install)
	}
	n := opts.Servers
	if n <= 0 {
		n = 1
	}
	hosts := opts.Hosts
	if len(hosts) == 0 {
		if n == 1 {
			hosts = []string{"127.0.0.1"}
		} else {
			for i := range n {
				hosts = append(hosts, fmt.Sprintf("127.0.0.%d", 51+i))
			}
		}
	}
	if len(hosts) != n {
		t.Fatalf("zktest: %d servers, %d hosts", n, len(hosts))
	}
	e := &Ensemble{t: t, script: script}
	root := t.TempDir()
	for i, h := range hosts {
		s := &server{id: i + 1, host: h, dir: filepath.Join(root, fmt.Sprintf("zk%d", i+1))}
		s.client, s.peer, s.elc = freePort(t, h), freePort(t, h), freePort(t, h)
		e.servers = append(e.servers, s)
	}
	for _, s := range e.servers {
		if err := os.MkdirAll(filepath.Join(s.dir, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.dir, "data", "myid"), []byte(strconv.Itoa(s.id)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "tickTime=%d\nminSessionTimeout=%d\nmaxSessionTimeout=60000\n", TickTime.Milliseconds(), 2*TickTime.Milliseconds())
		fmt.Fprintf(&b, "initLimit=100\nsyncLimit=50\ndataDir=%s\n", filepath.Join(s.dir, "data"))
		fmt.Fprintf(&b, "clientPort=%d\nclientPortAddress=%s\n", s.client, s.host)
		b.WriteString("4lw.commands.whitelist=srvr,ruok,stat,mntr\nadmin.enableServer=false\n")
		if n > 1 {
			b.WriteString("quorumListenOnAllIPs=false\n")
			for _, o := range e.servers {
				fmt.Fprintf(&b, "server.%d=%s:%d:%d\n", o.id, o.host, o.peer, o.elc)
			}
		}
		s.cfg = filepath.Join(s.dir, "zoo.cfg")
		if err := os.WriteFile(s.cfg, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		e.StopAll()
		if t.Failed() {
			for _, s := range e.servers {
				s.mu.Lock()
				t.Logf("zookeeper %d (%s:%d) output:\n%s", s.id, s.host, s.client, tail(s.log.String(), 20))
				s.mu.Unlock()
			}
		}
	})
	e.StartAll()
	return e
}

// Quorum is the ensemble as ha.zookeeper.quorum names it.
func (e *Ensemble) Quorum() string {
	var parts []string
	for _, s := range e.servers {
		parts = append(parts, net.JoinHostPort(s.host, strconv.Itoa(s.client)))
	}
	return strings.Join(parts, ",")
}

// Hosts are the servers' addresses.
func (e *Ensemble) Hosts() []string {
	var out []string
	for _, s := range e.servers {
		out = append(out, s.host)
	}
	return out
}

// StartAll starts every stopped server and waits until all serve.
func (e *Ensemble) StartAll() {
	e.t.Helper()
	for i := range e.servers {
		e.launch(i)
	}
	deadline := time.Now().Add(startTimeout)
	for _, s := range e.servers {
		e.wait(s, deadline)
	}
}

// Start starts server i (from 0) again and waits until it serves; with
// more than one server it needs a quorum of them running.
func (e *Ensemble) Start(i int) {
	e.t.Helper()
	e.launch(i)
	e.wait(e.servers[i], time.Now().Add(startTimeout))
}

func (e *Ensemble) launch(i int) {
	s := e.servers[i]
	if s.cmd != nil {
		return
	}
	cmd := exec.Command(e.script, "start-foreground", s.cfg)
	cmd.Env = append(os.Environ(), "JMXDISABLE=true",
		"JVMFLAGS=-Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto")
	cmd.Dir = s.dir
	cmd.Stdout = lockedWriter{s}
	cmd.Stderr = lockedWriter{s}
	// Its own process group, so that a kill reaches the JVM whatever the
	// script did.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		e.t.Fatalf("zktest: starting %s: %v", e.script, err)
	}
	s.cmd = cmd
	s.done = make(chan struct{})
	go func(done chan struct{}) { cmd.Wait(); close(done) }(s.done)
}

func (e *Ensemble) wait(s *server, deadline time.Time) {
	e.t.Helper()
	for time.Now().Before(deadline) {
		if strings.Contains(srvr(s.host, s.client), "Mode:") {
			return
		}
		select {
		case <-s.done:
			s.mu.Lock()
			out := s.log.String()
			s.mu.Unlock()
			e.t.Fatalf("zktest: zookeeper %d exited:\n%s", s.id, tail(out, 20))
		case <-time.After(50 * time.Millisecond):
		}
	}
	e.t.Fatalf("zktest: zookeeper %d at %s:%d did not serve within %v", s.id, s.host, s.client, startTimeout)
}

// Stop kills server i (SIGKILL) and waits until it is gone.
func (e *Ensemble) Stop(i int) {
	s := e.servers[i]
	if s.cmd == nil {
		return
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
	s.cmd = nil
}

// StopAll kills every server.
func (e *Ensemble) StopAll() {
	for i := range e.servers {
		e.Stop(i)
	}
}

// Mode is what server i's srvr says its mode is ("standalone", "leader",
// "follower"), "" when it does not answer.
func (e *Ensemble) Mode(i int) string {
	s := e.servers[i]
	sc := bufio.NewScanner(strings.NewReader(srvr(s.host, s.client)))
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return m
		}
	}
	return ""
}

// srvr sends the srvr four-letter word and returns the answer.
func srvr(host string, port int) string {
	c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("srvr")); err != nil {
		return ""
	}
	var b bytes.Buffer
	b.ReadFrom(c)
	return b.String()
}

func freePort(t testing.TB, host string) int {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatalf("zktest: no free port on %s: %v", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type lockedWriter struct{ s *server }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if w.s.log.Len() < 1<<20 {
		w.s.log.Write(p)
	}
	return len(p), nil
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
