package datanode

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/dnconn"
)

// dialUnix connects a test client to dn's domain socket.
func dialUnix(t testing.TB, dn *DataNode) *client {
	t.Helper()
	c, err := net.Dial("unix", dn.DomainSocket())
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(waitFor))
	t.Cleanup(func() { _ = c.Close() })
	return &client{t: t, conn: c, br: bufio.NewReader(c)}
}

// socketDir is a directory for sockets: t.TempDir's path may be too long
// for a socket address.
func socketDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "dnsock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func TestDomainSocketServesDataTransfer(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	pattern := filepath.Join(socketDir(t), "dn._PORT.sock")
	dn := startDN(t, nn, func(c *Config) { c.DomainSocketPath = pattern })
	want := dnconn.DomainSocketPath(pattern, int(tcpPort(dn.XferAddr())))
	if dn.DomainSocket() != want {
		t.Fatalf("socket %q, want %q", dn.DomainSocket(), want)
	}
	fi, err := os.Stat(want)
	if err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o666 {
		t.Fatalf("socket file: %v %v", fi, err)
	}
	data := randomData(200_000, 9)
	acks := dialUnix(t, dn).writeBlock(21, 1001, nil, data, []int{100, 70_000, 129_900}, nil)
	if len(acks) == 0 || !acks[len(acks)-1].Success() {
		t.Fatalf("acks %+v", acks)
	}
	if got := dialUnix(t, dn).readBlock(21, 1001, 0, int64(len(data))); !bytes.Equal(got, data) {
		t.Fatal("read over the domain socket: wrong bytes")
	}
	if got := dial(t, dn).readBlock(21, 1001, 5, 1000); !bytes.Equal(got, data[5:1005]) {
		t.Fatal("read over TCP: wrong bytes")
	}
	if err := dn.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(want); !os.IsNotExist(err) {
		t.Fatalf("socket file left after Close: %v", err)
	}
}

func TestDomainSocketPathRefused(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	open := socketDir(t)
	unsafe := filepath.Join(open, "open")
	if err := os.Mkdir(unsafe, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(unsafe, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	notSocket := filepath.Join(open, "file")
	if err := os.WriteFile(notSocket, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"relative/dn.sock", "not an absolute path"},
		{"/" + strings.Repeat("x", 120), "at most 107"},
		{filepath.Join(unsafe, "dn.sock"), "writable by everyone"},
		{notSocket, "not a socket"},
		{filepath.Join(open, "missing", "dn.sock"), "no such file"},
	} {
		cfg := testConfig(nn.addr, t.TempDir())
		cfg.DomainSocketPath = tc.path
		dn, err := Start(context.Background(), cfg, Deps{Logger: testLogger(t)})
		if err == nil {
			dn.Close()
			t.Errorf("%s: started", tc.path)
			continue
		}
		if !strings.Contains(err.Error(), "dfs.domain.socket.path") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want the key and %q", tc.path, err, tc.want)
		}
	}
}

// TestDomainSocketStaleReplaced: a socket file left by a DataNode that was
// killed does not stop the next one.
func TestDomainSocketStaleReplaced(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	path := filepath.Join(socketDir(t), "dn.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close() // the file stays, as after kill -9
	if _, err := os.Lstat(path); err != nil {
		t.Fatal(err)
	}
	dn := startDN(t, nn, func(c *Config) { c.DomainSocketPath = path })
	c := dialUnix(t, dn)
	c.startWrite(writeReq(5, 1001, nil, datatransfer.DefaultChecksum()))
}
