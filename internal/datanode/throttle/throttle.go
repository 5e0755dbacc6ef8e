// Package throttle is the DataNode's bandwidth limit for background data
// movement (seed 002's BlockTransferThrottler): callers report the bytes
// they are about to move and block until the average rate over a period
// stays within the limit. One Throttler is shared by every balancer move
// (COPY_BLOCK, REPLACE_BLOCK) and re-replication copy (DNA_TRANSFER) of a
// DataNode, at dfs.datanode.balance.bandwidthPerSec; each volume's block
// scanner has its own at dfs.block.scanner.volume.bytes.per.second.
//
// The limit is on the average, not the smoothness: within a period callers
// run at full speed until the period's allowance is spent, then wait for the
// next period. Time comes from an injected clock.Clock, so tests drive the
// throttler with a manual clock. A Throttler is safe for concurrent use.
//
// # State
//
//	allowance = bandwidth × period / 1 s          bytes a period lets through
//	reserve   = what is left of this period's allowance (negative: owed)
//
//	Take(n):  refill; reserve -= n
//	          while reserve ≤ 0: wait until start+period; refill
//	refill:   k = whole periods since start (none: nothing);
//	          start += k×period; reserve = min(reserve + k×allowance, allowance)
//
// The reserve never exceeds one period's allowance: a throttler left alone
// banks nothing beyond one period, so its next callers cannot burst past
// the rate, while a caller that waited through several periods (a busy
// machine waking it late) is credited for all of them.
//
//	t := throttle.New(clock.Real{}, 100<<20) // 100 MiB/s
//	for ... {
//		if err := t.Take(ctx, int64(len(buf))); err != nil {
//			return err
//		}
//		// send buf
//	}
package throttle

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
)

// DefaultPeriod is the period over which the rate is averaged (Hadoop's
// DataTransferThrottler uses 500 ms).
const DefaultPeriod = 500 * time.Millisecond

// ErrBadBandwidth: a bandwidth of zero or less.
var ErrBadBandwidth = errors.New("throttle: bandwidth must be positive")

// budget is the pure core: the throttler's accounting, with time given.
type budget struct {
	period    time.Duration
	allowance int64 // bytes per period
	start     time.Time
	reserve   int64
}

// maxAllowance bounds a period's allowance so that the reserve's sums never
// overflow: a rate that large (a configuration meaning "no limit", such as
// Long.MAX_VALUE) lets everything through.
const maxAllowance = math.MaxInt64 / 4

func allowanceOf(bytesPerSec int64, period time.Duration) int64 {
	// bytesPerSec × period / 1 s, in 128 bits: the product of a large rate
	// and a period in nanoseconds overflows 64.
	hi, lo := bits.Mul64(uint64(max(bytesPerSec, 0)), uint64(max(period, 0)))
	if hi >= uint64(time.Second) {
		return maxAllowance
	}
	q, _ := bits.Div64(hi, lo, uint64(time.Second))
	return max(int64(min(q, maxAllowance)), 1)
}

// refill credits the whole periods since start, keeping the reserve at
// most one period's allowance.
func (b *budget) refill(now time.Time) {
	if now.Before(b.start.Add(b.period)) {
		return
	}
	k := int64(now.Sub(b.start) / b.period)
	b.start = b.start.Add(time.Duration(k) * b.period)
	credit := k * b.allowance
	if credit/k != b.allowance || credit > b.allowance-b.reserve { // overflow, or more than fills it
		credit = b.allowance - b.reserve
	}
	b.reserve += credit
}

// take refills the reserve to now and debits n bytes from it.
func (b *budget) take(now time.Time, n int64) {
	b.refill(now)
	b.reserve -= n
}

// settle refills the reserve to now and returns how long a caller that
// took bytes must still wait (0: the reserve is positive, it may go).
func (b *budget) settle(now time.Time) time.Duration {
	b.refill(now)
	if b.reserve > 0 {
		return 0
	}
	return b.start.Add(b.period).Sub(now)
}

// Throttler limits the average rate of the bytes its callers move.
type Throttler struct {
	clk clock.Clock

	mu struct {
		sync.Mutex
		b budget
	}
}

// New returns a throttler of bytesPerSec (which must be positive) averaged
// over DefaultPeriod.
func New(clk clock.Clock, bytesPerSec int64) *Throttler {
	return NewPeriod(clk, bytesPerSec, DefaultPeriod)
}

// NewPeriod is New with another averaging period.
func NewPeriod(clk clock.Clock, bytesPerSec int64, period time.Duration) *Throttler {
	if bytesPerSec <= 0 {
		panic(fmt.Sprintf("throttle: bandwidth %d", bytesPerSec))
	}
	if period <= 0 {
		period = DefaultPeriod
	}
	t := &Throttler{clk: clk}
	a := allowanceOf(bytesPerSec, period)
	t.mu.b = budget{period: period, allowance: a, start: clk.Now(), reserve: a}
	return t
}

// Bandwidth returns the limit in bytes per second.
func (t *Throttler) Bandwidth() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.b.allowance * int64(time.Second) / int64(t.mu.b.period)
}

// SetBandwidth changes the limit at once: a reserve banked at a higher
// rate is cut to one period of the new one, so that a lowered limit holds
// from the next caller on (dfsadmin -setBalancerBandwidth must not be
// followed by a burst at the old rate).
func (t *Throttler) SetBandwidth(bytesPerSec int64) error {
	if bytesPerSec <= 0 {
		return fmt.Errorf("%w: %d", ErrBadBandwidth, bytesPerSec)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.b.allowance = allowanceOf(bytesPerSec, t.mu.b.period)
	t.mu.b.reserve = min(t.mu.b.reserve, t.mu.b.allowance)
	return nil
}

// Take accounts for n bytes the caller moves and blocks until the average
// rate allows them. It returns ctx's error if ctx ends first (the bytes
// stay counted: they were, or will be, moved anyway).
func (t *Throttler) Take(ctx context.Context, n int64) error {
	if n <= 0 {
		return nil
	}
	t.mu.Lock()
	t.mu.b.take(t.clk.Now(), n)
	for {
		wait := t.mu.b.settle(t.clk.Now())
		if wait == 0 {
			t.mu.Unlock()
			return nil
		}
		t.mu.Unlock()
		tm := t.clk.NewTimer(wait)
		select {
		case <-ctx.Done():
			tm.Stop()
			return ctx.Err()
		case <-tm.C():
		}
		t.mu.Lock()
	}
}
