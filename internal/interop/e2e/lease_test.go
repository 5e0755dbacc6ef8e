package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// writerMain is the writer process of TestWriterKilled: the test binary run
// again with HDFSGO_E2E_WRITER set. It writes a deterministic stream to the
// file, hflushing every so often and printing the flushed length, and never
// closes it: the test kills it with SIGKILL.
func writerMain() {
	nn, path := os.Getenv("HDFSGO_E2E_NN"), os.Getenv("HDFSGO_E2E_WRITER")
	fsys, err := client.New(client.Options{Addresses: []string{nn}})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	ctx := context.Background()
	w, err := fsys.CreateFile(ctx, path, client.CreateOptions{Replication: 3, BlockSize: 1 << 20, Perm: 0o644})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	r := rand.NewChaCha8([32]byte{7})
	buf := make([]byte, 100_003)
	var n int64
	total, _ := strconv.ParseInt(os.Getenv("HDFSGO_E2E_TOTAL"), 10, 64) // 0: forever
	pause, _ := time.ParseDuration(os.Getenv("HDFSGO_E2E_PAUSE"))
	for total == 0 || n < total {
		r.Read(buf)
		chunk := buf
		if total > 0 && n+int64(len(chunk)) > total {
			chunk = chunk[:total-n]
		}
		if _, err := w.Write(chunk); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		n += int64(len(chunk))
		if err := w.Flush(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Printf("flushed %d\n", n)
		time.Sleep(pause)
	}
	if err := w.Close(); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("closed")
	os.Exit(0)
}

// expected returns the first n bytes the writer produces.
func expected(n int64) []byte {
	r := rand.NewChaCha8([32]byte{7})
	out := make([]byte, 0, n+100_003)
	buf := make([]byte, 100_003)
	for int64(len(out)) < n {
		r.Read(buf)
		out = append(out, buf...)
	}
	return out[:n]
}

// TestWriterKilled: a writer process is killed with SIGKILL in the middle of a
// multi-block file with 3 replicas; recoverLease closes the file; its length is
// at least the last hflushed length, every byte is what was written, and all
// replicas of every block agree.
func TestWriterKilled(t *testing.T) {
	parallel(t)
	t.Run("recoverLease", func(t *testing.T) { writerKilled(t, false) })
	t.Run("hardLimit", func(t *testing.T) { writerKilled(t, true) })
}

func writerKilled(t *testing.T, hardLimit bool) {
	conf := map[string]string{}
	for k, v := range fastFailure {
		conf[k] = v
	}
	if hardLimit {
		// The NameNode recovers the abandoned file by itself.
		conf["dfs.namenode.lease-hard-limit-sec"] = "2"
		conf["dfs.namenode.lease-recheck-interval-ms"] = "200"
	}
	c := startCluster(t, 3, conf)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "HDFSGO_E2E_WRITER=/w", "HDFSGO_E2E_NN="+c.nnAddr, "HADOOP_USER_NAME="+osUser(t))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var flushed int64
	target := int64(3<<20 + 500_000) // well into the fourth block
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "error") {
			t.Fatalf("writer: %s\n%s", line, stderr.String())
		}
		if v, ok := strings.CutPrefix(line, "flushed "); ok {
			flushed, _ = strconv.ParseInt(v, 10, 64)
			if flushed >= target {
				break
			}
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	t.Logf("writer killed after hflushing %d bytes", flushed)

	// recoverLease until the file is closed (block recovery runs on the
	// DataNodes in between), or wait for the hard limit to do it.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if hardLimit {
			if c.isFileClosed(t, "/w") {
				break
			}
		} else if out, _ := c.runErr(c.confDir("nn"), nil, "debug", "recoverLease", "-path", "/w"); strings.Contains(out, "SUCCEEDED") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the file was not closed by lease recovery")
		}
		time.Sleep(300 * time.Millisecond)
	}
	for _, l := range lines(c.nn.logText()) {
		if strings.Contains(l, "recovery") {
			t.Log(l)
		}
	}
	data := c.readAll(t, "/w")
	if int64(len(data)) < flushed {
		t.Fatalf("recovered length %d is below the hflushed length %d", len(data), flushed)
	}
	if want := expected(int64(len(data))); !bytes.Equal(data, want) {
		t.Fatalf("recovered data differs from what was written (length %d)", len(data))
	}
	// Every block's replicas agree: same length, stamp and bytes.
	lbs := c.locations(t, "/w")
	for _, b := range lbs.GetBlocks() {
		id := b.GetB().GetBlockId()
		// A replica that missed the recovery (its node was slow to answer)
		// is replaced by a copy and its stale file deleted: wait for that.
		var files []string
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			files, _ = filepath.Glob(filepath.Join(c.root, "dn*", "data", "current", "BP-*", "current", "finalized", "*", "*", fmt.Sprintf("blk_%d", id)))
			current := 0
			for _, f := range files {
				if m, _ := filepath.Glob(fmt.Sprintf("%s_%d.meta", f, b.GetB().GetGenerationStamp())); len(m) == 1 {
					current++
				}
			}
			if len(files) == 3 && current == 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("blk_%d has %d finalized replicas on disk, want 3", id, len(files))
			}
		}
		var sums []string
		for _, f := range files {
			d, _ := os.ReadFile(f)
			if int64(len(d)) != int64(b.GetB().GetNumBytes()) {
				t.Fatalf("%s is %d bytes, the NameNode says %d", f, len(d), b.GetB().GetNumBytes())
			}
			metas, _ := filepath.Glob(f + "_*.meta")
			if len(metas) != 1 || !strings.HasSuffix(metas[0], fmt.Sprintf("_%d.meta", b.GetB().GetGenerationStamp())) {
				t.Fatalf("%s: meta files %v, want one with stamp %d", f, metas, b.GetB().GetGenerationStamp())
			}
			h := sha256.Sum256(d)
			sums = append(sums, fmt.Sprintf("%x", h))
		}
		if sums[0] != sums[1] || sums[1] != sums[2] {
			t.Fatalf("replicas of blk_%d differ", id)
		}
	}
}

func (c *cluster) readAll(t *testing.T, path string) []byte {
	t.Helper()
	cmd := exec.Command(hdfsBin, "--config", c.confDir("nn"), "dfs", "-cat", path)
	cmd.Env = append(os.Environ(), "HADOOP_CONF_DIR=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("dfs -cat %s: %v\n%s", path, err, errb.String())
	}
	return out.Bytes()
}

func (c *cluster) isFileClosed(t *testing.T, path string) bool {
	t.Helper()
	cl := ipc.NewClient(ipc.ClientConfig{Addresses: []string{c.nnAddr}, User: osUser(t), Protocol: "org.apache.hadoop.hdfs.protocol.ClientProtocol"})
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var resp hdfs.IsFileClosedResponseProto
	if err := cl.Call(ctx, "isFileClosed", &hdfs.IsFileClosedRequestProto{Src: proto.String(path)}, &resp); err != nil {
		t.Fatal(err)
	}
	return resp.GetResult()
}
