package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/balancer"
	"github.com/hdfsgo/hdfsgo/internal/cli/fsshell"
	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// The parts of `hdfs balancer` and `hdfs mover` that are the same in both,
// as Hadoop's two tools share their block dispatcher and NameNode
// connector.

// dispatcherConfig returns the part of a balancer.Config both tools set
// alike: the calling user, the NameNodes of fs.defaultFS and where to log.
func dispatcherConfig(inv *Invocation) (balancer.Config, error) {
	cfg := balancer.Config{User: clientUser(inv), Logger: inv.Logger, Stderr: inv.Env.Stderr}
	addrs, authority, err := fsshell.NameNodeAddresses(inv.Conf)
	if err != nil {
		return cfg, err
	}
	cfg.NameNodes, cfg.Authority, cfg.URI = addrs, authority, "hdfs://"+authority
	return cfg, nil
}

// readMoveTiming reads the timing keys both tools wait by: how long one
// block move may take, and the pause between iterations (two heartbeats
// and a redundancy check, as in Hadoop).
func readMoveTiming(r conf.Reader, cfg *balancer.Config) {
	cfg.MoveTimeout = r.Duration(conf.DFSBalancerBlockMoveTimeout)
	cfg.Sleep = 2*r.Duration(conf.DFSHeartbeatInterval) + r.Duration(conf.DFSNameNodeRedundancyInterval)
}

// dispatcherUsageError answers bad options: err and the usage on stderr,
// then the last line Hadoop's tools print whatever happened ("<date>
// Balancing took 1.2 seconds") on stdout, and the usage exit status.
func dispatcherUsageError(inv *Invocation, err error, usage, took string, start time.Time) int {
	fmt.Fprintln(inv.Env.Stderr, err)
	fmt.Fprint(inv.Env.Stderr, usage)
	balancer.PrintTook(inv.Env.Stdout, took, time.Now(), time.Since(start))
	return exitUsage
}

// runUntilSignal runs the tool with a context that SIGINT or SIGTERM
// cancels (the tool then ends after the moves in flight) and returns its
// exit status; name says which tool stopped in the log.
func runUntilSignal(inv *Invocation, name string, run func(context.Context) balancer.ExitStatus) int {
	sigs := relaySignals(inv, name+" stopping")
	defer sigs.stop()
	return int(run(sigs.ctx))
}
