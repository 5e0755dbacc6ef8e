package namenode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// ClientProtocolName is ClientNamenodeProtocol's Java interface name, the
// protocol name clients send.
const ClientProtocolName = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

// clientRPC serves ClientNamenodeProtocol: it converts protobuf requests into
// namespace calls and namespace answers into protobuf, and nothing else.
type clientRPC struct {
	nn *NameNode
	ns *namesystem
}

func registerClientProtocol(nn *NameNode) {
	c := &clientRPC{nn: nn, ns: nn.ns}
	s := nn.rpc.Service(ClientProtocolName)
	s.Describe(hdfs.File_hdfs_ClientNamenodeProtocol_proto.Services().ByName("ClientNamenodeProtocol"))
	registerUserMappings(nn, c)

	handle(nn, s, "getServerDefaults", c.getServerDefaults)
	registerDelegationCalls(c, s)
	handle(nn, s, "getFileInfo", c.getFileInfo)
	handle(nn, s, "getFileLinkInfo", c.getFileLinkInfo)
	handle(nn, s, "getListing", c.getListing)
	handle(nn, s, "mkdirs", c.mkdirs)
	handle(nn, s, "create", c.create)
	handle(nn, s, "delete", c.delete)
	handle(nn, s, "rename", c.rename)
	handle(nn, s, "rename2", c.rename2)
	handle(nn, s, "setPermission", c.setPermission)
	handle(nn, s, "setOwner", c.setOwner)
	handle(nn, s, "setTimes", c.setTimes)
	handle(nn, s, "setReplication", c.setReplication)
	handle(nn, s, "getContentSummary", c.getContentSummary)
	handle(nn, s, "getQuotaUsage", c.getQuotaUsage)
	handle(nn, s, "setQuota", c.setQuota)
	handle(nn, s, "getFsStats", c.getFsStats)
	handle(nn, s, "getFsReplicatedBlockStats", c.getFsReplicatedBlockStats)
	handle(nn, s, "getFsECBlockGroupStats", c.getFsECBlockGroupStats)
	handle(nn, s, "getPreferredBlockSize", c.getPreferredBlockSize)
	handle(nn, s, "renewLease", c.renewLease)
	handle(nn, s, "isFileClosed", c.isFileClosed)
	handle(nn, s, "setSafeMode", c.setSafeMode)
	handle(nn, s, "saveNamespace", c.saveNamespace)
	handle(nn, s, "rollEdits", c.rollEdits)
	handle(nn, s, "getCurrentEditLogTxid", c.getCurrentEditLogTxid)
	handle(nn, s, "metaSave", c.metaSave)
	handle(nn, s, "listOpenFiles", c.listOpenFiles)
	handle(nn, s, "concat", c.concat)
	handle(nn, s, "getDatanodeReport", c.getDatanodeReport)
	handle(nn, s, "getHAServiceState", c.getHAServiceState)
	handle(nn, s, "msync", c.msync)
	handle(nn, s, "getDataEncryptionKey", c.getDataEncryptionKey)
	handle(nn, s, "setBalancerBandwidth", c.setBalancerBandwidth)
	handle(nn, s, "finalizeUpgrade", c.finalizeUpgrade)
	handle(nn, s, "upgradeStatus", c.upgradeStatus)
	handle(nn, s, "rollingUpgrade", c.rollingUpgrade)
	handle(nn, s, "refreshNodes", c.refreshNodes)
	handle(nn, s, "getDatanodeStorageReport", c.getDatanodeStorageReport)

	registerBlockCalls(c, s)
	registerWebHDFS(nn, c)
	handle(nn, s, "recoverLease", c.recoverLease)
	handle(nn, s, "truncate", c.truncate)
	registerXAttrCalls(c, s)
	registerPolicyCalls(c, s)
	registerACLCalls(c, s)
	registerSnapshotCalls(c, s)
}

// webCallerKey is the ctx key under which the WebHDFS handler leaves the
// user and address of an HTTP request, which the client calls then read as
// they read an RPC caller's.
type webCallerKey struct{}

// webCaller is who made a WebHDFS request.
type webCaller struct {
	user     string
	realUser string // the proxy user of a doas request, else ""
	remote   string // the client's IP
	// With Kerberos: the principal the request authenticated as (SPNEGO)
	// or the owner of its delegation token (tokenAuth).
	principal string
	tokenAuth bool
}

// callerUser is the user of the call in ctx: a WebHDFS request's, else
// the RPC connection's.
func callerUser(ctx context.Context) string {
	if wc, ok := ctx.Value(webCallerKey{}).(webCaller); ok {
		return wc.user
	}
	ci, _ := ipc.CallerFromContext(ctx)
	return ci.User
}

// caller identifies the user of the call in ctx.
func (c *clientRPC) caller(ctx context.Context) namespace.Caller {
	u := callerUser(ctx)
	return namespace.Caller{User: u, Groups: c.nn.groups.groups(u)}
}

// clientMachine is the caller's IP, as Hadoop records it for leases.
func clientMachine(ctx context.Context) string {
	if wc, ok := ctx.Value(webCallerKey{}).(webCaller); ok {
		return wc.remote
	}
	ci, ok := ipc.CallerFromContext(ctx)
	if !ok || ci.Remote == nil {
		return ""
	}
	if h, _, err := net.SplitHostPort(ci.Remote.String()); err == nil {
		return h
	}
	return ci.Remote.String()
}

// checkSuper refuses callers that are not superusers.
func (c *clientRPC) checkSuper(ctx context.Context) error {
	u := c.caller(ctx)
	if u.User == c.nn.cfg.SuperUser {
		return nil
	}
	for _, g := range u.Groups {
		if g == c.nn.cfg.SuperGroup {
			return nil
		}
	}
	return remoteerr.AccessControl(fmt.Sprintf("Access denied for user %s. Superuser privilege is required", u.User))
}

// fileMode keeps what an HDFS permission holds: rwx for user, group and other,
// and the sticky bit. Clients send junk above bit 15 (Go's os.ModeDir).
func fileMode(p *hdfs.FsPermissionProto) uint16 {
	return uint16(p.GetPerm()) & 0o1777
}

// statusBox holds an HdfsFileStatusProto with every value its optional
// fields point to, so that a status costs one allocation instead of one per
// field: getFileInfo and getListing build one per answer, and their
// allocations were a visible share of a busy NameNode's garbage collection.
type statusBox struct {
	st                              hdfs.HdfsFileStatusProto
	perm                            hdfs.FsPermissionProto
	ft                              hdfs.HdfsFileStatusProto_FileType
	length, mtime, atime, bsize, id uint64
	mode, repl, policy, flags       uint32
	owner, group                    string
	children                        int32
}

func fileStatus(fi namespace.FileInfo, name []byte) *hdfs.HdfsFileStatusProto {
	b := &statusBox{
		ft:       hdfs.HdfsFileStatusProto_IS_FILE,
		length:   uint64(fi.Length),
		mtime:    uint64(fi.Mtime),
		atime:    uint64(fi.Atime),
		bsize:    uint64(fi.BlockSize),
		id:       fi.ID,
		mode:     uint32(fi.Perm.Mode),
		repl:     uint32(fi.Replication),
		owner:    fi.Perm.User,
		group:    fi.Perm.Group,
		children: int32(fi.ChildrenNum),
	}
	if fi.IsDir {
		b.ft = hdfs.HdfsFileStatusProto_IS_DIR
	}
	if name == nil {
		name = []byte{}
	}
	b.perm.Perm = &b.mode
	st := &b.st
	st.FileType = &b.ft
	st.Path = name
	st.Length = &b.length
	st.Permission = &b.perm
	st.Owner = &b.owner
	st.Group = &b.group
	st.ModificationTime = &b.mtime
	st.AccessTime = &b.atime
	st.BlockReplication = &b.repl
	st.Blocksize = &b.bsize
	st.FileId = &b.id
	st.ChildrenNum = &b.children
	if fi.StoragePolicy != 0 {
		b.policy = uint32(fi.StoragePolicy)
		st.StoragePolicy = &b.policy
	}
	if fi.HasACL {
		b.flags |= uint32(hdfs.HdfsFileStatusProto_HAS_ACL)
	}
	if fi.Snapshottable {
		b.flags |= uint32(hdfs.HdfsFileStatusProto_SNAPSHOT_ENABLED)
	}
	if b.flags != 0 {
		st.Flags = &b.flags
	}
	return st
}

func toBlock(b *hdfs.ExtendedBlockProto) *op.Block {
	if b == nil {
		return nil
	}
	return &op.Block{ID: int64(b.GetBlockId()), NumBytes: int64(b.GetNumBytes()), GenStamp: int64(b.GetGenerationStamp())}
}

// quotaValue is how a quota travels: -1 (unset) as the uint64 2^64-1.
func quotaValue(q int64) uint64 { return uint64(q) }

func (c *clientRPC) getServerDefaults(ctx context.Context, _ *hdfs.GetServerDefaultsRequestProto) (*hdfs.GetServerDefaultsResponseProto, error) {
	cfg := &c.nn.cfg
	return &hdfs.GetServerDefaultsResponseProto{ServerDefaults: &hdfs.FsServerDefaultsProto{
		BlockSize:           proto.Uint64(uint64(cfg.BlockSize)),
		BytesPerChecksum:    proto.Uint32(uint32(cfg.BytesPerChecksum)),
		WritePacketSize:     proto.Uint32(uint32(cfg.WritePacketSize)),
		Replication:         proto.Uint32(uint32(cfg.Replication)),
		FileBufferSize:      proto.Uint32(uint32(cfg.FileBufferSize)),
		EncryptDataTransfer: proto.Bool(cfg.EncryptDataTransfer),
		TrashInterval:       proto.Uint64(uint64(cfg.TrashInterval.Minutes())),
		ChecksumType:        hdfs.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(),
		PolicyId:            proto.Uint32(0),
	}}, nil
}

func (c *clientRPC) getFileInfo(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
	var fi namespace.FileInfo
	var err error
	u := c.caller(ctx)
	c.ns.read(func(t *namespace.Tree) { fi, err = t.Stat(u, req.GetSrc()) })
	if errors.Is(err, namespace.ErrNotFound) {
		return &hdfs.GetFileInfoResponseProto{}, nil // absent fs: no such file
	}
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.GetFileInfoResponseProto{Fs: fileStatus(fi, nil)}, nil
}

func (c *clientRPC) getFileLinkInfo(ctx context.Context, req *hdfs.GetFileLinkInfoRequestProto) (*hdfs.GetFileLinkInfoResponseProto, error) {
	resp, err := c.getFileInfo(ctx, &hdfs.GetFileInfoRequestProto{Src: req.Src})
	if err != nil {
		return nil, err
	}
	return &hdfs.GetFileLinkInfoResponseProto{Fs: resp.Fs}, nil
}

func (c *clientRPC) getListing(ctx context.Context, req *hdfs.GetListingRequestProto) (*hdfs.GetListingResponseProto, error) {
	var list []namespace.FileInfo
	var remaining int
	var err error
	u := c.caller(ctx)
	c.ns.read(func(t *namespace.Tree) {
		list, remaining, err = t.List(u, req.GetSrc(), req.GetStartAfter(), c.nn.cfg.ListLimit)
	})
	if errors.Is(err, namespace.ErrNotFound) {
		return &hdfs.GetListingResponseProto{}, nil
	}
	if err != nil {
		return nil, toRemote(err)
	}
	dl := &hdfs.DirectoryListingProto{
		PartialListing:   make([]*hdfs.HdfsFileStatusProto, 0, len(list)),
		RemainingEntries: proto.Uint32(uint32(remaining)),
	}
	for _, fi := range list {
		dl.PartialListing = append(dl.PartialListing, fileStatus(fi, fi.Name))
	}
	return &hdfs.GetListingResponseProto{DirList: dl}, nil
}

func (c *clientRPC) mkdirs(ctx context.Context, req *hdfs.MkdirsRequestProto) (*hdfs.MkdirsResponseProto, error) {
	u := c.caller(ctx)
	err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		mode := fileMode(req.GetMasked())
		if req.Unmasked != nil && t.InheritsDefaultACL(req.GetSrc()) {
			mode = fileMode(req.GetUnmasked())
		}
		return t.PlanMkdirs(u, req.GetSrc(), mode, req.GetCreateParent(), now)
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.MkdirsResponseProto{Result: proto.Bool(true)}, nil
}

// checkReplication applies Hadoop's limits on a requested replication factor.
func (c *clientRPC) checkReplication(src string, r uint32) error {
	if r < 1 {
		return remoteerr.New(remoteerr.ClassIOException, "Requested replication factor of %d is less than the required minimum of 1 for %s", r, src)
	}
	if int(r) > c.nn.cfg.MaxReplication {
		return remoteerr.New(remoteerr.ClassIOException, "Requested replication factor of %d exceeds maximum of %d for %s", r, c.nn.cfg.MaxReplication, src)
	}
	return nil
}

func (c *clientRPC) create(ctx context.Context, req *hdfs.CreateRequestProto) (*hdfs.CreateResponseProto, error) {
	return atMostOnce(c, ctx, func(ctx context.Context) (*hdfs.CreateResponseProto, error) {
		src := req.GetSrc()
		if err := c.checkReplication(src, req.GetReplication()); err != nil {
			return nil, err
		}
		if bs := int64(req.GetBlockSize()); bs < c.nn.cfg.MinBlockSize {
			return nil, remoteerr.New(remoteerr.ClassIOException,
				"Specified block size is less than configured minimum value (dfs.namenode.fs-limits.min-block-size): %d < %d", bs, c.nn.cfg.MinBlockSize)
		}
		flag := req.GetCreateFlag()
		flags := namespace.CreateFlags{Create: flag&0x01 != 0, Overwrite: flag&0x02 != 0, Append: flag&0x04 != 0}
		if flags.Append {
			return nil, unsupported("create with the APPEND flag")
		}
		u := c.caller(ctx)
		machine := clientMachine(ctx)
		var st *hdfs.HdfsFileStatusProto
		var steps []blockPlan
		if !flags.Overwrite {
			// An abandoned file whose soft limit passed is closed first; as
			// in HDFS, it then exists and the create fails.
			steps = append(steps, c.ns.takeOverStep(src, req.GetClientName(), machine, true))
		}
		steps = append(steps, namespacePlan(func(t *namespace.Tree, now int64) ([]op.Op, error) {
			mode := fileMode(req.GetMasked())
			if req.Unmasked != nil && t.InheritsDefaultACL(src) {
				mode = fileMode(req.GetUnmasked())
			}
			return t.PlanCreate(u, src, mode, req.GetClientName(), machine, flags,
				req.GetCreateParent(), uint16(req.GetReplication()), int64(req.GetBlockSize()), now)
		}))
		err := c.ns.mutateThenRead(ctx, func(t *namespace.Tree) {
			if fi, err := t.Stat(u, src); err == nil {
				st = fileStatus(fi, nil)
			}
		}, steps...)
		if err != nil {
			return nil, toRemote(err)
		}
		if st == nil {
			// The file was just created under the same lock: only a bug
			// gets here.
			return nil, remoteerr.New(remoteerr.ClassIOException, "%s was created but cannot be looked up", src)
		}
		return &hdfs.CreateResponseProto{Fs: st}, nil
	})
}

func (c *clientRPC) delete(ctx context.Context, req *hdfs.DeleteRequestProto) (*hdfs.DeleteResponseProto, error) {
	return atMostOnce(c, ctx, func(ctx context.Context) (*hdfs.DeleteResponseProto, error) {
		u := c.caller(ctx)
		var deleted bool
		err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
			ok, ops, err := t.PlanDelete(u, req.GetSrc(), req.GetRecursive(), now)
			deleted = ok
			return ops, err
		})
		if err != nil {
			return nil, toRemote(err)
		}
		return &hdfs.DeleteResponseProto{Result: proto.Bool(deleted)}, nil
	})
}

func (c *clientRPC) rename(ctx context.Context, req *hdfs.RenameRequestProto) (*hdfs.RenameResponseProto, error) {
	return atMostOnce(c, ctx, func(ctx context.Context) (*hdfs.RenameResponseProto, error) {
		u := c.caller(ctx)
		var renamed bool
		err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
			ok, ops, err := t.PlanRename(u, req.GetSrc(), req.GetDst(), now)
			renamed = ok
			return ops, err
		})
		if err != nil {
			return nil, toRemote(err)
		}
		return &hdfs.RenameResponseProto{Result: proto.Bool(renamed)}, nil
	})
}

func (c *clientRPC) rename2(ctx context.Context, req *hdfs.Rename2RequestProto) (*hdfs.Rename2ResponseProto, error) {
	return atMostOnce(c, ctx, func(ctx context.Context) (*hdfs.Rename2ResponseProto, error) {
		u := c.caller(ctx)
		err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
			if req.GetMoveToTrash() {
				if err := t.CheckMoveToTrash(u, req.GetSrc()); err != nil {
					return nil, err
				}
			}
			return t.PlanRename2(u, req.GetSrc(), req.GetDst(), req.GetOverwriteDest(), now)
		})
		if err != nil {
			return nil, toRemote(err)
		}
		return &hdfs.Rename2ResponseProto{}, nil
	})
}

func (c *clientRPC) setPermission(ctx context.Context, req *hdfs.SetPermissionRequestProto) (*hdfs.SetPermissionResponseProto, error) {
	u := c.caller(ctx)
	err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		return t.PlanSetPermission(u, req.GetSrc(), fileMode(req.GetPermission()))
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.SetPermissionResponseProto{}, nil
}

func (c *clientRPC) setOwner(ctx context.Context, req *hdfs.SetOwnerRequestProto) (*hdfs.SetOwnerResponseProto, error) {
	if req.GetUsername() == "" && req.GetGroupname() == "" {
		return nil, remoteerr.New(remoteerr.ClassHadoopIllegalArg, "User and group cannot both be empty")
	}
	u := c.caller(ctx)
	err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		return t.PlanSetOwner(u, req.GetSrc(), req.GetUsername(), req.GetGroupname())
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.SetOwnerResponseProto{}, nil
}

func (c *clientRPC) setTimes(ctx context.Context, req *hdfs.SetTimesRequestProto) (*hdfs.SetTimesResponseProto, error) {
	u := c.caller(ctx)
	err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		return t.PlanSetTimes(u, req.GetSrc(), int64(req.GetMtime()), int64(req.GetAtime()))
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.SetTimesResponseProto{}, nil
}

func (c *clientRPC) setReplication(ctx context.Context, req *hdfs.SetReplicationRequestProto) (*hdfs.SetReplicationResponseProto, error) {
	if err := c.checkReplication(req.GetSrc(), req.GetReplication()); err != nil {
		return nil, err
	}
	u := c.caller(ctx)
	var ok bool
	err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		r, ops, err := t.PlanSetReplication(u, req.GetSrc(), uint16(req.GetReplication()))
		ok = r
		return ops, err
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.SetReplicationResponseProto{Result: proto.Bool(ok)}, nil
}

func (c *clientRPC) getContentSummary(ctx context.Context, req *hdfs.GetContentSummaryRequestProto) (*hdfs.GetContentSummaryResponseProto, error) {
	u := c.caller(ctx)
	var s namespace.Summary
	var err error
	c.ns.read(func(t *namespace.Tree) { s, err = t.ContentSummary(u, req.GetPath()) })
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.GetContentSummaryResponseProto{Summary: &hdfs.ContentSummaryProto{
		Length:         proto.Uint64(uint64(s.Length)),
		FileCount:      proto.Uint64(uint64(s.FileCount)),
		DirectoryCount: proto.Uint64(uint64(s.DirectoryCount)),
		Quota:          proto.Uint64(quotaValue(s.Quota)),
		SpaceConsumed:  proto.Uint64(uint64(s.SpaceConsumed)),
		SpaceQuota:     proto.Uint64(quotaValue(s.SpaceQuota)),
		// No erasure coding: a file is "Replicated", a directory has
		// no policy of its own, as Hadoop answers for replicated data.
		ErasureCodingPolicy: proto.String(ecPolicyName(s)),
		TypeQuotaInfos:      typeQuotaInfos(s.TypeQuotas, s.HasTypeQuotas),

		SnapshotLength:         proto.Uint64(uint64(s.SnapshotLength)),
		SnapshotFileCount:      proto.Uint64(uint64(s.SnapshotFileCount)),
		SnapshotDirectoryCount: proto.Uint64(uint64(s.SnapshotDirectoryCount)),
		SnapshotSpaceConsumed:  proto.Uint64(uint64(s.SnapshotSpaceConsumed)),
	}}, nil
}

// typeQuotaInfos is the StorageTypeQuotaInfosProto of a summary or quota
// usage (absent when it has no quota or usage by storage type).
func typeQuotaInfos(ts namespace.TypeQuotaInfos, ok bool) *hdfs.StorageTypeQuotaInfosProto {
	if !ok {
		return nil
	}
	p := &hdfs.StorageTypeQuotaInfosProto{}
	for _, t := range ts {
		p.TypeQuotaInfo = append(p.TypeQuotaInfo, &hdfs.StorageTypeQuotaInfoProto{
			Type:     hdfs.StorageTypeProto(t.Type).Enum(),
			Quota:    proto.Uint64(quotaValue(t.Quota)),
			Consumed: proto.Uint64(uint64(t.Consumed)),
		})
	}
	return p
}

func ecPolicyName(s namespace.Summary) string {
	if s.DirectoryCount == 0 {
		return "Replicated"
	}
	return ""
}

func (c *clientRPC) getQuotaUsage(ctx context.Context, req *hdfs.GetQuotaUsageRequestProto) (*hdfs.GetQuotaUsageResponseProto, error) {
	u := c.caller(ctx)
	var q namespace.QuotaUsage
	var err error
	c.ns.read(func(t *namespace.Tree) { q, err = t.QuotaUsage(u, req.GetPath()) })
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.GetQuotaUsageResponseProto{Usage: &hdfs.QuotaUsageProto{
		FileAndDirectoryCount: proto.Uint64(uint64(q.FileAndDirectoryCount)),
		Quota:                 proto.Uint64(quotaValue(q.Quota)),
		SpaceConsumed:         proto.Uint64(uint64(q.SpaceConsumed)),
		SpaceQuota:            proto.Uint64(quotaValue(q.SpaceQuota)),
		TypeQuotaInfos:        typeQuotaInfos(q.TypeQuotas, q.HasTypeQuotas),
	}}, nil
}

func (c *clientRPC) setQuota(ctx context.Context, req *hdfs.SetQuotaRequestProto) (*hdfs.SetQuotaResponseProto, error) {
	u := c.caller(ctx)
	err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		if req.StorageType != nil {
			return t.PlanSetQuotaByStorageType(u, req.GetPath(), int64(req.GetNamespaceQuota()), int64(req.GetStoragespaceQuota()), uint8(req.GetStorageType()))
		}
		return t.PlanSetQuota(u, req.GetPath(), int64(req.GetNamespaceQuota()), int64(req.GetStoragespaceQuota()))
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.SetQuotaResponseProto{}, nil
}

func (c *clientRPC) stats() blockmgmt.Stats {
	var st blockmgmt.Stats
	c.ns.readLocked(func() { st = c.ns.mu.bm.Stats(c.ns.clock.Now()) })
	return st
}

func (c *clientRPC) getFsStats(ctx context.Context, _ *hdfs.GetFsStatusRequestProto) (*hdfs.GetFsStatsResponseProto, error) {
	st := c.stats()
	u := func(v int64) *uint64 { return proto.Uint64(uint64(v)) }
	return &hdfs.GetFsStatsResponseProto{
		Capacity: u(st.Capacity), Used: u(st.Used), Remaining: u(st.Remaining), UnderReplicated: u(st.UnderReplicated),
		CorruptBlocks: u(st.CorruptBlocks), MissingBlocks: u(st.MissingBlocks), MissingReplOneBlocks: u(st.MissingReplOneBlocks),
		BlocksInFuture: u(st.BlocksInFuture), PendingDeletionBlocks: u(st.PendingDeletion),
	}, nil
}

func (c *clientRPC) getFsReplicatedBlockStats(ctx context.Context, _ *hdfs.GetFsReplicatedBlockStatsRequestProto) (*hdfs.GetFsReplicatedBlockStatsResponseProto, error) {
	st := c.stats()
	u := func(v int64) *uint64 { return proto.Uint64(uint64(v)) }
	return &hdfs.GetFsReplicatedBlockStatsResponseProto{
		LowRedundancy: u(st.UnderReplicated), CorruptBlocks: u(st.CorruptBlocks), MissingBlocks: u(st.MissingBlocks),
		MissingReplOneBlocks: u(st.MissingReplOneBlocks), BlocksInFuture: u(st.BlocksInFuture), PendingDeletionBlocks: u(st.PendingDeletion),
		HighestPrioLowRedundancyBlocks: u(st.HighestPriorityLowRedundancy),
	}, nil
}

func (c *clientRPC) getFsECBlockGroupStats(ctx context.Context, _ *hdfs.GetFsECBlockGroupStatsRequestProto) (*hdfs.GetFsECBlockGroupStatsResponseProto, error) {
	// Erasure coding is not implemented: there are no block groups.
	zero := proto.Uint64(0)
	return &hdfs.GetFsECBlockGroupStatsResponseProto{
		LowRedundancy: zero, CorruptBlocks: zero, MissingBlocks: zero, BlocksInFuture: zero, PendingDeletionBlocks: zero,
		HighestPrioLowRedundancyBlocks: zero,
	}, nil
}

// statFile is Stat that insists on an existing regular file.
func (c *clientRPC) statFile(ctx context.Context, src string) (namespace.FileInfo, error) {
	u := c.caller(ctx)
	var fi namespace.FileInfo
	var err error
	c.ns.read(func(t *namespace.Tree) { fi, err = t.Stat(u, src) })
	if err != nil {
		return fi, toRemote(err)
	}
	if fi.IsDir {
		return fi, remoteerr.New(remoteerr.ClassFileNotFound, "Path is not a file: %s", src)
	}
	return fi, nil
}

func (c *clientRPC) getPreferredBlockSize(ctx context.Context, req *hdfs.GetPreferredBlockSizeRequestProto) (*hdfs.GetPreferredBlockSizeResponseProto, error) {
	fi, err := c.statFile(ctx, req.GetFilename())
	if err != nil {
		return nil, err
	}
	return &hdfs.GetPreferredBlockSizeResponseProto{Bsize: proto.Uint64(uint64(fi.BlockSize))}, nil
}

func (c *clientRPC) isFileClosed(ctx context.Context, req *hdfs.IsFileClosedRequestProto) (*hdfs.IsFileClosedResponseProto, error) {
	fi, err := c.statFile(ctx, req.GetSrc())
	if err != nil {
		return nil, err
	}
	return &hdfs.IsFileClosedResponseProto{Result: proto.Bool(!fi.UnderConstruction)}, nil
}

func (c *clientRPC) setSafeMode(ctx context.Context, req *hdfs.SetSafeModeRequestProto) (*hdfs.SetSafeModeResponseProto, error) {
	switch req.GetAction() {
	case hdfs.SafeModeActionProto_SAFEMODE_GET:
	case hdfs.SafeModeActionProto_SAFEMODE_ENTER, hdfs.SafeModeActionProto_SAFEMODE_LEAVE, hdfs.SafeModeActionProto_SAFEMODE_FORCE_EXIT:
		if err := c.checkSuper(ctx); err != nil {
			return nil, err
		}
		a := req.GetAction()
		if err := c.ns.setSafeMode(a == hdfs.SafeModeActionProto_SAFEMODE_ENTER, a == hdfs.SafeModeActionProto_SAFEMODE_FORCE_EXIT); err != nil {
			return nil, err
		}
	default:
		return nil, remoteerr.New(remoteerr.ClassIllegalArgument, "unknown safe mode action %v", req.GetAction())
	}
	return &hdfs.SetSafeModeResponseProto{Result: proto.Bool(c.ns.inSafeMode())}, nil
}

func (c *clientRPC) saveNamespace(ctx context.Context, req *hdfs.SaveNamespaceRequestProto) (*hdfs.SaveNamespaceResponseProto, error) {
	if err := c.checkSuper(ctx); err != nil {
		return nil, err
	}
	if !c.ns.inSafeMode() {
		return nil, remoteerr.New(remoteerr.ClassIOException, "Safe mode should be turned ON in order to create namespace image.")
	}
	if err := c.nn.saveNamespace(ctx); err != nil {
		return nil, err
	}
	return &hdfs.SaveNamespaceResponseProto{Saved: proto.Bool(true)}, nil
}

func (c *clientRPC) rollEdits(ctx context.Context, _ *hdfs.RollEditsRequestProto) (*hdfs.RollEditsResponseProto, error) {
	if err := c.checkSuper(ctx); err != nil {
		return nil, err
	}
	first, err := c.nn.rollEdits(ctx)
	if err != nil {
		return nil, err
	}
	return &hdfs.RollEditsResponseProto{NewSegmentTxId: proto.Uint64(uint64(first))}, nil
}

func (c *clientRPC) getCurrentEditLogTxid(ctx context.Context, _ *hdfs.GetCurrentEditLogTxidRequestProto) (*hdfs.GetCurrentEditLogTxidResponseProto, error) {
	if err := c.checkSuper(ctx); err != nil {
		return nil, err
	}
	return &hdfs.GetCurrentEditLogTxidResponseProto{Txid: proto.Int64(c.ns.elog.Stats().LastTxID)}, nil
}

// metaSave writes the NameNode's state to a file in the log directory
// ($HADOOP_LOG_DIR, else the NameNode's working directory), as Hadoop does.
func (c *clientRPC) metaSave(ctx context.Context, req *hdfs.MetaSaveRequestProto) (*hdfs.MetaSaveResponseProto, error) {
	if err := c.checkSuper(ctx); err != nil {
		return nil, err
	}
	name := req.GetFilename()
	if name == "" || strings.Contains(name, "/") || name == "." || name == ".." {
		return nil, remoteerr.New(remoteerr.ClassIllegalArgument, "metasave file name %q must be a plain file name", name)
	}
	// Hadoop writes into hadoop.log.dir, which its scripts set from
	// HADOOP_LOG_DIR.
	dir := ""
	if c.nn.deps.Conf != nil {
		dir = strings.TrimSpace(c.nn.deps.Conf.String("hadoop.log.dir"))
	}
	if dir == "" {
		dir = os.Getenv("HADOOP_LOG_DIR")
	}
	if dir == "" {
		dir = "."
	}
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		return nil, remoteerr.New(remoteerr.ClassIOException, "metasave: %v", err)
	}
	var t namespaceTotals
	c.ns.read(func(tr *namespace.Tree) { t = totalsOf(tr) })
	st := c.ns.elog.Stats()
	bs := c.stats()
	fmt.Fprintf(f, "%d files and directories, %d blocks = %d total\n", t.inodes, bs.TotalBlocks, t.inodes+bs.TotalBlocks)
	fmt.Fprintf(f, "Files under construction: %d\n", t.uc)
	fmt.Fprintf(f, "Edit log: last txid %d, durable txid %d, %d journal(s)\n", st.LastTxID, st.SyncedTxID, st.Journals)
	fmt.Fprintf(f, "Live Datanodes: %d\nDead Datanodes: %d\n", bs.LiveNodes, bs.DeadNodes)
	fmt.Fprintf(f, "Metasave: Blocks waiting for reconstruction: %d\n", bs.UnderReplicated)
	fmt.Fprintf(f, "Metasave: Blocks being reconstructed: %d\n", bs.PendingReplication)
	fmt.Fprintf(f, "Metasave: Blocks %d waiting deletion.\n", bs.PendingDeletion)
	fmt.Fprintf(f, "Metasave: corrupt blocks %d, missing blocks %d\n", bs.CorruptBlocks, bs.MissingBlocks)
	err = f.Close()
	if err != nil {
		return nil, remoteerr.New(remoteerr.ClassIOException, "metasave: %v", err)
	}
	c.nn.deps.Logger.Info("metasave written", "file", path)
	return &hdfs.MetaSaveResponseProto{}, nil
}

type namespaceTotals struct{ inodes, uc int64 }

func totalsOf(t *namespace.Tree) namespaceTotals {
	return namespaceTotals{inodes: t.NumInodes(), uc: int64(t.NumUnderConstruction())}
}

func (c *clientRPC) concat(ctx context.Context, req *hdfs.ConcatRequestProto) (*hdfs.ConcatResponseProto, error) {
	return atMostOnce(c, ctx, func(ctx context.Context) (*hdfs.ConcatResponseProto, error) {
		u := c.caller(ctx)
		err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
			return t.PlanConcat(u, req.GetTrg(), req.GetSrcs(), now)
		})
		if err != nil {
			return nil, toRemote(err)
		}
		return &hdfs.ConcatResponseProto{}, nil
	})
}

func (c *clientRPC) getDatanodeReport(ctx context.Context, req *hdfs.GetDatanodeReportRequestProto) (*hdfs.GetDatanodeReportResponseProto, error) {
	// Hadoop 3 keeps the list of DataNodes to superusers.
	if err := c.checkSuper(ctx); err != nil {
		return nil, err
	}
	kind, ok := reportKind(req.GetType())
	if !ok {
		return nil, remoteerr.New(remoteerr.ClassIllegalArgument, "getDatanodeReport: unknown report type %d", req.GetType())
	}
	var infos []blockmgmt.DatanodeInfo
	c.ns.readLocked(func() { infos = c.ns.datanodeReportLocked(kind, c.ns.clock.Now()) })
	resp := &hdfs.GetDatanodeReportResponseProto{}
	for _, d := range infos {
		resp.Di = append(resp.Di, datanodeInfoProto(d))
	}
	return resp, nil
}

func (c *clientRPC) getHAServiceState(ctx context.Context, _ *hdfs.HAServiceStateRequestProto) (*hdfs.HAServiceStateResponseProto, error) {
	st := common.HAServiceStateProto_STANDBY
	switch c.nn.ha.State() {
	case ha.Active:
		st = common.HAServiceStateProto_ACTIVE
	case ha.Initializing, ha.Stopping:
		st = common.HAServiceStateProto_INITIALIZING
	}
	return &hdfs.HAServiceStateResponseProto{State: st.Enum()}, nil
}

func (c *clientRPC) msync(ctx context.Context, _ *hdfs.MsyncRequestProto) (*hdfs.MsyncResponseProto, error) {
	// An active NameNode is always in sync with itself.
	return &hdfs.MsyncResponseProto{}, nil
}

// getDataEncryptionKey hands out a data encryption key made with the
// current block key when dfs.encrypt.data.transfer and block tokens are
// on, else an answer without a key (as Hadoop's null key).
func (c *clientRPC) getDataEncryptionKey(ctx context.Context, _ *hdfs.GetDataEncryptionKeyRequestProto) (*hdfs.GetDataEncryptionKeyResponseProto, error) {
	if !c.nn.cfg.EncryptDataTransfer || c.nn.tokens == nil {
		return &hdfs.GetDataEncryptionKeyResponseProto{}, nil
	}
	k := c.nn.tokens.m.DataEncryptionKey(c.pool(), c.nn.cfg.EncryptAlgorithm, c.nn.tokens.clock.Now())
	return &hdfs.GetDataEncryptionKeyResponseProto{DataEncryptionKey: k}, nil
}
