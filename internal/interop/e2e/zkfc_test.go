package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
	"github.com/hdfsgo/hdfsgo/internal/zktest"
)

// The automatic failover tests: NameNodes with their failover controllers
// (hdfs zkfc) over a real ZooKeeper, as processes.
//
// The shared edits are a file:// dir unless zkHAOptions.qjournal. With
// file:// shared storage a NameNode that was not gracefully made standby
// must be stopped before another becomes active, so the fencing method is
// fence.sh: it SIGKILLs the NameNode process recorded for
// $target_namenodeid (checking it still is that process) and reports
// success once it is gone. Over qjournal:// (three JournalNode processes)
// fence.sh only records that it ran and succeeds, as shell(/bin/true)
// would: the old NameNode survives and the JournalNodes' epochs must refuse
// it instead.

// zkHA is an HA nameservice with automatic failover: ZooKeeper, nn1 and
// nn2 (each on its own loopback address where possible, with its
// controller beside it) and DataNodes, configured by XML files only.
type zkHA struct {
	*haCluster
	zk     *zktest.Ensemble
	hosts  [2]string
	zkfcs  [2]*proc
	fenced string // the file fence.sh appends "nnX time" to
}

// zkHAOptions shape the set-up.
type zkHAOptions struct {
	zkServers int
	zkHosts   []string
	extra     map[string]string
	qjournal  bool // shared edits on three JournalNodes; fence.sh kills nothing
}

// nnHost gives NameNode i its own loopback address when it can, so that a
// controller can be cut off from ZooKeeper by address.
func nnHost(i int) string {
	h := "127.0.0." + strconv.Itoa(41+i)
	if l, err := net.Listen("tcp", h+":0"); err == nil {
		l.Close()
		return h
	}
	return "127.0.0.1"
}

// startZKHA starts ZooKeeper, formats nn1 and the shared edits, formats
// the controllers' znode (hdfs zkfc -formatZK), lets nn1's controller
// make it active, bootstraps nn2 from it and starts nn2 and its
// controller, then the DataNodes.
func startZKHA(t *testing.T, datanodes int, o zkHAOptions) *zkHA {
	t.Helper()
	if testing.Short() {
		t.Skip("runs processes; skipped with -short")
	}
	zks := zktest.Start(t, zktest.Options{Servers: o.zkServers, Hosts: o.zkHosts})
	h := &zkHA{haCluster: &haCluster{cluster: &cluster{t: t, root: t.TempDir(), extra: o.extra}}, zk: zks}
	var zkfcPorts [2]int
	for i := range 2 {
		h.hosts[i] = nnHost(i)
		h.nnAddrs[i] = fmt.Sprintf("%s:%d", h.hosts[i], freePort(t, h.hosts[i]))
		h.httpAddrs[i] = fmt.Sprintf("%s:%d", h.hosts[i], freePort(t, h.hosts[i]))
		zkfcPorts[i] = freePort(t, h.hosts[i])
	}
	h.nnAddr = h.nnAddrs[0]
	h.fenced = filepath.Join(h.root, "fenced")
	fence := filepath.Join(h.root, "fence.sh")
	shared := "file://" + filepath.Join(h.root, "shared")
	kills := ""
	if o.qjournal {
		shared = startJournalNodes(t, filepath.Join(h.root, "journal"), map[string]string{"dfs.journalnode.sync.interval": "2000"}).uri()
		kills = "exit 0 # qjournal: the epochs fence\n"
	}
	script := `#!/bin/bash
# Fences NameNode $target_namenodeid: SIGKILLs its process, if the pid
# recorded for it still is that NameNode, and succeeds once it is gone.
echo "$target_namenodeid $(date +%s.%N)" >> ` + h.fenced + `
` + kills + `pid=$(cat ` + h.root + `/$target_namenodeid.pid 2>/dev/null) || exit 0
is_it() { tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null | grep -q -- "/conf-$target_namenodeid namenode"; }
is_it || exit 0
kill -9 $pid
for i in $(seq 1 200); do is_it || exit 0; sleep 0.05; done
exit 1
`
	if err := os.WriteFile(fence, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h.site = map[string]string{
		"dfs.nameservices":                       "ns1",
		"dfs.ha.namenodes.ns1":                   "nn1,nn2",
		"dfs.namenode.rpc-address.ns1.nn1":       h.nnAddrs[0],
		"dfs.namenode.rpc-address.ns1.nn2":       h.nnAddrs[1],
		"dfs.namenode.http-address.ns1.nn1":      h.httpAddrs[0],
		"dfs.namenode.http-address.ns1.nn2":      h.httpAddrs[1],
		"dfs.ha.zkfc.port.ns1.nn1":               strconv.Itoa(zkfcPorts[0]),
		"dfs.ha.zkfc.port.ns1.nn2":               strconv.Itoa(zkfcPorts[1]),
		"dfs.namenode.shared.edits.dir":          shared,
		"dfs.client.failover.proxy.provider.ns1": "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider",
		"dfs.ha.automatic-failover.enabled":      "true",
		"ha.zookeeper.quorum":                    zks.Quorum(),
		"ha.zookeeper.session-timeout.ms":        "2000",
		"dfs.ha.fencing.methods":                 "shell(" + fence + ")",
		// Test-sized checks: Hadoop checks every second, waits 45 s for an
		// answer and 5 s for a graceful fence, and retries a refused
		// connection after a second.
		"ha.health-monitor.check-interval.ms":                  "500",
		"ha.health-monitor.rpc-timeout.ms":                     "1000",
		"ha.health-monitor.sleep-after-disconnect.ms":          "500",
		"ha.failover-controller.graceful-fence.rpc-timeout.ms": "1000",
		"ipc.client.connect.retry.interval":                    "100",
		"dfs.ha.tail-edits.period":                             "1s",
		"dfs.ha.log-roll.period":                               "5s",
		"dfs.namenode.safemode.extension":                      "0",
	}
	for k, v := range o.extra {
		h.site[k] = v
	}
	core := map[string]string{"fs.defaultFS": "hdfs://ns1"}
	for i := range 2 {
		id := fmt.Sprintf("nn%d", i+1)
		site := map[string]string{
			"dfs.namenode.name.dir":         filepath.Join(h.root, id, "name"),
			"dfs.ha.namenode.id":            id,
			"hdfsgo.ha.zookeeper.bind-host": h.hosts[i],
		}
		for k, v := range h.site {
			site[k] = v
		}
		writeConf(t, h.confDir(id), core, site)
	}
	writeConf(t, h.confDir("nn"), core, h.site)
	t.Cleanup(h.stopZKHA)

	h.run(t, h.confDir("nn1"), "namenode", "-format", "-nonInteractive")
	h.run(t, h.confDir("nn1"), "zkfc", "-formatZK", "-nonInteractive")
	// Formatted already: -nonInteractive refuses to clear it (exit 2).
	if out, err := h.runErr(h.confDir("nn1"), nil, "zkfc", "-formatZK", "-nonInteractive"); exitCode(err) != 2 {
		t.Fatalf("second hdfs zkfc -formatZK -nonInteractive: %v\n%s", err, out)
	}
	h.startZKNN(0)
	h.waitRPC(0)
	h.startZKFC(0)
	h.waitState(0, "active", 60*time.Second)
	h.run(t, h.confDir("nn2"), "namenode", "-bootstrapStandby", "-nonInteractive")
	h.startZKNN(1)
	h.waitRPC(1)
	h.startZKFC(1)
	h.waitState(1, "standby", 60*time.Second)
	h.nn = h.nns[0]
	h.dns = make([]*proc, datanodes)
	for i := range datanodes {
		h.startHADataNode(i)
	}
	h.waitLive(datanodes, 60*time.Second)
	return h
}

func exitCode(err error) int {
	var ee interface{ ExitCode() int }
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err == nil {
		return 0
	}
	return -1
}

// startZKNN starts NameNode i and records its pid for fence.sh.
func (h *zkHA) startZKNN(i int) {
	h.startNN(i)
	pid := strconv.Itoa(h.nns[i].cmd.Process.Pid)
	if err := os.WriteFile(filepath.Join(h.root, fmt.Sprintf("nn%d.pid", i+1)), []byte(pid), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *zkHA) startZKFC(i int) {
	id := fmt.Sprintf("nn%d", i+1)
	h.zkfcs[i] = h.spawn("zkfc-"+id, h.confDir(id), "zkfc")
}

func (h *zkHA) stopZKHA() {
	for _, p := range h.zkfcs {
		if p != nil {
			p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, p := range h.zkfcs {
		if p != nil {
			waitOrKill(p)
		}
	}
	if h.t.Failed() {
		for _, p := range h.zkfcs {
			if p != nil {
				h.t.Logf("%s log:\n%s", p.name, tail(p.logText(), 60))
			}
		}
	}
	h.stopHA()
}

// isActive asks NameNode i's /isActive (200 active, 405 not; "down" when
// it does not answer).
func (h *zkHA) isActive(i int) string {
	c := http.Client{Timeout: 500 * time.Millisecond}
	resp, err := c.Get("http://" + h.httpAddrs[i] + "/isActive")
	if err != nil {
		return "down"
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return "active"
	}
	return "not active"
}

// activeIndex waits until exactly one NameNode is active and returns it.
func (h *zkHA) activeIndex(within time.Duration) int {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for {
		a, b := h.isActive(0), h.isActive(1)
		if a == "active" && b != "active" {
			return 0
		}
		if b == "active" && a != "active" {
			return 1
		}
		if a == "active" && b == "active" {
			h.t.Fatal("both NameNodes are active")
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("no active NameNode within %v (nn1 %s, nn2 %s)", within, a, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *zkHA) waitState(i int, want string, within time.Duration) {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := h.state(h.t, i)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("nn%d is %q after %v, want %q", i+1, got, within, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitWarm waits until standby NameNode i is what a standby is in steady
// state: every DataNode registered with it and heard in a heartbeat (its
// free space known; a NameNode restarted a moment ago knows none, and
// cannot place a block until the DataNodes' next heartbeats), and its
// controller counts it healthy (the last health state it logged).
func (h *zkHA) waitWarm(i int, within time.Duration) {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for {
		heard, healthy := h.heardDataNodes(i), h.controllerHealth(i) == "SERVICE_HEALTHY"
		if heard == len(h.dns) && healthy {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("nn%d: %d of %d DataNodes heard, controller health %q after %v", i+1, heard, len(h.dns), h.controllerHealth(i), within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// heardDataNodes counts the live DataNodes whose free space NameNode i
// knows (NameNodeInfo's LiveNodes on /jmx).
func (h *zkHA) heardDataNodes(i int) int {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + h.httpAddrs[i] + "/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var doc struct {
		Beans []struct {
			LiveNodes string
		} `json:"beans"`
	}
	if json.NewDecoder(resp.Body).Decode(&doc) != nil || len(doc.Beans) == 0 {
		return 0
	}
	var live map[string]struct {
		Remaining int64 `json:"remaining"`
	}
	if json.Unmarshal([]byte(doc.Beans[0].LiveNodes), &live) != nil {
		return 0
	}
	n := 0
	for _, d := range live {
		if d.Remaining > 0 {
			n++
		}
	}
	return n
}

// controllerHealth is the last health state NameNode i's controller
// logged.
func (h *zkHA) controllerHealth(i int) string {
	p := h.zkfcs[i]
	if p == nil {
		return ""
	}
	log := p.logText()
	const mark = "Local service entered state: "
	j := strings.LastIndex(log, mark)
	if j < 0 {
		return ""
	}
	rest := log[j+len(mark):]
	if k := strings.IndexAny(rest, "\" \n"); k >= 0 {
		rest = rest[:k]
	}
	return rest
}

// fencedCount is how often fence.sh ran for NameNode id.
func (h *zkHA) fencedCount(id string) int {
	b, _ := os.ReadFile(h.fenced)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, id+" ") {
			n++
		}
	}
	return n
}

// ---- the write load ----

// ack is one acknowledged write: a file whose close succeeded.
type ack struct {
	name   string
	sum    [32]byte
	writer string
	start  time.Time // when the write began
	at     time.Time // when it was acknowledged
}

// load runs writers against the nameservice until stopped: our client and
// the stock client through both NameNodes, and a probe per NameNode
// (our client pinned to that NameNode, each write bounded by 300 ms) that
// samples when a NameNode takes writes.
type load struct {
	h      *zkHA
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	acks   []ack
	fails  map[string]int
	first  map[string]error
}

func (h *zkHA) startLoad(t *testing.T) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{h: h, ctx: ctx, cancel: cancel, fails: map[string]int{}, first: map[string]error{}}
	ours := h.ourClient(t)
	if err := ours.MkdirAll(ctx, "/load", 0o777); err != nil {
		t.Fatal(err)
	}
	theirs := h.stockHAClient(t)
	l.writer("ours", 1, 64<<10, func(wctx context.Context, name string, data []byte) error {
		wctx, c := context.WithTimeout(wctx, 30*time.Second)
		defer c()
		return ours.WriteFile(wctx, name, data, false)
	})
	l.writer("stock", 2, 64<<10, func(_ context.Context, name string, data []byte) error {
		w, err := theirs.Create(name)
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			w.Close()
			return err
		}
		return w.Close()
	})
	for i := range 2 {
		pinned, err := client.New(client.Options{Addresses: []string{h.nnAddrs[i]}, User: osUser(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pinned.Close() })
		l.writer(fmt.Sprintf("probe-nn%d", i+1), uint64(3+i), 1<<10, func(wctx context.Context, name string, data []byte) error {
			wctx, c := context.WithTimeout(wctx, 300*time.Millisecond)
			defer c()
			return pinned.WriteFile(wctx, name, data, false)
		})
	}
	return l
}

func (l *load) writer(name string, seed uint64, maxSize int, put func(context.Context, string, []byte) error) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		r := rand.New(rand.NewPCG(seed, 11))
		for i := 0; l.ctx.Err() == nil && i < 1_000_000; i++ {
			data := make([]byte, 1+r.IntN(maxSize))
			for k := range data {
				data[k] = byte(r.Uint32())
			}
			fname := fmt.Sprintf("/load/%s-%06d", name, i)
			start := time.Now()
			if err := put(l.ctx, fname, data); err != nil {
				l.mu.Lock()
				if l.fails[name]++; l.first[name] == nil {
					l.first[name] = err
				}
				l.mu.Unlock()
				time.Sleep(20 * time.Millisecond)
				continue
			}
			l.mu.Lock()
			l.acks = append(l.acks, ack{fname, sha256.Sum256(data), name, start, time.Now()})
			l.mu.Unlock()
		}
	}()
}

// firstAckAfter waits for the first write that began at or after t and
// was acknowledged, and returns its acknowledgement time.
func (l *load) firstAckAfter(t time.Time, within time.Duration) (time.Time, bool) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		var first time.Time
		for _, a := range l.acks {
			if !a.start.Before(t) && (first.IsZero() || a.at.Before(first)) {
				first = a.at
			}
		}
		l.mu.Unlock()
		if !first.IsZero() {
			return first, true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Time{}, false
}

// stop ends the writers and checks that every acknowledged file reads
// back intact.
func (l *load) stop(t *testing.T) {
	t.Helper()
	l.cancel()
	l.wg.Wait()
	ours := l.h.ourClient(t)
	byWriter := map[string]int{}
	for _, a := range l.acks {
		byWriter[a.writer]++
		got, err := ours.ReadFile(context.Background(), a.name)
		if err != nil || sha256.Sum256(got) != a.sum {
			t.Errorf("acknowledged %s (by %s at %v): %d bytes, %v, or content differs", a.name, a.writer, a.at.Format(time.TimeOnly), len(got), err)
		}
	}
	t.Logf("acknowledged files by writer %v, all read back; failed writes by writer %v (first errors %v)", byWriter, l.fails, l.first)
	for _, w := range []string{"ours", "stock"} {
		if byWriter[w] == 0 {
			t.Errorf("writer %s got nothing acknowledged", w)
		}
	}
}

// ---- the rounds ----

// killActiveRound kills the active NameNode with SIGKILL, waits for the
// other to take over, and returns the time from the kill to the first
// acknowledged write and to the other's /isActive answering 200. The
// killed NameNode comes back as a standby.
func (h *zkHA) killActiveRound(t *testing.T, l *load) (firstWrite, active time.Duration) {
	t.Helper()
	old := h.activeIndex(30 * time.Second)
	h.waitWarm(1-old, 60*time.Second)
	killed := time.Now()
	h.kill(h.nns[old])
	for h.isActive(1-old) != "active" && time.Since(killed) < 30*time.Second {
		time.Sleep(10 * time.Millisecond)
	}
	active = time.Since(killed)
	first, ok := l.firstAckAfter(killed, 30*time.Second)
	if !ok {
		t.Fatalf("no write acknowledged within 30 s of killing nn%d", old+1)
	}
	if got := h.activeIndex(10 * time.Second); got != 1-old {
		t.Fatalf("nn%d active after nn%d was killed", got+1, old+1)
	}
	h.startZKNN(old)
	h.waitRPC(old)
	h.waitState(old, "standby", 30*time.Second)
	return first.Sub(killed), active
}

// TestZKFCAutomaticFailover: a real ZooKeeper (one server) with
// ha.zookeeper.session-timeout.ms at 2000, nn1 and nn2 with their
// controllers, three DataNodes, writers through both NameNodes (our
// client, the stock client, and one probe pinned to each NameNode):
//   - the active is killed with SIGKILL, twice: the other becomes active
//     and the first write is acknowledged within seconds; the killed one
//     comes back as standby;
//   - hdfs haadmin -failover moves the active role through the
//     controllers (a graceful failover);
//   - the active's controller alone is killed: after the session timeout
//     the other controller takes over and fences the old active, which
//     ends standby (answering) or stopped, never active beside the new;
//   - the active is stopped (SIGSTOP): its health checks time out, its
//     controller quits, the other fences it (fence.sh kills it: file://)
//     and takes over; resumed (SIGCONT), it acknowledges no write and is
//     not active (over qjournal:// without a killing fence:
//     TestZKFCHungActiveQJournal);
//   - every acknowledged file reads back at the end.
func TestZKFCAutomaticFailover(t *testing.T) {
	parallel(t)
	began := time.Now()
	// DataNodes heartbeat every second: a restarted NameNode hears them
	// (and can place blocks) sooner, which keeps the test short.
	h := startZKHA(t, 3, zkHAOptions{extra: map[string]string{"dfs.heartbeat.interval": "1"}})
	t.Logf("started in %v", time.Since(began).Round(time.Millisecond))
	l := h.startLoad(t)
	time.Sleep(500 * time.Millisecond)

	for round := range 2 {
		gap, active := h.killActiveRound(t, l)
		t.Logf("kill round %d: the other NameNode active %v after the kill, first write acknowledged %v after it", round, active, gap)
	}

	// A graceful failover through the controllers, as an operator does it.
	from := h.activeIndex(10 * time.Second)
	h.waitWarm(1-from, 60*time.Second)
	out := h.haadmin(t, "-failover", fmt.Sprintf("nn%d", from+1), fmt.Sprintf("nn%d", 2-from))
	if !strings.Contains(out, "Failover to NameNode at ") || !strings.Contains(out, " successful") {
		t.Fatalf("haadmin -failover: %q", out)
	}
	if got := h.activeIndex(10 * time.Second); got != 1-from {
		t.Fatalf("after haadmin -failover nn%d is active", got+1)
	}
	h.waitState(from, "standby", 10*time.Second)

	// The active's controller alone is killed.
	old := h.activeIndex(10 * time.Second)
	h.waitWarm(1-old, 60*time.Second)
	fencesBefore := h.fencedCount(fmt.Sprintf("nn%d", old+1))
	h.kill(h.zkfcs[old])
	killed := time.Now()
	deadline := killed.Add(30 * time.Second)
	for h.isActive(1-old) != "active" {
		if s := h.isActive(old); s == "active" && h.isActive(1-old) == "active" {
			t.Fatal("both NameNodes active after the controller was killed")
		}
		if time.Now().After(deadline) {
			t.Fatalf("nn%d did not take over after nn%d's controller was killed", 2-old, old+1)
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(killed)
	// Fenced gracefully (it answers): standby, not stopped.
	if s := h.isActive(old); s != "not active" || h.state(t, old) != "standby" {
		t.Fatalf("nn%d is %q / %q after being fenced", old+1, s, h.state(t, old))
	}
	if n := h.fencedCount(fmt.Sprintf("nn%d", old+1)); n != fencesBefore {
		t.Errorf("fence.sh ran for nn%d though it answered the graceful fence", old+1)
	}
	t.Logf("controller of nn%d killed: nn%d active %v later (session timeout 2 s), nn%d standby", old+1, 2-old, took, old+1)
	h.startZKFC(old)

	h.hungActiveRound(t, l, false)
	l.stop(t)
	t.Logf("set-up and rounds took %v", time.Since(began).Round(time.Millisecond))
}

// hungActiveRound stops the active NameNode with SIGSTOP: its health
// checks time out, its controller quits, the other controller fences it
// (fence.sh) and takes over, and a write is acknowledged. Resumed with
// SIGCONT, the old NameNode acknowledges no write and is not active. Over
// file:// fence.sh killed it; over qjournal:// it survived the fence, is
// refused by the JournalNodes' epoch at its first write, and ends stopped
// or standby.
func (h *zkHA) hungActiveRound(t *testing.T, l *load, qjournal bool) {
	t.Helper()
	old := h.activeIndex(10 * time.Second)
	h.waitWarm(1-old, 60*time.Second) // the other controller has joined
	id := fmt.Sprintf("nn%d", old+1)
	fencesBefore := h.fencedCount(id)
	pid := h.nns[old].cmd.Process.Pid
	stoppedAt := time.Now()
	syscall.Kill(pid, syscall.SIGSTOP)
	first, ok := l.firstAckAfter(stoppedAt, 30*time.Second)
	if !ok {
		syscall.Kill(pid, syscall.SIGCONT)
		t.Fatalf("no write acknowledged within 30 s of stopping %s", id)
	}
	if got := h.activeIndex(10 * time.Second); got != 1-old {
		syscall.Kill(pid, syscall.SIGCONT)
		t.Fatalf("nn%d active after %s was stopped", got+1, id)
	}
	t.Logf("%s stopped: first write acknowledged %v later", id, first.Sub(stoppedAt))
	if h.fencedCount(id) == fencesBefore {
		t.Errorf("%s was taken over without fence.sh (it did not answer the graceful fence)", id)
	}
	syscall.Kill(pid, syscall.SIGCONT)
	pinned, err := client.New(client.Options{Addresses: []string{h.nnAddrs[old]}, User: osUser(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer pinned.Close()
	for i := range 3 {
		wctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := pinned.WriteFile(wctx, fmt.Sprintf("/load/resumed-%d", i), []byte("must not be acknowledged"), false)
		cancel()
		if err == nil {
			t.Fatalf("the resumed %s acknowledged a write", id)
		}
		if s := h.isActive(old); s == "active" {
			t.Fatalf("the resumed %s is active", id)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !qjournal {
		select {
		case <-h.nns[old].done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s still runs after the fence", id)
		}
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-h.nns[old].done:
			t.Logf("the resumed %s was refused by the JournalNodes and stopped (status %d)", id, h.nns[old].cmd.ProcessState.ExitCode())
			return
		default:
		}
		if h.state(t, old) == "standby" {
			t.Logf("the resumed %s stepped down to standby", id)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the resumed %s neither stopped nor became standby:\n%s", id, tail(h.nns[old].logText(), 20))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestZKFCHungActiveQJournal: automatic failover over three JournalNode
// processes whose fencing method kills nothing (fence.sh only records, as
// shell(/bin/true)): the active is stopped with SIGSTOP, the other takes
// over, and the resumed NameNode cannot acknowledge a single write — the
// JournalNodes refuse its epoch — and ends stopped or standby.
func TestZKFCHungActiveQJournal(t *testing.T) {
	parallel(t)
	h := startZKHA(t, 3, zkHAOptions{qjournal: true, extra: map[string]string{"dfs.heartbeat.interval": "1"}})
	l := h.startLoad(t)
	time.Sleep(500 * time.Millisecond)
	h.hungActiveRound(t, l, true)
	l.stop(t)
}

// ---- long runs (HDFSGO_LONG=1) ----

func longRun(t *testing.T) {
	t.Helper()
	if os.Getenv("HDFSGO_LONG") != "1" {
		t.Skip("long run: set HDFSGO_LONG=1")
	}
}

// TestZKFCKillDistribution (HDFSGO_LONG=1): a three-server ZooKeeper
// ensemble on loopback addresses, session timeout 2000 ms, and 50 rounds
// of SIGKILL to the active NameNode under the write load. It logs the
// distribution of the time from the kill to the first acknowledged write
// (p50, p90, max) for docs/PERFORMANCE.md; no acknowledged file may be
// lost. Then ZooKeeper itself (every server) is killed and restarted
// after longer than the session timeout: the active stays active
// throughout and the other standby.
func TestZKFCKillDistribution(t *testing.T) {
	longRun(t)
	rounds := 50
	if n, err := strconv.Atoi(os.Getenv("HDFSGO_LONG_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	h := startZKHA(t, 3, zkHAOptions{zkServers: 3})
	l := h.startLoad(t)
	time.Sleep(time.Second)
	var gaps, actives []time.Duration
	for round := range rounds {
		gap, active := h.killActiveRound(t, l)
		gaps, actives = append(gaps, gap), append(actives, active)
		t.Logf("round %d: active after %v, first write acknowledged after %v", round, active, gap)
	}
	dist := func(ds []time.Duration) string {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		pct := func(p float64) time.Duration { return ds[int(p*float64(len(ds)-1)+0.5)].Round(time.Millisecond) }
		return fmt.Sprintf("p50 %v, p90 %v, max %v, min %v", pct(0.5), pct(0.9), pct(1), pct(0))
	}
	t.Logf("%d kills: kill -9 of the active to the first acknowledged write: %s", len(gaps), dist(gaps))
	t.Logf("%d kills: kill -9 of the active to the other answering /isActive with 200: %s", len(actives), dist(actives))

	// ZooKeeper restarted, every server.
	active := h.activeIndex(10 * time.Second)
	h.zk.StopAll()
	down := time.Now()
	for time.Since(down) < 4*time.Second {
		if a, b := h.isActive(active), h.isActive(1-active); a != "active" || b == "active" {
			t.Fatalf("ZooKeeper down %v: nn%d %s, nn%d %s", time.Since(down), active+1, a, 2-active, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.zk.StartAll()
	back := time.Now()
	for time.Since(back) < 5*time.Second {
		if a, b := h.isActive(active), h.isActive(1-active); a != "active" || b == "active" {
			t.Fatalf("ZooKeeper back %v: nn%d %s, nn%d %s", time.Since(back), active+1, a, 2-active, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("ZooKeeper (3 servers) down %v and back: nn%d stayed active", back.Sub(down).Round(time.Millisecond), active+1)
	l.stop(t)
}

// TestZKFCPartitionFromZooKeeper (HDFSGO_LONG=1, root, iptables): 20
// rounds in which the active's controller is cut off from every ZooKeeper
// server (its NameNode still reaches the shared edits, the DataNodes and
// the clients). After the session timeout the other controller takes the
// lock, fences the cut-off NameNode (gracefully: it answers) and makes its
// own active; the partition heals and the cut-off controller rejoins as
// standby. Writers on both sides — a client pinned to each NameNode —
// create the same names without overwriting: no name is acknowledged
// twice, nothing acknowledged is lost, and the two NameNodes are never
// seen active at once. (With qjournal:// the same holds when the graceful
// fence fails and the fencing method is shell(/bin/true): the epochs then
// refuse the old writer; over file:// fence.sh would kill it.)
func TestZKFCPartitionFromZooKeeper(t *testing.T) {
	longRun(t)
	testtool.Root(t, "iptables rules on loopback")
	testtool.Require(t, "iptables", "apt-get install -y iptables")
	h := startZKHA(t, 3, zkHAOptions{zkServers: 3, zkHosts: []string{"127.0.3.1", "127.0.3.2", "127.0.3.3"}})
	if h.hosts[0] == h.hosts[1] {
		t.Skip("needs a loopback address per NameNode")
	}
	p := newPartitioner(t)
	t.Cleanup(p.healAll)
	var pinned [2]*client.FileSystem
	for i := range 2 {
		c, err := client.New(client.Options{Addresses: []string{h.nnAddrs[i]}, User: osUser(t)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		pinned[i] = c
	}
	ctx := context.Background()
	if err := pinned[h.activeIndex(10*time.Second)].MkdirAll(ctx, "/p", 0o777); err != nil {
		t.Fatal(err)
	}
	type result struct {
		side int
		data []byte
	}
	acked := map[string][]result{}
	var mu sync.Mutex
	for round := range 20 {
		old := h.activeIndex(30 * time.Second)
		for _, zk := range h.zk.Hosts() {
			p.cut(h.hosts[old], zk)
		}
		cutAt := time.Now()
		// Both sides write the same names until the other side took over
		// and a few more after.
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for side := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; ; k++ {
					select {
					case <-stop:
						return
					default:
					}
					name := fmt.Sprintf("/p/r%02d-%04d", round, k)
					data := []byte(fmt.Sprintf("%s written through nn%d", name, side+1))
					wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
					err := pinned[side].WriteFile(wctx, name, data, false)
					cancel()
					if err == nil {
						mu.Lock()
						acked[name] = append(acked[name], result{side, data})
						mu.Unlock()
					}
					time.Sleep(10 * time.Millisecond)
				}
			}()
		}
		deadline := time.Now().Add(30 * time.Second)
		for h.isActive(1-old) != "active" {
			if h.isActive(old) == "active" && h.isActive(1-old) == "active" {
				t.Errorf("round %d: both NameNodes active", round)
			}
			if time.Now().After(deadline) {
				close(stop)
				wg.Wait()
				t.Fatalf("round %d: nn%d did not take over from the cut-off nn%d", round, 2-old, old+1)
			}
			time.Sleep(20 * time.Millisecond)
		}
		took := time.Since(cutAt)
		time.Sleep(time.Second)
		close(stop)
		wg.Wait()
		if s := h.isActive(old); s == "active" {
			t.Fatalf("round %d: the cut-off nn%d is still active", round, old+1)
		}
		p.healAll()
		h.waitState(old, "standby", 30*time.Second)
		t.Logf("round %d: nn%d cut from ZooKeeper; nn%d active %v later", round, old+1, 2-old, took)
	}
	mu.Lock()
	defer mu.Unlock()
	names := make([]string, 0, len(acked))
	for n := range acked {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		rs := acked[n]
		if len(rs) > 1 {
			t.Errorf("%s acknowledged by both sides: %d times", n, len(rs))
			continue
		}
		got, err := pinned[h.activeIndex(10*time.Second)].ReadFile(ctx, n)
		if err != nil || !bytes.Equal(got, rs[0].data) {
			t.Errorf("%s acknowledged through nn%d reads %q, %v", n, rs[0].side+1, got, err)
		}
	}
	t.Logf("20 partitions: %d names acknowledged, each once, all read back", len(names))
}
