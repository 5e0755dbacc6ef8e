package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// opWriterEnv makes the test binary an op writer process: it makes
// directories <dir>/pre/dN on one NameNode (no failover), printing
// "acked PATH" for each, until it reads a line on stdin; then it goes on
// under <dir>/post/.
const opWriterEnv = "HDFSGO_E2E_OPWRITER"

func opWriterMain() {
	dir, nn := os.Getenv(opWriterEnv), os.Getenv("HDFSGO_E2E_NN")
	fsys, err := client.New(client.Options{Addresses: []string{nn}})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	phase := "pre"
	go func() {
		bufio.NewReader(os.Stdin).ReadString('\n')
		mu.Lock()
		phase = "post"
		mu.Unlock()
	}()
	for i := 0; ; i++ {
		mu.Lock()
		p := fmt.Sprintf("%s/%s/d%05d", dir, phase, i)
		mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := fsys.MkdirAll(ctx, p, 0o755)
		cancel()
		if err == nil {
			fmt.Println("acked", p)
		} else {
			fmt.Println("failed", p, err)
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// oldWriter is a running op writer process.
type oldWriter struct {
	cmd   *exec.Cmd
	stdin *os.File
	mu    sync.Mutex
	acked []string
	done  chan struct{}
}

func startOldWriter(t *testing.T, dir, nn string, gid uint32) *oldWriter {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), opWriterEnv+"="+dir, "HDFSGO_E2E_NN="+nn, "HADOOP_USER_NAME="+osUser(t))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(os.Getuid()), Gid: gid}}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = r
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	ow := &oldWriter{cmd: cmd, stdin: w, done: make(chan struct{})}
	go func() {
		defer close(ow.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
				ow.mu.Lock()
				ow.acked = append(ow.acked, p)
				ow.mu.Unlock()
			}
		}
	}()
	return ow
}

func (ow *oldWriter) count() int {
	ow.mu.Lock()
	defer ow.mu.Unlock()
	return len(ow.acked)
}

func (ow *oldWriter) stop() []string {
	ow.cmd.Process.Kill()
	ow.cmd.Wait()
	ow.stdin.Close()
	<-ow.done
	ow.mu.Lock()
	defer ow.mu.Unlock()
	return append([]string(nil), ow.acked...)
}

// rules holds iptables rules to remove, also when the test fails.
type rules struct {
	t    *testing.T
	mu   sync.Mutex
	list [][]string
}

func (r *rules) add(args ...string) {
	r.t.Helper()
	if out, err := exec.Command("iptables", append([]string{"-I"}, args...)...).CombinedOutput(); err != nil {
		r.t.Fatalf("iptables -I %v: %v %s", args, err, out)
	}
	r.mu.Lock()
	r.list = append(r.list, args)
	r.mu.Unlock()
}

func (r *rules) clear() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.list {
		if out, err := exec.Command("iptables", append([]string{"-D"}, a...)...).CombinedOutput(); err != nil {
			r.t.Errorf("iptables -D %v: %v %s", a, err, out)
		}
	}
	r.list = nil
}

func hostPort(addr string) (string, string) {
	h, p, _ := strings.Cut(addr, ":")
	return h, p
}

// TestQJMSplitBrain (HDFSGO_LONG=1, root, iptables): 20 rounds of a split
// brain. In each, the active NameNode is cut off from the JournalNodes and
// from the clients (iptables, matching the packets of its process by group
// id), while one writer process that can still reach it keeps making
// directories on it alone; the standby is made active with
// `haadmin -transitionToActive --forceactive`. Once the new active has its
// epoch the old one cannot get a single batch acknowledged by any
// JournalNode, and it stops. Checked every round: every directory the old
// active acknowledged before the cut is in the new active's namespace, and
// none it was asked for after the cut is; writers on the new side create,
// rename and delete files throughout, and at the end every acknowledged op
// is there and the standby's namespace equals the active's.
func TestQJMSplitBrain(t *testing.T) {
	if !long() {
		t.Skipf("long fault test; set %s=1 to run it", longEnv)
	}
	testtool.Root(t, "iptables rules and processes run with other group ids")
	testtool.Require(t, "iptables", "apt-get install -y iptables")
	q := startQJM(t, 3, map[string]string{"dfs.namenode.safemode.extension": "0", "dfs.qjournal.write-txns.timeout.ms": "2000"})
	const gidBase = 61000
	q.gids = map[string]uint32{"nn1": gidBase + 1, "nn2": gidBase + 2}
	// Restart both NameNodes under their group ids; nn1 is made active.
	for i := range 2 {
		q.nns[i].cmd.Process.Signal(syscall.SIGTERM)
		waitOrKill(q.nns[i])
		q.startNN(i)
		q.waitRPC(i)
	}
	q.haadmin(t, "-transitionToActive", "nn1")
	r := &rules{t: t}
	t.Cleanup(r.clear)

	fsys := q.ourClient(t)
	m := startWorkload(t, fsys, "/w", uint64(time.Now().UnixNano()))
	check := func(sb *client.FileSystem, ctx context.Context, dir string, acked []string, round int) {
		t.Helper()
		for _, p := range acked {
			if !strings.Contains(p, "/pre/") {
				t.Fatalf("round %d: the cut-off active acknowledged %s", round, p)
			}
			if _, err := sb.Stat(ctx, p); err != nil {
				t.Fatalf("round %d: %s, acknowledged by the old active before the cut, is missing: %v", round, p, err)
			}
		}
		if es, err := sb.ReadDir(ctx, dir+"/post"); err == nil && len(es) > 0 {
			t.Fatalf("round %d: %d directories the old active was asked for after the cut are in the namespace (%s...)", round, len(es), es[0].Name())
		}
	}
	active := 0
	for round := range 20 {
		old, next := active, 1-active
		dir := fmt.Sprintf("/sb/r%02d", round)
		ow := startOldWriter(t, dir, q.nnAddrs[old], gidBase+10)
		deadline := time.Now().Add(30 * time.Second)
		for ow.count() < 5 {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the old-side writer got nothing acknowledged", round)
			}
			time.Sleep(10 * time.Millisecond)
		}
		// The cut: the old active's packets to the JournalNodes, and the
		// other clients' (and the DataNodes', and the tools') to it.
		gid := fmt.Sprint(q.gids[fmt.Sprintf("nn%d", old+1)])
		for _, jn := range q.jnRPC {
			h, p := hostPort(jn)
			r.add("OUTPUT", "-o", "lo", "-m", "owner", "--gid-owner", gid, "-p", "tcp", "-d", h, "--dport", p, "-j", "DROP")
		}
		h, p := hostPort(q.nnAddrs[old])
		r.add("OUTPUT", "-o", "lo", "-m", "owner", "--gid-owner", "0", "-p", "tcp", "-d", h, "--dport", p, "-j", "DROP")
		fmt.Fprintln(ow.stdin, "cut")
		q.haadmin(t, "-transitionToActive", "--forceactive", fmt.Sprintf("nn%d", next+1))
		if got := q.state(t, next); got != "active" {
			t.Fatalf("round %d: nn%d is %q after --forceactive", round, next+1, got)
		}
		select {
		case <-q.nns[old].done:
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: the cut-off nn%d did not stop:\n%s", round, old+1, tail(q.nns[old].logText(), 20))
		}
		if code := q.nns[old].cmd.ProcessState.ExitCode(); code == 0 {
			t.Fatalf("round %d: the fenced nn%d exited with status 0:\n%s", round, old+1, tail(q.nns[old].logText(), 10))
		}
		acked := ow.stop()
		r.clear()
		sb, err := client.New(client.Options{Addresses: []string{q.nnAddrs[next]}, User: osUser(t)})
		if err != nil {
			t.Fatal(err)
		}
		cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
		check(sb, cctx, dir, acked, round)
		ccancel()
		sb.Close()
		t.Logf("round %d: nn%d → nn%d; the old side had %d directories acknowledged", round, old+1, next+1, len(acked))
		q.startNN(old) // back, as the standby
		q.waitRPC(old)
		active = next
	}
	m.stop()
	m.check(t, context.Background(), fsys, "/w")
	q.waitSameNamespace(t, active)
}
