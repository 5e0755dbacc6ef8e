package namespace

import (
	"bufio"
	"fmt"
	"sort"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// Reads through ".snapshot" paths: DIR/.snapshot lists the snapshots of
// the snapshottable directory DIR, and DIR/.snapshot/NAME/... is the tree
// below DIR as snapshot NAME holds it. Such paths are read-only: resolve
// refuses them to every plan.

// sview is a resolved snapshot path.
type sview struct {
	path string
	dir  *inode    // the snapshottable directory
	s    *snapshot // nil for DIR/.snapshot itself
	node viewNode  // the inode at path in s (for s != nil)
}

// maybeSnapPath reports whether p could go through a ".snapshot" directory.
func (t *Tree) maybeSnapPath(p string) bool {
	return len(t.feats) > 0 && strings.Contains(p, "/"+dotSnapshot)
}

// resolveSnap resolves p when it goes through the ".snapshot" of a
// snapshottable directory; ok is false when it does not (the caller then
// resolves it as a live path). Traverse permission is checked on the way.
func (t *Tree) resolveSnap(c Caller, p string) (v *sview, ok bool, err error) {
	np, err := normalize(p)
	if err != nil || np == "/" {
		return nil, false, nil
	}
	comps := strings.Split(np[1:], "/")
	chk := t.checking(c)
	cur := t.root
	nodes := []*inode{t.root}
	at := -1
	for i, name := range comps {
		if cur == nil || !cur.isDir() {
			return nil, false, nil
		}
		if name == dotSnapshot && t.isSnapshottable(cur) {
			at = i
			break
		}
		cur = cur.child(name)
		nodes = append(nodes, cur)
	}
	if at < 0 {
		return nil, false, nil
	}
	w := &walk{path: np, comps: comps[:at], nodes: nodes}
	if chk {
		for i, n := range nodes {
			if !t.hasAccess(c, n, Execute) {
				return nil, true, t.denied(c, n, w.prefix(i), Execute)
			}
		}
	}
	v = &sview{path: np, dir: cur}
	if at == len(comps)-1 {
		return v, true, nil
	}
	var sd *snapDir
	if t.snap != nil {
		sd = t.snap.dirs[cur]
	}
	if sd != nil {
		_, v.s = sd.byName(comps[at+1])
	}
	if v.s == nil {
		return nil, true, notFound("File does not exist: %s", np)
	}
	id := v.s.id
	v.node = viewNode{obj: cur, at: t.attrsAt(cur, id)}
	for _, name := range comps[at+2:] {
		if !v.node.obj.isDir() {
			return nil, true, notFound("File does not exist: %s", np)
		}
		if chk && !t.viewAccess(c, v.node, id, Execute) {
			return nil, true, newErr("Permission denied: user="+c.User+", access=--x, inode=\""+np+"\"", ErrPermission)
		}
		n, found := t.childAt(v.node.obj, id, name)
		if !found {
			return nil, true, notFound("File does not exist: %s", np)
		}
		v.node = n
	}
	return v, true, nil
}

// isSnapRoot: the path is DIR/.snapshot/NAME.
func (v *sview) isSnapRoot() bool { return v.s != nil && v.node.obj == v.dir }

// viewInfo reports a node of a snapshot.
func (t *Tree) viewInfo(n viewNode, s *snapshot) FileInfo {
	fi := t.info(n.at)
	fi.ID = n.obj.id
	fi.UnderConstruction, fi.ClientName, fi.ClientMachine = false, "", ""
	fi.Snapshottable = false
	fi.InSnapshot = true
	_, acl := t.featsAt(n.obj, s.id)
	fi.HasACL = acl != nil
	if n.obj.isDir() {
		fi.ChildrenNum = len(t.childrenAt(n.obj, s.id))
	}
	if n.obj == s.root {
		fi.Name = []byte(s.name)
		fi.Mtime = s.ctime
	}
	return fi
}

// viewAccess is hasAccess for node n of snapshot id: by its permission
// bits and ACL in that snapshot, as HDFS checks reads in a snapshot.
func (t *Tree) viewAccess(c Caller, n viewNode, id int32, a Access) bool {
	if _, acl := t.featsAt(n.obj, id); acl != nil && acl.entries[0].Scope == op.ACLAccess {
		return t.aclAccess(c, n.at, acl.entries, a)
	}
	// Otherwise the bits decide (a saved version has no entry in Tree.feats).
	return t.hasAccess(c, n.at, a)
}

// dotSnapshotInfo is the status of DIR/.snapshot.
func (t *Tree) dotSnapshotInfo(d *inode) FileInfo {
	fi := t.info(d)
	fi.Name = []byte(dotSnapshot)
	fi.Snapshottable = false
	fi.ChildrenNum = 0
	if t.snap != nil {
		if sd := t.snap.dirs[d]; sd != nil {
			fi.ChildrenNum = len(sd.snaps)
		}
	}
	return fi
}

func (t *Tree) snapStat(v *sview) FileInfo {
	if v.s == nil {
		return t.dotSnapshotInfo(v.dir)
	}
	return t.viewInfo(v.node, v.s)
}

// snapList lists a directory of a snapshot, or the snapshots in DIR/.snapshot.
func (t *Tree) snapList(c Caller, v *sview, startAfter []byte, limit int) ([]FileInfo, int, error) {
	var all []FileInfo
	if v.s == nil {
		if t.checking(c) && !t.hasAccess(c, v.dir, Read|Execute) {
			return nil, 0, t.denied(c, v.dir, v.path, Read|Execute)
		}
		if t.snap != nil {
			if sd := t.snap.dirs[v.dir]; sd != nil {
				for _, s := range sd.snaps {
					all = append(all, t.viewInfo(viewNode{obj: v.dir, at: t.attrsAt(v.dir, s.id)}, s))
				}
			}
		}
		sort.Slice(all, func(i, j int) bool { return string(all[i].Name) < string(all[j].Name) })
	} else {
		if !v.node.obj.isDir() {
			return []FileInfo{t.viewInfo(v.node, v.s)}, 0, nil
		}
		if t.checking(c) && !t.viewAccess(c, v.node, v.s.id, Read|Execute) {
			return nil, 0, t.denied(c, v.node.at, v.path, Read|Execute)
		}
		for _, ch := range t.childrenAt(v.node.obj, v.s.id) {
			all = append(all, t.viewInfo(ch, v.s))
		}
	}
	after := string(startAfter)
	i := sort.Search(len(all), func(i int) bool { return string(all[i].Name) > after })
	end := len(all)
	if limit > 0 && i+limit < end {
		end = i + limit
	}
	return all[i:end], len(all) - end, nil
}

// snapBlocks is FileBlocks through a snapshot: the blocks as the snapshot
// holds them, each with the newest generation stamp its block has (an
// append after the snapshot bumps the stamp of the shared last block).
func (t *Tree) snapBlocks(c Caller, v *sview) (FileInfo, []op.Block, error) {
	if v.s == nil || v.node.obj.isDir() {
		return FileInfo{}, nil, newErr("Path is not a file: "+v.path, ErrNotFound, ErrNotFile)
	}
	if t.checking(c) && !t.viewAccess(c, v.node, v.s.id, Read) {
		return FileInfo{}, nil, t.denied(c, v.node.at, v.path, Read)
	}
	blocks := cloneBlocks(v.node.at.blocks())
	for i := range blocks {
		blocks[i].GenStamp = t.newestGenStamp(v.node.obj, blocks[i])
	}
	return t.viewInfo(v.node, v.s), blocks, nil
}

// newestGenStamp returns the newest stamp of block b in any state of f.
func (t *Tree) newestGenStamp(f *inode, b op.Block) int64 {
	gs := b.GenStamp
	for _, x := range f.blocks() {
		if x.ID == b.ID && x.GenStamp > gs {
			gs = x.GenStamp
		}
	}
	if t.snap != nil {
		if h := t.snap.hist[f]; h != nil {
			for _, v := range h.vs {
				for _, x := range v.attrs.blocks() {
					if x.ID == b.ID && x.GenStamp > gs {
						gs = x.GenStamp
					}
				}
			}
		}
	}
	return gs
}

// snapSummary is ContentSummary through a snapshot.
func (t *Tree) snapSummary(v *sview) Summary {
	var s Summary
	if v.s == nil {
		s.DirectoryCount = 1
		if t.snap != nil {
			if sd := t.snap.dirs[v.dir]; sd != nil {
				for _, x := range sd.snaps {
					t.sumAt(viewNode{obj: v.dir, at: t.attrsAt(v.dir, x.id)}, x.id, &s, map[*inode]bool{})
				}
			}
		}
	} else {
		t.sumAt(v.node, v.s.id, &s, map[*inode]bool{})
	}
	s.Quota, s.SpaceQuota = -1, -1
	return s
}

// sumAt adds the view of n in snapshot id to s. seen holds the
// directories expanded so far: a snapshot state read from a damaged image
// could list a directory below itself, and is then walked once, not
// forever.
func (t *Tree) sumAt(n viewNode, id int32, s *Summary, seen map[*inode]bool) {
	if !n.obj.isDir() {
		s.FileCount++
		l := n.at.length()
		s.Length += l
		s.SpaceConsumed += l * int64(n.at.repl())
		return
	}
	s.DirectoryCount++
	if seen[n.obj] {
		return
	}
	seen[n.obj] = true
	for _, c := range t.childrenAt(n.obj, id) {
		t.sumAt(c, id, s, seen)
	}
}

// SnapshotView calls fn for every inode of snapshot name of directory dir,
// pre-order with children by name, with its path relative to the snapshot
// root ("" for the root) and its status and blocks there (for tests and
// fsck; no permission checks).
func (t *Tree) SnapshotView(dir, name string, fn func(rel string, fi FileInfo, blocks []op.Block)) bool {
	w := t.lookup(dir)
	if w == nil || w.last() == nil || t.snap == nil {
		return false
	}
	sd := t.snap.dirs[w.last()]
	if sd == nil {
		return false
	}
	_, s := sd.byName(name)
	if s == nil {
		return false
	}
	t.walkView(s, func(rel string, n viewNode, fi FileInfo, blocks []op.Block) { fn(rel, fi, blocks) })
	return true
}

// walkView calls fn for every node of snapshot s, parents first; a
// directory is expanded once (see sumAt).
func (t *Tree) walkView(s *snapshot, fn func(rel string, n viewNode, fi FileInfo, blocks []op.Block)) {
	seen := map[*inode]bool{}
	var walk func(n viewNode, rel string)
	walk = func(n viewNode, rel string) {
		fi := t.viewInfo(n, s)
		var blocks []op.Block
		if !n.obj.isDir() {
			blocks = n.at.blocks()
		}
		fn(rel, n, fi, blocks)
		if n.obj.isDir() && !seen[n.obj] {
			seen[n.obj] = true
			for _, c := range t.childrenAt(n.obj, s.id) {
				walk(c, rel+"/"+c.at.name)
			}
		}
	}
	walk(viewNode{obj: s.root, at: t.attrsAt(s.root, s.id)}, "")
}

// Snapshots lists the snapshots of directory dir in creation order: name,
// id and creation time (getSnapshotListing).
func (t *Tree) Snapshots(c Caller, dir string) ([]SnapshotInfo, error) {
	w, err := t.resolveExisting(c, dir, "Directory does not exist: %s")
	if err != nil {
		return nil, err
	}
	d := w.last()
	if !d.isDir() || !t.isSnapshottable(d) {
		return nil, newErr("Directory is not a snapshottable directory: "+w.path, ErrSnapshot)
	}
	var out []SnapshotInfo
	if t.snap != nil {
		if sd := t.snap.dirs[d]; sd != nil {
			for _, s := range sd.snaps {
				fi := t.viewInfo(viewNode{obj: d, at: t.attrsAt(d, s.id)}, s)
				out = append(out, SnapshotInfo{Name: s.name, ID: s.id, Ctime: s.ctime, Root: w.path, Info: fi})
			}
		}
	}
	return out, nil
}

// SnapshotInfo is one snapshot of a directory.
type SnapshotInfo struct {
	Name  string
	ID    int32
	Ctime int64
	Root  string // the snapshottable directory's path
	Info  FileInfo
}

// dumpSnapshots writes, for Dump, every snapshot as the tree it shows, by
// directory path and then creation order.
func (t *Tree) dumpSnapshots(w *bufio.Writer) {
	if t.snap == nil || len(t.snap.ids) == 0 {
		return
	}
	fmt.Fprintf(w, "snapshots counter=%d\n", t.snap.counter)
	type dirSnaps struct {
		path string
		sd   *snapDir
	}
	var dirs []dirSnaps
	for d, sd := range t.snap.dirs {
		dirs = append(dirs, dirSnaps{dirPath(d), sd})
	}
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].path < dirs[j].path })
	for _, d := range dirs {
		for _, s := range d.sd.snaps {
			fmt.Fprintf(w, "snapshot %s id=%d ctime=%d\n", SnapshotPath(d.path, s.name), s.id, s.ctime)
			t.walkView(s, func(rel string, n viewNode, fi FileInfo, blocks []op.Block) {
				fmt.Fprintf(w, "  %s id=%d dir=%v %s:%s:%04o mtime=%d atime=%d", "."+rel, fi.ID, fi.IsDir, fi.Perm.User, fi.Perm.Group, fi.Perm.Mode, fi.Mtime, fi.Atime)
				if !fi.IsDir {
					fmt.Fprintf(w, " repl=%d bsize=%d len=%d blocks=[", fi.Replication, fi.BlockSize, fi.Length)
					for i, b := range blocks {
						if i > 0 {
							w.WriteByte(' ')
						}
						fmt.Fprintf(w, "%d:%d", b.ID, b.NumBytes)
					}
					w.WriteByte(']')
				}
				xs, acl := t.featsAt(n.obj, s.id)
				for _, x := range xs {
					fmt.Fprintf(w, " xattr=%s", XAttrName(x))
					if x.Value != nil {
						fmt.Fprintf(w, ":%q", x.Value)
					}
				}
				if acl != nil {
					fmt.Fprintf(w, " acl=%q", acl.key)
				}
				w.WriteByte('\n')
			})
		}
	}
}

// snapshotOnly adds to s what snapshots keep below the live inode n and
// the live tree no longer has: the deleted inodes that the children diffs
// of n's subtree hold (and everything below them), in the snapshot
// figures and the totals; and, in the space consumed only, what live files
// take beyond their current state (blocks only saved versions hold, at
// the largest replication), as HDFS's summary counts a live file's space
// over all its snapshot diffs.
func (t *Tree) snapshotOnly(n *inode, s *Summary) {
	ss := t.snap
	orphan := func(c *inode) bool {
		h := ss.hist[c]
		return h != nil && h.orphan
	}
	seen := map[*inode]bool{}
	blocksOf := func(f *inode) {
		h := ss.hist[f]
		if h == nil {
			return
		}
		var counted []op.Block
		repl := f.repl()
		for _, v := range h.vs {
			repl = max(repl, v.attrs.repl())
			for _, b := range v.attrs.blocks() {
				if hasBlock(counted, b.ID) {
					continue
				}
				counted = append(counted, b)
				s.SnapshotLength += b.NumBytes
				s.SnapshotSpaceConsumed += b.NumBytes * int64(repl)
			}
		}
	}
	var kept func(c *inode)
	kept = func(c *inode) {
		if seen[c] || !orphan(c) {
			return
		}
		seen[c] = true
		if !c.isDir() {
			s.SnapshotFileCount++
			blocksOf(c)
			return
		}
		s.SnapshotDirectoryCount++
		for x := range c.dir().children.all() {
			kept(x)
		}
		diffsOf(ss, c, kept)
	}
	var live func(x *inode)
	var liveExtra int64
	live = func(x *inode) {
		if !x.isDir() {
			if h := ss.hist[x]; h != nil {
				var u usage
				t.heldFileSpace(x, h, t.root, &u)
				liveExtra += u.ds
			}
			return
		}
		diffsOf(ss, x, kept)
		for c := range x.dir().children.all() {
			live(c)
		}
	}
	live(n)
	s.Length += s.SnapshotLength
	s.FileCount += s.SnapshotFileCount
	s.DirectoryCount += s.SnapshotDirectoryCount
	s.SpaceConsumed += s.SnapshotSpaceConsumed + liveExtra
}

// diffsOf calls fn for every child that a version of directory d records
// as removed.
func diffsOf(ss *snapState, d *inode, fn func(*inode)) {
	h := ss.hist[d]
	if h == nil {
		return
	}
	for _, v := range h.vs {
		for c := range v.deleted {
			fn(c)
		}
	}
}

// snapRead resolves p for a read of extended attributes or an ACL when it
// goes through a ".snapshot" directory (ok is false when it does not),
// checking traverse and then access a (if not 0) on the node as the
// snapshot holds it.
func (t *Tree) snapRead(c Caller, p string, a Access) (v *sview, ok bool, err error) {
	if !t.maybeSnapPath(p) {
		return nil, false, nil
	}
	v, ok, err = t.resolveSnap(c, p)
	if !ok || err != nil || a == 0 || !t.checking(c) {
		return v, ok, err
	}
	if v.s == nil {
		if !t.hasAccess(c, v.dir, a) {
			return nil, true, t.denied(c, v.dir, v.path, a)
		}
		return v, true, nil
	}
	if !t.viewAccess(c, v.node, v.s.id, a) {
		return nil, true, t.denied(c, v.node.at, v.path, a)
	}
	return v, true, nil
}

// sviewFeats returns the node at v with its extended attributes and ACL
// in v's snapshot; DIR/.snapshot itself answers for DIR as it is now.
func (t *Tree) sviewFeats(v *sview) (viewNode, []op.XAttr, *aclFeature) {
	if v.s == nil {
		n := viewNode{obj: v.dir, at: v.dir}
		if f := t.featuresOf(v.dir); f != nil {
			return n, f.xattrs, f.acl
		}
		return n, nil, nil
	}
	xs, acl := t.featsAt(v.node.obj, v.s.id)
	return v.node, xs, acl
}

// notThroughSnapshot refuses a read that does not look into snapshots yet
// (storage policies and quotas of a snapshot's inodes are not kept per
// snapshot) on a path through a ".snapshot" directory, with an
// error that says so; nil for any other path.
func (t *Tree) notThroughSnapshot(c Caller, path, method string) error {
	if !t.maybeSnapPath(path) {
		return nil
	}
	if _, ok, err := t.resolveSnap(c, path); ok {
		if err != nil {
			return err
		}
		return newErr(method+" of a path in a snapshot is not supported yet: "+path, ErrIO)
	}
	return nil
}
