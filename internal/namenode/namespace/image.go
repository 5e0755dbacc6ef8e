package namespace

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
)

// ErrImage: an image's inode records do not form a tree.
var ErrImage = errors.New("namespace: bad image")

// ImageHeader returns the header of an image of the current tree holding every
// edit up to txid. LayoutVersion and NamespaceID are the storage's to fill in.
func (t *Tree) ImageHeader(txid int64) fsimage.Header {
	return fsimage.Header{
		TxID:        txid,
		LastInodeID: t.lastInodeID,
		GenStamp:    t.genStamp,
		LastBlockID: t.lastBlockID,
		NumInodes:   uint64(t.NumInodes()),
		Delegation:  t.encodeDelegation(),
		Snapshots:   t.encodeSnapshots(),
	}
}

// Export calls fn for every inode, pre-order from the root: a parent before its
// children, children in name order. The *fsimage.Inode passed to fn (and its
// Name and Blocks slices) is reused between calls: fn must copy what it keeps.
// Blocks aliases the tree's storage and must not be modified. The first error
// from fn stops the walk and is returned.
func (t *Tree) Export(fn func(*fsimage.Inode) error) error {
	var rec fsimage.Inode
	var uc fsimage.UnderConstruction
	return t.export(t.root, 0, &rec, &uc, fn)
}

func (t *Tree) export(n *inode, parent uint64, rec *fsimage.Inode, uc *fsimage.UnderConstruction, fn func(*fsimage.Inode) error) error {
	*rec = fsimage.Inode{
		ID:       n.id,
		ParentID: parent,
		Name:     append(rec.Name[:0], n.name...),
		IsDir:    n.isDir(),
		Perm:     t.permOf(n),
		Mtime:    n.mtime,
		Atime:    n.atime,
		NsQuota:  -1,
		DsQuota:  -1,
	}
	if f := t.featuresOf(n); f != nil {
		rec.StoragePolicy = f.policy
		rec.XAttrs = f.xattrs
		if f.acl != nil {
			rec.ACL = f.acl.entries
		}
		rec.Snapshottable = f.snapshottable
	}
	if n.isDir() {
		rec.NsQuota, rec.DsQuota = quotaOf(n)
		rec.TypeQuotas = exportTypeQuotas(n)
	} else {
		rec.Replication = n.repl()
		rec.BlockSize = n.pref()
		rec.Blocks = n.blocks()
		if n.ucd() != nil {
			*uc = fsimage.UnderConstruction{ClientName: n.ucd().client, ClientMachine: n.ucd().machine, TruncateSource: n.ucd().truncSrc}
			if bl := n.blocks(); n.ucd().truncInPlace && len(bl) > 0 {
				// An in-place truncate names the last block itself.
				uc.TruncateSource = bl[len(bl)-1].ID
			}
			rec.UC = uc
		}
	}
	if err := fn(rec); err != nil {
		return err
	}
	if n.isDir() {
		for c := range n.dir().children.all() {
			if err := t.export(c, n.id, rec, uc, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// Builder rebuilds a tree from an image's records, one at a time, holding only
// the tree itself (and an index of directories by id).
type Builder struct {
	t    *Tree
	h    fsimage.Header
	dirs map[uint64]*inode
	n    uint64
	// The previous record's parent and owner: records come a directory's
	// children together and mostly with the same owner, so these spare a
	// map lookup (parent) and three (owner) per record.
	lastPar             *inode
	lastUser, lastGroup string
	lastOwner           uint32
}

// parent returns the directory with id, or nil.
func (b *Builder) parent(id uint64) *inode {
	if p := b.lastPar; p != nil && p.id == id {
		return p
	}
	p := b.dirs[id]
	if p != nil {
		b.lastPar = p
	}
	return p
}

// owner interns the owner pair of a record.
func (b *Builder) owner(user, group string) uint32 {
	if b.lastUser != "" && user == b.lastUser && group == b.lastGroup {
		return b.lastOwner
	}
	o := b.t.ownerID(user, group)
	u, g := b.t.owners[o].user, b.t.owners[o].group
	b.lastUser, b.lastGroup, b.lastOwner = b.t.strs[u], b.t.strs[g], o
	return o
}

// NewBuilder starts rebuilding a tree with the counters of h.
func NewBuilder(cfg Config, h fsimage.Header) *Builder {
	t := newEmpty(cfg)
	t.lastInodeID = h.LastInodeID
	t.genStamp = h.GenStamp
	t.lastBlockID = h.LastBlockID
	return &Builder{t: t, h: h, dirs: make(map[uint64]*inode)}
}

// Add attaches one record; it is copied, so the caller may reuse rec.
func (b *Builder) Add(rec *fsimage.Inode) error {
	t := b.t
	if b.n == 0 {
		if rec.ID != RootInodeID || rec.ParentID != 0 || !rec.IsDir || len(rec.Name) != 0 {
			return fmt.Errorf("%w: first record is not the root (id %d, parent %d)", ErrImage, rec.ID, rec.ParentID)
		}
		t.root = &inode{
			id: rec.ID, mtime: rec.Mtime, atime: rec.Atime, mode: rec.Perm.Mode & 0o7777,
			owner: t.ownerID(rec.Perm.User, rec.Perm.Group),
		}
		t.root.setDir(&dirData{quota: &quotaData{ns: rec.NsQuota, ds: rec.DsQuota}})
		t.numDirs = 1
		b.dirs[rec.ID] = t.root
		if err := t.importTypeQuotas(t.root, rec.TypeQuotas); err != nil {
			return err
		}
		t.addImageFeatures(t.root, rec)
		b.n++
		return nil
	}
	par := b.parent(rec.ParentID)
	if par == nil {
		return fmt.Errorf("%w: inode %d: parent %d is not a known directory", ErrImage, rec.ID, rec.ParentID)
	}
	name := string(rec.Name)
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/") {
		return fmt.Errorf("%w: inode %d: bad name %q", ErrImage, rec.ID, name)
	}
	if par.dir().children.get(name) != nil {
		return fmt.Errorf("%w: inode %d: duplicate name %q in directory %d", ErrImage, rec.ID, name, rec.ParentID)
	}
	if rec.ID == 0 || rec.ID > b.h.LastInodeID {
		return fmt.Errorf("%w: inode %d outside the allocated ids (last %d)", ErrImage, rec.ID, b.h.LastInodeID)
	}
	n := &inode{
		id: rec.ID, name: name, mtime: rec.Mtime, atime: rec.Atime, mode: rec.Perm.Mode & 0o7777,
		owner: b.owner(rec.Perm.User, rec.Perm.Group),
	}
	if rec.IsDir {
		if _, dup := b.dirs[rec.ID]; dup {
			return fmt.Errorf("%w: duplicate directory id %d", ErrImage, rec.ID)
		}
		n.setDir(&dirData{parent: par})
		if rec.NsQuota != -1 || rec.DsQuota != -1 {
			n.dir().quota = &quotaData{ns: rec.NsQuota, ds: rec.DsQuota}
		}
		if err := t.importTypeQuotas(n, rec.TypeQuotas); err != nil {
			return err
		}
		b.dirs[rec.ID] = n
		t.numDirs++
	} else {
		if rec.BlockSize < 0 || rec.BlockSize > MaxBlockSize {
			return fmt.Errorf("%w: inode %d: block size %d is outside [0, %d]", ErrImage, rec.ID, rec.BlockSize, int64(MaxBlockSize))
		}
		n.setRepl(rec.Replication)
		n.setPref(rec.BlockSize)
		n.setBlocks(cloneBlocks(rec.Blocks))
		if rec.UC != nil {
			if _, dup := t.uc[rec.ID]; dup {
				return fmt.Errorf("%w: duplicate file id %d", ErrImage, rec.ID)
			}
			u := &ucData{client: strings.Clone(rec.UC.ClientName), machine: strings.Clone(rec.UC.ClientMachine), parent: par}
			if src := rec.UC.TruncateSource; src != 0 {
				if len(rec.Blocks) == 0 {
					return fmt.Errorf("%w: inode %d: truncate source blk_%d in a file without blocks", ErrImage, rec.ID, src)
				}
				if rec.Blocks[len(rec.Blocks)-1].ID == src {
					u.truncInPlace = true // the last block is being cut in place
				} else {
					u.truncSrc = src // the last block copies src
				}
			}
			n.setUC(u)
			t.uc[rec.ID] = n
		}
		t.numFiles++
	}
	par.dir().insert(n)
	t.addImageFeatures(n, rec)
	b.n++
	return nil
}

// addImageFeatures gives n the features of its image record (copied).
func (t *Tree) addImageFeatures(n *inode, rec *fsimage.Inode) {
	if !rec.HasFeatures() && !rec.Snapshottable {
		return
	}
	f := t.mutFeatures(n)
	f.snapshottable = rec.Snapshottable && n.isDir()
	f.policy = rec.StoragePolicy
	for _, x := range rec.XAttrs {
		f.xattrs = append(f.xattrs, op.XAttr{NS: x.NS, Name: strings.Clone(x.Name), Value: cloneValue(x.Value)})
	}
	if len(rec.ACL) > 0 {
		f.acl = t.internACL(rec.ACL)
	}
}

// cloneValue copies an xattr value, keeping nil apart from empty.
func cloneValue(v []byte) []byte {
	if v == nil {
		return nil
	}
	return append([]byte{}, v...)
}

// Finish checks the record count against the header, computes quota usage and
// returns the tree.
func (b *Builder) Finish() (*Tree, error) {
	if b.n == 0 {
		return nil, fmt.Errorf("%w: no root", ErrImage)
	}
	if b.h.NumInodes != 0 && b.h.NumInodes != b.n {
		return nil, fmt.Errorf("%w: header says %d inodes, found %d", ErrImage, b.h.NumInodes, b.n)
	}
	fillUsage(b.t.root)
	if b.t.hasTypeQuotas {
		b.t.fillTypes(b.t.root, op.StoragePolicyUnspecified)
	}
	dt, err := decodeDelegation(b.h.Delegation)
	if err != nil {
		return nil, err
	}
	b.t.dt = dt
	if err := b.t.decodeSnapshots(b.h.Snapshots); err != nil {
		return nil, err
	}
	t := b.t
	b.t = nil
	return t, nil
}

// fillUsage sets the usage of every directory in one pass.
func fillUsage(n *inode) subUsage {
	d := n.dir()
	if d == nil {
		return subtreeUsage(n)
	}
	u := subUsage{ns: 1, dirs: 1}
	for c := range d.children.all() {
		u = u.plus(fillUsage(c))
	}
	d.sub = u
	return u
}

// NewFromImage rebuilds a tree from an image header and its records; next
// returns the records in order and (nil, io.EOF) or (nil, nil) after the last.
func NewFromImage(cfg Config, h fsimage.Header, next func() (*fsimage.Inode, error)) (*Tree, error) {
	b := NewBuilder(cfg, h)
	for {
		rec, err := next()
		if errors.Is(err, io.EOF) || (err == nil && rec == nil) {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := b.Add(rec); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
