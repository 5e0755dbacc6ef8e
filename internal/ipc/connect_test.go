package ipc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestConnectRetryPolicy: a refused connection is retried MaxRetries
// times Interval apart, each retry announced with Hadoop's line; then the
// call fails with Hadoop's ConnectException text.
func TestConnectRetryPolicy(t *testing.T) {
	addr := closedPort(t)
	_, port, _ := net.SplitHostPort(addr)
	var mu sync.Mutex
	var lines []string
	c := NewClient(ClientConfig{Addresses: []string{addr}, Protocol: clientProtocol, User: "u",
		ConnectRetry: ConnectRetry{MaxRetries: 3, Interval: 5 * time.Millisecond, Notify: func(m string) {
			mu.Lock()
			lines = append(lines, m)
			mu.Unlock()
		}}})
	defer c.Close()
	err := c.Call(t.Context(), "getServerDefaults", &hdfs.GetServerDefaultsRequestProto{}, &hdfs.GetServerDefaultsResponseProto{})
	var ce *ConnectError
	if !errors.As(err, &ce) || !errors.Is(err, ErrRetriesExhausted) {
		t.Fatalf("error %v (%T)", err, err)
	}
	if !strings.Contains(err.Error(), " to "+addr+" failed on connection exception: java.net.ConnectException: Connection refused; For more details see:  http://wiki.apache.org/hadoop/ConnectionRefused") ||
		!strings.HasPrefix(err.Error(), "Call From ") {
		t.Fatalf("message %q", err)
	}
	if len(lines) != 3 {
		t.Fatalf("%d retry lines: %q", len(lines), lines)
	}
	for i, l := range lines {
		want := fmt.Sprintf("Retrying connect to server: 127.0.0.1/127.0.0.1:%s. Already tried %d time(s); retry policy is RetryUpToMaximumCountWithFixedSleep(maxRetries=3, sleepTime=5 MILLISECONDS)", port, i)
		if l != want {
			t.Fatalf("line %d:\n got %q\nwant %q", i, l, want)
		}
	}
}

// TestConnectRetryReachesLateServer: a server that starts while the
// client retries answers the call.
func TestConnectRetryReachesLateServer(t *testing.T) {
	addr := closedPort(t)
	srv := NewServer(ServerConfig{})
	Handle(srv.Service(clientProtocol), "getServerDefaults", func(_ context.Context, _ *hdfs.GetServerDefaultsRequestProto) (*hdfs.GetServerDefaultsResponseProto, error) {
		return &hdfs.GetServerDefaultsResponseProto{ServerDefaults: serverDefaults()}, nil
	})
	served := make(chan error, 1)
	var once sync.Once
	c := NewClient(ClientConfig{Addresses: []string{addr}, Protocol: clientProtocol, User: "u",
		ConnectRetry: ConnectRetry{MaxRetries: 50, Interval: 10 * time.Millisecond, Notify: func(string) {
			once.Do(func() {
				l, err := net.Listen("tcp", addr)
				if err != nil {
					served <- err
					return
				}
				go func() { served <- srv.Serve(l) }()
			})
		}}})
	defer c.Close()
	var resp hdfs.GetServerDefaultsResponseProto
	if err := c.Call(t.Context(), "getServerDefaults", &hdfs.GetServerDefaultsRequestProto{}, &resp); err != nil {
		t.Fatal(err)
	}
	c.Close()
	srv.Close()
	if err := <-served; !errors.Is(err, ErrServerClosed) {
		t.Fatalf("serve: %v", err)
	}
}

// TestUnknownHostText: a name that does not resolve is Hadoop's
// UnknownHostException, not retried.
func TestUnknownHostText(t *testing.T) {
	dns := &net.DNSError{Err: "no such host", Name: "nosuch.example", IsNotFound: true}
	if !isUnknownHost(&dialError{"nosuch.example:8020", &net.OpError{Op: "dial", Err: dns}}) {
		t.Fatal("a not-found DNS error is not an unknown host")
	}
	if isUnknownHost(&net.DNSError{Err: "timeout", IsTimeout: true}) {
		t.Fatal("a DNS timeout taken for an unknown host")
	}
	e := &ConnectError{Addr: "nosuch.example:8020", Unknown: true, Err: dns}
	if e.Error() != "java.net.UnknownHostException: nosuch.example" {
		t.Fatalf("%q", e.Error())
	}
}
