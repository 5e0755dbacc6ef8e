package crashtest

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"go.uber.org/goleak"
)

// hdfsBin is the path of the hdfs binary: $CRASHTEST_HDFS when set, else
// built once per test binary by TestMain; empty under -short, where every
// test skips.
var hdfsBin string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if bin := os.Getenv("CRASHTEST_HDFS"); bin != "" && !testing.Short() {
		// Test a binary built elsewhere (another revision, a release).
		hdfsBin = bin
	} else if !testing.Short() {
		dir, err := os.MkdirTemp("", "crashtest-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "crashtest:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		bin, err := buildHDFS(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "crashtest:", err)
			return 1
		}
		hdfsBin = bin
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "crashtest: leaked goroutines:", err)
			code = 1
		}
	}
	return code
}

// buildHDFS builds ./cmd/hdfs of this module into dir.
func buildHDFS(dir string) (string, error) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		goTool = "go"
	}
	bin := filepath.Join(dir, "hdfs")
	cmd := exec.Command(goTool, "build", "-o", bin, "github.com/hdfsgo/hdfsgo/cmd/hdfs")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/hdfs: %v\n%s", err, out)
	}
	return bin, nil
}

// needBinary skips the test under -short.
func needBinary(t *testing.T) {
	t.Helper()
	if testing.Short() || hdfsBin == "" {
		t.Skip("process-level crash test; skipped with -short")
	}
}
