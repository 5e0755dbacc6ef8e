package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	stock "github.com/colinmarc/hdfs/v2"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// randomFile writes n deterministic pseudo-random bytes to a temp file and
// returns its path and SHA-256.
func randomFile(t *testing.T, n int64, seed uint64) (string, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), fmt.Sprintf("data-%d", seed))
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)})
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(r, n)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p, hex.EncodeToString(h.Sum(nil))
}

// hashOf runs the command and hashes its stdout.
func hashOf(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	h := sha256.New()
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = h, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, errb.String())
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (c *cluster) ourCat(t *testing.T, path string) string {
	cmd := exec.Command(hdfsBin, "--config", c.confDir("nn"), "dfs", "-cat", path)
	cmd.Env = append(os.Environ(), "HADOOP_CONF_DIR=")
	return hashOf(t, cmd)
}

func osUser(t *testing.T) string {
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}

func (c *cluster) stockClient(t *testing.T) *stock.Client {
	cl, err := stock.NewClient(stock.ClientOptions{Addresses: []string{c.nnAddr}, User: osUser(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func stockHash(t *testing.T, cl *stock.Client, path string) string {
	t.Helper()
	f, err := cl.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatalf("stock client read %s: %v", path, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// debianCLI returns a command of Debian's hdfs-cli (colinmarc/hdfs 2.3.0,
// writes CRC32) pointed at the cluster.
func (c *cluster) debianCLI(t *testing.T, args ...string) *exec.Cmd {
	bin := testtool.Require(t, "/usr/bin/hdfs", "apt-get install -y hdfs-cli")
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HADOOP_NAMENODE="+c.nnAddr, "HADOOP_CONF_DIR=", "HADOOP_USER_NAME="+osUser(t))
	return cmd
}

// checksumHex is the MD5 part of `hdfs dfs -checksum` output.
func (c *cluster) checksumHex(t *testing.T, path string) string {
	out := strings.TrimSpace(c.dfs(t, "-checksum", path))
	f := strings.Fields(out)
	if len(f) != 3 || len(f[2]) < 32 {
		t.Fatalf("unexpected -checksum output %q", out)
	}
	return f[2][len(f[2])-32:]
}

func bigSize() int64 {
	if s := os.Getenv("HDFSGO_E2E_BIG_MB"); s != "" {
		var mb int64
		fmt.Sscan(s, &mb)
		return mb << 20
	}
	return 1 << 30
}

// TestBigFileRoundTrip: a 1 GiB file with replication 3 and 128 MiB blocks,
// written with our CLI and read back byte-identical through our CLI, the stock
// Go client and Debian's hdfs-cli; checksums agree.
func TestBigFileRoundTrip(t *testing.T) {
	parallel(t)
	c := startCluster(t, 3, nil)
	local, sum := randomFile(t, bigSize(), 1)
	start := time.Now()
	c.dfs(t, "-D", "dfs.blocksize=134217728", "-D", "dfs.replication=3", "-put", local, "/big")
	t.Logf("put %d MiB with 3 replicas in %v", bigSize()>>20, time.Since(start))
	if got := c.ourCat(t, "/big"); got != sum {
		t.Fatalf("our -cat: sha256 %s, want %s", got, sum)
	}
	cl := c.stockClient(t)
	if got := stockHash(t, cl, "/big"); got != sum {
		t.Fatalf("stock client: sha256 %s, want %s", got, sum)
	}
	fi, err := cl.Stat("/big")
	if err != nil || fi.Size() != bigSize() || fi.Sys().(*stock.FileStatus).GetBlockReplication() != 3 {
		t.Fatalf("stock Stat: %v %v", fi, err)
	}
	f, err := cl.Open("/big")
	if err != nil {
		t.Fatal(err)
	}
	stockSum, err := f.Checksum()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if ours := c.checksumHex(t, "/big"); ours != hex.EncodeToString(stockSum) {
		t.Fatalf("dfs -checksum %s, stock client %x", ours, stockSum)
	}
	if got := hashOf(t, c.debianCLI(t, "cat", "/big")); got != sum {
		t.Fatalf("hdfs-cli cat: sha256 %s, want %s", got, sum)
	}
}

// TestStockClientsInterop: files written by the stock clients (CRC32C by
// v2.4.0, CRC32 by Debian's v2.3.0) are read by ours, and ours by theirs.
func TestStockClientsInterop(t *testing.T) {
	parallel(t)
	c := startCluster(t, 3, map[string]string{"dfs.blocksize": "1048576"})
	local, sum := randomFile(t, 3<<20+12345, 2)
	data, _ := os.ReadFile(local)

	cl := c.stockClient(t)
	w, err := cl.Create("/by-stock")
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(data); off += 100003 { // odd writes
		end := min(off+100003, len(data))
		if _, err := w.Write(data[off:end]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := c.ourCat(t, "/by-stock"); got != sum {
		t.Fatalf("our read of a CRC32C file from the stock client: %s, want %s", got, sum)
	}

	put := c.debianCLI(t, "put", local, "/by-debian")
	if out, err := put.CombinedOutput(); err != nil {
		t.Fatalf("hdfs-cli put: %v\n%s", err, out)
	}
	if got := c.ourCat(t, "/by-debian"); got != sum {
		t.Fatalf("our read of a CRC32 file from hdfs-cli: %s, want %s", got, sum)
	}
	if got := stockHash(t, cl, "/by-debian"); got != sum {
		t.Fatalf("stock read of the CRC32 file: %s", got)
	}

	c.dfs(t, "-put", local, "/by-us")
	if got := stockHash(t, cl, "/by-us"); got != sum {
		t.Fatalf("stock read of our file: %s, want %s", got, sum)
	}
	if got := hashOf(t, c.debianCLI(t, "cat", "/by-us")); got != sum {
		t.Fatalf("hdfs-cli read of our file: %s, want %s", got, sum)
	}
	for _, p := range []string{"/by-stock", "/by-us"} {
		f, err := cl.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		s, err := f.Checksum()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if ours := c.checksumHex(t, p); ours != hex.EncodeToString(s) {
			t.Fatalf("%s: dfs -checksum %s, stock %x", p, ours, s)
		}
	}
}

// locations asks the NameNode where the blocks of path are.
func (c *cluster) locations(t *testing.T, path string) *hdfs.LocatedBlocksProto {
	t.Helper()
	cl := ipc.NewClient(ipc.ClientConfig{Addresses: []string{c.nnAddr}, User: osUser(t), Protocol: "org.apache.hadoop.hdfs.protocol.ClientProtocol"})
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var resp hdfs.GetBlockLocationsResponseProto
	err := cl.Call(ctx, "getBlockLocations", &hdfs.GetBlockLocationsRequestProto{Src: proto.String(path), Offset: proto.Uint64(0), Length: proto.Uint64(1 << 62)}, &resp)
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetLocations()
}

// waitReplicated waits until every block of path has want locations, none on
// the excluded transfer address.
func (c *cluster) waitReplicated(t *testing.T, path string, want int, exclude string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok := true
		for _, b := range c.locations(t, path).GetBlocks() {
			n := 0
			for _, l := range b.GetLocs() {
				if fmt.Sprintf("%s:%d", l.GetId().GetIpAddr(), l.GetId().GetXferPort()) != exclude {
					n++
				}
			}
			if n < want || b.GetCorrupt() {
				ok = false
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not reach %d replicas within %v", path, want, timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// fastFailure makes dead-node detection and replication quick: dead after
// 2 × 1 s + 10 × 1 s.
var fastFailure = map[string]string{
	"dfs.heartbeat.interval":                   "1",
	"dfs.namenode.heartbeat.recheck-interval":  "1000",
	"dfs.namenode.redundancy.interval.seconds": "1",
	"dfs.blocksize":                            "1048576",
	"dfs.namenode.safemode.extension":          "1000",
	// A re-replication whose target refused the copy (it held a stale
	// copy of the block, say) is only known to have failed when its
	// pending entry times out (5 minutes by default): retry sooner.
	"dfs.namenode.reconstruction.pending.timeout-sec": "10",
}

// TestDataNodeKilled: after a write, kill -9 a DataNode: reads still succeed
// from the others and the NameNode brings every block back to 3 replicas.
func TestDataNodeKilled(t *testing.T) {
	parallel(t)
	c := startCluster(t, 4, fastFailure)
	local, sum := randomFile(t, 5<<20+777, 3)
	c.dfs(t, "-put", local, "/f")
	victim := c.locations(t, "/f").GetBlocks()[0].GetLocs()[0].GetId()
	addr := fmt.Sprintf("%s:%d", victim.GetIpAddr(), victim.GetXferPort())
	for i, p := range c.dns {
		if strings.Contains(p.logText(), addr) || c.dnAddr(i) == addr {
			c.kill(p)
			c.dns[i] = nil
			t.Logf("killed DataNode %d (%s)", i, addr)
			break
		}
	}
	if got := c.ourCat(t, "/f"); got != sum {
		t.Fatalf("read after a DataNode died: %s, want %s", got, sum)
	}
	if got := stockHash(t, c.stockClient(t), "/f"); got != sum {
		t.Fatalf("stock read after a DataNode died: %s", got)
	}
	c.waitReplicated(t, "/f", 3, addr, 60*time.Second)
	if got := c.ourCat(t, "/f"); got != sum {
		t.Fatalf("read after re-replication: %s", got)
	}
}

func (c *cluster) dnAddr(i int) string {
	b, err := os.ReadFile(filepath.Join(c.confDir(fmt.Sprintf("dn%d", i)), "hdfs-site.xml"))
	if err != nil {
		return ""
	}
	s := string(b)
	k := strings.Index(s, "<name>dfs.datanode.address</name><value>")
	if k < 0 {
		return ""
	}
	s = s[k+len("<name>dfs.datanode.address</name><value>"):]
	return s[:strings.Index(s, "<")]
}

// TestCorruptReplica: flip bytes in one replica's block file: a read still
// returns the right data, the bad replica is reported and replaced.
func TestCorruptReplica(t *testing.T) {
	parallel(t)
	// A fourth node takes the new copy: like HDFS, a corrupt replica is
	// deleted only once a good copy replaces it.
	c := startCluster(t, 4, fastFailure)
	local, sum := randomFile(t, 600<<10, 4) // one block
	c.dfs(t, "-put", local, "/c")
	orig, _ := os.ReadFile(local)
	files, _ := filepath.Glob(filepath.Join(c.root, "dn*", "data", "current", "BP-*", "current", "finalized", "*", "*", "blk_*[0-9]"))
	if len(files) != 3 {
		t.Fatalf("found %d replica files, want 3: %v", len(files), files)
	}
	// Corrupt the replica the NameNode lists first, so the reader meets it.
	first := c.locations(t, "/c").GetBlocks()[0].GetLocs()[0].GetId()
	var bad string
	for i := range c.dns {
		if c.dnAddr(i) == fmt.Sprintf("%s:%d", first.GetIpAddr(), first.GetXferPort()) {
			for _, f := range files {
				if strings.Contains(f, fmt.Sprintf("/dn%d/", i)) {
					bad = f
				}
			}
		}
	}
	if bad == "" {
		t.Fatal("could not find the first location's replica file")
	}
	b, _ := os.ReadFile(bad)
	for i := 1000; i < 1010; i++ {
		b[i] ^= 0xff
	}
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Readers start at the replica the NameNode lists first, which varies
	// among equally near nodes: read until one meets the corrupt copy.
	for i := 0; i < 50 && !strings.Contains(c.nn.logText(), "replica reported corrupt"); i++ {
		if got := c.ourCat(t, "/c"); got != sum {
			t.Fatalf("read with a corrupt replica: %s, want %s", got, sum)
		}
	}
	if !strings.Contains(c.nn.logText(), "replica reported corrupt") {
		t.Fatal("no reader reported the corrupt replica")
	}
	// The reader reported it: the NameNode replaces it with a good copy.
	deadline := time.Now().Add(60 * time.Second)
	for {
		files, _ := filepath.Glob(filepath.Join(c.root, "dn*", "data", "current", "BP-*", "current", "finalized", "*", "*", "blk_*[0-9]"))
		good := 0
		for _, f := range files {
			if d, err := os.ReadFile(f); err == nil && bytes.Equal(d, orig) {
				good++
			}
		}
		if good == 3 && len(files) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("corrupt replica not replaced: %d good of %d", good, len(files))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestRestartsAndSafeMode: a DataNode restarted with its data re-registers
// and its replicas count again; a NameNode restarted without DataNodes stays
// in safe mode, refusing writes, until enough blocks are reported.
func TestRestartsAndSafeMode(t *testing.T) {
	parallel(t)
	c := startCluster(t, 3, fastFailure)
	local, sum := randomFile(t, 3<<20, 5)
	c.dfs(t, "-put", local, "/s")

	// DataNode restart.
	c.dns[0].cmd.Process.Signal(os.Interrupt)
	<-c.dns[0].done
	c.startDataNode(0)
	c.waitLive(3, 30*time.Second)
	c.waitReplicated(t, "/s", 3, "", 30*time.Second)

	// NameNode restart with every DataNode down: safe mode.
	for i, p := range c.dns {
		c.kill(p)
		c.dns[i] = nil
	}
	c.nn.cmd.Process.Signal(os.Interrupt)
	<-c.nn.done
	c.startNameNode()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := c.runErr(c.confDir("nn"), nil, "dfsadmin", "-safemode", "get")
		if err == nil && strings.Contains(out, "ON") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("NameNode did not come up in safe mode: %q %v", out, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, err := c.runErr(c.confDir("nn"), nil, "dfs", "-mkdir", "/blocked")
	if err == nil || !strings.Contains(out, "safe mode") {
		t.Fatalf("a write in safe mode was not refused: %v %q", err, out)
	}
	for i := range c.dns {
		c.startDataNode(i)
	}
	c.waitLive(3, 60*time.Second)
	c.dfs(t, "-mkdir", "/after")
	if got := c.ourCat(t, "/s"); got != sum {
		t.Fatalf("read after restarts: %s", got)
	}
}
