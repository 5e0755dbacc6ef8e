package namenode

import (
	"context"

	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// The user-mapping protocols the NameNode serves besides ClientProtocol,
// as Hadoop's NameNode does on its RPC port.
const (
	GetUserMappingsProtocolName     = "org.apache.hadoop.tools.GetUserMappingsProtocol"
	RefreshUserMappingsProtocolName = "org.apache.hadoop.security.RefreshUserMappingsProtocol"
	RefreshCallQueueProtocolName    = "org.apache.hadoop.ipc.RefreshCallQueueProtocol"
)

// registerUserMappings serves `hdfs groups` (getGroupsForUser) and
// `dfsadmin -refreshUserToGroupsMappings`, which empties the group cache;
// -refreshSuperUserGroupsConfiguration, which reads the proxy users again
// (secauth.go); -refreshCallQueue answers that it is not supported yet.
func registerUserMappings(nn *NameNode, c *clientRPC) {
	handle(nn, nn.rpc.Service(GetUserMappingsProtocolName), "getGroupsForUser",
		func(ctx context.Context, req *common.GetGroupsForUserRequestProto) (*common.GetGroupsForUserResponseProto, error) {
			return &common.GetGroupsForUserResponseProto{Groups: append([]string{}, nn.groups.groups(req.GetUser())...)}, nil
		})
	s := nn.rpc.Service(RefreshUserMappingsProtocolName)
	handle(nn, s, "refreshUserToGroupsMappings",
		func(ctx context.Context, _ *common.RefreshUserToGroupsMappingsRequestProto) (*common.RefreshUserToGroupsMappingsResponseProto, error) {
			if err := c.checkSuper(ctx); err != nil {
				return nil, err
			}
			nn.groups.clear()
			nn.deps.Logger.Info("refreshed the user-to-groups mappings")
			return &common.RefreshUserToGroupsMappingsResponseProto{}, nil
		})
	handle(nn, s, "refreshSuperUserGroupsConfiguration",
		func(ctx context.Context, _ *common.RefreshSuperUserGroupsConfigurationRequestProto) (*common.RefreshSuperUserGroupsConfigurationResponseProto, error) {
			if err := c.checkSuper(ctx); err != nil {
				return nil, err
			}
			return nil, nn.refreshProxyUsers()
		})
	registerRefreshPolicy(nn, c)
	handle(nn, nn.rpc.Service(RefreshCallQueueProtocolName), "refreshCallQueue",
		func(ctx context.Context, _ *common.RefreshCallQueueRequestProto) (*common.RefreshCallQueueResponseProto, error) {
			if err := c.checkSuper(ctx); err != nil {
				return nil, err
			}
			return nil, remoteerr.New(remoteerr.ClassUnsupported, "reloading the call queue is not supported yet")
		})
}
