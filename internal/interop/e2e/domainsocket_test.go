package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDomainSocketTraffic: DataNode processes configured with
// dfs.domain.socket.path serve their sockets; our CLI, configured with
// dfs.client.domain.socket.data.traffic, writes and reads through them
// (and the first DataNode mirrors to the second through its socket); the
// stock client, which knows only TCP, reads the same bytes.
func TestDomainSocketTraffic(t *testing.T) {
	sock, err := os.MkdirTemp("", "e2esock") // short: a socket path holds 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sock)
	// DEBUG makes each DataNode log the replicas it receives, with the peer.
	t.Setenv("HADOOP_ROOT_LOGGER", "DEBUG,console")
	c := startCluster(t, 2, map[string]string{
		"dfs.domain.socket.path":                filepath.Join(sock, "dn._PORT.sock"),
		"dfs.client.domain.socket.data.traffic": "true",
		"dfs.replication":                       "2",
	})
	local, sum := randomFile(t, 5<<20+7, 9)
	c.dfs(t, "-put", local, "/f")
	if got := c.ourCat(t, "/f"); got != sum {
		t.Fatalf("our -cat: sha256 %s, want %s", got, sum)
	}
	if got := stockHash(t, c.stockClient(t), "/f"); got != sum {
		t.Fatalf("stock client: sha256 %s, want %s", got, sum)
	}
	for i, dn := range c.dns {
		log := dn.logText()
		if !strings.Contains(log, "domainSocket="+sock) {
			t.Errorf("DataNode %d did not serve a domain socket:\n%s", i, tail(log, 20))
		}
		received := false
		for _, l := range strings.Split(log, "\n") {
			if strings.Contains(l, "block received") && strings.Contains(l, "remote=local") {
				received = true
			}
		}
		if !received {
			t.Errorf("DataNode %d received no block through its domain socket:\n%s", i, tail(log, 20))
		}
	}
}
