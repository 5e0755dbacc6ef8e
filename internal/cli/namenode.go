package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

const namenodeUsage = `Usage: hdfs namenode [-backup] | [-checkpoint] |
                     [-format [-clusterid cid] [-force] [-nonInteractive]]
                     [-upgrade] [-upgradeOnly] [-rollback]
                     [-rollingUpgrade <rollback|started>]
                     [-recover [-force]]
                     [-initializeSharedEdits [-force] [-nonInteractive]]
                     [-bootstrapStandby [-force] [-nonInteractive] [-skipSharedEditsCheck]]
                     [-help]

  (no option)       run the NameNode in the foreground until SIGINT or SIGTERM
  -backup           run a Backup Node: it receives every edit from the
                    NameNode (dfs.namenode.rpc-address / fs.defaultFS) as a
                    stream, keeps the namespace in sync, serves reads and
                    checkpoints; RPC on dfs.namenode.backup.address, web on
                    dfs.namenode.backup.http-address, storage in
                    dfs.namenode.checkpoint.dir and .edits.dir
  -checkpoint       run a Checkpoint Node: it downloads the image and edits
                    at dfs.namenode.checkpoint.period or .txns, merges them
                    and uploads the image (same addresses and storage)
  -format           format the name and edits directories
    -clusterid cid  use this cluster id (default: a new one)
    -force          wipe existing directories without asking
    -nonInteractive never ask; refuse to wipe existing directories without -force
  -upgrade          keep the current state of the name dirs (and of the
                    shared edits with HA) as previous/, write the namespace
                    as a new image with a new cTime, then run; the
                    DataNodes upgrade their storage when they start. Every
                    NameNode must be stopped; with HA, bootstrap the other
                    NameNode again afterwards (-bootstrapStandby)
  -upgradeOnly      the same, then exit
  -rollback         go back to the state kept by the last upgrade and exit;
                    then start the NameNode, and the DataNodes with -rollback
  -rollingUpgrade   not supported (hdfsgo has no rolling upgrades)
  -recover          replay the edit log, offering to cut it at the first
                    unreadable record
    -force          cut without asking
  -initializeSharedEdits
                    format the shared edits dir (dfs.namenode.shared.edits.dir)
                    and copy into it the local edits after the newest image,
                    so that a NameNode can start HA
  -bootstrapStandby make this NameNode the standby of its nameservice: format
                    its name dirs as the other NameNode's, download that one's
                    newest image, check the shared edits hold the rest
    -skipSharedEditsCheck
                    do not check the shared edits
`

func runNamenode(inv *Invocation) int {
	var (
		format, recoverMode, force, nonInteractive bool
		initShared, bootstrap, skipSharedCheck     bool
		upgrade, upgradeOnly, rollback             bool
		backupNode, checkpointNode                 bool
		clusterID                                  string
	)
	args := inv.Args
	for i := 0; i < len(args); i++ {
		switch strings.ToLower(args[i]) {
		case "-format":
			format = true
		case "-recover":
			recoverMode = true
		case "-initializesharededits":
			initShared = true
		case "-bootstrapstandby":
			bootstrap = true
		case "-skipsharededitscheck":
			skipSharedCheck = true
		case "-upgrade":
			upgrade = true
		case "-upgradeonly":
			upgradeOnly = true
		case "-rollback":
			rollback = true
		case "-rollingupgrade":
			if i+1 >= len(args) {
				fmt.Fprint(inv.Env.Stderr, namenodeUsage)
				return exitUsage
			}
			fmt.Fprintf(inv.Env.Stderr, "hdfs namenode: -rollingUpgrade %s is not supported: hdfsgo has no rolling upgrades (stop the cluster and use -upgrade, then -rollback or `hdfs dfsadmin -finalizeUpgrade`)\n", args[i+1])
			return exitFail
		case "-finalize":
			fmt.Fprintln(inv.Env.Stderr, "hdfs namenode: Use of the argument 'FINALIZE' at startup is no longer supported. To finalize an upgrade, start the NN and then run `hdfs dfsadmin -finalizeUpgrade'")
			return exitFail
		case "-importcheckpoint":
			fmt.Fprintln(inv.Env.Stderr, "hdfs namenode: -importCheckpoint is not supported yet")
			return exitFail
		case "-backup":
			backupNode = true
		case "-checkpoint":
			checkpointNode = true
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
	modes := 0
	for _, m := range []bool{format, recoverMode, initShared, bootstrap, upgrade, upgradeOnly, rollback, backupNode, checkpointNode} {
		if m {
			modes++
		}
	}
	switch {
	case modes > 1:
		fmt.Fprintln(inv.Env.Stderr, "hdfs namenode: -backup, -checkpoint, -format, -upgrade, -upgradeOnly, -rollback, -recover, -initializeSharedEdits and -bootstrapStandby are exclusive")
		return exitUsage
	case !format && clusterID != "",
		modes == 0 && (force || nonInteractive),
		recoverMode && nonInteractive,
		!bootstrap && skipSharedCheck:
		fmt.Fprint(inv.Env.Stderr, namenodeUsage)
		return exitUsage
	}
	if backupNode || checkpointNode {
		role := namenode.RoleCheckpoint
		if backupNode {
			role = namenode.RoleBackup
		}
		return runHelper(inv, role, namenode.HelperOptions{})
	}
	cfg, err := namenode.ConfigFrom(inv.Conf)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "hdfs namenode: %v\n", err)
		return exitFail
	}
	deps := namenode.Deps{FS: vfs.Default, Clock: clock.Real{}, Logger: inv.Logger, LogLevel: inv.LevelVar, Conf: inv.Conf, Failpoint: armedFailpoint(inv),
		ReloadConf: inv.Reload}
	ctx := context.Background()
	in := bufio.NewReader(inv.Env.Stdin)
	ask := func(question string) bool {
		fmt.Fprintf(inv.Env.Stderr, "%s (Y or N) ", question)
		line, _ := in.ReadString('\n')
		return strings.EqualFold(strings.TrimSpace(line), "y")
	}

	switch {
	case format:
		// Hadoop's confirmation, per directory that holds anything.
		opts := namenode.FormatOptions{ClusterID: clusterID, Confirm: func(dir string) bool {
			sd := storageDirName(dir)
			switch {
			case force:
				fmt.Fprintf(inv.Env.Stderr, "Data exists in %s. Formatting anyway.\n", sd)
				return true
			case nonInteractive:
				fmt.Fprintf(inv.Env.Stderr, "Running in non-interactive mode, and data appears to exist in %s. Not formatting.\n", sd)
				return false
			case !confirmPrompt(in, inv.Env.Stderr, "Re-format filesystem in "+sd+" ?"):
				fmt.Fprintf(inv.Env.Stderr, "Format aborted in %s\n", sd)
				return false
			}
			return true
		}}
		if err := namenode.Format(ctx, cfg, deps, opts); err != nil {
			if !errors.Is(err, namenode.ErrFormatRefused) {
				fmt.Fprintf(inv.Env.Stderr, "hdfs namenode -format: %v\n", err)
			}
			return exitFail
		}
		return exitOK
	case initShared:
		opts := namenode.InitializeSharedEditsOptions{Force: force}
		if !nonInteractive && !force {
			opts.Confirm = func(dir string) bool { return ask("Re-format the shared edits dir " + dir + " ?") }
		}
		if err := namenode.InitializeSharedEdits(ctx, cfg, deps, opts); err != nil {
			fmt.Fprintf(inv.Env.Stderr, "hdfs namenode -initializeSharedEdits: %v\n", err)
			return exitFail
		}
		return exitOK
	case bootstrap:
		opts := namenode.BootstrapOptions{Force: force, SkipSharedEditsCheck: skipSharedCheck}
		if !nonInteractive && !force {
			opts.Confirm = func(dir string) bool { return ask("Re-format filesystem in " + dir + " ?") }
		}
		if err := namenode.BootstrapStandby(ctx, cfg, deps, opts); err != nil {
			fmt.Fprintf(inv.Env.Stderr, "hdfs namenode -bootstrapStandby: %v\n", err)
			return exitFail
		}
		return exitOK
	case rollback:
		opts := namenode.RollbackOptions{Confirm: func(q string) bool {
			fmt.Fprintln(inv.Env.Stderr, `"rollBack" will remove the current state of the file system,
returning you to the state prior to initiating your recent
upgrade. This action is permanent and cannot be undone. If you
are performing a rollback in an HA environment, you should be
certain that no NameNode process is running on any host.`)
			return ask(q)
		}}
		if err := namenode.Rollback(ctx, cfg, deps, opts); err != nil {
			fmt.Fprintf(inv.Env.Stderr, "hdfs namenode -rollback: %v\n", err)
			return exitFail
		}
		return exitOK
	case upgrade, upgradeOnly:
		if err := namenode.Upgrade(ctx, cfg, deps); err != nil {
			inv.Logger.Error("NameNode upgrade failed", "err", err)
			fmt.Fprintf(inv.Env.Stderr, "hdfs namenode -upgrade: %v\n", err)
			return exitFail
		}
		if upgradeOnly {
			return exitOK
		}
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

	sigs := relaySignals(inv, "shutting down")
	defer sigs.stop()
	nn, err := namenode.Start(ctx, cfg, deps)
	if err != nil {
		inv.Logger.Error("NameNode failed to start", "err", err)
		return exitFail
	}
	inv.Logger.Info("NameNode up", "rpc", nn.RPCAddr().String())
	return serveUntilStopped(inv, "NameNode", nn, sigs)
}

// runHelper runs a Checkpoint Node, a Backup Node or a Secondary NameNode in
// the foreground until SIGINT or SIGTERM.
func runHelper(inv *Invocation, role namenode.Role, opts namenode.HelperOptions) int {
	cfg, err := namenode.HelperConfigFrom(inv.Conf, role)
	if err != nil {
		inv.Logger.Error("Failed to start "+role.String(), "err", err)
		fmt.Fprintf(inv.Env.Stderr, "%v\n", err)
		return exitFail
	}
	deps := namenode.Deps{FS: vfs.Default, Clock: clock.Real{}, Logger: inv.Logger, Conf: inv.Conf}
	sigs := relaySignals(inv, "shutting down")
	defer sigs.stop()
	nn, err := namenode.StartHelper(context.Background(), role, cfg, deps, opts)
	if err != nil {
		inv.Logger.Error("Failed to start "+role.String(), "err", err)
		fmt.Fprintf(inv.Env.Stderr, "%v\n", err)
		return exitFail
	}
	return serveUntilStopped(inv, role.String(), nn, sigs)
}

// storageDirName is how Hadoop names a storage directory in its messages.
func storageDirName(dir string) string {
	return "Storage Directory root= " + dir + "; location= null"
}
