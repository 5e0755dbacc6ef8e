package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/haservice"
	"github.com/hdfsgo/hdfsgo/internal/haservice/hatest"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
)

// haRig is a nameservice ns1 of two fake NameNodes, nn1 (active) and nn2
// (standby), each served by HAServiceProtocol on a real ipc.Server, and a
// configuration directory naming them.
type haRig struct {
	dir        string
	nn1, nn2   *hatest.Fake
	addr1      string
	addr2      string
	properties map[string]string
}

func newHARig(t *testing.T, props ...string) *haRig {
	t.Helper()
	r := &haRig{dir: t.TempDir(), nn1: hatest.NewFake(haservice.Active), nn2: hatest.NewFake(haservice.Standby)}
	r.addr1, r.addr2 = hatest.Serve(t, r.nn1), hatest.Serve(t, r.nn2)
	r.properties = map[string]string{
		"dfs.nameservices":                  "ns1",
		"dfs.ha.namenodes.ns1":              "nn1,nn2",
		"dfs.namenode.rpc-address.ns1.nn1":  r.addr1,
		"dfs.namenode.rpc-address.ns1.nn2":  r.addr2,
		"ipc.client.connect.retry.interval": "10",
	}
	for i := 0; i+1 < len(props); i += 2 {
		r.properties[props[i]] = props[i+1]
	}
	r.write(t)
	return r
}

func (r *haRig) write(t *testing.T) {
	t.Helper()
	var b strings.Builder
	b.WriteString("<configuration>\n")
	for k, v := range r.properties {
		fmt.Fprintf(&b, "  <property><name>%s</name><value>%s</value></property>\n", xmlEscape(k), xmlEscape(v))
	}
	b.WriteString("</configuration>\n")
	writeSite(t, r.dir, "hdfs-site.xml", b.String())
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// haadmin runs "hdfs --config DIR haadmin ARGS" with stdin.
func (r *haRig) haadmin(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code = Run(e, append([]string{"hdfs", "--config", r.dir, "haadmin"}, args...))
	return out.String(), errb.String(), code
}

// name is the target's name in Hadoop's messages, "NameNode at /127.0.0.1:PORT".
func (r *haRig) name(addr string) string { return "NameNode at /" + addr }

// hostPort is how -getAllServiceState names a NameNode: the name the
// address resolves back to.
func hostPort(t *testing.T, addr string) string {
	t.Helper()
	c := conf.Defaults().With(conf.KeyValue{Key: "dfs.nameservices", Value: "x"},
		conf.KeyValue{Key: "dfs.namenode.rpc-address.x.a", Value: addr})
	tgt, err := haservice.ResolveNameNode(context.Background(), c, "", "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	return tgt.HostPort()
}

func deadAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestHAAdminUsageIsHadoops(t *testing.T) {
	const want = `Usage: haadmin [-ns <nameserviceId>]
    [-checkHealth <serviceId>]
    [-failover [--forcefence] [--forceactive] <serviceId> <serviceId>]
    [-getAllServiceState]
    [-getServiceState <serviceId>]
    [-help <command>]
    [-transitionToActive [--forceactive] <serviceId>]
    [-transitionToObserver <serviceId>]
    [-transitionToStandby <serviceId>]

Generic options supported are:
-D <property=value>               define a value for a given property
-fs <file:///|hdfs://namenode:port> specify default filesystem URL to use, overrides 'fs.defaultFS' property from configurations.

The general command line syntax is:
command [genericOptions] [commandOptions]

`
	r := newHARig(t)
	out, errOut, code := r.haadmin(t, "")
	if code != 255 || out != "" || errOut != want {
		t.Errorf("no arguments: code %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	out, _, code = r.haadmin(t, "", "-help")
	if code != 0 || out != want {
		t.Errorf("-help: code %d, stdout:\n%s", code, out)
	}
}

func TestHAAdminArgumentErrors(t *testing.T) {
	r := newHARig(t, "dfs.namenode.rpc-address.ns1.nn3", "127.0.0.1:notaport")
	usage := func(cmd string) string { return "Usage: haadmin [-ns <nameserviceId>] [" + cmd + "]\n" }
	for _, tc := range []struct {
		args    []string
		stderr  string // exact, or a prefix when it ends in the full usage
		prefix  bool
		stdout  string
		code    int
		nothing bool // no RPC may reach the NameNodes
	}{
		{args: []string{"foo"}, stderr: "Bad command 'foo': expected command starting with '-'\nUsage: haadmin", prefix: true, code: 255},
		{args: []string{"-foo"}, stderr: "foo: Unknown command\nUsage: haadmin", prefix: true, code: 255},
		{args: []string{"-ns"}, stderr: "Missing nameservice ID\nUsage: haadmin", prefix: true, code: 255},
		{args: []string{"-ns", "ns1"}, stderr: "Missing command\nUsage: haadmin", prefix: true, code: 255},
		{args: []string{"-getServiceState"}, stderr: "getServiceState: incorrect number of arguments\n" + usage("-getServiceState <serviceId>"), code: 255},
		{args: []string{"-getServiceState", "nn1", "nn2"}, stderr: "getServiceState: incorrect number of arguments\n" + usage("-getServiceState <serviceId>"), code: 255},
		{args: []string{"-getServiceState", "--forceactive", "nn1"}, stderr: "getServiceState: incorrect arguments\n" + usage("-getServiceState <serviceId>"), code: 255},
		{args: []string{"-checkHealth"}, stderr: "checkHealth: incorrect number of arguments\n" + usage("-checkHealth <serviceId>"), code: 255},
		{args: []string{"-transitionToStandby", "--forceactive", "nn1"}, stderr: "transitionToStandby: incorrect arguments\n" + usage("-transitionToStandby <serviceId>"), code: 255},
		{args: []string{"-transitionToActive"}, stderr: "transitionToActive: incorrect number of arguments\n" + usage("-transitionToActive [--forceactive] <serviceId>"), code: 255},
		{args: []string{"-failover", "nn1"}, stderr: "failover: incorrect arguments\n" + usage("-failover [--forcefence] [--forceactive] <serviceId> <serviceId>"), code: 255},
		{args: []string{"-failover", "--forcefence", "--forcefence", "--forceactive", "--forceactive", "nn1", "nn2"},
			stderr: "failover: incorrect arguments\n" + usage("-failover [--forcefence] [--forceactive] <serviceId> <serviceId>"), code: 255},
		{args: []string{"-getServiceState", "nn7"}, stderr: "Illegal argument: Unable to determine service address for namenode 'nn7'\n", code: 255},
		{args: []string{"-getServiceState", "nn3"}, stderr: "Illegal argument: Does not contain a valid host:port authority: 127.0.0.1:notaport\n", code: 255},
		{args: []string{"-ns", "ns2", "-getServiceState", "nn1"}, stderr: "Illegal argument: Unable to determine service address for namenode 'nn1'\n", code: 255},
		{args: []string{"-help", "failover"}, code: 0, stdout: "-failover [[--forcefence] [--forceactive] <serviceId> <serviceId>]: Failover from the first service to the second.\n" +
			"Unconditionally fence services if the --forcefence option is used.\n" +
			"Try to failover to the target service even if it is not ready if the --forceactive option is used.\n"},
		{args: []string{"-help", "-getAllServiceState"}, code: 0, stdout: "-getAllServiceState: Returns the state of all the services\n"},
		{args: []string{"-help", "nope"}, stderr: "-nope: Unknown command\nUsage: haadmin", prefix: true, code: 255},
		{args: []string{"-help", "a", "b"}, stderr: usage("-help <command>"), code: 255},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			before := len(r.nn1.Calls()) + len(r.nn2.Calls())
			out, errOut, code := r.haadmin(t, "", tc.args...)
			okErr := errOut == tc.stderr || tc.prefix && strings.HasPrefix(errOut, tc.stderr)
			if code != tc.code || out != tc.stdout || !okErr {
				t.Errorf("code %d, stdout %q, stderr %q; want code %d, stdout %q, stderr %q", code, out, errOut, tc.code, tc.stdout, tc.stderr)
			}
			if after := len(r.nn1.Calls()) + len(r.nn2.Calls()); after != before {
				t.Errorf("%d calls reached the NameNodes", after-before)
			}
		})
	}
}

func TestHAAdminStates(t *testing.T) {
	r := newHARig(t)
	for nn, want := range map[string]string{"nn1": "active\n", "nn2": "standby\n"} {
		out, errOut, code := r.haadmin(t, "", "-getServiceState", nn)
		if code != 0 || out != want {
			t.Errorf("-getServiceState %s: code %d, stdout %q, stderr %q", nn, code, out, errOut)
		}
	}
	out, errOut, code := r.haadmin(t, "", "-ns", "ns1", "-getAllServiceState")
	want := fmt.Sprintf("%-50s %-10s\n%-50s %-10s\n", hostPort(t, r.addr1), "active", hostPort(t, r.addr2), "standby")
	if code != 0 || out != want {
		t.Errorf("-getAllServiceState: code %d, stdout %q (want %q), stderr %q", code, out, want, errOut)
	}

	// A NameNode that does not answer is reported on its line.
	dead := deadAddress(t)
	r.properties["dfs.ha.namenodes.ns1"] = "nn1,nn2,nn3"
	r.properties["dfs.namenode.rpc-address.ns1.nn3"] = dead
	r.write(t)
	out, _, code = r.haadmin(t, "", "-getAllServiceState")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[2], fmt.Sprintf("%-50s Failed to connect: ", hostPort(t, dead))) {
		t.Errorf("-getAllServiceState with a dead NameNode: code %d, stdout %q", code, out)
	}
	out, errOut, code = r.haadmin(t, "", "-getServiceState", "nn3")
	if code != 255 || out != "" || !strings.HasPrefix(errOut, "Operation failed: ") {
		t.Errorf("-getServiceState of a dead NameNode: code %d, stdout %q, stderr %q", code, out, errOut)
	}

	// No NameNode ids for the nameservice asked for.
	_, errOut, code = r.haadmin(t, "", "-ns", "ns9", "-getAllServiceState")
	if code != 255 || errOut != "Failed to get service IDs\n" {
		t.Errorf("-getAllServiceState of an unknown nameservice: code %d, stderr %q", code, errOut)
	}
}

func TestHAAdminPrefersServiceRPCAddress(t *testing.T) {
	r := newHARig(t)
	r.properties["dfs.namenode.servicerpc-address.ns1.nn1"] = r.addr1
	r.properties["dfs.namenode.rpc-address.ns1.nn1"] = deadAddress(t)
	r.write(t)
	if out, errOut, code := r.haadmin(t, "", "-getServiceState", "nn1"); code != 0 || out != "active\n" {
		t.Errorf("code %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestHAAdminCheckHealth(t *testing.T) {
	r := newHARig(t)
	if out, errOut, code := r.haadmin(t, "", "-checkHealth", "nn2"); code != 0 || out != "" || errOut != "" {
		t.Errorf("healthy: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	r.nn2.SetHealth(haservice.HealthCheckFailed("The NameNode has no resources available"))
	if out, errOut, code := r.haadmin(t, "", "-checkHealth", "nn2"); code != 255 || out != "" ||
		errOut != "Health check failed: The NameNode has no resources available\n" {
		t.Errorf("unhealthy: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	r.nn2.SetHealth(errors.New("disk on fire"))
	if _, errOut, code := r.haadmin(t, "", "-checkHealth", "nn2"); code != 255 || errOut != "Operation failed: disk on fire\n" {
		t.Errorf("broken: code %d, stderr %q", code, errOut)
	}
}

func TestHAAdminTransitions(t *testing.T) {
	r := newHARig(t)
	// nn1 is active: Hadoop refuses to make another one active.
	out, errOut, code := r.haadmin(t, "", "-transitionToActive", "nn2")
	if code != 255 || out != "" || errOut != "transitionToActive: Node nn1 is already active\n"+
		"Usage: haadmin [-ns <nameserviceId>] [-transitionToActive [--forceactive] <serviceId>]\n" {
		t.Errorf("second active: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if r.nn2.State() != haservice.Standby {
		t.Fatalf("nn2 became %v", r.nn2.State())
	}

	if out, errOut, code := r.haadmin(t, "", "-transitionToStandby", "nn1"); code != 0 || out != "" || errOut != "" {
		t.Errorf("-transitionToStandby: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if out, errOut, code := r.haadmin(t, "", "-transitionToActive", "nn2"); code != 0 || out != "" || errOut != "" {
		t.Errorf("-transitionToActive: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if r.nn1.State() != haservice.Standby || r.nn2.State() != haservice.Active {
		t.Fatalf("states nn1 %v, nn2 %v", r.nn1.State(), r.nn2.State())
	}
	last := r.nn2.Calls()[len(r.nn2.Calls())-1]
	if last != (hatest.Call{Method: "transitionToActive", Source: haservice.RequestByUser}) {
		t.Errorf("last call %+v", last)
	}

	// --forceactive skips the look at the others.
	if _, errOut, code := r.haadmin(t, "", "-transitionToActive", "--forceactive", "nn1"); code != 0 {
		t.Errorf("--forceactive: code %d, stderr %q", code, errOut)
	}

	// The service's refusal is printed with its message.
	r.nn1.FailTransitions(nil, haservice.ServiceFailed("HA for namenode is not enabled"), nil)
	if _, errOut, code := r.haadmin(t, "", "-transitionToStandby", "nn1"); code != 255 ||
		errOut != "Operation failed: HA for namenode is not enabled\n" {
		t.Errorf("refused: code %d, stderr %q", code, errOut)
	}
	if _, errOut, code := r.haadmin(t, "", "-transitionToObserver", "nn2"); code != 0 || r.nn2.State() != haservice.Observer {
		t.Errorf("-transitionToObserver: code %d, stderr %q, state %v", code, errOut, r.nn2.State())
	}

	// Another NameNode that cannot be asked stops -transitionToActive.
	r.properties["dfs.ha.namenodes.ns1"] = "nn1,nn2,nn3"
	r.properties["dfs.namenode.rpc-address.ns1.nn3"] = deadAddress(t)
	r.write(t)
	r.nn1.SetStatus(haservice.Status{State: haservice.Standby, ReadyToBecomeActive: true})
	if _, errOut, code := r.haadmin(t, "", "-transitionToActive", "nn1"); code != 255 ||
		!strings.HasPrefix(errOut, "Unexpected error occurred  ") ||
		!strings.HasSuffix(errOut, "\nUsage: haadmin [-ns <nameserviceId>] [-transitionToActive [--forceactive] <serviceId>]\n") {
		t.Errorf("unreachable other: code %d, stderr %q", code, errOut)
	}
}

func TestHAAdminAutomaticFailoverRefusesManualControl(t *testing.T) {
	r := newHARig(t, "dfs.ha.automatic-failover.enabled", "true")
	r.nn1.SetStatus(haservice.Status{State: haservice.Standby, ReadyToBecomeActive: true})
	refusal := "Automatic failover is enabled for " + r.name(r.addr1) + "\n" +
		"Refusing to manually manage HA state, since it may cause\n" +
		"a split-brain scenario or other incorrect state.\n" +
		"If you are very sure you know what you are doing, please \n" +
		"specify the --forcemanual flag.\n"
	if _, errOut, code := r.haadmin(t, "", "-transitionToStandby", "nn1"); code != 255 || errOut != refusal {
		t.Errorf("-transitionToStandby: code %d, stderr %q", code, errOut)
	}
	// -transitionToActive refuses already while looking at the others.
	if _, errOut, code := r.haadmin(t, "", "-transitionToActive", "nn2"); code != 255 || errOut != refusal {
		t.Errorf("-transitionToActive: code %d, stderr %q", code, errOut)
	}
	if len(r.nn1.Calls())+len(r.nn2.Calls()) != 0 {
		t.Fatalf("calls reached the NameNodes: %v %v", r.nn1.Calls(), r.nn2.Calls())
	}

	prompt := "You have specified the --forcemanual flag. This flag is dangerous, as it can induce a split-brain scenario that WILL CORRUPT " +
		"your HDFS namespace, possibly irrecoverably.\n\nIt is recommended not to use this flag, but instead to shut down the cluster and " +
		"disable automatic failover if you prefer to manually manage your HA state.\n\nYou may abort safely by answering 'n' or hitting ^C now." +
		"\n\nAre you sure you want to continue? (Y or N) "
	// No: nothing happens.
	_, errOut, code := r.haadmin(t, "n\n", "-transitionToActive", "--forcemanual", "nn1")
	if code != 255 || !strings.HasPrefix(errOut, prompt) || !strings.Contains(errOut, "Aborted") {
		t.Errorf("answer n: code %d, stderr %q", code, errOut)
	}
	// Nonsense, then the end of the input: asked again, then aborted.
	_, errOut, code = r.haadmin(t, "maybe\n", "-transitionToStandby", "--forcemanual", "nn1")
	if code != 255 || strings.Count(errOut, "(Y or N) ") != 2 || !strings.Contains(errOut, "Invalid input: maybe\n") {
		t.Errorf("answer maybe: code %d, stderr %q", code, errOut)
	}
	if len(r.nn1.Calls())+len(r.nn2.Calls()) != 0 {
		t.Fatalf("calls reached the NameNodes: %v %v", r.nn1.Calls(), r.nn2.Calls())
	}
	// Yes: the request goes out forced, with Hadoop's warning.
	_, errOut, code = r.haadmin(t, "Y\n", "-transitionToActive", "--forcemanual", "nn1")
	if code != 0 || !strings.Contains(errOut, "Proceeding with manual HA state management even though") {
		t.Errorf("answer Y: code %d, stderr %q", code, errOut)
	}
	calls := r.nn1.Calls()
	if r.nn1.State() != haservice.Active || calls[len(calls)-1].Source != haservice.RequestByUserForced {
		t.Errorf("nn1 %v, calls %+v", r.nn1.State(), calls)
	}

	// -failover with automatic failover asks the new active's failover
	// controller (ZKFCProtocol on dfs.ha.zkfc.port) for a graceful
	// failover; the force flags are refused as in Hadoop.
	if _, errOut, code := r.haadmin(t, "", "-failover", "--forcefence", "nn1", "nn2"); code != 255 ||
		errOut != "forcefence and forceactive flags not supported with auto-failover enabled.\n" {
		t.Errorf("-failover --forcefence: code %d, stderr %q", code, errOut)
	}
	z := &fakeZKFC{}
	zaddr := serveFakeZKFC(t, z)
	_, zport, _ := net.SplitHostPort(zaddr)
	r.properties["dfs.ha.zkfc.port.ns1.nn2"] = zport
	r.write(t)
	before := len(r.nn1.Calls()) + len(r.nn2.Calls())
	out, errOut, code := r.haadmin(t, "", "-failover", "nn1", "nn2")
	if code != 0 || out != "Failover to "+r.name(r.addr2)+" successful\n" || z.calls() != 1 {
		t.Errorf("-failover through the controller: code %d, stdout %q, stderr %q, %d calls", code, out, errOut, z.calls())
	}
	if n := len(r.nn1.Calls()) + len(r.nn2.Calls()); n != before {
		t.Errorf("haadmin called the NameNodes itself (%d calls)", n-before)
	}
	z.setErr(haservice.ServiceFailed("No other node is currently active."))
	if _, errOut, code := r.haadmin(t, "", "-failover", "nn1", "nn2"); code != 255 ||
		errOut != "Failover failed: No other node is currently active.\n" {
		t.Errorf("-failover refused by the controller: code %d, stderr %q", code, errOut)
	}
	// No controller listening: the connection error, as Hadoop prints it.
	r.properties["dfs.ha.zkfc.port.ns1.nn2"] = strings.TrimPrefix(deadAddress(t), "127.0.0.1:")
	r.write(t)
	if _, errOut, code := r.haadmin(t, "", "-failover", "nn1", "nn2"); code != 255 || !strings.HasPrefix(errOut, "Operation failed: ") {
		t.Errorf("-failover without a controller: code %d, stderr %q", code, errOut)
	}
}

// fakeZKFC answers gracefulFailover with err and counts the calls.
type fakeZKFC struct {
	mu struct {
		sync.Mutex
		n   int
		err error
	}
}

func (z *fakeZKFC) CedeActive(context.Context, int32) error { return nil }

func (z *fakeZKFC) GracefulFailover(context.Context) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.mu.n++
	return z.mu.err
}

func (z *fakeZKFC) calls() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.mu.n
}

func (z *fakeZKFC) setErr(err error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.mu.err = err
}

func serveFakeZKFC(t *testing.T, z haservice.ZKFC) string {
	t.Helper()
	srv := ipc.NewServer(ipc.ServerConfig{Handlers: 2})
	haservice.RegisterZKFC(srv, z)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		<-served
	})
	return l.Addr().String()
}

func TestHAAdminFailover(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "fenced")
	r := newHARig(t, "dfs.ha.fencing.methods",
		"sshfence(hdfs:22)\nshell(echo \"$target_host $target_port $target_address $target_nameserviceid $target_namenodeid $dfs_nameservices\" > "+marker+")")
	out, errOut, code := r.haadmin(t, "", "-failover", "nn1", "nn2")
	if code != 0 || out != "Failover from nn1 to nn2 successful\n" {
		t.Fatalf("graceful failover: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if r.nn1.State() != haservice.Standby || r.nn2.State() != haservice.Active {
		t.Fatalf("states nn1 %v, nn2 %v", r.nn1.State(), r.nn2.State())
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("fenced although nn1 went to standby when asked")
	}

	// Back, with an old active that does not go to standby: the shell
	// method fences it (sshfence, first, is refused).
	r.nn2.FailTransitions(nil, haservice.ServiceFailed("cannot stop the writers"), nil)
	out, errOut, code = r.haadmin(t, "", "-failover", "nn2", "nn1")
	if code != 0 || out != "Failover from nn2 to nn1 successful\n" {
		t.Fatalf("fenced failover: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	b, err := os.ReadFile(marker)
	if err != nil {
		t.Fatalf("the fencing command did not run: %v\n%s", err, errOut)
	}
	host, port, _ := net.SplitHostPort(r.addr2)
	reverse := strings.TrimSuffix(hostPort(t, r.addr2), ":"+port)
	if want := fmt.Sprintf("%s %s /%s:%s ns1 nn2 ns1\n", reverse, port, host, port); string(b) != want {
		t.Errorf("the fencing command saw %q, want %q", b, want)
	}
	for _, want := range []string{
		"Unable to gracefully make " + r.name(r.addr2) + " standby (cannot stop the writers)",
		"sshfence is not supported; use shell(...)",
		"====== Fencing successful by method org.apache.hadoop.ha.ShellCommandFencer(",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("log lacks %q:\n%s", want, errOut)
		}
	}
	if r.nn1.State() != haservice.Active {
		t.Errorf("nn1 %v", r.nn1.State())
	}
}

func TestHAAdminFailoverRefusals(t *testing.T) {
	// No fencing configured.
	r := newHARig(t)
	if _, errOut, code := r.haadmin(t, "", "-failover", "nn1", "nn2"); code != 255 || errOut != "Illegal argument: failover requires a fencer\n" {
		t.Errorf("no fencer: code %d, stderr %q", code, errOut)
	}
	// An unknown method is a configuration error naming the key.
	r = newHARig(t, "dfs.ha.fencing.methods", "stonith(now)")
	if _, errOut, code := r.haadmin(t, "", "-failover", "nn1", "nn2"); code != 255 ||
		errOut != "Illegal argument: failover requires a fencer (dfs.ha.fencing.methods: Could not find configured fencing method stonith)\n" {
		t.Errorf("bad fencer: code %d, stderr %q", code, errOut)
	}
	if len(r.nn1.Calls())+len(r.nn2.Calls()) != 0 {
		t.Fatal("a failover without a usable fencer reached the NameNodes")
	}

	// Fencing fails: the standby is not made active.
	r = newHARig(t, "dfs.ha.fencing.methods", "shell(echo refusing >&2; exit 1)")
	r.nn1.FailTransitions(nil, errors.New("stuck"), nil)
	_, errOut, code := r.haadmin(t, "", "-failover", "nn1", "nn2")
	if code != 255 || !strings.HasSuffix(errOut, "Failover failed: Unable to fence "+r.name(r.addr1)+". Fencing failed.\n") ||
		!strings.Contains(errOut, ": refusing") {
		t.Errorf("fencing fails: code %d, stderr %q", code, errOut)
	}
	if r.nn2.State() != haservice.Standby {
		t.Fatalf("nn2 became %v without nn1 fenced", r.nn2.State())
	}

	// The target is not a standby / not ready.
	r = newHARig(t, "dfs.ha.fencing.methods", "shell(/bin/true)")
	r.nn2.SetStatus(haservice.Status{State: haservice.Standby, NotReadyReason: "The NameNode is in safemode."})
	if _, errOut, code := r.haadmin(t, "", "-failover", "nn1", "nn2"); code != 255 ||
		errOut != "Failover failed: "+r.name(r.addr2)+" is not ready to become active: The NameNode is in safemode.\n" {
		t.Errorf("not ready: code %d, stderr %q", code, errOut)
	}
	if out, errOut, code := r.haadmin(t, "", "-failover", "--forceactive", "nn1", "nn2"); code != 0 || out != "Failover from nn1 to nn2 successful\n" {
		t.Errorf("--forceactive: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, errOut, code := r.haadmin(t, "", "-failover", "nn1", "nn2"); code != 255 || errOut != "Failover failed: Can't failover to an active service\n" {
		t.Errorf("to an active: code %d, stderr %q", code, errOut)
	}
	if _, errOut, code := r.haadmin(t, "", "-failover", "nn1", "nn1"); code != 255 || errOut != "Failover failed: Can't failover a service to itself\n" {
		t.Errorf("to itself: code %d, stderr %q", code, errOut)
	}

	// Two nameservices: the command must name one.
	r = newHARig(t, "dfs.nameservices", "ns1,ns2", "dfs.ha.fencing.methods", "shell(/bin/true)")
	if _, errOut, code := r.haadmin(t, "", "-failover", "nn1", "nn2"); code != 255 || errOut != "Illegal argument: Unable to determine the name service ID. "+
		"This is an HA configuration with multiple name services configured. dfs.nameservices is set to [ns1, ns2]. Please re-run with the -ns option.\n" {
		t.Errorf("two nameservices: code %d, stderr %q", code, errOut)
	}
	if out, errOut, code := r.haadmin(t, "", "-ns", "ns1", "-failover", "nn1", "nn2"); code != 0 || out != "Failover from nn1 to nn2 successful\n" {
		t.Errorf("-ns ns1: code %d, stdout %q, stderr %q", code, out, errOut)
	}
}
