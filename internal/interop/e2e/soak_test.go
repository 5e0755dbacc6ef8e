package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
)

// The soak test is long and off by default: HDFSGO_SOAK=10m runs it for ten
// minutes (go test -run TestSoak -timeout 0 ./internal/interop/e2e).
// HDFSGO_SOAK_SEED=N replays the chaos and the writers of an earlier run
// (each run logs its seed); without it every run draws a new one.
const (
	soakEnv     = "HDFSGO_SOAK"
	soakSeedEnv = "HDFSGO_SOAK_SEED"
)

// soakFile is one file a soak writer attempted.
type soakFile struct {
	path string
	seed uint64
	size int
	// flushed is how many bytes an hflush acknowledged before the write
	// failed (failed files only).
	flushed int
}

// soakContent is the content of a soak file: reproducible from its seed.
func soakContent(seed uint64, size int) []byte {
	b := make([]byte, size)
	var key [32]byte
	for i := range 8 {
		key[i] = byte(seed >> (8 * i))
	}
	rand.NewChaCha8(key).Read(b)
	return b
}

// soakLedger records what the writers did: files whose Close succeeded
// (acknowledged: they must survive everything), files whose write failed,
// and files being deleted to keep the data set small (they may or may not
// exist at the end, but what exists must be intact).
type soakLedger struct {
	mu       sync.Mutex
	acked    []soakFile
	ackedSum int64
	failed   []soakFile
	deleting []soakFile
}

// soakLiveBytes bounds the acknowledged data kept (three replicas each on
// the one disk): older files are deleted beyond it.
const soakLiveBytes = 512 << 20

func (l *soakLedger) ack(f soakFile) {
	l.mu.Lock()
	l.acked = append(l.acked, f)
	l.ackedSum += int64(f.size)
	l.mu.Unlock()
}

// oldest takes the oldest acknowledged file out of the ledger for deletion
// when the data set is over its bound.
func (l *soakLedger) oldest() (soakFile, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ackedSum <= soakLiveBytes || len(l.acked) == 0 {
		return soakFile{}, false
	}
	f := l.acked[0]
	l.acked = l.acked[1:]
	l.ackedSum -= int64(f.size)
	l.deleting = append(l.deleting, f)
	return f, true
}

// deleted records that a deletion was acknowledged: the file must be gone.
func (l *soakLedger) deleted(f soakFile) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.deleting {
		if l.deleting[i].path == f.path {
			l.deleting = append(l.deleting[:i], l.deleting[i+1:]...)
			return
		}
	}
}

func (l *soakLedger) fail(f soakFile) {
	l.mu.Lock()
	l.failed = append(l.failed, f)
	l.mu.Unlock()
}

func (l *soakLedger) pick(r *rand.Rand) (soakFile, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.acked) == 0 {
		return soakFile{}, false
	}
	return l.acked[r.IntN(len(l.acked))], true
}

// TestSoak runs writers and readers against a cluster of separate processes
// while DataNodes are killed with SIGKILL and restarted, the NameNode is
// killed and restarted, and (as root, with iptables) pairs of DataNodes are
// cut off from each other for a few seconds. Every file whose Close
// succeeded must read back intact, during the run and at the end, and end
// with three replicas; a file whose write failed must, once its lease is
// recovered, hold a prefix of what was written, at least what hflush
// acknowledged.
func TestSoak(t *testing.T) {
	dur, err := time.ParseDuration(os.Getenv(soakEnv))
	if err != nil || dur <= 0 {
		t.Skipf("long fault test; set %s=10m (a duration) to run it", soakEnv)
	}
	// A copy cut off by a partition (source and target alive) is only
	// noticed at the pending timeout: 30 s here instead of 5 min.
	extra := map[string]string{"dfs.replication": "3", "dfs.namenode.reconstruction.pending.timeout-sec": "30"}
	for k, v := range fastFailure {
		extra[k] = v
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(soakSeedEnv); v != "" {
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", soakSeedEnv, v, err)
		}
	}
	t.Logf("seed %d (replay with %s=%d)", seed, soakSeedEnv, seed)
	const datanodes = 5
	// DEBUG: the DataNodes log every op that fails, for the report below.
	t.Setenv("HADOOP_ROOT_LOGGER", "DEBUG,console")
	c := startCluster(t, datanodes, extra)
	part := newPartitioner(t)
	defer part.healAll()

	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var ledger soakLedger
	var stats struct {
		acked, written, writeErrs, reads, readErrs atomic.Int64
	}
	var wg sync.WaitGroup
	const writers = 3
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			soakWriter(ctx, t, c.nnAddr, w, seed, &ledger, &stats.acked, &stats.written, &stats.writeErrs)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := rand.New(rand.NewPCG(seed, 1))
		fsys, err := client.New(client.Options{Addresses: []string{c.nnAddr}, User: osUser(t)})
		if err != nil {
			t.Error(err)
			return
		}
		defer fsys.Close()
		for ctx.Err() == nil {
			time.Sleep(200 * time.Millisecond)
			f, ok := ledger.pick(r)
			if !ok {
				continue
			}
			got, err := readFile(ctx, fsys, f.path)
			stats.reads.Add(1)
			if err != nil {
				// Every replica may be on a node that is down right now,
				// or the NameNode restarting; the first few are logged.
				if stats.readErrs.Add(1) <= 5 {
					t.Logf("read of %s during the run failed: %v", f.path, err)
				}
				continue
			}
			if !bytes.Equal(got, soakContent(f.seed, f.size)) {
				t.Errorf("%s read back wrong during the run: %d bytes, want %d", f.path, len(got), f.size)
			}
		}
	}()

	// The chaos: one action every 1-3 s until the time is up.
	r := rand.New(rand.NewPCG(seed, 7))
	var log []string
	down := map[int]bool{}
	nnKills := 0
	for ctx.Err() == nil {
		time.Sleep(time.Duration(1000+r.IntN(2000)) * time.Millisecond)
		if ctx.Err() != nil {
			break
		}
		switch a := r.IntN(10); {
		case a < 4 && len(down) < datanodes-3:
			i := r.IntN(datanodes)
			if down[i] {
				continue
			}
			c.kill(c.dns[i])
			down[i] = true
			log = append(log, fmt.Sprintf("kill dn%d", i))
		case a < 7 && len(down) > 0:
			for i := range down {
				c.startDataNode(i)
				delete(down, i)
				log = append(log, fmt.Sprintf("restart dn%d", i))
				break
			}
		case a == 7 && nnKills < 3:
			c.kill(c.nn)
			c.startNameNode()
			nnKills++
			log = append(log, "kill and restart the namenode")
		case a >= 8 && part.ok:
			i, j := r.IntN(datanodes), r.IntN(datanodes)
			if i == j {
				continue
			}
			part.cut(dnHost(i), dnHost(j))
			log = append(log, fmt.Sprintf("partition dn%d from dn%d", i, j))
			time.AfterFunc(time.Duration(2+r.IntN(5))*time.Second, func() { part.heal(dnHost(i), dnHost(j)) })
		}
	}
	wg.Wait()
	time.Sleep(7 * time.Second) // let the last partitions heal
	part.healAll()
	for i := range down {
		c.startDataNode(i)
	}
	t.Logf("chaos: %d actions: %v", len(log), log)
	c.waitLive(datanodes, 2*time.Minute)

	fsys, err := client.New(client.Options{Addresses: []string{c.nnAddr}, User: osUser(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	vctx, vcancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer vcancel()
	for _, f := range ledger.acked {
		got, err := readFile(vctx, fsys, f.path)
		if err != nil {
			t.Errorf("acknowledged file %s unreadable after the run: %v", f.path, err)
			continue
		}
		if sha256.Sum256(got) != sha256.Sum256(soakContent(f.seed, f.size)) {
			t.Errorf("acknowledged file %s differs after the run: %d bytes, want %d", f.path, len(got), f.size)
		}
	}
	c.waitAllReplicated(t, ledger.acked, 3*time.Minute)
	// The stock client reads what survived too (a sample: it is slower).
	stockCl := c.stockClient(t)
	for i, f := range ledger.acked {
		if i%max(1, len(ledger.acked)/20) != 0 {
			continue
		}
		want := sha256.Sum256(soakContent(f.seed, f.size))
		if got := stockHash(t, stockCl, f.path); got != hex.EncodeToString(want[:]) {
			t.Errorf("stock client reads %s differently after the run", f.path)
		}
	}
	for _, f := range ledger.failed {
		checkFailedFile(vctx, t, fsys, f)
	}
	// A deletion whose answer was lost may or may not have happened.
	for _, f := range ledger.deleting {
		got, err := readFile(vctx, fsys, f.path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil || !bytes.Equal(got, soakContent(f.seed, f.size)) {
			t.Errorf("file %s whose deletion failed: %d bytes, %v", f.path, len(got), err)
		}
	}
	t.Logf("writes acknowledged %d (%d MiB written, %d files kept), failed %d; reads during the run %d, of which %d failed",
		stats.acked.Load(), stats.written.Load()>>20, len(ledger.acked), stats.writeErrs.Load(), stats.reads.Load(), stats.readErrs.Load())
	if stats.acked.Load() == 0 {
		t.Fatal("no write succeeded during the soak")
	}
}

// soakWriter writes files of random sizes in random chunks, flushing now and
// then, until ctx ends, and records each in the ledger.
func soakWriter(ctx context.Context, t *testing.T, nn string, w int, seed uint64, ledger *soakLedger, acked, written, errs *atomic.Int64) {
	fsys, err := client.New(client.Options{Addresses: []string{nn}, User: osUser(t)})
	if err != nil {
		t.Error(err)
		return
	}
	defer fsys.Close()
	r := rand.New(rand.NewPCG(seed, uint64(w)))
	for n := 0; ctx.Err() == nil; n++ {
		f := soakFile{path: fmt.Sprintf("/soak/w%d/f%05d", w, n), seed: seed ^ (uint64(w)<<32 | uint64(n)), size: r.IntN(3 << 20)}
		data := soakContent(f.seed, f.size)
		err := writeSoakFile(ctx, fsys, &f, data, r)
		if err != nil {
			errs.Add(1)
			ledger.fail(f)
			time.Sleep(300 * time.Millisecond)
			continue
		}
		acked.Add(1)
		written.Add(int64(f.size))
		ledger.ack(f)
		if old, ok := ledger.oldest(); ok {
			dctx, cancel := context.WithTimeout(ctx, time.Minute)
			if err := fsys.Remove(dctx, old.path); err == nil {
				ledger.deleted(old)
			}
			cancel()
		}
	}
}

func writeSoakFile(ctx context.Context, fsys *client.FileSystem, f *soakFile, data []byte, r *rand.Rand) error {
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := fsys.MkdirAll(wctx, f.path[:len("/soak/wN")], 0o755); err != nil {
		return err
	}
	w, err := fsys.CreateFile(wctx, f.path, client.CreateOptions{Replication: 3, Perm: 0o644})
	if err != nil {
		return err
	}
	for off := 0; off < len(data); {
		k := min(1+r.IntN(256<<10), len(data)-off)
		if _, err := w.Write(data[off : off+k]); err != nil {
			w.Close()
			return err
		}
		off += k
		if r.IntN(8) == 0 {
			if err := w.Flush(); err != nil {
				w.Close()
				return err
			}
			f.flushed = off
		}
	}
	return w.Close()
}

func readFile(ctx context.Context, fsys *client.FileSystem, path string) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	rd, err := fsys.Open(rctx, path)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// checkFailedFile recovers the lease of a file whose write failed and checks
// that what it holds is a prefix of what was written and keeps at least the
// bytes an hflush acknowledged. A file whose create never reached the
// NameNode does not exist, which is fine when nothing was flushed.
func checkFailedFile(ctx context.Context, t *testing.T, fsys *client.FileSystem, f soakFile) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		closed, err := fsys.RecoverLease(ctx, f.path)
		if errors.Is(err, os.ErrNotExist) {
			if f.flushed > 0 {
				t.Errorf("failed file %s with %d flushed bytes is gone", f.path, f.flushed)
			}
			return
		}
		if err == nil && closed {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("lease of failed file %s not recovered: %v", f.path, err)
			return
		}
		time.Sleep(time.Second)
	}
	got, err := readFile(ctx, fsys, f.path)
	if err != nil {
		t.Errorf("failed file %s unreadable after lease recovery: %v", f.path, err)
		return
	}
	want := soakContent(f.seed, f.size)
	if len(got) < f.flushed || len(got) > len(want) || !bytes.Equal(got, want[:len(got)]) {
		t.Errorf("failed file %s holds %d bytes, not a prefix of the %d written with at least the %d flushed",
			f.path, len(got), len(want), f.flushed)
	}
}

// partitioner cuts loopback traffic between two addresses with iptables
// (root only); without it the soak runs without partitions.
type partitioner struct {
	t    *testing.T
	ok   bool
	mu   sync.Mutex
	cuts map[[2]string]bool
}

func newPartitioner(t *testing.T) *partitioner {
	p := &partitioner{t: t, cuts: map[[2]string]bool{}}
	if _, err := exec.LookPath("iptables"); err == nil && os.Geteuid() == 0 {
		p.ok = true
	} else {
		t.Log("no partitions: needs root and iptables (apt-get install -y iptables)")
	}
	return p
}

func (p *partitioner) rule(op, a, b string) {
	out, err := exec.Command("iptables", op, "INPUT", "-i", "lo", "-s", a, "-d", b, "-j", "DROP").CombinedOutput()
	if err != nil && op == "-I" {
		p.t.Errorf("iptables %s %s→%s: %v %s", op, a, b, err, out)
	}
}

func (p *partitioner) cut(a, b string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a == b || p.cuts[[2]string{a, b}] {
		return
	}
	p.cuts[[2]string{a, b}] = true
	p.rule("-I", a, b)
	p.rule("-I", b, a)
}

func (p *partitioner) heal(a, b string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.cuts[[2]string{a, b}] {
		return
	}
	delete(p.cuts, [2]string{a, b})
	p.rule("-D", a, b)
	p.rule("-D", b, a)
}

func (p *partitioner) healAll() {
	p.mu.Lock()
	var all [][2]string
	for k := range p.cuts {
		all = append(all, k)
	}
	p.mu.Unlock()
	for _, k := range all {
		p.heal(k[0], k[1])
	}
}

// waitAllReplicated waits until every block of every file has three
// replicas; on timeout it reports each file that has not, with its blocks
// and what the NameNode logged about them.
func (c *cluster) waitAllReplicated(t *testing.T, files []soakFile, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	pending := files
	for len(pending) > 0 {
		var still []soakFile
		for _, f := range pending {
			for _, b := range c.locations(t, f.path).GetBlocks() {
				if len(b.GetLocs()) < 3 || b.GetCorrupt() {
					still = append(still, f)
					break
				}
			}
		}
		pending = still
		if len(pending) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	nnLog := c.nn.logText()
	for i, f := range pending {
		if i == 5 {
			t.Errorf("... and %d more files below 3 replicas", len(pending)-5)
			break
		}
		var desc []string
		for _, b := range c.locations(t, f.path).GetBlocks() {
			var locs []string
			for _, l := range b.GetLocs() {
				locs = append(locs, l.GetId().GetIpAddr())
			}
			id := strconv.FormatUint(b.GetB().GetBlockId(), 10)
			desc = append(desc, fmt.Sprintf("blk_%s_%d len %d corrupt %v on %v", id, b.GetB().GetGenerationStamp(),
				b.GetB().GetNumBytes(), b.GetCorrupt(), locs))
			for _, line := range strings.Split(nnLog, "\n") {
				if strings.Contains(line, id) {
					desc = append(desc, "  nn: "+line)
				}
			}
			if i == 0 {
				for k, dn := range c.dns {
					if dn == nil {
						continue
					}
					for _, line := range strings.Split(dn.logText(), "\n") {
						if strings.Contains(line, id) {
							desc = append(desc, fmt.Sprintf("  dn%d: %s", k, line))
						}
					}
				}
			}
		}
		t.Errorf("%s (%d bytes) did not reach 3 replicas within %v:\n%s", f.path, f.size, timeout, strings.Join(desc, "\n"))
	}
}
