package crashtest

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// mountTmpfs mounts a tmpfs of the given size (mount's size= option) on dir
// and unmounts it when t ends. It skips t when mounting is not possible.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (CAP_SYS_ADMIN) to mount a tmpfs for the failing name dir (mount -t tmpfs); root also ignores chmod, so there is no unprivileged substitute")
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs on %s (%v): needs root with CAP_SYS_ADMIN and a kernel that allows tmpfs mounts here", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v; detaching it", dir, err)
			syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
}

// fillUp writes a file into dir until the file system has no byte left.
func fillUp(t *testing.T, dir string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "filler"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for _, size := range []int{len(chunk), 1} {
		for i := 0; ; i++ {
			if i > 1<<16 {
				t.Fatalf("%s does not fill up", dir)
			}
			_, err := f.Write(chunk[:size])
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			if err != nil {
				t.Fatalf("filling %s: %v", dir, err)
			}
		}
	}
}

// logLine returns the first line of log that holds every one of words.
func logLine(log string, words ...string) (string, bool) {
	for _, line := range strings.Split(log, "\n") {
		ok := true
		for _, w := range words {
			if !strings.Contains(line, w) {
				ok = false
				break
			}
		}
		if ok {
			return line, true
		}
	}
	return "", false
}

// rollOnce asks the NameNode to roll its edit log once and ignores the
// answer (the roll fails when too few journals can start the new segment).
// A FileJournal preallocates its segment in 1 MiB chunks, so a disk filled
// up under it shows only when a chunk or a new segment needs space: the
// roll makes that happen at once.
func rollOnce(t *testing.T, addr string) {
	t.Helper()
	c := newAdminClient(t, addr)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	var resp hdfs.RollEditsResponseProto
	err := c.Call(ctx, "rollEdits", &hdfs.RollEditsRequestProto{}, &resp)
	t.Logf("rollEdits with a full name dir: %v", err)
}

// requireAllAcked fails t if any worker of a bounded round failed.
func requireAllAcked(t *testing.T, what string, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: worker %d: %v", what, i, err)
		}
	}
}

// TestFailedNameDir runs a NameNode on two name dirs, one of them a 4 MiB
// tmpfs, and fills that tmpfs up mid-run and rolls the edit log so that the
// edit log's writes to it fail with ENOSPC (without the roll they would fail
// once the segment's preallocated space is used up).
//
// With dfs.namenode.edits.dir.minimum=1 (the default) the NameNode drops the
// failed journal, says so in its log naming the dir, and keeps acknowledging
// ops; after SIGTERM it exits 0, and the surviving dir alone restarts it with
// every acknowledged op in place. Once the tmpfs has space again, the failed
// dir can be configured back: the NameNode starts on both (the stale dir's
// segment, torn by the short write, is recovered; the longer copy wins) and
// keeps every op across a further kill -9.
//
// With dfs.namenode.edits.dir.minimum=2 the failure leaves too few journals:
// no op is acknowledged after it (the calls fail, as do later ones), the
// NameNode exits with a non-zero status, and the surviving dir restarts it
// with every acknowledged op in place (an unanswered op may or may not have
// happened, as after a crash).
//
// With both name dirs on full tmpfs mounts the NameNode likewise stops
// without acknowledging more; once space is freed it restarts on both
// (whose segments end in records cut short by the failed writes) with every
// acknowledged op in place.
func TestFailedNameDir(t *testing.T) {
	needBinary(t)
	seed := testSeed(t)

	t.Run("survivor", func(t *testing.T) {
		rng := rand.New(rand.NewSource(seed))
		good := filepath.Join(t.TempDir(), "name")
		bad := t.TempDir()
		mountTmpfs(t, bad, "4m")
		nn := newNameNode(t, []string{good, bad}, nil)
		nn.start()
		ws := newWorkers(4, seed)
		setupWorkers(t, nn.addr, ws)
		requireAllAcked(t, "before the failure", round(t, nn.addr, ws, 50, 0, 0, rng, nn.kill9))

		fillUp(t, bad)
		rollOnce(t, nn.addr)
		badJournal := filepath.Join(bad, "current")
		for i := 0; ; i++ {
			if _, ok := logLine(nn.log(), "dropping failed journal", badJournal); ok {
				break
			}
			if i == 100 {
				t.Fatalf("%s is full, but after %d more ops per worker the NameNode has not logged a journal failure for it", bad, 20*i)
			}
			requireAllAcked(t, "while the dir fails", round(t, nn.addr, ws, 20, 0, 0, rng, nn.kill9))
		}
		line, _ := logLine(nn.log(), "dropping failed journal", badJournal)
		t.Logf("NameNode logged: %s", line)
		if !strings.Contains(line, "no space left on device") {
			t.Errorf("the journal failure does not give the cause (ENOSPC): %s", line)
		}
		requireAllAcked(t, "after the failure", round(t, nn.addr, ws, 50, 0, 0, rng, nn.kill9))
		if code := nn.stop(); code != 0 {
			t.Fatalf("NameNode exited %d after SIGTERM, want 0:\n%s", code, tail(nn.log(), 4000))
		}

		nn.nameDirs = []string{good}
		nn.start()
		verify(t, nn.addr, ws, func(w *worker) (int, int) { return len(w.ops), len(w.ops) })
		requireAllAcked(t, "after the restart", round(t, nn.addr, ws, 20, 0, 0, rng, nn.kill9))
		if code := nn.stop(); code != 0 {
			t.Fatalf("NameNode exited %d after SIGTERM, want 0", code)
		}

		// With space again, the failed dir can be configured back: its
		// stale segment, torn by the failed write, is recovered, and the
		// other dir's longer log wins.
		if err := os.Remove(filepath.Join(bad, "filler")); err != nil {
			t.Fatal(err)
		}
		nn.nameDirs = []string{good, bad}
		nn.start()
		verify(t, nn.addr, ws, func(w *worker) (int, int) { return len(w.ops), len(w.ops) })
		requireAllAcked(t, "with the dir back", round(t, nn.addr, ws, 20, 0, 0, rng, nn.kill9))
		nn.kill9()
		nn.start()
		verify(t, nn.addr, ws, func(w *worker) (int, int) { return len(w.ops), len(w.ops) })
		if code := nn.stop(); code != 0 {
			t.Fatalf("NameNode exited %d after SIGTERM, want 0", code)
		}
	})

	t.Run("minimum", func(t *testing.T) {
		rng := rand.New(rand.NewSource(seed))
		good := filepath.Join(t.TempDir(), "name")
		bad := t.TempDir()
		mountTmpfs(t, bad, "4m")
		nn := newNameNode(t, []string{good, bad}, map[string]string{"dfs.namenode.edits.dir.minimum": "2"})
		nn.start()
		ws := newWorkers(4, seed)
		setupWorkers(t, nn.addr, ws)
		requireAllAcked(t, "before the failure", round(t, nn.addr, ws, 50, 0, 0, rng, nn.kill9))

		fillUp(t, bad)
		rollOnce(t, nn.addr)
		const bound = 5000
		errs := round(t, nn.addr, ws, bound, 0, 0, rng, nn.kill9)
		for i, err := range errs {
			if err == nil {
				t.Fatalf("worker %d: %d ops acknowledged with %s full and dfs.namenode.edits.dir.minimum=2", i, bound, bad)
			}
			t.Logf("worker %d stopped: %v", i, err)
		}
		// No op is acknowledged any more.
		for i := 0; i < 5; i++ {
			c := newClient(nn.addr)
			err := ws[0].run(c, nil, 1, nil)
			c.Close()
			if err == nil {
				t.Fatalf("an op was acknowledged after the edit log failed: %v", ws[0].ops[len(ws[0].ops)-1])
			}
		}
		code := nn.waitExit()
		if code == 0 {
			t.Errorf("NameNode exited 0 after its edit log failed; want a failure status")
		}
		badJournal := filepath.Join(bad, "current")
		if line, ok := logLine(nn.log(), "dropping failed journal", badJournal); !ok {
			t.Errorf("the NameNode log names no failed journal %s:\n%s", badJournal, tail(nn.log(), 4000))
		} else {
			t.Logf("NameNode logged: %s", line)
		}
		if _, ok := logLine(nn.log(), "dfs.namenode.edits.dir.minimum is 2"); !ok {
			t.Errorf("the NameNode log does not say the journal minimum was not met:\n%s", tail(nn.log(), 4000))
		}

		nn.nameDirs = []string{good}
		delete(nn.props, "dfs.namenode.edits.dir.minimum")
		nn.start()
		verify(t, nn.addr, ws, afterCrash)
		requireAllAcked(t, "after the restart", round(t, nn.addr, ws, 20, 0, 0, rng, nn.kill9))
		if code := nn.stop(); code != 0 {
			t.Fatalf("NameNode exited %d after SIGTERM, want 0", code)
		}
	})

	t.Run("all", func(t *testing.T) {
		rng := rand.New(rand.NewSource(seed))
		dirs := []string{t.TempDir(), t.TempDir()}
		for _, d := range dirs {
			mountTmpfs(t, d, "4m")
		}
		nn := newNameNode(t, dirs, nil)
		nn.start()
		ws := newWorkers(4, seed)
		setupWorkers(t, nn.addr, ws)
		requireAllAcked(t, "before the failure", round(t, nn.addr, ws, 50, 0, 0, rng, nn.kill9))

		for _, d := range dirs {
			fillUp(t, d)
		}
		rollOnce(t, nn.addr)
		const bound = 5000
		for i, err := range round(t, nn.addr, ws, bound, 0, 0, rng, nn.kill9) {
			if err == nil {
				t.Fatalf("worker %d: %d ops acknowledged with every name dir full", i, bound)
			}
		}
		if code := nn.waitExit(); code == 0 {
			t.Errorf("NameNode exited 0 after its edit log failed; want a failure status")
		}
		for _, d := range dirs {
			if _, ok := logLine(nn.log(), "dropping failed journal", filepath.Join(d, "current")); !ok {
				t.Errorf("the NameNode log names no failed journal %s:\n%s", d, tail(nn.log(), 4000))
			}
		}

		// Space again: both dirs hold segments cut short by failed writes.
		for _, d := range dirs {
			if err := os.Remove(filepath.Join(d, "filler")); err != nil {
				t.Fatal(err)
			}
		}
		nn.start()
		verify(t, nn.addr, ws, afterCrash)
		requireAllAcked(t, "after the restart", round(t, nn.addr, ws, 20, 0, 0, rng, nn.kill9))
		if code := nn.stop(); code != 0 {
			t.Fatalf("NameNode exited %d after SIGTERM, want 0", code)
		}
	})
}
