package lease

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/scripttest"
)

// TestRecoveryTrackerScript drives a RecoveryTracker (t= seconds; the timeout
// is the default 90 s unless timeout= is given).
//
//	start b=B gs=G p=P t=T    Start
//	pending b=B t=T           Pending
//	lookup b=B                Lookup
//	done b=B                  Done
//	due t=T                   Due
func TestRecoveryTrackerScript(t *testing.T) {
	tr := NewRecoveryTracker()
	runScript(t, "tracker.txt", func(t *testing.T, c *scripttest.Case) string {
		timeout := DefaultRecoveryTimeout
		if c.Has("timeout") {
			timeout = time.Duration(c.Int(t, "timeout")) * time.Second
		}
		b := func() int64 { return c.Int(t, "b") }
		switch c.Cmd {
		case "start":
			tr.Start(b(), c.Int(t, "gs"), int(c.Int(t, "p")), at(t, c))
			return fmt.Sprintf("len=%d", tr.Len())
		case "pending":
			return fmt.Sprintf("pending=%v", tr.Pending(b(), at(t, c), timeout))
		case "lookup":
			a, ok := tr.Lookup(b())
			if !ok {
				return "none"
			}
			return formatAttempt(a)
		case "done":
			return fmt.Sprintf("done=%v len=%d", tr.Done(b()), tr.Len())
		case "due":
			var parts []string
			for _, a := range tr.Due(at(t, c), timeout) {
				parts = append(parts, formatAttempt(a))
			}
			return fmt.Sprintf("due=[%s] len=%d", strings.Join(parts, "; "), tr.Len())
		}
		t.Fatalf("line %d: unknown command %q", c.Line, c.Cmd)
		return ""
	})
}

func formatAttempt(a Attempt) string {
	return fmt.Sprintf("blk=%d recovery=%d primary=%d started=%s", a.BlockID, a.RecoveryID, a.Primary, secs(a.Started))
}

func TestRecoveryTimeout(t *testing.T) {
	if DefaultRecoveryTimeout != RecoveryTimeout(3*time.Second) {
		t.Fatalf("DefaultRecoveryTimeout = %v", DefaultRecoveryTimeout)
	}
	if got := RecoveryTimeout(3 * time.Second); got != 90*time.Second {
		t.Fatalf("RecoveryTimeout(3s) = %v, want 90s", got)
	}
	if got := RecoveryTimeout(time.Second); got != 30*time.Second {
		t.Fatalf("RecoveryTimeout(1s) = %v, want 30s", got)
	}
}
