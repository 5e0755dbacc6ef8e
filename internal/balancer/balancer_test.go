package balancer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/dtsasl"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/minicluster"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/security"
	"google.golang.org/protobuf/proto"
)

func TestByteDesc(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1 KB", 1536: "1.50 KB", 10 << 20: "10 MB",
		(1 << 30) - 1: "1.00 GB", 3<<30 + 1<<29: "3.50 GB", -1: "-1 B", 5 << 40: "5 TB",
	} {
		if got := byteDesc(n); got != want {
			t.Errorf("byteDesc(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTime2Str(t *testing.T) {
	for d, want := range map[time.Duration]string{
		450 * time.Millisecond: "450.0 milliseconds", 12 * time.Second: "12.0 seconds",
		4567 * time.Millisecond: "4.567 seconds", 90 * time.Second: "1.5 minutes", 2 * time.Hour: "2.0 hours",
	} {
		if got := time2Str(d); got != want {
			t.Errorf("time2Str(%v) = %q, want %q", d, got, want)
		}
	}
	if got := javaDate(time.Date(2026, 3, 5, 13, 2, 3, 0, time.UTC)); got != "Mar 5, 2026 1:02:03 PM" {
		t.Errorf("javaDate = %q", got)
	}
}

// skewed is a cluster of three full DataNodes and a fourth, empty one, each
// volume 64 MiB as the DataNodes see it.
type skewed struct {
	c     *minicluster.Cluster
	fs    *client.FileSystem
	files map[string][]byte
	admin *ipc.Client
	// protection is dfs.data.transfer.protection when the test set it.
	protection string
}

// capacityKV asks startSkewed for volumes of another size.
func capacityKV(size int64) []conf.KeyValue {
	return []conf.KeyValue{{Key: capacityKey, Value: fmt.Sprint(size)}}
}

// capacityKey is not a configuration key: startSkewed takes it out.
const capacityKey = "test.capacity"

// startSkewed writes files×fileSize bytes with replication 3 on three
// DataNodes, then starts the empty fourth.
func startSkewed(t testing.TB, files, fileSize int, extra ...conf.KeyValue) *skewed {
	t.Helper()
	ctx := context.Background()
	capacity := int64(64 << 20)
	var rest []conf.KeyValue
	for _, kv := range extra {
		if kv.Key == capacityKey {
			fmt.Sscan(kv.Value, &capacity)
			continue
		}
		rest = append(rest, kv)
	}
	extra = rest
	kv := append([]conf.KeyValue{
		{Key: conf.DFSHeartbeatInterval, Value: "200ms"},
		{Key: conf.DFSNameNodeRedundancyInterval, Value: "200ms"},
		{Key: conf.DFSBlockSize, Value: "1m"},
	}, extra...)
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), DataNodes: 3, DataNodeCapacity: capacity, Conf: kv})
	if err != nil {
		t.Fatal(err)
	}
	s := &skewed{c: c, files: map[string][]byte{}}
	for _, e := range extra {
		if e.Key == conf.DFSDataTransferProtection {
			s.protection = e.Value
		}
	}
	t.Cleanup(func() { c.Close() })
	if s.fs, err = client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, DataTransferProtection: s.protection}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.fs.Close() })
	rnd := rand.NewChaCha8([32]byte{9})
	if err := s.fs.MkdirAll(ctx, "/data", 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range files {
		data := make([]byte, fileSize)
		rnd.Read(data)
		name := fmt.Sprintf("/data/f%03d", i)
		if err := s.fs.WriteFile(ctx, name, data, false); err != nil {
			t.Fatal(err)
		}
		s.files[name] = data
	}
	// Every replica is reported before the fourth node joins: a block
	// still waiting for a report would otherwise be copied to it.
	s.admin = ipc.NewClient(ipc.ClientConfig{Addresses: []string{c.NameNodeAddr()}, User: c.NameNode().SuperUser(), Protocol: clientProtocol})
	t.Cleanup(func() { s.admin.Close() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var st hdfs.GetFsStatsResponseProto
		if err := s.admin.Call(ctx, "getFsStats", &hdfs.GetFsStatusRequestProto{}, &st); err != nil {
			t.Fatal(err)
		}
		if st.GetUnderReplicated() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d blocks still under-replicated", st.GetUnderReplicated())
		}
	}
	if err := c.StartDataNode(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	// Wait until the NameNode's report shows the four nodes and every
	// replica (a block whose pipeline lost a node may have been copied to
	// the new one meanwhile).
	s.waitUsage(t, func(used []int64) bool {
		var sum int64
		for _, u := range used {
			sum += u
		}
		return len(used) == 4 && sum >= 3*int64(files*fileSize)
	})
	return s
}

// usage is the NameNode's view: DFS used and capacity per live node.
func (s *skewed) usage(t testing.TB) (used, capacity []int64) {
	var rep hdfs.GetDatanodeReportResponseProto
	if err := s.admin.Call(context.Background(), "getDatanodeReport",
		&hdfs.GetDatanodeReportRequestProto{Type: hdfs.DatanodeReportTypeProto_LIVE.Enum()}, &rep); err != nil {
		t.Fatal(err)
	}
	for _, d := range rep.GetDi() {
		used = append(used, int64(d.GetDfsUsed()))
		capacity = append(capacity, int64(d.GetCapacity()))
	}
	return used, capacity
}

func (s *skewed) waitUsage(t testing.TB, ok func(used []int64) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		used, _ := s.usage(t)
		if ok(used) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("DataNode usage %v never reached the expected state", used)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *skewed) config(t testing.TB) Config {
	var dt dtsasl.Config
	if s.protection != "" {
		q, err := security.ParseProtection(conf.DFSDataTransferProtection, s.protection)
		if err != nil {
			t.Fatal(err)
		}
		dt.Protection = q
	}
	return Config{
		DataTransfer: dt,
		NameNodes:    []string{s.c.NameNodeAddr()}, Authority: s.c.NameNodeAddr(), URI: s.c.URI(),
		User: s.c.NameNode().SuperUser(), Threshold: 10, IdleIterations: 5,
		MaxConcurrentMoves: 100, GetBlocksSize: 2 << 30, GetBlocksMinSize: 1, MaxSizeToMove: 10 << 30, BlockSize: 1 << 20,
		MaxNoMoveInterval: 10 * time.Second, MaxIterationTime: 20 * time.Minute, MovedWinWidth: 90 * time.Minute,
		Sleep: 600 * time.Millisecond, Rand: rand.New(rand.NewPCG(1, 2)),
	}
}

// withinThreshold checks every node's utilization against the average.
func withinThreshold(used, capacity []int64, threshold float64) (bool, string) {
	var u, c int64
	for i := range used {
		u += used[i]
		c += capacity[i]
	}
	avg := float64(u) * 100 / float64(c)
	var b strings.Builder
	ok := true
	for i := range used {
		util := float64(used[i]) * 100 / float64(capacity[i])
		fmt.Fprintf(&b, "%.1f%% ", util)
		if util-avg > threshold || avg-util > threshold {
			ok = false
		}
	}
	return ok, fmt.Sprintf("utilizations %s(average %.1f%%)", b.String(), avg)
}

// TestBalancerSkewedCluster: three full DataNodes and an empty one. A run
// stopped while moving exits Interrupted and leaves no id file; run again,
// the balancer moves replicas to the empty node until every node is within
// the threshold, prints Hadoop's table and final line, exits 0 and leaves
// no id file; every file reads back.
func TestBalancerSkewedCluster(t *testing.T) {
	s := startSkewed(t, 24, 1<<20)
	if used, capacity := s.usage(t); func() bool { ok, _ := withinThreshold(used, capacity, 10); return ok }() {
		t.Fatal("the cluster is balanced before the balancer ran")
	}
	// Stopped in the middle (Ctrl-C), a run says so, exits Interrupted and
	// leaves no id file; the DataNodes' moves are slow here (1 MiB/s) so
	// that it is stopped while moving.
	setBandwidth := func(bw int64) {
		if err := s.admin.Call(context.Background(), "setBalancerBandwidth", &hdfs.SetBalancerBandwidthRequestProto{Bandwidth: proto.Int64(bw)},
			&hdfs.SetBalancerBandwidthResponseProto{}); err != nil {
			t.Fatal(err)
		}
		for _, dn := range s.c.DataNodes() {
			waitBandwidth(t, dn.IPCAddr().String(), bw)
		}
	}
	setBandwidth(1 << 20)
	stopCtx, stop := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, stop)
	var stopped bytes.Buffer
	if st := Run(stopCtx, s.config(t), &stopped); st != Interrupted ||
		!strings.Contains(stopped.String(), "java.lang.InterruptedException.  Exiting ...") {
		t.Fatalf("stopped run: status %d\n%s", st, stopped.String())
	}
	if _, err := s.fs.Stat(context.Background(), IDPath); err == nil {
		t.Fatalf("%s left behind by the stopped run", IDPath)
	}
	// Run again, at the default rate: it carries on to the end.
	setBandwidth(100 << 20)
	var out bytes.Buffer
	var mu sync.Mutex
	var iterations []IterationStats
	cfg := s.config(t)
	cfg.Observe = func(st IterationStats) {
		mu.Lock()
		defer mu.Unlock()
		iterations = append(iterations, st)
	}
	if st := Run(context.Background(), cfg, &out); st != Success {
		t.Fatalf("exit status %d, want 0:\n%s", st, out.String())
	}
	text := out.String()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if lines[0] != "Time Stamp               Iteration#  Bytes Already Moved  Bytes Left To Move  Bytes Being Moved  NameNode" ||
		!strings.Contains(text, "The cluster is balanced. Exiting...") || !strings.Contains(lines[len(lines)-1], "Balancing took ") {
		t.Fatalf("output:\n%s", text)
	}
	// The moves the stopped run handed to the DataNodes go on without it
	// (as in Hadoop): the second run either moves bytes itself or finds
	// those moves done (its own to the same targets fail) and the cluster
	// balanced.
	var moved, failed int64
	for _, it := range iterations {
		moved += it.BytesMoved
		failed += int64(it.FailedMoves)
	}
	if len(iterations) == 0 || moved == 0 && failed == 0 {
		t.Fatalf("no bytes moved: %+v\n%s", iterations, text)
	}
	// The row of the first iteration names the NameNode and what moved.
	if !strings.Contains(lines[1], s.c.URI()) || !strings.Contains(lines[1], "         0  ") {
		t.Fatalf("first row %q", lines[1])
	}
	// The NameNode's fresh view agrees once the deletions are reported.
	s.waitUsage(t, func(used []int64) bool {
		_, capacity := s.usage(t)
		ok, _ := withinThreshold(used, capacity, 10)
		return ok
	})
	ctx := context.Background()
	for name, want := range s.files {
		r, err := s.fs.Open(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s reads back wrong after balancing: %v", name, err)
		}
	}
	if _, err := s.fs.Stat(ctx, IDPath); err == nil {
		t.Fatalf("%s left behind", IDPath)
	}
	used, capacity := s.usage(t)
	_, desc := withinThreshold(used, capacity, 10)
	t.Logf("%d iterations; %s\n%s", len(iterations), desc, text)
}

// TestBalancerRunsOnce: while /system/balancer.id is held open by another
// balancer, a second one exits with Hadoop's message; once the first is
// gone (its file closed but left behind, as after a crash and lease
// recovery) a new run takes the file over and finds the cluster balanced.
func TestBalancerRunsOnce(t *testing.T) {
	ctx := context.Background()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), DataNodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	other, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, User: c.NameNode().SuperUser()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	w, err := other.CreateFile(ctx, IDPath, client.CreateOptions{CreateParent: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("otherhost")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	s := &skewed{c: c}
	cfg := s.config(t)
	var out bytes.Buffer
	if st := Run(ctx, cfg, &out); st != IOException || !strings.Contains(out.String(), "java.io.IOException: Another Balancer is running..  Exiting ...") {
		t.Fatalf("second balancer: status %d\n%s", st, out.String())
	}
	if _, err := other.Stat(ctx, IDPath); err != nil {
		t.Fatalf("the running balancer's file is gone: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if st := Run(ctx, cfg, &out); st != Success || !strings.Contains(out.String(), "The cluster is balanced. Exiting...") {
		t.Fatalf("rerun: status %d\n%s", st, out.String())
	}
	if _, err := other.Stat(ctx, IDPath); err == nil {
		t.Fatalf("%s left behind", IDPath)
	}
}

// TestBalancerDataTransferProtection: with block tokens and
// dfs.data.transfer.protection=integrity, the balancer's REPLACE_BLOCK
// and the target's COPY_BLOCK to the proxy both make the SASL handshake;
// the moves succeed and the files read back.
func TestBalancerDataTransferProtection(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	s := startSkewed(t, 24, 1<<20,
		conf.KeyValue{Key: conf.DFSBlockAccessTokenEnable, Value: "true"},
		conf.KeyValue{Key: conf.DFSDataTransferProtection, Value: "integrity"})
	var out bytes.Buffer
	var moved int64
	cfg := s.config(t)
	cfg.Observe = func(st IterationStats) { moved += st.BytesMoved }
	if st := Run(context.Background(), cfg, &out); st != Success || moved == 0 {
		t.Fatalf("exit status %d, %d bytes moved:\n%s", st, moved, out.String())
	}
	ctx := context.Background()
	for name, want := range s.files {
		got, err := s.fs.ReadFile(ctx, name)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s reads back wrong after balancing: %v", name, err)
		}
	}
}
