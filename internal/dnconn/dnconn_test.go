package dnconn

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// acceptInto accepts connections on l until it is closed, sending name for
// each.
func acceptInto(l net.Listener, name string, got chan<- string) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Close()
		got <- name
	}
}

func TestDialerDomainSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "dial")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	port := tcp.Addr().(*net.TCPAddr).Port
	pattern := filepath.Join(dir, "dn._PORT.sock")
	path := filepath.Join(dir, "dn."+strconv.Itoa(port)+".sock")
	listenUnix := func() net.Listener {
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	now := time.Unix(1000, 0)
	d := NewDialer(pattern, 10*time.Second)
	d.SetClock(func() time.Time { return now })
	ctx := context.Background()
	addr := tcp.Addr().String()

	got := make(chan string, 4)
	go acceptInto(tcp, "tcp", got)
	unix := listenUnix()
	go acceptInto(unix, "unix", got)
	dialAndCheck := func(want string) {
		t.Helper()
		c, err := d.Dial(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		select {
		case n := <-got:
			if n != want {
				t.Fatalf("connected over %s, want %s", n, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no connection accepted")
		}
	}
	dialAndCheck("unix")
	// The socket goes away: TCP, and the socket is not tried for a while.
	unix.Close()
	dialAndCheck("tcp")
	unix = listenUnix()
	defer unix.Close()
	go acceptInto(unix, "unix", got)
	now = now.Add(DomainRetryAfter - time.Second)
	dialAndCheck("tcp")
	now = now.Add(2 * time.Second)
	dialAndCheck("unix")

	// Not this host's address, or no pattern: TCP, never the socket.
	if p := d.LocalPath("192.0.2.1:" + strconv.Itoa(port)); p != "" {
		t.Errorf("a remote DataNode gets socket %q", p)
	}
	var none *Dialer
	if p := none.LocalPath(addr); p != "" {
		t.Errorf("no pattern, socket %q", p)
	}
	if NewDialer("", time.Second) != nil {
		t.Error("an empty pattern makes a dialer")
	}
}
