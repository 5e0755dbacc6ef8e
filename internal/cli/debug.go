package cli

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

const debugUsage = `Usage: hdfs debug <command> [arguments]

These commands are for advanced users only.

  recoverLease -path <path> [-retries <num-retries>]
    Recover the lease on the specified path. The path must reside on an HDFS
    file system. The default number of retries is 1.
`

func runDebug(inv *Invocation) int {
	if len(inv.Args) == 0 {
		fmt.Fprint(inv.Env.Stderr, debugUsage)
		return exitUsage
	}
	switch inv.Args[0] {
	case "recoverLease":
		return debugRecoverLease(inv, inv.Args[1:])
	case "verifyMeta", "computeMeta", "verifyEC":
		fmt.Fprintf(inv.Env.Stderr, "hdfs debug: %s is not supported yet\n", inv.Args[0])
		return exitFail
	}
	fmt.Fprint(inv.Env.Stderr, debugUsage)
	return exitUsage
}

func debugRecoverLease(inv *Invocation, args []string) int {
	path, retries := "", 1
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-path":
			if i+1 < len(args) {
				i++
				path = args[i]
				continue
			}
		case "-retries":
			if i+1 < len(args) {
				i++
				n, err := strconv.Atoi(args[i])
				if err == nil && n >= 1 {
					retries = n
					continue
				}
			}
		}
		fmt.Fprint(inv.Env.Stderr, debugUsage)
		return exitUsage
	}
	if path == "" {
		fmt.Fprintln(inv.Env.Stderr, "You must supply a -path argument to recoverLease.")
		return exitUsage
	}
	c, _, err := nnClient(inv)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "recoverLease: %v\n", err)
		return exitFail
	}
	defer c.Close()
	clientName := fmt.Sprintf("DFSClient_NONMAPREDUCE_recoverLease_%d", time.Now().UnixNano())
	for try := 1; try <= retries; try++ {
		var resp hdfs.RecoverLeaseResponseProto
		err := c.Call(context.Background(), "recoverLease", &hdfs.RecoverLeaseRequestProto{Src: proto.String(path), ClientName: proto.String(clientName)}, &resp)
		switch {
		case err != nil:
			fmt.Fprintf(inv.Env.Stdout, "recoverLease got exception: %s\n", errMessage(err))
		case resp.GetResult():
			fmt.Fprintf(inv.Env.Stdout, "recoverLease SUCCEEDED on %s\n", path)
			return exitOK
		default:
			fmt.Fprintln(inv.Env.Stdout, "recoverLease returned false.")
		}
		if try < retries {
			fmt.Fprintln(inv.Env.Stdout, "Retrying in 5000 ms...")
			time.Sleep(5 * time.Second)
			fmt.Fprintf(inv.Env.Stdout, "Retry #%d\n", try)
		}
	}
	fmt.Fprintf(inv.Env.Stdout, "Giving up on recoverLease for %s after %d tries\n", path, retries)
	return exitFail
}
