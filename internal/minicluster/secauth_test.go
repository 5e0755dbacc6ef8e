package minicluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/web/webtest"
)

// TestDataNodeServiceACL: with hadoop.security.authorization a DataNode's
// IPC port checks security.client.datanode.protocol.acl when a connection
// arrives; the DataNodes themselves register under the default
// security.datanode.protocol.acl (*).
func TestDataNodeServiceACL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: 1, Conf: []conf.KeyValue{
		{Key: conf.HadoopSecurityAuthorization, Value: "true"},
		{Key: "security.client.datanode.protocol.acl", Value: "alice"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.DataNodes()[0].IPCAddr().String()
	bandwidth := func(user string) error {
		cl := ipc.NewClient(ipc.ClientConfig{Addresses: []string{addr}, User: user, MaxRetries: -1,
			Protocol: "org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol"})
		defer cl.Close()
		return cl.Call(ctx, "getBalancerBandwidth", &hdfs.GetBalancerBandwidthRequestProto{}, &hdfs.GetBalancerBandwidthResponseProto{})
	}
	if err := bandwidth("alice"); err != nil {
		t.Fatalf("alice, on the ACL: %v", err)
	}
	err = bandwidth("joe")
	var re *remoteerr.Error
	want := "User joe (auth:SIMPLE) is not authorized for protocol interface org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol: denied by configured ACL"
	if !errors.As(err, &re) || re.Class != "org.apache.hadoop.security.authorize.AuthorizationException" || !strings.Contains(re.Message, want) {
		t.Fatalf("joe: %v, want AuthorizationException %q", err, want)
	}
}

// TestDataNodeWebAdmins: with hadoop.security.authorization a DataNode's
// /stacks is for administrators only; /jmx stays open.
func TestDataNodeWebAdmins(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: 1, Conf: []conf.KeyValue{
		{Key: conf.HadoopSecurityAuthorization, Value: "true"},
		{Key: conf.DFSClusterAdministrators, Value: "alice"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	base := "http://" + c.DataNodes()[0].HTTPAddr().String()
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/stacks?user.name=joe", 403},
		{"/stacks", 403},
		{"/jmx?user.name=joe", 200},
		{"/stacks?user.name=alice", 200},
	} {
		if code, body := webtest.Get(t, base+tc.path); code != tc.want {
			t.Errorf("%s: %d, want %d: %s", tc.path, code, tc.want, body)
		}
	}
}
