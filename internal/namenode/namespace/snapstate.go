package namespace

import (
	"sort"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// Snapshot state. The package doc (# Snapshots) describes the state
// machine; this file holds its structures and the copy-on-write steps the
// apply path calls. All of it lives in Tree.snap, beside the inode tree:
// an inode carries nothing for snapshots.

// snapState is what snapshots add to a Tree; nil until the first snapshot.
type snapState struct {
	counter int32               // the last snapshot id handed out (ids are global, as HDFS's)
	dirs    map[*inode]*snapDir // snapshottable directories with at least one snapshot
	ids     []int32             // ids of the existing snapshots, ascending
	byID    map[int32]*snapshot // the existing snapshots
	hist    map[*inode]*history // saved versions of inodes changed after a snapshot
	exiles  map[*inode]int32    // subtree roots moved away from where a snapshot saw them: that snapshot's id (the newest)
	orphans map[uint64]*inode   // filled only while loading an image
	held    *heldCache          // usage of what only snapshots keep (snapquota.go); nil: to compute
	dirty   map[*inode]struct{} // files whose part of held is to recompute
	// histDirs are the directories in hist (an index of it, for
	// snapquota.go's holderOf).
	histDirs map[*inode]struct{}
}

// snapDir is the snapshot list of one snapshottable directory.
type snapDir struct {
	snaps []*snapshot // ascending id (creation order)
}

func (d *snapDir) latest() int32 { return d.snaps[len(d.snaps)-1].id }

func (d *snapDir) byName(name string) (int, *snapshot) {
	for i, s := range d.snaps {
		if s.name == name {
			return i, s
		}
	}
	return -1, nil
}

// snapshot is one snapshot of a directory.
type snapshot struct {
	id       int32
	name     string
	ctime    int64  // when it was taken (ms); the snapshot root's mtime
	maxInode uint64 // the last inode id when it was taken: no newer inode is in it
	root     *inode // the snapshottable directory (live)
}

// history is the list of saved versions of one inode object.
type history struct {
	vs []*version // ascending tag
	// orphan: the inode was deleted from the live tree; only snapshots
	// still reach it (through a parent's diff or as a moved subtree).
	orphan bool
	// parent is the directory holding the inode while it is live: where
	// quotas charge what its versions keep (snapquota.go).
	parent *inode
}

// version is an inode's state as it was before the first change after a
// snapshot. With tag T and the previous version's tag P (0 for the first),
// it is the state that every snapshot with id in (P, T] sees.
type version struct {
	tag   int32
	attrs inode // copy of the inode's fields; blocks copied, uc nil, dir shared (only for isDir)
	// The inode's extended attributes and ACL then. Both are immutable
	// once set (a change replaces the slice or the shared ACL object), so
	// the version shares them; it holds a reference on the ACL.
	xattrs []op.XAttr
	acl    *aclFeature
	// Directories: the children added and removed after this version was
	// saved and before the next one (or now), by inode object; an entry
	// added and then removed in the same span cancels out.
	created, deleted map[*inode]struct{}
}

func (v *version) record(c *inode, added bool) {
	if added {
		if _, ok := v.deleted[c]; ok {
			delete(v.deleted, c)
			return
		}
		if v.created == nil {
			v.created = make(map[*inode]struct{})
		}
		v.created[c] = struct{}{}
		return
	}
	if _, ok := v.created[c]; ok {
		delete(v.created, c)
		return
	}
	if v.deleted == nil {
		v.deleted = make(map[*inode]struct{})
	}
	v.deleted[c] = struct{}{}
}

// snaps returns the snapshot state, creating it.
func (t *Tree) snaps() *snapState {
	if t.snap == nil {
		t.snap = &snapState{
			dirs:   make(map[*inode]*snapDir),
			byID:   make(map[int32]*snapshot),
			hist:   make(map[*inode]*history),
			exiles: make(map[*inode]int32),

			histDirs: make(map[*inode]struct{}),
		}
	}
	return t.snap
}

// snapActive reports whether any snapshot or saved version exists: only
// then do applies do snapshot work.
func (t *Tree) snapActive() bool {
	return t.snap != nil && (len(t.snap.ids) > 0 || len(t.snap.hist) > 0)
}

// seenBy returns the newest snapshot that may see the inodes along nodes
// (a path from the root, nil-terminated or complete): the newest snapshot
// of a snapshottable directory on it, or of an exile mark on it; 0 when
// none.
func (t *Tree) seenBy(nodes []*inode) int32 {
	ss := t.snap
	if ss == nil || len(ss.ids) == 0 {
		return 0
	}
	var l int32
	for _, n := range nodes {
		if n == nil {
			break
		}
		l = max(l, t.seenAt(n))
	}
	return l
}

// seenAt is seenBy's contribution of n alone.
func (t *Tree) seenAt(n *inode) int32 {
	ss := t.snap
	var l int32
	if d := ss.dirs[n]; d != nil {
		l = d.latest()
	}
	if e, ok := ss.exiles[n]; ok && e > l {
		l = e
	}
	return l
}

// cowNode saves n's current state as a version when snapshot l (the
// newest that may see n) has not got one: the first change after a
// snapshot copies the inode's fields, every later change until the next
// snapshot is free.
func (t *Tree) cowNode(n *inode, l int32) {
	if l == 0 {
		return
	}
	ss := t.snap
	if s := ss.byID[l]; s == nil || n.id > s.maxInode {
		return // n is newer than every snapshot that could see it
	}
	h := ss.hist[n]
	if h != nil && len(h.vs) > 0 && h.vs[len(h.vs)-1].tag >= l {
		return
	}
	v := &version{tag: ss.counter, attrs: snapCopy(n)}
	if f := t.featuresOf(n); f != nil {
		v.xattrs = f.xattrs
		if f.acl != nil {
			f.acl.refs++
			v.acl = f.acl
		}
	}
	if h == nil {
		h = &history{}
		ss.hist[n] = h
		if n.isDir() {
			ss.histDirs[n] = struct{}{}
		}
	}
	h.vs = append(h.vs, v)
}

// snapCopy copies n's fields for a version: a directory's copy shares its
// dirData (only to be told a directory; its children are never read
// through it), a file's copy has its own block list and is closed.
func snapCopy(n *inode) inode {
	c := inode{id: n.id, name: n.name, mtime: n.mtime, atime: n.atime, owner: n.owner, mode: n.mode}
	if n.isDir() {
		c.setDir(n.dir())
		return c
	}
	c.setPref(n.pref())
	c.setRepl(n.repl())
	c.setBlocks(cloneBlocks(n.blocks()))
	return c
}

// cow saves the version of the last inode of w, when a snapshot needs it.
func (t *Tree) cow(w *walk) {
	if t.snapActive() {
		t.cowNode(w.last(), t.seenBy(w.nodes))
		t.noteParent(w.last(), w.parent())
	}
}

// noteParent records par as the parent of n when n has a history; a file
// with a history is about to change, so the computed usage of what
// snapshots keep is forgotten. (A change to a directory's attributes or
// children does not change that usage: a removal does, and forget,
// collect and rename see to it.)
func (t *Tree) noteParent(n, par *inode) {
	if h := t.snap.hist[n]; h != nil {
		if par != nil {
			h.parent = par
		}
		if !n.isDir() {
			t.heldDirty(n)
		}
	}
}

// cowAt saves the version of w.nodes[i].
func (t *Tree) cowAt(w *walk, i int) {
	if t.snapActive() {
		t.cowNode(w.nodes[i], t.seenBy(w.nodes[:i+1]))
		if i > 0 {
			t.noteParent(w.nodes[i], w.nodes[i-1])
		}
	}
}

// noteChild records in dir par's newest version that child c was added
// or removed; call it after cowing par.
func (t *Tree) noteChild(par, c *inode, added bool) {
	if t.snap == nil {
		return
	}
	if h := t.snap.hist[par]; h != nil && len(h.vs) > 0 {
		h.vs[len(h.vs)-1].record(c, added)
	}
}

// heldBySnapshot reports whether a saved version of f holds block id.
func (t *Tree) heldBySnapshot(f *inode, id int64) bool {
	if t.snap == nil {
		return false
	}
	h := t.snap.hist[f]
	if h == nil {
		return false
	}
	for _, v := range h.vs {
		if hasBlock(v.attrs.blocks(), id) {
			return true
		}
	}
	return false
}

// wouldHold reports whether block id of f (along w) is, or after the
// next change would be, held by a snapshot.
func (t *Tree) wouldHold(w *walk, f *inode, id int64) bool {
	if !t.snapActive() {
		return false
	}
	if t.heldBySnapshot(f, id) {
		return true
	}
	l := t.seenBy(w.nodes)
	if l == 0 {
		return false
	}
	s := t.snap.byID[l]
	if s == nil || f.id > s.maxInode {
		return false
	}
	h := t.snap.hist[f]
	saved := h != nil && len(h.vs) > 0 && h.vs[len(h.vs)-1].tag >= l
	return !saved && hasBlock(f.blocks(), id)
}

// versionAt returns the attributes of inode object n as snapshot id sees
// them: the first version with a tag >= id, or n itself.
func (t *Tree) versionAt(n *inode, id int32) (*inode, *history, int) {
	if t.snap == nil {
		return n, nil, -1
	}
	h := t.snap.hist[n]
	if h == nil {
		return n, nil, -1
	}
	k := sort.Search(len(h.vs), func(i int) bool { return h.vs[i].tag >= id })
	if k == len(h.vs) {
		return n, h, k
	}
	return &h.vs[k].attrs, h, k
}

// childrenAt returns the children of directory object d as snapshot id
// sees them, each with its attributes there, sorted by name.
func (t *Tree) childrenAt(d *inode, id int32) []viewNode {
	_, h, k := t.versionAt(d, id)
	var out []viewNode
	add := func(c *inode) {
		out = append(out, viewNode{obj: c, at: t.attrsAt(c, id)})
	}
	if h == nil || k < 0 || k == len(h.vs) {
		for c := range d.dir().children.all() {
			add(c)
		}
		return out
	}
	// Undo the diffs from the newest back to version k; the oldest change
	// of a child decides whether it was there.
	present := make(map[*inode]bool)
	for j := len(h.vs) - 1; j >= k; j-- {
		v := h.vs[j]
		for c := range v.created {
			present[c] = false
		}
		for c := range v.deleted {
			present[c] = true
		}
	}
	for c := range d.dir().children.all() {
		if p, ok := present[c]; ok && !p {
			continue
		}
		delete(present, c)
		add(c)
	}
	for c, p := range present {
		if p {
			add(c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at.name < out[j].at.name })
	return out
}

func (t *Tree) attrsAt(n *inode, id int32) *inode {
	a, _, _ := t.versionAt(n, id)
	return a
}

// viewNode is an inode object and its attributes in one snapshot.
type viewNode struct {
	obj *inode
	at  *inode
}

// childAt finds the child called name of directory object d in snapshot id.
func (t *Tree) childAt(d *inode, id int32, name string) (viewNode, bool) {
	if _, h, k := t.versionAt(d, id); h == nil || k == len(h.vs) {
		if c := d.child(name); c != nil {
			return viewNode{obj: c, at: t.attrsAt(c, id)}, true
		}
		return viewNode{}, false
	}
	for _, c := range t.childrenAt(d, id) {
		if c.at.name == name {
			return c, true
		}
	}
	return viewNode{}, false
}

// freeUnheld adds to eff the blocks of f's live list that no version of f
// holds (f is leaving the live tree).
func (t *Tree) freeUnheld(f *inode, eff *Effects) {
	if eff == nil {
		return
	}
	for _, b := range f.blocks() {
		if !t.heldBySnapshot(f, b.ID) {
			eff.FreedBlocks = append(eff.FreedBlocks, b)
		}
	}
}

// ---- applying the snapshot ops ----

func (t *Tree) snapRoot(p string) (*walk, *inode, *snapDir, error) {
	w, d, err := t.existing(p)
	if err != nil {
		return nil, nil, nil, err
	}
	if !d.isDir() || !t.isSnapshottable(d) {
		return nil, nil, nil, corruptf("%s is not a snapshottable directory", p)
	}
	var sd *snapDir
	if t.snap != nil {
		sd = t.snap.dirs[d]
	}
	return w, d, sd, nil
}

func (t *Tree) applyCreateSnapshot(o *op.CreateSnapshot) error {
	w, d, sd, err := t.snapRoot(o.Root)
	if err != nil {
		return err
	}
	if sd != nil {
		if _, s := sd.byName(o.Name); s != nil {
			return corruptf("create snapshot %s of %s: it exists", o.Name, o.Root)
		}
	}
	if o.Name == "" || strings.Contains(o.Name, "/") {
		return corruptf("create snapshot of %s: bad name %q", o.Root, o.Name)
	}
	// The root's mtime changes with the snapshot: older snapshots keep the old one.
	t.cow(w)
	ss := t.snaps()
	ss.counter++
	s := &snapshot{id: ss.counter, name: strings.Clone(o.Name), ctime: o.Mtime, maxInode: t.lastInodeID, root: d}
	if sd == nil {
		sd = &snapDir{}
		ss.dirs[d] = sd
	}
	sd.snaps = append(sd.snaps, s)
	ss.ids = append(ss.ids, s.id)
	ss.byID[s.id] = s
	d.touch(o.Mtime)
	return nil
}

func (t *Tree) applyRenameSnapshot(o *op.RenameSnapshot) error {
	w, d, sd, err := t.snapRoot(o.Root)
	if err != nil {
		return err
	}
	if sd == nil {
		return corruptf("rename snapshot %s of %s: no snapshots", o.OldName, o.Root)
	}
	_, s := sd.byName(o.OldName)
	if s == nil {
		return corruptf("rename snapshot %s of %s: no such snapshot", o.OldName, o.Root)
	}
	if o.NewName == o.OldName {
		return nil
	}
	if _, x := sd.byName(o.NewName); x != nil || o.NewName == "" || strings.Contains(o.NewName, "/") {
		return corruptf("rename snapshot %s of %s: bad or taken name %q", o.OldName, o.Root, o.NewName)
	}
	t.cow(w)
	s.name = strings.Clone(o.NewName)
	d.touch(o.Mtime)
	return nil
}

func (t *Tree) applyDeleteSnapshot(o *op.DeleteSnapshot, eff *Effects) error {
	w, d, sd, err := t.snapRoot(o.Root)
	if err != nil {
		return err
	}
	if sd == nil {
		return corruptf("delete snapshot %s of %s: no snapshots", o.Name, o.Root)
	}
	i, s := sd.byName(o.Name)
	if s == nil {
		return corruptf("delete snapshot %s of %s: no such snapshot", o.Name, o.Root)
	}
	t.cow(w)
	ss := t.snap
	sd.snaps = append(sd.snaps[:i], sd.snaps[i+1:]...)
	if len(sd.snaps) == 0 {
		delete(ss.dirs, d)
	}
	delete(ss.byID, s.id)
	j := sort.Search(len(ss.ids), func(k int) bool { return ss.ids[k] >= s.id })
	ss.ids = append(ss.ids[:j], ss.ids[j+1:]...)
	d.touch(o.Mtime)
	t.collect(eff)
	return nil
}

// anyIn reports whether an existing snapshot has an id in (lo, hi].
func (ss *snapState) anyIn(lo, hi int32) bool {
	j := sort.Search(len(ss.ids), func(k int) bool { return ss.ids[k] > lo })
	return j < len(ss.ids) && ss.ids[j] <= hi
}

// newestUpTo returns the id of the newest existing snapshot <= id, or 0.
func (ss *snapState) newestUpTo(id int32) int32 {
	j := sort.Search(len(ss.ids), func(k int) bool { return ss.ids[k] > id })
	if j == 0 {
		return 0
	}
	return ss.ids[j-1]
}

// collect drops the versions no existing snapshot sees (after a snapshot
// was deleted), frees the blocks only they held, and forgets orphans and
// exile marks that nothing needs any more.
func (t *Tree) collect(eff *Effects) {
	ss := t.snap
	ss.held = nil
	for n, h := range ss.hist {
		t.collectNode(n, h, t.copySource(n), eff)
	}
	for n, e := range ss.exiles {
		if e2 := ss.newestUpTo(e); e2 == 0 {
			delete(ss.exiles, n)
		} else {
			ss.exiles[n] = e2
		}
	}
}

// copySource is the block a copy-on-truncate of n, under way, copies: a
// version holding it is kept until the copy ends, even when no snapshot
// selects it any more (no view shows it), so that the block and its
// replicas stay; 0 when n has no copy under way.
func (t *Tree) copySource(n *inode) int64 {
	if u := n.ucd(); u != nil && u.truncSrc != 0 && t.uc[n.id] == n {
		return u.truncSrc
	}
	return 0
}

// collectNode drops the versions of n that no snapshot selects (except one
// holding block src, the source of a copy under way, when not 0), freeing
// the blocks only they held; n's history goes when it has no version left.
func (t *Tree) collectNode(n *inode, h *history, src int64, eff *Effects) {
	ss := t.snap
	{
		var dropped []op.Block
		kept := make([]*version, 0, len(h.vs))
		var prev int32
		for _, v := range h.vs {
			lo := prev
			prev = v.tag
			if ss.anyIn(lo, v.tag) || (src != 0 && hasBlock(v.attrs.blocks(), src)) {
				kept = append(kept, v)
				continue
			}
			dropped = append(dropped, v.attrs.blocks()...)
			t.releaseVersion(v)
			if len(kept) > 0 {
				p := kept[len(kept)-1]
				for c := range v.created {
					p.record(c, true)
				}
				for c := range v.deleted {
					p.record(c, false)
				}
			}
		}
		if len(kept) == len(h.vs) {
			return
		}
		h.vs = kept
		for _, b := range dropped {
			if (!h.orphan && hasBlock(n.blocks(), b.ID)) || t.heldBySnapshot(n, b.ID) {
				continue
			}
			if eff != nil && !hasBlock(eff.FreedBlocks, b.ID) {
				eff.FreedBlocks = append(eff.FreedBlocks, b)
			}
		}
		if len(h.vs) == 0 {
			delete(ss.hist, n)
			delete(ss.histDirs, n)
		}
	}
}

// releaseVersion gives back what a dropped version holds beyond its
// fields: its reference on a shared ACL.
func (t *Tree) releaseVersion(v *version) {
	if v.acl != nil {
		t.releaseACL(v.acl)
		v.acl = nil
	}
}

// dropHistory forgets n's saved versions.
func (t *Tree) dropHistory(n *inode) {
	if h := t.snap.hist[n]; h != nil {
		for _, v := range h.vs {
			t.releaseVersion(v)
		}
		delete(t.snap.hist, n)
	}
}

// featsAt returns the extended attributes and the ACL of inode object n
// as snapshot id sees them (the live ones when no version was saved for it).
func (t *Tree) featsAt(n *inode, id int32) ([]op.XAttr, *aclFeature) {
	if _, h, k := t.versionAt(n, id); h != nil && k >= 0 && k < len(h.vs) {
		return h.vs[k].xattrs, h.vs[k].acl
	}
	if f := t.featuresOf(n); f != nil {
		return f.xattrs, f.acl
	}
	return nil, nil
}

// endCopy is called when a file with a copy-on-truncate under way is
// closed or removed: a version kept only for the copy's source goes now.
func (t *Tree) endCopy(n *inode, eff *Effects) {
	if t.snap == nil {
		return
	}
	if h := t.snap.hist[n]; h != nil {
		t.collectNode(n, h, 0, eff)
		t.heldDirty(n) // what its versions keep may have gone
	}
}

// snapshotsBelow returns the path of a directory in the subtree at n that
// has snapshots (the first by path), or "".
func (t *Tree) snapshotsBelow(n *inode) string {
	if t.snap == nil || len(t.snap.dirs) == 0 || !n.isDir() {
		return ""
	}
	var found []string
	for d := range t.snap.dirs {
		for a := d; a != nil; a = a.dir().parent {
			if a == n {
				found = append(found, dirPath(d))
				break
			}
		}
	}
	if len(found) == 0 {
		return ""
	}
	sort.Strings(found)
	return found[0]
}

// inSnapshot reports whether a snapshot sees the inode at the end of w
// (it has saved versions, or a snapshot that may see it is newer than it).
func (t *Tree) inSnapshot(w *walk) bool {
	if !t.snapActive() {
		return false
	}
	n := w.last()
	if _, ok := t.snap.hist[n]; ok {
		return true
	}
	l := t.seenBy(w.nodes)
	s := t.snap.byID[l]
	return s != nil && n.id <= s.maxInode
}

// eachHeldBlock calls fn, per inode, for the blocks that only saved
// versions hold (not the inode's live list), each in its newest state.
func (t *Tree) eachHeldBlock(fn func(id uint64, replication uint16, blocks []op.Block, uc bool)) {
	if t.snap == nil {
		return
	}
	type held struct {
		n *inode
		h *history
	}
	all := make([]held, 0, len(t.snap.hist))
	for n, h := range t.snap.hist {
		all = append(all, held{n, h})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n.id < all[j].n.id })
	for _, x := range all {
		n, h := x.n, x.h
		if n.isDir() {
			continue
		}
		var out []op.Block
		repl := n.repl()
		for _, v := range h.vs {
			repl = max(repl, v.attrs.repl())
			for _, b := range v.attrs.blocks() {
				if (!h.orphan && hasBlock(n.blocks(), b.ID)) || hasBlock(out, b.ID) {
					continue
				}
				nb := b
				for _, y := range n.blocks() {
					if y.ID == b.ID {
						nb = y // an orphan's last state of the block
					}
				}
				nb.GenStamp = t.newestGenStamp(n, b)
				out = append(out, nb)
			}
		}
		if len(out) > 0 {
			fn(n.id, repl, out, false)
		}
	}
}
