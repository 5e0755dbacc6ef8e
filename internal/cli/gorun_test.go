package cli

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// childrenOf lists the processes whose parent is pid (Linux /proc).
func childrenOf(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut after ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 {
			if pp, err := strconv.Atoi(f[1]); err == nil && pp == pid {
				out = append(out, p)
			}
		}
	}
	return out
}

// TestGoRunSIGTERMStopsMinicluster: SIGTERM to `go run ./cmd/hdfs
// minicluster` (which does not pass it on) stops the cluster too: the
// child notices that its go command is gone and shuts down.
func TestGoRunSIGTERMStopsMinicluster(t *testing.T) {
	if os.Getenv("HDFSGO_LONG") == "" {
		t.Skip("HDFSGO_LONG=1 runs it (it builds and runs the binary with go run)")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs Linux /proc")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, "run", "./cmd/hdfs", "minicluster", "-dir", t.TempDir(), "-nnport", "0", "-datanodes", "0", "-tcponly")
	cmd.Dir = root
	var errb testtool.Buffer
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	up := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "stops the cluster") {
				up <- true
			}
		}
	}()
	select {
	case <-up:
	case <-time.After(5 * time.Minute):
		t.Fatal("the minicluster did not come up under go run")
	}
	// The cluster is the child running "minicluster" (the go command may
	// have others, e.g. its telemetry).
	var kids []int
	for _, k := range childrenOf(cmd.Process.Pid) {
		if cl, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(k), "cmdline")); strings.Contains(string(cl), "minicluster") {
			kids = append(kids, k)
		}
	}
	if len(kids) != 1 {
		t.Fatalf("minicluster children of go run: %v", kids)
	}
	child := kids[0]
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := syscall.Kill(child, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(child), "stat")); strings.Contains(string(b), ") Z ") {
			return // gone, waiting to be reaped by init
		}
		if time.Now().After(deadline) {
			syscall.Kill(child, syscall.SIGKILL)
			cl, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(child), "cmdline"))
			t.Fatalf("the minicluster (pid %d: %q) outlived its go run by 30 s; its log:\n%s", child, cl, errb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
