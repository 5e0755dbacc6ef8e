package quorum

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/scripttest"
)

// parseSeg reads "101-150" (finalized) or "101-150/ip" (in progress).
func parseSeg(t *testing.T, s string) SegmentState {
	t.Helper()
	var st SegmentState
	if rest, ok := strings.CutSuffix(s, "/ip"); ok {
		st.InProgress, s = true, rest
	}
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		t.Fatalf("bad segment %q", s)
	}
	var err1, err2 error
	st.Start, err1 = strconv.ParseInt(a, 10, 64)
	st.End, err2 = strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("bad segment %q", s)
	}
	return st
}

func u64(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("bad number %q", s)
	}
	return v
}

func errText(err error) string {
	var r *Refusal
	if errors.As(err, &r) {
		return fmt.Sprintf("refused %v: %s", r.Kind, r.Msg)
	}
	return "error: " + err.Error()
}

// TestTallyScript: one call to n nodes; each input line is an answer,
// "ok I" or "fail I TEXT"; after each the counts and whether the call is
// decided.
func TestTallyScript(t *testing.T) {
	scripttest.Run(t, filepath.Join("testdata", "tally.txt"), func(t *testing.T, c *scripttest.Case) string {
		switch c.Cmd {
		case "tally":
			n := int(c.Int(t, "n"))
			tl := NewTally(n)
			var out []string
			names := make([]string, n)
			for i := range names {
				names[i] = fmt.Sprintf("jn%d", i)
			}
			for _, l := range c.Input {
				f := strings.Fields(l)
				i, _ := strconv.Atoi(f[1])
				if f[0] == "ok" {
					tl.Success(i)
				} else {
					tl.Failure(i, errors.New(strings.Join(f[2:], " ")))
				}
				out = append(out, fmt.Sprintf("%s -> ok=%d fail=%d reached=%v hopeless=%v done=%v", l, tl.Successes(), tl.Failures(), tl.Reached(), tl.Hopeless(), tl.Done()))
			}
			if err := tl.Err("sendEdits", names); err != nil {
				out = append(out, "err: "+err.Error())
			} else {
				out = append(out, "quorum")
			}
			return strings.Join(out, "\n")
		case "majority":
			var out []string
			for _, f := range strings.Split(c.Str(t, "n"), ",") {
				n, _ := strconv.Atoi(f)
				out = append(out, fmt.Sprintf("%d: %d (%s)", n, Majority(n), MajorityString(n)))
			}
			return strings.Join(out, "\n")
		case "nextepoch":
			var ps []uint64
			for _, f := range strings.Split(c.Str(t, "promised"), ",") {
				ps = append(ps, u64(t, f))
			}
			return fmt.Sprint(NextEpoch(ps))
		case "durable":
			var counts []int
			if s := c.Str(t, "counts"); s != "" {
				for _, f := range strings.Split(s, ",") {
					n, _ := strconv.Atoi(f)
					counts = append(counts, n)
				}
			}
			return fmt.Sprint(DurableCount(counts, int(c.Int(t, "n"))))
		}
		t.Fatalf("unknown command %s", c.Cmd)
		return ""
	})
}

// TestPromiseScript drives one JournalNode's Promise:
//
//	reset [promised=E] [writer=E] [committed=T]
//	newepoch e=E
//	req e=E s=SERIAL [c=TXID]      any writer call but newEpoch
//	start e=E                      startLogSegment after its req
//	write e=E                      the writer check of journal()
//
// Each prints the outcome and the state after it.
func TestPromiseScript(t *testing.T) {
	var p Promise
	state := func() string {
		return fmt.Sprintf("promised=%d writer=%d serial=%d committed=%d", p.Promised, p.Writer, p.Serial, p.Committed)
	}
	scripttest.Run(t, filepath.Join("testdata", "promise.txt"), func(t *testing.T, c *scripttest.Case) string {
		const jid = "ns1"
		switch c.Cmd {
		case "reset":
			p = Promise{Promised: uint64(c.IntOr(t, "promised", 0)), Writer: uint64(c.IntOr(t, "writer", 0)),
				Serial: -1, Committed: c.IntOr(t, "committed", 0)}
			return state()
		case "newepoch":
			np, err := p.NewEpoch(uint64(c.Int(t, "e")), jid)
			if err != nil {
				return errText(err) + "\n" + state()
			}
			p = np
			return "ok\n" + state()
		case "req":
			r := Request{Epoch: uint64(c.Int(t, "e")), Serial: uint64(c.Int(t, "s"))}
			if c.Has("c") {
				r.Committed, r.HasCommitted = c.Int(t, "c"), true
			}
			np, ch, err := p.Check(r, "127.0.0.1", jid)
			if err != nil {
				return errText(err) + fmt.Sprintf(" (persist promised=%v committed=%v)\n", ch.Promised, ch.Committed) + state()
			}
			p = np
			return fmt.Sprintf("ok persist promised=%v committed=%v\n", ch.Promised, ch.Committed) + state()
		case "start":
			np, changed := p.StartSegment(uint64(c.Int(t, "e")))
			p = np
			return fmt.Sprintf("writer changed=%v\n", changed) + state()
		case "write":
			if err := p.CheckWriter(uint64(c.Int(t, "e")), jid); err != nil {
				return errText(err)
			}
			return "ok"
		}
		t.Fatalf("unknown command %s", c.Cmd)
		return ""
	})
}

// parseResponse reads one prepareRecovery answer:
// "seg=101-150/ip writer=3 [accepted=4] [committed=140]" or "none writer=3".
func parseResponse(t *testing.T, l string) PrepareResponse {
	var r PrepareResponse
	for _, f := range strings.Fields(l) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "seg":
			s := parseSeg(t, v)
			r.Segment = &s
		case "none":
		case "writer":
			r.LastWriterEpoch = u64(t, v)
		case "accepted":
			r.AcceptedInEpoch, r.HasAccepted = u64(t, v), true
		case "committed":
			r.LastCommittedTxID, r.HasCommitted = int64(u64(t, v)), true
		default:
			t.Fatalf("bad response field %q", f)
		}
	}
	return r
}

// TestRecoveryScript: the choice among a quorum's answers to
// prepareRecovery (one input line per JournalNode), what a JournalNode
// answers, and what it does with acceptRecovery.
//
//	choose                  input: answers; prints the chosen node and copy
//	prepare [prev=SEG@E] [disk=SEG] writer=E [committed=T]
//	accept prop=SEG epoch=E [cur=SEG] [prev=SEG@E] [committed=T]
func TestRecoveryScript(t *testing.T) {
	scripttest.Run(t, filepath.Join("testdata", "recovery.txt"), func(t *testing.T, c *scripttest.Case) string {
		prev := func() *Accepted {
			if !c.Has("prev") {
				return nil
			}
			s, e, _ := strings.Cut(c.Str(t, "prev"), "@")
			return &Accepted{Segment: parseSeg(t, s), Epoch: u64(t, e)}
		}
		switch c.Cmd {
		case "choose":
			var rs []PrepareResponse
			for _, l := range c.Input {
				rs = append(rs, parseResponse(t, l))
			}
			best, err := ChooseRecovery(rs)
			switch {
			case err != nil:
				return errText(err)
			case best < 0:
				return "nothing to recover"
			}
			return fmt.Sprintf("node %d: recover to %v", best, *rs[best].Segment)
		case "prepare":
			var disk *SegmentState
			if c.Has("disk") {
				s := parseSeg(t, c.Str(t, "disk"))
				disk = &s
			}
			return PrepareAnswer(prev(), disk, uint64(c.Int(t, "writer")), c.IntOr(t, "committed", 0)).String()
		case "accept":
			var cur *SegmentState
			if c.Has("cur") {
				s := parseSeg(t, c.Str(t, "cur"))
				cur = &s
			}
			sync, err := PlanAccept(cur, parseSeg(t, c.Str(t, "prop")), prev(), c.IntOr(t, "committed", 0), uint64(c.Int(t, "epoch")), "ns1")
			if err != nil {
				return errText(err)
			}
			if sync {
				return "fetch the proposed copy, then persist the decision"
			}
			return "keep the copy on disk, persist the decision"
		}
		t.Fatalf("unknown command %s", c.Cmd)
		return ""
	})
}

// TestUnionScript: what a reader sees of the JournalNodes' manifests (one
// input line per node, its segments separated by spaces, "-" for none).
func TestUnionScript(t *testing.T) {
	scripttest.Run(t, filepath.Join("testdata", "union.txt"), func(t *testing.T, c *scripttest.Case) string {
		var ms [][]SegmentState
		for _, l := range c.Input {
			var m []SegmentState
			for _, f := range strings.Fields(l) {
				if f != "-" {
					m = append(m, parseSeg(t, f))
				}
			}
			ms = append(ms, m)
		}
		var out []string
		for _, m := range Union(ms) {
			out = append(out, fmt.Sprintf("%v on %v", m.Segment, m.Holders))
		}
		if len(out) == 0 {
			return "(nothing)"
		}
		return strings.Join(out, "\n")
	})
}
