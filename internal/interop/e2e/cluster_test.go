package e2e

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var hdfsBin string

func TestMain(m *testing.M) {
	if os.Getenv("HDFSGO_E2E_WRITER") != "" {
		writerMain()
		return
	}
	if os.Getenv(opWriterEnv) != "" {
		opWriterMain()
		return
	}
	flag.Parse()
	parallelDefault()
	if testing.Short() {
		fmt.Println("e2e: skipped in -short mode (the tests run the built binary as processes)")
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "hdfsgo-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	hdfsBin = filepath.Join(dir, "hdfs")
	build := exec.Command("go", "build", "-o", hdfsBin, "./cmd/hdfs")
	build.Dir = "../../.."
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/hdfs: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// e2eParallel is how many process tests run at once unless -test.parallel
// says otherwise. They mostly wait (heartbeats, timeouts, processes
// starting), so a few at once fit on two cores and the package takes a
// fraction of the time it takes test by test.
const e2eParallel = 3

// parallelDefault sets -test.parallel to e2eParallel when the command line
// did not set it.
func parallelDefault() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(e2eParallel))
	}
}

// parallel marks a process test as one that may run beside others. Tests
// that change the test process's environment, hold thousands of
// descriptors or measure time across the whole machine stay serial.
func parallel(t *testing.T) { t.Parallel() }

// proc is one running role.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  *bytes.Buffer
	mu   *sync.Mutex
	done chan struct{}
}

func (p *proc) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

type lockedWriter struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (w lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(b)
}

// cluster is a NameNode and DataNodes as processes.
type cluster struct {
	t      *testing.T
	root   string
	nnAddr string
	extra  map[string]string
	nn     *proc
	dns    []*proc
	// gids run the named processes with that group id (as root), so that
	// iptables' owner match can tell their packets apart.
	gids map[string]uint32
}

// handedOut holds the ports freePort returned, per host: the kernel may
// hand a port just closed to the next listen on port 0, so two ports picked
// in a row for one process (a DataNode's transfer and IPC ports, say)
// could be the same one.
var handedOut struct {
	sync.Mutex
	ports map[string]bool
}

func freePort(t *testing.T, host string) int {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[string]bool{}
	}
	for range 100 {
		l, err := net.Listen("tcp", host+":0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		key := net.JoinHostPort(host, strconv.Itoa(port))
		if !handedOut.ports[key] {
			handedOut.ports[key] = true
			return port
		}
	}
	t.Fatalf("no port on %s that was not handed out before", host)
	return 0
}

func writeConf(t *testing.T, dir string, core, site map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, kv map[string]string) {
		var b strings.Builder
		b.WriteString("<?xml version=\"1.0\"?>\n<configuration>\n")
		for k, v := range kv {
			fmt.Fprintf(&b, "  <property><name>%s</name><value>%s</value></property>\n", k, v)
		}
		b.WriteString("</configuration>\n")
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("core-site.xml", core)
	write("hdfs-site.xml", site)
}

// dnHost gives DataNode i its own loopback address when possible.
func dnHost(i int) string {
	h := "127.0.0." + strconv.Itoa(21+i)
	if l, err := net.Listen("tcp", h+":0"); err == nil {
		l.Close()
		return h
	}
	return "127.0.0.1"
}

func startCluster(t *testing.T, datanodes int, extra map[string]string) *cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("runs processes; skipped with -short")
	}
	c := &cluster{t: t, root: t.TempDir(), extra: extra}
	c.nnAddr = fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
	site := map[string]string{
		"dfs.namenode.name.dir":     filepath.Join(c.root, "nn", "name"),
		"dfs.namenode.rpc-address":  c.nnAddr,
		"dfs.namenode.http-address": "127.0.0.1:0",
	}
	for k, v := range extra {
		site[k] = v
	}
	writeConf(t, c.confDir("nn"), map[string]string{"fs.defaultFS": "hdfs://" + c.nnAddr}, site)
	c.run(t, c.confDir("nn"), "namenode", "-format", "-nonInteractive")
	c.startNameNode()
	c.dns = make([]*proc, datanodes)
	for i := range datanodes {
		c.startDataNode(i)
	}
	t.Cleanup(c.stopAll)
	c.waitLive(datanodes, 60*time.Second)
	return c
}

func (c *cluster) confDir(role string) string { return filepath.Join(c.root, "conf-"+role) }

func (c *cluster) spawn(name, confDir string, args ...string) *proc {
	c.t.Helper()
	p := &proc{name: name, log: &bytes.Buffer{}, mu: &sync.Mutex{}, done: make(chan struct{})}
	cmd := exec.Command(hdfsBin, append([]string{"--config", confDir}, args...)...)
	cmd.Stdout = lockedWriter{p.mu, p.log}
	cmd.Stderr = lockedWriter{p.mu, p.log}
	cmd.Env = append(os.Environ(), "HADOOP_CONF_DIR=")
	if gid, ok := c.gids[name]; ok {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(os.Getuid()), Gid: gid}}
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	p.cmd = cmd
	go func() { cmd.Wait(); close(p.done) }()
	return p
}

func (c *cluster) startNameNode() {
	c.nn = c.spawn("namenode", c.confDir("nn"), "namenode")
}

func (c *cluster) startDataNode(i int) {
	host := dnHost(i)
	role := fmt.Sprintf("dn%d", i)
	site := map[string]string{
		"dfs.datanode.data.dir":     filepath.Join(c.root, role, "data"),
		"dfs.datanode.address":      fmt.Sprintf("%s:%d", host, freePort(c.t, host)),
		"dfs.datanode.ipc.address":  fmt.Sprintf("%s:%d", host, freePort(c.t, host)),
		"dfs.datanode.http.address": host + ":0",
		"dfs.datanode.hostname":     host,
	}
	for k, v := range c.extra {
		site[k] = v
	}
	if _, err := os.Stat(filepath.Join(c.confDir(role), "hdfs-site.xml")); err != nil {
		writeConf(c.t, c.confDir(role), map[string]string{"fs.defaultFS": "hdfs://" + c.nnAddr}, site)
	}
	c.dns[i] = c.spawn(role, c.confDir(role), "datanode")
}

// kill sends SIGKILL and waits for the process to be gone.
func (c *cluster) kill(p *proc) {
	if p == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

func (c *cluster) stopAll() {
	for _, p := range c.dns {
		if p != nil {
			p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, p := range c.dns {
		if p != nil {
			waitOrKill(p)
		}
	}
	if c.nn != nil {
		c.nn.cmd.Process.Signal(syscall.SIGTERM)
		waitOrKill(c.nn)
	}
	if c.t.Failed() {
		if c.nn != nil {
			c.t.Logf("namenode log:\n%s", tail(c.nn.logText(), 60))
		}
		for _, p := range c.dns {
			if p != nil {
				c.t.Logf("%s log:\n%s", p.name, tail(p.logText(), 30))
			}
		}
	}
}

func waitOrKill(p *proc) {
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// run runs the hdfs binary with a config dir and returns stdout.
func (c *cluster) run(t *testing.T, confDir string, args ...string) string {
	t.Helper()
	out, err := c.runErr(confDir, nil, args...)
	if err != nil {
		t.Fatalf("hdfs %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (c *cluster) runErr(confDir string, stdin []byte, args ...string) (string, error) {
	return c.runEnvIn(confDir, nil, stdin, args...)
}

// runEnv runs the hdfs binary with extra environment variables and
// returns its stdout (and stderr, on failure).
func (c *cluster) runEnv(confDir string, env []string, args ...string) (string, error) {
	return c.runEnvIn(confDir, env, nil, args...)
}

func (c *cluster) runEnvIn(confDir string, env []string, stdin []byte, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hdfsBin, append([]string{"--config", confDir}, args...)...)
	cmd.Env = append(append(os.Environ(), "HADOOP_CONF_DIR="), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String() + errb.String(), err
	}
	return out.String(), nil
}

// dfs runs `hdfs dfs ARGS` as a client of the cluster.
func (c *cluster) dfs(t *testing.T, args ...string) string {
	t.Helper()
	return c.run(t, c.confDir("nn"), append([]string{"dfs"}, args...)...)
}

var liveRE = regexp.MustCompile(`Live datanodes \((\d+)\)`)

func (c *cluster) liveNodes() int {
	out, err := c.runErr(c.confDir("nn"), nil, "dfsadmin", "-report", "-live")
	if err != nil {
		return -1
	}
	m := liveRE.FindStringSubmatch(out)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func (c *cluster) waitLive(n int, timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if c.liveNodes() == n {
			// and out of safe mode
			if out, err := c.runErr(c.confDir("nn"), nil, "dfsadmin", "-safemode", "get"); err == nil && strings.Contains(out, "OFF") {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.t.Fatalf("cluster did not reach %d live DataNodes out of safe mode within %v (now %d)", n, timeout, c.liveNodes())
}

// lineCount is a helper for parsing dfs output.
func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
