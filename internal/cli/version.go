package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is hdfsgo's release version.
const Version = "0.1.0-dev"

// CompatibleHadoop names the Hadoop line whose protocols hdfsgo speaks.
const CompatibleHadoop = "3.x"

func runVersion(inv *Invocation) int {
	if len(inv.Args) > 0 {
		fmt.Fprintln(inv.Env.Stderr, "Usage: hdfs version")
		return exitUsage
	}
	w := inv.Env.Stdout
	fmt.Fprintf(w, "hdfsgo %s\n", Version)
	fmt.Fprintf(w, "Compatible with Hadoop %s (Hadoop RPC 9, DataTransferProtocol 28)\n", CompatibleHadoop)
	rev := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
	}
	fmt.Fprintf(w, "Source revision %s\n", rev)
	fmt.Fprintf(w, "Compiled with %s for %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}
