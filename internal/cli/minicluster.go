package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/minicluster"
)

const miniclusterUsage = `Usage: hdfs minicluster [-dir DIR] [-keep] [-datanodes N] [-nnport PORT] [-httpport PORT] [-tcponly] [-ha [-sharedDir] [-zk HOST:PORT[,...]]]

Runs a NameNode and N DataNodes in this process on 127.0.0.1 until Ctrl-C.

  -dir DIR        keep all data under DIR (default: a fresh temporary directory)
  -keep           keep DIR when stopping (a temporary DIR is removed otherwise);
                  with an existing DIR, reuse its formatted NameNode
  -datanodes N    number of DataNodes (default 3)
  -nnport PORT    NameNode RPC port (default 8020; 0 picks a free port)
  -httpport PORT  NameNode web port (default 9870, or a free port with
                  -nnport 0; 0 picks a free port). DataNodes' web servers
                  take free ports
  -tcponly        no UNIX domain sockets: local clients reach the DataNodes
                  over TCP too
  -ha             two NameNodes, nn1 (active) and nn2 (standby), of nameservice
                  ns1 over three JournalNodes (qjournal://, run in this
                  process): fs.defaultFS is hdfs://ns1, and hdfs haadmin
                  works against them
  -sharedDir      with -ha: share an edits directory in DIR (file://)
                  instead of running JournalNodes
  -zk QUORUM      with -ha: automatic failover through the ZooKeeper at QUORUM
                  (ha.zookeeper.quorum): a failover controller per NameNode
                  (hdfs zkfc, in this process) elects the active one and
                  replaces it when it fails; /hadoop-ha/ns1 in that ZooKeeper
                  is formatted afresh

It writes a client configuration to DIR/conf: point HADOOP_CONF_DIR at it.
Clients using it send their data to the DataNodes through UNIX domain
sockets in DIR (dfs.domain.socket.path, dfs.client.domain.socket.data.traffic),
faster than loopback TCP; stock clients and other hosts use TCP as usual.
`

func runMinicluster(inv *Invocation) int {
	fs := flag.NewFlagSet("minicluster", flag.ContinueOnError)
	fs.SetOutput(inv.Env.Stderr)
	fs.Usage = func() { fmt.Fprint(inv.Env.Stderr, miniclusterUsage) }
	dir := fs.String("dir", "", "")
	keep := fs.Bool("keep", false, "")
	n := fs.Int("datanodes", 3, "")
	port := fs.Int("nnport", 8020, "")
	httpPort := fs.Int("httpport", 9870, "")
	tcpOnly := fs.Bool("tcponly", false, "")
	haMode := fs.Bool("ha", false, "")
	zk := fs.String("zk", "", "")
	sharedDir := fs.Bool("sharedDir", false, "")
	if err := fs.Parse(inv.Args); err != nil || fs.NArg() > 0 {
		return exitUsage
	}
	if *zk != "" && !*haMode {
		fmt.Fprintln(inv.Env.Stderr, "hdfs minicluster: -zk needs -ha")
		return exitUsage
	}
	httpSet := false
	fs.Visit(func(f *flag.Flag) { httpSet = httpSet || f.Name == "httpport" })
	if *port == 0 && !httpSet {
		*httpPort = 0
	}
	if *n < 0 || *port < 0 || *port > 65535 || *httpPort < 0 || *httpPort > 65535 || (*sharedDir && !*haMode) {
		fmt.Fprint(inv.Env.Stderr, miniclusterUsage)
		return exitUsage
	}
	temp := false
	if *dir == "" {
		d, err := os.MkdirTemp("", "hdfsgo-minicluster-")
		if err != nil {
			fmt.Fprintf(inv.Env.Stderr, "hdfs minicluster: %v\n", err)
			return exitFail
		}
		*dir, temp = d, true
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "hdfs minicluster: %v\n", err)
		return exitFail
	}
	datanodes := *n
	if datanodes == 0 {
		datanodes = -1
	}
	// Everything the user configured (--config, -D) applies to every role,
	// except the addresses and directories the cluster assigns.
	var overrides []conf.KeyValue
	for _, k := range inv.Conf.Keys() {
		if src := inv.Conf.Source(k); src != conf.SourceDefault {
			v, _ := inv.Conf.Get(k)
			overrides = append(overrides, conf.KeyValue{Key: k, Value: v})
		}
	}
	ctx := context.Background()
	c, err := minicluster.Start(ctx, minicluster.Options{
		Dir: abs, DataNodes: datanodes, NameNodePort: *port, NameNodeHTTPPort: *httpPort, Conf: overrides,
		Reuse: *keep, Logger: inv.Logger, DomainSockets: !*tcpOnly, HA: *haMode, ZooKeeper: *zk, SharedEditsDir: *sharedDir,
	})
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "hdfs minicluster: %v\n", err)
		if *port == 8020 || *httpPort == 9870 {
			fmt.Fprintln(inv.Env.Stderr, "(if port 8020 or 9870 is taken, try -nnport 0, which picks free ports)")
		}
		return exitFail
	}
	confDir := filepath.Join(abs, "conf")
	if err := c.WriteConfig(confDir); err != nil {
		fmt.Fprintf(inv.Env.Stderr, "hdfs minicluster: writing %s: %v\n", confDir, err)
		c.Close()
		return exitFail
	}
	w := inv.Env.Stdout
	nns := c.NameNodes()
	fmt.Fprintf(w, "hdfsgo minicluster is up: %d NameNode(s), %d DataNode(s)\n", len(nns), len(c.DataNodes()))
	fmt.Fprintf(w, "  fs.defaultFS    %s\n", c.URI())
	if *haMode {
		for i, nn := range nns {
			fmt.Fprintf(w, "  NameNode nn%d    %s  rpc %s  web http://%s/\n", i+1, nn.HAState(), nn.RPCAddr(), nn.HTTPAddr())
		}
		for i, a := range c.ControllerAddrs() {
			fmt.Fprintf(w, "  zkfc of nn%d     rpc %s  (ZooKeeper %s)\n", i+1, a, *zk)
		}
		for i, jn := range c.JournalNodes() {
			fmt.Fprintf(w, "  JournalNode %d   rpc %s  web http://%s/\n", i, jn.RPCAddr(), jn.HTTPAddr())
		}
	} else {
		fmt.Fprintf(w, "  NameNode web    http://%s/  (metrics: /jmx)\n", c.NameNode().HTTPAddr())
	}
	for i, dn := range c.DataNodes() {
		fmt.Fprintf(w, "  DataNode %d      data %s  ipc %s  web http://%s/", i, dn.XferAddr(), dn.IPCAddr(), dn.HTTPAddr())
		if p := dn.DomainSocket(); p != "" {
			fmt.Fprintf(w, "  socket %s", p)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  data            %s\n", abs)
	fmt.Fprintf(w, "\nexport HADOOP_CONF_DIR=%s\nthen e.g.: hdfs dfs -put FILE /  and  hdfs dfs -ls /\n", confDir)
	if *haMode {
		fmt.Fprintf(w, "and: hdfs haadmin -getAllServiceState  and  hdfs haadmin -failover nn1 nn2\n")
	}
	fmt.Fprintf(w, "\nCtrl-C stops the cluster.\n")

	var sigs <-chan os.Signal
	if inv.Env.Signals != nil {
		ch, stop := inv.Env.Signals()
		defer stop()
		sigs = ch
	}
	stopped := make(chan error, len(nns))
	for _, nn := range nns {
		go func() {
			<-nn.Done()
			stopped <- nn.Err()
		}()
	}
	select {
	case s := <-sigs:
		inv.Logger.Info("stopping the minicluster", "signal", s.String())
	case err := <-stopped:
		inv.Logger.Error("a NameNode stopped", "err", err)
	}
	code := exitOK
	if err := c.Close(); err != nil {
		inv.Logger.Error("stopping", "err", err)
		code = exitFail
	}
	if temp && !*keep {
		os.RemoveAll(abs)
	} else {
		fmt.Fprintf(w, "data kept in %s (restart with: hdfs minicluster -dir %s -keep)\n", abs, abs)
	}
	return code
}
