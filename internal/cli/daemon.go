package cli

import (
	"context"
	"os"

	"github.com/hdfsgo/hdfsgo/internal/failpoint"
)

// daemon is what the foreground roles (namenode, datanode) have in common.
type daemon interface {
	Done() <-chan struct{}
	Close() error
	Err() error
}

// signalRelay relays SIGINT and SIGTERM from before a daemon starts: a
// signal that arrives while it starts (its RPC server may already answer
// calls) stops it cleanly once it is up, instead of the default action
// killing the process. ctx ends at the first signal; stop ends the relay.
type signalRelay struct {
	ctx  context.Context
	stop func()
}

func relayStopSignals(inv *Invocation) signalRelay {
	ctx, cancel := context.WithCancel(context.Background())
	if inv.Env.Signals == nil {
		return signalRelay{ctx: ctx, stop: cancel}
	}
	ch, stopNotify := inv.Env.Signals()
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			inv.Logger.Info("shutting down", "signal", s.String())
			cancel()
		case <-done:
		}
	}()
	return signalRelay{ctx: ctx, stop: func() {
		close(done)
		stopNotify()
		cancel()
	}}
}

// serveUntilStopped runs until a signal came through sigs or the daemon
// stops by itself, then closes it; the exit status says whether it ended
// cleanly.
func serveUntilStopped(inv *Invocation, role string, d daemon, sigs signalRelay) int {
	select {
	case <-sigs.ctx.Done():
	case <-d.Done():
	}
	if err := d.Close(); err != nil {
		inv.Logger.Error(role+" stopped with an error", "err", err)
		return exitFail
	}
	if err := d.Err(); err != nil {
		inv.Logger.Error(role+" failed", "err", err)
		return exitFail
	}
	return exitOK
}

// armedFailpoint returns the failpoint a crash test armed for this daemon
// with HDFSGO_FAILPOINT (package failpoint), or nil. A variable that arms
// nothing is logged and ignored.
func armedFailpoint(inv *Invocation) failpoint.Func {
	fp, err := failpoint.FromEnv(inv.Env.Getenv, os.Getppid())
	if err != nil {
		inv.Logger.Warn("ignoring "+failpoint.EnvVar, "err", err)
	}
	if fp != nil {
		inv.Logger.Warn("failpoint armed: this process kills itself there", "value", inv.Env.Getenv(failpoint.EnvVar))
	}
	return fp
}
