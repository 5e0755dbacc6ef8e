package health_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/scripttest"
	"github.com/hdfsgo/hdfsgo/internal/zkfc/health"
)

// TestMonitorScript runs testdata/monitor.txt: checks in, state changes
// and waits out.
func TestMonitorScript(t *testing.T) {
	var m *health.Monitor
	scripttest.Run(t, "testdata/monitor.txt", func(t *testing.T, c *scripttest.Case) string {
		switch c.Cmd {
		case "new":
			m = health.New(health.Config{
				CheckInterval:        time.Duration(c.IntOr(t, "check-interval", 1000)) * time.Millisecond,
				SleepAfterDisconnect: time.Duration(c.IntOr(t, "sleep-after-disconnect", 1000)) * time.Millisecond,
			})
			return "state " + m.State().String()
		case "check":
			var o health.Outcome
			switch c.Str(t, "outcome") {
			case "healthy":
				o = health.Healthy
			case "unhealthy":
				o = health.Unhealthy
			case "no-answer":
				o = health.NoAnswer
			default:
				t.Fatalf("line %d: unknown outcome", c.Line)
			}
			return show(m.Checked(o))
		case "fail":
			return show(m.Failed())
		}
		t.Fatalf("line %d: unknown command %s", c.Line, c.Cmd)
		return ""
	})
}

func show(s health.Step) string {
	var parts []string
	if s.Changed {
		parts = append(parts, "entered "+s.Entered.String())
	}
	if s.Reconnect {
		parts = append(parts, "reconnect")
	}
	if s.Stop {
		parts = append(parts, "stop")
	} else {
		parts = append(parts, fmt.Sprintf("next check in %v", s.Wait))
	}
	return strings.Join(parts, "; ")
}
