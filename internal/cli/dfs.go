package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/cli/fsshell"
	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// runDfs is `hdfs dfs`: Hadoop's FsShell.
func runDfs(inv *Invocation) int {
	env := fsshell.Env{
		Stdout: inv.Env.Stdout,
		Stderr: inv.Env.Stderr,
		Stdin:  inv.Env.Stdin,
		Now:    time.Now,
		TZ:     time.Local,
	}
	if d, err := inv.Conf.Duration(conf.FSTrashInterval); err == nil {
		env.TrashInterval = d
	} else {
		fmt.Fprintf(inv.Env.Stderr, "hdfs dfs: %v\n", err)
		return exitFail
	}
	if n, err := inv.Conf.Int(conf.HadoopShellSafelyDeleteLimitNumFiles); err == nil {
		env.SafelyDeleteLimit = n
	} else {
		fmt.Fprintf(inv.Env.Stderr, "hdfs dfs: %v\n", err)
		return exitFail
	}
	if uri, ok := webhdfsArgs(inv.Args); ok && needsFS(inv.Args) {
		return runWebDfs(inv, uri, env.TrashInterval > 0)
	}
	if isLocalDefaultFS(inv.Conf) {
		// Hadoop's default fs.defaultFS, file:///: paths are local ones.
		env.LocalDefault = true
		env.DialHDFS = func(uri string) (*client.FileSystem, error) {
			return fsshell.DialFromConf(inv.Conf.With(conf.KeyValue{Key: conf.FSDefaultFS, Value: uri}), "", inv.Env.Stderr)
		}
		return fsshell.Run(context.Background(), env, nil, inv.Args)
	}
	var fsys *client.FileSystem
	if needsFS(inv.Args) {
		var err error
		fsys, err = fsshell.DialFromConf(inv.Conf, "", inv.Env.Stderr)
		if err != nil {
			fmt.Fprintf(inv.Env.Stderr, "hdfs dfs: %v\n", err)
			return exitFail
		}
		defer fsys.Close()
	}
	return fsshell.Run(context.Background(), env, fsys, inv.Args)
}

// isLocalDefaultFS reports whether paths without a scheme are local: when
// fs.defaultFS is set to a file: URI, or left at its default (file:///)
// with no NameNode address configured either (a dfs.namenode.rpc-address
// alone still names the cluster, as it always has here).
func isLocalDefaultFS(c *conf.Conf) bool {
	scheme, _, ok := strings.Cut(strings.TrimSpace(c.String(conf.FSDefaultFS)), ":")
	if !ok || !strings.EqualFold(scheme, "file") {
		return false
	}
	if c.Source(conf.FSDefaultFS) != conf.SourceDefault {
		return true
	}
	_, _, err := fsshell.NameNodeAddresses(c)
	return err != nil
}

// needsFS reports whether the shell command talks to a file system (help and
// usage do not).
func needsFS(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "-help", "-usage", "--help":
		return false
	}
	return true
}
