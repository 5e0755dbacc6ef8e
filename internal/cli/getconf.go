package cli

import (
	"fmt"
	"net"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

const getconfUsage = `hdfs getconf is a utility for getting configuration information from the configuration files.

hdfs getconf
	[-namenodes]			gets the list of NameNodes in the cluster.
	[-secondaryNameNodes]			gets the list of Secondary NameNodes in the cluster.
	[-backupNodes]			gets the list of Backup Nodes in the cluster.
	[-journalNodes]			gets the list of JournalNodes in the cluster.
	[-includeFile]			gets the include file path that defines the DataNodes that can join the cluster.
	[-excludeFile]			gets the exclude file path that defines the DataNodes that need to be decommissioned.
	[-nnRpcAddresses]			gets the NameNode RPC addresses
	[-confKey [key]]			gets a specific key from the configuration
`

func runGetconf(inv *Invocation) int {
	args := inv.Args
	if len(args) == 0 {
		fmt.Fprint(inv.Env.Stderr, getconfUsage)
		return exitUsage
	}
	switch args[0] {
	case "-confKey":
		if len(args) != 2 {
			fmt.Fprint(inv.Env.Stderr, getconfUsage)
			return exitUsage
		}
		v, ok := inv.Conf.Get(args[1])
		if !ok {
			fmt.Fprintf(inv.Env.Stderr, "Configuration %s is missing.\n", args[1])
			return exitFail
		}
		fmt.Fprintln(inv.Env.Stdout, v)
		return exitOK
	case "-namenodes", "-nnRpcAddresses":
		if len(args) != 1 {
			fmt.Fprint(inv.Env.Stderr, getconfUsage)
			return exitUsage
		}
		addrs, err := inv.Conf.NameNodeRPCAddresses()
		if err != nil {
			fmt.Fprintln(inv.Env.Stderr, err)
			return exitFail
		}
		if args[0] == "-nnRpcAddresses" {
			for _, a := range addrs {
				fmt.Fprintln(inv.Env.Stdout, a.Address)
			}
			return exitOK
		}
		hosts := make([]string, 0, len(addrs))
		for _, a := range addrs {
			h, _, err := net.SplitHostPort(a.Address)
			if err != nil {
				h = a.Address
			}
			hosts = append(hosts, h)
		}
		fmt.Fprintln(inv.Env.Stdout, strings.Join(hosts, " "))
		return exitOK
	case "-secondaryNameNodes", "-backupNodes", "-journalNodes", "-includeFile", "-excludeFile":
		if len(args) != 1 {
			fmt.Fprintf(inv.Env.Stderr, "Did not expect argument: %s\n", args[1])
			return exitFail
		}
		return getconfHosts(inv, args[0])
	}
	fmt.Fprint(inv.Env.Stderr, getconfUsage)
	return exitUsage
}

// getconfHosts answers the getconf options that list the hosts of a role
// (space-separated, from its address keys: per NameNode of each
// nameservice when those are set) or print a file name key's value.
func getconfHosts(inv *Invocation, opt string) int {
	c := inv.Conf
	out := inv.Env.Stdout
	switch opt {
	case "-includeFile":
		fmt.Fprintln(out, strings.TrimSpace(c.String(conf.DFSHosts)))
		return exitOK
	case "-excludeFile":
		fmt.Fprintln(out, strings.TrimSpace(c.String(conf.DFSHostsExclude)))
		return exitOK
	case "-journalNodes":
		var hosts []string
		seen := map[string]bool{}
		for _, u := range journalURIs(c) {
			for _, h := range qjournalHosts(u) {
				if !seen[h] {
					seen[h] = true
					hosts = append(hosts, h)
				}
			}
		}
		fmt.Fprintln(out, strings.Join(hosts, " "))
		return exitOK
	}
	key := conf.DFSNameNodeSecondaryHTTPAddress
	if opt == "-backupNodes" {
		key = conf.DFSNameNodeBackupAddress
	}
	var hosts []string
	for _, addr := range keyPerNameNode(c, key) {
		h, _, err := net.SplitHostPort(addr)
		if err != nil {
			h = addr
		}
		hosts = append(hosts, h)
	}
	fmt.Fprintln(out, strings.Join(hosts, " "))
	return exitOK
}

// keyPerNameNode is key's value for each NameNode of each nameservice
// (key.NS.NN, else key.NS), or key itself without nameservices.
func keyPerNameNode(c *conf.Conf, key string) []string {
	var out []string
	for _, ns := range c.Nameservices() {
		nns := c.Strings("dfs.ha.namenodes." + ns)
		if len(nns) == 0 {
			if v := strings.TrimSpace(c.String(key + "." + ns)); v != "" {
				out = append(out, v)
			}
			continue
		}
		for _, nn := range nns {
			if v := strings.TrimSpace(c.String(key + "." + ns + "." + nn)); v != "" {
				out = append(out, v)
			}
		}
	}
	if len(out) == 0 {
		if v := strings.TrimSpace(c.String(key)); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// journalURIs are the shared edits dirs of every nameservice (and the
// plain key).
func journalURIs(c *conf.Conf) []string {
	var out []string
	key := conf.DFSNameNodeSharedEditsDir
	for _, ns := range c.Nameservices() {
		if v := strings.TrimSpace(c.String(key + "." + ns)); v != "" {
			out = append(out, v)
		}
		for _, nn := range c.Strings("dfs.ha.namenodes." + ns) {
			if v := strings.TrimSpace(c.String(key + "." + ns + "." + nn)); v != "" {
				out = append(out, v)
			}
		}
	}
	if v := strings.TrimSpace(c.String(conf.DFSNameNodeSharedEditsDir)); v != "" {
		out = append(out, v)
	}
	return out
}

// qjournalHosts are the hosts of a qjournal://h1:p1;h2:p2/jid URI; other
// URIs have none.
func qjournalHosts(uri string) []string {
	rest, ok := strings.CutPrefix(uri, "qjournal://")
	if !ok {
		return nil
	}
	auth, _, _ := strings.Cut(rest, "/")
	var hosts []string
	for _, hp := range strings.Split(auth, ";") {
		hp = strings.TrimSpace(hp)
		if hp == "" {
			continue
		}
		h, _, err := net.SplitHostPort(hp)
		if err != nil {
			h = hp
		}
		hosts = append(hosts, h)
	}
	return hosts
}
