package cli

import (
	"context"
	"fmt"

	"github.com/hdfsgo/hdfsgo/internal/datanode"
)

const datanodeUsage = `Usage: hdfs datanode

Runs a DataNode in the foreground until SIGINT or SIGTERM, with its volumes
(dfs.datanode.data.dir) and NameNode (fs.defaultFS, or the HA rpc-address keys)
from the configuration. "hdfs dfsadmin -reconfig datanode HOST:IPC_PORT start"
makes it read the configuration files again and apply a changed
dfs.datanode.data.dir (volumes added and removed while it runs).
`

func runDatanode(inv *Invocation) int {
	if len(inv.Args) > 0 {
		fmt.Fprint(inv.Env.Stderr, datanodeUsage)
		return exitUsage
	}
	cfg, err := datanode.ConfigFrom(inv.Conf)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "hdfs datanode: %v\n", err)
		return exitFail
	}
	dn, err := datanode.Start(context.Background(), cfg, datanode.Deps{Logger: inv.Logger, Conf: inv.Conf, ReloadConf: inv.Reload})
	if err != nil {
		inv.Logger.Error("DataNode failed to start", "err", err)
		return exitFail
	}
	inv.Logger.Info("DataNode up", "xfer", dn.XferAddr().String(), "ipc", dn.IPCAddr().String(), "http", dn.HTTPAddr().String())
	return serveUntilStopped(inv, "DataNode", dn)
}
