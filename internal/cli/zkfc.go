package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/zkfc"
)

// zkfcUsage is Hadoop's usage text of the ZK failover controller.
const zkfcUsage = "Usage: hdfs zkfc [ -formatZK [-force] [-nonInteractive] ]\n" +
	"\t-force: formats the znode if the znode exists.\n" +
	"\t-nonInteractive: formats the znode aborts if the znode exists,\n" +
	"\tunless -force option is specified.\n"

// Hadoop's exit codes of the controller (ZKFailoverController.ERR_CODE_*).
const (
	exitZKFCFormatDenied   = 2
	exitZKFCNoParentZNode  = 3
	exitZKFCNoFencer       = 4
	exitZKFCNotAutoEnabled = 5
	exitZKFCNoZooKeeper    = 6
)

// runZKFC is hdfs zkfc: the ZooKeeper failover controller of the NameNode
// this configuration describes (dfs.ha.namenode.id, or the NameNode whose
// RPC address is local), in the foreground until SIGINT or SIGTERM; or,
// with -formatZK, the creation of its parent znode.
func runZKFC(inv *Invocation) int {
	format, force, interactive := false, false, true
	args := inv.Args
	if len(args) > 0 {
		if args[0] != "-formatZK" {
			return zkfcBadArg(inv, args[0])
		}
		format = true
		for _, a := range args[1:] {
			switch a {
			case "-force":
				force = true
			case "-nonInteractive":
				interactive = false
			default:
				return zkfcBadArg(inv, a)
			}
		}
	}
	ctx := context.Background()
	cfg, err := zkfc.ConfigFrom(ctx, inv.Conf, haUser(inv), nil)
	if err != nil {
		return zkfcFailed(inv, err)
	}
	if format {
		opts := zkfc.FormatOptions{Force: force, Logger: inv.Logger}
		if interactive {
			in := bufio.NewReader(inv.Env.Stdin)
			opts.Confirm = func(parent string) bool {
				fmt.Fprint(inv.Env.Stderr, "===============================================\n"+
					"The configured parent znode "+parent+" already exists.\n"+
					"Are you sure you want to clear all failover information from\n"+
					"ZooKeeper?\n"+
					"WARNING: Before proceeding, ensure that all HDFS services and\n"+
					"failover controllers are stopped!\n"+
					"===============================================\n")
				return confirmPrompt(in, inv.Env.Stderr, "Proceed formatting "+parent+"?")
			}
		}
		if err := zkfc.Format(ctx, cfg, opts); err != nil {
			return zkfcFailed(inv, err)
		}
		return exitOK
	}
	sigs := relaySignals(inv, "shutting down")
	defer sigs.stop()
	ctl, err := zkfc.Start(ctx, cfg, zkfc.Deps{Logger: inv.Logger})
	if err != nil {
		return zkfcFailed(inv, err)
	}
	inv.Logger.Info("ZK Failover Controller up", "rpc", ctl.RPCAddr().String(), "namenode", cfg.Local.String())
	return serveUntilStopped(inv, "ZK Failover Controller", ctl, sigs)
}

func zkfcBadArg(inv *Invocation, arg string) int {
	fmt.Fprint(inv.Env.Stderr, zkfcUsage+"\n")
	inv.Logger.Error("Bad argument: " + arg)
	return exitUsage
}

// zkfcFailed logs why the controller did not run and returns Hadoop's
// exit code for it.
func zkfcFailed(inv *Invocation, err error) int {
	msg := err.Error()
	for _, e := range []error{zkfc.ErrFormatDenied, zkfc.ErrNoParentZNode, zkfc.ErrNoFencer, zkfc.ErrAutoFailoverDisabled,
		zkfc.ErrNoZooKeeper, zkfc.ErrBadConfig} {
		msg = strings.ReplaceAll(msg, e.Error()+": ", "")
	}
	inv.Logger.Error(msg)
	switch {
	case errors.Is(err, zkfc.ErrFormatDenied):
		return exitZKFCFormatDenied
	case errors.Is(err, zkfc.ErrNoParentZNode):
		return exitZKFCNoParentZNode
	case errors.Is(err, zkfc.ErrNoFencer):
		return exitZKFCNoFencer
	case errors.Is(err, zkfc.ErrAutoFailoverDisabled):
		return exitZKFCNotAutoEnabled
	case errors.Is(err, zkfc.ErrNoZooKeeper):
		return exitZKFCNoZooKeeper
	}
	return exitFail
}

// confirmPrompt is Hadoop's ToolRunner.confirmPrompt: it asks on errOut
// until the answer is y/yes (true) or n/no (false); the end of the input
// answers no.
func confirmPrompt(in *bufio.Reader, errOut io.Writer, prompt string) bool {
	for range maxPrompts {
		fmt.Fprint(errOut, prompt+" (Y or N) ")
		line, err := in.ReadString('\n')
		answer := strings.TrimRight(line, "\r\n")
		switch strings.ToLower(answer) {
		case "y", "yes":
			return true
		case "n", "no":
			return false
		}
		if err != nil {
			fmt.Fprintln(errOut)
			return false
		}
		fmt.Fprintf(errOut, "Invalid input: %s\n", answer)
	}
	return false
}
