package namespace

import "math"

// Snapshot diff reports (getSnapshotDiffReport): what changed below a
// snapshottable directory between two snapshots, or a snapshot and the
// live tree. Both sides are views of the same inode objects, so an inode
// is matched across them by identity: one present on both sides under
// different names or parents was renamed.

// Diff entry types, as Hadoop's DiffType labels them.
const (
	DiffModify = 'M'
	DiffCreate = '+'
	DiffDelete = '-'
	DiffRename = 'R'
)

// DiffEntry is one line of a diff report; paths are relative to the
// snapshottable directory ("" for the directory itself).
type DiffEntry struct {
	Type   byte
	Source string
	Target string // renames only
}

// currentID selects the live tree in the view functions.
const currentID = math.MaxInt32

// diffSide is one side of a diff: every inode object of the view with its
// attributes and relative path.
type diffSide struct {
	id   int32
	at   map[*inode]*inode
	path map[*inode]string
	kids map[*inode][]viewNode
}

func (t *Tree) diffSide(root *inode, id int32) *diffSide {
	s := &diffSide{id: id, at: map[*inode]*inode{}, path: map[*inode]string{}, kids: map[*inode][]viewNode{}}
	var walkSide func(n viewNode, rel string)
	walkSide = func(n viewNode, rel string) {
		s.at[n.obj] = n.at
		s.path[n.obj] = rel
		if !n.obj.isDir() {
			return
		}
		kids := t.childrenAt(n.obj, id)
		s.kids[n.obj] = kids
		for _, c := range kids {
			walkSide(c, joinRel(rel, c.at.name))
		}
	}
	walkSide(viewNode{obj: root, at: t.attrsAt(root, id)}, "")
	return s
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// sameAttrs reports whether two states of an inode look alike (the name
// aside: a new name is a rename).
func sameAttrs(a, b *inode) bool {
	if a == b {
		return true
	}
	if a.mode != b.mode || a.owner != b.owner || a.mtime != b.mtime || a.atime != b.atime {
		return false
	}
	if a.isDir() {
		return true
	}
	if a.repl() != b.repl() || a.pref() != b.pref() || len(a.blocks()) != len(b.blocks()) {
		return false
	}
	for i := range a.blocks() {
		if a.blocks()[i].ID != b.blocks()[i].ID || a.blocks()[i].NumBytes != b.blocks()[i].NumBytes {
			return false
		}
	}
	return true
}

// SnapshotDiff reports the changes below snapshottable directory dir from
// snapshot from to snapshot to; an empty name is the live tree. The caller
// needs READ and EXECUTE on dir unless it owns it or is a superuser.
func (t *Tree) SnapshotDiff(c Caller, dir, from, to string) (string, []DiffEntry, error) {
	w, err := t.resolveExisting(c, dir, "Directory does not exist: %s")
	if err != nil {
		return "", nil, err
	}
	d := w.last()
	if !d.isDir() || !t.isSnapshottable(d) {
		return "", nil, newErr("Directory is not a snapshottable directory: "+w.path, ErrSnapshot)
	}
	if t.checking(c) && c.User != t.userOf(d) && !t.hasAccess(c, d, Read|Execute) {
		return "", nil, t.denied(c, d, w.path, Read|Execute)
	}
	id := func(name string) (int32, error) {
		if name == "" {
			return currentID, nil
		}
		if t.snap != nil {
			if sd := t.snap.dirs[d]; sd != nil {
				if _, s := sd.byName(name); s != nil {
					return s.id, nil
				}
			}
		}
		return 0, newErr("Cannot find the snapshot of directory "+w.path+" with name "+name, ErrSnapshot)
	}
	fromID, err := id(from)
	if err != nil {
		return "", nil, err
	}
	toID, err := id(to)
	if err != nil {
		return "", nil, err
	}
	if from == to {
		return w.path, nil, nil
	}
	a, b := t.diffSide(d, fromID), t.diffSide(d, toID)
	var out []DiffEntry
	var visit func(n *inode)
	visit = func(n *inode) {
		ap := a.path[n]
		if !n.isDir() {
			if !sameAttrs(a.at[n], b.at[n]) {
				out = append(out, DiffEntry{Type: DiffModify, Source: ap})
			}
			return
		}
		ak, bk := a.kids[n], b.kids[n]
		inA := make(map[*inode]bool, len(ak))
		for _, c := range ak {
			inA[c.obj] = true
		}
		inB := make(map[*inode]bool, len(bk))
		for _, c := range bk {
			inB[c.obj] = true
		}
		var lines []DiffEntry
		for _, c := range bk {
			if inA[c.obj] {
				continue
			}
			if _, moved := a.path[c.obj]; moved {
				continue // the rename is reported where it came from
			}
			lines = append(lines, DiffEntry{Type: DiffCreate, Source: joinRel(ap, c.at.name)})
		}
		for _, c := range ak {
			src := joinRel(ap, c.at.name)
			if tp, there := b.path[c.obj]; there {
				if !inB[c.obj] || b.at[c.obj].name != c.at.name {
					lines = append(lines, DiffEntry{Type: DiffRename, Source: src, Target: tp})
				}
				continue
			}
			lines = append(lines, DiffEntry{Type: DiffDelete, Source: src})
		}
		changed := !sameAttrs(a.at[n], b.at[n])
		if n == d && changed {
			// Taking a snapshot sets the root's mtime; HDFS records no
			// change for that, so only the other attributes count here.
			x, y := *a.at[n], *b.at[n]
			x.mtime = y.mtime
			changed = !sameAttrs(&x, &y)
		}
		if len(lines) > 0 || changed {
			out = append(out, DiffEntry{Type: DiffModify, Source: ap})
		}
		out = append(out, lines...)
		for _, c := range ak {
			if _, there := b.path[c.obj]; there {
				visit(c.obj)
			}
		}
	}
	visit(d)
	return w.path, out, nil
}
