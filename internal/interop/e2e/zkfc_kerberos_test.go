package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/security/krbtest"
)

// TestZKFCKerberosProcesses: `hdfs zkfc` processes with Kerberos and
// privacy: -formatZK, the election (the controllers call their NameNodes
// over SASL GSSAPI, logged in from the NameNodes' keytab), and `hdfs
// haadmin -failover` from an operator's ticket cache through the new
// active's controller, which asks the old one to cede. A SIMPLE haadmin is
// refused.
func TestZKFCKerberosProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes; skipped with -short")
	}
	kdc := krbtest.Start(t)
	site := kdc.Secure(t, krbtest.Services{Hosts: []string{nnHost(0), nnHost(1)}, Protection: "privacy"})
	t.Setenv("KRB5CCNAME", "FILE:"+kdc.Kinit("hdfs", kdc.AddPrincipal("hdfs")))
	h := startZKHA(t, 0, zkHAOptions{extra: site.Map()})
	from := h.activeIndex(10 * time.Second)
	to := 1 - from
	h.waitWarm(to, 60*time.Second)
	ids := []string{"nn1", "nn2"}
	// Without Kerberos the controller does not answer.
	if out, err := h.runEnv(h.confDir("nn"), nil, "haadmin", "-D", "hadoop.security.authentication=simple",
		"-failover", ids[from], ids[to]); err == nil || !strings.Contains(out, "SIMPLE authentication is not enabled") {
		t.Errorf("SIMPLE haadmin -failover: %v\n%s", err, out)
	}
	out := h.haadmin(t, "-failover", ids[from], ids[to])
	if !strings.Contains(out, "Failover to NameNode at ") || !strings.Contains(out, " successful") {
		t.Fatalf("haadmin -failover: %q", out)
	}
	h.waitState(to, "active", 20*time.Second)
	h.waitState(from, "standby", 20*time.Second)
}
