package backup

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/scripttest"
)

// TestMachine runs testdata/machine.txt: every call of the journal stream
// and of a checkpoint, with the decision and the state after it.
//
//	new applied=N          a node whose namespace ends at N
//	journal first=F n=N    a batch
//	roll txid=T            startLogSegment
//	freeze                 FreezeAtNextRoll
//	applied txid=T         the driver applied up to T
//	reloaded txid=T        the driver loaded an image of T in place of the namespace
//	converge               the next step of converging
//	converged              the end of converging
func TestMachine(t *testing.T) {
	var m *Machine
	scripttest.Run(t, "testdata/machine.txt", func(t *testing.T, c *scripttest.Case) string {
		var out []string
		switch c.Cmd {
		case "new":
			m = New(c.Int(t, "applied"))
		case "journal":
			d, err := m.Journal(c.Int(t, "first"), c.Int(t, "n"))
			switch {
			case err != nil:
				out = append(out, "error: "+err.Error())
			case d.Apply:
				out = append(out, "log and apply")
			case d.Log:
				out = append(out, "log")
			default:
				out = append(out, "drop")
			}
		case "roll":
			r, err := m.StartLogSegment(c.Int(t, "txid"))
			if err != nil {
				out = append(out, "error: "+err.Error())
				break
			}
			var s []string
			if r.Finalize {
				s = append(s, fmt.Sprintf("finalize %d-%d", r.First, r.Last))
			}
			if r.Abandon {
				s = append(s, fmt.Sprintf("abandon %d", r.First))
			}
			s = append(s, fmt.Sprintf("start %d", r.Start))
			if r.Gap {
				s = append(s, "gap")
			}
			if r.Frozen {
				s = append(s, "frozen")
			}
			out = append(out, strings.Join(s, ", "))
		case "freeze":
			m.FreezeAtNextRoll()
			out = append(out, fmt.Sprintf("frozen=%v", m.Frozen()))
		case "applied":
			m.Applied(c.Int(t, "txid"))
		case "reloaded":
			if err := m.Reloaded(c.Int(t, "txid")); err != nil {
				out = append(out, "error: "+err.Error())
			}
		case "converge":
			s, err := m.Converge()
			switch {
			case err != nil:
				out = append(out, "error: "+err.Error())
			case s.Final:
				out = append(out, fmt.Sprintf("final step %d-%d", s.From, s.To))
			default:
				out = append(out, fmt.Sprintf("step %d-%d", s.From, s.To))
			}
		case "converged":
			if err := m.Converged(); err != nil {
				out = append(out, "error: "+err.Error())
			}
		default:
			t.Fatalf("line %d: unknown command %s", c.Line, c.Cmd)
		}
		for _, tr := range m.Transitions() {
			out = append(out, "transition "+tr.String())
		}
		out = append(out, fmt.Sprintf("state=%v applied=%d segment=%d written=%d", m.State(), m.AppliedTxID(), m.Segment(), m.WrittenTxID()))
		return strings.Join(out, "\n")
	})
}
