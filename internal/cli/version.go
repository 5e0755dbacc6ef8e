package cli

import (
	"fmt"
	"runtime"

	"github.com/hdfsgo/hdfsgo/internal/version"
)

func runVersion(inv *Invocation) int {
	if len(inv.Args) > 0 {
		fmt.Fprintln(inv.Env.Stderr, "Usage: hdfs version")
		return exitUsage
	}
	w := inv.Env.Stdout
	fmt.Fprintf(w, "hdfsgo %s\n", version.Release)
	fmt.Fprintf(w, "Compatible with Hadoop %s (Hadoop RPC 9, DataTransferProtocol 28)\n", version.CompatibleHadoop)
	fmt.Fprintf(w, "Source revision %s\n", version.Revision())
	fmt.Fprintf(w, "Compiled with %s for %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}
