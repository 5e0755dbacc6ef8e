package namespace

import (
	"fmt"
	"slices"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// Access is a set of permission bits to check: Read, Write, Execute (Hadoop's FsAction).
type Access uint16

// Access bits.
const (
	Execute Access = 1
	Write   Access = 2
	Read    Access = 4
)

var actionNames = [8]string{"NONE", "EXECUTE", "WRITE", "WRITE_EXECUTE", "READ", "READ_EXECUTE", "READ_WRITE", "ALL"}

func (a Access) String() string { return actionNames[a&7] }

// ModeString renders permission bits as FsPermission.toString does ("rwxr-xr-t").
func ModeString(mode uint16) string {
	const s = "rwxrwxrwx"
	b := []byte("---------")
	for i := 0; i < 9; i++ {
		if mode&(1<<(8-i)) != 0 {
			b[i] = s[i]
		}
	}
	if mode&0o1000 != 0 {
		if mode&1 != 0 {
			b[8] = 't'
		} else {
			b[8] = 'T'
		}
	}
	return string(b)
}

// isSuper reports whether c bypasses permission checks.
func (t *Tree) isSuper(c Caller) bool {
	if c.Super || (c.User != "" && c.User == t.cfg.SuperUser) {
		return true
	}
	return t.cfg.SuperGroup != "" && slices.Contains(c.Groups, t.cfg.SuperGroup)
}

// checking reports whether permission checks apply to c.
func (t *Tree) checking(c Caller) bool { return t.cfg.PermissionsEnabled && !t.isSuper(c) }

func (t *Tree) hasAccess(c Caller, n *inode, a Access) bool {
	if len(t.feats) > 0 {
		if f := t.feats[n]; f != nil && f.acl != nil && f.acl.entries[0].Scope == op.ACLAccess {
			return t.aclAccess(c, n, f.acl.entries, a)
		}
	}
	m := Access(n.mode)
	switch {
	case c.User == t.userOf(n):
		m >>= 6
	case slices.Contains(c.Groups, t.groupOf(n)):
		m >>= 3
	}
	return m&a == a
}

func typeChar(n *inode) string {
	if n.isDir() {
		return "d"
	}
	return "-"
}

func (t *Tree) denied(c Caller, n *inode, path string, a Access) error {
	return newErr(fmt.Sprintf("Permission denied: user=%s, access=%s, inode=%q:%s:%s:%s%s",
		c.User, a, path, t.userOf(n), t.groupOf(n), typeChar(n), ModeString(n.mode)), ErrPermission)
}

func (t *Tree) check(c Caller, w *walk, i int, a Access) error {
	n := w.nodes[i]
	if n == nil || t.hasAccess(c, n, a) {
		return nil
	}
	return t.denied(c, n, w.prefix(i), a)
}

// traverse checks that every existing ancestor of the last component is a
// directory and, when checking, grants EXECUTE. A file in the middle of the path
// is ParentNotDirectoryException for operations that create (create=true) and an
// AccessControlException otherwise, as Hadoop reports it.
func (t *Tree) traverse(c Caller, w *walk, create bool) error {
	chk := t.checking(c)
	for i := 0; i < len(w.nodes)-1; i++ {
		n := w.nodes[i]
		if n == nil {
			break
		}
		if !n.isDir() {
			msg := w.prefix(i) + " (is not a directory)"
			if create {
				return newErr(msg, ErrParentNotDir)
			}
			return newErr(msg, ErrPermission)
		}
		if chk {
			if err := t.check(c, w, i, Execute); err != nil {
				return err
			}
		}
	}
	return nil
}

// permCheck mirrors FSPermissionChecker.checkPermission (after traverse): access
// on the nearest existing ancestor, on the parent (with the sticky-bit rule when
// it includes WRITE), on the inode itself, on every directory of its subtree,
// and ownership. Zero Access values are not checked.
type permCheck struct {
	owner          bool
	ancestor       Access
	parent         Access
	self           Access
	sub            Access
	ignoreEmptyDir bool
}

func (t *Tree) checkPerm(c Caller, w *walk, pc permCheck) error {
	if !t.checking(c) {
		return nil
	}
	n := len(w.nodes)
	last := w.last()
	if pc.parent&Write != 0 && n > 1 && last != nil && w.nodes[n-2] != nil {
		if err := t.stickyCheck(c, w); err != nil {
			return err
		}
	}
	if pc.ancestor != 0 && n > 1 {
		i := n - 2
		for i > 0 && w.nodes[i] == nil {
			i--
		}
		if err := t.check(c, w, i, pc.ancestor); err != nil {
			return err
		}
	}
	if pc.parent != 0 && n > 1 {
		if err := t.check(c, w, n-2, pc.parent); err != nil {
			return err
		}
	}
	if pc.self != 0 {
		if err := t.check(c, w, n-1, pc.self); err != nil {
			return err
		}
	}
	if pc.sub != 0 && last != nil && last.isDir() {
		if err := t.subCheck(c, last, w.path, pc.sub, pc.ignoreEmptyDir); err != nil {
			return err
		}
	}
	if pc.owner && last != nil && c.User != t.userOf(last) {
		return newErr(fmt.Sprintf("Permission denied. user=%s is not the owner of inode=%s", c.User, w.path), ErrPermission)
	}
	return nil
}

func (t *Tree) stickyCheck(c Caller, w *walk) error {
	parent, n := w.parent(), w.last()
	if parent.mode&0o1000 == 0 || c.User == t.userOf(parent) || c.User == t.userOf(n) {
		return nil
	}
	return newErr(fmt.Sprintf("Permission denied by sticky bit: user=%s, path=%q:%s:%s:%s%s, parent=%q:%s:%s:%s%s",
		c.User, w.path, t.userOf(n), t.groupOf(n), typeChar(n), ModeString(n.mode),
		w.parentPath(), t.userOf(parent), t.groupOf(parent), typeChar(parent), ModeString(parent.mode)), ErrPermission)
}

func (t *Tree) subCheck(c Caller, d *inode, path string, a Access, ignoreEmpty bool) error {
	if !(ignoreEmpty && d.dir().children.len() == 0) && !t.hasAccess(c, d, a) {
		return t.denied(c, d, path, a)
	}
	if d.dir().sub.dirs == 1 {
		return nil // no directory below: nothing more to check
	}
	for ch := range d.dir().children.all() {
		if ch.isDir() {
			if err := t.subCheck(c, ch, joinPath(path, ch.name), a, ignoreEmpty); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *Tree) superCheck(c Caller) error {
	if !t.checking(c) {
		return nil
	}
	return newErr("Access denied for user "+c.User+". Superuser privilege is required", ErrPermission)
}

// CheckAccess checks that c may traverse to path and holds a on it (Hadoop's
// checkPathAccess; getBlockLocations uses Read). A missing path is ErrNotFound.
func (t *Tree) CheckAccess(c Caller, path string, a Access) error {
	if t.maybeSnapPath(path) {
		if v, ok, err := t.resolveSnap(c, path); ok {
			switch {
			case err != nil:
				return err
			case a&Write != 0:
				return newErr("Modification on a read-only snapshot is disallowed", ErrSnapshotAccess)
			case v.s == nil || !t.checking(c) || t.viewAccess(c, v.node, v.s.id, a):
				return nil
			}
			return t.denied(c, v.node.at, v.path, a)
		}
	}
	w, err := t.resolve(path, false)
	if err != nil {
		return err
	}
	if err := t.traverse(c, w, false); err != nil {
		return err
	}
	if w.last() == nil {
		return notFound("File does not exist: %s", w.path)
	}
	return t.checkPerm(c, w, permCheck{self: a})
}
