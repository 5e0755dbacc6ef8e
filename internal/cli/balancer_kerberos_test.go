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
	"github.com/hdfsgo/hdfsgo/internal/security"
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
	t.Setenv("KRB5_CONFIG", kdc.Krb5Conf)
	realm := krbtest.Realm
	nnKT := filepath.Join(kdc.Dir, "nn.keytab")
	dnKT := filepath.Join(kdc.Dir, "dn.keytab")
	balKT := filepath.Join(kdc.Dir, "balancer.keytab")
	host, _ := os.Hostname()
	hosts := map[string]bool{"localhost": true, security.HostOf("127.0.0.1:0"): true, security.HostOf("127.0.0.11"): true}
	for h := range hosts {
		kdc.AddPrincipalTo("nn/"+h+"@"+realm, nnKT)
		kdc.AddPrincipalTo("dn/"+h+"@"+realm, dnKT)
	}
	kdc.AddPrincipalTo("balancer/"+strings.ToLower(host)+"@"+realm, balKT)
	hdfsCC := kdc.Kinit("hdfs", kdc.AddPrincipal("hdfs"))
	secure := []conf.KeyValue{
		{Key: conf.HadoopSecurityAuthentication, Value: "kerberos"},
		{Key: conf.HadoopRPCProtection, Value: "privacy"},
		{Key: conf.DFSNameNodeKerberosPrincipal, Value: "nn/_HOST@" + realm},
		{Key: conf.DFSNameNodeKeytabFile, Value: nnKT},
		{Key: conf.DFSDataNodeKerberosPrincipal, Value: "dn/_HOST@" + realm},
		{Key: conf.DFSDataNodeKeytabFile, Value: dnKT},
		// A DataNode with Kerberos needs block tokens, and SASL on its
		// streaming port instead of a privileged one.
		{Key: conf.DFSBlockAccessTokenEnable, Value: "true"},
		{Key: conf.DFSDataTransferProtection, Value: "integrity"},
		{Key: conf.HadoopSecurityAuthToLocal, Value: "RULE:[2:$1@$0](nn@" + realm + ")s/.*/hdfs/ RULE:[2:$1@$0](dn@" + realm +
			")s/.*/hdfs/ RULE:[2:$1@$0](balancer@" + realm + ")s/.*/hdfs/ DEFAULT"},
	}
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
