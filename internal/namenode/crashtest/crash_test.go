package crashtest

import (
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
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
// kill9Rounds rounds. Each round kills once a random number of ops (1..400)
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
// completed by the same lease holder after the restart). Over all rounds,
// some unanswered ops must have happened and some not: evidence that kills
// fell both after an op reached the log and before.
//
// kill -9 loses no page cache, so what this checks is that the NameNode
// writes an op to its edits files before it answers, and replays what it
// wrote; lost fsyncs are the editlog package's crash tests' job.
func TestKill9(t *testing.T) {
	needBinary(t)
	const (
		kill9Rounds = 24
		workers     = 8
	)
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	nn := newNameNode(t, []string{filepath.Join(root, "name1"), filepath.Join(root, "name2")}, nil)
	nn.start()
	ws := newWorkers(workers, seed)
	setupWorkers(t, nn.addr, ws)

	var applied, dropped int
	for r := 1; r <= kill9Rounds; r++ {
		acked0, applied0, dropped0 := 0, 0, 0
		for _, w := range ws {
			acked0 += w.acked
			applied0 += w.appliedUnanswered
			dropped0 += w.droppedUnanswered
		}
		killAfter := 1 + rng.Int63n(400)
		errs := round(t, nn.addr, ws, 0, killAfter, 3*time.Millisecond, rng, nn.kill9)
		for i, err := range errs {
			var re errRefused
			switch {
			case errors.As(err, &re):
				t.Fatalf("round %d: worker %d: the NameNode refused an op the model says is valid: %v", r, i, err)
			case err == nil:
				t.Fatalf("round %d: worker %d stopped without a failed call", r, i)
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
	if applied == 0 || dropped == 0 {
		t.Errorf("over %d kills, %d unanswered ops happened and %d did not; want both kinds, or the kills missed the commit path",
			kill9Rounds, applied, dropped)
	}

	// A clean stop keeps everything too.
	round(t, nn.addr, ws, 20, 0, 0, rng, nn.kill9)
	if code := nn.stop(); code != 0 {
		t.Fatalf("NameNode exited %d after SIGTERM", code)
	}
	nn.start()
	verify(t, nn.addr, ws, func(w *worker) (int, int) { return len(w.ops), len(w.ops) })
	if code := nn.stop(); code != 0 {
		t.Fatalf("NameNode exited %d after SIGTERM", code)
	}
}
