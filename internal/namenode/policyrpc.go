package namenode

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// registerPolicyCalls serves the storage-policy calls of ClientProtocol.
func registerPolicyCalls(c *clientRPC, s *ipc.Service) {
	handle(c.nn, s, "setStoragePolicy", c.setStoragePolicy)
	handle(c.nn, s, "unsetStoragePolicy", c.unsetStoragePolicy)
	handle(c.nn, s, "getStoragePolicy", c.getStoragePolicy)
	handle(c.nn, s, "getStoragePolicies", c.getStoragePolicies)
}

func storageTypes(names []string) *hdfs.StorageTypesProto {
	st := &hdfs.StorageTypesProto{}
	for _, n := range names {
		if v, ok := hdfs.StorageTypeProto_value[n]; ok {
			st.StorageTypes = append(st.StorageTypes, hdfs.StorageTypeProto(v))
		}
	}
	return st
}

func policyProto(p namespace.StoragePolicy) *hdfs.BlockStoragePolicyProto {
	return &hdfs.BlockStoragePolicyProto{
		PolicyId:                  proto.Uint32(uint32(p.ID)),
		Name:                      proto.String(p.Name),
		CreationPolicy:            storageTypes(p.StorageTypes),
		CreationFallbackPolicy:    storageTypes(p.CreationFallbacks),
		ReplicationFallbackPolicy: storageTypes(p.ReplicationFallbacks),
	}
}

func (c *clientRPC) setStoragePolicy(ctx context.Context, req *hdfs.SetStoragePolicyRequestProto) (*hdfs.SetStoragePolicyResponseProto, error) {
	u := c.caller(ctx)
	err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		return t.PlanSetStoragePolicy(u, req.GetSrc(), req.GetPolicyName())
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.SetStoragePolicyResponseProto{}, nil
}

func (c *clientRPC) unsetStoragePolicy(ctx context.Context, req *hdfs.UnsetStoragePolicyRequestProto) (*hdfs.UnsetStoragePolicyResponseProto, error) {
	u := c.caller(ctx)
	err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		return t.PlanUnsetStoragePolicy(u, req.GetSrc())
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.UnsetStoragePolicyResponseProto{}, nil
}

func (c *clientRPC) getStoragePolicy(ctx context.Context, req *hdfs.GetStoragePolicyRequestProto) (*hdfs.GetStoragePolicyResponseProto, error) {
	u := c.caller(ctx)
	var p namespace.StoragePolicy
	var err error
	c.ns.read(func(t *namespace.Tree) { p, err = t.GetStoragePolicy(u, req.GetPath()) })
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.GetStoragePolicyResponseProto{StoragePolicy: policyProto(p)}, nil
}

func (c *clientRPC) getStoragePolicies(ctx context.Context, _ *hdfs.GetStoragePoliciesRequestProto) (*hdfs.GetStoragePoliciesResponseProto, error) {
	resp := &hdfs.GetStoragePoliciesResponseProto{}
	for _, p := range namespace.StoragePolicies() {
		resp.Policies = append(resp.Policies, policyProto(p))
	}
	return resp, nil
}

// blockPolicy resolves a storage policy id for block placement (0, none
// set, is the default policy).
func blockPolicy(id uint8) blockmgmt.StoragePolicy {
	p, ok := namespace.StoragePolicyByID(id)
	if !ok {
		p, _ = namespace.StoragePolicyByID(namespace.DefaultStoragePolicyID)
	}
	types := func(names []string) []int32 {
		var out []int32
		for _, n := range names {
			if v, ok := hdfs.StorageTypeProto_value[n]; ok {
				out = append(out, v)
			}
		}
		return out
	}
	return blockmgmt.StoragePolicy{Name: p.Name, Types: types(p.StorageTypes),
		CreationFallbacks: types(p.CreationFallbacks), ReplicationFallbacks: types(p.ReplicationFallbacks)}
}
