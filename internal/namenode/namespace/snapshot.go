package namespace

import (
	"fmt"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// Snapshottable directories and the snapshot calls' plans. A directory is
// made snapshottable by a superuser (allowSnapshot) and stops being one
// with disallowSnapshot, refused while it has snapshots. Nested
// snapshottable directories are refused, as HDFS does by default
// (dfs.namenode.snapshot.allow.nested false). Its owner (or a superuser)
// creates, renames and deletes its snapshots.

// DefaultSnapshotQuota is the snapshot limit HDFS reports for a
// snapshottable directory (SNAPSHOT_QUOTA_DEFAULT), and the default of
// dfs.namenode.snapshot.max.limit.
const DefaultSnapshotQuota = 65536

// dotSnapshot is the reserved name through which snapshots are read.
const dotSnapshot = ".snapshot"

// maxSnapshotID is the largest snapshot id (HDFS keeps ids in 24 bits).
const maxSnapshotID = 1<<24 - 1

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
	if t.snap != nil && t.snap.dirs[w.last()] != nil {
		return nil, newErr("The directory "+w.path+" has snapshot(s). Please redo the operation after removing all the snapshots.", ErrSnapshot)
	}
	return []op.Op{&op.DisallowSnapshot{Path: w.path}}, nil
}

// snapshotRootFor resolves the directory of a snapshot call: it must be a
// snapshottable directory owned by the caller (or the caller a superuser).
func (t *Tree) snapshotRootFor(c Caller, p string) (*walk, *snapDir, error) {
	w, err := t.resolve(p, false)
	if err != nil {
		return nil, nil, err
	}
	if err := t.traverse(c, w, false); err != nil {
		return nil, nil, err
	}
	d := w.last()
	if d == nil {
		return nil, nil, notFound("Directory does not exist: %s", w.path)
	}
	if err := t.checkPerm(c, w, permCheck{owner: true}); err != nil {
		return nil, nil, err
	}
	if !d.isDir() || !t.isSnapshottable(d) {
		return nil, nil, newErr("Directory is not a snapshottable directory: "+w.path, ErrSnapshot)
	}
	var sd *snapDir
	if t.snap != nil {
		sd = t.snap.dirs[d]
	}
	return w, sd, nil
}

// checkSnapshotName applies HDFS's rules for a snapshot name.
func (t *Tree) checkSnapshotName(name, dir string) error {
	if strings.Contains(name, "/") {
		return newErr(`Snapshot name cannot contain "/"`, ErrIllegalArgument)
	}
	if name == "" {
		return newErr("Snapshot name cannot be empty", ErrIllegalArgument)
	}
	if name == dotSnapshot {
		return newErr(`".snapshot" is a reserved name.`, ErrIllegalArgument)
	}
	if m := t.cfg.MaxComponentLength; m > 0 && len(name) > m {
		return newErr(fmt.Sprintf("The maximum path component name limit of %s in directory %s is exceeded: limit=%d length=%d",
			name, dir, m, len(name)), ErrComponentTooLong)
	}
	return nil
}

// DefaultSnapshotName is the name HDFS gives a snapshot created without
// one: "s" and the time as yyyyMMdd-HHmmss.SSS (in UTC here).
func DefaultSnapshotName(ms int64) string {
	days, rem := ms/86400000, ms%86400000
	if rem < 0 {
		days--
		rem += 86400000
	}
	y, m, d := civil(days)
	return fmt.Sprintf("s%04d%02d%02d-%02d%02d%02d.%03d", y, m, d, rem/3600000, rem/60000%60, rem/1000%60, rem%1000)
}

// civil converts days since 1970-01-01 to a proleptic Gregorian date.
func civil(z int64) (y, m, d int64) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// SnapshotPath is the path of snapshot name of directory dir.
func SnapshotPath(dir, name string) string {
	return joinPath(dir, dotSnapshot) + "/" + name
}

// PlanCreateSnapshot plans createSnapshot of dir; an empty name takes the
// default name for now. maxLimit is dfs.namenode.snapshot.max.limit (0:
// the default). It returns the snapshot's path.
func (t *Tree) PlanCreateSnapshot(c Caller, dir, name string, maxLimit int, now int64) (string, []op.Op, error) {
	w, sd, err := t.snapshotRootFor(c, dir)
	if err != nil {
		return "", nil, err
	}
	if name == "" {
		name = DefaultSnapshotName(now)
	}
	if err := t.checkSnapshotName(name, w.path); err != nil {
		return "", nil, err
	}
	if maxLimit <= 0 {
		maxLimit = DefaultSnapshotQuota
	}
	if sd != nil {
		n := len(sd.snaps)
		if n+1 > maxLimit {
			return "", nil, newErr(fmt.Sprintf("Failed to add snapshot: there are already %d snapshot(s) and the max snapshot limit is %d", n, maxLimit), ErrSnapshot)
		}
		if n+1 > DefaultSnapshotQuota {
			return "", nil, newErr(fmt.Sprintf("Failed to add snapshot: there are already %d snapshot(s) and the snapshot quota is %d", n, DefaultSnapshotQuota), ErrSnapshot)
		}
		if _, s := sd.byName(name); s != nil {
			return "", nil, newErr(`Failed to add snapshot: there is already a snapshot with the same name "`+name+`".`, ErrSnapshot)
		}
	}
	if t.snap != nil && t.snap.counter >= maxSnapshotID {
		return "", nil, newErr("Failed to create the snapshot. The FileSystem has run out of snapshot IDs and ID rollover is not supported.", ErrSnapshot)
	}
	return SnapshotPath(w.path, name), []op.Op{&op.CreateSnapshot{Root: w.path, Name: name, Mtime: now}}, nil
}

// PlanDeleteSnapshot plans deleteSnapshot.
func (t *Tree) PlanDeleteSnapshot(c Caller, dir, name string, now int64) ([]op.Op, error) {
	w, sd, err := t.snapshotRootFor(c, dir)
	if err != nil {
		return nil, err
	}
	if sd == nil {
		return nil, newErr("Cannot delete snapshot "+name+" from path "+w.path+": the snapshot does not exist.", ErrSnapshot)
	}
	if _, s := sd.byName(name); s == nil {
		return nil, newErr("Cannot delete snapshot "+name+" from path "+w.path+": the snapshot does not exist.", ErrSnapshot)
	}
	return []op.Op{&op.DeleteSnapshot{Root: w.path, Name: name, Mtime: now}}, nil
}

// PlanRenameSnapshot plans renameSnapshot (no ops when the names are equal).
func (t *Tree) PlanRenameSnapshot(c Caller, dir, oldName, newName string, now int64) ([]op.Op, error) {
	w, sd, err := t.snapshotRootFor(c, dir)
	if err != nil {
		return nil, err
	}
	if err := t.checkSnapshotName(newName, w.path); err != nil {
		return nil, err
	}
	var s *snapshot
	if sd != nil {
		_, s = sd.byName(oldName)
	}
	if s == nil {
		return nil, newErr("The snapshot "+oldName+" does not exist for directory "+w.path, ErrSnapshot)
	}
	if oldName == newName {
		return nil, nil
	}
	if _, x := sd.byName(newName); x != nil {
		return nil, newErr("The snapshot "+newName+" already exists for directory "+w.path, ErrSnapshot)
	}
	return []op.Op{&op.RenameSnapshot{Root: w.path, OldName: oldName, NewName: newName, Mtime: now}}, nil
}

// NumSnapshots counts the snapshots of directory path (0 when it has none).
func (t *Tree) NumSnapshots(path string) int {
	w := t.lookup(path)
	if w == nil || w.last() == nil || t.snap == nil {
		return 0
	}
	if sd := t.snap.dirs[w.last()]; sd != nil {
		return len(sd.snaps)
	}
	return 0
}

// SnapshotCount counts the existing snapshots.
func (t *Tree) SnapshotCount() int {
	if t.snap == nil {
		return 0
	}
	return len(t.snap.ids)
}

// NumSnapshotVersions counts the saved inode versions (the memory that
// snapshots cost beyond the live tree).
func (t *Tree) NumSnapshotVersions() int {
	if t.snap == nil {
		return 0
	}
	n := 0
	for _, h := range t.snap.hist {
		n += len(h.vs)
	}
	return n
}

// checkDeletable refuses removing the subtree at n (path p) when it holds a
// directory with snapshots, as HDFS does.
func (t *Tree) checkDeletable(n *inode, p string) error {
	if q := t.snapshotsBelow(n); q != "" {
		return newErr("The directory "+p+" cannot be deleted since "+q+" is snapshottable and already has snapshots", ErrSnapshot)
	}
	return nil
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
