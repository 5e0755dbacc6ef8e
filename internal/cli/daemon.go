package cli

import (
	"os"

	"github.com/hdfsgo/hdfsgo/internal/failpoint"
)

// daemon is what the foreground roles (namenode, datanode) have in common.
type daemon interface {
	Done() <-chan struct{}
	Close() error
	Err() error
}

// serveUntilStopped runs until SIGINT/SIGTERM or until the daemon stops by
// itself, then closes it; the exit status says whether it ended cleanly.
func serveUntilStopped(inv *Invocation, role string, d daemon) int {
	var sig <-chan struct{}
	if inv.Env.Signals != nil {
		ch, stop := inv.Env.Signals()
		defer stop()
		done := make(chan struct{})
		go func() {
			select {
			case s := <-ch:
				inv.Logger.Info("shutting down", "signal", s.String())
			case <-d.Done():
			}
			close(done)
		}()
		sig = done
	}
	select {
	case <-sig:
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
