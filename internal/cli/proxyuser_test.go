package cli

import (
	"os"
	"os/user"
	"strings"
	"testing"
)

// TestProxyUserEnv: with $HADOOP_PROXY_USER the hdfs command acts as that
// user for the one it runs as, when the NameNode's hadoop.proxyuser keys
// allow it; otherwise it fails with Hadoop's text.
func TestProxyUserEnv(t *testing.T) {
	me := currentUserForTest(t)
	r := newShellRig(t, confKV("hadoop.proxyuser."+me+".hosts", "127.0.0.1"), confKV("hadoop.proxyuser."+me+".users", "joe"))
	r.ok(t, "", "dfs", "-mkdir", "-p", "/tmp")
	r.ok(t, "", "dfs", "-chmod", "1777", "/tmp")
	t.Setenv("HADOOP_PROXY_USER", "joe")
	r.ok(t, "", "dfs", "-mkdir", "/tmp/byjoe")
	t.Setenv("HADOOP_PROXY_USER", "")
	out := r.ok(t, "", "dfs", "-ls", "/tmp")
	if !strings.Contains(out, " joe ") || !strings.Contains(out, "/tmp/byjoe") {
		t.Fatalf("-ls /tmp: %q, want /tmp/byjoe owned by joe", out)
	}
	t.Setenv("HADOOP_PROXY_USER", "bob")
	_, errOut, code := r.run(t, "", "dfs", "-mkdir", "/tmp/bybob")
	if code == 0 || !strings.Contains(errOut, "User: "+me+" is not allowed to impersonate bob") {
		t.Fatalf("as bob: exit %d %q", code, errOut)
	}
}

func currentUserForTest(t *testing.T) string {
	t.Helper()
	if name := os.Getenv("HADOOP_USER_NAME"); name != "" {
		return name
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}
