package web

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// waitFor polls cond, a state the server reaches on its own, for at most
// 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// rawGet opens a connection and sends a GET for path without reading.
func rawGet(t *testing.T, ts *testServer, path string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", ts.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	// A small receive buffer keeps what the kernel takes for the client
	// small, so a server's writes block soon.
	nc.(*net.TCPConn).SetReadBuffer(4 << 10)
	if _, err := fmt.Fprintf(nc, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
	return nc
}

// closedByServer reports whether reading nc ends (EOF or reset) within a
// few seconds, after draining what was sent.
func closedByServer(nc net.Conn) bool {
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, nc)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// TestSlowReaderIsDropped: a client that asks for a long answer and reads
// none of it holds its request for IdleTimeout, then loses the connection.
func TestSlowReaderIsDropped(t *testing.T) {
	ts := startServer(t, Config{Limits: Limits{IdleTimeout: 200 * time.Millisecond}})
	done := make(chan error, 1)
	ts.Handle("GET /big", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 64<<10)
		for range 1024 { // 64 MiB: far more than socket buffers hold
			if _, err := w.Write(chunk); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}))
	ts.start()
	rawGet(t, ts, "/big")
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("64 MiB written to a client that reads nothing")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the write to a client that reads nothing did not time out")
	}
	// The server's side is closed (the kernel may still hold bytes for
	// the client).
	waitFor(t, "the connection to be closed", func() bool { return ts.OpenConns() == 0 })
}

// TestIdleConnectionClosed: a keep-alive connection that sends no further
// request is closed after IdleTimeout.
func TestIdleConnectionClosed(t *testing.T) {
	ts := startServer(t, Config{Limits: Limits{IdleTimeout: 100 * time.Millisecond}}).start()
	nc := rawGet(t, ts, "/jmx?qry=none:x=y")
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if !closedByServer(nc) {
		t.Fatal("idle keep-alive connection not closed")
	}
}

// TestSilentRequestBody: a request whose body never comes fails its
// handler's read after IdleTimeout.
func TestSilentRequestBody(t *testing.T) {
	ts := startServer(t, Config{Limits: Limits{IdleTimeout: 100 * time.Millisecond}})
	done := make(chan error, 1)
	ts.Handle("PUT /upload", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.Copy(io.Discard, r.Body)
		done <- err
	}))
	ts.start()
	nc, err := net.Dial("tcp", ts.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	fmt.Fprintf(nc, "PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nabc")
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("body read completed")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the read of a body that never comes did not time out")
	}
}

// TestEndpointBound: requests over an endpoint's bound get a 503 at once;
// other endpoints are served meanwhile.
func TestEndpointBound(t *testing.T) {
	ts := startServer(t, Config{Limits: Limits{MaxEndpointRequests: 1}})
	started, release := make(chan struct{}), make(chan struct{})
	ts.Handle("GET /slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		fmt.Fprint(w, "done")
	}))
	ts.start()
	first := make(chan string, 1)
	go func() {
		_, _, body := ts.get(t, "/slow")
		first <- body
	}()
	<-started
	code, hdr, body := ts.get(t, "/slow")
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") != "1" ||
		body != "web: too many concurrent GET /slow requests (limit 1); try again later\n" {
		t.Fatalf("over the bound: %d %v %q", code, hdr, body)
	}
	if code, _, _ := ts.get(t, "/jmx"); code != 200 {
		t.Fatalf("/jmx while /slow is busy: %d", code)
	}
	close(release)
	if b := <-first; b != "done" {
		t.Fatalf("first request: %q", b)
	}
}

// TestServerWideBound: hadoop.http.max.threads bounds requests over all
// endpoints.
func TestServerWideBound(t *testing.T) {
	ts := startServer(t, Config{Limits: Limits{MaxRequests: 1}})
	started, release := make(chan struct{}), make(chan struct{})
	ts.Handle("GET /slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
	}))
	ts.start()
	first := make(chan int, 1)
	go func() {
		code, _, _ := ts.get(t, "/slow")
		first <- code
	}()
	<-started
	code, _, body := ts.get(t, "/jmx")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "too many concurrent requests (limit 1)") {
		t.Fatalf("over the bound: %d %q", code, body)
	}
	close(release)
	if c := <-first; c != 200 {
		t.Fatalf("first request: %d", c)
	}
}

// TestStacksBounded: /stacks dumps at once are bounded (503 over the
// bound) and a dump is cut at MaxStacksBytes.
func TestStacksBounded(t *testing.T) {
	ts := startServer(t, Config{Limits: Limits{MaxStacks: 1, MaxStacksBytes: 2048}}).start()
	code, _, body := ts.get(t, "/stacks")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	if !strings.HasPrefix(body, "Process Thread Dump: ") || len(body) > 2048+200 ||
		!strings.Contains(body, "... dump cut at 2048 bytes (the limit)") {
		t.Fatalf("dump of %d bytes:\n%s", len(body), body)
	}
	if !ts.stacks.enter() { // a dump in progress
		t.Fatal("stacks gate busy")
	}
	code, _, body = ts.get(t, "/stacks")
	ts.stacks.leave()
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "too many concurrent /stacks requests (limit 1)") {
		t.Fatalf("over the bound: %d %q", code, body)
	}
}

// TestStacksNonReaders: many clients that ask for /stacks and read
// nothing are answered 503 or cut off; a well-behaved one still gets its
// dump once they are gone, and none of them is left holding a request.
func TestStacksNonReaders(t *testing.T) {
	ts := startServer(t, Config{Limits: Limits{IdleTimeout: 200 * time.Millisecond}}).start()
	for range 50 {
		rawGet(t, ts, "/stacks")
	}
	// The server may not have read all of their requests yet: a
	// well-behaved client retries its 503s (Retry-After) until they are
	// let go, and then gets its dump.
	var code int
	var body string
	waitFor(t, "a dump for a client that reads", func() bool {
		code, _, body = ts.get(t, "/stacks")
		return code == 200
	})
	if !strings.HasPrefix(body, "Process Thread Dump: ") {
		t.Fatalf("status %d: %.200s", code, body)
	}
	waitFor(t, "the non-reading clients to be let go", func() bool {
		return len(ts.requests.slots) == 0 && len(ts.stacks.slots) == 0
	})
}

// TestMaxConnections: the connection over the bound gets a 503 and is
// closed at once.
func TestMaxConnections(t *testing.T) {
	ts := startServer(t, Config{Limits: Limits{MaxConnections: 2}}).start()
	for range 2 {
		nc, err := net.Dial("tcp", ts.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
	}
	waitFor(t, "two connections", func() bool { return ts.OpenConns() == 2 })
	over, err := net.Dial("tcp", ts.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	got, _ := io.ReadAll(io.LimitReader(over, 4096))
	if !strings.HasPrefix(string(got), "HTTP/1.1 503 Service Unavailable\r\n") ||
		!strings.HasSuffix(string(got), "web: too many connections (limit 2); try again later\n") {
		t.Fatalf("answer %q", got)
	}
	if ts.Refused() != 1 {
		t.Fatalf("refused %d", ts.Refused())
	}
}

func TestLimitsFromConf(t *testing.T) {
	l, err := LimitsFrom(conf.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if want := (Limits{IdleTimeout: time.Minute, MaxHeaderBytes: 65536}); l != want {
		t.Fatalf("defaults %+v, want %+v", l, want)
	}
	if l.withDefaults().MaxRequests != 250 {
		t.Fatalf("hadoop.http.max.threads -1 gives %d", l.withDefaults().MaxRequests)
	}
	l, err = LimitsFrom(conf.Defaults().With(conf.KeyValue{Key: conf.HadoopHTTPMaxThreads, Value: "16"}))
	if err != nil || l.MaxRequests != 16 {
		t.Fatalf("max threads 16: %+v %v", l, err)
	}
	for key, v := range map[string]string{conf.HadoopHTTPMaxThreads: "0", conf.HadoopHTTPIdleTimeout: "-5",
		conf.HadoopHTTPMaxRequestHeaderSize: "big"} {
		if _, err := LimitsFrom(conf.Defaults().With(conf.KeyValue{Key: key, Value: v})); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%s: %v", key, v, err)
		}
	}
}

// countingReader counts the bytes a client's transport took of a body.
type countingReader struct{ n atomic.Int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return len(p), nil
}

// TestRefusedUploadNotRead: an upload sent with "Expect: 100-continue" that
// the handler refuses without reading gets its answer at once; the client
// never sends the body (the server must not wait for it first).
func TestRefusedUploadNotRead(t *testing.T) {
	ts := startServer(t, Config{})
	ts.Handle("PUT /upload", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not now", http.StatusExpectationFailed)
	}))
	ts.start()
	body := &countingReader{}
	req, err := http.NewRequest(http.MethodPut, ts.base+"/upload", io.LimitReader(body, 8<<20))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 8 << 20
	req.Header.Set("Expect", "100-continue")
	// Waiting this long for "100 Continue" means: send the body only if
	// the server asks for it or says nothing for a minute.
	tr := &http.Transport{ExpectContinueTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusExpectationFailed {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if n := body.n.Load(); n != 0 {
		t.Fatalf("the client sent %d bytes of a body the server refused", n)
	}
}
