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
		return dispatcherUsageError(inv, err, moverUsage, "Mover", start)
	}
	cfg, err := dispatcherConfig(inv)
	if err != nil {
		fmt.Fprintln(inv.Env.Stderr, err)
		return exitFail
	}
	var errs []error
	readMoveTiming(inv.Conf.Reader(&errs), &cfg)
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(inv.Env.Stderr, err)
		return exitFail
	}
	return runUntilSignal(inv, "mover", func(ctx context.Context) balancer.ExitStatus {
		return balancer.RunMover(ctx, cfg, paths, inv.Env.Stdout)
	})
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
