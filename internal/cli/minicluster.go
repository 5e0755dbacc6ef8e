package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/minicluster"
)

const miniclusterUsage = `Usage: hdfs minicluster [-dir DIR [-format]] [-keep] [-datanodes N] [-nnport PORT] [-httpport PORT] [-tcponly] [-ha [-sharedDir] [-zk HOST:PORT[,...]]]

Runs a NameNode and N DataNodes in this process on 127.0.0.1 until Ctrl-C.

  -dir DIR        keep all data under DIR (default: a fresh temporary
                  directory). A DIR that already holds a cluster is started
                  again as it is, never formatted, unless -format is given
  -format         with -dir: format DIR's cluster afresh, wiping its data
  -keep           keep the temporary DIR when stopping (it is removed
                  otherwise)
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
	format := fs.Bool("format", false, "")
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
	if *format && *dir == "" {
		fmt.Fprintln(inv.Env.Stderr, "hdfs minicluster: -format needs -dir (a temporary directory is always new)")
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
	reused := !temp && !*format && holdsCluster(abs)
	if reused {
		fmt.Fprintf(inv.Env.Stderr, "hdfs minicluster: %s holds a cluster: starting it again with its data (-format formats it afresh)\n", abs)
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
	sigs := relaySignals(inv, "stopping the minicluster")
	defer sigs.stop()
	ctx := context.Background()
	c, err := minicluster.Start(ctx, minicluster.Options{
		Dir: abs, DataNodes: datanodes, NameNodePort: *port, NameNodeHTTPPort: *httpPort, Conf: overrides,
		Reuse: !*format, Logger: inv.Logger, DomainSockets: !*tcpOnly, HA: *haMode, ZooKeeper: *zk, SharedEditsDir: *sharedDir,
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
	hdfs := hdfsCommand()
	fmt.Fprintf(w, "\nIn another shell, e.g.:\n  export HADOOP_CONF_DIR=%s\n  %s dfs -put FILE /\n  %s dfs -ls /\n", confDir, hdfs, hdfs)
	if *haMode {
		fmt.Fprintf(w, "  %s haadmin -getAllServiceState\n  %s haadmin -failover nn1 nn2\n", hdfs, hdfs)
	}
	fmt.Fprintf(w, "\nCtrl-C stops the cluster.\n")

	// Under "go run", a SIGTERM ends the go command but not this child:
	// stop with the go command rather than hold the ports as an orphan.
	parentGone := make(chan struct{})
	if inv.Env.Signals != nil {
		stopWatch := watchGoRunParent(parentGone)
		defer stopWatch()
	}
	stopped := make(chan error, len(nns))
	for _, nn := range nns {
		go func() {
			<-nn.Done()
			stopped <- nn.Err()
		}()
	}
	select {
	case <-sigs.ctx.Done():
	case err := <-stopped:
		inv.Logger.Error("a NameNode stopped", "err", err)
	case <-parentGone:
		inv.Logger.Info("stopping the minicluster: the go run command that started it has ended")
	}
	code := exitOK
	if err := c.Close(); err != nil {
		inv.Logger.Error("stopping", "err", err)
		code = exitFail
	}
	if temp && !*keep {
		os.RemoveAll(abs)
	} else {
		fmt.Fprintf(w, "data kept in %s (restart with: %s minicluster -dir %s)\n", abs, hdfsCommand(), abs)
	}
	return code
}

// holdsCluster reports whether dir holds a formatted NameNode of a
// minicluster (dir/nn/name, or dir/nn1/name with -ha).
func holdsCluster(dir string) bool {
	for _, nn := range []string{"nn", "nn1", "nn2"} {
		if _, err := os.Stat(filepath.Join(dir, nn, "name", "current", "VERSION")); err == nil {
			return true
		}
	}
	return false
}

// hdfsCommand is how a user starts the binary that runs now, for the
// commands the banner prints: "go run ./cmd/hdfs" for a binary that go run
// built, "hdfs" when that name on PATH is this binary, else its path.
func hdfsCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "hdfs"
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "go run ./cmd/hdfs"
	}
	if p, err := exec.LookPath("hdfs"); err == nil {
		a, errA := os.Stat(p)
		b, errB := os.Stat(exe)
		if errA == nil && errB == nil && os.SameFile(a, b) {
			return "hdfs"
		}
	}
	return exe
}
