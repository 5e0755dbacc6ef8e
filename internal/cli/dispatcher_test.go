package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/balancer"
)

// TestRunUntilSignal: the balancer's and the mover's run ends with the
// status the tool returns, and a SIGTERM cancels the run's context.
func TestRunUntilSignal(t *testing.T) {
	sig := make(chan os.Signal, 1)
	stopped := make(chan struct{})
	inv := &Invocation{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Env: Env{Signals: func() (<-chan os.Signal, func()) { return sig, func() { close(stopped) } }}}
	if code := runUntilSignal(inv, "mover", func(context.Context) balancer.ExitStatus { return balancer.NoMoveProgress }); code != int(balancer.NoMoveProgress) {
		t.Errorf("status %d, want %d", code, balancer.NoMoveProgress)
	}
	select {
	case <-stopped:
	default:
		t.Error("the signal relay was not stopped")
	}
	// A new relay, as signal.Notify gives each run: the first run's relay
	// goroutine may not have seen its context end yet, and on a shared
	// channel it could take the signal meant for the second.
	stopped, sig = make(chan struct{}), make(chan os.Signal, 1)
	sig <- syscall.SIGTERM
	code := runUntilSignal(inv, "balancer", func(ctx context.Context) balancer.ExitStatus {
		select {
		case <-ctx.Done():
			return balancer.Interrupted
		case <-time.After(10 * time.Second):
			return balancer.Success
		}
	})
	if code != int(balancer.Interrupted) {
		t.Errorf("after SIGTERM: status %d, want %d", code, balancer.Interrupted)
	}
}
