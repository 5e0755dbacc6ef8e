package namespace

import (
	"slices"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// Effects reports what an applied op took out of the namespace, for the block
// manager (blocks to invalidate) and the lease manager (leases to drop).
type Effects struct {
	FreedBlocks []op.Block // blocks no file refers to any more
	RemovedUC   []uint64   // inode ids of deleted files that were open for write
	// File is the file an OP_ADD_BLOCK or OP_CLOSE wrote, as the op left
	// it, so that the caller need not resolve its path again.
	File FileEffect
}

// FileEffect names a file an op wrote; OK is false for ops that set none.
type FileEffect struct {
	ID          uint64
	Replication uint16
	Blocks      []op.Block // the file's block list: read only
	OK          bool
}

func (e *Effects) setFile(f *inode) {
	if e != nil {
		e.File = FileEffect{ID: f.id, Replication: f.repl(), Blocks: f.blocks(), OK: true}
	}
}

// Apply applies one op to the tree. It is the only way the tree changes: the
// live path, startup replay, the standby's tailer and checkpoint merges all call
// it. Permission decisions are trusted; structure is checked, and an op that does
// not fit the tree is rejected with an error wrapping ErrCorrupt, leaving the tree
// unchanged.
func (t *Tree) Apply(o op.Op) error { return t.ApplyEffects(o, nil) }

// ApplyEffects is Apply that also records, when eff is not nil, what the op removed.
func (t *Tree) ApplyEffects(o op.Op, eff *Effects) error {
	switch o := o.(type) {
	case *op.StartLogSegment, *op.EndLogSegment:
		return nil
	case *op.SetGenstamp:
		t.genStamp = o.GenStamp
		return nil
	case *op.AllocateBlockID:
		t.lastBlockID = o.BlockID
		return nil
	case *op.UpdateMasterKey, *op.GetDelegationToken, *op.RenewDelegationToken, *op.CancelDelegationToken:
		return t.applyDelegation(o)
	case *op.Mkdir:
		return t.applyMkdir(o)
	case *op.Add:
		return t.applyAdd(o, eff)
	case *op.Delete:
		return t.applyDelete(o, eff)
	case *op.RenameOld:
		return t.applyRename(o.Src, o.Dst, o.Mtime, false, eff)
	case *op.Rename:
		return t.applyRename(o.Src, o.Dst, o.Mtime, o.Overwrite, eff)
	case *op.SetReplication:
		return t.applySetReplication(o)
	case *op.SetPermissions:
		w, n, err := t.existing(o.Path)
		if err != nil {
			return err
		}
		t.cow(w)
		n.mode = o.Mode & 0o7777
		return nil
	case *op.SetOwner:
		w, n, err := t.existing(o.Path)
		if err != nil {
			return err
		}
		t.cow(w)
		u, g := o.User, o.Group
		if u == "" {
			u = t.userOf(n)
		}
		if g == "" {
			g = t.groupOf(n)
		}
		n.owner = t.ownerID(u, g)
		return nil
	case *op.Times:
		w, n, err := t.existing(o.Path)
		if err != nil {
			return err
		}
		t.cow(w)
		if o.Mtime >= 0 {
			n.mtime = o.Mtime
		}
		if o.Atime >= 0 {
			n.atime = o.Atime
		}
		return nil
	case *op.SetQuota:
		return t.applySetQuota(o)
	case *op.SetQuotaByStorageType:
		return t.applySetQuotaByStorageType(o)
	case *op.Concat:
		return t.applyConcat(o)
	case *op.ReassignLease:
		_, f, err := t.ucFile(o.Path)
		if err != nil {
			return err
		}
		if f.ucd().client != o.Holder {
			return corruptf("reassign lease on %s: holder is %q, op says %q", o.Path, f.ucd().client, o.Holder)
		}
		f.ucd().client = strings.Clone(o.NewHolder)
		return nil
	case *op.UpdateBlocks:
		w, f, err := t.ucFile(o.Path)
		if err != nil {
			return err
		}
		t.cow(w)
		t.setBlocks(w, f, cloneBlocks(o.Blocks), eff)
		return nil
	case *op.AddBlock:
		return t.applyAddBlock(o, eff)
	case *op.Close:
		w, f, err := t.ucFile(o.Path)
		if err != nil {
			return err
		}
		t.cow(w)
		old, oldTypes := subtreeUsage(f), t.fileTypes(w, f)
		copying := t.copySource(f) != 0
		delete(t.uc, f.id)
		f.setUC(nil)
		t.replaceBlocks(f, cloneBlocks(o.Blocks), eff)
		if copying {
			t.endCopy(f, eff)
		}
		f.mtime, f.atime = o.Mtime, o.Atime
		addSubtree(w.parent(), subtreeUsage(f).minus(old))
		t.addTypes(w.parent(), oldTypes, t.fileTypes(w, f))
		eff.setFile(f)
		return nil
	case *op.Append:
		w, f, err := t.existingFile(o.Path)
		if err != nil {
			return err
		}
		if f.ucd() != nil {
			return corruptf("append to %s: already open for write", o.Path)
		}
		t.cow(w)
		old, oldTypes := subtreeUsage(f), t.fileTypes(w, f)
		f.setUC(&ucData{client: strings.Clone(o.ClientName), machine: strings.Clone(o.ClientMachine), parent: w.parent()})
		t.uc[f.id] = f
		addSubtree(w.parent(), subtreeUsage(f).minus(old))
		t.addTypes(w.parent(), oldTypes, t.fileTypes(w, f))
		return nil
	case *op.Truncate:
		return t.applyTruncate(o, eff)
	case *op.SetXAttr:
		return t.applySetXAttr(o)
	case *op.RemoveXAttr:
		return t.applyRemoveXAttr(o)
	case *op.SetStoragePolicy:
		return t.applySetStoragePolicy(o)
	case *op.SetACL:
		return t.applySetACL(o)
	case *op.AllowSnapshot:
		return t.applySnapshottable(o.Path, true)
	case *op.DisallowSnapshot:
		return t.applySnapshottable(o.Path, false)
	case *op.CreateSnapshot:
		return t.applyCreateSnapshot(o)
	case *op.DeleteSnapshot:
		return t.applyDeleteSnapshot(o, eff)
	case *op.RenameSnapshot:
		return t.applyRenameSnapshot(o)
	case nil:
		return corruptf("nil op")
	default:
		return corruptf("unknown op %T", o)
	}
}

// appendDoubling appends src to dst, doubling dst's room when it is full:
// a delete of a million files collects a million blocks, and append's own
// growth of big slices (by a quarter) copied them four times over.
func appendDoubling(dst, src []op.Block) []op.Block {
	if need := len(dst) + len(src); need > cap(dst) {
		grown := make([]op.Block, len(dst), max(need, 2*cap(dst), 64))
		copy(grown, dst)
		dst = grown
	}
	return append(dst, src...)
}

func cloneBlocks(b []op.Block) []op.Block {
	if len(b) == 0 {
		return nil
	}
	return append([]op.Block(nil), b...)
}

// existing resolves a path that must exist.
func (t *Tree) existing(p string) (*walk, *inode, error) {
	w := t.lookup(p)
	if w == nil || w.last() == nil {
		return nil, nil, corruptf("%s does not exist", p)
	}
	return w, w.last(), nil
}

func (t *Tree) existingFile(p string) (*walk, *inode, error) {
	w, n, err := t.existing(p)
	if err != nil {
		return nil, nil, err
	}
	if n.isDir() {
		return nil, nil, corruptf("%s is a directory", p)
	}
	return w, n, nil
}

func (t *Tree) ucFile(p string) (*walk, *inode, error) {
	w, f, err := t.existingFile(p)
	if err != nil {
		return nil, nil, err
	}
	if f.ucd() == nil {
		return nil, nil, corruptf("%s is not under construction", p)
	}
	return w, f, nil
}

// newParent resolves the parent directory of a path that must not be the root.
func (t *Tree) newParent(p string) (*walk, *inode, error) {
	w := t.lookup(p)
	if w == nil || w.isRoot() {
		return nil, nil, corruptf("bad path %q", p)
	}
	par := w.parent()
	if par == nil {
		return nil, nil, corruptf("parent of %s does not exist", p)
	}
	if !par.isDir() {
		return nil, nil, corruptf("parent of %s is not a directory", p)
	}
	return w, par, nil
}

func (t *Tree) noteID(id uint64) {
	if id > t.lastInodeID {
		t.lastInodeID = id
	}
}

func (t *Tree) applyMkdir(o *op.Mkdir) error {
	w, par, err := t.newParent(o.Path)
	if err != nil {
		return err
	}
	if w.last() != nil {
		return corruptf("mkdir %s: already exists", o.Path)
	}
	d := &inode{
		id:    o.InodeID,
		name:  strings.Clone(w.lastName()),
		mtime: o.Mtime,
		mode:  o.Perm.Mode & 0o7777,
		owner: t.ownerID(o.Perm.User, o.Perm.Group),
	}
	d.setDir(&dirData{parent: par, sub: subUsage{ns: 1, dirs: 1}})
	t.cowAt(w, len(w.nodes)-2)
	t.noteChild(par, d, true)
	par.dir().insert(d)
	par.touch(o.Mtime)
	addSubtree(par, subUsage{ns: 1, dirs: 1})
	t.numDirs++
	t.noteID(o.InodeID)
	return nil
}

func (t *Tree) applyAdd(o *op.Add, eff *Effects) error {
	w, par, err := t.newParent(o.Path)
	if err != nil {
		return err
	}
	if _, dup := t.uc[o.InodeID]; dup || o.InodeID == RootInodeID {
		return corruptf("add %s: inode id %d is in use", o.Path, o.InodeID)
	}
	if o.BlockSize < 0 || o.BlockSize > MaxBlockSize {
		return corruptf("add %s: block size %d is outside [0, %d]", o.Path, o.BlockSize, int64(MaxBlockSize))
	}
	if old := w.last(); old != nil {
		if !o.Overwrite {
			return corruptf("add %s: already exists", o.Path)
		}
		if old.isDir() {
			return corruptf("add %s: a directory is in the way", o.Path)
		}
		t.cowAt(w, len(w.nodes)-2)
		t.removeSubtree(par, old, t.seenBy(w.nodes[:len(w.nodes)-1]), t.inheritedAt(w, len(w.nodes)-2), eff)
	}
	f := &inode{
		id:    o.InodeID,
		name:  strings.Clone(w.lastName()),
		mtime: o.Mtime,
		atime: o.Atime,
		mode:  o.Perm.Mode & 0o7777,
		owner: t.ownerID(o.Perm.User, o.Perm.Group),
	}
	f.setPref(o.BlockSize)
	f.setRepl(o.Replication)
	f.setUC(&ucData{client: strings.Clone(o.ClientName), machine: strings.Clone(o.ClientMachine), parent: par})
	t.cowAt(w, len(w.nodes)-2)
	t.noteChild(par, f, true)
	par.dir().insert(f)
	par.touch(o.Mtime)
	addSubtree(par, subtreeUsage(f))
	t.addTypes(par, typeSpaces{}, t.fileTypes(w, f))
	t.uc[f.id] = f
	t.numFiles++
	t.noteID(o.InodeID)
	return nil
}

// removeSubtree unlinks n from its parent directory par and accounts for
// it; l is the newest snapshot that may see par (seenBy), inherited the
// storage policy n inherits, and the caller has cowed par.
//
// A big directory with no snapshot state to keep and no usage by storage
// type to recount is detached instead of walked (detach); everything
// else is walked now (forget).
func (t *Tree) removeSubtree(par, n *inode, l int32, inherited uint8, eff *Effects) {
	u := subtreeUsage(n)
	if t.canDetach(n, u) {
		t.detach(n, u, eff)
	} else {
		t.addTypes(par, t.subtreeTypes(n, inherited), typeSpaces{})
		t.forget(n, l, eff)
	}
	t.noteChild(par, n, false)
	par.dir().remove(n)
	addSubtree(par, u.neg())
}

// forget drops the subtree at n from the counters and the under-construction
// index. l is the newest snapshot that may see n's parent: an inode a
// snapshot sees is saved and becomes an orphan, and its blocks that
// versions hold are not freed.
func (t *Tree) forget(n *inode, l int32, eff *Effects) {
	var h *history
	if t.snapActive() {
		l = max(l, t.seenAt(n))
		t.cowNode(n, l) // before its features go: the version keeps them
		if t.copySource(n) != 0 {
			// A version kept only for the copy's source goes with it.
			t.endCopy(n, eff)
		}
		if h = t.snap.hist[n]; h != nil {
			h.orphan = true
			if n.isDir() {
				t.snap.held = nil // what was charged below it moves
			} else {
				t.heldDirty(n)
			}
		}
		delete(t.snap.exiles, n)
	}
	if len(t.feats) > 0 {
		t.dropFeatures(n)
	}
	if n.dir() == nil {
		t.numFiles--
		if n.ucd() != nil {
			delete(t.uc, n.id)
			if eff != nil {
				eff.RemovedUC = append(eff.RemovedUC, n.id)
			}
		}
		if h != nil {
			t.freeUnheld(n, eff)
		} else if eff != nil {
			eff.FreedBlocks = appendDoubling(eff.FreedBlocks, n.blocks())
		}
		return
	}
	t.numDirs--
	for c := range n.dir().children.all() {
		t.forget(c, l, eff)
	}
}

func (t *Tree) applyDelete(o *op.Delete, eff *Effects) error {
	w, n, err := t.existing(o.Path)
	if err != nil {
		return err
	}
	if w.isRoot() {
		return corruptf("delete of /")
	}
	par := w.parent()
	t.cowAt(w, len(w.nodes)-2)
	t.removeSubtree(par, n, t.seenBy(w.nodes[:len(w.nodes)-1]), t.inheritedAt(w, len(w.nodes)-2), eff)
	par.touch(o.Mtime)
	return nil
}

func isUnder(dst, src string) bool {
	return src == "/" || (len(dst) > len(src) && strings.HasPrefix(dst, src) && dst[len(src)] == '/')
}

func (t *Tree) applyRename(src, dst string, mtime int64, overwrite bool, eff *Effects) error {
	sw, n, err := t.existing(src)
	if err != nil {
		return err
	}
	if sw.isRoot() {
		return corruptf("rename of /")
	}
	dw, dpar, err := t.newParent(dst)
	if err != nil {
		return err
	}
	if sw.path == dw.path {
		return nil
	}
	if isUnder(dw.path, sw.path) {
		return corruptf("rename %s under itself (%s)", src, dst)
	}
	old := dw.last()
	if old != nil {
		switch {
		case !overwrite:
			return corruptf("rename %s to %s: destination exists", src, dst)
		case old.isDir() != n.isDir():
			return corruptf("rename %s to %s: file and directory", src, dst)
		case old.isDir() && old.dir().children.len() > 0:
			return corruptf("rename %s to %s: destination not empty", src, dst)
		}
	}
	spar := sw.parent()
	u := subtreeUsage(n)
	// The moved subtree's usage by type, at its old place and its new one:
	// recounted (with the quota directories inside it) only when the
	// policy it inherits changes.
	var typesBefore typeSpaces
	oldPolicy, newPolicy := t.inheritedAt(sw, len(sw.nodes)-2), t.inheritedAt(dw, len(dw.nodes)-2)
	if t.hasTypeQuotas {
		typesBefore = t.subtreeTypes(n, oldPolicy)
	}
	if t.snapActive() {
		t.cowAt(sw, len(sw.nodes)-2)
		t.cowAt(dw, len(dw.nodes)-2)
		t.cow(sw)
		if l := t.seenBy(sw.nodes); l > 0 {
			t.snap.exiles[n] = max(t.snap.exiles[n], l)
		}
	}
	t.noteChild(spar, n, false)
	spar.dir().remove(n)
	addSubtree(spar, u.neg())
	t.addTypes(spar, typesBefore, typeSpaces{})
	if old != nil {
		t.removeSubtree(dpar, old, t.seenBy(dw.nodes[:len(dw.nodes)-1]), newPolicy, eff)
	}
	n.name = strings.Clone(dw.lastName())
	t.noteChild(dpar, n, true)
	dpar.dir().insert(n)
	addSubtree(dpar, u)
	if t.hasTypeQuotas {
		typesAfter := typesBefore
		if oldPolicy != newPolicy {
			typesAfter = t.fillTypes(n, newPolicy)
		}
		t.addTypes(dpar, typeSpaces{}, typesAfter)
	}
	if n.dir() != nil {
		n.dir().parent = dpar
	}
	if n.ucd() != nil {
		n.ucd().parent = dpar
	}
	if t.snap != nil {
		t.noteParent(n, dpar)
		t.snap.held = nil // what is kept below n is charged elsewhere now
	}
	spar.touch(mtime)
	dpar.touch(mtime)
	return nil
}

func (t *Tree) applySetReplication(o *op.SetReplication) error {
	w, f, err := t.existingFile(o.Path)
	if err != nil {
		return err
	}
	t.cow(w)
	old, oldTypes := subtreeUsage(f), t.fileTypes(w, f)
	f.setRepl(o.Replication)
	addSubtree(w.parent(), subtreeUsage(f).minus(old))
	t.addTypes(w.parent(), oldTypes, t.fileTypes(w, f))
	return nil
}

func (t *Tree) applySetQuota(o *op.SetQuota) error {
	w, d, err := t.existing(o.Path)
	if err != nil {
		return err
	}
	if !d.isDir() {
		return corruptf("set quota on file %s", o.Path)
	}
	q := d.dir().quota
	ns, ds := int64(-1), int64(-1)
	if q != nil {
		ns, ds = q.ns, q.ds
	}
	if o.NsQuota != op.QuotaDontSet {
		ns = o.NsQuota
	}
	if o.DsQuota != op.QuotaDontSet {
		ds = o.DsQuota
	}
	if ns < -1 || ds < -1 {
		return corruptf("set quota on %s: bad values %d, %d", o.Path, o.NsQuota, o.DsQuota)
	}
	if ns == -1 && ds == -1 && !w.isRoot() && (q == nil || len(q.types) == 0) {
		d.dir().quota = nil
		t.heldStale()
		return nil
	}
	if q == nil {
		q = &quotaData{tsUsed: t.subtreeTypes(d, t.inheritedAt(w, len(w.nodes)-2))}
		d.dir().quota = q
	}
	q.ns, q.ds = ns, ds
	t.heldStale()
	return nil
}

func (t *Tree) applyConcat(o *op.Concat) error {
	w, trg, err := t.existingFile(o.Target)
	if err != nil {
		return err
	}
	if trg.ucd() != nil {
		return corruptf("concat target %s is open for write", o.Target)
	}
	par := w.parent()
	srcs := make([]*inode, 0, len(o.Srcs))
	for _, s := range o.Srcs {
		sw, f, err := t.existingFile(s)
		if err != nil {
			return err
		}
		if sw.parent() != par || f == trg || f.ucd() != nil || slices.Contains(srcs, f) {
			return corruptf("concat %s: bad source %s", o.Target, s)
		}
		srcs = append(srcs, f)
	}
	old := subtreeUsage(trg)
	nb := len(trg.blocks())
	for _, f := range srcs {
		nb += len(f.blocks())
	}
	blocks := make([]op.Block, 0, nb)
	blocks = append(blocks, trg.blocks()...)
	var typesBefore typeSpaces
	if t.hasTypeQuotas {
		inh := t.policyAlong(w, len(w.nodes)-2)
		for _, f := range append([]*inode{trg}, srcs...) {
			x := t.typesUnder(f, inh)
			for i := range typesBefore {
				typesBefore[i] += x[i]
			}
		}
	}
	t.cow(w)
	t.cowAt(w, len(w.nodes)-2)
	for _, f := range srcs {
		blocks = append(blocks, f.blocks()...)
		old = old.plus(subtreeUsage(f))
		if t.snap != nil {
			// The plan refuses sources a snapshot sees: their blocks move
			// to the target, so no version may hold them.
			t.dropHistory(f)
			delete(t.snap.exiles, f)
			t.snap.held = nil
		}
		t.noteChild(par, f, false)
		par.dir().remove(f)
		t.dropFeatures(f)
		t.numFiles--
	}
	trg.setBlocks(blocks)
	trg.mtime = o.Mtime
	par.touch(o.Mtime)
	addSubtree(par, subtreeUsage(trg).minus(old))
	t.addTypes(par, typesBefore, t.fileTypes(w, trg))
	return nil
}

func (t *Tree) applyAddBlock(o *op.AddBlock, eff *Effects) error {
	w, f, err := t.ucFile(o.Path)
	if err != nil {
		return err
	}
	if p := o.Penultimate; p != nil {
		if len(f.blocks()) == 0 || f.blocks()[len(f.blocks())-1].ID != p.ID {
			return corruptf("add block to %s: penultimate block %d is not the last block", o.Path, p.ID)
		}
	}
	t.cow(w)
	old, oldTypes := subtreeUsage(f), t.fileTypes(w, f)
	nb := make([]op.Block, len(f.blocks()), len(f.blocks())+1)
	copy(nb, f.blocks())
	if p := o.Penultimate; p != nil {
		nb[len(nb)-1] = *p
	}
	f.setBlocks(append(nb, o.Last))
	addSubtree(w.parent(), subtreeUsage(f).minus(old))
	t.addTypes(w.parent(), oldTypes, t.fileTypes(w, f))
	eff.setFile(f)
	return nil
}

// setBlocks replaces the block list of a file, reporting dropped blocks.
func (t *Tree) setBlocks(w *walk, f *inode, blocks []op.Block, eff *Effects) {
	old, oldTypes := subtreeUsage(f), t.fileTypes(w, f)
	t.replaceBlocks(f, blocks, eff)
	addSubtree(w.parent(), subtreeUsage(f).minus(old))
	t.addTypes(w.parent(), oldTypes, t.fileTypes(w, f))
}

func (t *Tree) replaceBlocks(f *inode, blocks []op.Block, eff *Effects) {
	if eff != nil {
		for _, b := range f.blocks() {
			if !hasBlock(blocks, b.ID) && !t.heldBySnapshot(f, b.ID) {
				eff.FreedBlocks = append(eff.FreedBlocks, b)
			}
		}
	}
	f.setBlocks(blocks)
}

func hasBlock(bs []op.Block, id int64) bool {
	for i := range bs {
		if bs[i].ID == id {
			return true
		}
	}
	return false
}

func (t *Tree) applyTruncate(o *op.Truncate, eff *Effects) error {
	w, f, err := t.existingFile(o.Path)
	if err != nil {
		return err
	}
	if o.NewLength < 0 || o.NewLength > f.length() {
		return corruptf("truncate %s to %d: length is %d", o.Path, o.NewLength, f.length())
	}
	if f.ucd() != nil {
		return corruptf("truncate %s: open for write", o.Path)
	}
	var keep []op.Block
	var off int64
	for _, b := range f.blocks() {
		if off >= o.NewLength {
			break
		}
		keep = append(keep, b)
		off += b.NumBytes
	}
	var src int64 // copy-on-truncate: the block the new last block copies
	if off > o.NewLength {
		tb := o.TruncateBlock
		if tb == nil {
			return corruptf("truncate %s to %d: cut inside a block without a truncate block", o.Path, o.NewLength)
		}
		cut := keep[len(keep)-1]
		if tb.NumBytes != o.NewLength-(off-cut.NumBytes) {
			return corruptf("truncate %s to %d: truncate block blk_%d has %d bytes, the cut leaves %d", o.Path, o.NewLength, tb.ID, tb.NumBytes, o.NewLength-(off-cut.NumBytes))
		}
		if tb.ID != cut.ID {
			if tb.ID > t.lastBlockID || hasBlock(f.blocks(), tb.ID) {
				return corruptf("truncate %s: copy-on-truncate block blk_%d was not allocated (last block id %d)", o.Path, tb.ID, t.lastBlockID)
			}
			src = cut.ID
			keep[len(keep)-1] = *tb
		} else {
			// In place: the block keeps the stamp its replicas have until
			// the recovery commits (the truncate block's stamp is that
			// recovery's id), so that after a restart from an image the
			// replicas still match it and a retried recovery finds them.
			keep[len(keep)-1] = op.Block{ID: cut.ID, NumBytes: tb.NumBytes, GenStamp: cut.GenStamp}
		}
	}
	if src != 0 && !t.wouldHold(w, f, src) {
		return corruptf("truncate %s: copy-on-truncate of blk_%d, which no snapshot holds", o.Path, src)
	}
	keep = cloneBlocks(keep)
	t.cow(w)
	old, oldTypes := subtreeUsage(f), t.fileTypes(w, f)
	t.replaceBlocks(f, keep, eff)
	f.mtime = o.Mtime
	if o.TruncateBlock != nil && off > o.NewLength {
		f.setUC(&ucData{client: strings.Clone(o.ClientName), machine: strings.Clone(o.ClientMachine), parent: w.parent(), truncSrc: src, truncInPlace: src == 0})
		t.uc[f.id] = f
	}
	addSubtree(w.parent(), subtreeUsage(f).minus(old))
	t.addTypes(w.parent(), oldTypes, t.fileTypes(w, f))
	return nil
}
