package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/cli/fsshell"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/imagetransfer"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// fetchImage is dfsadmin -fetchImage DIR: the NameNode's newest image,
// downloaded from its image servlet (dfs.namenode.http-address), lands in
// DIR as fsimage_<txid>, as Hadoop's does. With HA each NameNode is tried
// in turn.
func fetchImage(inv *Invocation, args []string) int {
	if len(args) != 1 {
		return dfsadminUsageOf(inv, "-fetchImage")
	}
	dst, err := filepath.Abs(args[0])
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "fetchImage: %v\n", err)
		return exitAdminError
	}
	if fi, err := os.Stat(dst); err != nil || !fi.IsDir() {
		fmt.Fprintf(inv.Env.Stderr, "fetchImage: %s is not a directory\n", args[0])
		return exitAdminError
	}
	cfg, err := imagetransfer.ConfigFrom(inv.Conf)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "fetchImage: %v\n", err)
		return exitAdminError
	}
	c, err := imagetransfer.NewClient(cfg, imagetransfer.ClientOptions{FS: vfs.Default})
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "fetchImage: %v\n", err)
		return exitAdminError
	}
	defer c.Close()
	var lastErr error
	for _, addr := range nameNodeHTTPAddresses(inv.Conf) {
		// The image arrives in a name-dir layout (current/, .md5) under a
		// temporary directory; only the image file is kept.
		tmp, err := os.MkdirTemp(dst, ".fetchImage-")
		if err == nil {
			err = os.Mkdir(filepath.Join(tmp, "current"), 0o700)
		}
		if err != nil {
			os.RemoveAll(tmp)
			fmt.Fprintf(inv.Env.Stderr, "fetchImage: %v\n", err)
			return exitAdminError
		}
		txid, _, err := c.DownloadImage(context.Background(), "http://"+addr, imagetransfer.Latest, []string{tmp}, imagetransfer.GetOptions{})
		if err == nil {
			name := storage.ImageName(txid)
			err = os.Rename(filepath.Join(tmp, "current", name), filepath.Join(dst, name))
		}
		os.RemoveAll(tmp)
		if err == nil {
			return exitOK
		}
		lastErr = err
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("no NameNode web address (%s) is configured", conf.DFSNameNodeHTTPAddress)
	}
	fmt.Fprintf(inv.Env.Stderr, "fetchImage: %v\n", lastErr)
	return exitAdminError
}

// nameNodeHTTPAddresses are the NameNodes' web addresses: per NameNode of
// each nameservice, else dfs.namenode.http-address; a wildcard host is
// replaced by the host of the NameNode's RPC address.
func nameNodeHTTPAddresses(c *conf.Conf) []string {
	addrs := keyPerNameNode(c, conf.DFSNameNodeHTTPAddress)
	rpcHost := ""
	if rpc, _, err := fsshell.NameNodeAddresses(c); err == nil && len(rpc) > 0 {
		rpcHost, _, _ = net.SplitHostPort(rpc[0])
	}
	for i, a := range addrs {
		h, p, err := net.SplitHostPort(a)
		if err == nil && (h == "" || h == "0.0.0.0" || h == "::") && rpcHost != "" {
			addrs[i] = net.JoinHostPort(rpcHost, p)
		}
		addrs[i] = strings.TrimPrefix(addrs[i], "http://")
	}
	return addrs
}
