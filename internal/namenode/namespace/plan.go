package namespace

import (
	"fmt"
	"slices"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// Plans validate a client request against the current tree, check permissions,
// and return the ops that carry it out, with inode ids allocated from
// NextInodeID onwards. They never change the tree: the caller logs the ops and
// then Applies each in order, under the same lock.

// ---- limits and quotas ----

// checkNewName applies the rules for a new child called name of dir par (whose
// path is parPath): reserved names, component length, directory size.
func (t *Tree) checkNewName(par *inode, parPath, name string, countItems bool) error {
	if par == t.root && name == ".reserved" {
		return newErr(`File name ".reserved" is reserved and cannot be created. If this is during upgrade change the name of the existing file or directory to another name before upgrading to the new release.`, ErrIllegalArgument)
	}
	if m := t.cfg.MaxComponentLength; m > 0 && len(name) > m {
		return newErr(fmt.Sprintf("The maximum path component name limit of %s in directory %s is exceeded: limit=%d length=%d",
			name, parPath, m, len(name)), ErrComponentTooLong)
	}
	if m := t.cfg.MaxDirItems; countItems && m > 0 && par != nil && par.dir().children.len() >= m {
		return newErr(fmt.Sprintf("The directory item limit of %s is exceeded: limit=%d items=%d",
			parPath, m, par.dir().children.len()), ErrMaxDirItems)
	}
	if name == ".snapshot" {
		return newErr(`".snapshot" is a reserved name.`, ErrIllegalArgument)
	}
	return nil
}

// verifyQuota checks adding (ns, ds) below directory d against every quota from
// d up to the root, skipping directories for which skip reports true.
// The usage counted is the live subtree's and what only snapshots keep
// below d (snapquota.go).
func (t *Tree) verifyQuota(d *inode, ns, ds int64, skip func(*inode) bool) error {
	for ; d != nil; d = d.dir().parent {
		q := d.dir().quota
		if q == nil || (skip != nil && skip(d)) {
			continue
		}
		nsUsed, dsUsed := d.dir().sub.ns, d.dir().sub.ds
		// What snapshots keep is computed only when it could decide: a
		// check already over fails without it, and no more names are kept
		// than inodes have histories.
		var kept int64
		if t.snap != nil {
			kept = int64(len(t.snap.hist))
		}
		needNS := q.ns >= 0 && ns > 0 && nsUsed+ns <= q.ns && q.ns-(nsUsed+ns) < kept
		needDS := q.ds >= 0 && ds > 0 && dsUsed+ds <= q.ds && kept > 0
		if needNS || needDS {
			if h := t.heldAt(d); h != nil {
				nsUsed += h.ns
				dsUsed += h.ds
			}
		}
		if q.ns >= 0 && ns > 0 && nsUsed+ns > q.ns {
			return newErr(fmt.Sprintf("The NameSpace quota (directories and files) of directory %s is exceeded: quota=%d file count=%d",
				dirPath(d), q.ns, nsUsed+ns), ErrNSQuotaExceeded)
		}
		if q.ds >= 0 && ds > 0 && dsUsed+ds > q.ds {
			return newErr(fmt.Sprintf("The DiskSpace quota of %s is exceeded: quota = %d B = %s but diskspace consumed = %d B = %s",
				dirPath(d), q.ds, long2String(q.ds), dsUsed+ds, long2String(dsUsed+ds)), ErrDSQuotaExceeded)
		}
	}
	return nil
}

// long2String renders n with a binary prefix, as Hadoop's
// TraditionalBinaryPrefix.long2String(n, "B", 2).
func long2String(n int64) string {
	neg := ""
	if n < 0 {
		neg, n = "-", -n
	}
	if n < 1024 {
		return fmt.Sprintf("%s%d B", neg, n)
	}
	const syms = "KMGTPE"
	i := 0
	for i+1 < len(syms) && n >= int64(1)<<(10*(i+2)) {
		i++
	}
	shift := uint(10 * (i + 1))
	if n&(int64(1)<<shift-1) == 0 {
		return fmt.Sprintf("%s%d %cB", neg, n>>shift, syms[i])
	}
	s := fmt.Sprintf("%.2f", float64(n)/float64(int64(1)<<shift))
	if len(s) >= 4 && s[:4] == "1024" && i+1 < len(syms) {
		i++
		s = fmt.Sprintf("%.2f", float64(n)/float64(int64(1)<<(10*(i+1))))
	}
	return fmt.Sprintf("%s%s %cB", neg, s, syms[i])
}

// VerifySpace checks that dsDelta more bytes of storage space (bytes ×
// replication) fit the quotas above path; the block-allocation path calls it
// before logging an op.AddBlock.
func (t *Tree) VerifySpace(path string, dsDelta int64) error {
	w := t.lookup(path)
	if w == nil || w.last() == nil {
		return notFound("File does not exist: %s", path)
	}
	d := w.last()
	if !d.isDir() {
		d = w.parent()
	}
	return t.verifyQuota(d, 0, dsDelta, nil)
}

// lastExisting returns the index of the deepest existing node of w.
func lastExisting(w *walk) int {
	k := 0
	for k+1 < len(w.nodes) && w.nodes[k+1] != nil {
		k++
	}
	return k
}

func (t *Tree) verifyParentDir(w *walk) error {
	if len(w.comps) < 2 {
		return nil
	}
	p := w.parent()
	if p == nil {
		return notFound("Parent directory doesn't exist: %s", w.parentPath())
	}
	if !p.isDir() {
		return newErr("Parent path is not a directory: "+w.parentPath(), ErrParentNotDir)
	}
	return nil
}

// planMissingDirs returns Mkdir ops for the missing components of w from index
// k+1 up to (not including) stop, nodes[k] being the deepest existing directory.
func (t *Tree) planMissingDirs(c Caller, w *walk, k, stop int, mode func(i int) uint16, now int64, id *uint64) ([]op.Op, error) {
	base := w.nodes[k]
	group := t.groupOf(base)
	var ops []op.Op
	for i := k + 1; i < stop; i++ {
		var par *inode
		if i == k+1 {
			par = base
		}
		if err := t.checkNewName(par, w.prefix(i-1), w.comps[i-1], i == k+1); err != nil {
			return nil, err
		}
		*id++
		ops = append(ops, &op.Mkdir{
			InodeID: *id,
			Path:    w.prefix(i),
			Mtime:   now,
			Perm:    op.Perm{User: c.User, Group: group, Mode: mode(i)},
		})
	}
	return ops, nil
}

// ---- mkdirs ----

// PlanMkdirs plans mkdirs: one op.Mkdir per directory created. An existing
// directory yields no ops and no error. Implicitly created parents get the
// requested mode plus u+wx; every new directory is owned by the caller and takes
// its parent's group.
func (t *Tree) PlanMkdirs(c Caller, path string, mode uint16, createParent bool, now int64) ([]op.Op, error) {
	if np, err := normalize(path); err == nil && !validName(np) {
		return nil, newErr("Invalid path name "+path, ErrInvalidPath)
	}
	w, err := t.resolve(path, true)
	if err != nil {
		return nil, err
	}
	if err := t.traverse(c, w, true); err != nil {
		return nil, err
	}
	if last := w.last(); last != nil {
		if !last.isDir() {
			return nil, newErr("Path is not a directory: "+w.path, ErrExists)
		}
		return nil, nil
	}
	if err := t.checkPerm(c, w, permCheck{ancestor: Write}); err != nil {
		return nil, err
	}
	if !createParent {
		if err := t.verifyParentDir(w); err != nil {
			return nil, err
		}
	}
	k := lastExisting(w)
	id := t.lastInodeID
	final := len(w.nodes) - 1
	ops, err := t.planMissingDirs(c, w, k, len(w.nodes), func(i int) uint16 {
		if i == final {
			return mode & 0o7777
		}
		return mode&0o777 | 0o300
	}, now, &id)
	if err != nil {
		return nil, err
	}
	if err := t.verifyQuota(w.nodes[k], int64(len(ops)), 0, nil); err != nil {
		return nil, err
	}
	return t.withInheritedACLs(ops), nil
}

// ---- create ----

// CreateFlags are the CreateFlag bits of a create call that concern the namespace.
type CreateFlags struct {
	Create    bool // CREATE: create the file if it does not exist
	Overwrite bool // OVERWRITE: replace an existing file (even one open for write, as HDFS does)
	Append    bool // APPEND: handled by clients through the append call; ignored here
}

// PlanCreate plans create: op.Mkdir for missing parents (with createParent;
// they take the nearest existing ancestor's mode plus u+wx and its group) and an
// op.Add for the file, owned by the caller with the parent's group, open for
// write by clientName. Replication and block size are taken as given; their
// limits belong to the caller.
func (t *Tree) PlanCreate(c Caller, path string, mode uint16, clientName, clientMachine string, flags CreateFlags,
	createParent bool, replication uint16, blockSize int64, now int64) ([]op.Op, error) {
	if blockSize < 0 || blockSize > MaxBlockSize {
		return nil, fmt.Errorf("%w: block size %d is outside [0, %d]", ErrIllegalArgument, blockSize, int64(MaxBlockSize))
	}
	w, err := t.resolve(path, true)
	if err != nil {
		return nil, err
	}
	if w.isRoot() {
		return nil, newErr("/ already exists as a directory", ErrExists, ErrIsDir)
	}
	if err := t.traverse(c, w, true); err != nil {
		return nil, err
	}
	if err := t.checkPerm(c, w, permCheck{ancestor: Write}); err != nil {
		return nil, err
	}
	old := w.last()
	if old != nil {
		if old.isDir() {
			return nil, newErr(w.path+" already exists as a directory", ErrExists, ErrIsDir)
		}
		if flags.Overwrite {
			if err := t.checkPerm(c, w, permCheck{self: Write}); err != nil {
				return nil, err
			}
		}
	} else {
		if !createParent {
			if err := t.verifyParentDir(w); err != nil {
				return nil, err
			}
		}
		if !flags.Create {
			return nil, notFound("Can't overwrite non-existent %s", w.path)
		}
	}
	if old != nil && !flags.Overwrite {
		if old.ucd() != nil {
			return nil, beingCreated("CREATE_FILE", w.path, clientName, clientMachine, old.ucd())
		}
		return nil, newErr(fmt.Sprintf("%s for client %s already exists", w.path, clientMachine), ErrExists)
	}
	k := lastExisting(w)
	id := t.lastInodeID
	final := len(w.nodes) - 1
	var ops []op.Op
	if old == nil {
		base := w.nodes[k].mode&0o777 | 0o300
		ops, err = t.planMissingDirs(c, w, k, final, func(int) uint16 { return base }, now, &id)
		if err != nil {
			return nil, err
		}
		var par *inode
		if k == final-1 {
			par = w.nodes[k]
		}
		if err := t.checkNewName(par, w.parentPath(), w.lastName(), par != nil); err != nil {
			return nil, err
		}
	}
	group := t.groupOf(w.nodes[min(k, final-1)])
	ns := int64(len(ops)) + 1
	var ds int64
	if old != nil {
		ns--
		ds = -old.space()
	}
	if err := t.verifyQuota(w.nodes[min(k, final-1)], ns, ds, nil); err != nil {
		return nil, err
	}
	id++
	ops = append(ops, &op.Add{
		InodeID:       id,
		Path:          w.path,
		Replication:   replication,
		Mtime:         now,
		Atime:         now,
		BlockSize:     blockSize,
		Perm:          op.Perm{User: c.User, Group: group, Mode: mode & 0o7777},
		ClientName:    clientName,
		ClientMachine: clientMachine,
		Overwrite:     old != nil,
	})
	return t.withInheritedACLs(ops), nil
}

// beingCreated is the AlreadyBeingCreatedException of a create or append on
// a file open for write (Hadoop's recoverLeaseInternal wording).
func beingCreated(opName, path, holder, machine string, uc *ucData) error {
	reason := "current leaseholder is trying to recreate file."
	if uc.client != holder {
		reason = fmt.Sprintf("this file lease is currently owned by %s on %s", uc.client, uc.machine)
	}
	return newErr(fmt.Sprintf("Failed to %s %s for %s on %s because %s", opName, path, holder, machine, reason), ErrAlreadyBeingCreated)
}

// PlanAppend plans append: the closed file reopened for clientName. newBlock is
// CreateFlag.NEW_BLOCK.
func (t *Tree) PlanAppend(c Caller, path, clientName, clientMachine string, newBlock bool) ([]op.Op, error) {
	w, err := t.resolve(path, false)
	if err != nil {
		return nil, err
	}
	if err := t.traverse(c, w, false); err != nil {
		return nil, err
	}
	if err := t.checkPerm(c, w, permCheck{self: Write}); err != nil {
		return nil, err
	}
	f := w.last()
	if f == nil {
		return nil, notFound("File does not exist: %s", w.path)
	}
	if f.isDir() {
		return nil, newErr("Path is not a file: "+w.path, ErrNotFound, ErrNotFile)
	}
	if f.ucd() != nil {
		return nil, beingCreated("APPEND_FILE", w.path, clientName, clientMachine, f.ucd())
	}
	if !newBlock && len(f.blocks()) > 0 {
		lb := f.blocks()[len(f.blocks())-1].NumBytes
		if lb < f.pref() {
			if err := t.verifyQuota(w.parent(), 0, (f.pref()-lb)*int64(f.repl()), nil); err != nil {
				return nil, err
			}
			if err := t.verifyTypeQuota(w, f, f.pref()-lb); err != nil {
				return nil, err
			}
		}
	}
	return []op.Op{&op.Append{Path: w.path, ClientName: clientName, ClientMachine: clientMachine, NewBlock: newBlock}}, nil
}

// ---- delete ----

// PlanDelete plans delete. It reports false with no ops and no error for a
// missing path and for "/", as HDFS's delete returns false.
func (t *Tree) PlanDelete(c Caller, path string, recursive bool, now int64) (bool, []op.Op, error) {
	w, err := t.resolve(path, false)
	if err != nil {
		return false, nil, err
	}
	if err := t.traverse(c, w, false); err != nil {
		return false, nil, err
	}
	if err := t.checkPerm(c, w, permCheck{parent: Write, sub: Read | Write | Execute, ignoreEmptyDir: true}); err != nil {
		return false, nil, err
	}
	n := w.last()
	if n != nil && n.isDir() && n.dir().children.len() > 0 && !recursive {
		return false, nil, newErr("`"+w.path+" is non empty': Directory is not empty", ErrNotEmpty)
	}
	if n == nil || w.isRoot() {
		return false, nil, nil
	}
	if err := t.checkDeletable(n, w.path); err != nil {
		return false, nil, err
	}
	return true, []op.Op{&op.Delete{Path: w.path, Mtime: now}}, nil
}

// ---- rename ----

// CheckMoveToTrash checks what a rename to the trash (rename2 with
// moveToTrash, Hadoop's Rename.TO_TRASH) asks of the caller beyond a
// rename: what a recursive delete of the source asks (write on its parent,
// full access to everything below it but empty directories), since whatever
// reaches the trash is deleted later by its emptier.
func (t *Tree) CheckMoveToTrash(c Caller, src string) error {
	w, err := t.resolve(src, false)
	if err != nil {
		return err
	}
	if err := t.traverse(c, w, false); err != nil {
		return err
	}
	return t.checkPerm(c, w, permCheck{parent: Write, sub: Read | Write | Execute, ignoreEmptyDir: true})
}

// renameWalks resolves and checks the source and destination of a rename.
func (t *Tree) renameWalks(c Caller, src, dst string, into bool) (*walk, *walk, error) {
	sw, err := t.resolve(src, false)
	if err != nil {
		return nil, nil, err
	}
	if err := t.traverse(c, sw, false); err != nil {
		return nil, nil, err
	}
	dw, err := t.resolve(dst, true)
	if err != nil {
		return nil, nil, err
	}
	if err := t.traverse(c, dw, true); err != nil {
		return nil, nil, err
	}
	if d := dw.last(); into && d != nil && d.isDir() && !sw.isRoot() {
		name := sw.lastName()
		dw.comps = append(dw.comps, name)
		dw.nodes = append(dw.nodes, d.child(name))
		dw.path = joinPath(dw.path, name)
	}
	if err := t.checkPerm(c, sw, permCheck{parent: Write}); err != nil {
		return nil, nil, err
	}
	if err := t.checkPerm(c, dw, permCheck{ancestor: Write}); err != nil {
		return nil, nil, err
	}
	return sw, dw, nil
}

// renameLimits checks the name rules and quotas for moving sw's inode to dw
// (replacing dw's inode when it exists).
func (t *Tree) renameLimits(sw, dw *walk) error {
	dpar := dw.parent()
	if err := t.checkNewName(dpar, dw.parentPath(), dw.lastName(), dpar != sw.parent()); err != nil {
		return err
	}
	u := subtreeUsage(sw.last())
	if old := dw.last(); old != nil {
		u = u.minus(subtreeUsage(old))
	}
	common := func(d *inode) bool { return slices.Contains(sw.nodes, d) }
	if err := t.verifyQuota(dpar, u.ns, u.ds, common); err != nil {
		return err
	}
	return t.verifyTypeRename(sw, dw, common)
}

// PlanRename plans the old rename call, which answers false instead of failing
// for most problems: a missing source, "/" as source, a destination inside the
// source, an existing destination or a missing destination parent. A
// destination that is an existing directory means "move into it". Renaming a
// path onto itself is true with no ops.
func (t *Tree) PlanRename(c Caller, src, dst string, now int64) (bool, []op.Op, error) {
	if nd, err := normalize(dst); err != nil || !validName(nd) {
		return false, nil, newErr("Invalid name: "+dst, ErrRenameInvalid)
	}
	sw, dw, err := t.renameWalks(c, src, dst, true)
	if err != nil {
		return false, nil, err
	}
	if sw.last() == nil || sw.isRoot() {
		return false, nil, nil
	}
	if dw.path == sw.path {
		return true, nil, nil
	}
	if isUnder(dw.path, sw.path) || dw.last() != nil || dw.parent() == nil || !dw.parent().isDir() {
		return false, nil, nil
	}
	if err := t.renameLimits(sw, dw); err != nil {
		return false, nil, err
	}
	return true, []op.Op{&op.RenameOld{Src: sw.path, Dst: dw.path, Mtime: now}}, nil
}

// PlanRename2 plans rename2 (FileContext semantics): every problem is an error.
func (t *Tree) PlanRename2(c Caller, src, dst string, overwrite bool, now int64) ([]op.Op, error) {
	if nd, err := normalize(dst); err != nil || !validName(nd) {
		return nil, newErr("Invalid path name Invalid name: "+dst, ErrInvalidPath)
	}
	sw, dw, err := t.renameWalks(c, src, dst, false)
	if err != nil {
		return nil, err
	}
	n := sw.last()
	if n == nil {
		return nil, notFound("rename source %s is not found.", sw.path)
	}
	if sw.isRoot() {
		return nil, newErr("rename source cannot be the root", ErrRenameInvalid)
	}
	if dw.path == sw.path {
		return nil, newErr(fmt.Sprintf("The source %s and destination %s are the same", sw.path, dw.path), ErrExists)
	}
	if isUnder(dw.path, sw.path) {
		return nil, newErr(fmt.Sprintf("Rename destination %s is a directory or file under source %s", dw.path, sw.path), ErrRenameInvalid)
	}
	if dw.isRoot() {
		return nil, newErr("rename destination cannot be the root", ErrRenameInvalid)
	}
	if old := dw.last(); old != nil {
		if old.isDir() != n.isDir() {
			return nil, newErr(fmt.Sprintf("Source %s and destination %s must both be directories", sw.path, dw.path), ErrRenameInvalid)
		}
		if !overwrite {
			return nil, newErr("rename destination "+dw.path+" already exists", ErrExists)
		}
		if old.isDir() && old.dir().children.len() > 0 {
			return nil, newErr("rename destination directory is not empty: "+dw.path, ErrRenameInvalid)
		}
		if err := t.checkDeletable(old, dw.path); err != nil {
			return nil, err
		}
	}
	dpar := dw.parent()
	if dpar == nil {
		return nil, notFound("rename destination parent %s not found.", dw.path)
	}
	if !dpar.isDir() {
		return nil, newErr("rename destination parent "+dw.path+" is a file.", ErrParentNotDir)
	}
	if err := t.renameLimits(sw, dw); err != nil {
		return nil, err
	}
	return []op.Op{&op.Rename{Src: sw.path, Dst: dw.path, Mtime: now, Overwrite: overwrite}}, nil
}

// ---- attributes ----

// resolveExisting resolves a path for an attribute change.
func (t *Tree) resolveExisting(c Caller, path string, missing string) (*walk, error) {
	w, err := t.resolve(path, false)
	if err != nil {
		return nil, err
	}
	if err := t.traverse(c, w, false); err != nil {
		return nil, err
	}
	if w.last() == nil {
		return nil, notFound(missing, w.path)
	}
	return w, nil
}

// PlanSetPermission plans setPermission: the owner or a superuser may set the
// mode; only the low 12 bits (rwx for all three classes, sticky, setuid/gid) are kept.
func (t *Tree) PlanSetPermission(c Caller, path string, mode uint16) ([]op.Op, error) {
	w, err := t.resolveExisting(c, path, "File does not exist: %s")
	if err != nil {
		return nil, err
	}
	if err := t.checkPerm(c, w, permCheck{owner: true}); err != nil {
		return nil, err
	}
	return []op.Op{&op.SetPermissions{Path: w.path, Mode: mode & 0o7777}}, nil
}

// PlanSetOwner plans setOwner; "" leaves a field unchanged. Only a superuser may
// give an inode away; its owner may change the group to one of his groups.
// These ownership rules hold even with permission checking disabled.
func (t *Tree) PlanSetOwner(c Caller, path, user, group string) ([]op.Op, error) {
	w, err := t.resolveExisting(c, path, "File does not exist: %s")
	if err != nil {
		return nil, err
	}
	if err := t.checkPerm(c, w, permCheck{owner: true}); err != nil {
		return nil, err
	}
	if !t.isSuper(c) {
		if user != "" && user != c.User {
			return nil, newErr("User "+c.User+" is not a super user (non-super user cannot change owner).", ErrPermission)
		}
		if group != "" && !slices.Contains(c.Groups, group) {
			return nil, newErr("User "+c.User+" does not belong to "+group, ErrPermission)
		}
	}
	if user == "" && group == "" {
		return nil, nil
	}
	return []op.Op{&op.SetOwner{Path: w.path, User: user, Group: group}}, nil
}

// PlanSetTimes plans setTimes (-1 leaves a time unchanged); it needs WRITE on the inode.
func (t *Tree) PlanSetTimes(c Caller, path string, mtime, atime int64) ([]op.Op, error) {
	if atime != -1 && t.cfg.AccessTimePrecision == 0 {
		return nil, newErr("Access time for hdfs is not configured.  Please set dfs.namenode.accesstime.precision configuration parameter.", ErrIO)
	}
	w, err := t.resolve(path, false)
	if err != nil {
		return nil, err
	}
	if err := t.traverse(c, w, false); err != nil {
		return nil, err
	}
	if err := t.checkPerm(c, w, permCheck{self: Write}); err != nil {
		return nil, err
	}
	if w.last() == nil {
		return nil, notFound("File/Directory %s does not exist.", w.path)
	}
	if mtime < 0 && atime < 0 {
		return nil, nil
	}
	return []op.Op{&op.Times{Path: w.path, Mtime: max(mtime, -1), Atime: max(atime, -1)}}, nil
}

// PlanAccess returns the op.Times that records a read of path at now when the
// stored access time is older than the precision, or nil (also for directories,
// missing paths and with access times disabled). No permission is checked: the
// read that triggers it was checked.
func (t *Tree) PlanAccess(path string, now int64) op.Op {
	p := t.cfg.AccessTimePrecision
	if p <= 0 {
		return nil
	}
	w := t.lookup(path)
	if w == nil || w.last() == nil || w.last().isDir() {
		return nil
	}
	if now > w.last().atime+p {
		return &op.Times{Path: w.path, Mtime: -1, Atime: now}
	}
	return nil
}

// PlanSetReplication plans setReplication. Directories and missing paths give
// false with no ops (HDFS returns false). Replication limits belong to the caller.
func (t *Tree) PlanSetReplication(c Caller, path string, replication uint16) (bool, []op.Op, error) {
	w, err := t.resolve(path, false)
	if err != nil {
		return false, nil, err
	}
	if err := t.traverse(c, w, false); err != nil {
		return false, nil, err
	}
	if err := t.checkPerm(c, w, permCheck{self: Write}); err != nil {
		return false, nil, err
	}
	f := w.last()
	if f == nil || f.isDir() {
		return false, nil, nil
	}
	if replication > f.repl() {
		l := f.space() / int64(max(f.repl(), 1))
		if err := t.verifyQuota(w.parent(), 0, l*int64(replication-f.repl()), nil); err != nil {
			return false, nil, err
		}
		if err := t.verifyTypeReplication(w, f, replication); err != nil {
			return false, nil, err
		}
	}
	return true, []op.Op{&op.SetReplication{Path: w.path, Replication: replication}}, nil
}

// PlanSetQuota plans setQuota (superuser only, directories only). op.QuotaDontSet
// keeps a value, op.QuotaReset clears it; the namespace quota of "/" cannot be
// cleared. A quota below the current usage is accepted, as in HDFS.
func (t *Tree) PlanSetQuota(c Caller, path string, ns, ds int64) ([]op.Op, error) {
	if err := t.superCheck(c); err != nil {
		return nil, err
	}
	if (ns < 0 && ns != op.QuotaDontSet && ns != op.QuotaReset) || (ds < 0 && ds != op.QuotaDontSet && ds != op.QuotaReset) {
		return nil, newErr(fmt.Sprintf("Illegal value for nsQuota or ssQuota : %d and %d", ns, ds), ErrIllegalArgument)
	}
	w, err := t.resolveExisting(c, path, "Directory does not exist: %s")
	if err != nil {
		return nil, err
	}
	d := w.last()
	if !d.isDir() {
		return nil, newErr("`"+w.path+"': Is not a directory", ErrNotDir)
	}
	if w.isRoot() && ns == op.QuotaReset {
		return nil, newErr("Cannot clear namespace quota on root.", ErrIllegalArgument)
	}
	oldNS, oldDS := int64(-1), int64(-1)
	if q := d.dir().quota; q != nil {
		oldNS, oldDS = q.ns, q.ds
	}
	if ns == op.QuotaDontSet {
		ns = oldNS
	}
	if ds == op.QuotaDontSet {
		ds = oldDS
	}
	if ns == oldNS && ds == oldDS {
		return nil, nil
	}
	// The op carries the resulting quotas, as HDFS logs them.
	return []op.Op{&op.SetQuota{Path: w.path, NsQuota: ns, DsQuota: ds}}, nil
}

// ---- concat ----

// PlanConcat plans concat: the blocks of srcs, in order, appended to target and
// srcs deleted. All must be closed files of one directory; sources must have
// blocks and a preferred block size no larger than the target's.
func (t *Tree) PlanConcat(c Caller, target string, srcs []string, now int64) ([]op.Op, error) {
	if target == "" {
		return nil, newErr("Target file name is empty", ErrIllegalArgument)
	}
	if len(srcs) == 0 {
		return nil, newErr("No sources given", ErrIllegalArgument)
	}
	tw, err := t.resolve(target, false)
	if err != nil {
		return nil, err
	}
	if err := t.traverse(c, tw, false); err != nil {
		return nil, err
	}
	if err := t.checkPerm(c, tw, permCheck{self: Write}); err != nil {
		return nil, err
	}
	trg := tw.last()
	if trg == nil {
		return nil, notFound("File does not exist: %s", tw.path)
	}
	if trg.isDir() {
		return nil, newErr("Path is not a file: "+tw.path, ErrNotFound, ErrNotFile)
	}
	if trg.ucd() != nil {
		return nil, newErr("concat: target file "+tw.path+" is under construction", ErrIllegalArgument)
	}
	par := tw.parent()
	seen := make([]*inode, 0, len(srcs))
	paths := make([]string, 0, len(srcs))
	var dsDelta int64
	for _, s := range srcs {
		sw, err := t.resolve(s, false)
		if err != nil {
			return nil, err
		}
		if err := t.traverse(c, sw, false); err != nil {
			return nil, err
		}
		if err := t.checkPerm(c, sw, permCheck{self: Read, parent: Write}); err != nil {
			return nil, err
		}
		f := sw.last()
		if f == nil {
			return nil, notFound("File does not exist: %s", sw.path)
		}
		if f.isDir() {
			return nil, newErr("Path is not a file: "+sw.path, ErrNotFound, ErrNotFile)
		}
		if sw.parent() != par {
			return nil, newErr(fmt.Sprintf("Source file %s is not in the same directory with the target %s", sw.path, tw.path), ErrIllegalArgument)
		}
		if f == trg {
			return nil, newErr(fmt.Sprintf("concat: the src file %s is the same with the target file %s", sw.path, tw.path), ErrIllegalArgument)
		}
		if f.ucd() != nil || len(f.blocks()) == 0 {
			return nil, newErr("concat: source file "+sw.path+" is invalid or empty or underConstruction", ErrIllegalArgument)
		}
		if t.inSnapshot(sw) {
			return nil, newErr("Concat: the source file "+sw.path+" is in snapshot", ErrSnapshot)
		}
		if f.pref() > trg.pref() {
			return nil, newErr(fmt.Sprintf("concat: source file %s has preferred block size %d which is greater than the target file's preferred block size %d",
				sw.path, f.pref(), trg.pref()), ErrIllegalArgument)
		}
		if !slices.Contains(seen, f) {
			seen = append(seen, f)
			dsDelta += f.length() * (int64(trg.repl()) - int64(f.repl()))
		}
		paths = append(paths, sw.path)
	}
	if len(seen) < len(srcs) {
		return nil, newErr("concat: at least two of the source files are the same", ErrIllegalArgument)
	}
	if m := t.cfg.MaxBlocksPerFile; m > 0 {
		n := len(trg.blocks())
		for _, f := range seen {
			n += len(f.blocks())
		}
		if n > m {
			return nil, newErr(fmt.Sprintf("concat: the target file would have %d blocks, over the limit on maximum number of blocks (dfs.namenode.fs-limits.max-blocks-per-file) of %d", n, m), ErrIO)
		}
	}
	if err := t.verifyQuota(par, 0, dsDelta, nil); err != nil {
		return nil, err
	}
	if t.hasTypeQuotas {
		// The sources' blocks join the target, counted on the types the
		// target's policy and replication choose (FSDirConcatOp checks
		// the quotas by storage type too).
		inh := t.policyAlong(tw, len(tw.nodes)-2)
		before := t.typesUnder(trg, inh)
		per := trg.length()
		for _, f := range seen {
			x := t.typesUnder(f, inh)
			for i := range before {
				before[i] += x[i]
			}
			per += f.length()
		}
		trgPolicy := inh
		if p := t.ownPolicy(trg); p != op.StoragePolicyUnspecified {
			trgPolicy = p
		}
		var delta typeSpaces
		delta.add(trgPolicy, trg.repl(), per)
		for i := range delta {
			delta[i] -= before[i]
		}
		if err := t.verifyTypeDelta(tw, delta, nil); err != nil {
			return nil, err
		}
	}
	return []op.Op{&op.Concat{Target: tw.path, Srcs: paths, Mtime: now}}, nil
}

// ---- complete ----

// ucByIDOrPath finds the file a lease-holding call means: by inode id when the
// id names a file under construction, else by path (older clients send no id).
func (t *Tree) ucByIDOrPath(path string, fileID uint64) (*walk, error) {
	if f, ok := t.uc[fileID]; ok && fileID != 0 {
		return t.lookup(joinPath(dirPath(f.ucd().parent), f.name)), nil
	}
	return t.resolve(path, false)
}

// checkLease mirrors FSNamesystem.checkLease.
func (t *Tree) checkLease(w *walk, holder string, fileID uint64) (*inode, error) {
	ctx := fmt.Sprintf("%s (inode %d) Holder %s does not have any open files.", w.path, fileID, holder)
	f := w.last()
	switch {
	case f == nil:
		return nil, notFound("File does not exist: %s", ctx)
	case f.isDir():
		return nil, newErr("INode is not a regular file: "+ctx, ErrLeaseMismatch)
	case f.ucd() == nil:
		return f, newErr("File is not open for writing: "+ctx, ErrNotUnderConstruction)
	case f.ucd().client != holder:
		return nil, newErr(fmt.Sprintf("Client (=%s) is not the lease owner (=%s: %s", holder, f.ucd().client, ctx), ErrLeaseMismatch)
	}
	return f, nil
}

// PlanComplete plans complete for the lease holder clientName: an op.Close with
// the file's blocks, the last one committed with the length in last (nil for a
// file without blocks). Whether the blocks are replicated enough to close is the
// block manager's decision, made before logging. A repeated complete of a file
// already closed with the same last block is true with no ops (an RPC retry).
func (t *Tree) PlanComplete(c Caller, path, clientName string, fileID uint64, last *op.Block, now int64) (bool, []op.Op, error) {
	w, err := t.ucByIDOrPath(path, fileID)
	if err != nil {
		return false, nil, err
	}
	if err := t.traverse(c, w, false); err != nil {
		return false, nil, err
	}
	f, err := t.checkLease(w, clientName, fileID)
	if err != nil {
		if f != nil && f.ucd() == nil {
			switch {
			case len(f.blocks()) == 0 && last == nil:
				return true, nil, nil
			case len(f.blocks()) > 0 && last != nil:
				lb := f.blocks()[len(f.blocks())-1]
				if lb.ID == last.ID && lb.GenStamp == last.GenStamp {
					return true, nil, nil
				}
			}
		}
		return false, nil, err
	}
	blocks := cloneBlocks(f.blocks())
	switch {
	case len(blocks) == 0 && last != nil:
		return false, nil, newErr(fmt.Sprintf("Trying to commit block %d to %s, which has no blocks", last.ID, w.path), ErrBlockMismatch)
	case len(blocks) > 0 && last == nil:
		return false, nil, newErr(fmt.Sprintf("Cannot complete %s without its last block", w.path), ErrBlockMismatch)
	case len(blocks) > 0:
		lb := &blocks[len(blocks)-1]
		if lb.ID != last.ID {
			return false, nil, newErr(fmt.Sprintf("Trying to commit inconsistent block: id = %d, expected id = %d", last.ID, lb.ID), ErrBlockMismatch)
		}
		if lb.GenStamp != last.GenStamp {
			return false, nil, newErr(fmt.Sprintf("Commit block with mismatching GS. NN has blk_%d_%d, client submits blk_%d_%d",
				lb.ID, lb.GenStamp, last.ID, last.GenStamp), ErrBlockMismatch)
		}
		lb.NumBytes = last.NumBytes
	}
	return true, []op.Op{&op.Close{Path: w.path, Mtime: now, Atime: f.atime, Blocks: blocks}}, nil
}

// ---- blocks ----

// spaceWith is the quota space f would use with the given block list.
func spaceWith(f *inode, blocks []op.Block) int64 {
	return spaceOf(blocks, f.ucd() != nil, f.pref(), f.repl())
}

// PlanAddBlock plans addBlock for the lease holder clientName: it commits
// previous (the client's view of the current last block, with its final
// length; nil for the first block, or after an append that reopened no block)
// and allocates a new last block. The ops are op.AllocateBlockID,
// op.SetGenstamp and op.AddBlock; the new block is returned. Choosing targets is
// the caller's. A repeated call for a block already allocated (previous is
// the penultimate block and the last one is still empty) returns that block
// with no ops, as HDFS treats an allocation retry.
func (t *Tree) PlanAddBlock(c Caller, path, clientName string, fileID uint64, previous *op.Block) (op.Block, []op.Op, error) {
	w, err := t.ucByIDOrPath(path, fileID)
	if err != nil {
		return op.Block{}, nil, err
	}
	if err := t.traverse(c, w, false); err != nil {
		return op.Block{}, nil, err
	}
	f, err := t.checkLease(w, clientName, fileID)
	if err != nil {
		return op.Block{}, nil, err
	}
	n := len(f.blocks())
	var pen *op.Block
	retry := (previous == nil && n == 1 && f.blocks()[0].NumBytes == 0) ||
		(previous != nil && n >= 2 && f.blocks()[n-2].ID == previous.ID && f.blocks()[n-1].NumBytes == 0)
	if m := t.cfg.MaxBlocksPerFile; m > 0 && n >= m && !retry {
		return op.Block{}, nil, newErr(fmt.Sprintf("File has reached the limit on maximum number of blocks (dfs.namenode.fs-limits.max-blocks-per-file): %d >= %d", n, m), ErrIO)
	}
	switch {
	case previous == nil && n == 1 && f.blocks()[0].NumBytes == 0:
		return f.blocks()[0], nil, nil // retry of the first allocation
	case previous != nil && n >= 2 && f.blocks()[n-2].ID == previous.ID && f.blocks()[n-1].NumBytes == 0:
		return f.blocks()[n-1], nil, nil // retry
	case previous != nil:
		if n == 0 || f.blocks()[n-1].ID != previous.ID {
			return op.Block{}, nil, newErr(fmt.Sprintf("Previous block blk_%d_%d is not the last block of %s", previous.ID, previous.GenStamp, w.path), ErrBlockMismatch)
		}
		if f.blocks()[n-1].GenStamp != previous.GenStamp {
			return op.Block{}, nil, newErr(fmt.Sprintf("Commit block with mismatching GS. NN has blk_%d_%d, client submits blk_%d_%d",
				f.blocks()[n-1].ID, f.blocks()[n-1].GenStamp, previous.ID, previous.GenStamp), ErrBlockMismatch)
		}
		p := f.blocks()[n-1]
		p.NumBytes = previous.NumBytes
		pen = &p
	case n > 0:
		p := f.blocks()[n-1]
		pen = &p // the last block stays as it is
	}
	nb := op.Block{ID: t.lastBlockID + 1, GenStamp: t.genStamp + 1}
	blocks := append(cloneBlocks(f.blocks()), nb)
	if pen != nil {
		blocks[n-1] = *pen
	}
	if err := t.verifyQuota(w.parent(), 0, spaceWith(f, blocks)-f.space(), nil); err != nil {
		return op.Block{}, nil, err
	}
	if f.repl() > 0 {
		if err := t.verifyTypeQuota(w, f, (spaceWith(f, blocks)-f.space())/int64(f.repl())); err != nil {
			return op.Block{}, nil, err
		}
	}
	return nb, []op.Op{
		&op.AllocateBlockID{BlockID: nb.ID},
		&op.SetGenstamp{GenStamp: nb.GenStamp},
		&op.AddBlock{Path: w.path, Penultimate: pen, Last: nb},
	}, nil
}

// PlanTruncate plans truncate to newLength for clientName. On a block boundary
// (or at the current length) it reports true: the file stays closed. Otherwise
// the block holding the cut gets a new generation stamp (an op.SetGenstamp
// precedes the op.Truncate), the file is open for clientName until block
// recovery closes it, and it reports false. The truncated block is recorded
// with its new length at once. When a snapshot holds that block, the cut is
// a copy-on-truncate: an op.AllocateBlockID precedes the stamp, and the
// truncate block is a new block (see "Copy-on-truncate" in the package doc).
func (t *Tree) PlanTruncate(c Caller, path string, newLength int64, clientName, clientMachine string, now int64) (bool, []op.Op, error) {
	if newLength < 0 {
		return false, nil, newErr(fmt.Sprintf("Cannot truncate to a negative file size: %d.", newLength), ErrIllegalArgument)
	}
	w, err := t.resolve(path, false)
	if err != nil {
		return false, nil, err
	}
	if err := t.traverse(c, w, false); err != nil {
		return false, nil, err
	}
	if err := t.checkPerm(c, w, permCheck{self: Write}); err != nil {
		return false, nil, err
	}
	f := w.last()
	if f == nil {
		return false, nil, notFound("File does not exist: %s", w.path)
	}
	if f.isDir() {
		return false, nil, newErr("Path is not a file: "+w.path, ErrNotFound, ErrNotFile)
	}
	if f.ucd() != nil {
		return false, nil, beingCreated("TRUNCATE_FILE", w.path, clientName, clientMachine, f.ucd())
	}
	old := f.length()
	if old == newLength {
		return true, nil, nil
	}
	if old < newLength {
		return false, nil, newErr(fmt.Sprintf("Cannot truncate to a larger file size. Current size: %d, truncate size: %d.", old, newLength), ErrIllegalArgument)
	}
	tr := &op.Truncate{Path: w.path, ClientName: clientName, ClientMachine: clientMachine, NewLength: newLength, Mtime: now}
	var off int64
	for _, b := range f.blocks() {
		if off+b.NumBytes > newLength {
			if off == newLength {
				break
			}
			gs := t.genStamp + 1
			if t.wouldHold(w, f, b.ID) {
				// Copy-on-truncate: the snapshot keeps b whole; the
				// file's last block becomes a new block of the new length.
				nb := op.Block{ID: t.lastBlockID + 1, NumBytes: newLength - off, GenStamp: gs}
				tr.TruncateBlock = &nb
				return false, []op.Op{&op.AllocateBlockID{BlockID: nb.ID}, &op.SetGenstamp{GenStamp: gs}, tr}, nil
			}
			tr.TruncateBlock = &op.Block{ID: b.ID, NumBytes: newLength - off, GenStamp: gs}
			return false, []op.Op{&op.SetGenstamp{GenStamp: gs}, tr}, nil
		}
		off += b.NumBytes
	}
	return true, []op.Op{tr}, nil
}
