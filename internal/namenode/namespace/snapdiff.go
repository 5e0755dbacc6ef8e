package namespace

import (
	"fmt"
	"math"
)

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
	// For getSnapshotDiffReportListing: the inode id of the entry and of
	// the directory listing it (a modified directory lists itself), the
	// directory the renamed entry went to, and the relative path of the
	// listing directory.
	FileID, DirID, TargetDirID uint64
	Dir                        string
}

// currentID selects the live tree in the view functions.
const currentID = math.MaxInt32

// diffSide is one side of a diff: every inode object of the view with its
// attributes and relative path.
type diffSide struct {
	id     int32
	at     map[*inode]*inode
	path   map[*inode]string
	kids   map[*inode][]viewNode
	parent map[*inode]*inode
}

func (t *Tree) diffSide(root *inode, id int32) *diffSide {
	s := &diffSide{id: id, at: map[*inode]*inode{}, path: map[*inode]string{}, kids: map[*inode][]viewNode{}, parent: map[*inode]*inode{}}
	var walkSide func(n viewNode, rel string)
	walkSide = func(n viewNode, rel string) {
		s.at[n.obj] = n.at
		s.path[n.obj] = rel
		if _, done := s.kids[n.obj]; done || !n.obj.isDir() {
			return // a directory is expanded once (see sumAt)
		}
		kids := t.childrenAt(n.obj, id)
		s.kids[n.obj] = kids
		for _, c := range kids {
			s.parent[c.obj] = n.obj
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
	root, entries, _, err := t.snapshotDiff(c, dir, from, to)
	return root, entries, err
}

// DiffListing is one reply of getSnapshotDiffReportListing.
type DiffListing struct {
	Root    string
	Entries []DiffEntry
	// FromEarlier: the from side is the older one.
	FromEarlier bool
	// The cursor of the next reply: the directory of the last entry sent
	// and the position of the next one; "" and -1 after the last reply.
	LastPath  string
	LastIndex int32
}

// SnapshotDiffListing is SnapshotDiff a page at a time: at most limit
// entries from the cursor (startPath, index) a previous reply returned
// ("" and -1 for the first page), as getSnapshotDiffReportListing pages.
func (t *Tree) SnapshotDiffListing(c Caller, dir, from, to, startPath string, index int32, limit int) (DiffListing, error) {
	root, entries, earlier, err := t.snapshotDiff(c, dir, from, to)
	if err != nil {
		return DiffListing{}, err
	}
	out := DiffListing{Root: root, FromEarlier: earlier, LastIndex: -1}
	start := 0
	if index >= 0 {
		start = int(index)
		if start > len(entries) || (start > 0 && entries[start-1].Dir != startPath) {
			return DiffListing{}, newErr(fmt.Sprintf("The snapshot diff listing of %s from %s to %s changed: no entry %d after %q; start again",
				root, from, to, index, startPath), ErrSnapshot)
		}
	}
	end := min(len(entries), start+max(limit, 1))
	out.Entries = entries[start:end]
	if end < len(entries) {
		out.LastPath, out.LastIndex = entries[end-1].Dir, int32(end)
	}
	return out, nil
}

func (t *Tree) snapshotDiff(c Caller, dir, from, to string) (string, []DiffEntry, bool, error) {
	w, err := t.resolveExisting(c, dir, "Directory does not exist: %s")
	if err != nil {
		return "", nil, false, err
	}
	d := w.last()
	if !d.isDir() || !t.isSnapshottable(d) {
		return "", nil, false, newErr("Directory is not a snapshottable directory: "+w.path, ErrSnapshot)
	}
	if t.checking(c) && c.User != t.userOf(d) && !t.hasAccess(c, d, Read|Execute) {
		return "", nil, false, t.denied(c, d, w.path, Read|Execute)
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
		return "", nil, false, err
	}
	toID, err := id(to)
	if err != nil {
		return "", nil, false, err
	}
	earlier := fromID <= toID
	if from == to {
		return w.path, nil, earlier, nil
	}
	a, b := t.diffSide(d, fromID), t.diffSide(d, toID)
	var out []DiffEntry
	var visit func(n, par *inode)
	visit = func(n, par *inode) {
		ap := a.path[n]
		if !n.isDir() {
			if !sameAttrs(a.at[n], b.at[n]) {
				out = append(out, DiffEntry{Type: DiffModify, Source: ap, FileID: n.id, DirID: par.id, Dir: a.path[par]})
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
			lines = append(lines, DiffEntry{Type: DiffCreate, Source: joinRel(ap, c.at.name), FileID: c.obj.id, DirID: n.id, Dir: ap})
		}
		for _, c := range ak {
			src := joinRel(ap, c.at.name)
			if tp, there := b.path[c.obj]; there {
				if !inB[c.obj] || b.at[c.obj].name != c.at.name {
					lines = append(lines, DiffEntry{Type: DiffRename, Source: src, Target: tp, FileID: c.obj.id, DirID: n.id,
						TargetDirID: b.parent[c.obj].id, Dir: ap})
				}
				continue
			}
			lines = append(lines, DiffEntry{Type: DiffDelete, Source: src, FileID: c.obj.id, DirID: n.id, Dir: ap})
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
			out = append(out, DiffEntry{Type: DiffModify, Source: ap, FileID: n.id, DirID: n.id, Dir: ap})
		}
		out = append(out, lines...)
		for _, c := range ak {
			if _, there := b.path[c.obj]; there {
				visit(c.obj, n)
			}
		}
	}
	visit(d, nil)
	return w.path, out, earlier, nil
}
