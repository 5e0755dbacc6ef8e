package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/balancer"
	"github.com/hdfsgo/hdfsgo/internal/cli/fsshell"
	"github.com/hdfsgo/hdfsgo/internal/conf"
)

const moverUsage = `Usage: hdfs mover [-p <files/dirs> | -f <local file>]
	-p <files/dirs>	a space separated list of HDFS files/dirs to migrate.
	-f <local file>	a local file containing a list of HDFS files/dirs to migrate.
`

// runMover is `hdfs mover`: it moves block replicas so that they sit on the
// storage types their files' storage policies ask for, with Hadoop's last
// lines and exit statuses (a negative status exits as 256 + status).
func runMover(inv *Invocation) int {
	start := time.Now()
	paths, err := moverPaths(inv.Args)
	if err != nil {
		fmt.Fprintln(inv.Env.Stderr, err)
		fmt.Fprint(inv.Env.Stderr, moverUsage)
		fmt.Fprintf(inv.Env.Stdout, "%-24s Mover took %s\n", time.Now().Format("Jan 2, 2006 3:04:05 PM"), balancer.Elapsed(time.Since(start)))
		return exitUsage
	}
	c := inv.Conf
	cfg := balancer.Config{User: clientUser(inv), Logger: inv.Logger, Stderr: inv.Env.Stderr}
	addrs, authority, err := fsshell.NameNodeAddresses(c)
	if err != nil {
		fmt.Fprintln(inv.Env.Stderr, err)
		return exitFail
	}
	cfg.NameNodes, cfg.Authority, cfg.URI = addrs, authority, "hdfs://"+authority
	var errs []error
	r := c.Reader(&errs)
	cfg.MoveTimeout = r.Duration(conf.DFSBalancerBlockMoveTimeout)
	cfg.Sleep = 2*r.Duration(conf.DFSHeartbeatInterval) + r.Duration(conf.DFSNameNodeRedundancyInterval)
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(inv.Env.Stderr, err)
		return exitFail
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if inv.Env.Signals != nil {
		ch, stop := inv.Env.Signals()
		defer stop()
		go func() {
			select {
			case s := <-ch:
				inv.Logger.Info("mover stopping", "signal", s.String())
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return int(balancer.RunMover(ctx, cfg, paths, inv.Env.Stdout))
}

// moverPaths reads -p PATH... or -f FILE (one path a line); none means "/".
func moverPaths(args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	switch {
	case args[0] == "-p":
		if len(args) == 1 {
			return nil, errors.New("-p needs at least one path")
		}
		for _, a := range args[1:] {
			if strings.HasPrefix(a, "-") {
				return nil, fmt.Errorf("Illegal option %s after -p", a)
			}
		}
		return args[1:], nil
	case args[0] == "-f":
		if len(args) != 2 {
			return nil, errors.New("-f needs one local file")
		}
		f, err := os.Open(args[1])
		if err != nil {
			return nil, err
		}
		defer f.Close()
		var out []string
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			for _, p := range strings.Fields(sc.Text()) {
				out = append(out, p)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%s lists no path", args[1])
		}
		return out, nil
	}
	return nil, fmt.Errorf("Illegal option %s", args[0])
}
