// Package version names this build of hdfsgo: its release, the Hadoop line
// whose protocols it speaks, and the source revision it was built from. The
// CLI prints it (hdfs version) and the daemons' web pages and /jmx show it.
package version

import "runtime/debug"

// Release is hdfsgo's release version.
const Release = "0.1.0-dev"

// CompatibleHadoop names the Hadoop line whose protocols hdfsgo speaks.
const CompatibleHadoop = "3.x"

// Revision is the VCS revision the binary was built from, "unknown" when the
// build recorded none.
func Revision() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// String is the one-line description the web pages show:
// "hdfsgo 0.1.0-dev (revision abc123)".
func String() string {
	rev := Revision()
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return "hdfsgo " + Release + " (revision " + rev + ")"
}
