package ratelog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
)

func TestBurstThenSuppressedCount(t *testing.T) {
	var buf bytes.Buffer
	clk := clock.NewManual(time.Unix(0, 0))
	rl := New(slog.New(slog.NewTextHandler(&buf, nil)), clk, time.Minute, 2)
	for i := range 5 {
		rl.Warn("bad peer", "i", i)
	}
	if got := strings.Count(buf.String(), "bad peer"); got != 2 {
		t.Fatalf("%d records in the first window, want 2:\n%s", got, buf.String())
	}
	if rl.Suppressed() != 3 {
		t.Fatalf("suppressed %d, want 3", rl.Suppressed())
	}
	clk.Advance(time.Minute)
	buf.Reset()
	rl.Info("bad peer again")
	if out := buf.String(); !strings.Contains(out, "suppressed=3") || !strings.Contains(out, "level=INFO") {
		t.Fatalf("first record of the next window: %q", out)
	}
	if rl.Suppressed() != 0 {
		t.Fatalf("suppressed %d after a record went out", rl.Suppressed())
	}
}

func TestNilLoggerAndDefaults(t *testing.T) {
	rl := New(nil, nil, 0, 0)
	for range DefaultBurst + 1 {
		rl.Warn("x")
	}
	if rl.Suppressed() != 1 {
		t.Fatalf("suppressed %d, want 1", rl.Suppressed())
	}
}
