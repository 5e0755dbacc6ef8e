// Package ratelog writes log records about peers that misbehave (bad
// preambles, malformed frames, refused connections) without letting those
// peers flood the log: a Logger lets through at most Burst records per
// Window and counts the rest, and the first record after a quiet spell
// says how many were left out ("suppressed": n).
//
// Callers: the RPC server (internal/ipc) and the DataNode's streaming
// server, one Logger per server, shared by every connection. A Logger is
// safe for concurrent use; it owns no goroutine. Time comes from a
// clock.Clock, so tests drive the window with clock.Manual.
//
//	rl := ratelog.New(logger, clock.Real{}, ratelog.DefaultWindow, ratelog.DefaultBurst)
//	rl.Warn("ipc: bad connection preamble", "remote", addr, "err", err)
package ratelog

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
)

// Defaults: ten records a minute is enough to see what is going on and
// little enough that a peer opening connections in a loop cannot fill a
// disk.
const (
	DefaultWindow = time.Minute
	DefaultBurst  = 10
)

// Logger is a rate-limited front of a *slog.Logger.
type Logger struct {
	log    *slog.Logger
	clk    clock.Clock
	window time.Duration
	burst  int

	mu struct {
		sync.Mutex
		start      time.Time // start of the current window
		n          int       // records let through in the window
		suppressed int64     // records dropped since the last one let through
	}
}

// New returns a Logger writing to l (nil discards) that lets through at
// most burst records per window. Zero or negative window and burst take
// the defaults; a nil clk is the wall clock.
func New(l *slog.Logger, clk clock.Clock, window time.Duration, burst int) *Logger {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	if clk == nil {
		clk = clock.Real{}
	}
	if window <= 0 {
		window = DefaultWindow
	}
	if burst <= 0 {
		burst = DefaultBurst
	}
	return &Logger{log: l, clk: clk, window: window, burst: burst}
}

// Warn logs msg with args at WARN unless the window's budget is spent.
func (r *Logger) Warn(msg string, args ...any) { r.logAt(slog.LevelWarn, msg, args) }

// Info logs msg with args at INFO unless the window's budget is spent.
func (r *Logger) Info(msg string, args ...any) { r.logAt(slog.LevelInfo, msg, args) }

// Suppressed returns how many records were dropped since the last one let
// through.
func (r *Logger) Suppressed() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.suppressed
}

func (r *Logger) logAt(level slog.Level, msg string, args []any) {
	now := r.clk.Now()
	r.mu.Lock()
	if r.mu.start.IsZero() || now.Sub(r.mu.start) >= r.window {
		r.mu.start, r.mu.n = now, 0
	}
	if r.mu.n >= r.burst {
		r.mu.suppressed++
		r.mu.Unlock()
		return
	}
	r.mu.n++
	dropped := r.mu.suppressed
	r.mu.suppressed = 0
	r.mu.Unlock()
	if dropped > 0 {
		args = append(args[:len(args):len(args)], "suppressed", dropped)
	}
	r.log.Log(context.Background(), level, msg, args...)
}
