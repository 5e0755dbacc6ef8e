package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDecommissionDfsadmin decommissions a DataNode of four processes the
// way an operator does: its address into dfs.hosts.exclude, `hdfs dfsadmin
// -refreshNodes`, then `hdfs dfsadmin -report -decommissioning` and
// `-report` until it says Decommissioned. The file reads back throughout,
// and every block has three replicas off the node when it is marked.
func TestDecommissionDfsadmin(t *testing.T) {
	parallel(t)
	exclude := filepath.Join(t.TempDir(), "dfs.exclude")
	if err := os.WriteFile(exclude, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	extra := map[string]string{}
	for k, v := range fastFailure {
		extra[k] = v
	}
	// Test-sized periods: heartbeats, redundancy work and the admin
	// monitor every 200 ms.
	for k, v := range map[string]string{"dfs.hosts.exclude": exclude, "dfs.heartbeat.interval": "200ms",
		"dfs.namenode.redundancy.interval.seconds": "200ms", "dfs.namenode.decommission.interval": "200ms"} {
		extra[k] = v
	}
	c := startCluster(t, 4, extra)
	local, sum := randomFile(t, 3<<20+555, 11)
	c.dfs(t, "-put", local, "/f")
	c.waitReplicated(t, "/f", 3, "", 30*time.Second)
	victim := c.locations(t, "/f").GetBlocks()[0].GetLocs()[0].GetId()
	addr := fmt.Sprintf("%s:%d", victim.GetIpAddr(), victim.GetXferPort())
	if err := os.WriteFile(exclude, []byte(addr+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := c.run(t, c.confDir("nn"), "dfsadmin", "-refreshNodes"); out != "Refresh nodes successful\n" {
		t.Fatalf("dfsadmin -refreshNodes said %q", out)
	}
	sawDecommissioning := false
	deadline := time.Now().Add(60 * time.Second)
	for {
		if !sawDecommissioning {
			out := c.run(t, c.confDir("nn"), "dfsadmin", "-report", "-decommissioning")
			sawDecommissioning = strings.Contains(out, "Decommissioning datanodes (1):") && strings.Contains(out, "Name: "+addr)
		}
		if got := c.ourCat(t, "/f"); got != sum {
			t.Fatalf("read during decommissioning: %s, want %s", got, sum)
		}
		if status(c.run(t, c.confDir("nn"), "dfsadmin", "-report"), addr) == "Decommissioned" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not decommissioned within a minute:\n%s", addr, c.run(t, c.confDir("nn"), "dfsadmin", "-report"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, b := range c.locations(t, "/f").GetBlocks() {
		off := 0
		for _, l := range b.GetLocs() {
			if fmt.Sprintf("%s:%d", l.GetId().GetIpAddr(), l.GetId().GetXferPort()) != addr {
				off++
			}
		}
		if off < 3 {
			t.Fatalf("block %d has %d replicas off %s once it is decommissioned", b.GetB().GetBlockId(), off, addr)
		}
	}
	if got := c.ourCat(t, "/f"); got != sum {
		t.Fatalf("read after decommissioning: %s, want %s", got, sum)
	}
	if !sawDecommissioning {
		t.Log("the node was decommissioned before -report -decommissioning listed it")
	}
}

// status is the "Decommission Status" dfsadmin -report gives a node.
func status(report, addr string) string {
	in := false
	for _, l := range strings.Split(report, "\n") {
		if strings.HasPrefix(l, "Name: ") {
			in = strings.HasPrefix(l, "Name: "+addr+" ")
		}
		if v, ok := strings.CutPrefix(l, "Decommission Status : "); ok && in {
			return v
		}
	}
	return ""
}
