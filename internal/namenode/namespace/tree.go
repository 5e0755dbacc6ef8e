package namespace

import (
	"fmt"
	"math"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// Fixed identifiers, as Hadoop numbers them.
const (
	// RootInodeID is the inode id of "/" (Hadoop's INodeId.ROOT_INODE_ID; ids
	// up to 16384 are reserved).
	RootInodeID uint64 = 16385
	// FirstGenStamp is the generation stamp counter of a new namespace
	// (GenerationStamp.LAST_RESERVED_STAMP); the first stamp handed out is 1001.
	FirstGenStamp int64 = 1000
	// FirstBlockID is the block id counter of a new namespace
	// (SequentialBlockIdGenerator.LAST_RESERVED_BLOCK_ID = 2^30); the first
	// block id handed out is 2^30+1.
	FirstBlockID int64 = 1 << 30
)

// Config holds the namespace's limits and permission settings.
type Config struct {
	// SuperUser owns "/" and bypasses permission checks (the NameNode process owner).
	SuperUser string
	// SuperGroup: members bypass permission checks (dfs.permissions.superusergroup, "supergroup").
	SuperGroup string
	// PermissionsEnabled turns permission checking on (dfs.permissions.enabled, true).
	PermissionsEnabled bool
	// MaxComponentLength limits a path component's length in bytes
	// (dfs.namenode.fs-limits.max-component-length, 255); 0 = no limit.
	MaxComponentLength int
	// MaxDirItems limits the children of one directory
	// (dfs.namenode.fs-limits.max-directory-items, 1048576); 0 = no limit.
	MaxDirItems int
	// MaxBlocksPerFile limits the blocks of one file
	// (dfs.namenode.fs-limits.max-blocks-per-file, 10000); 0 = no limit.
	// It keeps every record listing a file's blocks (OP_CLOSE,
	// OP_UPDATE_BLOCKS) under the edit log's record limit.
	MaxBlocksPerFile int
	// AccessTimePrecision in ms (dfs.namenode.accesstime.precision, 3600000);
	// 0 disables access times.
	AccessTimePrecision int64

	// XAttrsEnabled allows extended attributes (dfs.namenode.xattrs.enabled, true).
	XAttrsEnabled bool
	// MaxXAttrsPerInode limits the user. and trusted. attributes of one
	// inode (dfs.namenode.fs-limits.max-xattrs-per-inode, 32); 0 = no limit.
	MaxXAttrsPerInode int
	// MaxXAttrSize limits an attribute's name and value together, in bytes
	// (dfs.namenode.fs-limits.max-xattr-size, 16384, at most 32768); 0 = no limit.
	MaxXAttrSize int
	// ACLsEnabled allows ACLs (dfs.namenode.acls.enabled, true).
	ACLsEnabled bool
	// StoragePolicyEnabled allows setting storage policies
	// (dfs.storage.policy.enabled, true).
	StoragePolicyEnabled bool
	// QuotaByStorageTypeEnabled allows setting quotas by storage type
	// (dfs.quota.by.storage.type.enabled, true).
	QuotaByStorageTypeEnabled bool
}

// MaxBlocksPerFileLimit is the largest dfs.namenode.fs-limits.max-blocks-per-file
// accepted: a record listing that many blocks (at most 30 bytes each) and a
// path still fits in one edit-log record.
const MaxBlocksPerFileLimit = 32768

// MaxXAttrSizeLimit is HDFS's hard limit on dfs.namenode.fs-limits.max-xattr-size.
const MaxXAttrSizeLimit = 32768

// DefaultConfig returns Hadoop's defaults with the given superuser.
func DefaultConfig(superUser string) Config {
	return Config{
		SuperUser:            superUser,
		SuperGroup:           "supergroup",
		PermissionsEnabled:   true,
		MaxComponentLength:   255,
		MaxDirItems:          1048576,
		MaxBlocksPerFile:     10000,
		AccessTimePrecision:  3600000,
		XAttrsEnabled:        true,
		MaxXAttrsPerInode:    32,
		MaxXAttrSize:         16384,
		ACLsEnabled:          true,
		StoragePolicyEnabled: true,

		QuotaByStorageTypeEnabled: true,
	}
}

// Validate rejects settings HDFS would refuse, naming the configuration key.
func (c Config) Validate() error {
	switch {
	case c.SuperUser == "":
		return fmt.Errorf("%w: the superuser name is empty", ErrIllegalArgument)
	case c.MaxComponentLength < 0:
		return fmt.Errorf("%w: dfs.namenode.fs-limits.max-component-length = %d is negative", ErrIllegalArgument, c.MaxComponentLength)
	case c.MaxDirItems < 0 || c.MaxDirItems > 6400000:
		return fmt.Errorf("%w: dfs.namenode.fs-limits.max-directory-items = %d is outside [1, 6400000]", ErrIllegalArgument, c.MaxDirItems)
	case c.MaxBlocksPerFile < 0 || c.MaxBlocksPerFile > MaxBlocksPerFileLimit:
		return fmt.Errorf("%w: dfs.namenode.fs-limits.max-blocks-per-file = %d is outside [1, %d]", ErrIllegalArgument, c.MaxBlocksPerFile, MaxBlocksPerFileLimit)
	case c.MaxXAttrsPerInode < 0:
		return fmt.Errorf("%w: dfs.namenode.fs-limits.max-xattrs-per-inode = %d is negative", ErrIllegalArgument, c.MaxXAttrsPerInode)
	case c.MaxXAttrSize < 0 || c.MaxXAttrSize > MaxXAttrSizeLimit:
		return fmt.Errorf("%w: dfs.namenode.fs-limits.max-xattr-size = %d is outside [0, %d]", ErrIllegalArgument, c.MaxXAttrSize, MaxXAttrSizeLimit)
	case c.AccessTimePrecision < 0:
		return fmt.Errorf("%w: dfs.namenode.accesstime.precision = %d is negative", ErrIllegalArgument, c.AccessTimePrecision)
	}
	return nil
}

// Caller is the user on whose behalf a plan or read is made.
type Caller struct {
	User   string
	Groups []string
	Super  bool // set by the caller for users it knows to be superusers
}

type dirData struct {
	parent   *inode   // nil for the root
	children children // sorted by name, byte order (children.go)
	quota    *quotaData
	// sub is the live subtree's usage, the directory itself included:
	// kept by the apply path for every directory (addSubtree), so that
	// quota checks, a rename and a recursive delete need no walk of it.
	sub subUsage
}

// subUsage counts a subtree: inodes (ns), space (ds: bytes times
// replication, as quotas count it), of the inodes, directories, and the
// files' bytes (length, as getContentSummary reports it).
type subUsage struct {
	ns, ds, dirs, length int64
}

type quotaData struct {
	ns, ds int64 // -1 = unset; the usage is the directory's sub
	// types are the quotas by storage type, sorted by type (typequota.go).
	types []typeQuota
	// tsUsed is the subtree's space by storage type, kept up to date by
	// the apply path once some directory has a quota by storage type
	// (Tree.hasTypeQuotas), rebuilt at image load (typequota.go).
	tsUsed typeSpaces
}

type ucData struct {
	client  string
	machine string
	parent  *inode // the directory holding the file
	// truncSrc is the id of the block a copy-on-truncate copies into the
	// file's last block (0: none); the snapshot's version holds it.
	truncSrc int64
	// truncInPlace: the file is open because an in-place truncate cut its
	// last block (no snapshot holds it); block recovery cuts the replicas
	// to the block's length in the tree, however often it is retried.
	truncInPlace bool
}

type ownerPair struct{ user, group uint32 }

// Tree is the namespace: the inode tree and the id counters. It is not safe for
// concurrent use; the caller serialises all calls (the namesystem lock).
type Tree struct {
	cfg  Config
	root *inode
	// hasTypeQuotas: some directory has (or had) a quota by storage type,
	// so block allocation checks them (typequota.go).
	hasTypeQuotas bool

	lastInodeID uint64
	genStamp    int64
	lastBlockID int64
	numFiles    int64
	numDirs     int64

	strs     []string
	strIdx   map[string]uint32
	owners   []ownerPair
	ownerIdx map[ownerPair]uint32

	uc map[uint64]*inode // files under construction by inode id

	feats map[*inode]*features   // xattrs, ACLs, storage policies (features.go)
	acls  map[string]*aclFeature // every ACL in use, shared by the inodes that hold it
	snap  *snapState             // snapshots and the versions they keep (snapstate.go); nil when none

	dt delegation // delegation-token keys and tokens

	// detached are runs of inodes of removed subtrees not yet released,
	// detachedLeft their inode count (detach.go); detachMin overrides
	// the smallest subtree detached (tests).
	detached     [][]*inode
	detachedLeft int64
	detachMin    int64
}

// New returns a namespace holding only "/" (owned by cfg.SuperUser:cfg.SuperGroup,
// mode 0755, mtime 0).
func New(cfg Config) *Tree {
	t := newEmpty(cfg)
	t.root = &inode{
		id:    RootInodeID,
		mode:  0o755,
		owner: t.ownerID(cfg.SuperUser, cfg.SuperGroup),
	}
	t.root.setDir(&dirData{quota: &quotaData{ns: math.MaxInt64, ds: -1}, sub: subUsage{ns: 1, dirs: 1}})
	t.numDirs = 1
	return t
}

func newEmpty(cfg Config) *Tree {
	return &Tree{
		cfg:         cfg,
		lastInodeID: RootInodeID,
		genStamp:    FirstGenStamp,
		lastBlockID: FirstBlockID,
		strIdx:      make(map[string]uint32),
		ownerIdx:    make(map[ownerPair]uint32),
		uc:          make(map[uint64]*inode),
	}
}

// Config returns the configuration the tree was built with.
func (t *Tree) Config() Config { return t.cfg }

// LastInodeID is the highest inode id handed out.
func (t *Tree) LastInodeID() uint64 { return t.lastInodeID }

// NextInodeID is the id the next created inode gets (no allocation happens).
func (t *Tree) NextInodeID() uint64 { return t.lastInodeID + 1 }

// GenStamp is the newest generation stamp handed out.
func (t *Tree) GenStamp() int64 { return t.genStamp }

// NextGenStamp is the stamp an op.SetGenstamp should record next.
func (t *Tree) NextGenStamp() int64 { return t.genStamp + 1 }

// LastBlockID is the newest block id handed out.
func (t *Tree) LastBlockID() int64 { return t.lastBlockID }

// NextBlockID is the id an op.AllocateBlockID should record next.
func (t *Tree) NextBlockID() int64 { return t.lastBlockID + 1 }

// NumInodes counts files and directories, the root included.
func (t *Tree) NumInodes() int64 { return t.numFiles + t.numDirs }

// NumFiles counts files.
func (t *Tree) NumFiles() int64 { return t.numFiles }

// NumDirs counts directories, the root included.
func (t *Tree) NumDirs() int64 { return t.numDirs }

// NumUnderConstruction counts files open for write.
func (t *Tree) NumUnderConstruction() int { return len(t.uc) }

// ---- interning ----

func (t *Tree) strID(s string) uint32 {
	if i, ok := t.strIdx[s]; ok {
		return i
	}
	i := uint32(len(t.strs))
	s = strings.Clone(s)
	t.strs = append(t.strs, s)
	t.strIdx[s] = i
	return i
}

func (t *Tree) ownerID(user, group string) uint32 {
	p := ownerPair{t.strID(user), t.strID(group)}
	if i, ok := t.ownerIdx[p]; ok {
		return i
	}
	i := uint32(len(t.owners))
	t.owners = append(t.owners, p)
	t.ownerIdx[p] = i
	return i
}

func (t *Tree) userOf(n *inode) string  { return t.strs[t.owners[n.owner].user] }
func (t *Tree) groupOf(n *inode) string { return t.strs[t.owners[n.owner].group] }

func (t *Tree) permOf(n *inode) op.Perm {
	return op.Perm{User: t.userOf(n), Group: t.groupOf(n), Mode: n.mode}
}

// ---- inode helpers ----

func (n *inode) child(name string) *inode {
	if n.dir() == nil {
		return nil
	}
	return n.dir().children.get(name)
}

func (d *dirData) insert(c *inode) { d.children.insert(c) }

func (d *dirData) remove(c *inode) { d.children.remove(c) }

// touch raises a directory's mtime to at least m (Hadoop's updateModificationTime).
func (n *inode) touch(m int64) {
	if m > n.mtime {
		n.mtime = m
	}
}

func (n *inode) length() int64 {
	var l int64
	for i := range n.blocks() {
		l += n.blocks()[i].NumBytes
	}
	return l
}

// space is the storage space the file counts against quotas: bytes ×
// replication, with the last block of a file under construction reserved at
// the preferred block size (as HDFS does while a block is being written).
func (n *inode) space() int64 {
	if n.isDir() {
		return 0
	}
	return spaceOf(n.blocks(), n.ucd() != nil, n.pref(), n.repl())
}

// spaceOf is the space of a file with these blocks, open for write (uc) or
// not, preferred block size and replication.
func spaceOf(blocks []op.Block, uc bool, pref int64, repl uint16) int64 {
	var l int64
	for i := range blocks {
		l += blocks[i].NumBytes
	}
	if uc && len(blocks) > 0 {
		if last := blocks[len(blocks)-1].NumBytes; pref > last {
			l += pref - last
		}
	}
	return l * int64(repl)
}

// subtreeUsage returns the usage of the live subtree at n.
func subtreeUsage(n *inode) subUsage {
	if d := n.dir(); d != nil {
		return d.sub
	}
	return subUsage{ns: 1, ds: n.space(), length: n.length()}
}

func (u subUsage) neg() subUsage { return subUsage{}.minus(u) }

func (u subUsage) plus(v subUsage) subUsage {
	return subUsage{ns: u.ns + v.ns, ds: u.ds + v.ds, dirs: u.dirs + v.dirs, length: u.length + v.length}
}

func (u subUsage) minus(v subUsage) subUsage {
	return subUsage{ns: u.ns - v.ns, ds: u.ds - v.ds, dirs: u.dirs - v.dirs, length: u.length - v.length}
}

// addSubtree adds u to the usage of every directory from d up to the root.
func addSubtree(d *inode, u subUsage) {
	if u == (subUsage{}) {
		return
	}
	for ; d != nil; d = d.dir().parent {
		d.dir().sub = d.dir().sub.plus(u)
	}
}

// dirPath returns the absolute path of directory d.
func dirPath(d *inode) string {
	if d.dir().parent == nil {
		return "/"
	}
	var parts []string
	for ; d.dir().parent != nil; d = d.dir().parent {
		parts = append(parts, d.name)
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(parts[i])
	}
	return b.String()
}

func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// ---- paths ----

// walk is a resolved path: the inodes along it (Hadoop's INodesInPath).
type walk struct {
	path  string   // normalized absolute path: "/" + comps joined by "/"
	comps []string // components below the root
	nodes []*inode // nodes[0] is the root; nodes[i] is comps[i-1] or nil
	// notDir is the index of a file found where a directory was needed
	// (it has components below it), or 0.
	notDir int
	// Room for the comps and nodes of a path up to walkInline components
	// deep, so that resolving one is a single allocation.
	compsBuf [walkInline]string
	nodesBuf [walkInline + 1]*inode
}

// walkInline is how many components a walk holds without allocating more.
const walkInline = 12

func (w *walk) last() *inode { return w.nodes[len(w.nodes)-1] }

func (w *walk) parent() *inode {
	if len(w.nodes) < 2 {
		return nil
	}
	return w.nodes[len(w.nodes)-2]
}

func (w *walk) isRoot() bool { return len(w.comps) == 0 }

func (w *walk) lastName() string {
	if len(w.comps) == 0 {
		return ""
	}
	return w.comps[len(w.comps)-1]
}

// prefix is the path of nodes[i].
func (w *walk) prefix(i int) string {
	if i == 0 {
		return "/"
	}
	// path is "/" + comps joined by "/", so a prefix is a slice of it: no
	// copy, and a deep path's prefixes (one per missing directory of a
	// mkdir -p) share its bytes instead of costing their lengths' sum.
	n := i // the slash before each component
	for _, c := range w.comps[:i] {
		n += len(c)
	}
	return w.path[:n]
}

func (w *walk) parentPath() string { return w.prefix(len(w.comps) - 1) }

// normalize checks that p is absolute and drops trailing slashes.
func normalize(p string) (string, error) {
	if p == "" || p[0] != '/' {
		return "", newErr("Invalid path name Absolute path required, but got '"+p+"'", ErrInvalidPath)
	}
	for len(p) > 1 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	return p, nil
}

// validName applies Hadoop's DFSUtil.isValidName to a normalized path: no
// empty, ".", ".." components and no ':' anywhere.
func validName(p string) bool {
	if p == "/" {
		return true
	}
	for _, c := range strings.Split(p[1:], "/") {
		if c == "" || c == "." || c == ".." || strings.IndexByte(c, ':') >= 0 {
			return false
		}
	}
	return true
}

// resolve walks path p. With create, p must be a valid name for new inodes.
func (t *Tree) resolve(p string, create bool) (*walk, error) {
	np, err := normalize(p)
	if err != nil {
		return nil, err
	}
	if create && !validName(np) {
		return nil, newErr("Invalid path name Invalid file name: "+p, ErrInvalidPath)
	}
	w := &walk{path: np}
	if np != "/" {
		w.comps = splitPath(np[1:], w.compsBuf[:0])
	}
	if len(w.comps) < len(w.nodesBuf) {
		w.nodes = w.nodesBuf[:len(w.comps)+1]
	} else {
		w.nodes = make([]*inode, len(w.comps)+1)
	}
	w.nodes[0] = t.root
	cur := t.root
	for i, c := range w.comps {
		if cur.dir() == nil {
			w.notDir = i
			break
		}
		if len(c) == len(dotSnapshot) && c == dotSnapshot && t.isSnapshottable(cur) {
			return nil, newErr("Modification on a read-only snapshot is disallowed", ErrSnapshotAccess)
		}
		cur = cur.child(c)
		if cur == nil {
			break
		}
		w.nodes[i+1] = cur
	}
	return w, nil
}

// splitPath appends the "/"-separated components of p to dst, as
// strings.Split(p, "/") returns them.
func splitPath(p string, dst []string) []string {
	for {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return append(dst, p)
		}
		dst = append(dst, p[:i])
		p = p[i+1:]
	}
}

// lookup resolves a path for Apply and internal use; nil when absent.
func (t *Tree) lookup(p string) *walk {
	w, err := t.resolve(p, false)
	if err != nil {
		return nil
	}
	return w
}
