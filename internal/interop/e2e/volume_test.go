package e2e

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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

// TestVolumeFailsMidWrite runs three DataNodes as processes, the first with
// two volumes and dfs.datanode.failed.volumes.tolerated 1. While a writer
// streams a file with replication 3, the first DataNode's second volume
// loses its directories (removed, and the volume made read-only for a
// non-root DataNode). The write finishes on the pipeline's other nodes;
// the DataNode takes the volume out of service, keeps running and serving
// from its other volume; every block it held comes back to three replicas;
// and with the two other DataNodes gone, every file still reads back from
// it alone.
func TestVolumeFailsMidWrite(t *testing.T) {
	parallel(t)
	conf := map[string]string{"dfs.datanode.disk.check.min.gap": "1s"}
	for k, v := range fastFailure {
		conf[k] = v
	}
	c := startCluster(t, 3, conf)
	// Give DataNode 0 a second volume and a failure to tolerate.
	vol0 := filepath.Join(c.root, "dn0", "data")
	vol1 := filepath.Join(c.root, "dn0", "data1")
	c.dns[0].cmd.Process.Signal(syscall.SIGTERM)
	<-c.dns[0].done
	site := filepath.Join(c.confDir("dn0"), "hdfs-site.xml")
	b, err := os.ReadFile(site)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "<value>"+vol0+"</value>", "<value>"+vol0+","+vol1+"</value>", 1)
	s = strings.Replace(s, "</configuration>",
		"  <property><name>dfs.datanode.failed.volumes.tolerated</name><value>1</value></property>\n</configuration>", 1)
	if err := os.WriteFile(site, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	c.startDataNode(0)
	// The NameNode may not have noticed the restart: wait until the new
	// process registered (and so heartbeats its two volumes) before
	// writing, or the writes may place nothing on it.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(c.dns[0].logText(), "msg=registered") {
		if time.Now().After(deadline) {
			t.Fatalf("DataNode 0 did not register again:\n%s", tail(c.dns[0].logText(), 20))
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.waitLive(3, 30*time.Second)

	// Files written before the failure: their replicas on DataNode 0 are
	// spread over both volumes.
	sums := map[string]string{}
	for i := range 4 {
		local, sum := randomFile(t, 1<<20+int64(i)*1000, uint64(40+i))
		p := fmt.Sprintf("/before%d", i)
		c.dfs(t, "-put", local, p)
		sums[p] = sum
	}
	held, _ := filepath.Glob(filepath.Join(vol1, "current", "BP-*", "current", "finalized", "*", "*", "blk_*[0-9]"))
	if len(held) == 0 {
		t.Fatal("no replica on the second volume before the failure")
	}

	// The writer: 6 MiB in 1 MiB blocks, replication 3, hflushed in 100 KB
	// steps.
	const total = 6 << 20
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "HDFSGO_E2E_WRITER=/during", "HDFSGO_E2E_NN="+c.nnAddr, "HADOOP_USER_NAME="+osUser(t),
		"HDFSGO_E2E_TOTAL="+strconv.Itoa(total), "HDFSGO_E2E_PAUSE=30ms")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	failed, closed := false, false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "error") {
			t.Fatalf("writer: %s\n%s\nDataNode 0:\n%s", line, stderr.String(), tail(c.dns[0].logText(), 40))
		}
		if v, ok := strings.CutPrefix(line, "flushed "); ok && !failed {
			if n, _ := strconv.Atoi(v); n >= 3<<20/2 {
				// The volume goes away under the running pipeline.
				if err := os.RemoveAll(filepath.Join(vol1, "current")); err != nil {
					t.Fatal(err)
				}
				os.Chmod(vol1, 0o500)
				defer os.Chmod(vol1, 0o700)
				failed = true
				t.Logf("removed %s/current after %d bytes", vol1, n)
			}
		}
		if line == "closed" {
			closed = true
		}
	}
	if err := cmd.Wait(); err != nil || !closed {
		t.Fatalf("writer did not finish: %v\n%s\nDataNode 0:\n%s", err, stderr.String(), tail(c.dns[0].logText(), 40))
	}
	h := sha256.Sum256(expected(total))
	sums["/during"] = hex.EncodeToString(h[:])

	// DataNode 0 took the volume out of service and kept running.
	deadline = time.Now().Add(20 * time.Second)
	for !strings.Contains(c.dns[0].logText(), "volume failed and was taken out of service") {
		if time.Now().After(deadline) {
			t.Fatalf("DataNode 0 did not fail its volume:\n%s", tail(c.dns[0].logText(), 40))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if line := grepLine(c.dns[0].logText(), "volume failed and was taken out of service"); !strings.Contains(line, vol1) {
		t.Fatalf("the failure log does not name the volume: %s", line)
	}
	select {
	case <-c.dns[0].done:
		t.Fatalf("DataNode 0 stopped:\n%s", tail(c.dns[0].logText(), 40))
	default:
	}
	// Every file, those written before and the one written across the
	// failure, is at three replicas again.
	for p := range sums {
		c.waitReplicated(t, p, 3, "", 60*time.Second)
	}
	t.Logf("DataNode 0: %s", grepLine(c.dns[0].logText(), "volume failed and was taken out of service"))
	// DataNode 0 alone serves everything, from its remaining volume.
	for _, i := range []int{1, 2} {
		c.kill(c.dns[i])
		c.dns[i] = nil
	}
	for p, sum := range sums {
		if got := c.ourCat(t, p); got != sum {
			t.Fatalf("%s read from DataNode 0 alone: %s, want %s", p, got, sum)
		}
	}
}

// confValue reads a property from a role's hdfs-site.xml.
func (c *cluster) confValue(t *testing.T, role, key string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.confDir(role), "hdfs-site.xml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	k := strings.Index(s, "<name>"+key+"</name><value>")
	if k < 0 {
		t.Fatalf("%s: no %s", role, key)
	}
	s = s[k+len("<name>"+key+"</name><value>"):]
	return s[:strings.Index(s, "<")]
}

// TestBalancerBandwidthAndReconfig drives the DataNode's run-time settings
// with the stock commands: dfsadmin -setBalancerBandwidth reaches the
// DataNodes with their heartbeats (-getBalancerBandwidth reads it back), and
// dfsadmin -reconfig datanode adds a volume named in the edited
// hdfs-site.xml to the running DataNode.
func TestBalancerBandwidthAndReconfig(t *testing.T) {
	parallel(t)
	c := startCluster(t, 1, fastFailure)
	ipcAddr := c.confValue(t, "dn0", "dfs.datanode.ipc.address")
	nnConf := c.confDir("nn")
	if out := c.run(t, nnConf, "dfsadmin", "-getBalancerBandwidth", ipcAddr); !strings.Contains(out, "Balancer bandwidth is 104857600 bytes per second.") {
		t.Fatalf("-getBalancerBandwidth before: %q", out)
	}
	if out := c.run(t, nnConf, "dfsadmin", "-setBalancerBandwidth", "12345678"); strings.TrimSpace(out) != "Balancer bandwidth is set to 12345678" {
		t.Fatalf("-setBalancerBandwidth: %q", out)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := c.run(t, nnConf, "dfsadmin", "-getBalancerBandwidth", ipcAddr)
		if strings.Contains(out, "Balancer bandwidth is 12345678 bytes per second.") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("-getBalancerBandwidth after: %q", out)
		}
		time.Sleep(200 * time.Millisecond)
	}

	if out := c.run(t, nnConf, "dfsadmin", "-reconfig", "datanode", ipcAddr, "properties"); !strings.Contains(out, "dfs.datanode.data.dir") {
		t.Fatalf("-reconfig properties: %q", out)
	}
	if out := c.run(t, nnConf, "dfsadmin", "-reconfig", "datanode", ipcAddr, "status"); !strings.Contains(out, "no task was found.") {
		t.Fatalf("-reconfig status before: %q", out)
	}
	vol0 := filepath.Join(c.root, "dn0", "data")
	vol1 := filepath.Join(c.root, "dn0", "ssd")
	site := filepath.Join(c.confDir("dn0"), "hdfs-site.xml")
	b, err := os.ReadFile(site)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "<value>"+vol0+"</value>", "<value>"+vol0+",[SSD]"+vol1+"</value>", 1)
	if err := os.WriteFile(site, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := c.run(t, nnConf, "dfsadmin", "-reconfig", "datanode", ipcAddr, "start"); !strings.Contains(out, "Started reconfiguration task on node ["+ipcAddr+"].") {
		t.Fatalf("-reconfig start: %q", out)
	}
	deadline = time.Now().Add(20 * time.Second)
	for {
		out := c.run(t, nnConf, "dfsadmin", "-reconfig", "datanode", ipcAddr, "status")
		if strings.Contains(out, "finished at") {
			if !strings.Contains(out, "SUCCESS: Changed property dfs.datanode.data.dir") || !strings.Contains(out, "[SSD]"+vol1) {
				t.Fatalf("-reconfig status: %q", out)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("-reconfig status: %q", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(vol1, "current", "VERSION")); err != nil {
		t.Fatalf("the new volume was not formatted: %v", err)
	}
	if !strings.Contains(c.dns[0].logText(), "volume added") {
		t.Fatalf("no volume added in the DataNode's log:\n%s", tail(c.dns[0].logText(), 20))
	}
}
