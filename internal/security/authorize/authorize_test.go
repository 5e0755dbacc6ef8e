package authorize

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

func TestParseACL(t *testing.T) {
	for _, tc := range []struct {
		in          string
		user        string
		groups      []string
		want        bool
		wantPrinted string
	}{
		{"*", "anyone", nil, true, "*"},
		{" *", "anyone", nil, true, "*"},
		{"alice,bob", "bob", nil, true, "alice,bob "},
		{"alice,bob", "carol", []string{"alice"}, false, "alice,bob "},
		{"alice ops,admin", "carol", []string{"admin"}, true, "alice ops,admin"},
		{" ops", "ops", nil, false, " ops"},
		{" ", "alice", []string{"x"}, false, " "},
		{"", "alice", nil, false, " "},
	} {
		a := ParseACL(tc.in)
		if got := a.Allows(tc.user, tc.groups); got != tc.want {
			t.Errorf("ParseACL(%q).Allows(%s, %v) = %v, want %v", tc.in, tc.user, tc.groups, got, tc.want)
		}
		if got := a.String(); got != tc.wantPrinted {
			t.Errorf("ParseACL(%q).String() = %q, want %q", tc.in, got, tc.wantPrinted)
		}
	}
}

const clientProtocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

func TestPolicy(t *testing.T) {
	dir := t.TempDir()
	policy := `<?xml version="1.0"?>
<configuration>
  <property><name>security.client.protocol.acl</name><value>alice,hdfs staff</value></property>
  <property><name>security.client.protocol.acl.blocked</name><value>mallory</value></property>
  <property><name>security.datanode.protocol.acl</name><value>hdfs</value></property>
  <property><name>security.ha.service.protocol.hosts</name><value>127.0.0.0/8</value></property>
</configuration>`
	if err := os.WriteFile(filepath.Join(dir, "hadoop-policy.xml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	c := conf.Defaults().With(conf.KeyValue{Key: conf.SecurityServiceAuthorizationDefaultACL, Value: "hdfs"})
	p, err := Load(c, dir)
	if err != nil {
		t.Fatal(err)
	}
	lo := netip.MustParseAddr("127.0.0.1")
	for _, tc := range []struct {
		protocol string
		s        Subject
		want     string
	}{
		{clientProtocol, Subject{User: "alice", UGI: "alice (auth:SIMPLE)", Addr: lo}, ""},
		{clientProtocol, Subject{User: "carol", Groups: []string{"staff"}, UGI: "carol (auth:SIMPLE)", Addr: lo}, ""},
		{clientProtocol, Subject{User: "joe", UGI: "joe (auth:SIMPLE)", Addr: lo},
			"User joe (auth:SIMPLE) is not authorized for protocol interface org.apache.hadoop.hdfs.protocol.ClientProtocol: denied by configured ACL"},
		{clientProtocol, Subject{User: "mallory", Groups: []string{"staff"}, UGI: "mallory (auth:SIMPLE)", Addr: lo},
			"User mallory (auth:SIMPLE) is not authorized for protocol interface org.apache.hadoop.hdfs.protocol.ClientProtocol: denied by configured ACL"},
		{"org.apache.hadoop.hdfs.server.protocol.DatanodeProtocol", Subject{User: "alice", UGI: "alice (auth:SIMPLE)", Addr: lo},
			"User alice (auth:SIMPLE) is not authorized for protocol interface org.apache.hadoop.hdfs.server.protocol.DatanodeProtocol: denied by configured ACL"},
		// The default ACL for keys the file does not set.
		{"org.apache.hadoop.hdfs.server.protocol.NamenodeProtocol", Subject{User: "hdfs", UGI: "hdfs (auth:SIMPLE)", Addr: lo}, ""},
		{"org.apache.hadoop.hdfs.server.protocol.NamenodeProtocol", Subject{User: "alice", UGI: "alice (auth:SIMPLE)", Addr: lo},
			"User alice (auth:SIMPLE) is not authorized for protocol interface org.apache.hadoop.hdfs.server.protocol.NamenodeProtocol: denied by configured ACL"},
		{"org.apache.hadoop.ha.HAServiceProtocol", Subject{User: "hdfs", UGI: "hdfs (auth:SIMPLE)", Addr: netip.MustParseAddr("10.0.0.5")},
			"Host 10.0.0.5 is not authorized for protocol interface org.apache.hadoop.ha.HAServiceProtocol"},
		{"com.example.Unknown", Subject{User: "hdfs", UGI: "hdfs (auth:SIMPLE)", Addr: lo}, "Protocol com.example.Unknown is not known."},
	} {
		err := p.Authorize(tc.protocol, tc.s)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s %+v:\n got %q\nwant %q", tc.protocol, tc.s, got, tc.want)
		}
	}
	// No policy file: every protocol takes the default ACL ("*").
	p, err = Load(conf.Defaults(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Authorize(clientProtocol, Subject{User: "joe", UGI: "joe (auth:SIMPLE)", Addr: lo}); err != nil {
		t.Errorf("default policy refused joe: %v", err)
	}
	// A malformed file is an error naming it.
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "hadoop-policy.xml"), []byte("<configuration><property>"), 0o644)
	if _, err := Load(conf.Defaults(), bad); err == nil {
		t.Error("a malformed hadoop-policy.xml must be an error")
	}
}

// FuzzParseACL: any ACL text parses without panic, and what it prints
// parses to the same list.
func FuzzParseACL(f *testing.F) {
	for _, s := range []string{"*", "a,b c,d", " g", "", " ", "a b c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a := ParseACL(s)
		if slices.Contains(a.Users, "*") || slices.Contains(a.Groups, "*") {
			return // a literal "*" name (",*") prints as the wildcard
		}
		b := ParseACL(a.String())
		if a.All != b.All || strings.Join(a.Users, ",") != strings.Join(b.Users, ",") || strings.Join(a.Groups, ",") != strings.Join(b.Groups, ",") {
			t.Fatalf("%q: %+v printed %q parses to %+v", s, a, a.String(), b)
		}
		if _, err := ParseStaticGroups(s); err != nil && !strings.Contains(err.Error(), "bad mapping") {
			t.Fatalf("%q: %v", s, err)
		}
	})
}
