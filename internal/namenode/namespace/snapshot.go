package namespace

import (
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// Snapshottable directories. A directory is made snapshottable by a
// superuser (allowSnapshot) and stops being one with disallowSnapshot;
// taking snapshots is not implemented yet, so a snapshottable directory
// has none. Nested snapshottable directories are refused, as HDFS does by
// default (dfs.namenode.snapshot.allow.nested false).

// DefaultSnapshotQuota is the snapshot limit HDFS reports for a
// snapshottable directory (SNAPSHOT_QUOTA_DEFAULT).
const DefaultSnapshotQuota = 65536

func (t *Tree) applySnapshottable(p string, on bool) error {
	_, n, err := t.existing(p)
	if err != nil {
		return err
	}
	if !n.isDir() {
		return corruptf("%s is not a directory", p)
	}
	if !on && t.featuresOf(n) == nil {
		return nil
	}
	t.mutFeatures(n).snapshottable = on
	t.settle(n)
	return nil
}

func (t *Tree) isSnapshottable(n *inode) bool {
	f := t.featuresOf(n)
	return f != nil && f.snapshottable
}

// snapshotDir resolves the directory of allowSnapshot/disallowSnapshot
// (superusers only).
func (t *Tree) snapshotDir(c Caller, p string) (*walk, error) {
	if err := t.superCheck(c); err != nil {
		return nil, err
	}
	w, err := t.resolveExisting(c, p, "Directory does not exist: %s")
	if err != nil {
		return nil, err
	}
	if !w.last().isDir() {
		return nil, newErr("`"+w.path+"': Is not a directory", ErrNotDir)
	}
	return w, nil
}

// firstSnapshottableBelow returns the path of a snapshottable directory
// strictly below d, or "".
func (t *Tree) firstSnapshottableBelow(d *inode, path string) string {
	for ch := range d.dir().children.all() {
		if !ch.isDir() {
			continue
		}
		p := joinPath(path, ch.name)
		if t.isSnapshottable(ch) {
			return p
		}
		if q := t.firstSnapshottableBelow(ch, p); q != "" {
			return q
		}
	}
	return ""
}

// PlanAllowSnapshot plans allowSnapshot.
func (t *Tree) PlanAllowSnapshot(c Caller, p string) ([]op.Op, error) {
	w, err := t.snapshotDir(c, p)
	if err != nil {
		return nil, err
	}
	if !t.isSnapshottable(w.last()) && len(t.feats) > 0 {
		for i := len(w.nodes) - 2; i >= 0; i-- {
			if t.isSnapshottable(w.nodes[i]) {
				return nil, newErr("Nested snapshottable directories not allowed: path="+w.path+", the ancestor "+w.prefix(i)+" is already a snapshottable directory.", ErrSnapshot)
			}
		}
		if q := t.firstSnapshottableBelow(w.last(), w.path); q != "" {
			return nil, newErr("Nested snapshottable directories not allowed: path="+w.path+", the subdirectory "+q+" is already a snapshottable directory.", ErrSnapshot)
		}
	}
	return []op.Op{&op.AllowSnapshot{Path: w.path}}, nil
}

// PlanDisallowSnapshot plans disallowSnapshot.
func (t *Tree) PlanDisallowSnapshot(c Caller, p string) ([]op.Op, error) {
	w, err := t.snapshotDir(c, p)
	if err != nil {
		return nil, err
	}
	if !t.isSnapshottable(w.last()) {
		return nil, newErr("Directory is not a snapshottable directory: "+w.path, ErrSnapshot)
	}
	return []op.Op{&op.DisallowSnapshot{Path: w.path}}, nil
}

// SnapshottableDir is one entry of getSnapshottableDirListing.
type SnapshottableDir struct {
	Path string
	Info FileInfo
}

// SnapshottableDirs lists the snapshottable directories, in path order:
// all of them for a superuser, the caller's own for anyone else.
func (t *Tree) SnapshottableDirs(c Caller) []SnapshottableDir {
	var out []SnapshottableDir
	if len(t.feats) == 0 {
		return nil
	}
	super := t.isSuper(c)
	var walk func(n *inode, p string)
	walk = func(n *inode, p string) {
		if t.isSnapshottable(n) && (super || t.userOf(n) == c.User) {
			out = append(out, SnapshottableDir{Path: p, Info: t.info(n)})
		}
		for ch := range n.dir().children.all() {
			if ch.isDir() {
				walk(ch, joinPath(p, ch.name))
			}
		}
	}
	walk(t.root, "/")
	return out
}
