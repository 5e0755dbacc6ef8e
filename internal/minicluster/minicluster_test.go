package minicluster

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/client"
)

// TestDomainSockets runs a cluster whose DataNodes serve domain sockets and
// a client that uses them: a replicated file is written and read back, the
// client and the pipeline's mirror connected through the sockets, and the
// written client configuration turns the socket traffic on.
func TestDomainSockets(t *testing.T) {
	dir, err := os.MkdirTemp("", "mc") // short: socket paths hold 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	c, err := Start(ctx, Options{Dir: dir, DataNodes: 2, DomainSockets: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.DomainSocketPath() == "" {
		t.Fatal("no domain socket path")
	}
	fsys, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}, DomainSocketPath: c.DomainSocketPath()})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	data := make([]byte, 3<<20+123)
	rand.NewChaCha8([32]byte{1}).Read(data)
	w, err := fsys.CreateFile(ctx, "/f", client.CreateOptions{Replication: 2, Perm: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := fsys.Open(ctx, "/f")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v), want the %d written", len(got), err, len(data))
	}
	// The first DataNode of the pipeline hears from the client, the second
	// from the first (the mirror), and one of them serves the read.
	var n int64
	for i, dn := range c.DataNodes() {
		if dn.DomainSocket() == "" {
			t.Fatal("a DataNode without its domain socket")
		}
		if dn.DomainSocketConnections() == 0 {
			t.Errorf("DataNode %d had no connection on its domain socket", i)
		}
		n += dn.DomainSocketConnections()
	}
	if n < 3 {
		t.Fatalf("%d connections on the domain sockets, want the write, its mirror and the read", n)
	}
	confDir := filepath.Join(dir, "conf")
	if err := c.WriteConfig(confDir); err != nil {
		t.Fatal(err)
	}
	site, err := os.ReadFile(filepath.Join(confDir, "hdfs-site.xml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"dfs.domain.socket.path", c.DomainSocketPath(), "dfs.client.domain.socket.data.traffic"} {
		if !strings.Contains(string(site), want) {
			t.Errorf("hdfs-site.xml lacks %q:\n%s", want, site)
		}
	}
}

// TestDomainSocketsPathTooLong: a directory too deep for a socket path
// leaves the cluster on TCP, working.
func TestDomainSocketsPathTooLong(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	c, err := Start(context.Background(), Options{Dir: dir, DataNodes: 1, DomainSockets: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.DomainSocketPath() != "" || c.DataNodes()[0].DomainSocket() != "" {
		t.Fatalf("domain socket %q with a %d-byte directory", c.DomainSocketPath(), len(dir))
	}
}
