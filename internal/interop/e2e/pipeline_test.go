package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDataNodeDiesDuringWrite: DataNodes of a write pipeline are killed with
// SIGKILL while a client writes; the write completes without error, the data
// is intact, and the file ends fully replicated.
func TestDataNodeDiesDuringWrite(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name   string
		victim []int // positions in the pipeline
	}{
		{"middle", []int{1}},
		{"first", []int{0}},
		{"two of three", []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) { dieDuringWrite(t, tc.victim) })
	}
}

func dieDuringWrite(t *testing.T, positions []int) {
	c := startCluster(t, 5, fastFailure)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const total = 4<<20 + 333
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "HDFSGO_E2E_WRITER=/p", "HDFSGO_E2E_NN="+c.nnAddr, "HADOOP_USER_NAME="+osUser(t),
		"HDFSGO_E2E_TOTAL="+strconv.Itoa(total), "HDFSGO_E2E_PAUSE=30ms")
	out, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	killed := false
	var killedAddrs []string
	closed := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "error") {
			t.Fatalf("writer failed: %s\n%s", line, stderr.String())
		}
		if line == "closed" {
			closed = true
			break
		}
		v, ok := strings.CutPrefix(line, "flushed ")
		if !ok || killed {
			continue
		}
		if n, _ := strconv.ParseInt(v, 10, 64); n < 1<<20+300_000 {
			continue // into the second block first
		}
		blocks := c.locations(t, "/p").GetBlocks()
		locs := blocks[len(blocks)-1].GetLocs()
		for _, p := range positions {
			if p >= len(locs) {
				t.Fatalf("pipeline of %d nodes, cannot kill position %d", len(locs), p)
			}
			addr := fmt.Sprintf("%s:%d", locs[p].GetId().GetIpAddr(), locs[p].GetId().GetXferPort())
			for i := range c.dns {
				if c.dns[i] != nil && c.dnAddr(i) == addr {
					c.kill(c.dns[i])
					c.dns[i] = nil
					killedAddrs = append(killedAddrs, addr)
				}
			}
		}
		t.Logf("killed %v mid-write", killedAddrs)
		killed = true
	}
	if !closed {
		cmd.Wait()
		t.Fatalf("writer did not finish: %s", stderr.String())
	}
	cmd.Wait()
	if got := c.readAll(t, "/p"); !bytes.Equal(got, expected(total)) {
		t.Fatalf("file differs after the pipeline lost nodes (%d bytes)", len(got))
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		ok := true
		var short []string
		for _, b := range c.locations(t, "/p").GetBlocks() {
			live := 0
			var where []string
			for _, l := range b.GetLocs() {
				addr := fmt.Sprintf("%s:%d", l.GetId().GetIpAddr(), l.GetId().GetXferPort())
				dead := false
				for _, k := range killedAddrs {
					dead = dead || k == addr
				}
				if !dead {
					live++
				}
				where = append(where, addr)
			}
			if live < 3 {
				ok = false
				short = append(short, fmt.Sprintf("blk_%d_%d on %v", b.GetB().GetBlockId(), b.GetB().GetGenerationStamp(), where))
			}
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the file did not get back to 3 live replicas: %v", short)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
