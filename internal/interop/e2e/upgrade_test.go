package e2e

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/failpoint"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// upgradeSteps is where one round of TestUpgradeKill kills each process:
// a NameNode or DataNode step of the upgrade, rollback and finalize.
type upgradeSteps struct {
	nnUpgrade, dnUpgrade, nnRollback, dnRollback, nnFinalize, dnFinalize failpoint.Name
}

// The steps of each kind, the first of each list in the default run.
var (
	nnUpgradeSteps  = []failpoint.Name{failpoint.NNUpgradeAfterImage, failpoint.NNUpgradeAfterRename, failpoint.NNUpgradeMidVersion, failpoint.NNUpgradeAfterVersion}
	dnUpgradeSteps  = []failpoint.Name{failpoint.DNUpgradeMidLink, failpoint.DNUpgradeAfterRename, failpoint.DNUpgradeAfterLink, failpoint.DNUpgradeAfterVersion}
	nnRollbackSteps = []failpoint.Name{failpoint.NNRollbackAfterRemove, failpoint.NNRollbackAfterRestore}
	dnRollbackSteps = []failpoint.Name{failpoint.DNRollbackAfterRestore, failpoint.DNRollbackAfterRemove}
	nnFinalizeSteps = []failpoint.Name{failpoint.NNFinalizeAfterRename}
	dnFinalizeSteps = []failpoint.Name{failpoint.DNFinalizeMidDelete, failpoint.DNFinalizeAfterRename}
)

// TestUpgradeKill runs a NameNode (two name dirs) and two DataNodes as
// processes through upgrade, rollback and finalize rounds. In each round
// every kind of step kills a process with SIGKILL at one of its steps
// (HDFSGO_FAILPOINT, the process's own kill), and the process is started
// again the way an operator would (the same command again): storage ends
// in a clean state, every replica of what was written before the upgrade
// is on both DataNodes and reads back, and after the rollback what was
// written after the upgrade is gone. The default run is one round (one
// step of each kind); HDFSGO_LONG=1 runs every step of every kind.
func TestUpgradeKill(t *testing.T) {
	parallel(t)
	rounds := 1
	if os.Getenv("HDFSGO_LONG") != "" {
		for _, l := range [][]failpoint.Name{nnUpgradeSteps, dnUpgradeSteps, nnRollbackSteps, dnRollbackSteps, nnFinalizeSteps, dnFinalizeSteps} {
			rounds = max(rounds, len(l))
		}
	}
	names := t.TempDir()
	c := startCluster(t, 2, map[string]string{
		"dfs.namenode.name.dir":                 filepath.Join(names, "name1") + "," + filepath.Join(names, "name2"),
		"dfs.blocksize":                         "1048576",
		"dfs.namenode.fs-limits.min-block-size": "1024",
		"dfs.heartbeat.interval":                "1",
		"dfs.namenode.safemode.extension":       "0",
		"dfs.replication":                       "2",
	})
	u := &upgradeE2E{c: c, t: t, names: []string{filepath.Join(names, "name1"), filepath.Join(names, "name2")}}
	for r := range rounds {
		pick := func(l []failpoint.Name) failpoint.Name { return l[r%len(l)] }
		st := upgradeSteps{pick(nnUpgradeSteps), pick(dnUpgradeSteps), pick(nnRollbackSteps),
			pick(dnRollbackSteps), pick(nnFinalizeSteps), pick(dnFinalizeSteps)}
		t.Logf("round %d: %+v", r, st)
		u.round(r, st)
	}
}

type upgradeE2E struct {
	c     *cluster
	t     *testing.T
	names []string
}

// spawnEnv starts the binary as a role with extra environment.
func (u *upgradeE2E) spawnEnv(name, confDir string, env []string, args ...string) *proc {
	u.t.Helper()
	p := &proc{name: name, log: &bytes.Buffer{}, mu: &sync.Mutex{}, done: make(chan struct{})}
	cmd := exec.Command(hdfsBin, append([]string{"--config", confDir}, args...)...)
	cmd.Stdout = lockedWriter{p.mu, p.log}
	cmd.Stderr = lockedWriter{p.mu, p.log}
	cmd.Env = append(append(os.Environ(), "HADOOP_CONF_DIR="), env...)
	if err := cmd.Start(); err != nil {
		u.t.Fatal(err)
	}
	p.cmd = cmd
	go func() { cmd.Wait(); close(p.done) }()
	return p
}

// failAt is the environment that arms failpoint fp for a child of this
// test.
func failAt(fp failpoint.Name) []string {
	return []string{failpoint.EnvVar + "=" + string(fp) + "@" + strconv.Itoa(os.Getpid())}
}

// killedAt waits for p to die by its failpoint fp.
func (u *upgradeE2E) killedAt(p *proc, fp failpoint.Name) {
	u.t.Helper()
	select {
	case <-p.done:
	case <-time.After(90 * time.Second):
		u.t.Fatalf("%s did not reach failpoint %s:\n%s", p.name, fp, tail(p.logText(), 40))
	}
	ws, _ := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL || !strings.Contains(p.logText(), "failpoint "+string(fp)+": killing") {
		u.t.Fatalf("%s ended with %v instead of being killed at %s:\n%s", p.name, p.cmd.ProcessState, fp, tail(p.logText(), 40))
	}
}

func (u *upgradeE2E) stop(p *proc) {
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	waitOrKill(p)
}

func (u *upgradeE2E) stopAll() {
	for i, p := range u.c.dns {
		u.stop(p)
		u.c.dns[i] = nil
	}
	u.stop(u.c.nn)
	u.c.nn = nil
}

func (u *upgradeE2E) startNN(env []string, args ...string) *proc {
	p := u.spawnEnv("namenode", u.c.confDir("nn"), env, append([]string{"namenode"}, args...)...)
	u.c.nn = p
	return p
}

func (u *upgradeE2E) startDN(i int, env []string, args ...string) *proc {
	role := fmt.Sprintf("dn%d", i)
	p := u.spawnEnv(role, u.c.confDir(role), env, append([]string{"datanode"}, args...)...)
	u.c.dns[i] = p
	return p
}

// crashThenStartDNs starts DataNode 0 armed at fp (it must die there) and
// DataNode 1 normally, then DataNode 0 again normally, both with args.
func (u *upgradeE2E) crashThenStartDNs(fp failpoint.Name, args ...string) {
	u.t.Helper()
	u.killedAt(u.startDN(0, failAt(fp), args...), fp)
	u.startDN(0, nil, args...)
	u.startDN(1, nil, args...)
	u.c.waitLive(2, 60*time.Second)
}

// rollbackNN runs `hdfs namenode -rollback`, answering Y; with fp it must
// die there.
func (u *upgradeE2E) rollbackNN(fp failpoint.Name) {
	u.t.Helper()
	cmd := exec.Command(hdfsBin, "--config", u.c.confDir("nn"), "namenode", "-rollback")
	cmd.Env = append(os.Environ(), "HADOOP_CONF_DIR=")
	if fp != "" {
		cmd.Env = append(cmd.Env, failAt(fp)...)
	}
	cmd.Stdin = strings.NewReader("Y\n")
	out, err := cmd.CombinedOutput()
	if fp == "" {
		if err != nil {
			u.t.Fatalf("namenode -rollback: %v\n%s", err, out)
		}
		return
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		u.t.Fatalf("namenode -rollback was not killed at %s: %v\n%s", fp, err, out)
	}
}

// poolDirs are the block pool storage dirs of both DataNodes.
func (u *upgradeE2E) poolDirs() []storage.Dir {
	u.t.Helper()
	v, err := storage.Dir{Root: u.names[0]}.ReadVersion(vfs.Default)
	if err != nil {
		u.t.Fatal(err)
	}
	var out []storage.Dir
	for i := range 2 {
		out = append(out, storage.Dir{Root: filepath.Join(u.c.root, fmt.Sprintf("dn%d", i), "data", "current", v.BlockPoolID)})
	}
	return out
}

// blockFiles lists the finalized block files of a pool storage dir.
func blockFiles(t *testing.T, d storage.Dir) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(d.Current(), "finalized"), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n := e.Name(); !e.IsDir() && strings.HasPrefix(n, "blk_") && !strings.HasSuffix(n, ".meta") {
			out = append(out, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// checkStorage asserts that every dir (name dirs and pool dirs) is clean
// and keeps previous/ exactly when prev is set, and that both DataNodes
// hold the block files want.
func (u *upgradeE2E) checkStorage(prev bool, want []string) {
	u.t.Helper()
	var dirs []storage.Dir
	for _, n := range u.names {
		dirs = append(dirs, storage.Dir{Root: n})
	}
	pools := u.poolDirs()
	for _, d := range append(dirs, pools...) {
		deadline := time.Now().Add(30 * time.Second)
		for {
			s, err := d.Inspect(vfs.Default)
			if err != nil {
				u.t.Fatal(err)
			}
			r, err := storage.Decide(s)
			if err == nil && r == storage.RepairNone && s.Previous == prev {
				break
			}
			if time.Now().After(deadline) {
				u.t.Fatalf("%s holds %s (%v, %v), want previous = %v", d.Root, s, r, err, prev)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, d := range pools {
		if got := blockFiles(u.t, d); strings.Join(got, " ") != strings.Join(want, " ") {
			u.t.Fatalf("%s holds blocks %v, want %v", d.Root, got, want)
		}
	}
}

func (u *upgradeE2E) round(r int, st upgradeSteps) {
	t, c := u.t, u.c
	before, sumBefore := randomFile(t, 2<<20+int64(r)*4096+17, uint64(100+r))
	pb := fmt.Sprintf("/before%d", r)
	c.dfs(t, "-put", before, pb)
	u.stopAll()
	// Every block the cluster holds now, on both DataNodes.
	blocks := blockFiles(t, u.poolDirs()[0])
	u.checkStorage(false, blocks)

	// Upgrade: the NameNode killed at a step of -upgrade, then -upgrade
	// again; DataNode 0 killed at a step of its upgrade, then started
	// again.
	u.killedAt(u.startNN(failAt(st.nnUpgrade), "-upgrade"), st.nnUpgrade)
	u.startNN(nil, "-upgrade")
	u.crashThenStartDNs(st.dnUpgrade)
	if got := c.ourCat(t, pb); got != sumBefore {
		t.Fatalf("%s after the upgrade: sha %s, want %s", pb, got, sumBefore)
	}
	if out := c.run(t, c.confDir("nn"), "dfsadmin", "-upgrade", "query"); !strings.Contains(out, "Upgrade not finalized") {
		t.Fatalf("dfsadmin -upgrade query during the upgrade: %q", out)
	}
	after, _ := randomFile(t, 1<<20+33, uint64(200+r))
	pa := fmt.Sprintf("/after%d", r)
	c.dfs(t, "-put", after, pa)
	u.stopAll()
	u.checkStorage(true, blockFiles(t, u.poolDirs()[0]))

	// Rollback: -rollback killed at a step, then again; DataNode 0 killed
	// at a step of -rollback, then started with -rollback again.
	u.rollbackNN(st.nnRollback)
	u.rollbackNN("")
	u.startNN(nil)
	u.crashThenStartDNs(st.dnRollback, "-rollback")
	if got := c.ourCat(t, pb); got != sumBefore {
		t.Fatalf("%s after the rollback: sha %s, want %s", pb, got, sumBefore)
	}
	if out, err := c.runErr(c.confDir("nn"), nil, "dfs", "-ls", pa); err == nil || !strings.Contains(out, "No such file or directory") {
		t.Fatalf("%s survived the rollback: %v\n%s", pa, err, out)
	}
	u.stopAll()
	u.checkStorage(false, blocks)

	// Upgrade again and finalize: the NameNode killed in finalizeUpgrade
	// (dfsadmin then fails), started again, finalized again; DataNode 0,
	// armed at a step of its finalize, dies when DNA_FINALIZE comes, and is
	// started again.
	u.startNN(failAt(st.nnFinalize), "-upgrade")
	dn0 := u.startDN(0, failAt(st.dnFinalize))
	u.startDN(1, nil)
	c.waitLive(2, 60*time.Second)
	if out, err := c.runErr(c.confDir("nn"), nil, "dfsadmin", "-finalizeUpgrade"); err == nil {
		t.Fatalf("dfsadmin -finalizeUpgrade succeeded although the NameNode was killed in it:\n%s", out)
	}
	u.killedAt(c.nn, st.nnFinalize)
	u.startNN(nil)
	c.waitLive(2, 60*time.Second)
	if out := c.run(t, c.confDir("nn"), "dfsadmin", "-finalizeUpgrade"); !strings.Contains(out, "Finalize upgrade successful") {
		t.Fatalf("dfsadmin -finalizeUpgrade: %q", out)
	}
	u.killedAt(dn0, st.dnFinalize)
	u.startDN(0, nil)
	c.waitLive(2, 60*time.Second)
	if out := c.run(t, c.confDir("nn"), "dfsadmin", "-upgrade", "query"); !strings.Contains(out, "Upgrade finalized") || strings.Contains(out, "not") {
		t.Fatalf("dfsadmin -upgrade query after finalize: %q", out)
	}
	u.checkStorage(false, blocks)
	if got := c.ourCat(t, pb); got != sumBefore {
		t.Fatalf("%s after finalize: sha %s, want %s", pb, got, sumBefore)
	}
}
