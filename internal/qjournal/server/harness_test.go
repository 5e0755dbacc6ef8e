package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/client"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/server"
	"github.com/hdfsgo/hdfsgo/internal/storage"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("QJM_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test", t.Name())
	}
	return quiet
}

// jnSet is n JournalNodes on loopback, each with its own directory.
type jnSet struct {
	t     testing.TB
	jid   string // the journal the managers use
	dirs  []string
	addrs []string // RPC, fixed across restarts
	webs  []string
	nodes []*server.JournalNode
	cfg   func(i int) server.Config
}

const jid = "ns1"

func startJNs(t testing.TB, n int, tune func(*server.Config)) *jnSet {
	t.Helper()
	s := &jnSet{t: t, nodes: make([]*server.JournalNode, n), jid: jid}
	// The first start serves listeners bound now (port 0); restarts bind
	// the same addresses again.
	var rpcLs, webLs []net.Listener
	for i := 0; i < n; i++ {
		s.dirs = append(s.dirs, t.TempDir())
		rl, wl := listen(t, "127.0.0.1:0"), listen(t, "127.0.0.1:0")
		rpcLs, webLs = append(rpcLs, rl), append(webLs, wl)
		s.addrs = append(s.addrs, rl.Addr().String())
		s.webs = append(s.webs, wl.Addr().String())
	}
	s.cfg = func(i int) server.Config {
		c := server.Config{EditsDir: s.dirs[i], RPCAddress: s.addrs[i], HTTPAddress: s.webs[i], Handlers: 5,
			EditCacheSize: 1 << 20, TailEditsInProgress: true, EnableSync: false, SyncInterval: time.Hour,
			HTTPOpenTimeout: 5 * time.Second, HTTPReadTimeout: 5 * time.Second,
			SharedEditsURIs: []string{s.uri()}}
		if tune != nil {
			tune(&c)
		}
		return c
	}
	for i := range n {
		s.startOn(i, rpcLs[i], webLs[i])
	}
	t.Cleanup(func() {
		for i := range s.nodes {
			s.stop(i)
		}
	})
	return s
}

func listen(t testing.TB, addr string) net.Listener {
	t.Helper()
	var l net.Listener
	var err error
	for range 100 {
		if l, err = net.Listen("tcp", addr); err == nil {
			return l
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal(err)
	return nil
}

func (s *jnSet) uri() string { return "qjournal://" + strings.Join(s.addrs, ";") + "/" + s.jid }

// start (re)starts JournalNode i on its addresses.
func (s *jnSet) start(i int) {
	s.t.Helper()
	s.startOn(i, listen(s.t, s.addrs[i]), listen(s.t, s.webs[i]))
}

func (s *jnSet) startOn(i int, rpc, web net.Listener) {
	s.t.Helper()
	var err error
	s.nodes[i], err = server.Start(context.Background(), s.cfg(i), server.Deps{Logger: testLogger(s.t).With("jn", i),
		Listener: rpc, HTTPListener: web})
	if err != nil {
		rpc.Close()
		web.Close()
		s.t.Fatalf("starting JournalNode %d: %v", i, err)
	}
}

// startHeld restarts JournalNode i behind a proxy on its RPC address that
// holds every call until release is called; then they go through in order.
func (s *jnSet) startHeld(i int) (release func()) {
	s.t.Helper()
	inner := listen(s.t, "127.0.0.1:0")
	s.startOn(i, inner, listen(s.t, s.webs[i]))
	front := listen(s.t, s.addrs[i])
	open := make(chan struct{})
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	track := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := front.Accept()
			if err != nil {
				return
			}
			d, err := net.Dial("tcp", inner.Addr().String())
			if err != nil {
				c.Close()
				continue
			}
			track(c)
			track(d)
			wg.Add(2)
			go func() {
				defer wg.Done()
				defer d.Close()
				<-open
				io.Copy(d, c)
			}()
			go func() {
				defer wg.Done()
				defer c.Close()
				io.Copy(c, d)
			}()
		}
	}()
	var once sync.Once
	release = func() { once.Do(func() { close(open) }) }
	s.t.Cleanup(func() {
		front.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		release()
		wg.Wait()
	})
	return release
}

func (s *jnSet) stop(i int) {
	if s.nodes[i] != nil {
		s.nodes[i].Close()
		s.nodes[i] = nil
	}
}

func (s *jnSet) journal(i int) *server.Journal { return s.nodes[i].Journal(s.jid) }

// version is the namespace of the tests.
var version = &storage.Version{LayoutVersion: storage.NameNodeLayoutVersion, NamespaceID: 4242,
	ClusterID: "CID-qjm-test", CTime: 0, StorageType: storage.StorageTypeNameNode, BlockPoolID: "BP-1-127.0.0.1-1"}

func testClientConfig() client.Config {
	c := client.DefaultConfig()
	c.WriteTxnsTimeout = 3 * time.Second
	c.StartSegmentTimeout = 3 * time.Second
	c.FinalizeSegmentTimeout = 3 * time.Second
	c.NewEpochTimeout = 3 * time.Second
	c.GetJournalStateTimeout = 3 * time.Second
	c.PrepareRecoveryTimeout = 5 * time.Second
	c.AcceptRecoveryTimeout = 5 * time.Second
	c.SelectInputStreamsTimeout = 3 * time.Second
	c.OperationsTimeout = 5 * time.Second
	c.HTTPOpenTimeout = 3 * time.Second
	c.HTTPReadTimeout = 3 * time.Second
	c.TailInProgress = true
	c.User = "hdfs"
	return c
}

func (s *jnSet) manager(tune func(*client.Config)) *client.Manager {
	s.t.Helper()
	cfg := testClientConfig()
	if tune != nil {
		tune(&cfg)
	}
	m, err := client.New(s.uri(), cfg, version, client.Deps{Logger: testLogger(s.t).With("qjm", true)})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { m.Close() })
	return m
}

// format formats every JournalNode for the tests' namespace.
func (s *jnSet) format() {
	s.t.Helper()
	m := s.manager(nil)
	if err := m.Format(context.Background(), true); err != nil {
		s.t.Fatal(err)
	}
	m.Close()
}

// writer is an edit log whose only (required) journal is the quorum.
type writer struct {
	t   testing.TB
	m   *client.Manager
	log *editlog.Log
	// mu orders appends and segment rolls, as the namesystem lock does.
	mu sync.Mutex
}

func (s *jnSet) newWriter(tune func(*client.Config)) *writer {
	s.t.Helper()
	m := s.manager(tune)
	l, err := editlog.New(editlog.Config{Logger: quiet}, []editlog.Journal{m}, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { l.Close() })
	return &writer{t: s.t, m: m, log: l}
}

// become makes w the writer (new epoch, recovery) and starts a segment
// after everything the quorum holds; it returns that segment's first txid.
func (w *writer) become() int64 {
	w.t.Helper()
	ctx := context.Background()
	if err := w.log.InitForWrite(ctx); err != nil {
		w.t.Fatalf("InitForWrite: %v", err)
	}
	last, err := w.log.ReadOps(ctx, editlog.ReadOptions{InProgress: true}, func(int64, op.Op) error { return nil })
	if err != nil {
		w.t.Fatalf("reading the quorum before writing: %v", err)
	}
	if err := w.log.StartSegment(ctx, last+1); err != nil {
		w.t.Fatalf("StartSegment(%d): %v", last+1, err)
	}
	return last + 1
}

// mkdirs logs n mkdir ops /d<k> and syncs them; it returns the last txid.
func (w *writer) mkdirs(prefix string, n int) (int64, error) {
	var last int64
	w.mu.Lock()
	for i := 0; i < n; i++ {
		txid, err := w.log.Append(&op.Mkdir{InodeID: uint64(1000 + i), Path: fmt.Sprintf("/%s%d", prefix, i), Mtime: 1,
			Perm: op.Perm{User: "u", Group: "g", Mode: 0o755}})
		if err != nil {
			w.mu.Unlock()
			return 0, err
		}
		last = txid
	}
	w.mu.Unlock()
	return last, w.log.Sync(context.Background(), last)
}

// roll ends the open segment and starts the next one.
func (w *writer) roll() (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.log.RollSegment(context.Background())
}

// caughtUp waits until every running JournalNode holds txid last: a
// reader asks a majority, and what it may apply is what every node of the
// majority that answers holds.
func (s *jnSet) caughtUp(last int64) {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for i, n := range s.nodes {
		for n != nil && s.journal(i).Status().HighestWrittenTxID < last {
			if time.Now().After(deadline) {
				s.t.Fatalf("jn%d did not reach txid %d", i, last)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// readAll reads what the quorum holds through a fresh manager (a
// standby's view) and returns every txid with its op's path ("" for
// segment markers).
func (s *jnSet) readAll(inProgress bool) ([]int64, []string, error) {
	m := s.manager(nil)
	defer m.Close()
	var txids []int64
	var paths []string
	_, err := editlog.ReadOps(context.Background(), []editlog.Journal{m}, editlog.ReadOptions{InProgress: inProgress},
		func(txid int64, o op.Op) error {
			txids = append(txids, txid)
			p := ""
			if mk, ok := o.(*op.Mkdir); ok {
				p = mk.Path
			}
			paths = append(paths, p)
			return nil
		})
	return txids, paths, err
}

func checkContiguous(t testing.TB, txids []int64, first, last int64) {
	t.Helper()
	if len(txids) == 0 || txids[0] != first || txids[len(txids)-1] != last || int64(len(txids)) != last-first+1 {
		t.Fatalf("read txids %s, want %d..%d", span(txids), first, last)
	}
	for i := 1; i < len(txids); i++ {
		if txids[i] != txids[i-1]+1 {
			t.Fatalf("txid %d follows %d", txids[i], txids[i-1])
		}
	}
}

func span(txids []int64) string {
	if len(txids) == 0 {
		return "none"
	}
	return fmt.Sprintf("%d..%d (%d)", txids[0], txids[len(txids)-1], len(txids))
}

func mkdirOp(i int) op.Op {
	return &op.Mkdir{InodeID: uint64(5000 + i), Path: fmt.Sprintf("/m%d", i), Mtime: 1, Perm: op.Perm{User: "u", Group: "g", Mode: 0o755}}
}
