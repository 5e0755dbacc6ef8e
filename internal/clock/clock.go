// Package clock injects time. Decision logic (lease expiry, dead-node detection,
// safe-mode extension, retry backoff) takes a Clock instead of calling time.Now, so
// tests drive it with a Manual clock and never sleep for correctness.
//
// Real is the wall clock. Manual is a test clock that moves only when Advance is
// called, firing due timers in time order. Both are safe for concurrent use.
//
//	c := clock.NewManual(time.Unix(0, 0))
//	t := c.NewTimer(time.Minute)
//	c.Advance(time.Minute) // t.C() now receives
package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock is a source of time and timers.
type Clock interface {
	Now() time.Time
	// Since is Now().Sub(t).
	Since(t time.Time) time.Duration
	// NewTimer fires once after d.
	NewTimer(d time.Duration) Timer
	// NewTicker fires every d until stopped.
	NewTicker(d time.Duration) Ticker
	// AfterFunc calls f in its own goroutine after d.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a one-shot timer.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it was pending.
	Stop() bool
	// Reset re-arms the timer to fire after d.
	Reset(d time.Duration) bool
}

// Ticker fires periodically.
type Ticker interface {
	C() <-chan time.Time
	Stop()
	Reset(d time.Duration)
}

// Real is the system clock.
type Real struct{}

func (Real) Now() time.Time                  { return time.Now() }
func (Real) Since(t time.Time) time.Duration { return time.Since(t) }
func (Real) NewTimer(d time.Duration) Timer  { return realTimer{t: time.NewTimer(d)} }
func (Real) NewTicker(d time.Duration) Ticker {
	return realTicker{t: time.NewTicker(d)}
}
func (Real) AfterFunc(d time.Duration, f func()) Timer {
	return realTimer{t: time.AfterFunc(d, f)}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time   { return r.t.C }
func (r realTicker) Stop()                 { r.t.Stop() }
func (r realTicker) Reset(d time.Duration) { r.t.Reset(d) }

// Manual is a clock that moves only when told to.
type Manual struct {
	mu struct {
		sync.Mutex
		now    time.Time
		timers []*manualTimer
	}
}

// NewManual returns a manual clock reading start.
func NewManual(start time.Time) *Manual {
	m := &Manual{}
	m.mu.now = start
	return m
}

// Now returns the clock's current reading.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.now
}

// Since is Now().Sub(t).
func (m *Manual) Since(t time.Time) time.Duration { return m.Now().Sub(t) }

// Advance moves the clock forward by d, firing every timer and ticker that falls
// due, in time order.
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	target := m.mu.now.Add(d)
	for {
		sort.SliceStable(m.mu.timers, func(i, j int) bool {
			return m.mu.timers[i].when.Before(m.mu.timers[j].when)
		})
		if len(m.mu.timers) == 0 || m.mu.timers[0].when.After(target) {
			break
		}
		t := m.mu.timers[0]
		m.mu.timers = m.mu.timers[1:]
		m.mu.now = t.when
		if t.period > 0 {
			t.when = t.when.Add(t.period)
			m.mu.timers = append(m.mu.timers, t)
		}
		t.fireLocked(m.mu.now)
	}
	m.mu.now = target
	m.mu.Unlock()
}

// Pending returns how many timers and tickers are armed.
func (m *Manual) Pending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.mu.timers)
}

func (m *Manual) add(d, period time.Duration, f func()) *manualTimer {
	t := &manualTimer{m: m, c: make(chan time.Time, 1), period: period, f: f}
	m.mu.Lock()
	t.when = m.mu.now.Add(d)
	m.mu.timers = append(m.mu.timers, t)
	m.mu.Unlock()
	return t
}

func (m *Manual) removeLocked(t *manualTimer) bool {
	for i, x := range m.mu.timers {
		if x == t {
			m.mu.timers = append(m.mu.timers[:i], m.mu.timers[i+1:]...)
			return true
		}
	}
	return false
}

// NewTimer returns a timer that fires when the clock has advanced by d.
func (m *Manual) NewTimer(d time.Duration) Timer { return m.add(d, 0, nil) }

// NewTicker returns a ticker firing every d of advanced time.
func (m *Manual) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive ticker interval")
	}
	return manualTicker{m.add(d, d, nil)}
}

// AfterFunc calls f in a new goroutine once the clock has advanced by d.
func (m *Manual) AfterFunc(d time.Duration, f func()) Timer { return m.add(d, 0, f) }

type manualTimer struct {
	m      *Manual
	c      chan time.Time
	when   time.Time
	period time.Duration
	f      func()
}

func (t *manualTimer) fireLocked(now time.Time) {
	if t.f != nil {
		go t.f()
		return
	}
	select {
	case t.c <- now:
	default: // like time.Ticker, drop a tick nobody took
	}
}

func (t *manualTimer) C() <-chan time.Time { return t.c }

func (t *manualTimer) Stop() bool {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	return t.m.removeLocked(t)
}

func (t *manualTimer) Reset(d time.Duration) bool {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	was := t.m.removeLocked(t)
	t.when = t.m.mu.now.Add(d)
	if t.period > 0 {
		t.period = d
	}
	t.m.mu.timers = append(t.m.mu.timers, t)
	return was
}

type manualTicker struct{ t *manualTimer }

func (k manualTicker) C() <-chan time.Time   { return k.t.c }
func (k manualTicker) Stop()                 { k.t.Stop() }
func (k manualTicker) Reset(d time.Duration) { k.t.Reset(d) }
