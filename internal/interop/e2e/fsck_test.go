package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fsckRun runs hdfs fsck with args and returns its stdout and exit status.
func (c *cluster) fsckRun(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, err := c.runErr(c.confDir("nn"), nil, append([]string{"fsck"}, args...)...)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out, 0
	case errors.As(err, &ee):
		return out, ee.ExitCode()
	}
	t.Fatalf("hdfs fsck %v: %v\n%s", args, err, out)
	return "", -1
}

// replicaFiles lists the block and meta files of block id on every
// DataNode's disks.
func (c *cluster) replicaFiles(id uint64) []string {
	files, _ := filepath.Glob(filepath.Join(c.root, "dn*", "data", "current", "BP-*", "current", "finalized", "*", "*",
		fmt.Sprintf("blk_%d*", id)))
	return files
}

// TestFsck runs a NameNode and three DataNodes as processes and checks
// hdfs fsck against them: a healthy tree exits 0 with Hadoop's report; a
// block whose only replica was deleted on disk is MISSING and one whose
// only replica has flipped bytes (found by a reader) is CORRUPT, both
// listed by -list-corruptfileblocks and -blockId, and the status exits 1;
// -move puts the corrupt files in /lost+found, -delete removes them, and
// the tree is HEALTHY again.
func TestFsck(t *testing.T) {
	parallel(t)
	httpAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
	cfg := map[string]string{"dfs.namenode.http-address": httpAddr}
	for k, v := range fastFailure {
		cfg[k] = v
	}
	c := startCluster(t, 3, cfg)
	small, _ := randomFile(t, 5000, 1)
	big, _ := randomFile(t, 1500<<10, 2) // two blocks of 1 MiB
	c.dfs(t, "-mkdir", "-p", "/ok", "/data")
	c.dfs(t, "-put", big, "/ok/big")
	c.dfs(t, "-D", "dfs.replication=1", "-put", small, "/data/missing")
	c.dfs(t, "-D", "dfs.replication=1", "-put", small, "/data/bad")
	// A close needs one replica reported; wait for the NameNode to hear
	// of all three before asking for a healthy report.
	c.waitReplicated(t, "/ok/big", 3, "", 30*time.Second)

	out, code := c.fsckRun(t, "/")
	if code != 0 {
		t.Fatalf("fsck of a healthy tree exited %d:\n%s", code, out)
	}
	for _, want := range []string{
		"FSCK started by ", " for path / at ",
		"\nStatus: HEALTHY\n",
		"\n Number of data-nodes:\t3\n",
		"\n Number of racks:\t\t1\n",
		"\n Total dirs:\t\t\t3\n",
		"\nReplicated Blocks:\n Total size:\t" + fmt.Sprint(1500<<10+2*5000) + " B\n",
		"\n Total files:\t3\n",
		"\n Total blocks (validated):\t4 (avg. block size " + fmt.Sprint((1500<<10+2*5000)/4) + " B)\n",
		"\n Minimally replicated blocks:\t4 (100.0 %)\n",
		"\n Over-replicated blocks:\t0 (0.0 %)\n",
		"\n Under-replicated blocks:\t0 (0.0 %)\n",
		"\n Mis-replicated blocks:\t\t0 (0.0 %)\n",
		"\n Default replication factor:\t3\n",
		"\n Average block replication:\t2.0\n",
		"\n Missing blocks:\t\t0\n",
		"\n Corrupt blocks:\t\t0\n",
		"\n Missing replicas:\t\t0 (0.0 %)\n",
		"\nErasure Coded Block Groups:\n",
		"\nThe filesystem under path '/' is HEALTHY",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("healthy report lacks %q:\n%s", want, out)
		}
	}
	if !strings.HasSuffix(strings.TrimRight(out, "\n"), "The filesystem under path '/' is HEALTHY") {
		t.Fatalf("the status is not the last line:\n%s", out)
	}

	out, code = c.fsckRun(t, "/ok", "-files", "-blocks", "-locations")
	blockLine := regexp.MustCompile(`(?m)^0\. BP-[^:]+:blk_\d+_\d+ len=1048576 Live_repl=3  \[DatanodeInfoWithStorage\[127\.0\.0\.\d+:\d+,DS-[^,]+,DISK\], `)
	if code != 0 || !strings.Contains(out, "/ok/big 1536000 bytes, replicated: replication=3, 2 block(s):  OK\n") || !blockLine.MatchString(out) {
		t.Fatalf("fsck -files -blocks -locations exited %d:\n%s", code, out)
	}
	out, _ = c.fsckRun(t, "/ok", "-files", "-blocks", "-racks", "-replicaDetails")
	if !regexp.MustCompile(`Live_repl=3  \[/default-rack/127\.0\.0\.\d+:\d+\(LIVE\), `).MatchString(out) {
		t.Fatalf("fsck -racks -replicaDetails:\n%s", out)
	}

	// Plant a missing block: delete the only replica of /data/missing on
	// disk and restart its DataNode, whose block report no longer has it.
	missingID := c.locations(t, "/data/missing").GetBlocks()[0].GetB().GetBlockId()
	files := c.replicaFiles(missingID)
	if len(files) != 2 {
		t.Fatalf("replica files of /data/missing: %v", files)
	}
	victim := -1
	for i := range c.dns {
		if strings.Contains(files[0], fmt.Sprintf("/dn%d/", i)) {
			victim = i
		}
	}
	c.kill(c.dns[victim])
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	c.startDataNode(victim)

	// Plant a corrupt replica: flip bytes of /data/bad's only replica; a
	// reader finds the checksum error and reports it.
	badID := c.locations(t, "/data/bad").GetBlocks()[0].GetB().GetBlockId()
	var blk string
	for _, f := range c.replicaFiles(badID) {
		if !strings.HasSuffix(f, ".meta") {
			blk = f
		}
	}
	b, err := os.ReadFile(blk)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1000; i < 1008; i++ {
		b[i] ^= 0xff
	}
	if err := os.WriteFile(blk, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.runErr(c.confDir("nn"), nil, "dfs", "-cat", "/data/bad"); err == nil {
		t.Fatal("reading the corrupt replica succeeded")
	}

	deadline := time.Now().Add(60 * time.Second)
	for {
		out, code = c.fsckRun(t, "/")
		if strings.Contains(out, "MISSING 1 blocks") && strings.Contains(out, "CORRUPT 1 blocks") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fsck never saw the missing and the corrupt block (exit %d):\n%s", code, out)
		}
		if !strings.Contains(out, "CORRUPT 1 blocks") {
			// The read may have found the DataNode still restarting
			// rather than the bad bytes: read again.
			c.runErr(c.confDir("nn"), nil, "dfs", "-cat", "/data/bad")
		}
		time.Sleep(500 * time.Millisecond)
	}
	if code != 1 {
		t.Fatalf("fsck of a corrupt tree exited %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{
		"\n/data/missing: MISSING 1 blocks of total size 5000 B.",
		fmt.Sprintf("\n/data/bad: CORRUPT blockpool BP-"),
		fmt.Sprintf(" block blk_%d\n", badID),
		"\n/data/bad: CORRUPT 1 blocks of total size 5000 B.",
		"\nStatus: CORRUPT\n",
		"\n  UNDER MIN REPL'D BLOCKS:\t2 (50.0 %)\n  dfs.namenode.replication.min:\t1\n  CORRUPT FILES:\t2\n  MISSING BLOCKS:\t1\n  MISSING SIZE:\t\t5000 B\n  CORRUPT BLOCKS: \t1\n  CORRUPT SIZE:\t\t5000 B\n  ********************************\n",
		"\n Missing blocks:\t\t1\n",
		"\n Corrupt blocks:\t\t1\n",
		"\nThe filesystem under path '/' is CORRUPT",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("corrupt report lacks %q:\n%s", want, out)
		}
	}
	out, code = c.fsckRun(t, "/data", "-files", "-blocks")
	if code != 1 || !strings.Contains(out, "/data/missing 5000 bytes, replicated: replication=1, 1 block(s):  MISSING 1 blocks of total size 5000 B\n") ||
		!regexp.MustCompile(`(?m)^0\. BP-[^:]+:blk_\d+_\d+ len=5000 MISSING!$`).MatchString(out) {
		t.Fatalf("fsck /data -files -blocks exited %d:\n%s", code, out)
	}

	out, code = c.fsckRun(t, "/", "-list-corruptfileblocks")
	if code != 255 || !strings.Contains(out, "The list of corrupt files under path '/' are:\n") ||
		!strings.Contains(out, fmt.Sprintf("\nblk_%d\t/data/missing\n", missingID)) || !strings.Contains(out, fmt.Sprintf("\nblk_%d\t/data/bad\n", badID)) ||
		!strings.Contains(out, "\t/data/bad\n") || !strings.Contains(out, "The filesystem under path '/' has 2 CORRUPT files\n") {
		t.Fatalf("fsck -list-corruptfileblocks exited %d:\n%s", code, out)
	}
	out, code = c.fsckRun(t, "/ok", "-list-corruptfileblocks")
	if code != 0 || !strings.Contains(out, "The filesystem under path '/ok' has 0 CORRUPT files") {
		t.Fatalf("fsck /ok -list-corruptfileblocks exited %d:\n%s", code, out)
	}

	out, _ = c.fsckRun(t, "-blockId", fmt.Sprintf("blk_%d", badID))
	for _, want := range []string{fmt.Sprintf("Block Id: blk_%d\n", badID), "Block belongs to: /data/bad\n",
		"No. of Expected Replica: 1\n", "No. of live Replica: 0\n", "No. of corrupted Replica: 1\n", "/default-rack is CORRUPT"} {
		if !strings.Contains(out, want) {
			t.Fatalf("fsck -blockId lacks %q:\n%s", want, out)
		}
	}
	if out, code := c.fsckRun(t, "/nope"); code != 0 || !strings.HasSuffix(strings.TrimSpace(out), "Path '/nope' does not exist") {
		t.Fatalf("fsck of a missing path exited %d:\n%s", code, out)
	}
	// -storagepolicies adds Hadoop's summary of the blocks on the storage
	// types their policy asks for (HOT: all DISK here); / is still corrupt.
	if out, code := c.fsckRun(t, "/", "-storagepolicies"); code != 1 || !strings.Contains(out, "Blocks satisfying the specified storage policy:") {
		t.Fatalf("fsck -storagepolicies exited %d:\n%s", code, out)
	}

	// -move: both corrupt files go to /lost+found with their paths.
	if out, code := c.fsckRun(t, "/data", "-move"); code != 1 {
		t.Fatalf("fsck -move exited %d:\n%s", code, out)
	}
	ls := c.dfs(t, "-ls", "-R", "/")
	for _, want := range []string{"/lost+found/data/missing", "/lost+found/data/bad"} {
		if !strings.Contains(ls, want) {
			t.Fatalf("%s not there after -move:\n%s", want, ls)
		}
	}
	if strings.Contains(ls, " /data/missing") || strings.Contains(ls, " /data/bad") {
		t.Fatalf("corrupt files still in place after -move:\n%s", ls)
	}
	if out, code := c.fsckRun(t, "/data"); code != 0 {
		t.Fatalf("fsck /data after -move exited %d:\n%s", code, out)
	}
	// -delete removes them; the whole tree is healthy again.
	if out, code := c.fsckRun(t, "/", "-delete"); code != 1 {
		t.Fatalf("fsck -delete exited %d:\n%s", code, out)
	}
	if ls := c.dfs(t, "-ls", "-R", "/lost+found"); strings.Contains(ls, "missing") || strings.Contains(ls, "bad") {
		t.Fatalf("corrupt files left after -delete:\n%s", ls)
	}
	if out, code := c.fsckRun(t, "/"); code != 0 || !strings.Contains(out, "\n Total files:\t1\n") {
		t.Fatalf("fsck after -delete exited %d:\n%s", code, out)
	}
}
