package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
)

// runBenchArgs runs `hdfs bench ARGS` the way Run hands it over: generic
// options already folded into the configuration.
func runBenchArgs(t *testing.T, c *conf.Conf, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	if c == nil {
		c = conf.Defaults()
	}
	inv := &Invocation{
		Env: Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
			if k == "HADOOP_USER_NAME" {
				return "benchuser"
			}
			return ""
		}},
		Name: "bench", Args: args, Conf: c,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	code = runBench(inv)
	return out.String(), errb.String(), code
}

func TestBenchCommand(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string
		wantErr  string
	}{
		{"no args", nil, 1, nil, "Usage: hdfs bench [GENERIC OPTIONS] namenode"},
		{"help", []string{"-help"}, 0, []string{"Usage: hdfs bench [GENERIC OPTIONS] namenode"}, ""},
		{"io", []string{"io", "-nrFiles", "2", "-size", "1m", "-replication", "1", "-datanodes", "1"}, 0, []string{"----- TestDFSIO ----- : write", "----- TestDFSIO ----- : read", "Number of files: 2"}, ""},
		{"io bad size", []string{"io", "-size", "lots"}, 1, nil, "-size needs a size"},
		{"io protections", []string{"io", "-nrFiles", "1", "-size", "1m", "-replication", "2", "-datanodes", "2", "-protection", "none,privacy+aes"}, 0,
			[]string{"data transfer protection privacy+aes", "| none (SIMPLE, no SASL) | write |", "| privacy+aes (SASL privacy, AES/CTR streams) | read |"}, ""},
		{"io bad protection", []string{"io", "-nrFiles", "1", "-size", "1m", "-protection", "rot13"}, 1, nil, `unknown protection "rot13"`},
		{"unknown bench", []string{"disk"}, 1, nil, `unknown benchmark "disk"`},
		{"no op", []string{"namenode"}, 1, nil, "-op is required"},
		{"bad op", []string{"namenode", "-op", "frob"}, 1, nil, `unknown op "frob"`},
		{"bad count", []string{"namenode", "-op", "create", "-threads", "x"}, 1, nil, "-threads needs a value"},
		{"zero count", []string{"namenode", "-op", "create", "-files", "0"}, 1, nil, "-files needs a value"},
		{"missing value", []string{"namenode", "-op"}, 1, nil, "-op needs a value"},
		{"unknown option", []string{"namenode", "-op", "create", "-frob"}, 1, nil, "unknown option -frob"},
		{"bad log level", []string{"namenode", "-op", "create", "-logLevel", "LOUD"}, 1, nil, "unknown log level"},
		{"bad -D", []string{"namenode", "-op", "create", "-D", "novalue"}, 1, nil, "hdfs bench namenode:"},
		{"-D reaches the NameNode", []string{"namenode", "-op", "create", "-D", "dfs.namenode.handler.count=0"}, 1, nil, "dfs.namenode.handler.count"},
		{"create", []string{"namenode", "-op", "create", "-threads", "2", "-files", "12", "-filesPerDir", "3", "-close"}, 0,
			[]string{"--- create stats ---", "# operations: 12", "nrFilesPerDir = 3", "Raw fsyncs/s", "user benchuser"}, ""},
		{"mkdirs shared", []string{"namenode", "-op", "mkdirs", "-threads", "3", "-dirs", "9", "-dirsPerDir", "2", "-sharedConnection"}, 0,
			[]string{"--- mkdirs stats ---", "# operations: 9", "nrDirsPerDir = 2", "sharing one connection"}, ""},
		{"open", []string{"namenode", "-op", "open", "-files", "3"}, 0, []string{"--- open stats ---", "# operations: 3"}, ""},
		{"memory", []string{"namenode", "-op", "memory", "-files", "100"}, 0, []string{"Bytes per file:"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runBenchArgs(t, nil, tc.args...)
			if code != tc.wantCode || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("code %d stderr %q; want code %d stderr containing %q\nstdout:\n%s", code, errOut, tc.wantCode, tc.wantErr, out)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestBenchExternalNameNode measures a NameNode named by fs.defaultFS (what
// -fs sets) instead of starting one.
func TestBenchExternalNameNode(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg, err := namenode.ConfigFrom(conf.Defaults().With(conf.KeyValue{Key: conf.DFSNameNodeNameDir, Value: dir},
		conf.KeyValue{Key: conf.DFSNameNodeHTTPAddress, Value: "127.0.0.1:0"}))
	if err != nil {
		t.Fatal(err)
	}
	cfg.SuperUser = "benchuser"
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := namenode.Format(ctx, cfg, namenode.Deps{Logger: quiet}, namenode.FormatOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nn, err := namenode.Start(ctx, cfg, namenode.Deps{Listener: l, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer nn.Close()

	c := conf.Defaults().With(conf.KeyValue{Key: conf.FSDefaultFS, Value: "hdfs://" + nn.RPCAddr().String()})
	out, errOut, code := runBenchArgs(t, c, "namenode", "-op", "fileStatus", "-threads", "2", "-files", "10")
	if code != 0 {
		t.Fatalf("code %d stderr %q", code, errOut)
	}
	want := fmt.Sprintf("NameNode: %s (external)", nn.RPCAddr())
	if !strings.Contains(out, want) || !strings.Contains(out, "# operations: 10") {
		t.Fatalf("stdout lacks %q or the count:\n%s", want, out)
	}
	// -fs among the benchmark's own options works the same.
	out, errOut, code = runBenchArgs(t, nil, "namenode", "-op", "mkdirs", "-fs", "hdfs://"+nn.RPCAddr().String(), "-files", "4")
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "# operations: 4") {
		t.Fatalf("-fs after namenode: code %d stderr %q stdout:\n%s", code, errOut, out)
	}
	_, errOut, code = runBenchArgs(t, c, "namenode", "-op", "restart", "-files", "10")
	if code != 1 || !strings.Contains(errOut, "in-process NameNode only") {
		t.Fatalf("restart against an external NameNode: code %d stderr %q", code, errOut)
	}
}

func TestBenchTarget(t *testing.T) {
	ha := conf.Defaults().With(
		conf.KeyValue{Key: conf.FSDefaultFS, Value: "hdfs://ns1"},
		conf.KeyValue{Key: "dfs.nameservices", Value: "ns1"},
		conf.KeyValue{Key: "dfs.ha.namenodes.ns1", Value: "nn1,nn2"},
		conf.KeyValue{Key: "dfs.namenode.rpc-address.ns1.nn1", Value: "h1:8020"},
		conf.KeyValue{Key: "dfs.namenode.rpc-address.ns1.nn2", Value: "h2:8021"},
	)
	fs := func(v string) *conf.Conf { return conf.Defaults().With(conf.KeyValue{Key: conf.FSDefaultFS, Value: v}) }
	tests := []struct {
		name    string
		c       *conf.Conf
		want    string
		wantErr bool
	}{
		{"default file system", conf.Defaults(), "[]", false},
		{"file URI", fs("file:///tmp"), "[]", false},
		{"host and port", fs("hdfs://nn.example:9000"), "[nn.example:9000]", false},
		{"host only", fs("hdfs://nn.example"), "[nn.example:8020]", false},
		{"nameservice", ha, "[h1:8020 h2:8021]", false},
		{"no host", fs("hdfs:///x"), "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := benchTarget(tc.c)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && fmt.Sprint(got) != tc.want {
				t.Fatalf("got %v, want %s", got, tc.want)
			}
		})
	}
}
