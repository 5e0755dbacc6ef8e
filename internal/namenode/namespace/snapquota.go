package namespace

import "github.com/hdfsgo/hdfsgo/internal/editlog/op"

// Quota usage of what only snapshots keep.
//
// As in HDFS, a directory's quota usage counts, besides its live subtree,
// what snapshots alone keep below it: every orphan (an inode deleted from
// the live tree that a snapshot still shows) counts one name and, for a
// file, the space of the blocks its versions hold; a live file counts the
// blocks only its versions hold (cut by a truncate, dropped by an
// overwrite of its block list) and its largest replication among its
// versions and itself, as HDFS counts a file with snapshot diffs. So
// deleting a file a snapshot holds does not lower the usage; deleting the
// last snapshot that holds it does.
//
// This usage is derived state: it is computed from the snapshot state
// (Tree.snap) when a check or a report needs it, never logged nor written
// to the image, and recomputed after a restart. It is kept between ops: a
// change to one file with a history (written, truncated, deleted) marks
// that file, whose part alone is recounted at the next use (heldDirty);
// a change that can move much of it (a snapshot deleted, a rename, a
// directory with a history removed, a quota or a storage policy set)
// drops it all, to be recounted at the next use (heldStale). A quota check computes
// it only when it could decide. Only writers keep it: readers (getQuotaUsage,
// getContentSummary) run at once under the read lock, so one that finds it
// stale computes its own copy and keeps nothing (heldForRead). Each item is charged to its anchor, the live
// directory that holds it (an orphan's old parent, or the nearest live
// directory above it), and counts in every quota directory above the
// anchor. A file renamed out of a snapshot counts at its new place only
// (HDFS counts it in both trees).

// usage is a count of names, storage space and space by storage type.
type usage struct {
	ns, ds int64
	types  typeSpaces
}

func (u *usage) add(v *usage) {
	u.ns += v.ns
	u.ds += v.ds
	for i := range u.types {
		u.types[i] += v.types[i]
	}
}

// heldCache is the computed usage of what only snapshots keep.
type heldCache struct {
	byAnchor map[*inode]*usage    // by anchor directory: the items charged to it
	byQuota  map[*inode]*usage    // by quota directory: the items anywhere below it
	entries  map[*inode]heldEntry // by inode: its part and where it is charged
}

// heldEntry is one inode's part of what snapshots keep.
type heldEntry struct {
	u      usage
	anchor *inode
}

// heldStale forgets the computed usage: the next use computes it afresh.
func (t *Tree) heldStale() {
	if t.snap != nil {
		t.snap.held = nil
		t.snap.dirty = nil
	}
}

// heldDirty marks file n's part of the computed usage for recomputing (a
// file changes, or leaves the live tree, without moving anything else).
func (t *Tree) heldDirty(n *inode) {
	ss := t.snap
	if ss == nil || ss.held == nil {
		return
	}
	if ss.dirty == nil {
		ss.dirty = make(map[*inode]struct{})
	}
	ss.dirty[n] = struct{}{}
}

// charge adds (sign 1) or takes away (-1) u, charged to anchor a.
func (hc *heldCache) charge(a *inode, u *usage, sign int64) {
	v := *u
	if sign < 0 {
		v.ns, v.ds = -v.ns, -v.ds
		for i := range v.types {
			v.types[i] = -v.types[i]
		}
	}
	addTo := func(m map[*inode]*usage, d *inode) {
		if x := m[d]; x != nil {
			x.add(&v)
			if *x == (usage{}) {
				delete(m, d)
			}
		} else {
			c := v
			m[d] = &c
		}
	}
	addTo(hc.byAnchor, a)
	for d := a; d != nil; d = d.dir().parent {
		if d.dir().quota != nil {
			addTo(hc.byQuota, d)
		}
	}
}

// entryOf is inode n's part of what snapshots keep, with its anchor given.
func (t *Tree) entryOf(n *inode, h *history, anchor *inode) usage {
	var u usage
	switch {
	case n.isDir():
		if h.orphan {
			u.ns = 1
		}
	case h.orphan:
		u.ns = 1
		t.heldFileSpace(n, h, anchor, &u)
	default:
		t.heldFileSpace(n, h, anchor, &u)
	}
	return u
}

// refreshHeld recomputes the parts of the files marked dirty.
func (t *Tree) refreshHeld() {
	ss := t.snap
	hc := ss.held
	for n := range ss.dirty {
		if old, ok := hc.entries[n]; ok {
			hc.charge(old.anchor, &old.u, -1)
			delete(hc.entries, n)
		}
		h := ss.hist[n]
		if h == nil {
			continue
		}
		a := t.anchorOne(n)
		if u := t.entryOf(n, h, a); u != (usage{}) {
			hc.entries[n] = heldEntry{u: u, anchor: a}
			hc.charge(a, &u, 1)
		}
	}
	ss.dirty = nil
}

// heldUsage returns the usage of what only snapshots keep, computing it
// when stale and keeping it; nil when nothing is kept. Only a writer (a
// plan, run with the tree held alone) may call it: readers run at once
// under the NameNode's read lock and use heldForRead.
func (t *Tree) heldUsage() *heldCache {
	ss := t.snap
	if ss == nil || len(ss.hist) == 0 {
		return nil
	}
	if ss.held != nil {
		if len(ss.dirty) > 0 {
			t.refreshHeld()
		}
		return ss.held
	}
	ss.dirty = nil
	ss.held = t.computeHeld()
	return ss.held
}

// heldForRead is heldUsage for readers, which must change nothing: the
// kept usage when it is up to date, else one computed for this call alone
// (a writer keeps it at its next quota check that needs it).
func (t *Tree) heldForRead() *heldCache {
	ss := t.snap
	if ss == nil || len(ss.hist) == 0 {
		return nil
	}
	if ss.held != nil && len(ss.dirty) == 0 {
		return ss.held
	}
	return t.computeHeld()
}

// computeHeld counts what only snapshots keep, from the snapshot state.
func (t *Tree) computeHeld() *heldCache {
	ss := t.snap
	hc := &heldCache{byAnchor: make(map[*inode]*usage), byQuota: make(map[*inode]*usage), entries: make(map[*inode]heldEntry)}
	anchors := t.anchors()
	for n, h := range ss.hist {
		u := t.entryOf(n, h, anchors[n])
		if u == (usage{}) {
			continue
		}
		a := anchors[n]
		hc.entries[n] = heldEntry{u: u, anchor: a}
		if x := hc.byAnchor[a]; x != nil {
			x.add(&u)
		} else {
			c := u
			hc.byAnchor[a] = &c
		}
	}
	for a, u := range hc.byAnchor {
		for d := a; d != nil; d = d.dir().parent {
			if d.dir().quota == nil {
				continue
			}
			if x := hc.byQuota[d]; x != nil {
				x.add(u)
			} else {
				c := *u
				hc.byQuota[d] = &c
			}
		}
	}
	return hc
}

// heldFileSpace adds to u the space file n takes beyond its live state
// because of its versions (an orphan: all the space its versions hold).
// Like HDFS, each distinct block counts once, at its newest length, times
// the largest replication among the versions (and the live file).
func (t *Tree) heldFileSpace(n *inode, h *history, anchor *inode, u *usage) {
	repl := uint16(0)
	var blocks []op.Block
	live := !h.orphan
	if live {
		repl = n.repl()
		blocks = append(blocks, n.blocks()...)
	}
	for _, v := range h.vs {
		repl = max(repl, v.attrs.repl())
		for _, b := range v.attrs.blocks() {
			if hasBlock(blocks, b.ID) {
				continue
			}
			for _, y := range n.blocks() {
				if y.ID == b.ID {
					b.NumBytes = max(b.NumBytes, y.NumBytes)
				}
			}
			blocks = append(blocks, b)
		}
	}
	var liveSpace, perReplica int64
	if live {
		liveSpace = n.space()
		if r := n.repl(); r > 0 {
			perReplica = liveSpace / int64(r)
		}
	}
	for _, b := range blocks[len(n.blocks())*boolInt(live):] {
		perReplica += b.NumBytes
	}
	all := perReplica * int64(repl)
	if all <= liveSpace {
		return
	}
	u.ds += all - liveSpace
	policy := t.policyAbove(anchor)
	if p := t.ownPolicy(n); p != op.StoragePolicyUnspecified {
		policy = p
	}
	var withAll, withLive typeSpaces
	if repl > 0 {
		withAll.add(policy, repl, perReplica)
	}
	if live {
		withLive.addFile(n, policy)
	}
	for i := range u.types {
		u.types[i] += withAll[i] - withLive[i]
	}
}

// policyAbove is the effective storage policy of live directory d.
func (t *Tree) policyAbove(d *inode) uint8 {
	if len(t.feats) == 0 {
		return op.StoragePolicyUnspecified
	}
	for ; d != nil; d = d.dir().parent {
		if p := t.ownPolicy(d); p != op.StoragePolicyUnspecified {
			return p
		}
	}
	return op.StoragePolicyUnspecified
}

// anchors finds the anchor of every inode with a history: a live one's
// parent; for an orphan, the directory whose saved children it is in (the
// one of smallest inode id whose diffs record it deleted, else the orphan
// directory holding it), followed up to the first live directory; the
// root when none is known. It depends only on the state an image keeps,
// so a restart finds the same anchors.
func (t *Tree) anchors() map[*inode]*inode {
	ss := t.snap
	inDiff := make(map[*inode]*inode)  // orphan → a directory whose diffs record it deleted
	inChild := make(map[*inode]*inode) // orphan → an orphan directory holding it
	better := func(m map[*inode]*inode, c, d *inode) {
		if x := m[c]; x == nil || d.id < x.id {
			m[c] = d
		}
	}
	for n, h := range ss.hist {
		if !n.isDir() {
			continue
		}
		for _, v := range h.vs {
			for c := range v.deleted {
				if x := ss.hist[c]; x != nil && x.orphan {
					better(inDiff, c, n)
				}
			}
		}
		if h.orphan {
			for c := range n.dir().children.all() {
				if x := ss.hist[c]; x != nil && x.orphan {
					better(inChild, c, n)
				}
			}
		}
	}
	holder := inChild
	for c, d := range inDiff {
		holder[c] = d
	}
	out := make(map[*inode]*inode, len(ss.hist))
	var anchor func(n *inode, depth int) *inode
	anchor = func(n *inode, depth int) *inode {
		if a, ok := out[n]; ok {
			return a
		}
		h := ss.hist[n]
		var a *inode
		switch {
		case depth > 4096:
			a = t.root
		case h != nil && !h.orphan:
			a = h.parent
			if a == nil || !t.isLiveDir(a) {
				a = t.root
			}
		case holder[n] == nil:
			a = t.root
		case t.isLiveDir(holder[n]):
			a = holder[n]
		default:
			a = anchor(holder[n], depth+1)
		}
		out[n] = a
		return a
	}
	for n := range ss.hist {
		anchor(n, 0)
	}
	return out
}

// anchorOne is anchors' answer for inode n alone, found by scanning the
// directories' histories instead of indexing them all.
func (t *Tree) anchorOne(n *inode) *inode {
	ss := t.snap
	for range 4097 {
		h := ss.hist[n]
		if h != nil && !h.orphan {
			if h.parent == nil || !t.isLiveDir(h.parent) {
				return t.root
			}
			return h.parent
		}
		hd := t.holderOf(n)
		if hd == nil {
			return t.root
		}
		if t.isLiveDir(hd) {
			return hd
		}
		n = hd
	}
	return t.root
}

// holderOf is the directory anchors takes as holding orphan c: of the
// smallest inode id among those whose diffs record it deleted, else among
// the orphan directories whose children it is in; nil when none.
func (t *Tree) holderOf(c *inode) *inode {
	ss := t.snap
	if x := ss.hist[c]; x == nil || !x.orphan {
		return nil
	}
	var inDiff, inChild *inode
	for n := range ss.histDirs {
		h := ss.hist[n]
		for _, v := range h.vs {
			if _, ok := v.deleted[c]; ok {
				if inDiff == nil || n.id < inDiff.id {
					inDiff = n
				}
				break
			}
		}
		if h.orphan && n.dir().children.get(c.name) == c && (inChild == nil || n.id < inChild.id) {
			inChild = n
		}
	}
	if inDiff != nil {
		return inDiff
	}
	return inChild
}

// isLiveDir reports whether directory object d is in the live tree.
func (t *Tree) isLiveDir(d *inode) bool {
	for d != t.root {
		p := d.dir().parent
		if p == nil || p.child(d.name) != d {
			return false
		}
		d = p
	}
	return true
}

// heldAt is what only snapshots keep below quota directory d.
func (t *Tree) heldAt(d *inode) *usage {
	if hc := t.heldUsage(); hc != nil {
		return hc.byQuota[d]
	}
	return nil
}

// heldBelow is what only snapshots keep below directory n (any directory),
// for readers.
func (t *Tree) heldBelow(n *inode) usage {
	var u usage
	if !n.isDir() {
		return u
	}
	hc := t.heldForRead()
	if hc == nil {
		return u
	}
	if n.dir().quota != nil {
		if x := hc.byQuota[n]; x != nil {
			u = *x
		}
		return u
	}
	for a, x := range hc.byAnchor {
		for d := a; d != nil; d = d.dir().parent {
			if d == n {
				u.add(x)
				break
			}
		}
	}
	return u
}

// setSnapParents sets the parent of every live inode with a history
// after an image load.
func (t *Tree) setSnapParents() {
	ss := t.snap
	if ss == nil || len(ss.hist) == 0 {
		return
	}
	var walkLive func(d *inode)
	walkLive = func(d *inode) {
		for c := range d.dir().children.all() {
			if h := ss.hist[c]; h != nil {
				h.parent = d
			}
			if c.isDir() {
				walkLive(c)
			}
		}
	}
	walkLive(t.root)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
