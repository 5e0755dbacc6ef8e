package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
)

// TestDfsadminQuotas: -setQuota, -clrQuota, -setSpaceQuota and
// -clrSpaceQuota, seen through -count -q, and their errors.
func TestDfsadminQuotas(t *testing.T) {
	r := newShellRig(t)
	r.ok(t, "", "dfs", "-mkdir", "/q")
	r.want(t, 0, "", "", "dfsadmin", "-setQuota", "3", "/q")
	r.want(t, 0, fmt.Sprintf("%12s %15s %15s %15s %12s %12s %18s /q\n", "3", "2", "none", "inf", "1", "0", "0"), "", "dfs", "-count", "-q", "/q")
	r.put(t, "/q/a", "a")
	r.put(t, "/q/b", "b")
	_, errOut, code := r.run(t, "c", "dfs", "-put", "-", "/q/c")
	if code != 1 || !strings.Contains(errOut, "quota") {
		t.Fatalf("put over the quota: %d %q", code, errOut)
	}
	r.want(t, 0, "", "", "dfsadmin", "-clrQuota", "/q")
	r.want(t, 0, "", "", "dfsadmin", "-setSpaceQuota", "1m", "/q")
	r.want(t, 0, fmt.Sprintf("%12s %15s %15s %15s %12s %12s %18s /q\n", "none", "inf", "1048576", "1048570", "1", "2", "2"), "", "dfs", "-count", "-q", "/q")
	r.want(t, 0, "", "", "dfsadmin", "-clrSpaceQuota", "/q")
	r.want(t, 0, fmt.Sprintf("%12s %15s %15s %15s %12s %12s %18s /q\n", "none", "inf", "none", "inf", "1", "2", "2"), "", "dfs", "-count", "-q", "/q")

	r.want(t, 255, "", "setQuota: For input string: \"abc\"\nUsage: hdfs dfsadmin [-setQuota <quota> <dirname>...<dirname>]\n", "dfsadmin", "-setQuota", "abc", "/q")
	r.want(t, 255, "", "setSpaceQuota: \"lots\" is not a valid value for a quota.\nUsage: hdfs dfsadmin [-setSpaceQuota <quota> [-storageType <storagetype>] <dirname>...<dirname>]\n", "dfsadmin", "-setSpaceQuota", "lots", "/q")
	r.want(t, 255, "", "Usage: hdfs dfsadmin [-clrQuota <dirname>...<dirname>]\n", "dfsadmin", "-clrQuota")
	_, errOut, code = r.run(t, "", "dfsadmin", "-setSpaceQuota", "1m", "-storageType", "FLOPPY", "/q")
	if code != 255 || !strings.HasPrefix(errOut, "setSpaceQuota: Storage type FLOPPY is not available. Available storage types are [RAM_DISK, NVDIMM, SSD, DISK, ARCHIVE]\n") {
		t.Fatalf("-storageType FLOPPY: %d %q", code, errOut)
	}
	// A bad directory is reported and the others are still done.
	r.ok(t, "", "dfs", "-mkdir", "/q2")
	_, errOut, code = r.run(t, "", "dfsadmin", "-setQuota", "10", "/nope", "/q2")
	if code != 255 || !strings.HasPrefix(errOut, "setQuota: ") || !strings.Contains(errOut, "/nope") {
		t.Fatalf("-setQuota /nope: %d %q", code, errOut)
	}
	if out := r.ok(t, "", "dfs", "-count", "-q", "/q2"); !strings.HasPrefix(out, fmt.Sprintf("%12s", "10")) {
		t.Fatalf("/q2 after -setQuota: %q", out)
	}
}

// TestDfsadminNodesAndOpenFiles: -printTopology, -listOpenFiles and the
// DataNode commands over ClientDatanodeProtocol.
func TestDfsadminNodesAndOpenFiles(t *testing.T) {
	r := newShellRig(t)
	dn := r.c.DataNodes()[0]
	dnAddr := dn.IPCAddr().String()

	out := r.ok(t, "", "dfsadmin", "-printTopology")
	if !regexp.MustCompile(`^Rack: /default-rack\n   127\.0\.0\.\d+:\d+( \(\S+\))?\n\n$`).MatchString(out) {
		t.Fatalf("-printTopology:\n%q", out)
	}

	out = r.ok(t, "", "dfsadmin", "-getDatanodeInfo", dnAddr)
	if !regexp.MustCompile(`^Uptime: \d+, Software version: \S+, Config version: core-3\.0\.0,hdfs-1\n$`).MatchString(out) {
		t.Fatalf("-getDatanodeInfo: %q", out)
	}
	r.want(t, 0, "Triggering a full block report on "+dnAddr+".\n", "", "dfsadmin", "-triggerBlockReport", dnAddr)
	r.want(t, 0, "Triggering an incremental block report on "+dnAddr+".\n", "", "dfsadmin", "-triggerBlockReport", "-incremental", dnAddr)

	// A file open for write is listed with its client; then its writer is
	// evicted from the only DataNode, so it cannot finish.
	ctx := context.Background()
	fsys, err := client.New(client.Options{Addresses: []string{r.c.NameNodeAddr()}, User: r.user, Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	r.ok(t, "", "dfs", "-mkdir", "/open")
	w, err := fsys.Create(ctx, "/open/f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("some data")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	header := fmt.Sprintf("%-20s\t%-20s\t%s\n", "Client Host", "Client Name", "Open File Path")
	out = r.ok(t, "", "dfsadmin", "-listOpenFiles")
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(header) + `127\.0\.0\.1 {11}\tDFSClient_\S+\t {13}/open/f\n$`).MatchString(out) {
		t.Fatalf("-listOpenFiles:\n%q", out)
	}
	r.want(t, 0, header, "", "dfsadmin", "-listOpenFiles", "-path", "/elsewhere")
	if out := r.ok(t, "", "dfsadmin", "-listOpenFiles", "-path", "/open"); !strings.Contains(out, "/open/f\n") {
		t.Fatalf("-listOpenFiles -path /open:\n%q", out)
	}
	_, errOut, code := r.run(t, "", "dfsadmin", "-listOpenFiles", "-blockingDecommission")
	if code != 255 || !strings.Contains(errOut, "not supported yet") {
		t.Fatalf("-blockingDecommission: %d %q", code, errOut)
	}

	r.want(t, 0, "Requested writer eviction to datanode "+dnAddr+"\n", "", "dfsadmin", "-evictWriters", dnAddr)
	w.Write([]byte("more"))
	if err := w.Close(); err == nil {
		t.Fatal("the writer's pipeline survived -evictWriters on its only DataNode")
	}

	r.want(t, 0, "Submitted a shutdown request to datanode "+dnAddr+"\n", "", "dfsadmin", "-shutdownDatanode", dnAddr)
	select {
	case <-dn.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the DataNode did not stop")
	}
	_, errOut, code = r.run(t, "", "dfsadmin", "-D", "ipc.client.connect.max.retries=0", "-getDatanodeInfo", dnAddr)
	if code != 255 || !strings.HasPrefix(errOut, "getDatanodeInfo: Datanode unreachable. ") {
		t.Fatalf("-getDatanodeInfo of a stopped DataNode: %d %q", code, errOut)
	}
}

// TestGroupsAndRefreshes: hdfs groups and the dfsadmin refresh commands.
func TestGroupsAndRefreshes(t *testing.T) {
	r := newShellRig(t)
	r.want(t, 0, "nosuchuser-hdfsgo :\n", "", "groups", "nosuchuser-hdfsgo")
	out := r.ok(t, "", "groups")
	if !strings.HasPrefix(out, r.user+" :") {
		t.Fatalf("groups: %q", out)
	}
	r.want(t, 0, "Refresh user to groups mapping successful\n", "", "dfsadmin", "-refreshUserToGroupsMappings")
	r.want(t, 255, "", "refreshCallQueue: reloading the call queue is not supported yet\n", "dfsadmin", "-refreshCallQueue")
	r.want(t, 0, "Refresh super user groups configuration successful\n", "", "dfsadmin", "-refreshSuperUserGroupsConfiguration")
	r.want(t, 255, "", "refreshServiceAcl: Service Level Authorization not enabled!\n", "dfsadmin", "-refreshServiceAcl")

	out = r.ok(t, "", "dfsadmin", "-help", "setQuota")
	if !strings.HasPrefix(out, "-setQuota <quota> <dirname>...<dirname>: Set the quota <quota> for each directory <dirName>.\n\t\t") {
		t.Fatalf("-help setQuota: %q", out)
	}
	out = r.ok(t, "", "dfsadmin", "-help")
	for _, c := range []string{"-listOpenFiles", "-printTopology", "-triggerBlockReport", "-evictWriters", "-shutdownDatanode", "-getDatanodeInfo", "-clrSpaceQuota"} {
		if !strings.Contains(out, "\n"+c) {
			t.Fatalf("-help lacks %s:\n%s", c, out)
		}
	}
}

// TestGetconfRoles: the getconf options that list hosts or file names.
func TestGetconfRoles(t *testing.T) {
	dir := t.TempDir()
	writeSite(t, dir, "hdfs-site.xml", `<configuration>
  <property><name>dfs.nameservices</name><value>ns1</value></property>
  <property><name>dfs.ha.namenodes.ns1</name><value>nn1,nn2</value></property>
  <property><name>dfs.namenode.rpc-address.ns1.nn1</name><value>host1:8020</value></property>
  <property><name>dfs.namenode.rpc-address.ns1.nn2</name><value>host2:8020</value></property>
  <property><name>dfs.namenode.shared.edits.dir</name><value>qjournal://jn1:8485;jn2:8485;jn3:8485/ns1</value></property>
  <property><name>dfs.namenode.secondary.http-address.ns1.nn1</name><value>snn1:9868</value></property>
  <property><name>dfs.hosts.exclude</name><value>/etc/hadoop/dfs.exclude</value></property>
</configuration>`)
	env := map[string]string{"HADOOP_CONF_DIR": dir}
	for _, tc := range []struct {
		opt, want string
	}{
		{"-namenodes", "host1 host2\n"},
		{"-nnRpcAddresses", "host1:8020\nhost2:8020\n"},
		{"-journalNodes", "jn1 jn2 jn3\n"},
		{"-secondaryNameNodes", "snn1\n"},
		{"-backupNodes", "0.0.0.0\n"},
		{"-includeFile", "\n"},
		{"-excludeFile", "/etc/hadoop/dfs.exclude\n"},
	} {
		out, errOut, code := run(t, env, "getconf", tc.opt)
		if code != 0 || out != tc.want {
			t.Errorf("getconf %s: code %d out %q err %q; want %q", tc.opt, code, out, errOut, tc.want)
		}
	}
	if _, errOut, code := run(t, env, "getconf", "-journalNodes", "x"); code != 1 || errOut != "Did not expect argument: x\n" {
		t.Errorf("getconf -journalNodes x: %d %q", code, errOut)
	}
	// No shared edits: no JournalNodes; a default secondary address.
	out, _, code := run(t, nil, "getconf", "-journalNodes")
	if code != 0 || out != "\n" {
		t.Errorf("getconf -journalNodes without HA: %d %q", code, out)
	}
	out, _, _ = run(t, nil, "getconf", "-secondaryNameNodes")
	if out != "0.0.0.0\n" {
		t.Errorf("getconf -secondaryNameNodes by default: %q", out)
	}
}

// TestDfsadminFetchImage: -fetchImage saves the NameNode's newest image
// in the directory as fsimage_<txid>, nothing else.
func TestDfsadminFetchImage(t *testing.T) {
	r := newShellRig(t)
	r.ok(t, "", "dfs", "-mkdir", "/img")
	r.want(t, 0, "Safe mode is ON\n", "", "dfsadmin", "-safemode", "enter")
	r.want(t, 0, "Save namespace successful\n", "", "dfsadmin", "-saveNamespace")
	r.want(t, 0, "Safe mode is OFF\n", "", "dfsadmin", "-safemode", "leave")
	dir := t.TempDir()
	http := "dfs.namenode.http-address=" + r.c.NameNode().HTTPAddr().String()
	r.want(t, 0, "", "", "dfsadmin", "-D", http, "-fetchImage", dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || !regexp.MustCompile(`^fsimage_\d{19}$`).MatchString(ents[0].Name()) {
		t.Fatalf("fetched %v", ents)
	}
	b, err := os.ReadFile(filepath.Join(dir, ents[0].Name()))
	if err != nil || len(b) == 0 {
		t.Fatalf("image: %d bytes, %v", len(b), err)
	}
	r.want(t, 255, "", "fetchImage: /nonexistent-dir is not a directory\n", "dfsadmin", "-D", http, "-fetchImage", "/nonexistent-dir")
}

// TestDfsadminReportLines: -report prints every line of Hadoop 3's report
// (the replicated and erasure-coded sections, the cache, last block report
// and block count of each node) and is refused to other users than the
// superuser after the capacity lines, as Hadoop's.
func TestDfsadminReportLines(t *testing.T) {
	r := newShellRig(t)
	r.put(t, "/f", "data")
	out := r.ok(t, "", "dfsadmin", "-report")
	lines := []string{
		`Configured Capacity: \d+ \(.+\)`, `Present Capacity: \d+ \(.+\)`, `DFS Remaining: \d+ \(.+\)`, `DFS Used: \d+ \(.+\)`, `DFS Used%: \d+\.\d\d%`,
		`Replicated Blocks:`, `\tUnder replicated blocks: \d+`, `\tBlocks with corrupt replicas: 0`, `\tMissing blocks: 0`,
		`\tMissing blocks \(with replication factor 1\): 0`, `\tLow redundancy blocks with highest priority to recover: \d+`, `\tPending deletion blocks: 0`,
		`Erasure Coded Block Groups: `, `\tLow redundancy block groups: 0`, `\tBlock groups with corrupt internal blocks: 0`, `\tMissing block groups: 0`,
		`\tLow redundancy blocks with highest priority to recover: 0`, `\tPending deletion blocks: 0`, ``,
		`-------------------------------------------------`, `Live datanodes \(1\):`, ``,
		`Name: 127\.0\.0\.\d+:\d+ \(.+\)`, `Hostname: .+`, `Decommission Status : Normal`,
		`Configured Capacity: \d+ \(.+\)`, `DFS Used: \d+ \(.+\)`, `Non DFS Used: \d+ \(.+\)`, `DFS Remaining: \d+ \(.+\)`,
		`DFS Used%: \d+\.\d\d%`, `DFS Remaining%: \d+\.\d\d%`,
		`Configured Cache Capacity: 0 \(0 B\)`, `Cache Used: 0 \(0 B\)`, `Cache Remaining: 0 \(0 B\)`, `Cache Used%: 100\.00%`, `Cache Remaining%: 0\.00%`,
		`Xceivers: \d+`, `Last contact: \w{3} \w{3} \d\d \d\d:\d\d:\d\d \S+ \d{4}`, `Last Block Report: \w{3} \w{3} \d\d \d\d:\d\d:\d\d \S+ \d{4}`,
		`Num of Blocks: 1`, ``, ``, ``,
	}
	re := regexp.MustCompile(`^` + strings.Join(lines, `\n`) + `$`)
	if !re.MatchString(out) {
		t.Fatalf("-report:\n%s", out)
	}

	var outb, errb strings.Builder
	e := Env{Stdin: strings.NewReader(""), Stdout: &outb, Stderr: &errb,
		Getenv: func(k string) string { return map[string]string{"HADOOP_USER_NAME": "bob"}[k] }}
	code := Run(e, []string{"hdfs", "dfsadmin", "-fs", r.uri, "-report"})
	if code != 255 || !strings.HasPrefix(outb.String(), "Configured Capacity: ") ||
		errb.String() != "report: Access denied for user bob. Superuser privilege is required\n" {
		t.Fatalf("-report as bob: %d\n%s%s", code, outb.String(), errb.String())
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 24576: "24 KB", 750055424: "715.31 MB", 274877906944: "256 GB", 80707182592: "75.16 GB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestDfsadminMetasave: -metasave writes into the NameNode's
// hadoop.log.dir.
func TestDfsadminMetasave(t *testing.T) {
	logDir := t.TempDir()
	r := newShellRig(t, confKV("hadoop.log.dir", logDir))
	r.want(t, 0, "Created metasave file meta.txt in the log directory of namenode "+r.uri+"\n", "", "dfsadmin", "-metasave", "meta.txt")
	b, err := os.ReadFile(filepath.Join(logDir, "meta.txt"))
	if err != nil || len(b) == 0 {
		t.Fatalf("metasave file: %d bytes, %v", len(b), err)
	}
}

// TestDfsadminExitStatus: dfsadmin exits as Hadoop's DFSAdmin: -1 (255)
// for usage errors and unknown commands, 1 for a node type -reconfig
// cannot reconfigure, 0 for -help (of an unknown command too: the help of
// every command).
func TestDfsadminExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, 255, "Usage: hdfs dfsadmin\n"},
		{[]string{"-nosuchcommand"}, 255, "dfsadmin: -nosuchcommand is not supported yet\n"},
		{[]string{"nosuchcommand"}, 255, "nosuchcommand: Unknown command\n"},
		{[]string{"-safemode"}, 255, "Usage: hdfs dfsadmin [-safemode enter | leave | get | wait | forceExit]\n"},
		{[]string{"-reconfig", "datanode"}, 255, "Usage: hdfs dfsadmin [-reconfig"},
		{[]string{"-reconfig", "datanode", "127.0.0.1:1", "bogus"}, 255, "Unknown operation: bogus\n"},
		{[]string{"-reconfig", "journalnode", "127.0.0.1:1", "start"}, 1, "Node type journalnode does not support reconfiguration.\n"},
		{[]string{"-help", "safemode"}, 0, ""},
		{[]string{"-help", "nosuchcommand"}, 0, ""},
	} {
		_, errOut, code := run(t, nil, append([]string{"dfsadmin", "-fs", "hdfs://127.0.0.1:1"}, tc.args...)...)
		if code != tc.code || !strings.HasPrefix(errOut, tc.stderr) || (tc.stderr == "") != (errOut == "") {
			t.Errorf("dfsadmin %v: exit %d, stderr %q; want %d, %q", tc.args, code, errOut, tc.code, tc.stderr)
		}
	}
	if out, _, _ := run(t, nil, "dfsadmin", "-help", "nosuchcommand"); !strings.HasPrefix(out, "Usage: hdfs dfsadmin\n") ||
		!strings.Contains(out, "\n-setQuota <quota>") {
		t.Errorf("-help nosuchcommand: %q", out)
	}
}
