package krbtest

import (
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// TestAuthToLocal: the rules parse as Hadoop's and map the named
// services' principals to hdfs, others by DEFAULT.
func TestAuthToLocal(t *testing.T) {
	rules, err := security.ParseRules(AuthToLocal("nn", "dn"))
	if err != nil {
		t.Fatal(err)
	}
	for principal, want := range map[string]string{
		"nn/localhost@" + Realm: "hdfs",
		"dn/host1@" + Realm:     "hdfs",
		"jn/localhost@" + Realm: "jn",
		"alice@" + Realm:        "alice",
	} {
		if got, err := rules.ShortName(principal, Realm); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", principal, got, err, want)
		}
	}
}

// TestSecure: a realm starts, and Secure makes one keytab per daemon kind
// holding its principals for every loopback host name, sets KRB5_CONFIG,
// and returns keys naming them; a daemon logs in from its keytab.
func TestSecure(t *testing.T) {
	kdc := Start(t)
	site := kdc.Secure(t, Services{DataNodes: true, JournalNodes: true, HTTP: true, Protection: "privacy",
		AsHDFS: []string{"balancer"}})
	if got := os.Getenv("KRB5_CONFIG"); got != kdc.Krb5Conf {
		t.Errorf("KRB5_CONFIG %q, want %q", got, kdc.Krb5Conf)
	}
	hosts := Hosts()
	for _, c := range []struct {
		path     string
		services []string
	}{
		{site.NNKeytab, []string{"nn", "HTTP"}},
		{site.DNKeytab, []string{"dn"}},
		{site.JNKeytab, []string{"jn"}},
	} {
		kt, err := keytab.Load(c.path)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range kt.Entries {
			got = append(got, e.Principal.Components[0]+"/"+e.Principal.Components[1])
		}
		for _, s := range c.services {
			for _, h := range hosts {
				if !slices.Contains(got, s+"/"+h) {
					t.Errorf("%s: no %s/%s in %v", c.path, s, h, got)
				}
			}
		}
	}
	m := site.Map()
	for key, want := range map[string]string{
		conf.HadoopSecurityAuthentication:          "kerberos",
		conf.HadoopRPCProtection:                   "privacy",
		conf.DFSNameNodeKerberosPrincipal:          "nn/_HOST@" + Realm,
		conf.DFSNameNodeKeytabFile:                 site.NNKeytab,
		conf.DFSDataNodeKerberosPrincipal:          "dn/_HOST@" + Realm,
		conf.DFSDataNodeKeytabFile:                 site.DNKeytab,
		conf.DFSJournalNodeKerberosPrincipal:       "jn/_HOST@" + Realm,
		conf.DFSJournalNodeKeytabFile:              site.JNKeytab,
		conf.DFSWebAuthenticationKerberosPrincipal: "HTTP/_HOST@" + Realm,
		conf.DFSBlockAccessTokenEnable:             "true",
		conf.DFSDataTransferProtection:             "integrity",
		conf.HadoopSecurityAuthToLocal:             AuthToLocal("nn", "dn", "balancer"),
	} {
		if m[key] != want {
			t.Errorf("%s = %q, want %q", key, m[key], want)
		}
	}
	if len(m) != len(site.Keys) {
		t.Errorf("a key twice in %v", site.Keys)
	}
	cl := kdc.ClientFromKeytab("nn/localhost", site.NNKeytab)
	defer cl.Destroy()
}

// TestStartOnTakenPort: a KDC whose port another process holds exits, and
// startKDC reports that (Start then tries another port) instead of
// waiting for it to answer.
func TestStartOnTakenPort(t *testing.T) {
	k := Start(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	u, err := net.ListenPacket("udp", l.Addr().String())
	if err != nil {
		t.Skip("the UDP port of the same number is taken:", err)
	}
	defer u.Close()
	k.writeConf(l.Addr().(*net.TCPAddr).Port)
	stop, why := k.startKDC("/usr/sbin/krb5kdc")
	if stop != nil {
		stop()
		t.Fatal("a KDC started on a taken port")
	}
	if !strings.Contains(why, "exited") {
		t.Errorf("why: %s", why)
	}
}
