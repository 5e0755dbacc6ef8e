package throttle

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
)

var t0 = time.Unix(1_700_000_000, 0)

// The core, step by step: a period's allowance goes through at once, the
// next caller waits for the period's end, a debt of several periods is
// paid period by period, an idle throttler banks one period at most.
func TestBudget(t *testing.T) {
	const p = 500 * time.Millisecond
	b := budget{period: p, allowance: 1000, start: t0, reserve: 1000}
	steps := []struct {
		at      time.Duration // since t0
		take    int64         // 0: the caller before wakes up
		wait    time.Duration
		reserve int64 // after
	}{
		{0, 400, 0, 600},
		{100 * time.Millisecond, 600, 400 * time.Millisecond, 0}, // reserve 0: wait for the period's end
		{500 * time.Millisecond, 0, 0, 1000},                     // the same caller at the end
		{600 * time.Millisecond, 2500, 400 * time.Millisecond, -1500},
		{1000 * time.Millisecond, 0, 500 * time.Millisecond, -500}, // one period paid, one to go
		{1500 * time.Millisecond, 0, 0, 500},
		// Woken late, after four periods: credited for all of them, but
		// never beyond one period's allowance.
		{1600 * time.Millisecond, 3000, 400 * time.Millisecond, -2500},
		{3500 * time.Millisecond, 0, 0, 1000},
		// Idle for an hour: one period's allowance, not an hour's.
		{time.Hour, 1500, 500 * time.Millisecond, -500},
		{time.Hour + 500*time.Millisecond, 0, 0, 500},
	}
	for i, s := range steps {
		now := t0.Add(s.at)
		if s.take > 0 {
			b.take(now, s.take)
		}
		got := b.settle(now)
		if got != s.wait || b.reserve != s.reserve {
			t.Fatalf("step %d: wait %v reserve %d, want %v and %d", i, got, b.reserve, s.wait, s.reserve)
		}
	}
}

// waitPending waits until n timers are armed on the manual clock: the
// throttled goroutines are blocked. A hang guard, not a timed assertion.
func waitPending(t *testing.T, clk *clock.Manual, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for clk.Pending() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d timers armed, want %d", clk.Pending(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// With a manual clock, a caller asking for more than a period allows is
// released exactly when the clock has moved far enough.
func TestThrottlerManualClock(t *testing.T) {
	clk := clock.NewManual(t0)
	th := New(clk, 1<<20) // 512 KiB per 500 ms period
	ctx := context.Background()
	if err := th.Take(ctx, 256<<10); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- th.Take(ctx, 1<<20) }() // reserve goes to -768 KiB
	waitPending(t, clk, 1)
	select {
	case err := <-done:
		t.Fatalf("returned before the clock moved: %v", err)
	default:
	}
	clk.Advance(500 * time.Millisecond) // +512 KiB: still owed 256 KiB
	waitPending(t, clk, 1)
	select {
	case err := <-done:
		t.Fatalf("returned with the allowance still overdrawn: %v", err)
	default:
	}
	clk.Advance(500 * time.Millisecond) // +512 KiB: reserve positive
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := th.Bandwidth(); got != 1<<20 {
		t.Fatalf("Bandwidth %d, want %d", got, 1<<20)
	}
}

// Several callers share one limit: what they move together in a span of
// manual time stays within the rate (plus one period's allowance of head
// start).
func TestThrottlerShared(t *testing.T) {
	clk := clock.NewManual(t0)
	const rate = 1 << 20
	th := New(clk, rate)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	moved := make(chan int64, 1000)
	for range 4 {
		go func() {
			for ctx.Err() == nil {
				if th.Take(ctx, 64<<10) != nil {
					return
				}
				moved <- 64 << 10
			}
		}()
	}
	var total int64
	for step := 0; step < 20; step++ {
		waitPending(t, clk, 4)
		for len(moved) > 0 {
			total += <-moved
		}
		clk.Advance(100 * time.Millisecond)
	}
	waitPending(t, clk, 4)
	for len(moved) > 0 {
		total += <-moved
	}
	// 2 s of manual time.
	limit := int64(2*rate) + allowanceOf(rate, DefaultPeriod)
	if total > limit || total < rate {
		t.Fatalf("moved %d bytes in 2 s at %d B/s (limit %d)", total, rate, limit)
	}
	cancel()
	clk.Advance(time.Second)
}

// SetBandwidth takes effect at once; a cancelled caller returns its
// context's error.
func TestThrottlerSetBandwidthAndCancel(t *testing.T) {
	clk := clock.NewManual(t0)
	th := New(clk, 1000)
	if err := th.SetBandwidth(0); !errors.Is(err, ErrBadBandwidth) {
		t.Fatalf("SetBandwidth(0) = %v", err)
	}
	if err := th.SetBandwidth(4000); err != nil {
		t.Fatal(err)
	}
	if got := th.Bandwidth(); got != 4000 {
		t.Fatalf("Bandwidth %d, want 4000", got)
	}
	// Lowering the rate cuts what the old one banked: 1,000 bytes banked
	// at 4,000 B/s leave 250 (one period at 500 B/s), so a caller taking
	// 300 waits.
	if err := th.SetBandwidth(500); err != nil {
		t.Fatal(err)
	}
	taken := make(chan error, 1)
	go func() { taken <- th.Take(context.Background(), 300) }()
	waitPending(t, clk, 1)
	clk.Advance(DefaultPeriod)
	if err := <-taken; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- th.Take(ctx, 100_000) }()
	waitPending(t, clk, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Take = %v", err)
	}
}

// Steps of manual time far longer than a period still let a large caller
// through (it is credited for the periods that passed).
func TestThrottlerLateWakeups(t *testing.T) {
	clk := clock.NewManual(t0)
	th := New(clk, 1000) // 500 bytes per period
	done := make(chan error, 1)
	go func() { done <- th.Take(context.Background(), 5000) }()
	waitPending(t, clk, 1)
	clk.Advance(time.Minute) // 120 periods at once
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestAllowanceOfHugeRates: a rate whose product with the period overflows
// 64 bits (dfs.block.scanner.volume.bytes.per.second set to
// Long.MAX_VALUE to mean "no limit") is no limit, not one byte a period.
func TestAllowanceOfHugeRates(t *testing.T) {
	for _, tt := range []struct {
		rate int64
		want int64
	}{
		{100 << 20, 50 << 20},
		{1, 1},
		{0, 1},
		{1 << 40, 1 << 39},
		{math.MaxInt64, maxAllowance},
	} {
		if got := allowanceOf(tt.rate, 500*time.Millisecond); got != tt.want {
			t.Errorf("allowanceOf(%d, 500ms) = %d, want %d", tt.rate, got, tt.want)
		}
	}
}
