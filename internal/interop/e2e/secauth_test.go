package e2e

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAuditProxyACLProcesses runs a NameNode and a DataNode as processes
// and drives them with the hdfs binary: $HADOOP_PROXY_USER makes a proxy
// call that the proxy-user keys allow; a hadoop-policy.xml written after
// the start takes effect with `dfsadmin -refreshServiceAcl`, after which a
// user outside security.client.protocol.acl is refused; hdfs-audit.log in
// the NameNode's log directory has a line for each call.
func TestAuditProxyACLProcesses(t *testing.T) {
	me := os.Getenv("HADOOP_USER_NAME")
	if me == "" {
		u, err := user.Current()
		if err != nil {
			t.Fatal(err)
		}
		me = u.Username
	}
	logDir := t.TempDir()
	c := startCluster(t, 1, map[string]string{
		"hadoop.log.dir":                    logDir,
		"hadoop.security.authorization":     "true",
		"hadoop.proxyuser." + me + ".hosts": "127.0.0.1",
		"hadoop.proxyuser." + me + ".users": "joe",
	})
	nnConf := c.confDir("nn")
	c.dfs(t, "-mkdir", "-p", "/tmp")
	c.dfs(t, "-chmod", "1777", "/tmp")
	asMe := []string{"HADOOP_USER_NAME=" + me}
	if out, err := c.runEnv(nnConf, append(asMe, "HADOOP_PROXY_USER=joe"), "dfs", "-mkdir", "/tmp/byjoe"); err != nil {
		t.Fatalf("proxy mkdir as joe: %v\n%s", err, out)
	}
	if out, err := c.runEnv(nnConf, append(asMe, "HADOOP_PROXY_USER=bob"), "dfs", "-mkdir", "/tmp/bybob"); err == nil ||
		!strings.Contains(out, "User: "+me+" is not allowed to impersonate bob") {
		t.Fatalf("proxy mkdir as bob: %v\n%s", err, out)
	}
	if out, err := c.runEnv(nnConf, []string{"HADOOP_USER_NAME=eve"}, "dfs", "-ls", "/"); err != nil {
		t.Fatalf("eve before the policy: %v\n%s", err, out)
	}
	policy := "<configuration>\n<property><name>security.client.protocol.acl</name><value>" + me + ",joe</value></property>\n</configuration>\n"
	if err := os.WriteFile(filepath.Join(nnConf, "hadoop-policy.xml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := c.run(t, nnConf, "dfsadmin", "-refreshServiceAcl"); !strings.Contains(out, "Refresh service acl successful") {
		t.Fatalf("-refreshServiceAcl: %q", out)
	}
	out, err := c.runEnv(nnConf, []string{"HADOOP_USER_NAME=eve"}, "dfs", "-ls", "/")
	if err == nil || !strings.Contains(out, "User eve (auth:SIMPLE) is not authorized for protocol interface org.apache.hadoop.hdfs.protocol.ClientProtocol: denied by configured ACL") {
		t.Fatalf("eve after the policy: %v\n%s", err, out)
	}
	// The NameNode's stop flushes the audit log.
	c.nn.cmd.Process.Signal(syscall.SIGTERM)
	waitOrKill(c.nn)
	c.nn = nil
	b, err := os.ReadFile(filepath.Join(logDir, "hdfs-audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, want := range []string{
		"INFO FSNamesystem.audit: allowed=true\tugi=" + me + " (auth:SIMPLE)\tip=/127.0.0.1\tcmd=mkdirs\tsrc=/tmp\tdst=null\tperm=",
		"allowed=true\tugi=" + me + " (auth:SIMPLE)\tip=/127.0.0.1\tcmd=setPermission\tsrc=/tmp\tdst=null\tperm=" + me + ":supergroup:rwxrwxrwt\tproto=rpc",
		"allowed=true\tugi=joe (auth:PROXY) via " + me + " (auth:SIMPLE)\tip=/127.0.0.1\tcmd=mkdirs\tsrc=/tmp/byjoe\tdst=null\tperm=joe:supergroup:rwxr-xr-x\tproto=rpc",
		"allowed=true\tugi=eve (auth:SIMPLE)\tip=/127.0.0.1\tcmd=listStatus\tsrc=/\tdst=null\tperm=null\tproto=rpc",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("hdfs-audit.log lacks %q:\n%s", want, log)
		}
	}
}
