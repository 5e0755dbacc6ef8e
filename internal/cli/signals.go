package cli

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// notifySignals starts relaying SIGINT and SIGTERM to a channel until stop.
func notifySignals() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	return ch, func() { signal.Stop(ch) }
}

// signalRelay ends ctx at the first SIGINT or SIGTERM the environment
// delivers; stop ends the relay. Taken before a daemon or a cluster
// starts, it turns a signal that arrives while it starts (its RPC server
// may already answer calls) into a clean stop once it is up, instead of the
// signal's default action killing the process.
type signalRelay struct {
	ctx  context.Context
	stop func()
}

// relaySignals starts a signalRelay; the signal is logged with msg unless
// msg is empty. Without signals from the environment ctx ends only at stop.
func relaySignals(inv *Invocation, msg string) signalRelay {
	ctx, cancel := context.WithCancel(context.Background())
	if inv.Env.Signals == nil {
		return signalRelay{ctx: ctx, stop: cancel}
	}
	ch, stopNotify := inv.Env.Signals()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case s := <-ch:
			if msg != "" {
				inv.Logger.Info(msg, "signal", s.String())
			}
			cancel()
		case <-done:
		}
	}()
	return signalRelay{ctx: ctx, stop: func() {
		close(done)
		<-finished
		stopNotify()
		cancel()
	}}
}

// watchGoRunParent closes gone when this process was started by "go run"
// and the go command has ended since (its process id is no longer our
// parent's). It does nothing for any other parent, so that a cluster
// started with nohup or from a script that exits keeps running. It reads
// /proc, so it works on Linux only. stop ends the watch.
func watchGoRunParent(gone chan<- struct{}) (stop func()) {
	ppid := os.Getppid()
	if !isGoRun(ppid) {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if os.Getppid() != ppid {
					close(gone)
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// isGoRun reports whether process pid is the go command's "go run".
func isGoRun(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && goRunCmdline(b)
}

// goRunCmdline reports whether a /proc/PID/cmdline is "go run ...".
func goRunCmdline(b []byte) bool {
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	return len(args) >= 2 && filepath.Base(args[0]) == "go" && args[1] == "run"
}
