package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestZKFCExitCodes: hdfs zkfc answers bad arguments with Hadoop's usage,
// and the refusals that need no ZooKeeper with Hadoop's exit codes:
// 5 without automatic failover, 6 when the quorum does not answer.
func TestZKFCExitCodes(t *testing.T) {
	r := newHARig(t,
		"dfs.ha.namenode.id", "nn1",
		"dfs.ha.fencing.methods", "shell(/bin/true)",
		"ha.zookeeper.session-timeout.ms", "300",
		"dfs.ha.zkfc.port", "0")
	run := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		e := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		code := Run(e, append([]string{"hdfs", "--config", r.dir, "zkfc"}, args...))
		return errb.String(), code
	}
	if errOut, code := run("-bogus"); code != 1 || !strings.HasPrefix(errOut, zkfcUsage) || !strings.Contains(errOut, "Bad argument: -bogus") {
		t.Errorf("-bogus: code %d, stderr %q", code, errOut)
	}
	if errOut, code := run("-formatZK", "-yes"); code != 1 || !strings.Contains(errOut, "Bad argument: -yes") {
		t.Errorf("-formatZK -yes: code %d, stderr %q", code, errOut)
	}
	if errOut, code := run(); code != 5 || !strings.Contains(errOut, "Automatic failover is not enabled for NameNode at /"+r.addr1) {
		t.Errorf("without automatic failover: code %d, stderr %q", code, errOut)
	}
	r.properties["dfs.ha.automatic-failover.enabled"] = "true"
	r.write(t)
	if errOut, code := run(); code != 1 || !strings.Contains(errOut, "Missing required configuration 'ha.zookeeper.quorum' for ZooKeeper quorum") {
		t.Errorf("without a quorum: code %d, stderr %q", code, errOut)
	}
	dead := deadAddress(t)
	r.properties["ha.zookeeper.quorum"] = dead
	r.write(t)
	for _, args := range [][]string{nil, {"-formatZK", "-nonInteractive"}} {
		if errOut, code := run(args...); code != 6 || !strings.Contains(errOut, "Unable to connect to ZooKeeper quorum at "+dead) {
			t.Errorf("%v without ZooKeeper: code %d, stderr %q", args, code, errOut)
		}
	}
}
