package namespace

import (
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// features is what an inode carries beyond its fixed fields: extended
// attributes, an ACL and a storage policy. Few inodes have any, so they
// live in a side table of the Tree (Tree.feats) instead of a field of every
// inode, which keeps a plain file's inode in its size class.
type features struct {
	xattrs []op.XAttr // in the order they were first set
	acl    *aclFeature
	policy uint8 // op.StoragePolicyUnspecified: inherit
	// snapshottable: a directory on which snapshots may be taken.
	snapshottable bool
}

func (f *features) empty() bool {
	return len(f.xattrs) == 0 && f.acl == nil && f.policy == op.StoragePolicyUnspecified && !f.snapshottable
}

// featuresOf returns n's features, or nil.
func (t *Tree) featuresOf(n *inode) *features {
	if len(t.feats) == 0 {
		return nil
	}
	return t.feats[n]
}

// mutFeatures returns n's features, adding an empty set if it has none;
// the caller calls settle after changing them.
func (t *Tree) mutFeatures(n *inode) *features {
	if f := t.feats[n]; f != nil {
		return f
	}
	if t.feats == nil {
		t.feats = make(map[*inode]*features)
	}
	f := &features{}
	t.feats[n] = f
	return f
}

// settle drops n's entry when its features became empty.
func (t *Tree) settle(n *inode) {
	if f := t.feats[n]; f != nil && f.empty() {
		t.dropFeatures(n)
	}
}

// dropFeatures forgets n's features (n is being deleted or they emptied).
func (t *Tree) dropFeatures(n *inode) {
	f := t.feats[n]
	if f == nil {
		return
	}
	if f.acl != nil {
		t.releaseACL(f.acl)
	}
	delete(t.feats, n)
}

// NumWithFeatures counts the inodes that carry xattrs, an ACL or a storage
// policy.
func (t *Tree) NumWithFeatures() int { return len(t.feats) }

func (t *Tree) applySetStoragePolicy(o *op.SetStoragePolicy) error {
	w, n, err := t.existing(o.Path)
	if err != nil {
		return err
	}
	if o.PolicyID == op.StoragePolicyUnspecified && t.featuresOf(n) == nil {
		return nil
	}
	inherited := t.inheritedAt(w, len(w.nodes)-2)
	before := t.subtreeTypes(n, inherited)
	t.mutFeatures(n).policy = o.PolicyID
	t.settle(n)
	t.heldStale()
	if t.hasTypeQuotas && !w.isRoot() {
		// The subtree now counts under another policy: recount it, with
		// the quota directories inside it.
		t.addTypes(w.parent(), before, t.fillTypes(n, inherited))
	} else if t.hasTypeQuotas {
		t.fillTypes(n, inherited)
	}
	return nil
}

// ownPolicy is n's own storage policy id.
func (t *Tree) ownPolicy(n *inode) uint8 {
	if f := t.featuresOf(n); f != nil {
		return f.policy
	}
	return op.StoragePolicyUnspecified
}

// policyAlong is the effective storage policy of the first i+1 inodes of
// w: the last one's own, or its nearest ancestor's.
func (t *Tree) policyAlong(w *walk, i int) uint8 {
	if len(t.feats) == 0 {
		return op.StoragePolicyUnspecified
	}
	for ; i >= 0; i-- {
		if n := w.nodes[i]; n != nil {
			if p := t.ownPolicy(n); p != op.StoragePolicyUnspecified {
				return p
			}
		}
	}
	return op.StoragePolicyUnspecified
}
