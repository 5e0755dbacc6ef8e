package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStaleReplicaAfterMissedRecovery: a DataNode that was down while its
// block was recovered comes back with the replica's old generation stamp; that
// replica is never served and is deleted once the block has its replicas again.
func TestStaleReplicaAfterMissedRecovery(t *testing.T) {
	parallel(t)
	c := startCluster(t, 4, fastFailure)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "HDFSGO_E2E_WRITER=/st", "HDFSGO_E2E_NN="+c.nnAddr, "HADOOP_USER_NAME="+osUser(t))
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var flushed int64
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "flushed "); ok {
			flushed, _ = strconv.ParseInt(v, 10, 64)
			if flushed >= 500_000 { // inside the first 1 MiB block
				break
			}
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	// The block's pipeline: kill one of its DataNodes and wait until the
	// NameNode knows it is dead, then recover the file without it.
	blk := c.locations(t, "/st").GetBlocks()[0]
	victimAddr := fmt.Sprintf("%s:%d", blk.GetLocs()[0].GetId().GetIpAddr(), blk.GetLocs()[0].GetId().GetXferPort())
	victim := -1
	for i := range c.dns {
		if c.dnAddr(i) == victimAddr {
			victim = i
		}
	}
	if victim < 0 {
		t.Fatalf("no DataNode at %s", victimAddr)
	}
	c.kill(c.dns[victim])
	c.dns[victim] = nil
	c.waitLive(3, 30*time.Second)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if out, _ := c.runErr(c.confDir("nn"), nil, "debug", "recoverLease", "-path", "/st"); strings.Contains(out, "SUCCEEDED") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("recoverLease never succeeded")
		}
		time.Sleep(300 * time.Millisecond)
	}
	good := c.locations(t, "/st").GetBlocks()[0].GetB()
	data := c.readAll(t, "/st")
	if int64(len(data)) < flushed || !bytes.Equal(data, expected(int64(len(data)))) {
		t.Fatalf("recovered file: %d bytes (flushed %d) or wrong content", len(data), flushed)
	}

	// The victim comes back with its stale replica.
	stale := filepath.Join(c.root, fmt.Sprintf("dn%d", victim), "data", "current", "BP-*", "current", "*", "*", "*", fmt.Sprintf("blk_%d", good.GetBlockId()))
	stale2 := filepath.Join(c.root, fmt.Sprintf("dn%d", victim), "data", "current", "BP-*", "current", "rbw", fmt.Sprintf("blk_%d", good.GetBlockId()))
	before, _ := filepath.Glob(stale)
	before2, _ := filepath.Glob(stale2)
	if len(before)+len(before2) == 0 {
		t.Fatalf("the stopped DataNode holds no replica of blk_%d: nothing to test", good.GetBlockId())
	}
	c.startDataNode(victim)
	c.waitLive(4, 30*time.Second)
	deadline = time.Now().Add(60 * time.Second)
	for {
		for _, l := range c.locations(t, "/st").GetBlocks()[0].GetLocs() {
			if fmt.Sprintf("%s:%d", l.GetId().GetIpAddr(), l.GetId().GetXferPort()) == victimAddr {
				// Listed again only with a good replica: the NameNode may have
				// chosen the node for a fresh copy. Then its meta file carries
				// the new stamp.
				metas, _ := filepath.Glob(filepath.Join(c.root, fmt.Sprintf("dn%d", victim), "data", "current", "BP-*", "current", "finalized", "*", "*", fmt.Sprintf("blk_%d_*.meta", good.GetBlockId())))
				for _, m := range metas {
					if !strings.HasSuffix(m, fmt.Sprintf("_%d.meta", good.GetGenerationStamp())) {
						t.Fatalf("the NameNode serves %s's replica with a stale stamp (%s)", victimAddr, m)
					}
				}
			}
		}
		a, _ := filepath.Glob(stale)
		b, _ := filepath.Glob(stale2)
		staleLeft := false
		for _, f := range append(a, b...) {
			metas, _ := filepath.Glob(f + "_*.meta")
			for _, m := range metas {
				if !strings.HasSuffix(m, fmt.Sprintf("_%d.meta", good.GetGenerationStamp())) {
					staleLeft = true
				}
			}
		}
		if !staleLeft {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stale replica on %s was not deleted", victimAddr)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if got := c.readAll(t, "/st"); !bytes.Equal(got, data) {
		t.Fatal("content changed after the stale replica came back")
	}
}
