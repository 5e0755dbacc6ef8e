package namespace

import (
	"fmt"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// StoragePolicy is one of HDFS's built-in block storage policies: where
// the replicas of a file's blocks go, by storage type, and where they go
// when those types are full.
type StoragePolicy struct {
	ID                   uint8
	Name                 string
	StorageTypes         []string // one per replica; the last repeats
	CreationFallbacks    []string
	ReplicationFallbacks []string
	// CopyOnCreateFile: a file takes the policy only when it is created
	// (LAZY_PERSIST); it cannot be set on an existing file.
	CopyOnCreateFile bool
}

// String is Hadoop's BlockStoragePolicy.toString, which `hdfs
// storagepolicies` prints.
func (p StoragePolicy) String() string {
	return fmt.Sprintf("BlockStoragePolicy{%s:%d, storageTypes=[%s], creationFallbacks=[%s], replicationFallbacks=[%s]}",
		p.Name, p.ID, strings.Join(p.StorageTypes, ", "), strings.Join(p.CreationFallbacks, ", "), strings.Join(p.ReplicationFallbacks, ", "))
}

// DefaultStoragePolicyID is HOT, the policy of an inode with none set
// anywhere above it (dfs.storage.default.policy).
const DefaultStoragePolicyID uint8 = 7

// StoragePolicies returns HDFS's built-in policies with Hadoop's ids, in
// id order (BlockStoragePolicySuite.createDefaultSuite).
func StoragePolicies() []StoragePolicy {
	return []StoragePolicy{
		{ID: 1, Name: "PROVIDED", StorageTypes: []string{"PROVIDED", "DISK"}, CreationFallbacks: []string{"PROVIDED", "DISK"}, ReplicationFallbacks: []string{"PROVIDED", "DISK"}},
		{ID: 2, Name: "COLD", StorageTypes: []string{"ARCHIVE"}},
		{ID: 5, Name: "WARM", StorageTypes: []string{"DISK", "ARCHIVE"}, CreationFallbacks: []string{"DISK", "ARCHIVE"}, ReplicationFallbacks: []string{"DISK", "ARCHIVE"}},
		{ID: 7, Name: "HOT", StorageTypes: []string{"DISK"}, ReplicationFallbacks: []string{"ARCHIVE"}},
		{ID: 10, Name: "ONE_SSD", StorageTypes: []string{"SSD", "DISK"}, CreationFallbacks: []string{"SSD", "DISK"}, ReplicationFallbacks: []string{"SSD", "DISK"}},
		{ID: 12, Name: "ALL_SSD", StorageTypes: []string{"SSD"}, CreationFallbacks: []string{"DISK"}, ReplicationFallbacks: []string{"DISK"}},
		{ID: 14, Name: "ALL_NVDIMM", StorageTypes: []string{"NVDIMM"}, CreationFallbacks: []string{"DISK"}, ReplicationFallbacks: []string{"DISK"}},
		{ID: 15, Name: "LAZY_PERSIST", StorageTypes: []string{"RAM_DISK", "DISK"}, CreationFallbacks: []string{"DISK"}, ReplicationFallbacks: []string{"DISK"}, CopyOnCreateFile: true},
	}
}

// StoragePolicyByID returns the policy with id; id 0 (unspecified) is the
// default policy, as HDFS answers it.
func StoragePolicyByID(id uint8) (StoragePolicy, bool) {
	if id == op.StoragePolicyUnspecified {
		id = DefaultStoragePolicyID
	}
	for _, p := range StoragePolicies() {
		if p.ID == id {
			return p, true
		}
	}
	return StoragePolicy{}, false
}

// StoragePolicyByName finds a policy by name, ignoring case.
func StoragePolicyByName(name string) (StoragePolicy, bool) {
	for _, p := range StoragePolicies() {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return StoragePolicy{}, false
}

func (t *Tree) checkPolicyEnabled() error {
	if !t.cfg.StoragePolicyEnabled {
		return newErr("Failed to set storage policy since dfs.storage.policy.enabled is set to false.", ErrIO)
	}
	return nil
}

// policyTarget resolves the inode of a storage-policy call and checks a.
func (t *Tree) policyTarget(c Caller, path string, a Access) (*walk, error) {
	w, err := t.resolveExisting(c, path, "File/Directory does not exist: %s")
	if err != nil {
		return nil, err
	}
	if err := t.checkPerm(c, w, permCheck{self: a}); err != nil {
		return nil, err
	}
	return w, nil
}

// PlanSetStoragePolicy plans setStoragePolicy: WRITE on the inode, a known
// policy name, and no LAZY_PERSIST on an existing file.
func (t *Tree) PlanSetStoragePolicy(c Caller, path, name string) ([]op.Op, error) {
	if err := t.checkPolicyEnabled(); err != nil {
		return nil, err
	}
	p, ok := StoragePolicyByName(name)
	if !ok {
		return nil, newErr("Cannot find a block policy with the name "+name, ErrIllegalArgument)
	}
	w, err := t.policyTarget(c, path, Write)
	if err != nil {
		return nil, err
	}
	if !w.last().isDir() && p.CopyOnCreateFile {
		return nil, newErr("Policy "+p.String()+" cannot be set after file creation.", ErrIllegalArgument)
	}
	return []op.Op{&op.SetStoragePolicy{Path: w.path, PolicyID: p.ID}}, nil
}

// PlanUnsetStoragePolicy plans unsetStoragePolicy (WRITE on the inode).
func (t *Tree) PlanUnsetStoragePolicy(c Caller, path string) ([]op.Op, error) {
	if err := t.checkPolicyEnabled(); err != nil {
		return nil, err
	}
	w, err := t.policyTarget(c, path, Write)
	if err != nil {
		return nil, err
	}
	return []op.Op{&op.SetStoragePolicy{Path: w.path, PolicyID: op.StoragePolicyUnspecified}}, nil
}

// GetStoragePolicy returns the effective policy of path (its own or its
// nearest ancestor's, HOT when none is set), as getStoragePolicy answers.
func (t *Tree) GetStoragePolicy(c Caller, path string) (StoragePolicy, error) {
	if err := t.notThroughSnapshot(c, path, "getStoragePolicy"); err != nil {
		return StoragePolicy{}, err
	}
	w, err := t.policyTarget(c, path, Read)
	if err != nil {
		return StoragePolicy{}, err
	}
	p, _ := StoragePolicyByID(t.policyAlong(w, len(w.nodes)-1))
	return p, nil
}

// EffectiveStoragePolicy is the effective storage policy id of the inode
// at path (its own or its nearest ancestor's; op.StoragePolicyUnspecified
// when none is set or the path does not exist), without permission checks,
// for the NameNode's own bookkeeping.
func (t *Tree) EffectiveStoragePolicy(path string) uint8 {
	if len(t.feats) == 0 {
		return op.StoragePolicyUnspecified // no inode has a policy
	}
	w := t.lookup(path)
	if w == nil || w.last() == nil {
		return op.StoragePolicyUnspecified
	}
	return t.policyAlong(w, len(w.nodes)-1)
}

// EachFilePolicy calls fn for every file with blocks at or below path,
// with the file's effective storage policy id, so that the block map can
// follow a policy change above the files.
func (t *Tree) EachFilePolicy(path string, fn func(policy uint8, blocks []op.Block)) {
	w := t.lookup(path)
	if w == nil || w.last() == nil {
		return
	}
	t.walkFilesWithBlocks(w.last(), t.policyAlong(w, len(w.nodes)-2), func(f *inode, policy uint8) {
		fn(policy, f.blocks())
	})
}

// walkFilesWithBlocks calls fn for every file with blocks in n's subtree
// with its effective storage policy id, inherited being the policy n
// inherits from above.
func (t *Tree) walkFilesWithBlocks(n *inode, inherited uint8, fn func(f *inode, policy uint8)) {
	if p := t.ownPolicy(n); p != op.StoragePolicyUnspecified {
		inherited = p
	}
	if n.isDir() {
		for c := range n.dir().children.all() {
			t.walkFilesWithBlocks(c, inherited, fn)
		}
		return
	}
	if len(n.blocks()) > 0 {
		fn(n, inherited)
	}
}

// IsDir reports whether path names an existing directory (no permission
// checks).
func (t *Tree) IsDir(path string) bool {
	w := t.lookup(path)
	return w != nil && w.last() != nil && w.last().isDir()
}
