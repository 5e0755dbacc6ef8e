package namespace

// Deleting a big directory without walking it under the lock.
//
// Every directory keeps its live subtree's usage (dirData.sub), so what a
// recursive delete must change at once does not depend on the subtree's
// size: the name leaves its parent, the usage of every directory above it
// drops by the subtree's, the inode counters drop by its counts, and the
// open files below it (found through t.uc, each by walking up its
// parent pointers) leave the under-construction index with their leases
// (Effects.RemovedUC). The subtree is then detached: unreachable from the
// root, its root's parent pointer cleared, queued in t.detached.
//
// What is left is derived and unobservable: the blocks of its files, which
// the caller hands to the block map (Effects.FreedBlocks), and the side
// table's entries for its inodes (xattrs, ACL references). ReleaseDetached
// walks the queue in bounded slices, between other holders of the lock.
// Nothing reads a detached inode: paths cannot reach it, t.uc no longer
// names it, an image is exported from the root. So a tree with detached
// subtrees pending is the tree after the delete, and a restart or an image
// taken meanwhile forgets them whole (their blocks are no file's: the block
// map, rebuilt from the image, does not hold them, and DataNodes that report
// their replicas are told to delete them).
//
// States of a subtree: live → (OP_DELETE, or an overwrite, applied)
// detached, queued → (ReleaseDetached, slice by slice) released, garbage.
//
// Only subtrees that need nothing but that are detached (canDetach):
// without snapshot state (an inode a snapshot sees must be saved as it is
// removed, forget) and without quotas by storage type (the subtree's usage
// by type is summed by a walk); the rest are walked at once as before.

// detachMin is the smallest subtree (in inodes) that is detached rather
// than walked: below it the walk costs less than the slices' bookkeeping.
const detachMin = 4096

// canDetach reports whether the subtree at n with usage u is detached when
// removed. Its open files are found by a scan of t.uc, so there must be
// few of those or clearly fewer than inodes below n.
func (t *Tree) canDetach(n *inode, u subUsage) bool {
	return n.dir() != nil && u.ns >= t.detachAt() && !t.snapActive() && !t.hasTypeQuotas &&
		int64(len(t.uc)) <= u.ns/8+64
}

func (t *Tree) detachAt() int64 {
	if t.detachMin > 0 {
		return t.detachMin
	}
	return detachMin
}

// detach takes the subtree at n with usage u out of the counters and the
// under-construction index and queues it for ReleaseDetached; the caller
// unlinks n from its parent.
func (t *Tree) detach(n *inode, u subUsage, eff *Effects) {
	t.numFiles -= u.ns - u.dirs
	t.numDirs -= u.dirs
	for id, f := range t.uc {
		if below(f.ucd().parent, n) {
			delete(t.uc, id)
			if eff != nil {
				eff.RemovedUC = append(eff.RemovedUC, id)
			}
		}
	}
	n.dir().parent = nil
	t.detached = append(t.detached, []*inode{n})
	t.detachedLeft += u.ns
}

// below reports whether directory d is n or under it.
func below(d, n *inode) bool {
	for ; d != nil; d = d.dir().parent {
		if d == n {
			return true
		}
	}
	return false
}

// Detached is the number of inodes of detached subtrees not yet released.
func (t *Tree) Detached() int64 { return t.detachedLeft }

// ReleaseDetached releases inodes of detached subtrees until over reports
// true (asked every 64 inodes) or none is left, adding their files' blocks
// to eff.FreedBlocks, and reports whether some are left.
func (t *Tree) ReleaseDetached(over func() bool, eff *Effects) bool {
	k := int64(0)
	for len(t.detached) > 0 {
		top := len(t.detached) - 1
		run := t.detached[top]
		if len(run) == 0 {
			t.detached[top] = nil
			t.detached = t.detached[:top]
			continue
		}
		n := run[0]
		t.detached[top] = run[1:]
		t.release(n, eff)
		k++
		if k%64 == 0 && over() {
			break
		}
	}
	t.detachedLeft -= k
	if len(t.detached) == 0 {
		t.detached, t.detachedLeft = nil, 0
	}
	return len(t.detached) > 0
}

// release drops inode n of a detached subtree from the side table and
// queues its children, or frees its blocks.
func (t *Tree) release(n *inode, eff *Effects) {
	if len(t.feats) > 0 {
		t.dropFeatures(n)
	}
	d := n.dir()
	if d == nil {
		if eff != nil {
			eff.FreedBlocks = appendDoubling(eff.FreedBlocks, n.blocks())
		}
		return
	}
	// The children's slices are the directory's own: nothing changes a
	// detached directory, so they are queued as they are, not copied.
	if b := d.children.big; b != nil {
		for _, p := range b.parts {
			t.detached = append(t.detached, p)
		}
	} else if len(d.children.flat) > 0 {
		t.detached = append(t.detached, d.children.flat)
	}
}
