package e2e

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
)

// The long quorum-journal tests are off by default: HDFSGO_LONG=1 runs
// TestQJMKillRounds with 50 rounds instead of 2, and TestQJMSplitBrain
// (which needs root and iptables as well).
const longEnv = "HDFSGO_LONG"

func long() bool { return os.Getenv(longEnv) == "1" }

// qjmCluster is an HA nameservice over three JournalNode processes: nn1
// and nn2, the JournalNodes jn0..jn2 and DataNodes, configured by XML
// files only, set up as Hadoop's guide says (JournalNodes first, then
// namenode -format, which formats them, then -bootstrapStandby).
type qjmCluster struct {
	*haCluster
	jc      *cluster // spawns the JournalNodes
	jnRPC   [3]string
	jnHTTP  [3]string
	jns     [3]*proc
	jnConfs [3]string
}

// jnHost gives JournalNode i its own loopback address when possible.
func jnHost(i int) string {
	h := "127.0.0." + strconv.Itoa(31+i)
	if l, err := net.Listen("tcp", h+":0"); err == nil {
		l.Close()
		return h
	}
	return "127.0.0.1"
}

func startQJM(t *testing.T, datanodes int, extra map[string]string) *qjmCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("runs processes; skipped with -short")
	}
	all := map[string]string{
		"dfs.ha.tail-edits.in-progress":      "true",
		"dfs.ha.tail-edits.period":           "100ms",
		"dfs.ha.allow.stale.reads":           "true",
		"dfs.qjournal.write-txns.timeout.ms": "3000",
		"dfs.journalnode.sync.interval":      "2000",
	}
	for k, v := range extra {
		all[k] = v
	}
	q := startJournalNodes(t, t.TempDir(), all)
	all["dfs.namenode.shared.edits.dir"] = q.uri()
	q.haCluster = startHA(t, datanodes, all)
	return q
}

// startJournalNodes starts three JournalNode processes of nameservice ns1
// under root, each with the keys of site besides its own; the NameNodes are
// left to the caller (q.haCluster is nil).
func startJournalNodes(t *testing.T, root string, site map[string]string) *qjmCluster {
	t.Helper()
	q := &qjmCluster{jc: &cluster{t: t, root: root}}
	for i := range 3 {
		host := jnHost(i)
		q.jnRPC[i] = fmt.Sprintf("%s:%d", host, freePort(t, host))
		q.jnHTTP[i] = fmt.Sprintf("%s:%d", host, freePort(t, host))
	}
	for i := range 3 {
		jn := map[string]string{
			"dfs.nameservices":              "ns1",
			"dfs.ha.namenodes.ns1":          "nn1,nn2",
			"dfs.namenode.shared.edits.dir": q.uri(),
			"dfs.journalnode.edits.dir":     filepath.Join(q.jc.root, fmt.Sprintf("jn%d", i)),
			"dfs.journalnode.rpc-address":   q.jnRPC[i],
			"dfs.journalnode.http-address":  q.jnHTTP[i],
		}
		for k, v := range site {
			if _, own := jn[k]; !own {
				jn[k] = v
			}
		}
		q.jnConfs[i] = q.jc.confDir(fmt.Sprintf("jn%d", i))
		writeConf(t, q.jnConfs[i], map[string]string{"fs.defaultFS": "hdfs://ns1"}, jn)
		q.startJN(i)
	}
	t.Cleanup(q.stopJNs)
	return q
}

// uri is the JournalNodes' qjournal:// URI.
func (q *qjmCluster) uri() string { return "qjournal://" + strings.Join(q.jnRPC[:], ";") + "/ns1" }

func (q *qjmCluster) startJN(i int) {
	q.t().Helper()
	q.jns[i] = q.jc.spawn(fmt.Sprintf("jn%d", i), q.jnConfs[i], "journalnode")
	waitPort(q.t(), q.jnRPC[i], q.jns[i])
}

func (q *qjmCluster) t() *testing.T { return q.jc.t }

func (q *qjmCluster) stopJNs() {
	for _, p := range q.jns {
		if p != nil {
			p.cmd.Process.Signal(os.Interrupt)
			waitOrKill(p)
		}
	}
	if q.t().Failed() {
		for _, p := range q.jns {
			if p != nil {
				q.t().Logf("%s log:\n%s", p.name, tail(p.logText(), 25))
			}
		}
	}
}

// waitPort waits until addr accepts connections (or p exits).
func waitPort(t *testing.T, addr string, p *proc) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited:\n%s", p.name, tail(p.logText(), 30))
		default:
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s does not listen on %s:\n%s", p.name, addr, tail(p.logText(), 30))
}

// waitOutOfSafeMode waits until NameNode i left start-up safe mode: a
// standby restarted a moment before has not heard every block yet, and
// refuses to become active until it has, as Hadoop's does.
func (q *qjmCluster) waitOutOfSafeMode(t *testing.T, i int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := q.runErr(q.confDir("nn"), nil, "dfsadmin", "-fs", "hdfs://"+q.nnAddrs[i], "-safemode", "get")
		if err == nil && strings.Contains(out, "OFF") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nn%d still in safe mode: %q, %v", i+1, out, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// active is the index of the active NameNode, -1 if none answers so.
func (q *qjmCluster) active(t *testing.T) int {
	for i := range 2 {
		if q.nns[i] != nil && q.state(t, i) == "active" {
			return i
		}
	}
	return -1
}

// model is what a workload of creates, renames and deletes had
// acknowledged: every file that must exist with its content's hash, every
// name that must not, and the names an unacknowledged op may have touched
// either way.
type model struct {
	mu        sync.Mutex
	files     map[string][32]byte
	gone      map[string]bool
	uncertain map[string]bool
	acks      int
	fails     int
}

func newModel() *model {
	return &model{files: map[string][32]byte{}, gone: map[string]bool{}, uncertain: map[string]bool{}}
}

// runOps creates, renames and deletes files under dir through fsys until
// ctx ends.
func (m *model) runOps(ctx context.Context, fsys *client.FileSystem, dir string, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 11))
	for i := 0; ctx.Err() == nil; i++ {
		octx, cancel := context.WithTimeout(ctx, 20*time.Second)
		m.mu.Lock()
		var names []string
		for n := range m.files {
			names = append(names, n)
		}
		m.mu.Unlock()
		sort.Strings(names)
		switch k := r.IntN(10); {
		case k < 6 || len(names) < 5:
			name := fmt.Sprintf("%s/f%06d", dir, i)
			data := make([]byte, 1+r.IntN(16<<10))
			for j := range data {
				data[j] = byte(r.Uint32())
			}
			err := fsys.WriteFile(octx, name, data, false)
			m.record(err, func() { m.files[name] = sha256.Sum256(data) }, name)
		case k < 8:
			from := names[r.IntN(len(names))]
			to := fmt.Sprintf("%s/r%06d", dir, i)
			err := fsys.Rename(octx, from, to)
			m.record(err, func() { m.files[to] = m.files[from]; delete(m.files, from); m.gone[from] = true }, from, to)
		default:
			name := names[r.IntN(len(names))]
			err := fsys.Remove(octx, name)
			m.record(err, func() { delete(m.files, name); m.gone[name] = true }, name)
		}
		cancel()
	}
}

// workload runs a model's creates, renames and deletes under a directory
// in the background until stop.
type workload struct {
	*model
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startWorkload makes dir and starts the ops under it through fsys.
func startWorkload(t *testing.T, fsys *client.FileSystem, dir string, seed uint64) *workload {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &workload{model: newModel(), cancel: cancel}
	t.Cleanup(w.stop)
	if err := fsys.MkdirAll(ctx, dir, 0o777); err != nil {
		t.Fatal(err)
	}
	w.wg.Add(1)
	go func() { defer w.wg.Done(); w.runOps(ctx, fsys, dir, seed) }()
	return w
}

// waitAcks waits until n more ops are acknowledged; why names the moment
// in the failure.
func (w *workload) waitAcks(t *testing.T, n int, why string) {
	t.Helper()
	want := w.ackCount() + n
	deadline := time.Now().Add(60 * time.Second)
	for w.ackCount() < want {
		if time.Now().After(deadline) {
			w.stop()
			t.Fatalf("%s: no progress (%d acknowledged, want %d)", why, w.ackCount(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop ends the ops and waits for the one in flight.
func (w *workload) stop() {
	w.cancel()
	w.wg.Wait()
}

func (m *model) record(err error, apply func(), names ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		apply()
		m.acks++
		return
	}
	m.fails++
	for _, n := range names {
		m.uncertain[n] = true
		delete(m.files, n)
	}
	time.Sleep(20 * time.Millisecond)
}

func (m *model) ackCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.acks
}

// check reads the namespace through fsys: every acknowledged file is there
// with its content, every acknowledged delete and rename source is gone,
// and anything else under dir is a name an unacknowledged op touched.
func (m *model) check(t *testing.T, ctx context.Context, fsys *client.FileSystem, dir string) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, sum := range m.files {
		got, err := fsys.ReadFile(ctx, name)
		if err != nil || sha256.Sum256(got) != sum {
			t.Errorf("acknowledged %s: %d bytes, %v, or its content differs", name, len(got), err)
		}
	}
	entries, err := fsys.ReadDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := dir + "/" + e.Name()
		if _, ok := m.files[name]; ok || m.uncertain[name] {
			continue
		}
		if m.gone[name] {
			t.Errorf("%s is there, but its delete or rename was acknowledged", name)
		} else {
			t.Errorf("%s is there, but no op creating it was attempted", name)
		}
	}
	t.Logf("%d ops acknowledged, %d failed; %d files checked", m.acks, m.fails, len(m.files))
}

// listing is the namespace under / as one NameNode holds it (path, kind,
// length), read from that NameNode alone.
func listing(ctx context.Context, addr, user string) (string, error) {
	fsys, err := client.New(client.Options{Addresses: []string{addr}, User: user})
	if err != nil {
		return "", err
	}
	defer fsys.Close()
	var b strings.Builder
	err = fs.WalkDir(fsys.FS(ctx), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d\n", p, d.IsDir(), fi.Size())
		return nil
	})
	return b.String(), err
}

// waitSameNamespace waits until the standby holds the active's namespace.
func (q *qjmCluster) waitSameNamespace(t *testing.T, active int) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		a, errA := listing(ctx, q.nnAddrs[active], osUser(t))
		s, errS := listing(ctx, q.nnAddrs[1-active], osUser(t))
		if errA == nil && errS == nil && a == s {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby's namespace differs from the active's (%v, %v):\nactive:\n%s\nstandby:\n%s", errA, errS, tail(a, 15), tail(s, 15))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestQJMKillRounds: three JournalNodes, two NameNodes and three DataNodes
// as processes, configured by XML files only. Writers create, rename and
// delete files while, round after round, a random JournalNode or NameNode
// is killed with SIGKILL and the cluster recovers: a JournalNode is
// restarted; a killed standby is restarted; a killed active is replaced by
// `hdfs haadmin -failover` (shell fencing) and restarted as the standby.
// Rounds without a NameNode kill end with a graceful failover. At the end
// every acknowledged op is in the namespace, and the standby's namespace
// equals the active's. 2 rounds by default (a JournalNode kill and an
// active kill); HDFSGO_LONG=1 runs 50 random ones.
func TestQJMKillRounds(t *testing.T) {
	q := startQJM(t, 3, map[string]string{"dfs.namenode.safemode.extension": "0"})
	rounds := []string{"jn", "active"}
	seed := uint64(time.Now().UnixNano())
	if long() {
		r := rand.New(rand.NewPCG(seed, 3))
		rounds = nil
		for range 50 {
			rounds = append(rounds, []string{"jn", "jn", "active", "standby"}[r.IntN(4)])
		}
	}
	t.Logf("seed %d, rounds %v", seed, rounds)
	r := rand.New(rand.NewPCG(seed, 5))
	fsys := q.ourClient(t)
	m := startWorkload(t, fsys, "/w", seed)
	m.waitAcks(t, 10, "before the first round")
	for i, kind := range rounds {
		active := q.active(t)
		if active < 0 {
			m.stop()
			t.Fatalf("round %d: no active NameNode", i)
		}
		switch kind {
		case "jn":
			j := r.IntN(3)
			q.kill(q.jns[j])
			m.waitAcks(t, 5, fmt.Sprintf("round %d: with jn%d killed", i, j))
			q.startJN(j)
			to := 1 - active
			if out := q.haadmin(t, "-failover", fmt.Sprintf("nn%d", active+1), fmt.Sprintf("nn%d", to+1)); !strings.Contains(out, "successful") {
				t.Fatalf("round %d: haadmin -failover: %q", i, out)
			}
		case "standby":
			s := 1 - active
			q.kill(q.nns[s])
			m.waitAcks(t, 5, fmt.Sprintf("round %d: with the standby nn%d killed", i, s+1))
			q.startNN(s)
			q.waitRPC(s)
			q.waitOutOfSafeMode(t, s)
		case "active":
			q.kill(q.nns[active])
			to := 1 - active
			if out := q.haadmin(t, "-failover", fmt.Sprintf("nn%d", active+1), fmt.Sprintf("nn%d", to+1)); !strings.Contains(out, "successful") {
				t.Fatalf("round %d: haadmin -failover from the killed nn%d: %q", i, active+1, out)
			}
			q.startNN(active)
			q.waitRPC(active)
			q.waitOutOfSafeMode(t, active)
		}
		m.waitAcks(t, 5, fmt.Sprintf("round %d (%s) after recovery", i, kind))
	}
	m.stop()
	active := q.active(t)
	if active < 0 {
		t.Fatal("no active NameNode at the end")
	}
	m.check(t, context.Background(), fsys, "/w")
	q.waitSameNamespace(t, active)
}

// TestQJMJournalNodesDown: three JournalNodes, two NameNodes and three
// DataNodes as processes under a load of creates, renames and deletes. One
// JournalNode is killed: writes go on. The active rolls its edits while it
// is down, so it misses a finalized segment; restarted, it fetches that
// segment from its peers (JournalNode sync). Then two JournalNodes are
// killed: the active cannot reach a majority, stops acknowledging and exits
// within the write timeout with a failure status. With the JournalNodes
// back and the standby made active, every acknowledged op is there.
func TestQJMJournalNodesDown(t *testing.T) {
	parallel(t)
	q := startQJM(t, 3, map[string]string{"dfs.namenode.safemode.extension": "0"})
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	fsys := q.ourClient(t)
	m := startWorkload(t, fsys, "/w", seed)
	m.waitAcks(t, 10, "before the faults")
	active := q.active(t)
	if active < 0 {
		t.Fatal("no active NameNode")
	}

	q.kill(q.jns[2])
	m.waitAcks(t, 10, "with jn2 killed")
	if out, err := q.runErr(q.confDir("nn"), nil, "dfsadmin", "-fs", "hdfs://"+q.nnAddrs[active], "-rollEdits"); err != nil {
		t.Fatalf("dfsadmin -rollEdits: %v: %s", err, out)
	}
	m.waitAcks(t, 10, "after the roll, jn2 still down")
	q.startJN(2)
	m.waitAcks(t, 5, "with jn2 back")
	// Every segment jn0 has finalized by now must reach jn2: the one of the
	// roll was written while jn2 was down.
	cur := func(i int) string { return filepath.Join(q.jc.root, fmt.Sprintf("jn%d", i), "ns1", "current") }
	want := finalizedSegments(t, cur(0))
	if len(want) == 0 {
		t.Fatal("jn0 holds no finalized segment after a roll")
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := finalizedSegments(t, cur(2))
		missing := 0
		for name, size := range want {
			if got[name] != size {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jn2 still misses %d of jn0's %d finalized segments (has %v, jn0 %v):\n%s", missing, len(want), got, want, tail(q.jns[2].logText(), 20))
		}
		time.Sleep(200 * time.Millisecond)
	}

	q.kill(q.jns[1])
	q.kill(q.jns[2])
	killed, acksAtKill := time.Now(), m.ackCount()
	select {
	case <-q.nns[active].done:
	case <-time.After(30 * time.Second):
		m.stop()
		t.Fatalf("nn%d still runs 30 s after two of three JournalNodes died:\n%s", active+1, tail(q.nns[active].logText(), 20))
	}
	if code := q.nns[active].cmd.ProcessState.ExitCode(); code == 0 {
		t.Fatalf("nn%d exited with status 0 after losing the quorum:\n%s", active+1, tail(q.nns[active].logText(), 10))
	}
	t.Logf("nn%d exited %v after two JournalNodes were killed; %d ops acknowledged in between (their batches had reached a majority before)",
		active+1, time.Since(killed).Round(time.Millisecond), m.ackCount()-acksAtKill)

	q.startJN(1)
	q.startJN(2)
	to := 1 - active
	if out := q.haadmin(t, "-failover", fmt.Sprintf("nn%d", active+1), fmt.Sprintf("nn%d", to+1)); !strings.Contains(out, "successful") {
		t.Fatalf("haadmin -failover from the stopped nn%d: %q", active+1, out)
	}
	q.startNN(active)
	q.waitRPC(active)
	m.waitAcks(t, 5, "on the new active")
	m.stop()
	m.check(t, context.Background(), fsys, "/w")
	q.waitSameNamespace(t, to)
}

// finalizedSegments lists the finalized edit segments in a JournalNode's
// current directory with their sizes.
func finalizedSegments(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "edits_") || strings.HasPrefix(name, "edits_inprogress") {
			continue
		}
		if fi, err := e.Info(); err == nil {
			out[name] = fi.Size()
		}
	}
	return out
}
