package crashtest

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// testSeed is CRASHTEST_SEED when set, else a fresh seed; the test logs it.
func testSeed(t *testing.T) int64 {
	t.Helper()
	seed := time.Now().UnixNano()
	if s := os.Getenv("CRASHTEST_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("CRASHTEST_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (CRASHTEST_SEED=%d repeats the op and kill choices; timing still varies)", seed, seed)
	return seed
}

// TestKill9 kills the NameNode process with SIGKILL while eight workers drive
// concurrent creates (create then complete), mkdirs, renames and deletes,
// restarts it on the same two name dirs, and checks the namespace, for
// kill9Rounds rounds. Each round kills once a random number of ops (1..1000)
// has been acknowledged, after a random pause of up to 3 ms, so the kill
// lands while most workers wait on a group commit.
//
// Invariants checked after every restart (see the package doc for the model):
//
//   - the root holds exactly the workers' directories;
//   - every op that was acknowledged is in effect, unless a later op of the
//     same worker, itself in effect, undid it (a renamed entry exists at its
//     destination and not at its source, a deleted one is gone);
//   - each worker's one unanswered op happened entirely or not at all: an
//     unanswered create leaves its file absent or under construction, an
//     unanswered complete leaves it under construction or closed, an
//     unanswered rename leaves the entry at exactly one of its two names;
//   - nothing else exists: every name is explained by an op that was sent,
//     and directories are empty.
//
// The unanswered op is then taken as happened or not, as observed, and the
// next round goes on from there (a create left under construction is
// completed by the same lease holder after the restart). In a third of the
// rounds the restarted NameNode is killed again within its first 30 ms,
// mostly while it loads and recovers the log, before the restart that is
// checked. In every other round a further client rolls the edit log every
// few milliseconds (rollEdits), so that kills also land around segment
// finalization and start. Over all rounds,
// some unanswered ops must have happened and some not: evidence that kills
// fell both after an op reached the log and before.
//
// kill -9 loses no page cache, so what this checks is that the NameNode
// writes an op to its edits files before it answers, and replays what it
// wrote; lost fsyncs are the editlog package's crash tests' job.
//
// TestKill9 runs with asynchronous edit logging
// (dfs.namenode.edits.asynclogging true, the default: handlers do not wait
// for the fsync, the RPC server holds each reply until the syncer made its
// ops durable); TestKill9SyncLogging runs fewer rounds with it off.
func TestKill9(t *testing.T) { kill9(t, true, 30) }

// TestKill9SyncLogging is TestKill9 with handlers waiting for their fsync.
func TestKill9SyncLogging(t *testing.T) { kill9(t, false, 10) }

func kill9(t *testing.T, async bool, kill9Rounds int) {
	needBinary(t)
	const workers = 8
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	nn := newNameNode(t, []string{filepath.Join(root, "name1"), filepath.Join(root, "name2")},
		map[string]string{conf.DFSNameNodeEditsAsyncLogging: strconv.FormatBool(async)})
	nn.start()
	ws := newWorkers(workers, seed)
	setupWorkers(t, nn.addr, ws)

	var applied, dropped, startCrashes, rolls int
	for r := 1; r <= kill9Rounds; r++ {
		acked0, applied0, dropped0 := 0, 0, 0
		for _, w := range ws {
			acked0 += w.acked
			applied0 += w.appliedUnanswered
			dropped0 += w.droppedUnanswered
		}
		killAfter := 1 + rng.Int63n(1000)
		var stopRoller func() int
		if r%2 == 0 {
			stopRoller = startRoller(t, nn.addr, time.Duration(1+rng.Intn(5))*time.Millisecond)
		}
		errs := round(t, nn.addr, ws, 0, killAfter, 3*time.Millisecond, rng, nn.kill9)
		if stopRoller != nil {
			rolls += stopRoller()
		}
		for i, err := range errs {
			var re errRefused
			switch {
			case errors.As(err, &re):
				t.Fatalf("round %d: worker %d: the NameNode refused an op the model says is valid: %v", r, i, err)
			case err == nil:
				t.Fatalf("round %d: worker %d stopped without a failed call", r, i)
			}
		}
		if rng.Intn(3) == 0 {
			// Crash the start-up too: somewhere in loading, replaying,
			// recovering the in-progress segment or opening the next one.
			p := nn.launch(freeAddr(t))
			time.Sleep(time.Duration(rng.Int63n(int64(30 * time.Millisecond))))
			nn.kill9()
			if !strings.Contains(p.out.String(), "NameNode started") {
				startCrashes++
			}
		}
		nn.start()
		verify(t, nn.addr, ws, afterCrash)
		acked1, applied1, dropped1 := 0, 0, 0
		for _, w := range ws {
			acked1 += w.acked
			applied1 += w.appliedUnanswered
			dropped1 += w.droppedUnanswered
		}
		t.Logf("round %d: killed after %d acks (%d acked in the round); unanswered ops: %d happened, %d did not",
			r, killAfter, acked1-acked0, applied1-applied0, dropped1-dropped0)
		applied, dropped = applied1, dropped1
	}
	t.Logf("%d kills, %d of them followed by a kill before the restarted NameNode served; %d edit log rolls", kill9Rounds, startCrashes, rolls)
	if applied == 0 || dropped == 0 {
		t.Errorf("over %d kills, %d unanswered ops happened and %d did not; want both kinds, or the kills missed the commit path",
			kill9Rounds, applied, dropped)
	}

	// A clean stop keeps everything too.
	requireAllAcked(t, "before the clean stop", round(t, nn.addr, ws, 20, 0, 0, rng, nn.kill9))
	if code := nn.stop(); code != 0 {
		t.Fatalf("NameNode exited %d after SIGTERM", code)
	}
	nn.start()
	verify(t, nn.addr, ws, func(w *worker) (int, int) { return len(w.ops), len(w.ops) })
	if code := nn.stop(); code != 0 {
		t.Fatalf("NameNode exited %d after SIGTERM", code)
	}
}

// TestKill9Checkpoint kills the NameNode while it saves its namespace
// (saveNamespace in safe mode: roll the edit log, write fsimage_<txid> and
// its MD5 in both name dirs, update seen_txid, purge old images and edits),
// at a random moment within one and a half times what a save takes, between
// rounds of acknowledged ops. Every restart must load an image (the new one or an
// older one plus the edits after it) and hold every acknowledged op, with
// nothing else.
func TestKill9Checkpoint(t *testing.T) {
	needBinary(t)
	const rounds = 24
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	nn := newNameNode(t, []string{filepath.Join(root, "name1"), filepath.Join(root, "name2")}, nil)
	nn.start()
	ws := newWorkers(4, seed)
	setupWorkers(t, nn.addr, ws)
	exact := func(w *worker) (int, int) { return len(w.ops), len(w.ops) }
	saved, interrupted := 0, 0
	// The kill moments spread over one and a half times what an
	// uninterrupted saveNamespace takes (measured in round 0).
	var span time.Duration
	for r := 0; r <= rounds; r++ {
		requireAllAcked(t, "round "+strconv.Itoa(r), round(t, nn.addr, ws, 25, 0, 0, rng, nn.kill9))
		admin := newAdminClient(t, nn.addr)
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		var sm hdfs.SetSafeModeResponseProto
		err := admin.Call(ctx, "setSafeMode", &hdfs.SetSafeModeRequestProto{Action: hdfs.SafeModeActionProto_SAFEMODE_ENTER.Enum()}, &sm)
		cancel()
		if err != nil || !sm.GetResult() {
			admin.Close()
			t.Fatalf("setSafeMode ENTER: %v (in safe mode: %v)", err, sm.GetResult())
		}
		result := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			var resp hdfs.SaveNamespaceResponseProto
			result <- admin.Call(ctx, "saveNamespace", &hdfs.SaveNamespaceRequestProto{}, &resp)
		}()
		if r == 0 {
			began := time.Now()
			err := <-result
			span = time.Since(began) * 3 / 2
			if err != nil {
				admin.Close()
				t.Fatalf("saveNamespace: %v", err)
			}
			t.Logf("saveNamespace took %v; kills spread over %v", span*2/3, span)
		} else {
			time.Sleep(time.Duration(rng.Int63n(int64(span) + 1)))
		}
		nn.kill9()
		if r > 0 {
			if err := <-result; err == nil {
				saved++
			} else {
				interrupted++
			}
		}
		admin.Close()
		nn.start()
		verify(t, nn.addr, ws, exact)
	}
	t.Logf("%d checkpoints answered before the kill, %d interrupted", saved, interrupted)
	if code := nn.stop(); code != 0 {
		t.Fatalf("NameNode exited %d after SIGTERM", code)
	}
}
