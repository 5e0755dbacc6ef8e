package lease

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/scripttest"
)

// TestDecideReleaseScript covers every row of the release table (package doc).
//
//	decide [blocks=N] [earlier=bool] [pen=STATE] [penmin=bool] last=STATE
//	       [fin=N] [min=N] [bytes=N] [holders=h,h,...|-] [prev=N] [pending=bool]
//
// STATE is NONE, COMPLETE, COMMITTED, UNDER_CONSTRUCTION or UNDER_RECOVERY; a
// holder is live, stale or dead.
func TestDecideReleaseScript(t *testing.T) {
	runScript(t, "release.txt", func(t *testing.T, c *scripttest.Case) string {
		if c.Cmd != "decide" {
			t.Fatalf("line %d: unknown command %q", c.Line, c.Cmd)
		}
		f := FileState{
			NumBlocks:                int(c.IntOr(t, "blocks", 1)),
			EarlierIncomplete:        c.BoolOr(t, "earlier", false),
			Penultimate:              parseState(t, c, "pen"),
			PenultimateMinReplicated: c.BoolOr(t, "penmin", false),
			Last:                     parseState(t, c, "last"),
			LastFinalized:            int(c.IntOr(t, "fin", 0)),
			MinReplication:           int(c.IntOr(t, "min", 1)),
			LastNumBytes:             c.IntOr(t, "bytes", 0),
			PrevPrimary:              int(c.IntOr(t, "prev", -1)),
			RecoveryPending:          c.BoolOr(t, "pending", false),
		}
		if h := c.Args["holders"]; h != "" && h != "-" {
			for _, s := range strings.Split(h, ",") {
				switch s {
				case "live":
					f.Holders = append(f.Holders, Holder{})
				case "stale":
					f.Holders = append(f.Holders, Holder{Stale: true})
				case "dead":
					f.Holders = append(f.Holders, Holder{Dead: true})
				default:
					t.Fatalf("line %d: bad holder %q", c.Line, s)
				}
			}
		}
		return formatDecision(DecideRelease(f))
	})
}

func parseState(t *testing.T, c *scripttest.Case, k string) BlockState {
	t.Helper()
	v, ok := c.Args[k]
	if !ok {
		return NoBlock
	}
	for s := NoBlock; s <= UnderRecovery; s++ {
		if s.String() == v {
			return s
		}
	}
	t.Fatalf("line %d: bad block state %q", c.Line, v)
	return NoBlock
}

func formatDecision(d Decision) string {
	s := d.Kind.String()
	if d.Kind == StartBlockRecovery {
		s += fmt.Sprintf(" newgs=%v primary=%d participants=%v", d.NewGenStampNeeded, d.Primary, d.Participants)
	} else if d.Primary != -1 || d.NewGenStampNeeded || d.Participants != nil {
		s += fmt.Sprintf(" UNEXPECTED primary=%d newgs=%v participants=%v", d.Primary, d.NewGenStampNeeded, d.Participants)
	}
	if d.Reason != "" {
		s += ": " + d.Reason
	}
	return s
}

// TestPrimaryRotation: successive retries, each fed the previous primary, give
// every live holder a turn, non-stale ones first.
func TestPrimaryRotation(t *testing.T) {
	cases := []struct {
		holders []Holder
		want    []int // primaries of successive attempts, starting with prev=-1
	}{
		{[]Holder{{}, {}, {}}, []int{0, 1, 2, 0}},
		{[]Holder{{}, {Dead: true}, {}}, []int{0, 2, 0}},
		{[]Holder{{Stale: true}, {}, {}}, []int{1, 2, 1}},
		{[]Holder{{Stale: true}, {Stale: true}}, []int{0, 1, 0}},
		{[]Holder{{Stale: true}, {Dead: true}, {Stale: true}}, []int{0, 2, 0}},
		{[]Holder{{}}, []int{0, 0}},
	}
	for _, c := range cases {
		prev := -1
		var got []int
		for range c.want {
			d := DecideRelease(FileState{NumBlocks: 1, Last: UnderRecovery, MinReplication: 1, Holders: c.holders, PrevPrimary: prev})
			if d.Kind != StartBlockRecovery {
				t.Fatalf("%+v: %v", c.holders, d)
			}
			got = append(got, d.Primary)
			prev = d.Primary
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("holders %+v: primaries %v, want %v", c.holders, got, c.want)
		}
	}
}
