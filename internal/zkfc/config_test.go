package zkfc_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/zkfc"
)

func TestParseACL(t *testing.T) {
	acl, err := zkfc.ParseACL("world:anyone:rwcda")
	if err != nil || len(acl) != 1 || acl[0] != (zk.ACL{Scheme: "world", ID: "anyone", Perms: zk.PermAll}) {
		t.Fatalf("default ACL: %+v, %v", acl, err)
	}
	// A digest id holds a colon itself; perms are after the last one.
	acl, err = zkfc.ParseACL(" digest:hdfs-zkfcs:vlUvLnd8MlacsE80rDuu6ONESbM=:rwcda , sasl:hdfs/host@REALM:cdr ")
	if err != nil || len(acl) != 2 ||
		acl[0] != (zk.ACL{Scheme: "digest", ID: "hdfs-zkfcs:vlUvLnd8MlacsE80rDuu6ONESbM=", Perms: zk.PermAll}) ||
		acl[1] != (zk.ACL{Scheme: "sasl", ID: "hdfs/host@REALM", Perms: zk.PermCreate | zk.PermDelete | zk.PermRead}) {
		t.Fatalf("%+v, %v", acl, err)
	}
	// Empty: the creator may do everything.
	acl, err = zkfc.ParseACL(" , ")
	if err != nil || len(acl) != 1 || acl[0] != (zk.ACL{Scheme: "auth", Perms: zk.PermAll}) {
		t.Fatalf("empty ACL: %+v, %v", acl, err)
	}
	for in, msg := range map[string]string{
		"world:anyone":        "ACL 'world:anyone' not of expected form scheme:id:perm",
		"worldanyone":         "ACL 'worldanyone' not of expected form scheme:id:perm",
		"world:anyone:rwxcda": "Invalid permission 'x' in permission string 'rwxcda'",
	} {
		if _, err := zkfc.ParseACL(in); !errors.Is(err, zkfc.ErrBadACL) || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseACL(%q): %v, want %q", in, err, msg)
		}
	}
}

func TestParseAuth(t *testing.T) {
	auth, err := zkfc.ParseAuth("digest:hdfs-zkfcs:pass:word, sasl:x")
	if err != nil || len(auth) != 2 || auth[0].Scheme != "digest" || string(auth[0].Auth) != "hdfs-zkfcs:pass:word" || auth[1].Scheme != "sasl" {
		t.Fatalf("%+v, %v", auth, err)
	}
	if _, err := zkfc.ParseAuth("digest"); err == nil || !strings.Contains(err.Error(), "Auth 'digest' not of expected form scheme:auth") {
		t.Fatalf("ParseAuth(digest): %v", err)
	}
}

// haConf is a two-NameNode nameservice with automatic failover.
func haConf(kv ...conf.KeyValue) *conf.Conf {
	base := []conf.KeyValue{
		{Key: "dfs.nameservices", Value: "ns1"},
		{Key: "dfs.ha.namenodes.ns1", Value: "nn1,nn2"},
		{Key: "dfs.namenode.rpc-address.ns1.nn1", Value: "127.0.0.1:8020"},
		{Key: "dfs.namenode.rpc-address.ns1.nn2", Value: "127.0.0.1:8021"},
		{Key: "dfs.ha.namenode.id", Value: "nn1"},
		{Key: "dfs.ha.automatic-failover.enabled", Value: "true"},
		{Key: "dfs.ha.fencing.methods", Value: "shell(/bin/true)"},
		{Key: "ha.zookeeper.quorum", Value: "127.0.0.1:2181"},
	}
	return conf.Defaults().With(append(base, kv...)...)
}

// TestConfigFrom: Hadoop's keys and defaults, the per-nameservice and
// per-NameNode overrides of the controller's keys, the chroot of a quorum,
// "@file" indirection, and refusals that name the key.
func TestConfigFrom(t *testing.T) {
	ctx := context.Background()
	cfg, err := zkfc.ConfigFrom(ctx, haConf(), "hdfs", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Nameservice != "ns1" || cfg.NameNodeID != "nn1" || cfg.Local.Port != 8020 || len(cfg.Others) != 1 || cfg.Others[0].NameNodeID != "nn2" {
		t.Fatalf("targets: %+v", cfg)
	}
	if cfg.ParentZNode != "/hadoop-ha/ns1" || cfg.LockPath() != "/hadoop-ha/ns1/ActiveStandbyElectorLock" ||
		cfg.BreadcrumbPath() != "/hadoop-ha/ns1/ActiveBreadCrumb" {
		t.Errorf("paths %s %s %s", cfg.ParentZNode, cfg.LockPath(), cfg.BreadcrumbPath())
	}
	if cfg.SessionTimeout.Milliseconds() != 10000 || cfg.MaxRetries != 3 || cfg.Health.CheckInterval.Milliseconds() != 1000 ||
		cfg.HealthRPCTimeout.Milliseconds() != 45000 || cfg.HealthConnectRetries != 1 || cfg.RPCAddress != "127.0.0.1:8019" {
		t.Errorf("defaults: %+v", cfg)
	}
	if len(cfg.ACL) != 1 || cfg.ACL[0].Scheme != "world" || len(cfg.Auth) != 0 {
		t.Errorf("ACL %+v auth %+v", cfg.ACL, cfg.Auth)
	}

	secret := filepath.Join(t.TempDir(), "zk-auth")
	if err := os.WriteFile(secret, []byte("digest:hdfs-zkfcs:secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = zkfc.ConfigFrom(ctx, haConf(
		conf.KeyValue{Key: "ha.zookeeper.quorum.ns1.nn1", Value: "zk1, zk2:2182/hdfs"},
		conf.KeyValue{Key: "ha.zookeeper.session-timeout.ms.ns1", Value: "2000"},
		conf.KeyValue{Key: "ha.zookeeper.auth", Value: "@" + secret},
		conf.KeyValue{Key: "dfs.ha.zkfc.port.ns1.nn1", Value: "0"},
	), "hdfs", nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Servers, ",") != "zk1:2181,zk2:2182" || cfg.Chroot != "/hdfs" || cfg.SessionTimeout.Milliseconds() != 2000 ||
		len(cfg.Auth) != 1 || string(cfg.Auth[0].Auth) != "hdfs-zkfcs:secret" || cfg.RPCAddress != "127.0.0.1:0" {
		t.Fatalf("overrides: servers %v chroot %q timeout %v auth %+v rpc %s", cfg.Servers, cfg.Chroot, cfg.SessionTimeout, cfg.Auth, cfg.RPCAddress)
	}

	for _, tc := range []struct {
		kv   []conf.KeyValue
		want string
	}{
		{[]conf.KeyValue{{Key: "ha.zookeeper.quorum", Value: ""}}, "Missing required configuration 'ha.zookeeper.quorum' for ZooKeeper quorum"},
		{[]conf.KeyValue{{Key: "ha.zookeeper.session-timeout.ms", Value: "0"}}, "Invalid ZK session timeout 0"},
		{[]conf.KeyValue{{Key: "ha.zookeeper.acl", Value: "world:anyone"}}, "ha.zookeeper.acl"},
		{[]conf.KeyValue{{Key: "ha.zookeeper.auth", Value: "@/nonexistent/file"}}, "ha.zookeeper.auth"},
		{[]conf.KeyValue{{Key: "ha.zookeeper.parent-znode", Value: "hadoop-ha"}}, "ha.zookeeper.parent-znode"},
		{[]conf.KeyValue{{Key: "dfs.ha.namenodes.ns1", Value: "nn1"}}, "HA is not enabled for this namenode."},
		{[]conf.KeyValue{{Key: "dfs.ha.namenode.id", Value: ""}}, "Could not get the namenode ID of this node"},
		{[]conf.KeyValue{{Key: "ha.failover-controller.active-standby-elector.zk.op.retries", Value: "0"}}, "zk.op.retries must be at least 1"},
	} {
		if _, err := zkfc.ConfigFrom(ctx, haConf(tc.kv...), "hdfs", nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.kv, err, tc.want)
		}
	}
}

func TestAccessList(t *testing.T) {
	a := zkfc.ParseAccessList("alice,bob admins")
	if !a.Allows("alice", nil) || !a.Allows("carol", []string{"x", "admins"}) || a.Allows("carol", []string{"x"}) {
		t.Errorf("%+v", a)
	}
	if !zkfc.ParseAccessList("*").Allows("anyone", nil) || zkfc.ParseAccessList(" ").Allows("anyone", nil) {
		t.Error("* or the default")
	}
}

// TestConfigNeedsAutomaticFailover: without dfs.ha.automatic-failover.enabled
// the controller refuses before it looks at anything about ZooKeeper
// (Hadoop's exit code 5 comes first).
func TestConfigNeedsAutomaticFailover(t *testing.T) {
	_, err := zkfc.ConfigFrom(context.Background(), haConf(
		conf.KeyValue{Key: "dfs.ha.automatic-failover.enabled", Value: "false"},
		conf.KeyValue{Key: "ha.zookeeper.quorum", Value: ""}), "hdfs", nil)
	if !errors.Is(err, zkfc.ErrAutoFailoverDisabled) || !strings.Contains(err.Error(), "Automatic failover is not enabled for NameNode at ") {
		t.Fatal(err)
	}
}
