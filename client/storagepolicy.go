package client

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// StoragePolicy is a block storage policy as the NameNode describes it.
type StoragePolicy struct {
	ID                   uint8
	Name                 string
	StorageTypes         []string
	CreationFallbacks    []string
	ReplicationFallbacks []string
}

// String is Hadoop's BlockStoragePolicy text, e.g.
// "BlockStoragePolicy{HOT:7, storageTypes=[DISK], creationFallbacks=[], replicationFallbacks=[ARCHIVE]}".
func (p StoragePolicy) String() string {
	return fmt.Sprintf("BlockStoragePolicy{%s:%d, storageTypes=[%s], creationFallbacks=[%s], replicationFallbacks=[%s]}",
		p.Name, p.ID, strings.Join(p.StorageTypes, ", "), strings.Join(p.CreationFallbacks, ", "), strings.Join(p.ReplicationFallbacks, ", "))
}

func typeNames(st *hdfs.StorageTypesProto) []string {
	var out []string
	for _, t := range st.GetStorageTypes() {
		out = append(out, t.String())
	}
	return out
}

func policyFrom(p *hdfs.BlockStoragePolicyProto) StoragePolicy {
	return StoragePolicy{ID: uint8(p.GetPolicyId()), Name: p.GetName(), StorageTypes: typeNames(p.GetCreationPolicy()),
		CreationFallbacks: typeNames(p.GetCreationFallbackPolicy()), ReplicationFallbacks: typeNames(p.GetReplicationFallbackPolicy())}
}

// StoragePolicies returns every storage policy the NameNode knows, in id
// order.
func (f *FileSystem) StoragePolicies(ctx context.Context) ([]StoragePolicy, error) {
	resp := &hdfs.GetStoragePoliciesResponseProto{}
	if err := f.call(ctx, "getStoragePolicies", &hdfs.GetStoragePoliciesRequestProto{}, resp); err != nil {
		return nil, err
	}
	out := make([]StoragePolicy, 0, len(resp.GetPolicies()))
	for _, p := range resp.GetPolicies() {
		out = append(out, policyFrom(p))
	}
	return out, nil
}

// StoragePolicy returns the storage policy in effect for name (its own or
// inherited; the default policy when none is set).
func (f *FileSystem) StoragePolicy(ctx context.Context, name string) (StoragePolicy, error) {
	const op = "getstoragepolicy"
	p, err := f.resolve(op, name)
	if err != nil {
		return StoragePolicy{}, err
	}
	resp := &hdfs.GetStoragePolicyResponseProto{}
	if err := f.call(ctx, "getStoragePolicy", &hdfs.GetStoragePolicyRequestProto{Path: proto.String(p)}, resp); err != nil {
		return StoragePolicy{}, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return policyFrom(resp.GetStoragePolicy()), nil
}

// SetStoragePolicy sets the storage policy of name by policy name.
func (f *FileSystem) SetStoragePolicy(ctx context.Context, name, policy string) error {
	const op = "setstoragepolicy"
	p, err := f.resolve(op, name)
	if err != nil {
		return err
	}
	req := &hdfs.SetStoragePolicyRequestProto{Src: proto.String(p), PolicyName: proto.String(policy)}
	if err := f.call(ctx, "setStoragePolicy", req, &hdfs.SetStoragePolicyResponseProto{}); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return nil
}

// UnsetStoragePolicy removes the storage policy set on name; it inherits
// its parent's again.
func (f *FileSystem) UnsetStoragePolicy(ctx context.Context, name string) error {
	const op = "unsetstoragepolicy"
	p, err := f.resolve(op, name)
	if err != nil {
		return err
	}
	if err := f.call(ctx, "unsetStoragePolicy", &hdfs.UnsetStoragePolicyRequestProto{Src: proto.String(p)}, &hdfs.UnsetStoragePolicyResponseProto{}); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return nil
}
