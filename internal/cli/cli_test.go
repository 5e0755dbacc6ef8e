package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/version"
)

// run executes the command line with a controlled environment.
func run(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := Env{
		Stdin:  strings.NewReader(""),
		Stdout: &out,
		Stderr: &errb,
		Getenv: func(k string) string { return env[k] },
	}
	code = Run(e, append([]string{"hdfs"}, args...))
	return out.String(), errb.String(), code
}

func writeSite(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestVersion(t *testing.T) {
	out, _, code := run(t, nil, "version")
	if code != 0 || !strings.HasPrefix(out, "hdfsgo "+version.Release+"\n") {
		t.Fatalf("version: code %d, output %q", code, out)
	}
}

func TestGetconfConfKey(t *testing.T) {
	dir := t.TempDir()
	writeSite(t, dir, "hdfs-site.xml", `<?xml version="1.0"?>
<configuration>
  <property><name>dfs.blocksize</name><value>64m</value></property>
  <property><name>dfs.replication</name><value>2</value></property>
</configuration>`)
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		wantOut  string
		wantErr  string
		wantCode int
	}{
		{"default", nil, []string{"getconf", "-confKey", "dfs.blocksize"}, "134217728\n", "", 0},
		{"config dir", nil, []string{"--config", dir, "getconf", "-confKey", "dfs.blocksize"}, "64m\n", "", 0},
		{"HADOOP_CONF_DIR", map[string]string{"HADOOP_CONF_DIR": dir}, []string{"getconf", "-confKey", "dfs.replication"}, "2\n", "", 0},
		{"-D wins", nil, []string{"--config", dir, "getconf", "-D", "dfs.replication=5", "-confKey", "dfs.replication"}, "5\n", "", 0},
		{"missing key", nil, []string{"getconf", "-confKey", "no.such.key"}, "", "Configuration no.such.key is missing.\n", 1},
		{"no args", nil, []string{"getconf"}, "", "hdfs getconf is a utility", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, tc.env, tc.args...)
			if code != tc.wantCode || out != tc.wantOut || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("got code %d out %q err %q; want code %d out %q err containing %q",
					code, out, errOut, tc.wantCode, tc.wantOut, tc.wantErr)
			}
		})
	}
}

func TestGetconfNameNodes(t *testing.T) {
	dir := t.TempDir()
	writeSite(t, dir, "hdfs-site.xml", `<configuration>
  <property><name>dfs.nameservices</name><value>ns1</value></property>
  <property><name>dfs.ha.namenodes.ns1</name><value>nn1,nn2</value></property>
  <property><name>dfs.namenode.rpc-address.ns1.nn1</name><value>host1:8020</value></property>
  <property><name>dfs.namenode.rpc-address.ns1.nn2</name><value>host2:8021</value></property>
</configuration>`)
	out, errOut, code := run(t, nil, "--config", dir, "getconf", "-nnRpcAddresses")
	if code != 0 || out != "host1:8020\nhost2:8021\n" {
		t.Fatalf("-nnRpcAddresses: code %d out %q err %q", code, out, errOut)
	}
	out, errOut, code = run(t, nil, "--config", dir, "getconf", "-namenodes")
	if code != 0 || out != "host1 host2\n" {
		t.Fatalf("-namenodes: code %d out %q err %q", code, out, errOut)
	}
	out, _, code = run(t, nil, "-D", "x=y", "getconf", "-namenodes")
	if code == 0 {
		t.Fatalf("a misplaced -D was accepted as a subcommand: %q", out)
	}
	out, _, code = run(t, nil, "getconf", "-fs", "hdfs://nn.example:9000", "-nnRpcAddresses")
	if code != 0 || out != "nn.example:9000\n" {
		t.Fatalf("-fs: code %d out %q", code, out)
	}
}

func TestBadConfigNamesFile(t *testing.T) {
	dir := t.TempDir()
	writeSite(t, dir, "core-site.xml", `<configuration><property><name>a</name>`)
	_, errOut, code := run(t, nil, "--config", dir, "getconf", "-confKey", "a")
	if code != 1 || !strings.Contains(errOut, "core-site.xml") {
		t.Fatalf("malformed core-site.xml: code %d, stderr %q does not name the file", code, errOut)
	}
	_, errOut, code = run(t, nil, "--config", filepath.Join(dir, "missing"), "version")
	if code != 1 || !strings.Contains(errOut, "missing") {
		t.Fatalf("missing config dir: code %d, stderr %q", code, errOut)
	}
}

func TestUnsupportedAndUnknownCommands(t *testing.T) {
	for _, c := range commands {
		if c.run != nil {
			continue
		}
		_, errOut, code := run(t, nil, c.name, "arg")
		if code != 1 || errOut != "hdfs: "+c.name+" is not supported yet\n" {
			t.Errorf("%s: code %d stderr %q", c.name, code, errOut)
		}
	}
	_, errOut, code := run(t, nil, "frobnicate")
	if code != 1 || !strings.Contains(errOut, "frobnicate is not a known hdfs subcommand") {
		t.Fatalf("unknown command: code %d stderr %q", code, errOut)
	}
}

func TestHelp(t *testing.T) {
	if out, _, code := run(t, nil); code != 1 || !strings.Contains(out, "Usage: hdfs") {
		t.Fatalf("no arguments: code %d (want 1) out %q", code, out)
	}
	for _, args := range [][]string{{"help"}, {"--help"}} {
		out, _, code := run(t, nil, args...)
		if code != 0 || !strings.Contains(out, "Usage: hdfs") || !strings.Contains(out, "getconf") {
			t.Fatalf("%v: code %d out %q", args, code, out)
		}
	}
	out, _, code := run(t, nil, "getconf", "-help")
	if code != 0 || !strings.Contains(out, "-confKey") {
		t.Fatalf("getconf -help: code %d out %q", code, out)
	}
	out, _, code = run(t, nil, "nfs3", "-help")
	if code != 0 || !strings.Contains(out, "not supported yet") {
		t.Fatalf("nfs3 -help: code %d out %q", code, out)
	}
	out, _, code = run(t, nil, "zkfc", "-help")
	if code != 0 || out != zkfcUsage {
		t.Fatalf("zkfc -help: code %d out %q", code, out)
	}
}

// TestRootLoggerEnv: HADOOP_ROOT_LOGGER sets the log level as in Hadoop's
// scripts, --loglevel wins over it, and a bad level is refused.
func TestRootLoggerEnv(t *testing.T) {
	dir := t.TempDir()
	writeSite(t, dir, "core-site.xml", `<configuration><property><name>k</name><value>a</value><final>true</final></property></configuration>`)
	writeSite(t, dir, "hdfs-site.xml", `<configuration><property><name>k</name><value>b</value></property></configuration>`)
	for _, tc := range []struct {
		env      string
		args     []string
		wantWarn bool
	}{
		{"", nil, true},
		{"ERROR,console", nil, false},
		{"WARN,RFA", nil, true},
		{"ERROR,console", []string{"--loglevel", "WARN"}, true},
	} {
		args := append(append([]string{"--config", dir}, tc.args...), "getconf", "-confKey", "k")
		out, errOut, code := run(t, map[string]string{"HADOOP_ROOT_LOGGER": tc.env}, args...)
		if code != 0 || out != "a\n" {
			t.Fatalf("%q %v: code %d, out %q, err %q", tc.env, tc.args, code, out, errOut)
		}
		if got := strings.Contains(errOut, "final"); got != tc.wantWarn {
			t.Errorf("HADOOP_ROOT_LOGGER=%q %v: final-override warning shown %v, want %v (%q)", tc.env, tc.args, got, tc.wantWarn, errOut)
		}
	}
	_, errOut, code := run(t, map[string]string{"HADOOP_ROOT_LOGGER": "LOUD,console"}, "version")
	if code != exitUsage || !strings.Contains(errOut, "HADOOP_ROOT_LOGGER") {
		t.Fatalf("bad level: code %d, %q", code, errOut)
	}
}

// TestJournalnodeUsageAndConfig: `hdfs journalnode` takes no argument, and
// a bad journal directory is refused naming its key, before anything runs.
func TestJournalnodeUsageAndConfig(t *testing.T) {
	if _, errOut, code := run(t, nil, "journalnode", "-x"); code != exitUsage || !strings.Contains(errOut, "Usage: hdfs journalnode") {
		t.Errorf("journalnode -x: code %d, %q", code, errOut)
	}
	_, errOut, code := run(t, nil, "journalnode", "-D", "dfs.journalnode.edits.dir=relative/dir")
	if code != exitFail || !strings.Contains(errOut, "dfs.journalnode.edits.dir") {
		t.Errorf("a relative edits dir: code %d, %q", code, errOut)
	}
}
