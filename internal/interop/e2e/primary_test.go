package e2e

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var primaryRE = regexp.MustCompile(`block recovery started.*primary=([0-9.]+:[0-9]+)`)

// TestRecoveryPrimaryKilled: the primary DataNode of a block recovery is killed
// before it can act; after the recovery timeout (30 × dfs.heartbeat.interval)
// the NameNode retries with another primary, which completes the recovery.
func TestRecoveryPrimaryKilled(t *testing.T) {
	parallel(t)
	c := startCluster(t, 3, fastFailure)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "HDFSGO_E2E_WRITER=/pk", "HDFSGO_E2E_NN="+c.nnAddr, "HADOOP_USER_NAME="+osUser(t))
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var flushed int64
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "flushed "); ok {
			if flushed, _ = strconv.ParseInt(v, 10, 64); flushed >= 1<<20+200_000 {
				break
			}
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	// Freeze every DataNode so the recovery order waits in the NameNode,
	// start the recovery, and kill the primary it chose.
	for _, p := range c.dns {
		p.cmd.Process.Signal(syscall.SIGSTOP)
	}
	rl, _ := c.runErr(c.confDir("nn"), nil, "debug", "recoverLease", "-path", "/pk")
	if strings.Contains(rl, "SUCCEEDED") {
		t.Fatalf("recovery finished with every DataNode frozen: %s", rl)
	}
	var primary string
	for i := 0; i < 50 && primary == ""; i++ {
		if m := primaryRE.FindStringSubmatch(c.nn.logText()); m != nil {
			primary = m[1]
		} else {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if primary == "" {
		for _, p := range c.dns {
			p.cmd.Process.Signal(syscall.SIGCONT)
		}
		t.Fatalf("the NameNode did not start a block recovery (recoverLease said %q)", rl)
	}
	for i, p := range c.dns {
		if c.dnAddr(i) == primary {
			c.kill(p)
			c.dns[i] = nil
		} else {
			p.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	t.Logf("killed the recovery's primary %s", primary)

	deadline := time.Now().Add(90 * time.Second)
	for !c.isFileClosed(t, "/pk") {
		if time.Now().After(deadline) {
			t.Fatal("the recovery was not retried with another primary")
		}
		time.Sleep(500 * time.Millisecond)
	}
	if n := len(primaryRE.FindAllString(c.nn.logText(), -1)); n < 2 {
		t.Fatalf("the file closed but only %d recovery attempt(s) were logged", n)
	}
	data := c.readAll(t, "/pk")
	if int64(len(data)) < flushed || !bytes.Equal(data, expected(int64(len(data)))) {
		t.Fatalf("recovered %d bytes (flushed %d) or wrong content", len(data), flushed)
	}
	for _, l := range lines(c.nn.logText()) {
		if strings.Contains(l, "recovery") {
			t.Log(l)
		}
	}
}
