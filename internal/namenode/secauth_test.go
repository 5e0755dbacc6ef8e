package namenode_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/web/webtest"
)

const classAuthorization = "org.apache.hadoop.security.authorize.AuthorizationException"

// writeSite writes a Hadoop configuration file of props into dir.
func writeSite(t *testing.T, dir, name string, props map[string]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<configuration>\n")
	for k, v := range props {
		fmt.Fprintf(&b, "  <property><name>%s</name><value>%s</value></property>\n", k, v)
	}
	b.WriteString("</configuration>\n")
	if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startFromConfDir starts a NameNode whose configuration is read from
// confDir (so that the refresh calls read it again), on fresh dirs.
func startFromConfDir(t *testing.T, confDir string, overrides ...conf.KeyValue) *nntest.NameNode {
	t.Helper()
	kvs := append([]conf.KeyValue{
		{Key: conf.DFSNameNodeNameDir, Value: filepath.Join(t.TempDir(), "name")},
		{Key: conf.DFSNameNodeRPCAddress, Value: "127.0.0.1:0"},
		{Key: conf.DFSNameNodeHTTPAddress, Value: "127.0.0.1:0"},
	}, overrides...)
	c, err := conf.Load(conf.Options{Dir: confDir, Overrides: kvs})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := namenode.ConfigFrom(c)
	if err != nil {
		t.Fatal(err)
	}
	nntest.Format(t, cfg)
	return nntest.Start(t, cfg)
}

func proxyClient(t *testing.T, addr, user, real, protocol string) *ipc.Client {
	t.Helper()
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{addr}, User: user, RealUser: real, Protocol: protocol, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

func stat(t *testing.T, c *ipc.Client, path string) (*hdfs.HdfsFileStatusProto, error) {
	t.Helper()
	var resp hdfs.GetFileInfoResponseProto
	err := call(t, c, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(path)}, &resp)
	return resp.GetFs(), err
}

// TestProxyUsers: a SIMPLE connection whose context names a real user
// acts as its effective user only as hadoop.proxyuser.* allow, over RPC and
// over WebHDFS (doas); the effective user is the one permission checks and
// the audit log see; -refreshSuperUserGroupsConfiguration reads
// core-site.xml again.
func TestProxyUsers(t *testing.T) {
	confDir, logDir := t.TempDir(), t.TempDir()
	site := map[string]string{
		"hadoop.proxyuser.super.hosts":    "127.0.0.1",
		"hadoop.proxyuser.super.users":    "joe",
		"hadoop.proxyuser.super.groups":   "staff",
		"hadoop.proxyuser.far.hosts":      "10.0.0.0/8",
		"hadoop.proxyuser.far.users":      "*",
		conf.HadoopUserGroupStaticMapping: "ann=staff;bob=dev",
		conf.HadoopLogDir:                 logDir,
	}
	writeSite(t, confDir, "core-site.xml", site)
	nn := startFromConfDir(t, confDir)
	su := nn.SuperUser()
	admin := rpcClient(t, nn.Addr, su, namenode.ClientProtocolName)
	if err := mkdir(t, admin, "/tmp", 0o1777); err != nil {
		t.Fatal(err)
	}

	// super acts as joe (named) and as ann (by group): what is made is theirs.
	for _, u := range []string{"joe", "ann"} {
		c := proxyClient(t, nn.Addr, u, "super", namenode.ClientProtocolName)
		if err := mkdir(t, c, "/tmp/"+u, 0o755); err != nil {
			t.Fatalf("super as %s: %v", u, err)
		}
		st, err := stat(t, admin, "/tmp/"+u)
		if err != nil || st.GetOwner() != u {
			t.Fatalf("/tmp/%s owned by %q (%v), want %s", u, st.GetOwner(), err, u)
		}
	}
	// Permission checks see the effective user: joe cannot write into ann's.
	joe := proxyClient(t, nn.Addr, "joe", "super", namenode.ClientProtocolName)
	expectRemote(t, mkdir(t, joe, "/tmp/ann/x", 0o755), "org.apache.hadoop.security.AccessControlException", "user=joe")

	// Refusals, at connection setup, with Hadoop's texts.
	for _, tc := range []struct{ user, real, want string }{
		{"bob", "super", "User: super is not allowed to impersonate bob"},
		{"joe", "eve", "User: eve is not allowed to impersonate joe"},
		{su, "joe", "User: joe is not allowed to impersonate " + su},
		{"joe", "far", "Unauthorized connection for super-user: far from IP 127.0.0.1"},
	} {
		c := proxyClient(t, nn.Addr, tc.user, tc.real, namenode.ClientProtocolName)
		_, err := stat(t, c, "/")
		expectRemote(t, err, classAuthorization, tc.want)
	}

	// WebHDFS doas follows the same rules.
	base := "http://" + nn.HTTPAddr().String() + "/webhdfs/v1/tmp?op=GETFILESTATUS&user.name=super&doas="
	if code, body := webtest.Get(t, base+"joe"); code != http.StatusOK {
		t.Fatalf("doas=joe: %d %s", code, body)
	}
	if code, body := webtest.Get(t, base+"bob"); code != http.StatusForbidden || !strings.Contains(body, "User: super is not allowed to impersonate bob") {
		t.Fatalf("doas=bob: %d %s, want 403 naming the refusal", code, body)
	}
	if code, body := webPut(t, "http://"+nn.HTTPAddr().String()+"/webhdfs/v1/tmp/joe/w?op=MKDIRS&user.name=super&doas=joe"); code != http.StatusOK {
		t.Fatalf("MKDIRS doas=joe: %d %s", code, body)
	}

	// Let super act as bob too: core-site.xml changed, then refreshed.
	site["hadoop.proxyuser.super.users"] = "joe,bob"
	writeSite(t, confDir, "core-site.xml", site)
	bob := proxyClient(t, nn.Addr, "bob", "super", namenode.ClientProtocolName)
	if _, err := stat(t, bob, "/"); err == nil {
		t.Fatal("super acts as bob before the refresh")
	}
	refresh := rpcClient(t, nn.Addr, su, namenode.RefreshUserMappingsProtocolName)
	if err := call(t, refresh, "refreshSuperUserGroupsConfiguration", &common.RefreshSuperUserGroupsConfigurationRequestProto{}, &common.RefreshSuperUserGroupsConfigurationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	bob = proxyClient(t, nn.Addr, "bob", "super", namenode.ClientProtocolName)
	if _, err := stat(t, bob, "/"); err != nil {
		t.Fatalf("super as bob after the refresh: %v", err)
	}
	if code, body := webtest.Get(t, base+"bob"); code != http.StatusOK {
		t.Fatalf("doas=bob after the refresh: %d %s", code, body)
	}
	// Only a superuser refreshes.
	jr := rpcClient(t, nn.Addr, "joe", namenode.RefreshUserMappingsProtocolName)
	err := call(t, jr, "refreshSuperUserGroupsConfiguration", &common.RefreshSuperUserGroupsConfigurationRequestProto{}, &common.RefreshSuperUserGroupsConfigurationResponseProto{})
	expectRemote(t, err, "org.apache.hadoop.security.AccessControlException", "Superuser privilege is required")

	nn.Close()
	lines := strings.Join(auditLines(t, filepath.Join(logDir, "hdfs-audit.log")), "\n")
	for _, want := range []string{
		"allowed=true\tugi=joe (auth:PROXY) via super (auth:SIMPLE)\tip=/127.0.0.1\tcmd=mkdirs\tsrc=/tmp/joe\tdst=null\tperm=joe:supergroup:rwxr-xr-x\tproto=rpc",
		"allowed=false\tugi=joe (auth:PROXY) via super (auth:SIMPLE)\tip=/127.0.0.1\tcmd=mkdirs\tsrc=/tmp/ann/x",
		"allowed=true\tugi=joe (auth:PROXY) via super (auth:SIMPLE)\tip=/127.0.0.1\tcmd=mkdirs\tsrc=/tmp/joe/w\tdst=null\tperm=joe:supergroup:rwxr-xr-x\tproto=webhdfs",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("audit log lacks %q:\n%s", want, lines)
		}
	}
}

// TestServiceACL: with hadoop.security.authorization a connection is
// checked against its protocol's ACL in hadoop-policy.xml; a user outside
// it is refused with Hadoop's text; -refreshServiceAcl reads the file again.
func TestServiceACL(t *testing.T) {
	confDir := t.TempDir()
	writeSite(t, confDir, "core-site.xml", map[string]string{
		conf.HadoopSecurityAuthorization:  "true",
		conf.HadoopUserGroupStaticMapping: "carol=staff",
	})
	nn := startFromConfDir(t, confDir)
	su := nn.SuperUser()
	policy := map[string]string{
		"security.client.protocol.acl":                su + ",alice staff",
		"security.client.protocol.acl.blocked":        "mallory",
		"security.refresh.policy.protocol.acl":        su,
		"security.refresh.user.mappings.protocol.acl": su,
	}
	writeSite(t, confDir, "hadoop-policy.xml", policy)
	refresh := func(user string) error {
		c := rpcClient(t, nn.Addr, user, namenode.RefreshAuthorizationPolicyProtocolName)
		return call(t, c, "refreshServiceAcl", &common.RefreshServiceAclRequestProto{}, &common.RefreshServiceAclResponseProto{})
	}
	// The NameNode started before the file existed: everyone was let in.
	if _, err := stat(t, rpcClient(t, nn.Addr, "joe", namenode.ClientProtocolName), "/"); err != nil {
		t.Fatalf("joe before the policy: %v", err)
	}
	if err := refresh(su); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{su, "alice", "carol"} {
		if _, err := stat(t, rpcClient(t, nn.Addr, u, namenode.ClientProtocolName), "/"); err != nil {
			t.Fatalf("%s, allowed by the ACL: %v", u, err)
		}
	}
	for _, u := range []string{"joe", "mallory"} {
		_, err := stat(t, rpcClient(t, nn.Addr, u, namenode.ClientProtocolName), "/")
		expectRemote(t, err, classAuthorization,
			"User "+u+" (auth:SIMPLE) is not authorized for protocol interface org.apache.hadoop.hdfs.protocol.ClientProtocol: denied by configured ACL")
	}
	// A proxy connection is checked as its effective user.
	_, err := stat(t, proxyClient(t, nn.Addr, "joe", su, namenode.ClientProtocolName), "/")
	expectRemote(t, err, classAuthorization, "User: "+su+" is not allowed to impersonate joe")
	// Only the refresh policy's ACL may refresh it.
	expectRemote(t, refresh("alice"), classAuthorization,
		"User alice (auth:SIMPLE) is not authorized for protocol interface org.apache.hadoop.security.authorize.RefreshAuthorizationPolicyProtocol: denied by configured ACL")
	// Other protocols keep the default ACL (*).
	if err := call(t, rpcClient(t, nn.Addr, "joe", namenode.GetUserMappingsProtocolName), "getGroupsForUser",
		&common.GetGroupsForUserRequestProto{User: proto.String("carol")}, &common.GetGroupsForUserResponseProto{}); err != nil {
		t.Fatalf("joe on GetUserMappingsProtocol (default ACL *): %v", err)
	}

	policy["security.client.protocol.acl"] = su + ",alice,joe staff"
	writeSite(t, confDir, "hadoop-policy.xml", policy)
	if err := refresh(su); err != nil {
		t.Fatal(err)
	}
	if _, err := stat(t, rpcClient(t, nn.Addr, "joe", namenode.ClientProtocolName), "/"); err != nil {
		t.Fatalf("joe after the refresh: %v", err)
	}
	// A malformed policy file is refused and the old policy stays.
	os.WriteFile(filepath.Join(confDir, "hadoop-policy.xml"), []byte("<configuration><property>"), 0o644)
	if err := refresh(su); err == nil || !strings.Contains(err.Error(), "hadoop-policy.xml") {
		t.Fatalf("refresh with a malformed file: %v, want an error naming it", err)
	}
	if _, err := stat(t, rpcClient(t, nn.Addr, "joe", namenode.ClientProtocolName), "/"); err != nil {
		t.Fatalf("joe after a failed refresh: %v", err)
	}
}

// TestWebAdmins: with hadoop.security.authorization the NameNode's
// /stacks, /conf and /logs/ answer 403 to anyone but the administrators
// (dfs.cluster.administrators, the superuser, the supergroup); /jmx stays
// open. The web user is user.name, else dr.who.
func TestWebAdmins(t *testing.T) {
	confDir := t.TempDir()
	t.Setenv("HADOOP_LOG_DIR", t.TempDir())
	writeSite(t, confDir, "core-site.xml", map[string]string{
		conf.HadoopSecurityAuthorization:  "true",
		conf.HadoopUserGroupStaticMapping: "carol=ops;dave=supergroup",
		conf.DFSClusterAdministrators:     "alice ops",
	})
	nn := startFromConfDir(t, confDir)
	base := "http://" + nn.HTTPAddr().String()
	for _, tc := range []struct {
		path, user string
		want       int
	}{
		{"/stacks", "joe", http.StatusForbidden},
		{"/stacks", "", http.StatusForbidden},
		{"/conf", "joe", http.StatusForbidden},
		{"/logs/", "joe", http.StatusForbidden},
		{"/jmx", "joe", http.StatusOK},
		{"/jmx", "", http.StatusOK},
		{"/stacks", "alice", http.StatusOK},
		{"/stacks", "carol", http.StatusOK},
		{"/stacks", "dave", http.StatusOK},
		{"/stacks", nn.SuperUser(), http.StatusOK},
		{"/logs/", "alice", http.StatusOK},
	} {
		url := base + tc.path
		if tc.user != "" {
			url += "?user.name=" + tc.user
		}
		code, body := webtest.Get(t, url)
		if code != tc.want {
			t.Errorf("%s as %q: %d, want %d: %s", tc.path, tc.user, code, tc.want, body)
			continue
		}
		if code == http.StatusForbidden {
			who := tc.user
			if who == "" {
				who = "dr.who"
			}
			if want := "User " + who + " is unauthorized to access this page."; !strings.Contains(body, want) {
				t.Errorf("%s as %q: body %q, want %q", tc.path, tc.user, body, want)
			}
		}
	}
}
