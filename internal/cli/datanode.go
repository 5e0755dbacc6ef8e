package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/datanode"
)

const datanodeUsage = `Usage: hdfs datanode [-regular | -rollback | -rollingupgrade rollback]

Runs a DataNode in the foreground until SIGINT or SIGTERM, with its volumes
(dfs.datanode.data.dir) and NameNode (fs.defaultFS, or the HA rpc-address keys)
from the configuration. "hdfs dfsadmin -reconfig datanode HOST:IPC_PORT start"
makes it read the configuration files again and apply a changed
dfs.datanode.data.dir (volumes added and removed while it runs).

  -regular      start normally (the default); a block pool whose storage is
                older than the NameNode's (after "hdfs namenode -upgrade") or
                of an older layout is upgraded, its old state kept until the
                upgrade is finalized
  -rollback     roll every block pool back to the state kept before the last
                upgrade (after "hdfs namenode -rollback"), then run
  -rollingupgrade rollback
                not supported: hdfsgo has no rolling upgrades
`

func runDatanode(inv *Invocation) int {
	rollback := false
	args := inv.Args
	for i := 0; i < len(args); i++ {
		switch strings.ToLower(args[i]) {
		case "-regular":
		case "-rollback":
			rollback = true
		case "-rollingupgrade":
			if i+1 >= len(args) || !strings.EqualFold(args[i+1], "rollback") {
				fmt.Fprint(inv.Env.Stderr, datanodeUsage)
				return exitUsage
			}
			fmt.Fprintln(inv.Env.Stderr, "hdfs datanode: -rollingupgrade rollback is not supported: hdfsgo has no rolling upgrades (use -rollback after `hdfs namenode -rollback`)")
			return exitFail
		default:
			fmt.Fprint(inv.Env.Stderr, datanodeUsage)
			return exitUsage
		}
	}
	cfg, err := datanode.ConfigFrom(inv.Conf)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "hdfs datanode: %v\n", err)
		return exitFail
	}
	cfg.Rollback = rollback
	sigs := relaySignals(inv, "shutting down")
	defer sigs.stop()
	dn, err := datanode.Start(context.Background(), cfg, datanode.Deps{Logger: inv.Logger, LogLevel: inv.LevelVar, Conf: inv.Conf, ReloadConf: inv.Reload,
		Failpoint: armedFailpoint(inv)})
	if err != nil {
		inv.Logger.Error("DataNode failed to start", "err", err)
		return exitFail
	}
	inv.Logger.Info("DataNode up", "xfer", dn.XferAddr().String(), "ipc", dn.IPCAddr().String(), "http", dn.HTTPAddr().String())
	return serveUntilStopped(inv, "DataNode", dn, sigs)
}
