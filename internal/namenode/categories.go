package namenode

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// categories is every RPC method the NameNode serves with its operation
// category (package ha): the HA check every call passes first. A method
// registered without an entry here is a programming error that handle
// reports at start-up. The categories follow Hadoop's NameNodeRpcServer.
var categories = map[string]map[string]ha.Category{
	ClientProtocolName: {
		// Reads.
		"getServerDefaults": ha.Read, "getFileInfo": ha.Read, "getFileLinkInfo": ha.Read,
		"getListing": ha.Read, "getContentSummary": ha.Read, "getQuotaUsage": ha.Read,
		"getFsStats": ha.Read, "getFsReplicatedBlockStats": ha.Read, "getFsECBlockGroupStats": ha.Read,
		"getPreferredBlockSize": ha.Read, "isFileClosed": ha.Read, "getBlockLocations": ha.Read,
		"getAdditionalDatanode": ha.Read, "getDataEncryptionKey": ha.Read,
		// Writes.
		"mkdirs": ha.Write, "create": ha.Write, "delete": ha.Write, "rename": ha.Write,
		"rename2": ha.Write, "setPermission": ha.Write, "setOwner": ha.Write, "setTimes": ha.Write,
		"setReplication": ha.Write, "setQuota": ha.Write, "renewLease": ha.Write, "concat": ha.Write,
		"addBlock": ha.Write, "complete": ha.Write, "abandonBlock": ha.Write,
		"updateBlockForPipeline": ha.Write, "updatePipeline": ha.Write, "reportBadBlocks": ha.Write,
		"fsync": ha.Write, "append": ha.Write, "recoverLease": ha.Write, "truncate": ha.Write,
		"msync": ha.Write,
		// Extended attributes, ACLs, storage policies.
		"setXAttr": ha.Write, "removeXAttr": ha.Write, "getXAttrs": ha.Read, "listXAttrs": ha.Read,
		"setStoragePolicy": ha.Write, "unsetStoragePolicy": ha.Write, "getStoragePolicy": ha.Read,
		"getStoragePolicies": ha.Read,
		"modifyAclEntries":   ha.Write, "removeAclEntries": ha.Write, "removeDefaultAcl": ha.Write,
		"removeAcl": ha.Write, "setAcl": ha.Write, "getAclStatus": ha.Read,
		"allowSnapshot": ha.Write, "disallowSnapshot": ha.Write, "getSnapshottableDirListing": ha.Read,
		"createSnapshot": ha.Write, "deleteSnapshot": ha.Write, "renameSnapshot": ha.Write, "getSnapshotListing": ha.Read,
		"getSnapshotDiffReport": ha.Read, "getSnapshotDiffReportListing": ha.Read,
		"getDelegationToken": ha.Write, "renewDelegationToken": ha.Write, "cancelDelegationToken": ha.Write,
		// The edit log's own.
		"rollEdits": ha.Journal, "getCurrentEditLogTxid": ha.Journal,
		// Administration, answered in every state.
		"getDatanodeReport": ha.Unchecked, "getHAServiceState": ha.Unchecked, "setSafeMode": ha.Unchecked,
		"saveNamespace": ha.Unchecked, "metaSave": ha.Unchecked, "listOpenFiles": ha.Read, "setBalancerBandwidth": ha.Unchecked,
		"finalizeUpgrade": ha.Unchecked, "upgradeStatus": ha.Unchecked, "rollingUpgrade": ha.Read,
		"refreshNodes": ha.Unchecked, "getDatanodeStorageReport": ha.Unchecked,
	},
	// The user-mapping protocols (usermappings.go).
	GetUserMappingsProtocolName: {"getGroupsForUser": ha.Unchecked},
	RefreshUserMappingsProtocolName: {
		"refreshUserToGroupsMappings": ha.Unchecked, "refreshSuperUserGroupsConfiguration": ha.Unchecked,
	},
	RefreshCallQueueProtocolName: {"refreshCallQueue": ha.Unchecked},
	// dfsadmin -refreshServiceAcl (secauth.go).
	RefreshAuthorizationPolicyProtocolName: {"refreshServiceAcl": ha.Unchecked},
	// DataNodes report to every NameNode of the nameservice, whatever its
	// state; they take orders from the active only.
	DatanodeProtocolName: {
		"versionRequest": ha.Unchecked, "registerDatanode": ha.Unchecked, "sendHeartbeat": ha.Unchecked,
		"blockReport": ha.Unchecked, "blockReceivedAndDeleted": ha.Unchecked, "errorReport": ha.Unchecked,
		"reportBadBlocks": ha.Unchecked, "cacheReport": ha.Unchecked, "commitBlockSynchronization": ha.Write,
	},
	NamenodeProtocolName: {
		"versionRequest": ha.Unchecked, "getTransactionId": ha.Unchecked, "getMostRecentCheckpointTxId": ha.Unchecked,
		"rollEditLog": ha.Journal, "getEditLogManifest": ha.Read,
		"registerSubordinateNamenode": ha.Checkpoint, "startCheckpoint": ha.Checkpoint, "endCheckpoint": ha.Checkpoint,
		"errorReport": ha.Unchecked, "isUpgradeFinalized": ha.Unchecked, "isRollingUpgrade": ha.Unchecked,
		"getBlocks": ha.Read, "getBlockKeys": ha.Unchecked,
	},
	// The active's edit stream to its Backup Node (served by Backup Nodes
	// only).
	JournalProtocolName: {
		"journal": ha.Journal, "startLogSegment": ha.Journal, "fence": ha.Journal,
	},
}

// activeAdmin are the administrative calls (UNCHECKED or JOURNAL, so the
// category check lets them through) that only a NameNode proper carries
// out: a helper's namespace is the active's copy, and its edit log only
// reads (Hadoop's Backup Node refuses them too).
var activeAdmin = map[string]bool{
	"setSafeMode": true, "saveNamespace": true, "rollEdits": true, "setBalancerBandwidth": true,
}

// handle registers h as method of s: every call passes the HA check of the
// method's category and the request limits (limits.go) before h sees it.
func handle[Req, Resp proto.Message](nn *NameNode, s *ipc.Service, method string, h func(context.Context, Req) (Resp, error)) {
	cat, ok := categories[s.Name()][method]
	if !ok {
		panic(fmt.Sprintf("namenode: %s.%s has no operation category", s.Name(), method))
	}
	audited := s.Name() == ClientProtocolName
	ipc.Handle(s, method, func(ctx context.Context, req Req) (Resp, error) {
		var zero Resp
		if err := nn.precheck(ctx, cat, method, req); err != nil {
			return zero, err
		}
		resp, err := h(withSafeModeOp(ctx, method, req), req)
		nn.activity.record(method, err == nil)
		if audited {
			nn.auditCall(ctx, method, req, resp, err)
		}
		if err == nil && nn.tokens != nil {
			nn.tokens.sign(ctx, method, resp)
		}
		return resp, err
	})
}

// precheck is what every client call passes before its handler, whether it
// came over RPC or WebHDFS: the HA check of its category, the refusal of
// active-only administration on a helper, the user name's length and the
// request limits.
func (nn *NameNode) precheck(ctx context.Context, cat ha.Category, method string, req proto.Message) error {
	if err := nn.ha.check(cat); err != nil {
		return err
	}
	if nn.role != RoleNameNode && activeAdmin[method] {
		return remoteerr.New(remoteerr.ClassUnsupported, "%s is not supported by a %s", method, nn.role)
	}
	if u := callerUser(ctx); len(u) > MaxClientNameLength {
		return remoteerr.AccessControl(fmt.Sprintf("%s: user name too long: %d bytes, the limit is %d", method, len(u), MaxClientNameLength))
	}
	return checkRequest(method, req)
}
