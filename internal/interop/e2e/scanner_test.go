package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// scannerConf is a test-sized block scanner: a few seconds per period, a
// slow rate so that a pass over a few replicas takes seconds, and the
// cursor saved often.
var scannerConf = map[string]string{
	"dfs.block.scanner.volume.bytes.per.second": "131072",
	"dfs.datanode.scan.period.hours":            "3s",
	"dfs.block.scanner.cursor.save.interval.ms": "200",
}

// TestScannerHealsCorruptReplica runs the NameNode and three DataNodes as
// processes. A byte flipped on disk in a replica nobody reads is found by
// the DataNode's block scanner, reported, and healed by the NameNode (a
// good copy goes to the third DataNode, the bad one is deleted); the
// DataNode holding it is killed in the middle of a scan and resumes from
// its cursor, which its log shows.
func TestScannerHealsCorruptReplica(t *testing.T) {
	parallel(t)
	conf := map[string]string{}
	for _, m := range []map[string]string{fastFailure, scannerConf} {
		for k, v := range m {
			conf[k] = v
		}
	}
	c := startCluster(t, 3, conf)
	for i := range 4 {
		local, _ := randomFile(t, 128<<10, uint64(20+i))
		c.dfs(t, "-put", local, fmt.Sprintf("/warm%d", i))
	}
	local, sum := randomFile(t, 200<<10, 30)
	c.dfs(t, "-D", "dfs.replication=2", "-put", local, "/cold")
	orig, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	coldID := c.locations(t, "/cold").GetBlocks()[0].GetB().GetBlockId()
	replicaFiles := func() []string {
		files, _ := filepath.Glob(filepath.Join(c.root, "dn*", "data", "current", "BP-*", "current", "finalized", "*", "*",
			fmt.Sprintf("blk_%d", coldID)))
		return files
	}
	files := replicaFiles()
	if len(files) != 2 {
		t.Fatalf("found %d replica files of /cold, want 2: %v", len(files), files)
	}
	bad := files[0]
	victim := -1
	for i := range c.dns {
		if strings.Contains(bad, fmt.Sprintf("/dn%d/", i)) {
			victim = i
		}
	}
	b, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	for i := 150 << 10; i < 150<<10+8; i++ {
		b[i] ^= 0xff
	}
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}

	// Kill the victim while its cursor says a pass is under way, and
	// start it again on the same directories.
	cursors, _ := filepath.Glob(filepath.Join(c.root, fmt.Sprintf("dn%d", victim), "data", "current", "BP-*", "scanner.cursor"))
	if len(cursors) != 1 {
		t.Fatalf("no scanner cursor on DataNode %d: %v", victim, cursors)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		cur, _ := os.ReadFile(cursors[0])
		if bytes.Contains(cur, []byte(`"atEnd":false`)) && bytes.Contains(cur, []byte(`"curEntry":"blk_`)) {
			t.Logf("DataNode %d killed with cursor %s", victim, cur)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("DataNode %d never saved a cursor in the middle of a pass: %s\n%s", victim, cur, tail(c.dns[victim].logText(), 20))
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.kill(c.dns[victim])
	c.startDataNode(victim)
	deadline = time.Now().Add(20 * time.Second)
	for !strings.Contains(c.dns[victim].logText(), "block scanner resuming from cursor") {
		if time.Now().After(deadline) {
			t.Fatalf("the restarted DataNode did not resume its scan:\n%s", tail(c.dns[victim].logText(), 30))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if line := grepLine(c.dns[victim].logText(), "block scanner resuming from cursor"); !strings.Contains(line, "position=subdir") {
		t.Fatalf("resumed at the start or end, not mid-pass: %s", line)
	}

	// No one reads /cold: the scanner finds the corruption, the NameNode
	// replaces the bad copy.
	deadline = time.Now().Add(40 * time.Second)
	for {
		files := replicaFiles()
		good := 0
		for _, f := range files {
			if d, err := os.ReadFile(f); err == nil && bytes.Equal(d, orig) {
				good++
			}
		}
		if good == 2 && len(files) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("corrupt replica not replaced: %d good of %d %v\nvictim log:\n%s", good, len(files), files, tail(c.dns[victim].logText(), 40))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(c.dns[victim].logText(), "block scanner: reporting bad replica") {
		t.Fatalf("the replica was replaced, but not after the scanner's report:\n%s", tail(c.dns[victim].logText(), 40))
	}
	if !strings.Contains(c.nn.logText(), "replica reported corrupt") {
		t.Fatal("the NameNode did not log the report")
	}
	if got := c.ourCat(t, "/cold"); got != sum {
		t.Fatalf("read after healing: %s, want %s", got, sum)
	}
	// Two failed verifications came before the report.
	for _, l := range strings.Split(c.dns[victim].logText(), "\n") {
		if strings.Contains(l, "verification failed, verifying again") {
			return
		}
	}
	t.Fatal("the scanner did not verify the replica a second time before reporting it")
}

// grepLine returns the first line of s containing sub.
func grepLine(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
