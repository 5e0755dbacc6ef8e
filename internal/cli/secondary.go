package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

const secondaryUsage = `Usage: hdfs secondarynamenode [-checkpoint [force]] [-geteditsize] [-format] [-h|-help]

The Secondary NameNode helps the NameNode: at dfs.namenode.checkpoint.period
or after dfs.namenode.checkpoint.txns transactions it asks the NameNode to
roll its edit log, downloads the image and the edits over HTTP, merges them
and uploads the new image, so that a NameNode restart replays few edits. It
keeps its copies in dfs.namenode.checkpoint.dir and .edits.dir and serves a
status page and /jmx on dfs.namenode.secondary.http-address. One Secondary
NameNode per cluster; none in an HA cluster, where the standby checkpoints.

  (no option)          run the Secondary NameNode until SIGINT or SIGTERM
  -checkpoint [force]  take one checkpoint now if the NameNode has more than
                       dfs.namenode.checkpoint.txns uncheckpointed
                       transactions (always with force), then exit
  -geteditsize         print the number of uncheckpointed transactions on
                       the NameNode, then exit
  -format              wipe the checkpoint storage first
  -h, -help            print this help
`

func runSecondary(inv *Invocation) int {
	var checkpoint, force, editSize, format bool
	args := inv.Args
	for i := 0; i < len(args); i++ {
		switch strings.ToLower(args[i]) {
		case "-checkpoint":
			checkpoint = true
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				if args[i+1] != "force" {
					fmt.Fprintln(inv.Env.Stderr, "-checkpoint may only take 'force' as an argument")
					fmt.Fprint(inv.Env.Stderr, secondaryUsage)
					return exitUsage
				}
				force = true
				i++
			}
		case "-geteditsize":
			editSize = true
		case "-format":
			format = true
		case "-h", "-help", "--help":
			fmt.Fprint(inv.Env.Stdout, secondaryUsage)
			return exitOK
		default:
			fmt.Fprintf(inv.Env.Stderr, "hdfs secondarynamenode: unknown option %s\n", args[i])
			fmt.Fprint(inv.Env.Stderr, secondaryUsage)
			return exitUsage
		}
	}
	if checkpoint && editSize {
		fmt.Fprintln(inv.Env.Stderr, "May not pass both geteditsize and checkpoint")
		fmt.Fprint(inv.Env.Stderr, secondaryUsage)
		return exitUsage
	}
	if !checkpoint && !editSize {
		return runHelper(inv, namenode.RoleSecondary, namenode.HelperOptions{Format: format})
	}
	cfg, err := namenode.HelperConfigFrom(inv.Conf, namenode.RoleSecondary)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "Failed to start secondary namenode: %v\n", err)
		return exitFail
	}
	deps := namenode.Deps{FS: vfs.Default, Clock: clock.Real{}, Logger: inv.Logger, Conf: inv.Conf}
	ctx := context.Background()
	if editSize {
		n, err := namenode.SecondaryEditSize(ctx, cfg, deps, format)
		if err != nil {
			fmt.Fprintf(inv.Env.Stderr, "geteditsize: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(inv.Env.Stdout, "NameNode has %d uncheckpointed transactions\n", n)
		return exitOK
	}
	res, err := namenode.RunSecondaryCheckpoint(ctx, cfg, deps, force, format)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "checkpoint: %v\n", err)
		return exitFail
	}
	if !res.Done {
		fmt.Fprintf(inv.Env.Stderr, "EditLog size %d transactions is smaller than configured checkpoint interval %d transactions.\n",
			res.Uncheckpointed, cfg.CheckpointTxns)
		fmt.Fprintln(inv.Env.Stderr, "Skipping checkpoint.")
		return exitOK
	}
	fmt.Fprintf(inv.Env.Stdout, "Checkpoint done: image of transaction %d uploaded to the NameNode (%d uncheckpointed transactions before).\n",
		res.TxID, res.Uncheckpointed)
	return exitOK
}
