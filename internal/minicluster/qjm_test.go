package minicluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/server"
)

// startQJMCluster is an HA cluster over three JournalNodes with test-sized
// timeouts and in-progress tailing, without DataNodes (the load is
// metadata only).
func startQJMCluster(t *testing.T, extra ...conf.KeyValue) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kv := append([]conf.KeyValue{
		{Key: conf.DFSHATailEditsPeriod, Value: "50ms"},
		{Key: conf.DFSHATailEditsInProgress, Value: "true"},
		{Key: conf.DFSHALogRollPeriod, Value: "0"},
		{Key: conf.DFSHAStandbyCheckpoints, Value: "false"},
		{Key: conf.DFSQJournalWriteTxnsTimeout, Value: "1500"},
		{Key: conf.DFSJournalNodeSyncInterval, Value: "200"},
		{Key: conf.DFSNameNodeSafeModeExtension, Value: "0"},
	}, extra...)
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: -1, HA: true, Conf: kv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// mkdirLoad makes directories /load/dN through the HA client until stopped,
// recording every acknowledged one.
type mkdirLoad struct {
	stop  chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	acked []string
	errs  int
	first error
}

func startMkdirLoad(t *testing.T, c *Cluster) *mkdirLoad {
	fsys, err := client.New(client.Options{Addresses: c.NameNodeAddrs(), User: c.NameNodes()[0].SuperUser()})
	if err != nil {
		t.Fatal(err)
	}
	l := &mkdirLoad{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer fsys.Close()
		for i := 0; ; i++ {
			select {
			case <-l.stop:
				return
			default:
			}
			p := fmt.Sprintf("/load/d%06d", i)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := fsys.MkdirAll(ctx, p, 0o755)
			cancel()
			l.mu.Lock()
			if err == nil {
				l.acked = append(l.acked, p)
			} else if l.errs++; l.first == nil {
				l.first = err
			}
			l.mu.Unlock()
			if err != nil {
				time.Sleep(20 * time.Millisecond)
			}
		}
	}()
	return l
}

func (l *mkdirLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// waitMore waits until n more mkdirs were acknowledged.
func (l *mkdirLoad) waitMore(t *testing.T, n int, why string) {
	t.Helper()
	want := l.count() + n
	deadline := time.Now().Add(20 * time.Second)
	for l.count() < want {
		if time.Now().After(deadline) {
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("%s: %d acknowledged, waited for %d (%d errors, first %v)", why, len(l.acked), want, l.errs, l.first)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (l *mkdirLoad) end() []string {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.acked...)
}

func rollNNEdits(t *testing.T, nn *namenode.NameNode) {
	t.Helper()
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{nn.RPCAddr().String()}, User: nn.SuperUser(), Protocol: namenode.ClientProtocolName})
	defer c.Close()
	if err := c.Call(context.Background(), "rollEdits", &hdfs.RollEditsRequestProto{}, &hdfs.RollEditsResponseProto{}); err != nil {
		t.Fatal(err)
	}
}

func finalizedIn(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if _, _, ip, ok := editlog.ParseSegmentName(e.Name()); ok && !ip {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// TestQJMJournalNodeFaults: real NameNodes over three in-process
// JournalNodes, under a load of mkdirs. One JournalNode stops: writes go
// on. It comes back, is written to again from the next segment, and sync
// fetches the segments it missed. The standby, tailing the segment in
// progress, holds the active's namespace. Then two JournalNodes stop: the
// active cannot reach a quorum, stops within the write timeout and
// acknowledges nothing more; with the JournalNodes back, the standby made
// active has every acknowledged directory.
func TestQJMJournalNodeFaults(t *testing.T) {
	c := startQJMCluster(t)
	nns := c.NameNodes()
	load := startMkdirLoad(t, c)
	load.waitMore(t, 20, "before the faults")

	if err := c.StopJournalNode(2); err != nil {
		t.Fatal(err)
	}
	load.waitMore(t, 50, "with one JournalNode of three stopped")
	if err := c.StartJournalNode(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	load.waitMore(t, 10, "after it came back")
	rollNNEdits(t, nns[0]) // it is written to again from here
	load.waitMore(t, 20, "after the roll")
	jn0 := filepath.Join(c.opts.Dir, "jn0", Nameservice, "current")
	jn2 := filepath.Join(c.opts.Dir, "jn2", Nameservice, "current")
	deadline := time.Now().Add(20 * time.Second)
	for {
		a, b := finalizedIn(t, jn0), finalizedIn(t, jn2)
		if strings.Join(a, ",") == strings.Join(b, ",") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sync did not bring the missed segments: jn0 %v, jn2 %v", a, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitStandbyCaughtUp(t, nns[0], nns[1])

	// Two of three gone: the active fails and stops.
	before := load.count()
	c.StopJournalNode(1)
	c.StopJournalNode(2)
	select {
	case <-nns[0].Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the active did not stop without a quorum of JournalNodes")
	}
	if !errors.Is(nns[0].Err(), editlog.ErrNoJournals) {
		t.Errorf("the active stopped with %v", nns[0].Err())
	}
	acked := load.end()
	t.Logf("%d mkdirs acknowledged, %d after the second JournalNode stopped; load errors %d", len(acked), len(acked)-before, load.errs)

	for i := 1; i <= 2; i++ {
		if err := c.StartJournalNode(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	c.StopNameNode(0)
	ctx := context.Background()
	if err := nns[1].TransitionToActive(ctx); err != nil {
		t.Fatal(err)
	}
	if nns[1].HAState() != ha.Active {
		t.Fatal("nn2 is not active")
	}
	fsys, err := client.New(client.Options{Addresses: []string{nns[1].RPCAddr().String()}, User: nns[1].SuperUser()})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	for _, p := range acked {
		if _, err := fsys.Stat(ctx, p); err != nil {
			t.Fatalf("acknowledged %s is missing after the failover: %v", p, err)
		}
	}
	// The new active writes (a new epoch on the quorum).
	if err := fsys.MkdirAll(ctx, "/after", 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestQJMInitializeSharedEdits: a NameNode that ran without HA becomes the
// first NameNode of an HA nameservice over JournalNodes, as Hadoop's guide
// says: `hdfs namenode -initializeSharedEdits` formats the JournalNodes
// (refusing to wipe a formatted journal unless told) and copies the edits
// after the newest image into them; made active, the NameNode serves what
// it had and writes on through the quorum.
func TestQJMInitializeSharedEdits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a NameNode and JournalNodes")
	}
	ctx := context.Background()
	dir := t.TempDir()
	logger := c0Logger()
	nameDir := filepath.Join(dir, "name")
	plain := conf.Defaults().With(
		conf.KeyValue{Key: conf.DFSNameNodeNameDir, Value: nameDir},
		conf.KeyValue{Key: conf.DFSNameNodeRPCAddress, Value: "127.0.0.1:0"},
		conf.KeyValue{Key: conf.DFSNameNodeHTTPAddress, Value: "127.0.0.1:0"},
		conf.KeyValue{Key: conf.DFSNameNodeSafeModeExtension, Value: "0"},
	)
	cfg, err := namenode.ConfigFrom(plain)
	if err != nil {
		t.Fatal(err)
	}
	if err := namenode.Format(ctx, cfg, namenode.Deps{Logger: logger}, namenode.FormatOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	nn, err := namenode.Start(ctx, cfg, namenode.Deps{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := client.New(client.Options{Addresses: []string{nn.RPCAddr().String()}, User: nn.SuperUser()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if err := fsys.MkdirAll(ctx, fmt.Sprintf("/before/d%d", i), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fsys.Close()
	if err := nn.Close(); err != nil {
		t.Fatal(err)
	}

	// Three JournalNodes, and the nameservice's keys.
	var jns []*server.JournalNode
	var addrs []string
	for i := range 3 {
		jc, err := server.ConfigFrom(conf.Defaults().With(
			conf.KeyValue{Key: conf.DFSJournalNodeEditsDir, Value: filepath.Join(dir, fmt.Sprintf("jn%d", i))},
			conf.KeyValue{Key: conf.DFSJournalNodeRPCAddress, Value: "127.0.0.1:0"},
			conf.KeyValue{Key: conf.DFSJournalNodeHTTPAddress, Value: "127.0.0.1:0"},
		))
		if err != nil {
			t.Fatal(err)
		}
		jn, err := server.Start(ctx, jc, server.Deps{Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		defer jn.Close()
		jns = append(jns, jn)
		addrs = append(addrs, jn.RPCAddr().String())
	}
	rpc, http := freeAddr(t), freeAddr(t)
	ha := plain.With(
		conf.KeyValue{Key: conf.FSDefaultFS, Value: "hdfs://" + Nameservice},
		conf.KeyValue{Key: conf.DFSNameservices, Value: Nameservice},
		conf.KeyValue{Key: conf.Suffixed(conf.DFSHANameNodes, Nameservice), Value: "nn1,nn2"},
		conf.KeyValue{Key: conf.DFSHANameNodeID, Value: "nn1"},
		conf.KeyValue{Key: conf.Suffixed(conf.DFSNameNodeRPCAddress, Nameservice, "nn1"), Value: rpc},
		conf.KeyValue{Key: conf.Suffixed(conf.DFSNameNodeHTTPAddress, Nameservice, "nn1"), Value: http},
		conf.KeyValue{Key: conf.Suffixed(conf.DFSNameNodeRPCAddress, Nameservice, "nn2"), Value: freeAddr(t)},
		conf.KeyValue{Key: conf.Suffixed(conf.DFSNameNodeHTTPAddress, Nameservice, "nn2"), Value: freeAddr(t)},
		conf.KeyValue{Key: conf.DFSNameNodeSharedEditsDir, Value: "qjournal://" + strings.Join(addrs, ";") + "/" + Nameservice},
	)
	hcfg, err := namenode.ConfigFrom(ha)
	if err != nil {
		t.Fatal(err)
	}
	if err := namenode.InitializeSharedEdits(ctx, hcfg, namenode.Deps{Logger: logger}, namenode.InitializeSharedEditsOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	// A second one finds the journal formatted: refused unless confirmed.
	err = namenode.InitializeSharedEdits(ctx, hcfg, namenode.Deps{Logger: logger},
		namenode.InitializeSharedEditsOptions{Confirm: func(string) bool { return false }})
	if !errors.Is(err, namenode.ErrFormatRefused) {
		t.Fatalf("re-initializing formatted JournalNodes without confirmation: %v", err)
	}
	nn, err = namenode.Start(ctx, hcfg, namenode.Deps{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer nn.Close()
	if err := nn.TransitionToActive(ctx); err != nil {
		t.Fatal(err)
	}
	fsys, err = client.New(client.Options{Addresses: []string{nn.RPCAddr().String()}, User: nn.SuperUser()})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	if es, err := fsys.ReadDir(ctx, "/before"); err != nil || len(es) != 30 {
		t.Fatalf("after initializing the shared edits: %d entries, %v", len(es), err)
	}
	if err := fsys.MkdirAll(ctx, "/after", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, jn := range jns {
		if st := jn.Journal(Nameservice).Status(); st.LastPromisedEpoch < 2 || st.HighestWrittenTxID == 0 {
			t.Errorf("JournalNode %s: %+v", jn.RPCAddr(), st)
		}
	}
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func c0Logger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
