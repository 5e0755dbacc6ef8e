package e2e

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	stock "github.com/colinmarc/hdfs/v2"

	"github.com/hdfsgo/hdfsgo/client"
)

// haCluster is an HA nameservice as processes: nn1 and nn2 over a shared
// edits dir, and DataNodes, configured by XML files only.
type haCluster struct {
	*cluster
	nnAddrs   [2]string
	httpAddrs [2]string
	nns       [2]*proc
	site      map[string]string
}

// startHA formats nn1 (and the shared edits) and starts it, bootstraps nn2
// from it with -bootstrapStandby and starts it, and makes nn1 active with
// haadmin: Hadoop's documented set-up, step by step.
func startHA(t *testing.T, datanodes int, extra map[string]string) *haCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("runs processes; skipped with -short")
	}
	h := &haCluster{cluster: &cluster{t: t, root: t.TempDir(), extra: extra}}
	for i := range 2 {
		h.nnAddrs[i] = fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
		h.httpAddrs[i] = fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
	}
	h.nnAddr = h.nnAddrs[0]
	h.site = map[string]string{
		"dfs.nameservices":                       "ns1",
		"dfs.ha.namenodes.ns1":                   "nn1,nn2",
		"dfs.namenode.rpc-address.ns1.nn1":       h.nnAddrs[0],
		"dfs.namenode.rpc-address.ns1.nn2":       h.nnAddrs[1],
		"dfs.namenode.http-address.ns1.nn1":      h.httpAddrs[0],
		"dfs.namenode.http-address.ns1.nn2":      h.httpAddrs[1],
		"dfs.namenode.shared.edits.dir":          "file://" + filepath.Join(h.root, "shared"),
		"dfs.client.failover.proxy.provider.ns1": "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider",
		"dfs.ha.fencing.methods":                 "shell(/bin/true)",
		"dfs.ha.tail-edits.period":               "1s",
		"dfs.ha.log-roll.period":                 "5s",
	}
	for k, v := range extra {
		h.site[k] = v
	}
	core := map[string]string{"fs.defaultFS": "hdfs://ns1"}
	for i := range 2 {
		site := map[string]string{"dfs.namenode.name.dir": filepath.Join(h.root, fmt.Sprintf("nn%d", i+1), "name"),
			"dfs.ha.namenode.id": fmt.Sprintf("nn%d", i+1)}
		for k, v := range h.site {
			site[k] = v
		}
		writeConf(t, h.confDir(fmt.Sprintf("nn%d", i+1)), core, site)
	}
	writeConf(t, h.confDir("nn"), core, h.site) // the clients' and admins' configuration
	h.run(t, h.confDir("nn1"), "namenode", "-format", "-nonInteractive")
	h.startNN(0)
	h.waitRPC(0)
	h.run(t, h.confDir("nn2"), "namenode", "-bootstrapStandby", "-nonInteractive")
	h.startNN(1)
	h.waitRPC(1)
	h.haadmin(t, "-transitionToActive", "nn1")
	h.nn = h.nns[0]
	h.dns = make([]*proc, datanodes)
	for i := range datanodes {
		h.startHADataNode(i)
	}
	t.Cleanup(h.stopHA)
	h.waitLive(datanodes, 60*time.Second)
	return h
}

func (h *haCluster) startNN(i int) {
	h.nns[i] = h.spawn(fmt.Sprintf("nn%d", i+1), h.confDir(fmt.Sprintf("nn%d", i+1)), "namenode")
}

// waitRPC waits until NameNode i accepts connections.
func (h *haCluster) waitRPC(i int) {
	h.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := h.runErr(h.confDir("nn"), nil, "haadmin", "-getServiceState", fmt.Sprintf("nn%d", i+1)); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.t.Fatalf("nn%d did not start:\n%s", i+1, tail(h.nns[i].logText(), 30))
}

func (h *haCluster) startHADataNode(i int) {
	host := dnHost(i)
	role := fmt.Sprintf("dn%d", i)
	site := map[string]string{
		"dfs.datanode.data.dir":     filepath.Join(h.root, role, "data"),
		"dfs.datanode.address":      fmt.Sprintf("%s:%d", host, freePort(h.t, host)),
		"dfs.datanode.ipc.address":  fmt.Sprintf("%s:%d", host, freePort(h.t, host)),
		"dfs.datanode.http.address": host + ":0",
		"dfs.datanode.hostname":     host,
	}
	for k, v := range h.site {
		site[k] = v
	}
	if _, err := os.Stat(filepath.Join(h.confDir(role), "hdfs-site.xml")); err != nil {
		writeConf(h.t, h.confDir(role), map[string]string{"fs.defaultFS": "hdfs://ns1"}, site)
	}
	h.dns[i] = h.spawn(role, h.confDir(role), "datanode")
}

func (h *haCluster) haadmin(t *testing.T, args ...string) string {
	t.Helper()
	return h.run(t, h.confDir("nn"), append([]string{"haadmin"}, args...)...)
}

func (h *haCluster) stopHA() {
	h.nn = nil
	h.stopAll()
	for _, p := range h.nns {
		if p != nil {
			p.cmd.Process.Signal(os.Interrupt)
			waitOrKill(p)
		}
	}
	if h.t.Failed() {
		for _, p := range h.nns {
			if p != nil {
				h.t.Logf("%s log:\n%s", p.name, tail(p.logText(), 40))
			}
		}
	}
}

// state is `hdfs haadmin -getServiceState nnI`'s answer.
func (h *haCluster) state(t *testing.T, i int) string {
	t.Helper()
	out, err := h.runErr(h.confDir("nn"), nil, "haadmin", "-getServiceState", fmt.Sprintf("nn%d", i+1))
	if err != nil {
		return "unreachable"
	}
	return strings.TrimSpace(out)
}

// ourClient is our client library on hdfs://ns1 with both NameNodes, as
// `hdfs dfs` builds it from the nameservice keys (the e2e tests drive the
// shell itself through the binary).
func (h *haCluster) ourClient(t *testing.T) *client.FileSystem {
	t.Helper()
	fsys, err := client.New(client.Options{Addresses: h.nnAddrs[:], Authority: "ns1", User: osUser(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys
}

// stockHAClient is the stock Go client with both NameNodes: it fails over
// on StandbyException.
func (h *haCluster) stockHAClient(t *testing.T) *stock.Client {
	t.Helper()
	cl, err := stock.NewClient(stock.ClientOptions{Addresses: h.nnAddrs[:], User: osUser(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// TestHAFailoverUnderLoad: writers through our client (hdfs://ns1) and the
// stock client keep writing and reading while `hdfs haadmin -failover`
// switches the active NameNode back and forth 20 times. Every acknowledged
// file reads back intact at the end; the time from the start of each
// failover to the first write acknowledged after it is logged (median,
// max), for docs/PERFORMANCE.md.
func TestHAFailoverUnderLoad(t *testing.T) {
	parallel(t)
	h := startHA(t, 3, nil)
	ours, theirs := h.ourClient(t), h.stockHAClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := ours.MkdirAll(ctx, "/load", 0o777); err != nil {
		t.Fatal(err)
	}
	type ack struct {
		name string
		sum  [32]byte
		at   time.Time
	}
	var mu sync.Mutex
	var acks []ack
	writeErrs := map[int]int{}
	firstErr := map[int]error{}
	var wg sync.WaitGroup
	writer := func(id int, put func(name string, data []byte) error) {
		defer wg.Done()
		r := rand.New(rand.NewPCG(uint64(id), 7))
		for i := 0; ctx.Err() == nil && i < 100000; i++ {
			data := make([]byte, 1+r.IntN(200<<10))
			for k := range data {
				data[k] = byte(r.Uint32())
			}
			name := fmt.Sprintf("/load/w%d-%05d", id, i)
			if err := put(name, data); err != nil {
				mu.Lock()
				if writeErrs[id]++; firstErr[id] == nil {
					firstErr[id] = err
				}
				mu.Unlock()
				time.Sleep(10 * time.Millisecond)
				continue
			}
			mu.Lock()
			acks = append(acks, ack{name, sha256.Sum256(data), time.Now()})
			mu.Unlock()
		}
	}
	wg.Add(2)
	go writer(1, func(name string, data []byte) error {
		wctx, c := context.WithTimeout(ctx, 30*time.Second)
		defer c()
		return ours.WriteFile(wctx, name, data, false)
	})
	go writer(2, func(name string, data []byte) error {
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

	var gaps []time.Duration
	active := 0
	for round := range 20 {
		time.Sleep(300 * time.Millisecond)
		to := 1 - active
		start := time.Now()
		out := h.haadmin(t, "-failover", fmt.Sprintf("nn%d", active+1), fmt.Sprintf("nn%d", to+1))
		if !strings.Contains(out, "successful") {
			t.Fatalf("round %d: haadmin -failover said %q", round, out)
		}
		// Writes acknowledged once haadmin returned were acknowledged by
		// the new active (the old one is standby by then).
		done := time.Now()
		active = to
		deadline := time.Now().Add(30 * time.Second)
		for {
			mu.Lock()
			var first time.Time
			for _, a := range acks {
				if !a.at.Before(done) && (first.IsZero() || a.at.Before(first)) {
					first = a.at
				}
			}
			mu.Unlock()
			if !first.IsZero() {
				gaps = append(gaps, first.Sub(start))
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no write acknowledged within 30 s of the failover", round)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if got := h.state(t, active); got != "active" {
			t.Fatalf("round %d: nn%d is %q after the failover", round, active+1, got)
		}
	}
	cancel()
	wg.Wait()
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	t.Logf("20 failovers: failover start to the first write the new active acknowledged: median %v, max %v (all: %v); %d files acknowledged; failed writes by writer %v (first errors %v)",
		gaps[len(gaps)/2], gaps[len(gaps)-1], gaps, len(acks), writeErrs, firstErr)
	for _, a := range acks {
		got, err := ours.ReadFile(context.Background(), a.name)
		if err != nil || sha256.Sum256(got) != a.sum {
			t.Errorf("acknowledged %s: %d bytes, %v, or content differs", a.name, len(got), err)
		}
	}
	if !slices.Contains([]string{"standby"}, h.state(t, 1-active)) {
		t.Errorf("the other NameNode is %q, want standby", h.state(t, 1-active))
	}
}

// TestHAKillActive: the active is killed with SIGKILL right after a create
// it acknowledged (its last edits are in the in-progress segment of the
// shared edits); `hdfs haadmin -failover` finds it unreachable, fences it
// with the configured shell method and makes the standby active, which has
// every acknowledged file. Then the old NameNode comes back as a standby,
// the new active is killed in turn, and `-transitionToActive --forceactive`
// brings the first one back: still nothing acknowledged is lost.
func TestHAKillActive(t *testing.T) {
	parallel(t)
	marker := filepath.Join(t.TempDir(), "fenced")
	h := startHA(t, 3, map[string]string{
		"dfs.ha.fencing.methods": "shell(echo \"$target_nameserviceid $target_namenodeid $target_host:$target_port\" >> " + marker + ")",
		// The restarted NameNode leaves start-up safe mode as soon as its
		// blocks are reported, so that it can take writes when made active.
		"dfs.namenode.safemode.extension": "0",
	})
	ours := h.ourClient(t)
	ctx := context.Background()
	var acked []string
	create := func(n int) {
		for i := range n {
			name := fmt.Sprintf("/acked-%d-%d", len(acked), i)
			if err := ours.WriteFile(ctx, name, []byte(name), false); err != nil {
				t.Fatalf("write %s: %v", name, err)
			}
			acked = append(acked, name)
		}
	}
	check := func(when string) {
		for _, name := range acked {
			got, err := ours.ReadFile(ctx, name)
			if err != nil || string(got) != name {
				t.Fatalf("%s: %s reads %q, %v", when, name, got, err)
			}
		}
	}
	create(30)
	h.kill(h.nns[0]) // right after an acknowledged create
	out := h.haadmin(t, "-failover", "nn1", "nn2")
	if !strings.Contains(out, "successful") {
		t.Fatalf("haadmin -failover: %q", out)
	}
	fenced, err := os.ReadFile(marker)
	if err != nil || !strings.Contains(string(fenced), "ns1 nn1 ") {
		t.Fatalf("the shell fencing method did not run for nn1: %q, %v", fenced, err)
	}
	check("after the failover from a killed active")
	create(10)

	h.startNN(0) // back, as a standby
	h.waitRPC(0)
	if got := h.state(t, 0); got != "standby" {
		t.Fatalf("nn1 came back as %q, want standby", got)
	}
	time.Sleep(2 * time.Second) // let it tail what nn2 wrote
	h.kill(h.nns[1])
	h.haadmin(t, "-transitionToActive", "--forceactive", "nn1")
	if got := h.state(t, 0); got != "active" {
		t.Fatalf("nn1 is %q after -transitionToActive --forceactive", got)
	}
	check("after -transitionToActive --forceactive")
	create(5)
	check("at the end")
}
