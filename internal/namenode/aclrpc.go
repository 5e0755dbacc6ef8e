package namenode

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// registerACLCalls serves the ACL calls of ClientProtocol.
func registerACLCalls(c *clientRPC, s *ipc.Service) {
	handle(c.nn, s, "modifyAclEntries", c.modifyAclEntries)
	handle(c.nn, s, "removeAclEntries", c.removeAclEntries)
	handle(c.nn, s, "removeDefaultAcl", c.removeDefaultAcl)
	handle(c.nn, s, "removeAcl", c.removeAcl)
	handle(c.nn, s, "setAcl", c.setAcl)
	handle(c.nn, s, "getAclStatus", c.getAclStatus)
}

func aclFromProto(ps []*hdfs.AclEntryProto) []op.ACLEntry {
	out := make([]op.ACLEntry, 0, len(ps))
	for _, p := range ps {
		out = append(out, op.ACLEntry{Scope: uint8(p.GetScope()) & 1, Type: uint8(p.GetType()) & 3, Perm: uint8(p.GetPermissions()) & 7, Name: p.GetName()})
	}
	return out
}

func aclToProto(es []op.ACLEntry) []*hdfs.AclEntryProto {
	out := make([]*hdfs.AclEntryProto, 0, len(es))
	for _, e := range es {
		p := &hdfs.AclEntryProto{
			Type:        hdfs.AclEntryProto_AclEntryTypeProto(e.Type).Enum(),
			Scope:       hdfs.AclEntryProto_AclEntryScopeProto(e.Scope).Enum(),
			Permissions: hdfs.AclEntryProto_FsActionProto(e.Perm).Enum(),
		}
		if e.Name != "" {
			p.Name = proto.String(e.Name)
		}
		out = append(out, p)
	}
	return out
}

func (c *clientRPC) aclChange(ctx context.Context, plan func(t *namespace.Tree, u namespace.Caller) ([]op.Op, error)) error {
	u := c.caller(ctx)
	return toRemote(c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) { return plan(t, u) }))
}

func (c *clientRPC) modifyAclEntries(ctx context.Context, req *hdfs.ModifyAclEntriesRequestProto) (*hdfs.ModifyAclEntriesResponseProto, error) {
	err := c.aclChange(ctx, func(t *namespace.Tree, u namespace.Caller) ([]op.Op, error) {
		return t.PlanModifyACLEntries(u, req.GetSrc(), aclFromProto(req.GetAclSpec()))
	})
	if err != nil {
		return nil, err
	}
	return &hdfs.ModifyAclEntriesResponseProto{}, nil
}

func (c *clientRPC) removeAclEntries(ctx context.Context, req *hdfs.RemoveAclEntriesRequestProto) (*hdfs.RemoveAclEntriesResponseProto, error) {
	err := c.aclChange(ctx, func(t *namespace.Tree, u namespace.Caller) ([]op.Op, error) {
		return t.PlanRemoveACLEntries(u, req.GetSrc(), aclFromProto(req.GetAclSpec()))
	})
	if err != nil {
		return nil, err
	}
	return &hdfs.RemoveAclEntriesResponseProto{}, nil
}

func (c *clientRPC) removeDefaultAcl(ctx context.Context, req *hdfs.RemoveDefaultAclRequestProto) (*hdfs.RemoveDefaultAclResponseProto, error) {
	err := c.aclChange(ctx, func(t *namespace.Tree, u namespace.Caller) ([]op.Op, error) {
		return t.PlanRemoveDefaultACL(u, req.GetSrc())
	})
	if err != nil {
		return nil, err
	}
	return &hdfs.RemoveDefaultAclResponseProto{}, nil
}

func (c *clientRPC) removeAcl(ctx context.Context, req *hdfs.RemoveAclRequestProto) (*hdfs.RemoveAclResponseProto, error) {
	err := c.aclChange(ctx, func(t *namespace.Tree, u namespace.Caller) ([]op.Op, error) {
		return t.PlanRemoveACL(u, req.GetSrc())
	})
	if err != nil {
		return nil, err
	}
	return &hdfs.RemoveAclResponseProto{}, nil
}

func (c *clientRPC) setAcl(ctx context.Context, req *hdfs.SetAclRequestProto) (*hdfs.SetAclResponseProto, error) {
	err := c.aclChange(ctx, func(t *namespace.Tree, u namespace.Caller) ([]op.Op, error) {
		return t.PlanSetACL(u, req.GetSrc(), aclFromProto(req.GetAclSpec()))
	})
	if err != nil {
		return nil, err
	}
	return &hdfs.SetAclResponseProto{}, nil
}

func (c *clientRPC) getAclStatus(ctx context.Context, req *hdfs.GetAclStatusRequestProto) (*hdfs.GetAclStatusResponseProto, error) {
	u := c.caller(ctx)
	var st namespace.ACLStatus
	var err error
	c.ns.read(func(t *namespace.Tree) { st, err = t.GetACLStatus(u, req.GetSrc()) })
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.GetAclStatusResponseProto{Result: &hdfs.AclStatusProto{
		Owner:      proto.String(st.Owner),
		Group:      proto.String(st.Group),
		Sticky:     proto.Bool(st.Mode&0o1000 != 0),
		Entries:    aclToProto(st.Entries),
		Permission: &hdfs.FsPermissionProto{Perm: proto.Uint32(uint32(st.Mode))},
	}}, nil
}
