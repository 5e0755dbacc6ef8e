package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestSecurityHeadersEverywhere(t *testing.T) {
	ts := startServer(t, Config{})
	ts.Handle("GET /isActive", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "I am Active")
	}))
	ts.start()
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/jmx", 200},
		{"GET", "/conf", 404},
		{"GET", "/stacks", 200},
		{"GET", "/isActive", 200},
		{"GET", "/no/such/page", 404},
		{"POST", "/jmx", 405},
		{"PUT", "/webhdfs/v1/x?op=CREATE", 501},
	} {
		code, hdr, _ := ts.do(t, tc.method, tc.path)
		if code != tc.code {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, code, tc.code)
		}
		if hdr.Get("X-Content-Type-Options") != "nosniff" || hdr.Get("X-Frame-Options") != "SAMEORIGIN" {
			t.Errorf("%s %s: headers %v", tc.method, tc.path, hdr)
		}
	}
}

func TestHandle(t *testing.T) {
	ts := startServer(t, Config{})
	ts.Handle("GET /isActive", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "I am Active")
	}))
	ts.Handle("GET /{$}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "home")
	}))
	ts.start()
	// Registering after Start works too.
	ts.Handle("GET /later", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "later")
	}))
	for path, want := range map[string]string{"/isActive": "I am Active", "/": "home", "/later": "later"} {
		code, _, body := ts.get(t, path)
		if code != 200 || body != want {
			t.Errorf("GET %s = %d %q, want 200 %q", path, code, body, want)
		}
	}
	if code, _, _ := ts.get(t, "/other"); code != 404 {
		t.Errorf("GET /other = %d, want 404", code)
	}
}

func TestStacks(t *testing.T) {
	ts := startServer(t, Config{}).start()
	code, hdr, body := ts.get(t, "/stacks")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	if ct := hdr.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	first, rest, _ := strings.Cut(body, "\n")
	var n int
	if _, err := fmt.Sscanf(first, "Process Thread Dump: %d active goroutines", &n); err != nil || n < 1 {
		t.Errorf("first line %q", first)
	}
	if !strings.Contains(rest, "goroutine ") || !strings.Contains(rest, "serveStacks") {
		t.Errorf("no goroutine dump:\n%.400s", rest)
	}
}

func TestWebHDFSNotSupported(t *testing.T) {
	ts := startServer(t, Config{Role: "DataNode"}).start()
	for _, tc := range []struct{ method, path string }{
		{"GET", "/webhdfs/v1/?op=LISTSTATUS"},
		{"GET", "/webhdfs/v1"},
		{"PUT", "/webhdfs/v1/user/a/b?op=CREATE&overwrite=true"},
		{"POST", "/webhdfs/v1/f?op=APPEND"},
		{"DELETE", "/webhdfs/v1/f?op=DELETE"},
	} {
		code, hdr, body := ts.do(t, tc.method, tc.path)
		if code != http.StatusNotImplemented {
			t.Errorf("%s %s: status %d", tc.method, tc.path, code)
			continue
		}
		if ct := hdr.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q", ct)
		}
		var doc struct {
			RemoteException struct {
				Exception     string `json:"exception"`
				JavaClassName string `json:"javaClassName"`
				Message       string `json:"message"`
			}
		}
		if err := json.Unmarshal([]byte(body), &doc); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		re := doc.RemoteException
		if re.Exception != "UnsupportedOperationException" ||
			re.JavaClassName != "java.lang.UnsupportedOperationException" ||
			re.Message != "WebHDFS is not supported by this DataNode; use hdfs:// (RPC port)" {
			t.Errorf("%s %s: %+v", tc.method, tc.path, re)
		}
	}
}

func TestListenError(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	_, err = New(Config{Addr: addr, KeyName: "dfs.namenode.http-address", Role: "NameNode"})
	if err == nil {
		t.Fatal("New on a busy port succeeded")
	}
	want := "web: listen on " + addr + " (dfs.namenode.http-address): "
	if !strings.HasPrefix(err.Error(), want) || !errors.Is(err, ErrListen) {
		t.Errorf("err = %q, want prefix %q wrapping ErrListen", err, want)
	}
	_, err = New(Config{KeyName: "dfs.datanode.http.address"})
	if err == nil || !errors.Is(err, ErrListen) || !strings.Contains(err.Error(), "dfs.datanode.http.address") {
		t.Errorf("empty Addr: err = %v", err)
	}
}

func TestListenerConfig(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, Config{Listener: ln, Addr: "ignored:1"}).start()
	if ts.Addr().String() != ln.Addr().String() {
		t.Errorf("Addr = %v, want %v", ts.Addr(), ln.Addr())
	}
	if code, _, _ := ts.get(t, "/jmx"); code != 200 {
		t.Errorf("status %d", code)
	}
}

func TestCloseWithoutStart(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, err := New(Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	addr := s.Addr().String()
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("listener still accepts after Close")
	}
	s.Start() // after Close: does nothing
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCloseTwiceAndWaits(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var logs strings.Builder
	s, err := New(Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	s.Start() // second Start does nothing
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + s.Addr().String() + "/jmx")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	default:
		t.Fatal("Close returned before the serving goroutine ended")
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if logs.Len() != 0 {
		t.Errorf("unexpected log output: %s", logs.String())
	}
}

func TestCloseDeadlineWithRequestInFlight(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, err := New(Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	entered, release, finished := make(chan struct{}), make(chan struct{}), make(chan struct{})
	s.Handle("GET /slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(finished)
		close(entered)
		<-release
	}))
	s.Start()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	reqDone := make(chan error, 1)
	go func() {
		resp, err := client.Get("http://" + s.Addr().String() + "/slow")
		if err == nil {
			resp.Body.Close()
		}
		reqDone <- err
	}()
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close with an ended ctx and a request in flight = %v, want context.Canceled", err)
	}
	select {
	case <-s.done:
	default:
		t.Error("Close returned before the serving goroutine ended")
	}
	close(release)
	<-finished
	<-reqDone
	if err := s.Close(context.Background()); !errors.Is(err, context.Canceled) {
		t.Errorf("second Close = %v, want the first Close's error", err)
	}
}

func TestConcurrentClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, err := New(Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- s.Close(context.Background()) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
