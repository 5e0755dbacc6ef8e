package imagetransfer

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestThrottleOff(t *testing.T) {
	if th := newThrottle(0, 64<<10); th != nil {
		t.Fatalf("newThrottle(0) = %+v, want nil (unthrottled)", th)
	}
	if err := (pacer{}).wait(context.Background(), 1<<30); err != nil {
		t.Fatal(err)
	}
}

// TestThrottleRate sends at full speed (no time passes but the pauses owed)
// and checks that the total time is the bytes over the rate, less the
// half-second burst the bucket starts with.
func TestThrottleRate(t *testing.T) {
	for _, c := range []struct {
		rate  int64
		chunk int
		total int64
	}{
		{1 << 20, 64 << 10, 10 << 20},
		{1000, 4096, 100000}, // rate below one chunk a second: the bucket holds a chunk
		{3 << 30, 64 << 10, 20 << 30},
	} {
		th := newThrottle(c.rate, c.chunk)
		now := t0
		var paused time.Duration
		var sent int64
		for sent < c.total {
			d := th.take(now, c.chunk)
			sent += int64(c.chunk)
			paused += d
			now = now.Add(d)
		}
		burst := math.Max(float64(c.rate)*0.5, float64(c.chunk))
		want := time.Duration((float64(sent) - burst) / float64(c.rate) * float64(time.Second))
		if diff := paused - want; diff < -time.Millisecond || diff > time.Millisecond {
			t.Errorf("rate %d, chunk %d: %d bytes paused %v, want %v", c.rate, c.chunk, sent, paused, want)
		}
	}
}

func TestThrottlePauses(t *testing.T) {
	th := newThrottle(1000, 100) // bucket of 500 bytes
	steps := []struct {
		after time.Duration // since the previous step
		n     int
		want  time.Duration
	}{
		{0, 500, 0},                      // the initial burst is free
		{0, 100, 100 * time.Millisecond}, // then 100 bytes cost 0.1 s
		{100 * time.Millisecond, 100, 100 * time.Millisecond},
		{time.Hour, 400, 0}, // an idle hour saves up only the bucket…
		{0, 300, 200 * time.Millisecond},
		{200 * time.Millisecond, 0, 0},
		{50 * time.Millisecond, 100, 50 * time.Millisecond},
	}
	now := t0
	for i, s := range steps {
		now = now.Add(s.after)
		if got := th.take(now, s.n); got != s.want {
			t.Fatalf("step %d: take(%d) = %v, want %v", i, s.n, got, s.want)
		}
	}
	// A clock that steps back gives no credit and takes none.
	if got := th.take(now.Add(-time.Minute), 0); got != 50*time.Millisecond {
		t.Fatalf("after a backwards step: %v", got)
	}
}

func TestPacerSleepsOnTheClock(t *testing.T) {
	clk := clock.NewManual(t0)
	p := pacer{t: newThrottle(1000, 100), clk: clk}
	if err := p.wait(context.Background(), 500); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.wait(context.Background(), 1000) }()
	waitFor(t, func() bool { return clk.Pending() == 1 })
	select {
	case err := <-done:
		t.Fatalf("wait returned %v before the clock moved", err)
	default:
	}
	clk.Advance(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- p.wait(ctx, 1000) }()
	waitFor(t, func() bool { return clk.Pending() == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("wait after cancel = %v", err)
	}
}

// waitFor polls cond for up to 5 s (for state that another goroutine sets
// without telling anyone).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 5000; i++ {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("condition not reached within 5 s")
}
