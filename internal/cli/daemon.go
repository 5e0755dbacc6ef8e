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
