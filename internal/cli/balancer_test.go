package cli

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/balancer"
	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// TestBalancerOptions: Hadoop's options and their errors.
func TestBalancerOptions(t *testing.T) {
	hostsFile := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hostsFile, []byte("dn1.example.com\n10.0.0.2:9866 # rack 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inv := func(args ...string) *Invocation {
		return &Invocation{Args: args, Env: Env{Getenv: func(string) string { return "" }},
			Conf:   conf.Defaults().With(conf.KeyValue{Key: conf.FSDefaultFS, Value: "hdfs://nn.example.com:8020"}),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	}
	cfg, err := balancerConfig(inv("-threshold", "5", "-policy", "blockpool", "-exclude", "-f", hostsFile,
		"-source", "a, b", "-idleiterations", "-1", "-sortTopNodes", "-runDuringUpgrade", "-blockpools", "BP-1,BP-2"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Threshold != 5 || cfg.Policy != balancer.PolicyBlockPool || !cfg.Exclude["dn1.example.com"] || !cfg.Exclude["10.0.0.2:9866"] ||
		len(cfg.Exclude) != 2 || !cfg.Source["a"] || !cfg.Source["b"] || cfg.IdleIterations != -1 || !cfg.SortTopNodes ||
		!cfg.RunDuringUpgrade || len(cfg.BlockPools) != 2 || cfg.Include != nil {
		t.Fatalf("config %+v", cfg)
	}
	if cfg.NameNodes[0] != "nn.example.com:8020" || cfg.URI != "hdfs://nn.example.com:8020" || cfg.MaxConcurrentMoves != 100 ||
		cfg.GetBlocksMinSize != 10<<20 || cfg.Sleep.Seconds() != 9 {
		t.Fatalf("config from keys %+v", cfg)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-threshold"}, "Threshold value is missing: args = [-threshold]"},
		{[]string{"-threshold", "0.5"}, "Expecting a number in the range of [1.0, 100.0]: 0.5"},
		{[]string{"-policy", "rack"}, `Cannot parse string "rack"`},
		{[]string{"-include", "a", "-exclude", "b"}, "-exclude and -include options cannot be specified together."},
		{[]string{"-exclude"}, "List of exclude nodes | -f <filename> is missing: args=[-exclude]"},
		{[]string{"-include", "-f"}, "File containing include nodes is not specified: args=[-include, -f]"},
		{[]string{"-source", "-f", "/no/such/file"}, "Failed to read source node list from file: /no/such/file"},
		{[]string{"-idleiterations", "x"}, `For input string: "x"`},
		{[]string{"-asService"}, "-asService is not supported"},
		{[]string{"-bogus"}, "args = [-bogus]"},
	} {
		if _, err := balancerConfig(inv(tc.args...)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
	// Bad options: the usage on stderr, Hadoop's last line on stdout,
	// exit status 1.
	out, errOut, code := run(t, nil, "balancer", "-threshold", "200")
	if code != 1 || !strings.Contains(errOut, "Usage: hdfs balancer") || !strings.Contains(out, "Balancing took ") {
		t.Fatalf("code %d\nstdout %q\nstderr %q", code, out, errOut)
	}
}
