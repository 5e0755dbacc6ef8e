package namespace

import (
	"bufio"
	"fmt"
	"io"
	"sort"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// FileInfo is what getFileInfo and getListing report about one inode.
type FileInfo struct {
	ID                uint64
	Name              []byte // local name; empty for "/"
	IsDir             bool
	Length            int64 // sum of the blocks' lengths; 0 for directories
	Perm              op.Perm
	Mtime             int64
	Atime             int64
	Replication       uint16 // 0 for directories
	BlockSize         int64  // 0 for directories
	ChildrenNum       int
	UnderConstruction bool
	ClientName        string
	ClientMachine     string
	// HasACL: the inode has an ACL (the "+" of ls, HdfsFileStatus's HAS_ACL flag).
	HasACL bool
	// StoragePolicy is the inode's effective storage policy id: its own or
	// its nearest ancestor's (op.StoragePolicyUnspecified: none).
	StoragePolicy uint8
	// Snapshottable: a directory that allows snapshots.
	Snapshottable bool
	// InSnapshot: the inode as a snapshot shows it (a .snapshot path); its
	// blocks' lengths are the snapshot's, which may be shorter than the
	// replicas' after an append.
	InSnapshot bool
}

func (t *Tree) info(n *inode) FileInfo {
	fi := FileInfo{
		ID:          n.id,
		Name:        []byte(n.name),
		IsDir:       n.isDir(),
		Perm:        t.permOf(n),
		Mtime:       n.mtime,
		Atime:       n.atime,
		Replication: n.repl(),
		BlockSize:   n.pref(),
	}
	if n.isDir() {
		fi.ChildrenNum = n.dir().children.len()
	} else {
		fi.Length = n.length()
	}
	if n.ucd() != nil {
		fi.UnderConstruction = true
		fi.ClientName = n.ucd().client
		fi.ClientMachine = n.ucd().machine
	}
	if len(t.feats) > 0 {
		if f := t.feats[n]; f != nil {
			fi.HasACL = f.acl != nil
			fi.StoragePolicy = f.policy
			fi.Snapshottable = f.snapshottable
		}
	}
	return fi
}

// Stat reports one inode (getFileInfo). Traverse permission is checked on the
// ancestors; a missing path is ErrNotFound.
func (t *Tree) Stat(c Caller, path string) (FileInfo, error) {
	if t.maybeSnapPath(path) {
		if v, ok, err := t.resolveSnap(c, path); ok {
			if err != nil {
				return FileInfo{}, err
			}
			return t.snapStat(v), nil
		}
	}
	w, err := t.resolveExisting(c, path, "File does not exist: %s")
	if err != nil {
		return FileInfo{}, err
	}
	fi := t.info(w.last())
	fi.StoragePolicy = t.policyAlong(w, len(w.nodes)-1)
	return fi, nil
}

// List reports up to limit children of a directory (getListing) whose names sort
// strictly after startAfter in byte order, and how many further children remain.
// It needs READ+EXECUTE on the directory. Listing a file reports that file alone.
// limit <= 0 means no limit.
func (t *Tree) List(c Caller, path string, startAfter []byte, limit int) ([]FileInfo, int, error) {
	if t.maybeSnapPath(path) {
		if v, ok, err := t.resolveSnap(c, path); ok {
			if err != nil {
				return nil, 0, err
			}
			return t.snapList(c, v, startAfter, limit)
		}
	}
	w, err := t.resolveExisting(c, path, "File does not exist: %s")
	if err != nil {
		return nil, 0, err
	}
	n := w.last()
	if !n.isDir() {
		fi := t.info(n)
		fi.StoragePolicy = t.policyAlong(w, len(w.nodes)-1)
		return []FileInfo{fi}, 0, nil
	}
	if err := t.checkPerm(c, w, permCheck{self: Read | Execute}); err != nil {
		return nil, 0, err
	}
	page, remaining := n.dir().children.page(string(startAfter), limit)
	out := make([]FileInfo, 0, len(page))
	inherited := t.policyAlong(w, len(w.nodes)-1)
	for _, x := range page {
		fi := t.info(x)
		if fi.StoragePolicy == op.StoragePolicyUnspecified {
			fi.StoragePolicy = inherited
		}
		out = append(out, fi)
	}
	return out, remaining, nil
}

// Summary is getContentSummary's answer. Quotas are -1 when unset.
type Summary struct {
	Length         int64
	FileCount      int64
	DirectoryCount int64 // the directory itself included
	Quota          int64
	SpaceConsumed  int64
	SpaceQuota     int64
	// What only snapshots below the path keep (inodes deleted since, and
	// blocks that files no longer hold), as HDFS reports it; the totals
	// above include it.
	SnapshotLength, SnapshotFileCount, SnapshotDirectoryCount, SnapshotSpaceConsumed int64
	// TypeQuotas are the quotas and usage by storage type, in
	// QuotaStorageTypes order; HasTypeQuotas is false (and TypeQuotas
	// zero) when the subtree has neither.
	TypeQuotas    TypeQuotaInfos
	HasTypeQuotas bool
}

func quotaOf(n *inode) (ns, ds int64) {
	if n.isDir() && n.dir().quota != nil {
		return n.dir().quota.ns, n.dir().quota.ds
	}
	return -1, -1
}

// ContentSummary reports the totals of a subtree; it needs READ+EXECUTE on every
// directory in it.
func (t *Tree) ContentSummary(c Caller, path string) (Summary, error) {
	if t.maybeSnapPath(path) {
		if v, ok, err := t.resolveSnap(c, path); ok {
			if err != nil {
				return Summary{}, err
			}
			return t.snapSummary(v), nil
		}
	}
	w, err := t.resolveExisting(c, path, "File does not exist: %s")
	if err != nil {
		return Summary{}, err
	}
	if err := t.checkPerm(c, w, permCheck{sub: Read | Execute}); err != nil {
		return Summary{}, err
	}
	n := w.last()
	var s Summary
	// The live part is kept by every directory: no walk (a caller who is
	// not a superuser had every directory checked above, as in HDFS).
	u := subtreeUsage(n)
	s.Length, s.FileCount, s.DirectoryCount, s.SpaceConsumed = u.length, u.ns-u.dirs, u.dirs, u.ds
	if t.snapActive() {
		t.snapshotOnly(n, &s)
	}
	s.Quota, s.SpaceQuota = quotaOf(n)
	s.TypeQuotas, s.HasTypeQuotas = t.typeInfos(w)
	return s, nil
}

// QuotaUsage is getQuotaUsage's answer. Quotas are -1 when unset.
type QuotaUsage struct {
	FileAndDirectoryCount int64
	Quota                 int64
	SpaceConsumed         int64
	SpaceQuota            int64
	// TypeQuotas, HasTypeQuotas: as in Summary.
	TypeQuotas    TypeQuotaInfos
	HasTypeQuotas bool
}

// QuotaUsage reports the inode count and space of a subtree with its quotas.
func (t *Tree) QuotaUsage(c Caller, path string) (QuotaUsage, error) {
	if err := t.notThroughSnapshot(c, path, "getQuotaUsage"); err != nil {
		return QuotaUsage{}, err
	}
	w, err := t.resolveExisting(c, path, "File does not exist: %s")
	if err != nil {
		return QuotaUsage{}, err
	}
	if err := t.checkPerm(c, w, permCheck{sub: Read | Execute}); err != nil {
		return QuotaUsage{}, err
	}
	n := w.last()
	var u QuotaUsage
	sub := subtreeUsage(n)
	u.FileAndDirectoryCount, u.SpaceConsumed = sub.ns, sub.ds
	// What only snapshots keep counts too, as in HDFS.
	if h := t.heldBelow(n); h.ns != 0 || h.ds != 0 {
		u.FileAndDirectoryCount += h.ns
		u.SpaceConsumed += h.ds
	}
	u.Quota, u.SpaceQuota = quotaOf(n)
	// The usage of a quota directory is kept, not summed; its usage by
	// storage type is kept once type quotas are in use, and reported then.
	if n.isDir() && n.dir().quota != nil && !t.hasTypeQuotas {
		return u, nil
	}
	u.TypeQuotas, u.HasTypeQuotas = t.typeInfos(w)
	return u, nil
}

// Blocks returns the block list of the file at path (no permission check; the
// slice must not be modified). A directory is ErrNotFile.
func (t *Tree) Blocks(path string) ([]op.Block, error) {
	w := t.lookup(path)
	if w == nil || w.last() == nil {
		return nil, notFound("File does not exist: %s", path)
	}
	if w.last().isDir() {
		return nil, newErr("Path is not a file: "+w.path, ErrNotFound, ErrNotFile)
	}
	return w.last().blocks(), nil
}

// FileByID finds a file under construction by inode id (only those are indexed;
// closed files are found by path). It returns the file's current path.
func (t *Tree) FileByID(id uint64) (path string, fi FileInfo, ok bool) {
	f, ok := t.uc[id]
	if !ok {
		return "", FileInfo{}, false
	}
	return joinPath(dirPath(f.ucd().parent), f.name), t.info(f), true
}

// UnderConstruction calls fn for every file open for write, in inode id order.
func (t *Tree) UnderConstruction(fn func(id uint64, path, client string)) {
	ids := make([]uint64, 0, len(t.uc))
	for id := range t.uc {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		f := t.uc[id]
		fn(id, joinPath(dirPath(f.ucd().parent), f.name), f.ucd().client)
	}
}

// Dump writes every inode and the counters as text, one line each, in a fixed
// order (pre-order, children by name), for tests that compare trees.
func (t *Tree) Dump(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "counters lastInodeID=%d genStamp=%d lastBlockID=%d files=%d dirs=%d uc=%d\n",
		t.lastInodeID, t.genStamp, t.lastBlockID, t.numFiles, t.numDirs, len(t.uc))
	t.dump(bw, t.root, "/")
	t.dumpSnapshots(bw)
	return bw.Flush()
}

func (t *Tree) dump(w *bufio.Writer, n *inode, path string) {
	if n.isDir() {
		fmt.Fprintf(w, "%s dir id=%d %s:%s:%04o mtime=%d atime=%d", path, n.id, t.userOf(n), t.groupOf(n), n.mode, n.mtime, n.atime)
		if q := n.dir().quota; q != nil {
			fmt.Fprintf(w, " quota=%d/%d used=%d/%d", q.ns, q.ds, n.dir().sub.ns, n.dir().sub.ds)
			for _, tq := range q.types {
				fmt.Fprintf(w, " %s=%d", StorageTypeName(tq.typ), tq.quota)
			}
			for typ, used := range q.tsUsed {
				if used != 0 && len(q.types) > 0 {
					fmt.Fprintf(w, " used%s=%d", StorageTypeName(uint8(typ)), used)
				}
			}
		}
		t.dumpFeatures(w, n)
		w.WriteByte('\n')
		for c := range n.dir().children.all() {
			t.dump(w, c, joinPath(path, c.name))
		}
		return
	}
	fmt.Fprintf(w, "%s file id=%d %s:%s:%04o mtime=%d atime=%d repl=%d bsize=%d blocks=[", path, n.id, t.userOf(n), t.groupOf(n), n.mode, n.mtime, n.atime, n.repl(), n.pref())
	for i, b := range n.blocks() {
		if i > 0 {
			w.WriteByte(' ')
		}
		fmt.Fprintf(w, "%d:%d:%d", b.ID, b.NumBytes, b.GenStamp)
	}
	w.WriteByte(']')
	if n.ucd() != nil {
		fmt.Fprintf(w, " uc=%s@%s", n.ucd().client, n.ucd().machine)
		if src := n.ucd().truncSrc; src != 0 {
			fmt.Fprintf(w, " copying=%d", src)
		}
		if n.ucd().truncInPlace {
			w.WriteString(" truncating")
		}
	}
	t.dumpFeatures(w, n)
	w.WriteByte('\n')
}

func (t *Tree) dumpFeatures(w *bufio.Writer, n *inode) {
	f := t.featuresOf(n)
	if f == nil {
		return
	}
	if f.policy != op.StoragePolicyUnspecified {
		fmt.Fprintf(w, " policy=%d", f.policy)
	}
	for _, x := range f.xattrs {
		fmt.Fprintf(w, " xattr=%s", XAttrName(x))
		if x.Value != nil {
			fmt.Fprintf(w, ":%q", x.Value)
		}
	}
	if f.acl != nil {
		fmt.Fprintf(w, " acl=%q", f.acl.key)
	}
	if f.snapshottable {
		w.WriteString(" snapshottable")
	}
}

// File returns, without permission checks, the file at path with its blocks
// (shared with the tree: do not modify), for the NameNode's apply path,
// which keeps the block map in step with the ops it applies. ok is false
// when path is missing or a directory.
func (t *Tree) File(path string) (fi FileInfo, blocks []op.Block, ok bool) {
	w := t.lookup(path)
	if w == nil {
		return FileInfo{}, nil, false
	}
	n := w.last()
	if n == nil || n.isDir() {
		return FileInfo{}, nil, false
	}
	return t.info(n), n.blocks(), true
}
