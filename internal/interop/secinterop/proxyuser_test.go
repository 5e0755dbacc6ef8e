package secinterop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	stock "github.com/colinmarc/hdfs/v2"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/security/krbtest"
)

// TestKerberosProxyUser: on a Kerberos NameNode a client holding super's
// ticket may act as joe only as hadoop.proxyuser.super.* allow (hdfsgo's
// client with RealUser set; the stock Go client cannot ask for a proxy);
// the effective user owns what it makes and the audit log says "joe (auth:PROXY) via
// super@REALM (auth:KERBEROS)". alice, who is no proxy user, is refused
// with Hadoop's text, and so is super acting from a host outside .hosts.
func TestKerberosProxyUser(t *testing.T) {
	kdc := krbtest.Start(t)
	t.Setenv("KRB5_CONFIG", kdc.Krb5Conf)
	realm := krbtest.Realm
	nnKT := kdc.Keytab("nn.keytab", krbtest.Hosts(), "nn")
	superKT := kdc.AddPrincipal("super")
	aliceKT := kdc.AddPrincipal("alice")
	farKT := kdc.AddPrincipal("far")

	confDir, logDir := t.TempDir(), t.TempDir()
	props := map[string]string{
		conf.HadoopSecurityAuthentication: "kerberos",
		conf.DFSNameNodeKerberosPrincipal: "nn/_HOST@" + realm,
		conf.DFSNameNodeKeytabFile:        nnKT,
		"hadoop.proxyuser.super.hosts":    "127.0.0.0/8",
		"hadoop.proxyuser.super.users":    "joe",
		"hadoop.proxyuser.far.hosts":      "192.0.2.1",
		"hadoop.proxyuser.far.users":      "*",
		conf.HadoopUserGroupStaticMapping: "super=supergroup",
		conf.HadoopLogDir:                 logDir,
	}
	var site strings.Builder
	site.WriteString("<configuration>\n")
	for k, v := range props {
		fmt.Fprintf(&site, "<property><name>%s</name><value>%s</value></property>\n", k, v)
	}
	site.WriteString("</configuration>\n")
	if err := os.WriteFile(filepath.Join(confDir, "core-site.xml"), []byte(site.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := conf.Load(conf.Options{Dir: confDir, Overrides: []conf.KeyValue{
		{Key: conf.DFSNameNodeNameDir, Value: filepath.Join(t.TempDir(), "name")},
		{Key: conf.DFSNameNodeRPCAddress, Value: "127.0.0.1:0"},
		{Key: conf.DFSNameNodeHTTPAddress, Value: "127.0.0.1:0"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := namenode.ConfigFrom(c)
	if err != nil {
		t.Fatal(err)
	}
	nntest.Format(t, cfg)
	nn := nntest.Start(t, cfg)
	// The stock client asks a ticket for nn/HOST of the host it dials.
	_, port, _ := net.SplitHostPort(nn.Addr)
	byName := net.JoinHostPort("localhost", port)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rpc := func(kt, principal, user, real string) *ipc.Client {
		cl := ipc.NewClient(ipc.ClientConfig{Addresses: []string{nn.Addr}, User: user, RealUser: real, MaxRetries: -1,
			Protocol:   namenode.ClientProtocolName,
			Kerberos:   &security.Initiator{Client: kdc.ClientFromKeytab(principal, kt), Principal: "nn/_HOST@" + realm},
			Protection: security.QOPAuthentication})
		t.Cleanup(func() { cl.Close() })
		return cl
	}
	mkdir := func(cl *ipc.Client, p string, perm uint32) error {
		return cl.Call(ctx, "mkdirs", &hdfs.MkdirsRequestProto{Src: proto.String(p),
			Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(perm)}, CreateParent: proto.Bool(true)}, &hdfs.MkdirsResponseProto{})
	}
	// super (a superuser by the static mapping) makes /tmp for everyone.
	if err := mkdir(rpc(superKT, "super", "", ""), "/tmp", 0o1777); err != nil {
		t.Fatal(err)
	}
	if err := mkdir(rpc(superKT, "super", "joe", "super"), "/tmp/joe", 0o755); err != nil {
		t.Fatalf("super as joe: %v", err)
	}
	// The stock client cannot ask for a proxy: with a ticket it names the
	// ticket's principal whatever ClientOptions.User says. It works as super.
	sc, err := stock.NewClient(stock.ClientOptions{Addresses: []string{byName}, User: "joe",
		KerberosClient: kdc.ClientFromKeytab("super", superKT), KerberosServicePrincipleName: "nn/_HOST"})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if err := sc.Mkdir("/tmp/stock", 0o755); err != nil {
		t.Fatal(err)
	}
	if fi, err := sc.Stat("/tmp/stock"); err != nil || fi.(*stock.FileInfo).Owner() != "super" {
		t.Fatalf("the stock client's directory: %v %v, want owned by super", fi, err)
	}
	fi, err := sc.Stat("/tmp/joe")
	if err != nil || fi.(*stock.FileInfo).Owner() != "joe" {
		t.Fatalf("/tmp/joe: %v %v, want owned by joe", fi, err)
	}

	refused := []struct {
		kt, principal, user, real, want string
	}{
		{aliceKT, "alice", "joe", "alice", "User: alice@" + realm + " is not allowed to impersonate joe"},
		{superKT, "super", "bob", "super", "User: super@" + realm + " is not allowed to impersonate bob"},
		{farKT, "far", "joe", "far", "Unauthorized connection for super-user: far@" + realm + " from IP 127.0.0.1"},
	}
	for _, tc := range refused {
		err := rpc(tc.kt, tc.principal, tc.user, tc.real).Call(ctx, "getFileInfo",
			&hdfs.GetFileInfoRequestProto{Src: proto.String("/")}, &hdfs.GetFileInfoResponseProto{})
		var re *remoteerr.Error
		if !errors.As(err, &re) || re.Class != "org.apache.hadoop.security.authorize.AuthorizationException" || re.Message != tc.want {
			t.Errorf("%s as %s: %v, want AuthorizationException %q", tc.principal, tc.user, err, tc.want)
		}
	}
	nn.Close()
	log, err := os.ReadFile(filepath.Join(logDir, "hdfs-audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"allowed=true\tugi=super@" + realm + " (auth:KERBEROS)\tip=/127.0.0.1\tcmd=mkdirs\tsrc=/tmp\tdst=null\tperm=super:supergroup:rwxrwxrwt\tproto=rpc",
		"allowed=true\tugi=joe (auth:PROXY) via super@" + realm + " (auth:KERBEROS)\tip=/127.0.0.1\tcmd=mkdirs\tsrc=/tmp/joe\tdst=null\tperm=joe:supergroup:rwxr-xr-x\tproto=rpc",
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("audit log lacks %q:\n%s", want, log)
		}
	}
}
