package recovery

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"

	"github.com/hdfsgo/hdfsgo/internal/scripttest"
)

// TestDecideScript runs the primary's length decision over the cases in
// testdata/decide.txt.
//
//	decide [id=N] gs=G rid=R [truncate=N] [newid=N]
//	NODE STATE LENGTH GS     a replica (STATE: FINALIZED RBW RWR RUR TEMPORARY)
//	NODE none                no replica there
//	NODE failed              initReplicaRecovery failed
//	NODE inprogress          a newer recovery runs there
//
// The output is the plan and the commit made when every participant's update
// succeeds, or the error.
func TestDecideScript(t *testing.T) {
	runScript(t, "decide.txt", func(t *testing.T, c *scripttest.Case) string {
		switch c.Cmd {
		case "decide":
			return runDecide(t, c)
		case "init":
			cur := current(t, c)
			return result(CheckInit(cur, c.Int(t, "block"), c.Int(t, "rid")))
		case "update":
			cur := current(t, c)
			return result(CheckUpdate(cur, c.Int(t, "rid"), c.Int(t, "newgs"), c.Int(t, "newlen"), c.BoolOr(t, "cot", false)))
		}
		t.Fatalf("line %d: unknown command %q", c.Line, c.Cmd)
		return ""
	})
}

func runDecide(t *testing.T, c *scripttest.Case) string {
	b := Block{ID: c.IntOr(t, "id", 1073741825), GenStamp: c.Int(t, "gs"), RecoveryID: c.Int(t, "rid")}
	if c.Has("truncate") {
		b.Truncate, b.NewLength = true, c.Int(t, "truncate")
		b.NewBlockID = c.IntOr(t, "newid", 0)
	}
	var answers []Answer
	for _, l := range c.Input {
		f := strings.Fields(l)
		node, err := strconv.Atoi(f[0])
		if err != nil {
			t.Fatalf("line %d: %q: %v", c.Line, l, err)
		}
		a := Answer{ReplicaInfo: ReplicaInfo{Node: node}}
		switch {
		case len(f) == 2 && f[1] == "none":
			a.Outcome = NoReplica
		case len(f) == 2 && f[1] == "failed":
			a.Outcome = CallFailed
		case len(f) == 2 && f[1] == "inprogress":
			a.Outcome = InProgress
		case len(f) == 4:
			a.State = parseState(t, c, f[1])
			a.Length, _ = strconv.ParseInt(f[2], 10, 64)
			a.GenStamp, _ = strconv.ParseInt(f[3], 10, 64)
		default:
			t.Fatalf("line %d: bad answer %q", c.Line, l)
		}
		answers = append(answers, a)
	}
	p, err := Decide(b, answers)
	if err != nil {
		return "error: " + err.Error()
	}
	s := p.Action.String()
	if p.Action == PlanAbort {
		return s
	}
	if p.Action == PlanUpdate {
		s += fmt.Sprintf(" blk=%d gs=%d len=%d best=%v participants=%v", p.BlockID, p.NewGenStamp, p.NewLength, p.BestState, p.Participants)
	}
	cm, err := p.Commit(p.Participants)
	if err != nil {
		return s + "\ncommit error: " + err.Error()
	}
	return s + fmt.Sprintf("\ncommit blk_%d_%d newgs=%d len=%d close=%v delete=%v nodes=%v",
		cm.BlockID, cm.GenStamp, cm.NewGenStamp, cm.NewLength, cm.CloseFile, cm.DeleteBlock, cm.Nodes)
}

func parseState(t *testing.T, c *scripttest.Case, s string) storage.ReplicaState {
	t.Helper()
	for st := storage.Finalized; st <= storage.Temporary; st++ {
		if st.String() == s {
			return st
		}
	}
	t.Fatalf("line %d: bad replica state %q", c.Line, s)
	return 0
}

func current(t *testing.T, c *scripttest.Case) Current {
	return Current{
		State:      parseState(t, c, c.Str(t, "state")),
		Length:     c.Int(t, "len"),
		GenStamp:   c.Int(t, "gs"),
		RecoveryID: c.IntOr(t, "under", 0),
	}
}

func result(err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return "ok"
}

func TestCommit(t *testing.T) {
	p := Plan{Action: PlanUpdate, Block: Block{ID: 7, GenStamp: 100}, BlockID: 7, NewGenStamp: 105, NewLength: 10, Participants: []int{0, 1}}
	if _, err := p.Commit(nil); !errors.Is(err, ErrAllUpdatesFailed) {
		t.Fatalf("no update succeeded: %v", err)
	}
	c, err := p.Commit([]int{1})
	if err != nil || c.BlockID != 7 || c.GenStamp != 100 || c.NewGenStamp != 105 || c.NewLength != 10 || !c.CloseFile || c.DeleteBlock || fmt.Sprint(c.Nodes) != "[1]" {
		t.Fatalf("commit %+v, %v", c, err)
	}
	if _, err := (Plan{Action: PlanAbort}).Commit(nil); err == nil {
		t.Fatal("an aborted plan committed")
	}
}

// TestDecideProperties checks over many generated answer sets that the plan
// never asks a participant to grow (except truncate, where none is shorter),
// keeps only usable replicas of the best state (or RBW matching a finalized
// length), and uses the recovery id.
func TestDecideProperties(t *testing.T) {
	seed := uint64(99)
	next := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int((seed >> 33) % uint64(n))
	}
	for range 20000 {
		b := Block{ID: 5, GenStamp: 100, RecoveryID: 110}
		var answers []Answer
		for node := range 1 + next(5) {
			a := Answer{Outcome: Outcome(next(6) % 4), ReplicaInfo: ReplicaInfo{Node: node}}
			if next(3) > 0 {
				a.Outcome = Replied
			}
			a.State = storage.ReplicaState(next(5))
			a.Length = int64(next(4) * 100)
			a.GenStamp = int64(98 + next(14))
			answers = append(answers, a)
		}
		if next(4) == 0 {
			b.Truncate, b.NewLength = true, int64(next(3)*100)
		}
		p, err := Decide(b, answers)
		if err != nil || p.Action != PlanUpdate {
			continue
		}
		if p.NewGenStamp != b.RecoveryID {
			t.Fatalf("new stamp %d", p.NewGenStamp)
		}
		for _, n := range p.Participants {
			a := answers[n]
			if a.Outcome != Replied || a.GenStamp < b.GenStamp || a.GenStamp >= b.RecoveryID || a.Length <= 0 {
				t.Fatalf("participant %d not a candidate: %+v (answers %+v)", n, a, answers)
			}
			if a.Length < p.NewLength {
				t.Fatalf("participant %d asked to grow from %d to %d (answers %+v, block %+v)", n, a.Length, p.NewLength, answers, b)
			}
			if a.State != p.BestState && !(p.BestState == storage.Finalized && a.State == storage.RBW) {
				t.Fatalf("participant %d in state %v, best %v", n, a.State, p.BestState)
			}
		}
		if len(p.Participants) == 0 {
			t.Fatalf("update without participants: %+v", answers)
		}
	}
}
