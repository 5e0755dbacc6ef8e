package minicluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/haservice"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	"github.com/hdfsgo/hdfsgo/internal/security/krbtest"
	"github.com/hdfsgo/hdfsgo/internal/zktest"
)

// TestZKFCKerberos runs automatic failover with Kerberos (privacy) on
// every connection: the controllers log in from the NameNodes' keytab,
// the election makes nn1 active over Kerberos HAServiceProtocol calls
// (the NameNodes refuse SIMPLE), a graceful failover goes through nn2's
// controller (ZKFCProtocol over Kerberos, which asks nn1's controller to
// cede), and a SIMPLE caller of a controller is refused.
func TestZKFCKerberos(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster, ZooKeeper and a KDC")
	}
	kdc := krbtest.Start(t)
	zks := zktest.Start(t, zktest.Options{})
	site := kdc.Secure(t, krbtest.Services{JournalNodes: true, Protection: "privacy"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: -1, HA: true, ZooKeeper: zks.Quorum(), Conf: append(site.Keys, []conf.KeyValue{
		{Key: conf.DFSHATailEditsPeriod, Value: "100ms"},
		{Key: conf.HAZooKeeperSessionTimeout, Value: "3000"},
		{Key: conf.HAHMCheckInterval, Value: "200"},
		{Key: conf.HAHMRPCTimeout, Value: "5000"},
		{Key: conf.IPCClientConnectRetryInterval, Value: "100"},
		{Key: conf.DFSNameNodeSafeModeExtension, Value: "0"},
	}...)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitStates := func(what string, want [2]ha.State) {
		t.Helper()
		deadline := time.Now().Add(40 * time.Second)
		for {
			var s [2]ha.State
			for i, nn := range c.NameNodes() {
				s[i] = nn.HAState()
			}
			if s == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: states %v, want %v", what, s, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitStates("elected", [2]ha.State{ha.Active, ha.Standby})
	for i, ctl := range c.Controllers() {
		if err := ctl.Err(); err != nil {
			t.Fatalf("controller %d: %v", i, err)
		}
	}
	// nn2's controller takes the failover once its health monitor and
	// election have settled; until then it answers "not currently
	// healthy" (bounded retries).
	for i := 0; ; i++ {
		err := c.Failover(ctx, 0, 1)
		if err == nil {
			break
		}
		if i == 100 || !strings.Contains(err.Error(), "is not currently healthy") {
			t.Fatalf("graceful failover through the controllers: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	waitStates("after the failover", [2]ha.State{ha.Standby, ha.Active})

	// A SIMPLE caller of a controller is refused.
	z := haservice.NewZKFCClient(haservice.ClientConfig{Address: c.ControllerAddrs()[0], User: "hdfs", Timeout: 10 * time.Second, ConnectRetries: -1})
	defer z.Close()
	if err := z.GracefulFailover(ctx); err == nil || !strings.Contains(err.Error(), "SIMPLE authentication is not enabled") {
		t.Errorf("SIMPLE call to a controller: %v", err)
	}
}
