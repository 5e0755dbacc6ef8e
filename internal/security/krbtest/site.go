package krbtest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// Services says which daemons of a secure test cluster get service
// principals, and how the cluster protects its traffic.
type Services struct {
	// Hosts are addresses of daemons beyond 127.0.0.1 (DataNodes on
	// 127.0.0.11, NameNodes of an HA pair, ...). Every service principal
	// is made for localhost, for the name of 127.0.0.1 and for the host
	// name _HOST stands for at each of these.
	Hosts []string
	// DataNodes adds dn/ principals (dn.keytab), the DataNodes' keys,
	// block access tokens and dfs.data.transfer.protection: a DataNode
	// with Kerberos needs block tokens, and SASL on its streaming port
	// instead of a privileged one.
	DataNodes bool
	// DataTransferProtection is dfs.data.transfer.protection when
	// DataNodes is set; empty means integrity.
	DataTransferProtection string
	// JournalNodes adds jn/ principals (jn.keytab) and the JournalNodes'
	// keys.
	JournalNodes bool
	// HTTP adds HTTP/ principals to the NameNode's keytab and sets
	// dfs.web.authentication.kerberos.principal (SPNEGO).
	HTTP bool
	// Protection is hadoop.rpc.protection; empty leaves it unset.
	Protection string
	// AsHDFS are more service names (besides nn, and dn with DataNodes)
	// whose principals auth_to_local maps to the superuser hdfs.
	AsHDFS []string
}

// Site is what Secure made: the keytabs of the daemons and the
// configuration that uses them.
type Site struct {
	NNKeytab string // nn/ principals (and HTTP/ ones with Services.HTTP)
	DNKeytab string // dn/ principals; empty without Services.DataNodes
	JNKeytab string // jn/ principals; empty without Services.JournalNodes
	// Keys are hadoop.security.authentication=kerberos, the principals
	// (service/_HOST@Realm) and keytabs of the daemons, auth_to_local
	// mapping the daemons' principals to hdfs, and the protection keys.
	Keys []conf.KeyValue
}

// Map returns the keys as a map, for tests that write site files.
func (s Site) Map() map[string]string {
	m := make(map[string]string, len(s.Keys))
	for _, kv := range s.Keys {
		m[kv.Key] = kv.Value
	}
	return m
}

// Hosts returns the host names a principal's _HOST stands for on daemons
// on this machine: localhost, the name of 127.0.0.1 and the names of addrs,
// each once, in that order.
func Hosts(addrs ...string) []string {
	out := []string{"localhost"}
	seen := map[string]bool{"localhost": true}
	for _, a := range append([]string{"127.0.0.1:0"}, addrs...) {
		if h := security.HostOf(a); !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

// Keytab adds service/host@Realm for every service and host to the keytab
// named file in the realm's directory and returns its path.
func (k *KDC) Keytab(file string, hosts []string, services ...string) string {
	k.t.Helper()
	path := filepath.Join(k.Dir, file)
	for _, h := range hosts {
		for _, s := range services {
			k.AddPrincipalTo(s+"/"+h+"@"+Realm, path)
		}
	}
	return path
}

// Secure sets up a realm for a secure cluster: it points this process's
// KRB5_CONFIG at the realm (t.Setenv, so the test must not be parallel),
// makes the daemons' service principals and keytabs, and returns the site
// configuration that uses them.
func (k *KDC) Secure(t testing.TB, s Services) Site {
	t.Helper()
	t.Setenv("KRB5_CONFIG", k.Krb5Conf)
	hosts := Hosts(s.Hosts...)
	var site Site
	nnServices := []string{"nn"}
	if s.HTTP {
		nnServices = append(nnServices, "HTTP")
	}
	site.NNKeytab = k.Keytab("nn.keytab", hosts, nnServices...)
	add := func(key, value string) { site.Keys = append(site.Keys, conf.KeyValue{Key: key, Value: value}) }
	add(conf.HadoopSecurityAuthentication, "kerberos")
	if s.Protection != "" {
		add(conf.HadoopRPCProtection, s.Protection)
	}
	add(conf.DFSNameNodeKerberosPrincipal, "nn/_HOST@"+Realm)
	add(conf.DFSNameNodeKeytabFile, site.NNKeytab)
	if s.HTTP {
		add(conf.DFSWebAuthenticationKerberosPrincipal, "HTTP/_HOST@"+Realm)
	}
	asHDFS := []string{"nn"}
	if s.DataNodes {
		site.DNKeytab = k.Keytab("dn.keytab", hosts, "dn")
		add(conf.DFSDataNodeKerberosPrincipal, "dn/_HOST@"+Realm)
		add(conf.DFSDataNodeKeytabFile, site.DNKeytab)
		add(conf.DFSBlockAccessTokenEnable, "true")
		dtp := s.DataTransferProtection
		if dtp == "" {
			dtp = "integrity"
		}
		add(conf.DFSDataTransferProtection, dtp)
		asHDFS = append(asHDFS, "dn")
	}
	if s.JournalNodes {
		site.JNKeytab = k.Keytab("jn.keytab", hosts, "jn")
		add(conf.DFSJournalNodeKerberosPrincipal, "jn/_HOST@"+Realm)
		add(conf.DFSJournalNodeKeytabFile, site.JNKeytab)
	}
	add(conf.HadoopSecurityAuthToLocal, AuthToLocal(append(asHDFS, s.AsHDFS...)...))
	return site
}

// AuthToLocal returns auth_to_local rules that map the two-part principals
// of the services (nn/host@Realm, ...) to hdfs and everything else by
// DEFAULT.
func AuthToLocal(services ...string) string {
	var b strings.Builder
	for _, s := range services {
		b.WriteString("RULE:[2:$1@$0](" + s + "@" + Realm + ")s/.*/hdfs/ ")
	}
	b.WriteString("DEFAULT")
	return b.String()
}
