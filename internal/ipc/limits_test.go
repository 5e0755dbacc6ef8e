package ipc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc/wire"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

var testID = []byte("ABCDEFGHIJKLMNOP")

// waitFor polls cond (a state the server reaches on its own, such as a
// connection being closed) for at most 20 s; it fails the test with what
// it waited for when the state does not come.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// advance moves clk forward by d in steps of the scan interval, waiting
// for the server's scan after each step, so that every scan sees the
// clock at its step (a manual ticker drops ticks nobody has taken yet).
func advance(t *testing.T, clk *clock.Manual, srv *Server, d time.Duration) {
	t.Helper()
	step := srv.lim.IdleScanInterval
	for ; d > 0; d -= step {
		before := srv.Stats().Scans
		clk.Advance(min(step, d))
		if d >= step {
			waitFor(t, "a scan", func() bool { return srv.Stats().Scans > before })
		}
	}
}

// handshake sends the connection context on a raw connection.
func (r *rawConn) handshake() {
	r.send(wire.RequestHeader(wire.CallIDConnectionContext, testID, -1), nil, wire.ConnectionContext("u", "", clientProtocol))
}

// call sends getServerDefaults and reads its answer.
func (r *rawConn) call(id int32) {
	r.send(wire.RequestHeader(id, testID, -1), wire.MethodHeader("getServerDefaults", clientProtocol), &hdfs.GetServerDefaultsRequestProto{})
	if resp := r.recv(); resp.Header.GetCallId() != uint32(id) {
		r.t.Fatalf("answer %v", resp.Header)
	}
}

// closedByServer reports whether the server closed r: a read returns an
// error other than a timeout within a few seconds.
func (r *rawConn) closedByServer() bool {
	r.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer r.nc.SetReadDeadline(time.Time{})
	_, err := io.Copy(io.Discard, r.br)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// bigListing is a getListing answer of about n bytes.
func bigListing(n int) *hdfs.GetListingResponseProto {
	var entries []*hdfs.HdfsFileStatusProto
	for size := 0; size < n; size += 300 {
		entries = append(entries, &hdfs.HdfsFileStatusProto{
			FileType:         hdfs.HdfsFileStatusProto_IS_FILE.Enum(),
			Path:             bytes.Repeat([]byte("p"), 260),
			Length:           proto.Uint64(1),
			Permission:       &hdfs.FsPermissionProto{Perm: proto.Uint32(0644)},
			Owner:            proto.String("owner"),
			Group:            proto.String("group"),
			ModificationTime: proto.Uint64(1),
			AccessTime:       proto.Uint64(1),
		})
	}
	return &hdfs.GetListingResponseProto{DirList: &hdfs.DirectoryListingProto{
		PartialListing: entries, RemainingEntries: proto.Uint32(0)}}
}

// pipeline writes n getListing calls to r in a goroutine owned by the
// test, without reading any answer. The writes block once the server
// stops reading; closing r ends the goroutine.
func pipeline(t *testing.T, r *rawConn, n int) {
	var frames []byte
	for i := range n {
		var err error
		frames, err = wire.AppendRequest(frames, wire.RequestHeader(int32(i+1), testID, -1),
			wire.MethodHeader("getListing", clientProtocol),
			&hdfs.GetListingRequestProto{Src: proto.String("/big"), StartAfter: []byte{}, NeedLocation: proto.Bool(false)})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A small receive buffer (it also stops the kernel from growing it)
	// keeps what the kernel takes off the server's hands small.
	r.nc.(*net.TCPConn).SetReadBuffer(16 << 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.nc.Write(frames)
	}()
	t.Cleanup(func() {
		r.nc.Close()
		<-done
	})
}

// waitThrottledByReplies waits until one connection is not read because
// of its queued answers (not only its calls in flight) and every call it
// had been admitted is answered: from then on it is not read at all.
func waitThrottledByReplies(t *testing.T, srv *Server, lim Limits) {
	t.Helper()
	waitFor(t, "the pipelining connection to be throttled", func() bool {
		st := srv.Stats()
		return st.Throttled == 1 && st.ReplyBytes > lim.MaxConnReplyBytes && st.InFlight == 0
	})
}

// TestNonReadingPipelinerIsThrottled: a client that pipelines getListing
// calls and reads none of the answers stops being read once its queued
// answers pass the per-connection limit; the server's queued bytes stay
// bounded, and another client is served meanwhile.
func TestNonReadingPipelinerIsThrottled(t *testing.T) {
	const reply = 300 << 10
	lim := Limits{MaxConnReplyBytes: 1 << 20, MaxConnCalls: 8, MaxReplyBytes: 8 << 20}
	srv, svc, addr := newTestServer(t, ServerConfig{Handlers: 4, Limits: lim})
	answer := bigListing(reply)
	Handle(svc, "getListing", func(ctx context.Context, req *hdfs.GetListingRequestProto) (*hdfs.GetListingResponseProto, error) {
		return answer, nil
	})
	r := dialRaw(t, addr, wire.AuthNone)
	r.handshake()
	pipeline(t, r, 2000)
	waitThrottledByReplies(t, srv, lim)

	// The bound: the per-connection limit, plus the answers of the calls
	// admitted before it was reached, plus what the kernel's buffers took.
	st := srv.Stats()
	max := lim.MaxConnReplyBytes + int64(lim.MaxConnCalls+1)*int64(proto.Size(answer)+64)
	if st.ReplyBytes > max {
		t.Fatalf("%d reply bytes queued, bound %d", st.ReplyBytes, max)
	}

	c := newTestClient(t, addr)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var resp hdfs.GetListingResponseProto
	if err := c.Call(ctx, "getListing", &hdfs.GetListingRequestProto{Src: proto.String("/big"),
		StartAfter: []byte{}, NeedLocation: proto.Bool(false)}, &resp); err != nil {
		t.Fatalf("a reading client was not served: %v", err)
	}
	if len(resp.GetDirList().GetPartialListing()) != len(answer.DirList.PartialListing) {
		t.Fatalf("answer of %d entries", len(resp.GetDirList().GetPartialListing()))
	}
	// The kernel's socket buffers still take some answers, so the
	// connection may be read a little further, never to the end.
	if st := srv.Stats(); st.Calls > 200 || st.ReplyBytes > max {
		t.Fatalf("the throttled connection was read on: %+v", st)
	}
}

// TestServerWideReplyBound: many connections that read nothing cannot add
// up past MaxReplyBytes (plus what each had admitted), and connections
// without queued answers are still read.
func TestServerWideReplyBound(t *testing.T) {
	const reply = 100 << 10
	lim := Limits{MaxConnReplyBytes: 1 << 20, MaxConnCalls: 2, MaxReplyBytes: 512 << 10}
	srv, svc, addr := newTestServer(t, ServerConfig{Handlers: 4, Limits: lim})
	answer := bigListing(reply)
	Handle(svc, "getListing", func(ctx context.Context, req *hdfs.GetListingRequestProto) (*hdfs.GetListingResponseProto, error) {
		return answer, nil
	})
	const attackers = 8
	for range attackers {
		r := dialRaw(t, addr, wire.AuthNone)
		r.handshake()
		pipeline(t, r, 200)
	}
	waitFor(t, "every pipelining connection to be throttled", func() bool { return srv.Stats().Throttled == attackers })
	st := srv.Stats()
	max := lim.MaxReplyBytes + attackers*int64(lim.MaxConnCalls+1)*int64(proto.Size(answer)+64)
	if st.ReplyBytes > max {
		t.Fatalf("%d reply bytes queued, bound %d", st.ReplyBytes, max)
	}
	good := dialRaw(t, addr, wire.AuthNone)
	good.handshake()
	for i := range 3 {
		good.call(int32(i + 1))
	}
}

// TestPurgeClosesNonReader: a client that leaves its answers unread for
// ipc.server.purge.interval loses its connection.
func TestPurgeClosesNonReader(t *testing.T) {
	clk := clock.NewManual(time.Unix(1000, 0))
	lim := Limits{MaxConnReplyBytes: 256 << 10, MaxConnCalls: 4, PurgeInterval: time.Minute, IdleScanInterval: 10 * time.Second}
	srv, svc, addr := newTestServer(t, ServerConfig{Handlers: 2, Limits: lim, Clock: clk})
	answer := bigListing(300 << 10)
	Handle(svc, "getListing", func(ctx context.Context, req *hdfs.GetListingRequestProto) (*hdfs.GetListingResponseProto, error) {
		return answer, nil
	})
	r := dialRaw(t, addr, wire.AuthNone)
	r.handshake()
	pipeline(t, r, 100)
	waitThrottledByReplies(t, srv, lim)
	good := dialRaw(t, addr, wire.AuthNone)
	good.handshake()
	good.call(1)

	advance(t, clk, srv, 30*time.Second)
	if st := srv.Stats(); st.Purged != 0 || st.Open != 2 {
		t.Fatalf("purged before the interval: %+v", st)
	}
	// The kernel may still be taking bytes off the server (its buffers
	// grow), which keeps the oldest answer young; once they are full an
	// answer stays unwritten and is purged a minute later.
	for i := 0; srv.Stats().Purged == 0; i++ {
		if i == 30 {
			t.Fatalf("not purged after %d minutes: %+v", i, srv.Stats())
		}
		advance(t, clk, srv, time.Minute)
	}
	waitFor(t, "the purged connection to go", func() bool { st := srv.Stats(); return st.Purged == 1 && st.Open == 1 })
	good.call(2)
}

// TestIdleConnectionsAboveThreshold: with more than IdleThreshold
// connections open, connections idle for twice MaxIdleTime are closed,
// down to the threshold; at the threshold none are, and neither are
// connections idle for less or with a call in flight.
func TestIdleConnectionsAboveThreshold(t *testing.T) {
	clk := clock.NewManual(time.Unix(1000, 0))
	lim := Limits{IdleThreshold: 3, KillMax: 10, MaxIdleTime: 10 * time.Second, IdleScanInterval: 10 * time.Second}
	srv, svc, addr := newTestServer(t, ServerConfig{Handlers: 2, Limits: lim, Clock: clk})
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	Handle(svc, "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, nil
	})

	var old []*rawConn
	for i := range 3 {
		r := dialRaw(t, addr, wire.AuthNone)
		r.handshake()
		r.call(int32(i + 1))
		old = append(old, r)
	}
	advance(t, clk, srv, time.Minute)
	if st := srv.Stats(); st.IdleClosed != 0 || st.Open != 3 {
		t.Fatalf("idle connections closed at the threshold: %+v", st)
	}

	// Three more: one busy, two that have just been active. The old ones
	// have been idle for a minute.
	busy := dialRaw(t, addr, wire.AuthNone)
	busy.handshake()
	busy.send(wire.RequestHeader(1, testID, -1), wire.MethodHeader("getFileInfo", clientProtocol), &hdfs.GetFileInfoRequestProto{Src: proto.String("/")})
	<-started
	var fresh []*rawConn
	for i := range 2 {
		r := dialRaw(t, addr, wire.AuthNone)
		r.handshake()
		r.call(int32(i + 1))
		fresh = append(fresh, r)
	}
	advance(t, clk, srv, 10*time.Second)
	waitFor(t, "the old idle connections closed", func() bool { st := srv.Stats(); return st.IdleClosed == 3 && st.Open == 3 })
	for _, r := range old {
		if !r.closedByServer() {
			t.Fatal("an old idle connection is still open")
		}
	}

	// Now at the threshold again: however long they idle, the rest stay.
	advance(t, clk, srv, time.Minute)
	for i, r := range fresh {
		r.call(int32(10 + i))
	}
	close(release)
	if resp := busy.recv(); resp.Header.GetCallId() != 1 {
		t.Fatalf("busy connection's answer %v", resp.Header)
	}
	if st := srv.Stats(); st.IdleClosed != 3 {
		t.Fatalf("%d idle connections closed at the threshold", st.IdleClosed)
	}
}

// TestHandshakeTimeout: connections that send nothing, or only the
// preamble, are closed after HandshakeTimeout whatever the connection
// count; a handshaken one stays.
func TestHandshakeTimeout(t *testing.T) {
	clk := clock.NewManual(time.Unix(1000, 0))
	lim := Limits{HandshakeTimeout: 20 * time.Second, IdleScanInterval: 10 * time.Second}
	srv, _, addr := newTestServer(t, ServerConfig{Limits: lim, Clock: clk})
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	preambleOnly := dialRaw(t, addr, wire.AuthNone)
	good := dialRaw(t, addr, wire.AuthNone)
	good.handshake()
	good.call(1)
	waitFor(t, "three connections", func() bool { return srv.Stats().Open == 3 })

	advance(t, clk, srv, 10*time.Second)
	if st := srv.Stats(); st.Unfinished != 0 {
		t.Fatalf("closed before the timeout: %+v", st)
	}
	advance(t, clk, srv, 10*time.Second)
	waitFor(t, "two unfinished connections closed", func() bool { st := srv.Stats(); return st.Unfinished == 2 && st.Open == 1 })
	if !(&rawConn{t: t, nc: silent, br: bufioReader(silent)}).closedByServer() || !preambleOnly.closedByServer() {
		t.Fatal("unfinished connection still open")
	}
	good.call(2)
}

// TestMaxConnections: the connection over ipc.server.max.connections is
// closed at once and logged; the others are served.
func TestMaxConnections(t *testing.T) {
	var logBuf testtool.Buffer
	logger := slog.New(slog.NewTextHandler(&logBuf, nil))
	srv, _, addr := newTestServer(t, ServerConfig{Limits: Limits{MaxConnections: 2}, Logger: logger})
	a := dialRaw(t, addr, wire.AuthNone)
	a.handshake()
	a.call(1)
	b := dialRaw(t, addr, wire.AuthNone)
	b.handshake()
	b.call(1)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	over := &rawConn{t: t, nc: nc, br: bufioReader(nc)}
	if !over.closedByServer() {
		t.Fatal("third connection not closed")
	}
	waitFor(t, "the refusal", func() bool { return srv.Stats().Refused == 1 })
	if out := logBuf.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "too many connections") ||
		!strings.Contains(out, "ipc.server.max.connections") || !strings.Contains(out, "limit=2") {
		t.Fatalf("log: %s", out)
	}
	a.call(2)
	b.call(2)
}

// TestBadPreambleLoggedRateLimited: random bytes on the RPC port are
// logged at WARN with the peer's address, at most ratelog.DefaultBurst a
// minute.
func TestBadPreambleLoggedRateLimited(t *testing.T) {
	var logBuf testtool.Buffer
	logger := slog.New(slog.NewTextHandler(&logBuf, nil))
	srv, _, addr := newTestServer(t, ServerConfig{Logger: logger})
	for range 30 {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
		if !(&rawConn{t: t, nc: nc, br: bufioReader(nc)}).closedByServer() {
			t.Fatal("connection with a bad preamble not closed")
		}
		nc.Close()
	}
	waitFor(t, "every connection gone", func() bool { return srv.Stats().Open == 0 })
	out := logBuf.String()
	if n := strings.Count(out, "bad preamble"); n != 10 {
		t.Fatalf("%d records, want 10 (the rate limit):\n%s", n, out)
	}
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "remote=127.0.0.1:") {
		t.Fatalf("record without level or peer:\n%s", out)
	}
}

// TestRequestBytesBounded: calls read and not yet answered hold at most
// MaxRequestBytes (plus one call) of request bytes, over all connections.
func TestRequestBytesBounded(t *testing.T) {
	const limit = 64 << 10
	srv, svc, addr := newTestServer(t, ServerConfig{Handlers: 1, QueueSizePerHandler: 100,
		Limits: Limits{MaxRequestBytes: limit, MaxConnCalls: 1000}})
	release := make(chan struct{})
	Handle(svc, "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, nil
	})
	big := strings.Repeat("x", 16<<10)
	var wg sync.WaitGroup
	for range 4 {
		r := dialRaw(t, addr, wire.AuthNone)
		r.handshake()
		var frames []byte
		for i := range 10 {
			frames, _ = wire.AppendRequest(frames, wire.RequestHeader(int32(i+1), testID, -1),
				wire.MethodHeader("getFileInfo", clientProtocol), &hdfs.GetFileInfoRequestProto{Src: proto.String(big)})
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.nc.Write(frames)
		}()
		t.Cleanup(func() { r.nc.Close() })
	}
	waitFor(t, "the budget to be taken", func() bool { return srv.Stats().RequestBytes > limit-(17<<10) })
	if st := srv.Stats(); st.RequestBytes > limit+(17<<10) {
		t.Fatalf("%d request bytes held, limit %d", st.RequestBytes, limit)
	}
	close(release)
	waitFor(t, "all 40 calls answered", func() bool { return srv.Stats().Calls == 40 })
	wg.Wait()
}

// TestIdleConnectionMemory measures what an idle, handshaken connection
// costs the server (heap and goroutine stacks; the client's half of each
// connection is counted too, so the figure is an upper bound).
func TestIdleConnectionMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 2000 connections")
	}
	srv, _, addr := newTestServer(t, ServerConfig{})
	const n = 2000
	hs := wire.ClientPreamble().Append(nil)
	hs, _ = wire.AppendRequest(hs, wire.RequestHeader(wire.CallIDConnectionContext, testID, -1), nil, wire.ConnectionContext("u", "", clientProtocol))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(hs); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	waitFor(t, "every connection handshaken", func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if len(srv.mu.conns) < n {
			return false
		}
		for c := range srv.mu.conns {
			if !c.handshaken.Load() {
				return false
			}
		}
		return true
	})
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapInuse+after.StackInuse) - int64(before.HeapInuse+before.StackInuse)) / n
	t.Logf("an idle connection costs %d bytes (heap %d, stacks %d)", per,
		(int64(after.HeapInuse)-int64(before.HeapInuse))/n, (int64(after.StackInuse)-int64(before.StackInuse))/n)
	// A generous bound: what matters is that no per-connection buffer of
	// tens of KiB comes back.
	if per > 32<<10 {
		t.Fatalf("an idle connection costs %d bytes", per)
	}
}

func TestLimitsFromConf(t *testing.T) {
	l, err := LimitsFrom(conf.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{MaxConnections: DefaultMaxConnections, MaxIdleTime: 10 * time.Second, IdleThreshold: 4000,
		KillMax: 10, IdleScanInterval: 10 * time.Second, PurgeInterval: 15 * time.Minute}
	if l != want {
		t.Fatalf("defaults %+v, want %+v", l, want)
	}
	l, err = LimitsFrom(conf.Defaults().With(conf.KeyValue{Key: conf.IPCServerMaxConnections, Value: "0"}))
	if err != nil || l.MaxConnections != NoLimit {
		t.Fatalf("max connections 0: %+v %v", l, err)
	}
	_, err = LimitsFrom(conf.Defaults().With(conf.KeyValue{Key: conf.IPCClientIdleThreshold, Value: "-4"}))
	if err == nil || !strings.Contains(err.Error(), "ipc.client.idlethreshold") {
		t.Fatalf("negative threshold: %v", err)
	}
	_, err = LimitsFrom(conf.Defaults().With(conf.KeyValue{Key: conf.IPCServerPurgeInterval, Value: "soon"}))
	if err == nil || !strings.Contains(err.Error(), "ipc.server.purge.interval") {
		t.Fatalf("bad purge interval: %v", err)
	}
}

func bufioReader(nc net.Conn) *bufio.Reader { return bufio.NewReader(nc) }
