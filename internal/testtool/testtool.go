// Package testtool lets tests use outside programs (Debian's hdfs-cli, iptables,
// ...) without making the suite fail on a machine that lacks them: a missing tool
// skips the test with the command that installs it, unless HDFSGO_REQUIRE_TOOLS=1
// (set by .ci/run), in which case the test fails; AllocBound checks that a decoder of outside
// input allocates in proportion to the bytes it received; Buffer collects what loggers and
// commands write from many goroutines. Test-support only.
package testtool

import (
	"os"
	"os/exec"
	"testing"
)

// RequireEnv is the environment variable that turns a missing tool from a skip
// into a failure.
const RequireEnv = "HDFSGO_REQUIRE_TOOLS"

// Require returns the path of the program (a name looked up in PATH, or an
// absolute path); when it is missing the test is skipped — or, under
// HDFSGO_REQUIRE_TOOLS=1, failed — with a message naming install.
func Require(t testing.TB, program, install string) string {
	t.Helper()
	p, err := exec.LookPath(program)
	if err == nil {
		return p
	}
	msg := program + " is not installed (install it with: " + install + ")"
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Root skips (or, under HDFSGO_REQUIRE_TOOLS=1, fails) a test that needs root.
func Root(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	msg := "needs root: " + why
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
