package minicluster

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/hdfsgo/hdfsgo/internal/datanode"
	"github.com/hdfsgo/hdfsgo/internal/haservice"
	"github.com/hdfsgo/hdfsgo/internal/ipc/ipctest"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	nnpb "github.com/hdfsgo/hdfsgo/internal/proto/namenode"
)

// TestEveryMethodAnswered walks the .proto service of every protocol the
// NameNode and a DataNode serve and calls each method: none may answer
// RpcNoSuchMethodException; the ones not implemented answer
// UnsupportedOperationException naming the method.
func TestEveryMethodAnswered(t *testing.T) {
	ctx := context.Background()
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nn := c.NameNode()
	user := nn.SuperUser()
	dn := c.DataNodes()[0]
	svc := func(fd protoreflect.FileDescriptor, name string) protoreflect.ServiceDescriptor {
		sd := fd.Services().ByName(protoreflect.Name(name))
		if sd == nil {
			t.Fatalf("%s has no service %s", fd.Path(), name)
		}
		return sd
	}
	cases := []struct {
		addr, protocol string
		sd             protoreflect.ServiceDescriptor
		// implemented must be answered by a handler of their own.
		implemented []string
	}{
		{c.NameNodeAddr(), namenode.ClientProtocolName, svc(hdfs.File_hdfs_ClientNamenodeProtocol_proto, "ClientNamenodeProtocol"), []string{"getFileInfo", "mkdirs"}},
		{c.NameNodeAddr(), namenode.DatanodeProtocolName, svc(dnpb.File_datanode_DatanodeProtocol_proto, "DatanodeProtocolService"), []string{"versionRequest"}},
		{c.NameNodeAddr(), namenode.NamenodeProtocolName, svc(nnpb.File_namenode_NamenodeProtocol_proto, "NamenodeProtocolService"), []string{"getTransactionId"}},
		{c.NameNodeAddr(), haservice.Protocol, svc(common.File_common_HAServiceProtocol_proto, "HAServiceProtocolService"), []string{"getServiceStatus"}},
		{dn.IPCAddr().String(), datanode.ClientDatanodeProtocol, svc(hdfs.File_hdfs_ClientDatanodeProtocol_proto, "ClientDatanodeProtocolService"), []string{"getBalancerBandwidth"}},
		{dn.IPCAddr().String(), datanode.InterDatanodeProtocol, svc(hdfs.File_hdfs_InterDatanodeProtocol_proto, "InterDatanodeProtocolService"), nil},
		{dn.IPCAddr().String(), datanode.ReconfigurationProtocol, svc(hdfs.File_hdfs_ReconfigurationProtocol_proto, "ReconfigurationProtocolService"), nil},
	}
	for _, tc := range cases {
		res := ipctest.CheckService(t, tc.addr, tc.protocol, user, tc.sd)
		for _, m := range tc.implemented {
			if slices.Contains(res.Unsupported, m) {
				t.Errorf("%s.%s answered unsupported, want its handler", tc.protocol, m)
			}
		}
		t.Logf("%s: %d methods answered, %d unsupported %v", tc.protocol, len(res.Answered), len(res.Unsupported), res.Unsupported)
	}
}
