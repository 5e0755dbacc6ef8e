package zkfc_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/zkfc"
	"github.com/hdfsgo/hdfsgo/internal/zktest"
)

// TestFormatAndStartChecksWithZooKeeper, against a real ZooKeeper: a
// controller refuses to start without the parent znode, without fencing,
// without automatic failover or without ZooKeeper, each with the error its
// exit code comes from; -formatZK creates the parent with the configured
// ACL and refuses to clear it unless forced or confirmed.
func TestFormatAndStartChecksWithZooKeeper(t *testing.T) {
	zks := zktest.Start(t, zktest.Options{})
	ctx := context.Background()
	digest := zk.DigestACL(zk.PermAll, "hdfs-zkfcs", "secret")[0]
	kv := []conf.KeyValue{
		{Key: "ha.zookeeper.quorum", Value: zks.Quorum() + "/chroot"},
		{Key: "ha.zookeeper.session-timeout.ms", Value: "2000"},
		{Key: "ha.zookeeper.acl", Value: "digest:" + digest.ID + ":rwcda"},
		{Key: "ha.zookeeper.auth", Value: "digest:hdfs-zkfcs:secret"},
		{Key: "dfs.ha.zkfc.port", Value: "0"},
	}
	cfg, err := zkfc.ConfigFrom(ctx, haConf(kv...), "hdfs", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The chroot must exist; ZooKeeper does not create it.
	raw, _, err := zk.Connect([]string{zks.Quorum()}, 2*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Create("/chroot", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	if _, err := zkfc.Start(ctx, cfg, zkfc.Deps{}); !errors.Is(err, zkfc.ErrNoParentZNode) ||
		!strings.Contains(err.Error(), "Run with -formatZK flag to initialize ZooKeeper.") {
		t.Fatalf("Start before -formatZK: %v", err)
	}
	if err := zkfc.Format(ctx, cfg, zkfc.FormatOptions{}); err != nil {
		t.Fatal(err)
	}
	// The parent is readable only with the credentials.
	if _, _, err := raw.Children("/chroot/hadoop-ha/ns1"); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("children of the parent without credentials: %v", err)
	}
	if err := raw.AddAuth("digest", []byte("hdfs-zkfcs:secret")); err != nil {
		t.Fatal(err)
	}
	if acl, _, err := raw.GetACL("/chroot/hadoop-ha/ns1"); err != nil || len(acl) != 1 || acl[0] != digest {
		t.Fatalf("parent ACL %+v, %v", acl, err)
	}
	if err := zkfc.Format(ctx, cfg, zkfc.FormatOptions{}); !errors.Is(err, zkfc.ErrFormatDenied) {
		t.Fatalf("second -formatZK -nonInteractive: %v", err)
	}
	asked := ""
	if err := zkfc.Format(ctx, cfg, zkfc.FormatOptions{Confirm: func(p string) bool { asked = p; return false }}); !errors.Is(err, zkfc.ErrFormatDenied) || asked != "/hadoop-ha/ns1" {
		t.Fatalf("-formatZK answered no: %v (asked about %q)", err, asked)
	}
	if err := zkfc.Format(ctx, cfg, zkfc.FormatOptions{Force: true}); err != nil {
		t.Fatalf("-formatZK -force: %v", err)
	}

	noFence, err := zkfc.ConfigFrom(ctx, haConf(append(kv, conf.KeyValue{Key: "dfs.ha.fencing.methods.ns1", Value: "x("})...), "hdfs", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zkfc.Start(ctx, noFence, zkfc.Deps{}); !errors.Is(err, zkfc.ErrNoFencer) {
		t.Fatalf("Start without a usable fencing method: %v", err)
	}
	if _, err := zkfc.ConfigFrom(ctx, haConf(append(kv, conf.KeyValue{Key: "dfs.ha.automatic-failover.enabled.ns1", Value: "false"})...), "hdfs", nil); !errors.Is(err, zkfc.ErrAutoFailoverDisabled) {
		t.Fatalf("without automatic failover: %v", err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	nozk, err := zkfc.ConfigFrom(ctx, haConf(append(kv, conf.KeyValue{Key: "ha.zookeeper.quorum", Value: closed},
		conf.KeyValue{Key: "ha.zookeeper.session-timeout.ms", Value: "500"})...), "hdfs", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zkfc.Start(ctx, nozk, zkfc.Deps{}); !errors.Is(err, zkfc.ErrNoZooKeeper) ||
		!strings.Contains(err.Error(), "Unable to connect to ZooKeeper quorum at "+closed) {
		t.Fatalf("Start without ZooKeeper: %v", err)
	}
}
