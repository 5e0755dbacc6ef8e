package minicluster

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	qjpb "github.com/hdfsgo/hdfsgo/internal/proto/qjournal"
	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/security/krbtest"
)

// TestKerberosHA runs an HA nameservice (two NameNodes, three
// JournalNodes, bootstrap of the standby) with Kerberos and privacy on
// every connection: NameNode to JournalNodes, JournalNode to JournalNode,
// standby to active, client to NameNodes. What the client wrote before a
// failover is there after it.
func TestKerberosHA(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	kdc := krbtest.Start(t)
	t.Setenv("KRB5_CONFIG", kdc.Krb5Conf)
	realm := krbtest.Realm
	nnKT := filepath.Join(kdc.Dir, "nn.keytab")
	jnKT := filepath.Join(kdc.Dir, "jn.keytab")
	for h := range map[string]bool{"localhost": true, security.HostOf("127.0.0.1:0"): true} {
		kdc.AddPrincipalTo("nn/"+h+"@"+realm, nnKT)
		kdc.AddPrincipalTo("jn/"+h+"@"+realm, jnKT)
	}
	hdfsKT := kdc.AddPrincipal("hdfs")
	c := startQJMCluster(t,
		conf.KeyValue{Key: conf.HadoopSecurityAuthentication, Value: "kerberos"},
		conf.KeyValue{Key: conf.HadoopRPCProtection, Value: "privacy"},
		conf.KeyValue{Key: conf.DFSNameNodeKerberosPrincipal, Value: "nn/_HOST@" + realm},
		conf.KeyValue{Key: conf.DFSNameNodeKeytabFile, Value: nnKT},
		conf.KeyValue{Key: conf.DFSJournalNodeKerberosPrincipal, Value: "jn/_HOST@" + realm},
		conf.KeyValue{Key: conf.DFSJournalNodeKeytabFile, Value: jnKT},
		conf.KeyValue{Key: conf.HadoopSecurityAuthToLocal, Value: "RULE:[2:$1@$0](nn@" + realm + ")s/.*/hdfs/ DEFAULT"},
	)
	fsys, err := client.New(client.Options{Addresses: c.NameNodeAddrs(),
		KerberosClient: kdc.ClientFromKeytab("hdfs", hdfsKT), KerberosServicePrincipal: "nn/_HOST@" + realm, RPCProtection: "privacy"})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := fsys.Mkdir(ctx, "/before", 0o755); err != nil {
		t.Fatal(err)
	}
	nns := c.NameNodes()
	waitStandbyCaughtUp(t, nns[0], nns[1])
	if err := c.Failover(ctx, 0, 1); err != nil {
		t.Fatal(err)
	}
	if fi, err := fsys.Stat(ctx, "/before"); err != nil || !fi.IsDir() {
		t.Fatalf("after the failover: %v %v", fi, err)
	}
	if err := fsys.Mkdir(ctx, "/after", 0o755); err != nil {
		t.Fatal(err)
	}
	fi, err := fsys.Stat(ctx, "/after")
	if err != nil {
		t.Fatal(err)
	}
	if owner := fi.Status().Owner; owner != "hdfs" {
		t.Errorf("owner %q, want hdfs (the ticket's user)", owner)
	}
	// The JournalNodes and the NameNodes refuse SIMPLE callers.
	for _, addr := range append(c.JournalNodeAddrs(), c.NameNodeAddrs()...) {
		rc := ipc.NewClient(ipc.ClientConfig{Addresses: []string{addr}, User: "hdfs", MaxRetries: -1,
			Protocol: "org.apache.hadoop.hdfs.qjournal.protocol.QJournalProtocol"})
		err := rc.Call(ctx, "getJournalState", &qjpb.GetJournalStateRequestProto{Jid: &qjpb.JournalIdProto{Identifier: proto.String(Nameservice)}},
			&qjpb.GetJournalStateResponseProto{})
		rc.Close()
		if err == nil || !strings.Contains(err.Error(), "SIMPLE authentication is not enabled") {
			t.Errorf("SIMPLE call to %s: %v", addr, err)
		}
	}
}
