package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

const namenodeUsage = `Usage: hdfs namenode [-format [-clusterid cid] [-force] [-nonInteractive]]
                     [-recover [-force]]
                     [-help]

  (no option)       run the NameNode in the foreground until SIGINT or SIGTERM
  -format           format the name and edits directories
    -clusterid cid  use this cluster id (default: a new one)
    -force          wipe existing directories without asking
    -nonInteractive never ask; refuse to wipe existing directories without -force
  -recover          replay the edit log, offering to cut it at the first
                    unreadable record
    -force          cut without asking
`

func runNamenode(inv *Invocation) int {
	var (
		format, recoverMode, force, nonInteractive bool
		clusterID                                  string
	)
	args := inv.Args
	for i := 0; i < len(args); i++ {
		switch strings.ToLower(args[i]) {
		case "-format":
			format = true
		case "-recover":
			recoverMode = true
		case "-force":
			force = true
		case "-noninteractive":
			nonInteractive = true
		case "-clusterid":
			if i+1 >= len(args) {
				fmt.Fprint(inv.Env.Stderr, namenodeUsage)
				return exitUsage
			}
			i++
			clusterID = args[i]
		default:
			fmt.Fprintf(inv.Env.Stderr, "hdfs namenode: unknown option %s\n", args[i])
			fmt.Fprint(inv.Env.Stderr, namenodeUsage)
			return exitUsage
		}
	}
	if format && recoverMode {
		fmt.Fprintln(inv.Env.Stderr, "hdfs namenode: -format and -recover are exclusive")
		return exitUsage
	}
	if !format && (clusterID != "" || nonInteractive) || !format && !recoverMode && force {
		fmt.Fprint(inv.Env.Stderr, namenodeUsage)
		return exitUsage
	}
	cfg, err := namenode.ConfigFrom(inv.Conf)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "hdfs namenode: %v\n", err)
		return exitFail
	}
	deps := namenode.Deps{FS: vfs.Default, Clock: clock.Real{}, Logger: inv.Logger, Conf: inv.Conf}
	ctx := context.Background()
	in := bufio.NewReader(inv.Env.Stdin)
	ask := func(question string) bool {
		fmt.Fprintf(inv.Env.Stderr, "%s (Y or N) ", question)
		line, _ := in.ReadString('\n')
		return strings.EqualFold(strings.TrimSpace(line), "y")
	}

	switch {
	case format:
		opts := namenode.FormatOptions{ClusterID: clusterID, Force: force}
		if !nonInteractive && !force {
			opts.Confirm = func(dir string) bool { return ask("Re-format filesystem in " + dir + " ?") }
		}
		if err := namenode.Format(ctx, cfg, deps, opts); err != nil {
			fmt.Fprintf(inv.Env.Stderr, "hdfs namenode -format: %v\n", err)
			return exitFail
		}
		return exitOK
	case recoverMode:
		opts := namenode.RecoverOptions{}
		if !force {
			opts.Confirm = ask
		}
		if err := namenode.Recover(ctx, cfg, deps, opts); err != nil {
			fmt.Fprintf(inv.Env.Stderr, "hdfs namenode -recover: %v\n", err)
			return exitFail
		}
		return exitOK
	}

	nn, err := namenode.Start(ctx, cfg, deps)
	if err != nil {
		inv.Logger.Error("NameNode failed to start", "err", err)
		return exitFail
	}
	inv.Logger.Info("NameNode up", "rpc", nn.RPCAddr().String())
	return serveUntilStopped(inv, "NameNode", nn)
}
