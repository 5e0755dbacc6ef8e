package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/cli/fsshell"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
)

const groupsUsage = `Usage: hdfs groups [username ...]

Prints the groups the NameNode resolves for each user (by default the
current user), one line per user: "user : group1 group2 ...".
`

// The NameNode's user-mapping protocols.
const (
	getUserMappingsProtocol     = "org.apache.hadoop.tools.GetUserMappingsProtocol"
	refreshUserMappingsProtocol = "org.apache.hadoop.security.RefreshUserMappingsProtocol"
	refreshCallQueueProtocol    = "org.apache.hadoop.ipc.RefreshCallQueueProtocol"
	refreshPolicyProtocol       = "org.apache.hadoop.security.authorize.RefreshAuthorizationPolicyProtocol"
)

// nnProtocolClient dials the configured NameNode(s) for another protocol
// than ClientProtocol, with the configured connection retries.
func nnProtocolClient(inv *Invocation, protocol string) (*ipc.Client, error) {
	addrs, _, err := fsshell.NameNodeAddresses(inv.Conf)
	if err != nil {
		return nil, err
	}
	var opts client.Options
	if err := fsshell.ConnectRetryFromConf(inv.Conf, inv.Env.Stderr, &opts); err != nil {
		return nil, err
	}
	return ipc.NewClient(ipc.ClientConfig{Addresses: addrs, User: clientUser(inv), Protocol: protocol,
		ConnectRetry: ipc.ConnectRetry{MaxRetries: opts.ConnectMaxRetries, Interval: opts.ConnectRetryInterval, Notify: opts.OnConnectRetry}}), nil
}

// runGroups is `hdfs groups [USER...]`: GetUserMappingsProtocol on the
// NameNode.
func runGroups(inv *Invocation) int {
	users := inv.Args
	for _, u := range users {
		if strings.HasPrefix(u, "-") {
			fmt.Fprint(inv.Env.Stderr, groupsUsage)
			return exitUsage
		}
	}
	if len(users) == 0 {
		users = []string{clientUser(inv)}
	}
	c, err := nnProtocolClient(inv, getUserMappingsProtocol)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "hdfs groups: %v\n", err)
		return exitFail
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, u := range users {
		var resp common.GetGroupsForUserResponseProto
		if err := c.Call(ctx, "getGroupsForUser", &common.GetGroupsForUserRequestProto{User: proto.String(u)}, &resp); err != nil {
			fmt.Fprintf(inv.Env.Stderr, "hdfs groups: %s\n", firstLineOf(errMessage(err)))
			return exitFail
		}
		line := u + " :"
		for _, g := range resp.GetGroups() {
			line += " " + g
		}
		fmt.Fprintln(inv.Env.Stdout, line)
	}
	return exitOK
}

// refreshCmd is dfsadmin -refreshUserToGroupsMappings,
// -refreshSuperUserGroupsConfiguration, -refreshServiceAcl and
// -refreshCallQueue.
func refreshCmd(inv *Invocation, cmd string, args []string) int {
	if len(args) != 0 {
		return dfsadminUsageOf(inv, cmd)
	}
	var protocol, method, done string
	var req, resp proto.Message
	switch cmd {
	case "-refreshUserToGroupsMappings":
		protocol, method, done = refreshUserMappingsProtocol, "refreshUserToGroupsMappings", "Refresh user to groups mapping successful"
		req, resp = &common.RefreshUserToGroupsMappingsRequestProto{}, &common.RefreshUserToGroupsMappingsResponseProto{}
	case "-refreshSuperUserGroupsConfiguration":
		protocol, method, done = refreshUserMappingsProtocol, "refreshSuperUserGroupsConfiguration", "Refresh super user groups configuration successful"
		req, resp = &common.RefreshSuperUserGroupsConfigurationRequestProto{}, &common.RefreshSuperUserGroupsConfigurationResponseProto{}
	case "-refreshServiceAcl":
		protocol, method, done = refreshPolicyProtocol, "refreshServiceAcl", "Refresh service acl successful"
		req, resp = &common.RefreshServiceAclRequestProto{}, &common.RefreshServiceAclResponseProto{}
	default:
		protocol, method, done = refreshCallQueueProtocol, "refreshCallQueue", "Refresh call queue successful"
		req, resp = &common.RefreshCallQueueRequestProto{}, &common.RefreshCallQueueResponseProto{}
	}
	c, err := nnProtocolClient(inv, protocol)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "%s: %v\n", method, err)
		return exitAdminError
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Call(ctx, method, req, resp); err != nil {
		fmt.Fprintf(inv.Env.Stderr, "%s: %s\n", method, firstLineOf(errMessage(err)))
		return exitAdminError
	}
	fmt.Fprintln(inv.Env.Stdout, done)
	return exitOK
}
