package e2e

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	stock "github.com/colinmarc/hdfs/v2"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc/wire"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// Attacks on a NameNode process from clients that misbehave on the
// network. Each test starts a NameNode (no DataNodes), attacks it, and
// checks that while the attack goes on the process is alive, answers a
// stock client within a second, and stays under maxAttackRSS.

// maxAttackRSS is the resident size a NameNode under attack must stay
// below.
const maxAttackRSS = 1 << 30

// attackAnswerTries is how many calls in a row may take over a second
// before a NameNode under attack counts as not answering.
const attackAnswerTries = 3

// clientProtocolName is ClientProtocol's Java name, as calls carry it.
const clientProtocolName = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

// vmRSS returns the resident set size of process pid in bytes.
func vmRSS(t *testing.T, pid int) int64 { return procStatus(t, pid, "VmRSS") }

// rssSampler records the peak RSS of a process, sampled every 50 ms by a
// goroutine it owns until stop.
type rssSampler struct {
	t    *testing.T
	pid  int
	quit chan struct{}
	done chan struct{}
	mu   sync.Mutex
	peak int64
}

func sampleRSS(t *testing.T, pid int) *rssSampler {
	s := &rssSampler{t: t, pid: pid, quit: make(chan struct{}), done: make(chan struct{}), peak: vmRSS(t, pid)}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.quit:
				return
			case <-tick.C:
				b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
				if err != nil {
					return // the process is gone; the test notices
				}
				if i := strings.Index(string(b), "VmRSS:"); i >= 0 {
					f := strings.Fields(string(b[i+len("VmRSS:"):]))
					if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
						s.mu.Lock()
						s.peak = max(s.peak, kb<<10)
						s.mu.Unlock()
					}
				}
			}
		}
	}()
	t.Cleanup(func() { s.stop() })
	return s
}

// stop ends the sampling (idempotent) and returns the peak.
func (s *rssSampler) stop() int64 {
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// startAttackedNameNode starts a NameNode process alone and returns the
// cluster and its HTTP base URL.
func startAttackedNameNode(t *testing.T, extra map[string]string) (*cluster, string) {
	t.Helper()
	port := freePort(t, "127.0.0.1")
	site := map[string]string{"dfs.namenode.http-address": fmt.Sprintf("127.0.0.1:%d", port)}
	for k, v := range extra {
		site[k] = v
	}
	c := startCluster(t, 0, site)
	return c, fmt.Sprintf("127.0.0.1:%d", port)
}

// checkNameNodeHealthy fails the test unless the NameNode process is
// alive, answers Stat("/") to the stock client within a second, and its
// RSS is below maxAttackRSS. It returns the RSS.
func checkNameNodeHealthy(t *testing.T, c *cluster, cl *stock.Client) int64 {
	t.Helper()
	select {
	case <-c.nn.done:
		t.Fatalf("the NameNode process died:\n%s", tail(c.nn.logText(), 30))
	default:
	}
	// The target is an answer within a second. The suite runs these
	// process tests in parallel on two cores, so one slow answer is
	// asked again; a NameNode that is hung or starved answers none of
	// attackAnswerTries calls within the second.
	var took []time.Duration
	for range attackAnswerTries {
		errc := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := cl.Stat("/")
			errc <- err
		}()
		select {
		case err := <-errc:
			if err != nil {
				t.Fatalf("stock client Stat(/) under attack: %v", err)
			}
			took = nil
		case <-time.After(time.Second):
			// Let the call end before the client is closed.
			err := <-errc
			if err != nil {
				t.Fatalf("stock client Stat(/) under attack: %v (after %v)", err, time.Since(start))
			}
			took = append(took, time.Since(start))
		}
		if took == nil {
			break
		}
	}
	if len(took) == attackAnswerTries {
		t.Fatalf("stock client Stat(/) under attack: %d calls in a row each took more than a second (%v)", len(took), took)
	}
	rss := vmRSS(t, c.nn.cmd.Process.Pid)
	if rss > maxAttackRSS {
		t.Fatalf("NameNode RSS %d MiB under attack, limit %d MiB", rss>>20, maxAttackRSS>>20)
	}
	return rss
}

// rpcHandshake is the preamble and connection context a SIMPLE client
// sends first.
func rpcHandshake(t *testing.T) []byte {
	t.Helper()
	b := wire.ClientPreamble().Append(nil)
	b, err := wire.AppendRequest(b, wire.RequestHeader(wire.CallIDConnectionContext, []byte("ATTACKERATTACKER"), -1), nil,
		wire.ConnectionContext("attacker", "", clientProtocolName))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dialRPC opens a connection to addr with a small receive buffer (the
// kernel then holds little of what the server sends) and closes it when
// the test ends.
func dialRPC(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	d := net.Dialer{Timeout: 10 * time.Second}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	tc := nc.(*net.TCPConn)
	tc.SetReadBuffer(16 << 10)
	t.Cleanup(func() { tc.Close() })
	return tc
}

// pipelineGetListing starts a client that handshakes, writes n getListing
// calls for dir back to back and never reads an answer. The writing
// goroutine ends when the connection is closed at the end of the test.
func pipelineGetListing(t *testing.T, addr, dir string, n int) {
	t.Helper()
	frames := rpcHandshake(t)
	for i := range n {
		var err error
		frames, err = wire.AppendRequest(frames, wire.RequestHeader(int32(i+1), []byte("ATTACKERATTACKER"), -1),
			wire.MethodHeader("getListing", clientProtocolName),
			&hdfs.GetListingRequestProto{Src: proto.String(dir), StartAfter: []byte{}, NeedLocation: proto.Bool(false)})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("pipelining %d getListing calls (%d bytes) without reading", n, len(frames))
	nc := dialRPC(t, addr)
	done := make(chan struct{})
	go func() {
		defer close(done)
		nc.Write(frames)
	}()
	t.Cleanup(func() {
		nc.Close()
		<-done
	})
}

// openIdleRPCConns opens n connections that finish the handshake and then
// send nothing.
func openIdleRPCConns(t *testing.T, addr string, n int) {
	t.Helper()
	hs := rpcHandshake(t)
	for i := range n {
		nc := dialRPC(t, addr)
		if _, err := nc.Write(hs); err != nil {
			t.Fatalf("idle connection %d: %v", i, err)
		}
	}
}

// requestNotReading opens n connections that each send one GET for path
// and never read the answer.
func requestNotReading(t *testing.T, addr, path string, n int) {
	t.Helper()
	req := []byte("GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\n\r\n")
	for i := range n {
		nc := dialRPC(t, addr)
		nc.SetReadBuffer(4 << 10)
		if _, err := nc.Write(req); err != nil {
			t.Fatalf("HTTP client %d: %v", i, err)
		}
	}
}

// fdRoom returns how many more descriptors this process may open, after
// raising its soft limit to the hard one.
func fdRoom(t *testing.T) int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) // Go usually did this already
		syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	open, _ := os.ReadDir("/proc/self/fd")
	return int(lim.Cur) - len(open)
}

// TestPipelinedGetListingNonReader: a client pipelines 20,000 getListing
// calls on a directory whose listing is about 300 KB and reads nothing
// (this grew the NameNode to 15.7 GB before replies were bounded).
func TestPipelinedGetListingNonReader(t *testing.T) {
	parallel(t)
	c, _ := startAttackedNameNode(t, nil)
	cl := c.stockClient(t)
	name := strings.Repeat("x", 230)
	for i := range 1000 { // dfs.ls.limit: one full page per getListing
		if err := cl.MkdirAll(fmt.Sprintf("/big/%04d%s", i, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	before := vmRSS(t, c.nn.cmd.Process.Pid)
	peak := sampleRSS(t, c.nn.cmd.Process.Pid)
	pipelineGetListing(t, c.nnAddr, "/big", 20000)
	for range 5 {
		time.Sleep(time.Second) // let the attack run; each check is the assertion
		checkNameNodeHealthy(t, c, cl)
	}
	t.Logf("NameNode RSS: %d MiB before, %d MiB peak under attack", before>>20, peak.stop()>>20)
}

// TestManyIdleRPCConnections: 10,000 handshaken connections that stay
// silent (held forever at 73 KiB each before).
func TestManyIdleRPCConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes; skipped with -short")
	}
	n := 10000
	// This process holds one descriptor per connection; the NameNode, a
	// child, inherits the same limit.
	if room := fdRoom(t) - 200; room < n {
		t.Logf("open-file limit leaves room for %d connections, not %d: scaling down", room, n)
		n = room
	}
	if n < 1000 {
		t.Skipf("open-file limit too low for the test (%d connections)", n)
	}
	c, _ := startAttackedNameNode(t, nil)
	cl := c.stockClient(t)
	if _, err := cl.Stat("/"); err != nil {
		t.Fatal(err)
	}
	pid := c.nn.cmd.Process.Pid
	before := vmRSS(t, pid)
	peak := sampleRSS(t, pid)
	openIdleRPCConns(t, c.nnAddr, n)
	time.Sleep(time.Second) // let the NameNode take the last handshakes; the checks assert
	rss := checkNameNodeHealthy(t, c, cl)
	checkNameNodeHealthy(t, c, cl)
	t.Logf("NameNode RSS: %d MiB before, %d MiB with %d idle connections (%d bytes each), peak %d MiB",
		before>>20, rss>>20, n, (rss-before)/int64(n), peak.stop()>>20)
}

// TestStacksNonReaders: 2,000 clients ask /stacks and read nothing (this
// grew the NameNode to 4.9 GB before the web server had limits).
func TestStacksNonReaders(t *testing.T) {
	parallel(t)
	c, web := startAttackedNameNode(t, nil)
	cl := c.stockClient(t)
	pid := c.nn.cmd.Process.Pid
	before := vmRSS(t, pid)
	peak := sampleRSS(t, pid)
	requestNotReading(t, web, "/stacks", 2000)
	for range 3 {
		time.Sleep(time.Second) // let the attack run; each check is the assertion
		checkNameNodeHealthy(t, c, cl)
	}
	// The web server still answers a client that reads.
	nc := dialRPC(t, web)
	fmt.Fprintf(nc, "GET /isActive HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", web)
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	status, err := bufio.NewReader(nc).ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 200") {
		t.Fatalf("/isActive under attack: %q %v", status, err)
	}
	t.Logf("NameNode RSS: %d MiB before, %d MiB peak under attack", before>>20, peak.stop()>>20)
}
