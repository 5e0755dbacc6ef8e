//go:build integration

package client_test

import (
	"bytes"
	"context"
	"os/user"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/datanode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
)

// TestRealCluster writes and reads through hdfsgo's own NameNode and
// DataNode. It needs the build tag integration (the server packages are
// not dependencies of the client's tests otherwise):
//
//	go test -tags integration -run RealCluster ./client/
func TestRealCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NameNode and a DataNode")
	}
	nn := nntest.New(t)
	dn, err := datanode.Start(context.Background(), datanode.Config{
		DataDirs: []string{t.TempDir()}, XferAddress: "127.0.0.1:0", HTTPAddress: "127.0.0.1:0", IPCAddress: "127.0.0.1:0",
		HeartbeatInterval: 100 * time.Millisecond, BlockReportInterval: time.Hour, MaxTransferThreads: 64,
		NameNodes: []string{nn.Addr}, User: "hdfs", Hostname: "localhost",
	}, datanode.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	defer dn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := dn.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	fsys, err := client.New(client.Options{Addresses: []string{nn.Addr}, User: currentUser(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	for _, n := range []int{0, 4, 70000, 3 << 20} {
		data := pattern(n, uint64(n))
		name := "/real" + string(rune('a'+n%26))
		w, err := fsys.CreateFile(ctx, name, client.CreateOptions{Replication: 1, BlockSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data[:n/2]); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatalf("%d bytes: flush: %v", n, err)
		}
		if _, err := w.Write(data[n/2:]); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatalf("%d bytes: second flush: %v", n, err)
		}
		// Open file: the last block's length comes from the DataNode.
		if got, err := fsys.ReadFile(ctx, name); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read while open: %d bytes, %v", n, len(got), err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%d bytes: close: %v", n, err)
		}
		got, err := fsys.ReadFile(ctx, name)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read back %d bytes, %v", n, len(got), err)
		}
	}
	if err := fsys.WriteFile(ctx, "/foo.txt", []byte("bar\n"), false); err != nil {
		t.Fatal(err)
	}
	sum, err := fsys.Checksum(ctx, "/foo.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := sum.String(); got != "MD5-of-0MD5-of-512CRC32C\t00000200000000000000000027c076e4987344253650d3335a5d08ce" {
		t.Errorf("checksum %s", got)
	}
}

// currentUser is the NameNode's superuser: the user running it.
func currentUser(t *testing.T) string {
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}
