package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/minicluster"
	"github.com/hdfsgo/hdfsgo/internal/security/krbtest"
)

// TestBalancerKerberos: `hdfs balancer` against a Kerberos cluster logs in
// from dfs.balancer.keytab.file (dfs.balancer.keytab.enabled) or from the
// ticket cache and runs to "balanced" over SASL GSSAPI; as a SIMPLE client
// it is refused.
func TestBalancerKerberos(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster and a KDC")
	}
	kdc := krbtest.Start(t)
	realm := krbtest.Realm
	secure := kdc.Secure(t, krbtest.Services{Hosts: []string{"127.0.0.11"}, DataNodes: true, Protection: "privacy",
		AsHDFS: []string{"balancer"}}).Keys
	host, _ := os.Hostname()
	balKT := kdc.Keytab("balancer.keytab", []string{strings.ToLower(host)}, "balancer")
	hdfsCC := kdc.Kinit("hdfs", kdc.AddPrincipal("hdfs"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: filepath.Join(dir, "cluster"), DataNodes: 1,
		Conf: append(secure, conf.KeyValue{Key: conf.DFSNameNodeSafeModeExtension, Value: "0"})})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	confDir := filepath.Join(dir, "conf")
	if err := c.WriteConfig(confDir); err != nil {
		t.Fatal(err)
	}
	args := []string{"balancer"}
	for _, kv := range secure {
		args = append(args, "-D", kv.Key+"="+kv.Value)
	}
	noCache := "FILE:" + filepath.Join(kdc.Dir, "no-such-cache")
	for _, tc := range []struct {
		name  string
		cache string
		extra []string
		want  string
		code  int
	}{
		{"keytab", noCache, []string{"-D", conf.DFSBalancerKeytabEnabled + "=true",
			"-D", conf.DFSBalancerKerberosPrincipal + "=balancer/_HOST@" + realm, "-D", conf.DFSBalancerKeytabFile + "=" + balKT},
			"The cluster is balanced. Exiting...", 0},
		{"ticket cache", "FILE:" + hdfsCC, nil, "The cluster is balanced. Exiting...", 0},
		{"SIMPLE", "FILE:" + hdfsCC, []string{"-D", "hadoop.security.authentication=simple"}, "SIMPLE authentication is not enabled", -1},
		{"no ticket", noCache, nil, "no Kerberos ticket", -1},
	} {
		env := map[string]string{"HADOOP_CONF_DIR": confDir, "KRB5_CONFIG": kdc.Krb5Conf, "KRB5CCNAME": tc.cache}
		out, errs, code := run(t, env, append(append([]string{}, args...), tc.extra...)...)
		if (tc.code == 0) != (code == 0) || !strings.Contains(out+errs, tc.want) {
			t.Errorf("%s: exit %d, want %q\nstdout %s\nstderr %s", tc.name, code, tc.want, out, errs)
		}
	}
}
