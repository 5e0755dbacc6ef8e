package ipc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc/wire"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const clientProtocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

func serverDefaults() *hdfs.FsServerDefaultsProto {
	return &hdfs.FsServerDefaultsProto{
		BlockSize:           proto.Uint64(134217728),
		BytesPerChecksum:    proto.Uint32(512),
		WritePacketSize:     proto.Uint32(65536),
		Replication:         proto.Uint32(3),
		FileBufferSize:      proto.Uint32(4096),
		EncryptDataTransfer: proto.Bool(false),
		TrashInterval:       proto.Uint64(0),
		ChecksumType:        hdfs.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(),
	}
}

// startServer serves srv on a loopback port and stops it when the test ends.
func startServer(t testing.TB, srv *Server) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-served; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
	return l.Addr().String()
}

func newTestServer(t testing.TB, cfg ServerConfig) (*Server, *Service, string) {
	srv := NewServer(cfg)
	svc := srv.Service(clientProtocol)
	Handle(svc, "getServerDefaults", func(ctx context.Context, _ *hdfs.GetServerDefaultsRequestProto) (*hdfs.GetServerDefaultsResponseProto, error) {
		return &hdfs.GetServerDefaultsResponseProto{ServerDefaults: serverDefaults()}, nil
	})
	return srv, svc, startServer(t, srv)
}

func newTestClient(t testing.TB, addr string) *Client {
	c := NewClient(ClientConfig{Addresses: []string{addr}, User: "gohdfs1", Protocol: clientProtocol, RetryBase: time.Millisecond})
	t.Cleanup(func() { c.Close() })
	return c
}

func TestGetServerDefaultsRoundTrip(t *testing.T) {
	srv, svc, addr := newTestServer(t, ServerConfig{})
	var seen Caller
	Handle(svc, "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
		seen, _ = CallerFromContext(ctx)
		return nil, nil // absent fs: sent as an empty response message
	})
	c := newTestClient(t, addr)
	var resp hdfs.GetServerDefaultsResponseProto
	if err := c.Call(t.Context(), "getServerDefaults", &hdfs.GetServerDefaultsRequestProto{}, &resp); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(resp.GetServerDefaults(), serverDefaults()) {
		t.Fatalf("defaults %v", resp.GetServerDefaults())
	}
	var fi hdfs.GetFileInfoResponseProto
	if err := c.Call(t.Context(), "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/nope")}, &fi); err != nil {
		t.Fatal(err)
	}
	if fi.Fs != nil {
		t.Fatalf("fs %v", fi.Fs)
	}
	if seen.User != "gohdfs1" || seen.Protocol != clientProtocol || seen.CallID != 2 || seen.RetryCount != -1 ||
		string(seen.ClientID) != string(c.ClientID()) || seen.Remote == nil {
		t.Fatalf("caller %+v", seen)
	}
	if st := srv.Stats(); st.Calls != 2 || st.Errors != 0 || st.Open != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestOutOfOrder: call 1 blocks until call 2 has been answered; both share
// one connection, so the answers travel out of order.
func TestOutOfOrder(t *testing.T) {
	srv, svc, addr := newTestServer(t, ServerConfig{Handlers: 4})
	secondAnswered := make(chan struct{})
	Handle(svc, "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
		if req.GetSrc() == "/first" {
			select {
			case <-secondAnswered:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return &hdfs.GetFileInfoResponseProto{}, nil
	})
	c := newTestClient(t, addr)
	first := make(chan error, 1)
	go func() {
		var r hdfs.GetFileInfoResponseProto
		first <- c.Call(t.Context(), "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/first")}, &r)
	}()
	for srv.Stats().InFlight == 0 {
		runtime.Gosched()
	}
	var r hdfs.GetFileInfoResponseProto
	if err := c.Call(t.Context(), "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/second")}, &r); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-first:
		t.Fatalf("first call finished before the second was answered: %v", err)
	default:
	}
	close(secondAnswered)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if st := srv.Stats(); st.Accepted != 1 {
		t.Fatalf("%d connections, want 1", st.Accepted)
	}
}

func TestHandlerErrors(t *testing.T) {
	_, svc, addr := newTestServer(t, ServerConfig{})
	Handle(svc, "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
		switch req.GetSrc() {
		case "/missing":
			return nil, fmt.Errorf("lookup %s: %w", req.GetSrc(), fs.ErrNotExist)
		case "/standby-free":
			return nil, remoteerr.New(remoteerr.ClassSafeMode, "Name node is in safe mode.")
		case "/panic":
			panic("boom")
		}
		return nil, errors.New("plain failure")
	})
	c := newTestClient(t, addr)
	for _, tc := range []struct {
		src    string
		class  string
		target error
	}{
		{"/missing", "java.io.FileNotFoundException", fs.ErrNotExist},
		{"/standby-free", remoteerr.ClassSafeMode, remoteerr.ErrSafeMode},
		{"/panic", remoteerr.ClassIOException, remoteerr.ErrIO},
		{"/other", remoteerr.ClassIOException, remoteerr.ErrIO},
	} {
		t.Run(tc.src, func(t *testing.T) {
			var r hdfs.GetFileInfoResponseProto
			err := c.Call(t.Context(), "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(tc.src)}, &r)
			var re *remoteerr.Error
			if !errors.As(err, &re) || re.Class != tc.class {
				t.Fatalf("err %v, want class %s", err, tc.class)
			}
			if !errors.Is(err, tc.target) {
				t.Fatalf("errors.Is(%v, %v) false", err, tc.target)
			}
		})
	}
	// The connection survived every error.
	var d hdfs.GetServerDefaultsResponseProto
	if err := c.Call(t.Context(), "getServerDefaults", &hdfs.GetServerDefaultsRequestProto{}, &d); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownProtocolAndMethod(t *testing.T) {
	srv, _, addr := newTestServer(t, ServerConfig{})
	other := NewClient(ClientConfig{Addresses: []string{addr}, User: "u", Protocol: "org.example.NoSuchProtocol"})
	defer other.Close()
	var r hdfs.GetServerDefaultsResponseProto
	err := other.Call(t.Context(), "getServerDefaults", &hdfs.GetServerDefaultsRequestProto{}, &r)
	if !errors.Is(err, remoteerr.ErrNoSuchProtocol) {
		t.Fatalf("unknown protocol: %v", err)
	}
	c := newTestClient(t, addr)
	err = c.Call(t.Context(), "noSuchMethod", &hdfs.GetServerDefaultsRequestProto{}, &r)
	if !errors.Is(err, remoteerr.ErrNoSuchMethod) {
		t.Fatalf("unknown method: %v", err)
	}
	if err := c.Call(t.Context(), "getServerDefaults", &hdfs.GetServerDefaultsRequestProto{}, &r); err != nil {
		t.Fatalf("connection unusable after error: %v", err)
	}
	if st := srv.Stats(); st.Accepted != 2 || st.Fatal != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestClientContextTimeout(t *testing.T) {
	_, svc, addr := newTestServer(t, ServerConfig{})
	release := make(chan struct{})
	Handle(svc, "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
		<-release
		return &hdfs.GetFileInfoResponseProto{}, nil
	})
	c := newTestClient(t, addr)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	var r hdfs.GetFileInfoResponseProto
	err := c.Call(ctx, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/slow")}, &r)
	close(release)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want deadline exceeded", err)
	}
	// The late answer is discarded; the connection keeps working.
	var d hdfs.GetServerDefaultsResponseProto
	if err := c.Call(t.Context(), "getServerDefaults", &hdfs.GetServerDefaultsRequestProto{}, &d); err != nil {
		t.Fatal(err)
	}
}

func TestShutdownWithCallsInFlight(t *testing.T) {
	srv := NewServer(ServerConfig{Handlers: 4})
	svc := srv.Service(clientProtocol)
	started := make(chan struct{}, 3)
	release := make(chan struct{})
	Handle(svc, "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
		started <- struct{}{}
		<-release
		return &hdfs.GetFileInfoResponseProto{}, nil
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	addr := l.Addr().String()
	c := NewClient(ClientConfig{Addresses: []string{addr}, User: "u", Protocol: clientProtocol, MaxRetries: -1})
	defer c.Close()

	errs := make(chan error, 3)
	for i := range 3 {
		go func() {
			var r hdfs.GetFileInfoResponseProto
			errs <- c.Call(t.Context(), "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(fmt.Sprint("/", i))}, &r)
		}()
	}
	for range 3 {
		<-started
	}
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(t.Context()) }()
	if err := <-served; !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve: %v", err)
	}
	// The listener is closed: new connections are refused.
	if nc, err := net.Dial("tcp", addr); err == nil {
		nc.Close()
		t.Fatal("new connection accepted during shutdown")
	}
	close(release)
	for range 3 {
		if err := <-errs; err != nil {
			t.Errorf("in-flight call: %v", err)
		}
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if st := srv.Stats(); st.Calls != 3 || st.Open != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// rawConn speaks the protocol by hand.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string, auth byte) *rawConn {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	p := wire.ClientPreamble()
	p.AuthProtocol = auth
	if _, err := nc.Write(p.Append(nil)); err != nil {
		t.Fatal(err)
	}
	return &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (r *rawConn) send(h *common.RpcRequestHeaderProto, method *common.RequestHeaderProto, body proto.Message) {
	b, err := wire.AppendRequest(nil, h, method, body)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.nc.Write(b); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rawConn) recv() *wire.Response {
	frame, err := wire.ReadFrame(r.br, 1<<20, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	resp, err := wire.DecodeResponse(frame)
	if err != nil {
		r.t.Fatal(err)
	}
	return resp
}

func (r *rawConn) expectClosed() {
	if _, err := r.br.ReadByte(); err == nil {
		r.t.Fatal("connection still open")
	}
}

func TestSASLNegotiateForSimple(t *testing.T) {
	_, _, addr := newTestServer(t, ServerConfig{})
	r := dialRaw(t, addr, wire.AuthSASL)
	id := []byte("ABCDEFGHIJKLMNOP")
	r.send(wire.RequestHeader(wire.CallIDSASL, id, -1), nil, &common.RpcSaslProto{State: common.RpcSaslProto_NEGOTIATE.Enum()})
	resp := r.recv()
	if int32(resp.Header.GetCallId()) != wire.CallIDSASL || resp.Header.GetStatus() != common.RpcResponseHeaderProto_SUCCESS {
		t.Fatalf("header %v", resp.Header)
	}
	var sasl common.RpcSaslProto
	if err := proto.Unmarshal(resp.Body, &sasl); err != nil || sasl.GetState() != common.RpcSaslProto_SUCCESS {
		t.Fatalf("sasl %v err %v", &sasl, err)
	}
	r.send(wire.RequestHeader(wire.CallIDConnectionContext, id, -1), nil, wire.ConnectionContext("u", "", clientProtocol))
	r.send(wire.RequestHeader(wire.CallIDPing, id, -1), nil, nil)
	r.send(wire.RequestHeader(7, id, -1), wire.MethodHeader("getServerDefaults", clientProtocol), &hdfs.GetServerDefaultsRequestProto{})
	resp = r.recv()
	if resp.Header.GetCallId() != 7 || resp.Header.GetStatus() != common.RpcResponseHeaderProto_SUCCESS ||
		resp.Header.GetServerIpcVersionNum() != 9 || string(resp.Header.GetClientId()) != string(id) || resp.Header.GetRetryCount() != -1 {
		t.Fatalf("header %v", resp.Header)
	}
}

func TestFatalProtocolViolations(t *testing.T) {
	_, _, addr := newTestServer(t, ServerConfig{})
	id := []byte("ABCDEFGHIJKLMNOP")
	t.Run("version", func(t *testing.T) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.Write([]byte("hrpc\x0a\x00\x00"))
		r := &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
		resp := r.recv()
		if resp.Header.GetStatus() != common.RpcResponseHeaderProto_FATAL ||
			resp.Header.GetErrorDetail() != common.RpcResponseHeaderProto_FATAL_VERSION_MISMATCH ||
			resp.Header.GetExceptionClassName() != remoteerr.ClassVersionMismatch || int32(resp.Header.GetCallId()) != -1 {
			t.Fatalf("header %v", resp.Header)
		}
		r.expectClosed()
	})
	t.Run("magic", func(t *testing.T) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
		(&rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}).expectClosed()
	})
	t.Run("call before context", func(t *testing.T) {
		r := dialRaw(t, addr, wire.AuthNone)
		r.send(wire.RequestHeader(1, id, -1), wire.MethodHeader("getServerDefaults", clientProtocol), &hdfs.GetServerDefaultsRequestProto{})
		if resp := r.recv(); resp.Header.GetStatus() != common.RpcResponseHeaderProto_FATAL {
			t.Fatalf("header %v", resp.Header)
		}
		r.expectClosed()
	})
	t.Run("undecodable body is not fatal", func(t *testing.T) {
		r := dialRaw(t, addr, wire.AuthNone)
		r.send(wire.RequestHeader(wire.CallIDConnectionContext, id, -1), nil, wire.ConnectionContext("u", "", clientProtocol))
		frame := wire.AppendRawFrame(nil, mustMarshal(t, wire.RequestHeader(3, id, -1)),
			mustMarshal(t, wire.MethodHeader("getServerDefaults", clientProtocol)), []byte{0xff})
		r.nc.Write(frame)
		if resp := r.recv(); resp.Header.GetStatus() != common.RpcResponseHeaderProto_ERROR || resp.Header.GetCallId() != 3 {
			t.Fatalf("header %v", resp.Header)
		}
		r.send(wire.RequestHeader(4, id, -1), wire.MethodHeader("getServerDefaults", clientProtocol), &hdfs.GetServerDefaultsRequestProto{})
		if resp := r.recv(); resp.Header.GetStatus() != common.RpcResponseHeaderProto_SUCCESS {
			t.Fatalf("header %v", resp.Header)
		}
	})
}

func mustMarshal(t testing.TB, m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFrameTooLargeNotAllocated announces a 1 GiB frame and checks that
// the server answers FATAL, closes, and did not allocate the frame.
func TestFrameTooLargeNotAllocated(t *testing.T) {
	srv, _, addr := newTestServer(t, ServerConfig{MaxDataLength: 1 << 20})
	r := dialRaw(t, addr, wire.AuthNone)
	r.send(wire.RequestHeader(wire.CallIDConnectionContext, []byte("ABCDEFGHIJKLMNOP"), -1), nil, wire.ConnectionContext("u", "", clientProtocol))

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := r.nc.Write([]byte{0x40, 0, 0, 0}); err != nil { // 1 GiB
		t.Fatal(err)
	}
	resp := r.recv()
	runtime.ReadMemStats(&after)
	if resp.Header.GetStatus() != common.RpcResponseHeaderProto_FATAL ||
		resp.Header.GetErrorMsg() != "RPC data length of 1073741824 exceeds maximum data length of 1048576" {
		t.Fatalf("header %v", resp.Header)
	}
	r.expectClosed()
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 64<<20 {
		t.Fatalf("server allocated %d bytes for a refused frame", grown)
	}
	if st := srv.Stats(); st.Fatal != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestBackpressure: with one handler and a queue of one, a reader blocks
// instead of dropping calls; every call is answered once handlers free up.
func TestBackpressure(t *testing.T) {
	srv := NewServer(ServerConfig{Handlers: 1, QueueSizePerHandler: 1})
	svc := srv.Service(clientProtocol)
	release := make(chan struct{})
	Handle(svc, "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
		<-release
		return &hdfs.GetFileInfoResponseProto{}, nil
	})
	addr := startServer(t, srv)
	c := newTestClient(t, addr)
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() {
			var r hdfs.GetFileInfoResponseProto
			errs <- c.Call(t.Context(), "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/x")}, &r)
		}()
	}
	// One call running, one queued, the reader blocked holding a third.
	for srv.Stats().InFlight < 3 {
		runtime.Gosched()
	}
	if st := srv.Stats(); st.Queued > st.QueueCapacity {
		t.Fatalf("queue over capacity: %+v", st)
	}
	close(release)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestFailoverOnStandbyAndDeadAddress: the first address refuses
// connections, the second is a standby, the third serves.
func TestFailoverOnStandbyAndDeadAddress(t *testing.T) {
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()

	standby := NewServer(ServerConfig{Handlers: 1})
	var standbyCalls []int32
	var mu sync.Mutex
	Handle(standby.Service(clientProtocol), "getServerDefaults", func(ctx context.Context, _ *hdfs.GetServerDefaultsRequestProto) (*hdfs.GetServerDefaultsResponseProto, error) {
		cl, _ := CallerFromContext(ctx)
		mu.Lock()
		standbyCalls = append(standbyCalls, cl.CallID)
		mu.Unlock()
		return nil, remoteerr.Standby("read")
	})
	standbyAddr := startServer(t, standby)

	var activeCaller Caller
	active := NewServer(ServerConfig{Handlers: 1})
	Handle(active.Service(clientProtocol), "getServerDefaults", func(ctx context.Context, _ *hdfs.GetServerDefaultsRequestProto) (*hdfs.GetServerDefaultsResponseProto, error) {
		activeCaller, _ = CallerFromContext(ctx)
		return &hdfs.GetServerDefaultsResponseProto{ServerDefaults: serverDefaults()}, nil
	})
	activeAddr := startServer(t, active)

	var moves []string
	c := NewClient(ClientConfig{
		Addresses: []string{deadAddr, standbyAddr, activeAddr}, User: "u", Protocol: clientProtocol,
		RetryBase: time.Millisecond, OnFailover: func(from, to string) { moves = append(moves, from+">"+to) },
	})
	defer c.Close()
	var r hdfs.GetServerDefaultsResponseProto
	if err := c.Call(t.Context(), "getServerDefaults", &hdfs.GetServerDefaultsRequestProto{}, &r); err != nil {
		t.Fatal(err)
	}
	if c.Current() != activeAddr {
		t.Fatalf("current %s, want %s", c.Current(), activeAddr)
	}
	if len(standbyCalls) != 1 || standbyCalls[0] != activeCaller.CallID || activeCaller.CallID != 1 {
		t.Fatalf("call ids: standby %v active %d", standbyCalls, activeCaller.CallID)
	}
	if activeCaller.RetryCount != 2 {
		t.Fatalf("retryCount %d, want 2", activeCaller.RetryCount)
	}
	if want := []string{deadAddr + ">" + standbyAddr, standbyAddr + ">" + activeAddr}; fmt.Sprint(moves) != fmt.Sprint(want) {
		t.Fatalf("failovers %v, want %v", moves, want)
	}
}

func TestRetriableSameCallID(t *testing.T) {
	srv := NewServer(ServerConfig{Handlers: 1})
	var seen []Caller
	Handle(srv.Service(clientProtocol), "getServerDefaults", func(ctx context.Context, _ *hdfs.GetServerDefaultsRequestProto) (*hdfs.GetServerDefaultsResponseProto, error) {
		cl, _ := CallerFromContext(ctx)
		seen = append(seen, cl)
		if len(seen) < 3 {
			return nil, remoteerr.New(remoteerr.ClassRetriable, "try again")
		}
		return &hdfs.GetServerDefaultsResponseProto{ServerDefaults: serverDefaults()}, nil
	})
	c := newTestClient(t, startServer(t, srv))
	var r hdfs.GetServerDefaultsResponseProto
	if err := c.Call(t.Context(), "getServerDefaults", &hdfs.GetServerDefaultsRequestProto{}, &r); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 {
		t.Fatalf("%d attempts", len(seen))
	}
	for i, cl := range seen {
		want := int32(i)
		if i == 0 {
			want = -1
		}
		if cl.CallID != 1 || cl.RetryCount != want {
			t.Errorf("attempt %d: callId %d retryCount %d, want 1 and %d", i, cl.CallID, cl.RetryCount, want)
		}
	}
}

// TestNonIdempotentNotResent: a connection that breaks after the request
// was sent is not retried unless the method is idempotent.
func TestNonIdempotentNotResent(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var wg sync.WaitGroup
	accepted := make(chan int, 8)
	wg.Add(1)
	go func() { // reads one call per connection, then hangs up
		defer wg.Done()
		for i := 0; ; i++ {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			br := bufio.NewReader(nc)
			wire.ReadPreamble(br)
			wire.ReadFrame(br, 1<<20, nil)
			wire.ReadFrame(br, 1<<20, nil)
			accepted <- i
			nc.Close()
		}
	}()
	defer wg.Wait()
	defer l.Close()
	for _, tc := range []struct {
		name       string
		idempotent bool
		attempts   int
	}{
		{"not idempotent", false, 1},
		{"idempotent", true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewClient(ClientConfig{Addresses: []string{l.Addr().String()}, User: "u", Protocol: clientProtocol,
				RetryBase: time.Millisecond, MaxRetries: 2, Idempotent: func(string) bool { return tc.idempotent }})
			defer c.Close()
			var r hdfs.GetServerDefaultsResponseProto
			err := c.Call(t.Context(), "getServerDefaults", &hdfs.GetServerDefaultsRequestProto{}, &r)
			if !errors.Is(err, ErrConnBroken) {
				t.Fatalf("err %v", err)
			}
			if got := len(accepted); got != tc.attempts {
				t.Fatalf("%d attempts, want %d", got, tc.attempts)
			}
			for len(accepted) > 0 {
				<-accepted
			}
		})
	}
}

func TestClientClose(t *testing.T) {
	_, svc, addr := newTestServer(t, ServerConfig{})
	release := make(chan struct{})
	defer close(release)
	Handle(svc, "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &hdfs.GetFileInfoResponseProto{}, nil
	})
	c := NewClient(ClientConfig{Addresses: []string{addr}, User: "u", Protocol: clientProtocol})
	errc := make(chan error, 1)
	go func() {
		var r hdfs.GetFileInfoResponseProto
		errc <- c.Call(t.Context(), "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/x")}, &r)
	}()
	for {
		c.mu.Lock()
		cc := c.mu.conn
		c.mu.Unlock()
		if cc != nil {
			cc.mu.Lock()
			n := len(cc.mu.pending)
			cc.mu.Unlock()
			if n > 0 {
				break
			}
		}
		runtime.Gosched()
	}
	c.Close()
	if err := <-errc; !errors.Is(err, ErrClientClosed) {
		t.Fatalf("err %v", err)
	}
	var r hdfs.GetServerDefaultsResponseProto
	if err := c.Call(t.Context(), "getServerDefaults", &hdfs.GetServerDefaultsRequestProto{}, &r); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("call after close: %v", err)
	}
}

// TestRedialAfterServerRestart: a connection that died while idle is
// replaced by a fresh one to the same address, without a retry.
func TestRedialAfterServerRestart(t *testing.T) {
	srv1, _, addr := newTestServer(t, ServerConfig{Handlers: 1})
	c := newTestClient(t, addr)
	var r hdfs.GetServerDefaultsResponseProto
	if err := c.Call(t.Context(), "getServerDefaults", &hdfs.GetServerDefaultsRequestProto{}, &r); err != nil {
		t.Fatal(err)
	}
	srv1.Close()
	for { // wait until the client's reader has seen the connection die
		c.mu.Lock()
		cc := c.mu.conn
		c.mu.Unlock()
		if cc.failure() != nil {
			break
		}
		runtime.Gosched()
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	srv2 := NewServer(ServerConfig{Handlers: 1})
	var seen Caller
	Handle(srv2.Service(clientProtocol), "getServerDefaults", func(ctx context.Context, _ *hdfs.GetServerDefaultsRequestProto) (*hdfs.GetServerDefaultsResponseProto, error) {
		seen, _ = CallerFromContext(ctx)
		return &hdfs.GetServerDefaultsResponseProto{ServerDefaults: serverDefaults()}, nil
	})
	served := make(chan error, 1)
	go func() { served <- srv2.Serve(l) }()
	defer func() { srv2.Close(); <-served }()
	if err := c.Call(t.Context(), "getServerDefaults", &hdfs.GetServerDefaultsRequestProto{}, &r); err != nil {
		t.Fatal(err)
	}
	if seen.CallID != 2 || seen.RetryCount != -1 {
		t.Fatalf("caller %+v: want call 2 on its first attempt", seen)
	}
}

func TestServerConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg ServerConfig
		ok  bool
	}{
		{ServerConfig{}, true},
		{ServerConfig{Handlers: 3, QueueSizePerHandler: 5, MaxDataLength: 1 << 20}, true},
		{ServerConfig{Handlers: -1}, false},
		{ServerConfig{QueueSizePerHandler: -1}, false},
		{ServerConfig{MaxDataLength: -1}, false},
	} {
		if err := tc.cfg.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: err %v", tc.cfg, err)
		}
	}
}

func TestHandlerCtxCancelledOnDisconnect(t *testing.T) {
	_, svc, addr := newTestServer(t, ServerConfig{})
	started := make(chan struct{})
	cancelled := make(chan error, 1)
	Handle(svc, "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
		close(started)
		<-ctx.Done()
		cancelled <- ctx.Err()
		return nil, ctx.Err()
	})
	r := dialRaw(t, addr, wire.AuthNone)
	id := []byte("ABCDEFGHIJKLMNOP")
	r.send(wire.RequestHeader(wire.CallIDConnectionContext, id, -1), nil, wire.ConnectionContext("u", "", clientProtocol))
	r.send(wire.RequestHeader(1, id, -1), wire.MethodHeader("getFileInfo", clientProtocol), &hdfs.GetFileInfoRequestProto{Src: proto.String("/a")})
	<-started
	r.nc.Close()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("handler ctx: %v", err)
	}
}

func TestSASLViolations(t *testing.T) {
	_, _, addr := newTestServer(t, ServerConfig{})
	id := []byte("ABCDEFGHIJKLMNOP")
	for _, tc := range []struct {
		name string
		auth byte
		send func(r *rawConn)
	}{
		{"sasl on a simple connection", wire.AuthNone, func(r *rawConn) {
			r.send(wire.RequestHeader(wire.CallIDSASL, id, -1), nil, &common.RpcSaslProto{State: common.RpcSaslProto_NEGOTIATE.Enum()})
		}},
		{"kerberos initiate", wire.AuthSASL, func(r *rawConn) {
			r.send(wire.RequestHeader(wire.CallIDSASL, id, -1), nil, &common.RpcSaslProto{State: common.RpcSaslProto_INITIATE.Enum()})
		}},
		{"context before negotiation", wire.AuthSASL, func(r *rawConn) {
			r.send(wire.RequestHeader(wire.CallIDConnectionContext, id, -1), nil, wire.ConnectionContext("u", "", clientProtocol))
		}},
		{"call before negotiation", wire.AuthSASL, func(r *rawConn) {
			r.send(wire.RequestHeader(1, id, -1), wire.MethodHeader("getServerDefaults", clientProtocol), &hdfs.GetServerDefaultsRequestProto{})
		}},
		{"unknown out-of-band call", wire.AuthNone, func(r *rawConn) {
			r.send(wire.RequestHeader(-7, id, -1), nil, nil)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dialRaw(t, addr, tc.auth)
			tc.send(r)
			resp := r.recv()
			if resp.Header.GetStatus() != common.RpcResponseHeaderProto_FATAL {
				t.Fatalf("header %v", resp.Header)
			}
			r.expectClosed()
		})
	}
}

// TestDescribedMethodUnsupported: a method the described .proto service
// lists without a handler answers UnsupportedOperationException naming it;
// a name outside the service still gets RpcNoSuchMethodException; a
// handler registered after Describe wins.
func TestDescribedMethodUnsupported(t *testing.T) {
	_, svc, addr := newTestServer(t, ServerConfig{})
	svc.Describe(hdfs.File_hdfs_ClientNamenodeProtocol_proto.Services().ByName("ClientNamenodeProtocol"))
	c := newTestClient(t, addr)
	var r hdfs.GetXAttrsResponseProto
	err := c.Call(t.Context(), "getXAttrs", &hdfs.GetXAttrsRequestProto{Src: proto.String("/")}, &r)
	if !errors.Is(err, remoteerr.ErrUnsupported) || !strings.Contains(err.Error(), "ClientProtocol.getXAttrs") {
		t.Fatalf("described method: %v", err)
	}
	if err := c.Call(t.Context(), "noSuchMethod", &hdfs.GetXAttrsRequestProto{Src: proto.String("/")}, &r); !errors.Is(err, remoteerr.ErrNoSuchMethod) {
		t.Fatalf("unknown method: %v", err)
	}
	Handle(svc, "getXAttrs", func(ctx context.Context, req *hdfs.GetXAttrsRequestProto) (*hdfs.GetXAttrsResponseProto, error) {
		return &hdfs.GetXAttrsResponseProto{}, nil
	})
	if err := c.Call(t.Context(), "getXAttrs", &hdfs.GetXAttrsRequestProto{Src: proto.String("/")}, &r); err != nil {
		t.Fatalf("handled method: %v", err)
	}
	if svc.Implemented("listXAttrs") || !svc.Implemented("getXAttrs") {
		t.Fatal("Implemented is wrong")
	}
}
