package cli

import (
	"fmt"
	"net"
	"strings"
)

const getconfUsage = `hdfs getconf is a utility for getting configuration information from the configuration files.

hdfs getconf
	[-namenodes]			gets the list of NameNodes in the cluster.
	[-nnRpcAddresses]		gets the NameNode RPC addresses
	[-confKey [key]]		gets a specific key from the configuration
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
		fmt.Fprintf(inv.Env.Stderr, "hdfs getconf: %s is not supported yet\n", args[0])
		return exitFail
	}
	fmt.Fprint(inv.Env.Stderr, getconfUsage)
	return exitUsage
}
