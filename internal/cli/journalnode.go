package cli

import (
	"context"
	"fmt"

	"github.com/hdfsgo/hdfsgo/internal/qjournal/server"
)

const journalnodeUsage = `Usage: hdfs journalnode

Runs a JournalNode in the foreground until SIGINT or SIGTERM: one replica of
the shared edit log of HA NameNodes whose dfs.namenode.shared.edits.dir is
qjournal://jn1:8485;jn2:8485;jn3:8485/JOURNALID. It keeps one directory per
journal id under dfs.journalnode.edits.dir and serves RPC on
dfs.journalnode.rpc-address (8485) and HTTP on dfs.journalnode.http-address
(8480).
`

func runJournalnode(inv *Invocation) int {
	if len(inv.Args) > 0 {
		fmt.Fprint(inv.Env.Stderr, journalnodeUsage)
		return exitUsage
	}
	cfg, err := server.ConfigFrom(inv.Conf)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "hdfs journalnode: %v\n", err)
		return exitFail
	}
	sigs := relaySignals(inv, "shutting down")
	defer sigs.stop()
	jn, err := server.Start(context.Background(), cfg, server.Deps{Logger: inv.Logger, Conf: inv.Conf})
	if err != nil {
		inv.Logger.Error("JournalNode failed to start", "err", err)
		return exitFail
	}
	inv.Logger.Info("JournalNode up", "rpc", jn.RPCAddr().String(), "http", jn.HTTPAddr().String())
	return serveUntilStopped(inv, "JournalNode", jn, sigs)
}
