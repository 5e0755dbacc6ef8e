package imagetransfer

import (
	"context"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
)

// throttlePeriod is the credit a throttle may save up, in time at its rate:
// after a pause, at most this much goes out at full speed (Hadoop's
// throttler works in periods of the same length).
const throttlePeriod = 500 * time.Millisecond

// throttle meters one transfer to a byte rate. It is a token bucket that
// starts full: take records bytes sent and returns how long the sender must
// pause so that, from then on, the average stays at the rate. It reads no
// clock (the caller passes the time), so tests check its pauses exactly.
// Not safe for concurrent use.
type throttle struct {
	rate   float64 // bytes per second
	burst  float64 // capacity of the bucket, bytes
	tokens float64
	last   time.Time
	begun  bool
}

// newThrottle returns a throttle for bytesPerSec, or nil (no throttling)
// when bytesPerSec is 0. The bucket holds throttlePeriod at the rate, and
// at least one chunk, so a chunk never waits on a full bucket.
func newThrottle(bytesPerSec int64, chunk int) *throttle {
	if bytesPerSec <= 0 {
		return nil
	}
	rate := float64(bytesPerSec)
	burst := rate * throttlePeriod.Seconds()
	if burst < float64(chunk) {
		burst = float64(chunk)
	}
	return &throttle{rate: rate, burst: burst, tokens: burst}
}

// take records n bytes sent at now and returns the pause owed (0 if none).
func (t *throttle) take(now time.Time, n int) time.Duration {
	if !t.begun {
		t.begun, t.last = true, now
	}
	if el := now.Sub(t.last); el > 0 {
		t.tokens += el.Seconds() * t.rate
		if t.tokens > t.burst {
			t.tokens = t.burst
		}
		t.last = now
	}
	t.tokens -= float64(n)
	if t.tokens >= 0 {
		return 0
	}
	return time.Duration(-t.tokens / t.rate * float64(time.Second))
}

// pacer sleeps the pauses a throttle owes, on an injected clock.
type pacer struct {
	t   *throttle // nil: no throttling
	clk clock.Clock
}

// wait records n bytes and sleeps what the throttle says, or until ctx ends.
func (p pacer) wait(ctx context.Context, n int) error {
	if p.t == nil || n <= 0 {
		return nil
	}
	d := p.t.take(p.clk.Now(), n)
	if d <= 0 {
		return nil
	}
	tm := p.clk.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-tm.C():
		return nil
	}
}
