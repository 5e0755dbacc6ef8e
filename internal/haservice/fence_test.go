package haservice

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

func TestParseFenceMethods(t *testing.T) {
	shell := func(arg string) FenceMethod {
		return FenceMethod{Kind: FenceShell, Name: "shell", Arg: arg, HasArg: true}
	}
	ssh := func(name, arg string, hasArg bool, user string, port int) FenceMethod {
		return FenceMethod{Kind: FenceSSH, Name: name, Arg: arg, HasArg: hasArg, SSHUser: user, SSHPort: port}
	}
	tests := []struct {
		name string
		spec string
		want []FenceMethod
		err  string // Hadoop's message; "" for success
	}{
		{"empty", "", nil, ""},
		{"blank lines and comments", "\n  \n# only a comment\n\t\n", nil, ""},
		{"one shell", "shell(/bin/true)", []FenceMethod{shell("/bin/true")}, ""},
		{"spaces around lines", "  sshfence  \n\t shell(/bin/true) \r\n", []FenceMethod{ssh("sshfence", "", false, "", 22), shell("/bin/true")}, ""},
		{"comment after method", "shell(/bin/true) # the quorum fences", []FenceMethod{shell("/bin/true")}, ""},
		{"argument keeps inner parentheses", "shell(echo (a) b)", []FenceMethod{shell("echo (a) b")}, ""},
		{"argument keeps spaces", "shell( kill -9 $target_port )", []FenceMethod{shell(" kill -9 $target_port ")}, ""},
		{"class name", "org.apache.hadoop.ha.ShellCommandFencer(/bin/true)",
			[]FenceMethod{{Kind: FenceShell, Name: "org.apache.hadoop.ha.ShellCommandFencer", Arg: "/bin/true", HasArg: true}}, ""},
		{"sshfence user and port", "sshfence(hdfs:2222)", []FenceMethod{ssh("sshfence", "hdfs:2222", true, "hdfs", 2222)}, ""},
		{"sshfence user", "sshfence(hdfs)", []FenceMethod{ssh("sshfence", "hdfs", true, "hdfs", 22)}, ""},
		{"sshfence port", "sshfence(:2222)", []FenceMethod{ssh("sshfence", ":2222", true, "", 2222)}, ""},
		{"powershell", "powershell(fence.ps1)", []FenceMethod{{Kind: FencePowerShell, Name: "powershell", Arg: "fence.ps1", HasArg: true}}, ""},
		{"order kept", "sshfence\nshell(a)\nshell(b)", []FenceMethod{ssh("sshfence", "", false, "", 22), shell("a"), shell("b")}, ""},

		{"unknown method", "killit(now)", nil, "Could not find configured fencing method killit"},
		{"unknown bare", "stonith", nil, "Could not find configured fencing method stonith"},
		{"shell without argument", "shell", nil, "No argument passed to 'shell' fencing method"},
		{"empty parentheses", "shell()", nil, "Unable to parse line: 'shell()'"},
		{"unclosed", "shell(/bin/true", nil, "Unable to parse line: 'shell(/bin/true'"},
		{"comment cuts the argument", "shell(echo a # b)", nil, "Unable to parse line: 'shell(echo a'"},
		{"a '#' kept by a stray CR", "shell(#)\r ", nil, "Unable to parse line: 'shell(#)': '#' starts a comment and cannot be part of an argument"},
		{"bad name", "my-fencer(x)", nil, "Unable to parse line: 'my-fencer(x)'"},
		{"sshfence bad port", "sshfence(user:port)", nil, "Unable to parse user and SSH port: user:port"},
		{"sshfence two colons", "sshfence(a:1:2)", nil, "Unable to parse user and SSH port: a:1:2"},
		{"sshfence port too large", "sshfence(a:99999999999)", nil, "Port number '99999999999' invalid"},
		{"error after good lines", "shell(/bin/true)\nnope()", nil, "Unable to parse line: 'nope()'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseFenceMethods(tc.spec)
			if tc.err != "" {
				var fe *FenceConfigError
				if !errors.As(err, &fe) || fe.Msg != tc.err || !errors.Is(err, ErrBadFencingConfig) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("method %d: got %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestFenceMethodString(t *testing.T) {
	ms, err := ParseFenceMethods("shell(/bin/true)\nsshfence\norg.apache.hadoop.ha.SshFenceByTcpPort(u:1)")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"org.apache.hadoop.ha.ShellCommandFencer(/bin/true)",
		"org.apache.hadoop.ha.SshFenceByTcpPort(null)",
		"org.apache.hadoop.ha.SshFenceByTcpPort(u:1)",
	}
	for i, m := range ms {
		if m.String() != want[i] {
			t.Errorf("String() = %q, want %q", m.String(), want[i])
		}
	}
}

func TestStripComment(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a", "a"},
		{"a#b", "a"},
		{"#", ""},
		{"a#b\r", "a\r"},
		{"a#b\rc", "a#b\rc"},     // '#' not followed by the end: no comment
		{"a#b\rc#d", "a#b\rc"},   // the second '#' is
		{"a#b\u2028", "a\u2028"}, // a final terminator stays for trim
	} {
		if got := stripComment(tc.in); got != tc.want {
			t.Errorf("stripComment(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAbbreviate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 20, "short"},
		{"exactly-twenty-chars", 20, "exactly-twenty-chars"},
		{"/usr/local/bin/fence-the-namenode.sh --now", 20, "/usr/loc....sh --now"},
		{"abcdef", 4, "abcdef"},
		{"ééééééééééééééééééééééééé", 20, "éééééééé...ééééééééé"},
	} {
		if got := abbreviate(tc.in, tc.n); got != tc.want {
			t.Errorf("abbreviate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// FuzzParseFenceMethods: parsing never panics, and what parses writes back
// to lines that parse to the same methods.
func FuzzParseFenceMethods(f *testing.F) {
	for _, s := range []string{
		"shell(/bin/true)", "sshfence\nshell(echo (x))", "sshfence(u:22) # c", "shell()", "a(b",
		"shell(x)\r\n\r\npowershell(y)", "org.apache.hadoop.ha.ShellCommandFencer(z)", "#", "\u2028shell(q)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		ms, err := ParseFenceMethods(spec)
		if err != nil {
			if !errors.Is(err, ErrBadFencingConfig) {
				t.Fatalf("error %v is not ErrBadFencingConfig", err)
			}
			return
		}
		var lines []string
		for _, m := range ms {
			lines = append(lines, m.Line())
		}
		again, err := ParseFenceMethods(strings.Join(lines, "\n"))
		if err != nil {
			t.Fatalf("%q parsed to %+v, whose lines %q do not parse: %v", spec, ms, lines, err)
		}
		if len(again) != len(ms) {
			t.Fatalf("round trip of %q: %+v, then %+v", spec, ms, again)
		}
		for i := range ms {
			if ms[i] != again[i] {
				t.Fatalf("round trip of %q: %+v, then %+v", spec, ms[i], again[i])
			}
		}
	})
}

func fenceTarget(t *testing.T, spec string) *Target {
	t.Helper()
	ms, err := ParseFenceMethods(spec)
	if err != nil {
		t.Fatal(err)
	}
	c := conf.Defaults().With(conf.KeyValue{Key: "dfs.namenode.rpc-address", Value: "nn1.example:8020"},
		conf.KeyValue{Key: "my-site.key", Value: "v1"})
	return &Target{Kind: kindNameNode, Addr: "nn1.example:8020", Host: "nn1.example", IP: "10.0.0.1", Port: 8020,
		Nameservice: "ns1", NameNodeID: "nn1", Fencing: ms, FencingConfigured: true, Conf: c}
}

type logBuffer struct{ bytes.Buffer }

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(&b.Buffer, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func TestFencerTriesMethodsInOrder(t *testing.T) {
	var ran []string
	var logs logBuffer
	f := &Fencer{
		Shell: func(_ context.Context, cmd string, _ []string) bool {
			ran = append(ran, cmd)
			return cmd == "second"
		},
		Environ: func() []string { return nil },
		Logger:  logs.logger(),
	}
	tgt := fenceTarget(t, "sshfence(hdfs:22)\nshell(first)\nshell(second)\nshell(third)")
	if !f.Fence(context.Background(), tgt) {
		t.Fatal("Fence failed although the second shell method succeeded")
	}
	if strings.Join(ran, ",") != "first,second" {
		t.Errorf("ran %v, want first then second", ran)
	}
	for _, want := range []string{
		"====== Beginning Service Fencing Process... ======",
		"Trying method 1/4: org.apache.hadoop.ha.SshFenceByTcpPort(hdfs:22)",
		"sshfence is not supported; use shell(...)",
		"Fencing method org.apache.hadoop.ha.ShellCommandFencer(first) was unsuccessful.",
		"====== Fencing successful by method org.apache.hadoop.ha.ShellCommandFencer(second) ======",
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}

	ran = nil
	logs.Reset()
	if f.Fence(context.Background(), fenceTarget(t, "shell(first)\nsshfence")) {
		t.Fatal("Fence succeeded with no successful method")
	}
	if !strings.Contains(logs.String(), "Unable to fence service by any configured method.") {
		t.Errorf("log lacks the final failure:\n%s", logs.String())
	}
	if f.Fence(context.Background(), fenceTarget(t, "")) {
		t.Fatal("Fence succeeded with no method at all")
	}
}

func TestFencerEnvironment(t *testing.T) {
	var env []string
	f := &Fencer{
		Shell:   func(_ context.Context, _ string, e []string) bool { env = e; return true },
		Environ: func() []string { return []string{"PATH=/bin", "target_host=inherited"} },
	}
	f.Fence(context.Background(), fenceTarget(t, "shell(x)"))
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v // later entries win, as exec does
	}
	for k, v := range map[string]string{
		"PATH":                     "/bin",
		"target_host":              "nn1.example",
		"target_port":              "8020",
		"target_address":           "nn1.example/10.0.0.1:8020",
		"target_nameserviceid":     "ns1",
		"target_namenodeid":        "nn1",
		"dfs_namenode_rpc_address": "nn1.example:8020",
		"my_site_key":              "v1",
		"dfs_replication":          "3",
	} {
		if got[k] != v {
			t.Errorf("$%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestExecShellRunsBash(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "fenced")
	var logs logBuffer
	f := &Fencer{Timeout: 10 * time.Second, Logger: logs.logger()}
	tgt := fenceTarget(t, `shell(echo "$target_host:$target_port $target_nameserviceid/$target_namenodeid" > `+marker+`; echo to-stdout; echo to-stderr >&2)`)
	if !f.Fence(context.Background(), tgt) {
		t.Fatalf("fencing failed:\n%s", logs.String())
	}
	b, err := os.ReadFile(marker)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "nn1.example:8020 ns1/nn1\n" {
		t.Errorf("marker %q", b)
	}
	for _, want := range []string{"Launched fencing command 'echo", "with pid", "[PID ", "...tderr >&2: to-stdout", "level=WARN", ": to-stderr"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}

	// bash -e: a failing command in the middle fails the method.
	if f.Fence(context.Background(), fenceTarget(t, "shell(false; echo never)")) {
		t.Error("bash -e did not stop at the failing command")
	}
	if f.Fence(context.Background(), fenceTarget(t, "shell(exit 3)")) {
		t.Error("exit 3 counted as success")
	}
}

func TestExecShellTimeoutKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	late := filepath.Join(dir, "late")
	run := ExecShell(300*time.Millisecond, nil)
	start := time.Now()
	// The background child holds stdout open and would write after the
	// timeout; killing the group stops it too.
	ok := run(context.Background(), "(sleep 2; touch "+late+") & sleep 30", os.Environ())
	if ok {
		t.Fatal("a command killed by the timeout counted as success")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the timed-out command took %v", d)
	}
	time.Sleep(2500 * time.Millisecond)
	if _, err := os.Stat(late); err == nil {
		t.Error("the command's background child survived the timeout")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if run(ctx, "true", os.Environ()) {
		t.Error("a command run with an ended ctx counted as success")
	}
}
