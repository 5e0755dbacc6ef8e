package minicluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/haservice"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	"github.com/hdfsgo/hdfsgo/internal/zktest"
)

// TestAutomaticFailoverWithZooKeeper runs an HA cluster whose NameNodes
// each have a failover controller, over a real ZooKeeper:
//   - the election makes nn1 active;
//   - nn1 stops as a crash would: its controller finds it silent and quits
//     the election, nn2's takes the lock, fences nn1 and makes nn2
//     active; every acknowledged file reads back and writes go on;
//   - ZooKeeper (its one server) is killed and stays away longer than the
//     session timeout, then restarts: nn2 stays active throughout and
//     takes writes, and nothing changes state (the sessions outlive the
//     restart).
//
// The process test in internal/interop/e2e covers kill -9 under load, a
// controller killed alone, a stopped active and haadmin's graceful
// failover.
func TestAutomaticFailoverWithZooKeeper(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster and ZooKeeper")
	}
	zks := zktest.Start(t, zktest.Options{})
	ctx := context.Background()
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: 3, HA: true, ZooKeeper: zks.Quorum(), Conf: []conf.KeyValue{
		{Key: conf.DFSBlockSize, Value: "1048576"},
		{Key: conf.DFSNameNodeMinBlockSize, Value: "1024"},
		{Key: conf.DFSHeartbeatInterval, Value: "1"},
		{Key: conf.DFSHATailEditsPeriod, Value: "100ms"},
		{Key: conf.DFSHALogRollPeriod, Value: "300ms"},
		{Key: conf.HAZooKeeperSessionTimeout, Value: "2000"},
		{Key: conf.HAHMCheckInterval, Value: "200"},
		{Key: conf.HAHMSleepAfterDisconnect, Value: "200"},
		{Key: conf.HAHMRPCTimeout, Value: "2000"},
		{Key: conf.HAHMRPCConnectMaxRetries, Value: "0"},
		{Key: conf.HAFCGracefulFenceRPCTimeout, Value: "1000"},
		{Key: conf.IPCClientConnectRetryInterval, Value: "100"},
		{Key: conf.DFSNameNodeSafeModeExtension, Value: "0"},
		{Key: conf.HadoopSecurityAuthorization, Value: "true"},
		{Key: "security.zkfc.protocol.acl", Value: currentUser()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	states := func() [2]ha.State {
		var s [2]ha.State
		for i, nn := range c.NameNodes() {
			s[i] = ha.Initializing
			if nn != nil {
				s[i] = nn.HAState()
			}
		}
		return s
	}
	waitStates := func(what string, want [2]ha.State) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for states() != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: states %v, want %v", what, states(), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitStates("started", [2]ha.State{ha.Active, ha.Standby})
	// A caller outside security.zkfc.protocol.acl is refused at the
	// controller's port.
	z := haservice.NewZKFCClient(haservice.ClientConfig{Address: c.ControllerAddrs()[0], User: "mallory", Timeout: 10 * time.Second, ConnectRetries: -1})
	defer z.Close()
	if err := z.GracefulFailover(ctx); err == nil || !strings.Contains(err.Error(), "User mallory (auth:SIMPLE) is not authorized for protocol interface org.apache.hadoop.ha.ZKFCProtocol") {
		t.Fatalf("a caller outside the controller's ACL: %v", err)
	}

	fsys, err := client.New(client.Options{Addresses: c.NameNodeAddrs(), User: currentUser(), BlockSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	var mu sync.Mutex
	acked := map[string][]byte{}
	n := 0
	write := func() error {
		mu.Lock()
		n++
		name := fmt.Sprintf("/f%04d", n)
		mu.Unlock()
		data := bytes.Repeat([]byte(name), 1000)
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := fsys.WriteFile(wctx, name, data, false); err != nil {
			return err
		}
		mu.Lock()
		acked[name] = data
		mu.Unlock()
		return nil
	}
	checkAll := func(when string) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		for name, data := range acked {
			got, err := fsys.ReadFile(ctx, name)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s: acknowledged %s reads %d bytes, %v", when, name, len(got), err)
			}
		}
	}
	for range 5 {
		if err := write(); err != nil {
			t.Fatal(err)
		}
	}

	// nn1 stops: nn2 takes over.
	stopped := time.Now()
	if err := c.StopNameNode(0); err != nil {
		t.Fatal(err)
	}
	waitStates("nn1 stopped", [2]ha.State{ha.Initializing, ha.Active})
	if err := write(); err != nil {
		t.Fatalf("first write after nn1 stopped: %v", err)
	}
	t.Logf("nn1 stopped: first write acknowledged by nn2 %v later", time.Since(stopped))
	checkAll("after nn1 stopped")

	// ZooKeeper away for longer than the session timeout, then back: nn2
	// stays active all along, and takes writes meanwhile.
	want := [2]ha.State{ha.Initializing, ha.Active}
	if got := states(); got != want {
		t.Fatalf("before the ZooKeeper restart: %v", got)
	}
	zks.StopAll()
	away := time.Now()
	outageWrites := 0
	for time.Since(away) < 2500*time.Millisecond {
		if got := states(); got != want {
			t.Fatalf("ZooKeeper down %v: states %v", time.Since(away), got)
		}
		if err := write(); err != nil {
			t.Fatalf("write while ZooKeeper is down: %v", err)
		}
		outageWrites++
	}
	zks.StartAll()
	back := time.Now()
	for time.Since(back) < 2*time.Second {
		if got := states(); got != want {
			t.Fatalf("ZooKeeper back %v: states %v", time.Since(back), got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d writes acknowledged while ZooKeeper was down", outageWrites)
	checkAll("at the end")
}

// TestMonitorHealthReportsLowResources: a NameNode whose name dir has less
// free space than dfs.namenode.resource.du.reserved says so to
// monitorHealth (HealthCheckFailedException), which is what makes its
// failover controller quit the election.
func TestMonitorHealthReportsLowResources(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a NameNode")
	}
	ctx := context.Background()
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: -1, Conf: []conf.KeyValue{
		{Key: conf.DFSNameNodeResourceReserved, Value: "1e"}, // 1 EiB: more than any disk here
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hc := haservice.NewClient(haservice.ClientConfig{Address: c.NameNodeAddr(), User: currentUser(), Timeout: 10 * time.Second})
	defer hc.Close()
	err = hc.MonitorHealth(ctx)
	if !errors.Is(err, haservice.ErrHealthCheckFailed) || haservice.Message(err) != "The NameNode has no resources available" {
		t.Fatalf("monitorHealth with the name dir below the reserve: %v", err)
	}
}
