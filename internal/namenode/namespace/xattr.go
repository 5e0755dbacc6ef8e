package namespace

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// XAttr set flags, as XAttrSetFlagProto numbers them.
const (
	XAttrCreate  uint32 = 1
	XAttrReplace uint32 = 2
)

// ReservedRawPrefix is HDFS's path prefix under which the raw. namespace of
// extended attributes is visible (superusers only).
const ReservedRawPrefix = "/.reserved/raw"

// unreadableBySuper is the security. attribute a user may set without a
// value on a file (HDFS's SECURITY_XATTR_UNREADABLE_BY_SUPERUSER).
const unreadableBySuper = "unreadable.by.superuser"

var xattrPrefixes = [...]string{op.XAttrUser: "user", op.XAttrTrusted: "trusted", op.XAttrSecurity: "security",
	op.XAttrSystem: "system", op.XAttrRaw: "raw"}

// XAttrName returns an attribute's name with its namespace prefix, e.g.
// "user.color".
func XAttrName(x op.XAttr) string {
	if int(x.NS) < len(xattrPrefixes) {
		return xattrPrefixes[x.NS] + "." + x.Name
	}
	return x.Name
}

// ParseXAttrName splits "user.color" into its namespace and name, as HDFS
// clients do (the prefix is case-insensitive).
func ParseXAttrName(s string) (op.XAttr, error) {
	i := strings.IndexByte(s, '.')
	if i > 0 {
		p := strings.ToLower(s[:i])
		for ns, name := range xattrPrefixes {
			if p == name && i+1 < len(s) {
				return op.XAttr{NS: uint8(ns), Name: s[i+1:]}, nil
			}
		}
	}
	return op.XAttr{}, newErr("An XAttr name must be prefixed with user/trusted/security/system/raw, followed by a '.'", ErrIllegalArgument)
}

// stripRaw removes the /.reserved/raw prefix: raw reports whether it was
// there. Only superusers may use such paths.
func (t *Tree) stripRaw(c Caller, path string) (string, bool, error) {
	if path != ReservedRawPrefix && !strings.HasPrefix(path, ReservedRawPrefix+"/") {
		return path, false, nil
	}
	if !t.isSuper(c) {
		return "", false, newErr("Access denied for user "+c.User+". Superuser privilege is required", ErrPermission)
	}
	p := strings.TrimPrefix(path, ReservedRawPrefix)
	if p == "" {
		p = "/"
	}
	return p, true, nil
}

// xattrAllowed is HDFS's XAttrPermissionFilter for one attribute named in a
// call: user. for everyone, trusted. for superusers, raw. under
// /.reserved/raw, security.unreadable.by.superuser without a value.
func (t *Tree) xattrAllowed(c Caller, x op.XAttr, raw bool) error {
	switch {
	case x.NS == op.XAttrUser, x.NS == op.XAttrTrusted && t.isSuper(c), x.NS == op.XAttrRaw && raw:
		return nil
	case x.NS == op.XAttrSecurity && x.Name == unreadableBySuper:
		if x.Value != nil {
			return newErr("Attempt to set a value for 'security."+unreadableBySuper+"'. Values are not allowed for this xattr.", ErrPermission)
		}
		return nil
	}
	return newErr("User doesn't have permission for xattr: "+XAttrName(x), ErrPermission)
}

// xattrVisible filters what getXAttrs and listXAttrs return.
func (t *Tree) xattrVisible(c Caller, x op.XAttr, raw bool) bool {
	switch x.NS {
	case op.XAttrUser:
		return true
	case op.XAttrTrusted:
		return t.isSuper(c)
	case op.XAttrRaw:
		return raw
	case op.XAttrSecurity:
		return x.Name == unreadableBySuper
	}
	return false
}

func (t *Tree) checkXAttrsEnabled() error {
	if !t.cfg.XAttrsEnabled {
		return newErr("The XAttr operation has been rejected.  Support for XAttrs has been disabled by setting dfs.namenode.xattrs.enabled to false.", ErrIO)
	}
	return nil
}

// xattrTarget resolves the inode of an xattr call (traverse checked).
func (t *Tree) xattrTarget(c Caller, path string) (*walk, error) {
	w, err := t.resolve(path, false)
	if err != nil {
		return nil, err
	}
	if err := t.traverse(c, w, false); err != nil {
		return nil, err
	}
	if w.last() == nil {
		return nil, notFound("cannot find %s", w.path)
	}
	return w, nil
}

// xattrChangeAccess: changing a user. attribute needs WRITE on the inode,
// or, on a directory with the sticky bit, ownership.
func (t *Tree) xattrChangeAccess(c Caller, w *walk, x op.XAttr) error {
	if x.NS != op.XAttrUser {
		return nil
	}
	n := w.last()
	if n.isDir() && n.mode&0o1000 != 0 {
		return t.checkPerm(c, w, permCheck{owner: true})
	}
	return t.checkPerm(c, w, permCheck{self: Write})
}

func sameXAttr(a, b op.XAttr) bool { return a.NS == b.NS && a.Name == b.Name }

func userVisible(x op.XAttr) bool { return x.NS == op.XAttrUser || x.NS == op.XAttrTrusted }

// PlanSetXAttr plans setXAttr of x on path with flag (XAttrCreate,
// XAttrReplace or both), with HDFS's checks and messages.
func (t *Tree) PlanSetXAttr(c Caller, path string, x op.XAttr, flag uint32) ([]op.Op, error) {
	if err := t.checkXAttrsEnabled(); err != nil {
		return nil, err
	}
	size := len(x.Name) + len(x.Value)
	if t.cfg.MaxXAttrSize > 0 && size > t.cfg.MaxXAttrSize {
		return nil, newErr(fmt.Sprintf("The XAttr is too big. The maximum combined size of the name and value is %d, but the total size is %d",
			t.cfg.MaxXAttrSize, size), ErrIllegalArgument)
	}
	p, raw, err := t.stripRaw(c, path)
	if err != nil {
		return nil, err
	}
	if err := t.xattrAllowed(c, x, raw); err != nil {
		return nil, err
	}
	w, err := t.xattrTarget(c, p)
	if err != nil {
		return nil, err
	}
	if err := t.xattrChangeAccess(c, w, x); err != nil {
		return nil, err
	}
	n := w.last()
	if x.NS == op.XAttrSecurity && x.Name == unreadableBySuper && n.isDir() {
		return nil, newErr("Can only set 'security."+unreadableBySuper+"' on a file.", ErrIO)
	}
	var existing []op.XAttr
	if f := t.featuresOf(n); f != nil {
		existing = f.xattrs
	}
	exists := false
	visible := 0
	for _, e := range existing {
		if sameXAttr(e, x) {
			exists = true
			continue
		}
		if userVisible(e) {
			visible++
		}
	}
	if userVisible(x) {
		visible++
	}
	switch {
	case flag&(XAttrCreate|XAttrReplace) == 0:
		return nil, newErr("A flag must be specified.", ErrIO)
	case exists && flag&XAttrReplace == 0:
		return nil, newErr("XAttr: "+x.Name+" already exists. The REPLACE flag must be specified.", ErrIO)
	case !exists && flag&XAttrCreate == 0:
		return nil, newErr("XAttr: "+x.Name+" does not exist. The CREATE flag must be specified.", ErrIO)
	}
	if t.cfg.MaxXAttrsPerInode > 0 && visible > t.cfg.MaxXAttrsPerInode {
		return nil, newErr(fmt.Sprintf("Cannot add additional XAttr to inode, would exceed limit of %d", t.cfg.MaxXAttrsPerInode), ErrIO)
	}
	if x.Value == nil {
		x.Value = []byte{}
	}
	return []op.Op{&op.SetXAttr{Path: w.path, XAttrs: []op.XAttr{x}}}, nil
}

// PlanRemoveXAttr plans removeXAttr of x (its value is ignored).
func (t *Tree) PlanRemoveXAttr(c Caller, path string, x op.XAttr) ([]op.Op, error) {
	if err := t.checkXAttrsEnabled(); err != nil {
		return nil, err
	}
	p, raw, err := t.stripRaw(c, path)
	if err != nil {
		return nil, err
	}
	x.Value = nil
	if err := t.xattrAllowed(c, x, raw); err != nil {
		return nil, err
	}
	w, err := t.xattrTarget(c, p)
	if err != nil {
		return nil, err
	}
	if err := t.xattrChangeAccess(c, w, x); err != nil {
		return nil, err
	}
	if x.NS == op.XAttrSecurity && x.Name == unreadableBySuper {
		return nil, newErr("The xattr 'security."+unreadableBySuper+"' can not be deleted.", ErrPermission)
	}
	if f := t.featuresOf(w.last()); f != nil {
		for _, e := range f.xattrs {
			if sameXAttr(e, x) {
				return []op.Op{&op.RemoveXAttr{Path: w.path, XAttrs: []op.XAttr{x}}}, nil
			}
		}
	}
	return nil, newErr("No matching attributes found for remove operation", ErrIO)
}

// readXAttrs resolves path for getXAttrs and listXAttrs (READ on the inode)
// and returns the attributes c may see.
func (t *Tree) readXAttrs(c Caller, path string) ([]op.XAttr, bool, error) {
	if err := t.checkXAttrsEnabled(); err != nil {
		return nil, false, err
	}
	p, raw, err := t.stripRaw(c, path)
	if err != nil {
		return nil, false, err
	}
	var xs []op.XAttr
	if v, ok, err := t.snapRead(c, p, Read); ok {
		if err != nil {
			return nil, false, err
		}
		_, xs, _ = t.sviewFeats(v)
	} else {
		w, err := t.xattrTarget(c, p)
		if err != nil {
			return nil, false, err
		}
		if err := t.checkPerm(c, w, permCheck{self: Read}); err != nil {
			return nil, false, err
		}
		if f := t.featuresOf(w.last()); f != nil {
			xs = f.xattrs
		}
	}
	var out []op.XAttr
	for _, x := range xs {
		if t.xattrVisible(c, x, raw) {
			out = append(out, op.XAttr{NS: x.NS, Name: x.Name, Value: append([]byte{}, x.Value...)})
		}
	}
	return out, raw, nil
}

// ListXAttrs returns the attributes of path that c may see, with their
// values (HDFS's listXAttrs answer carries them).
func (t *Tree) ListXAttrs(c Caller, path string) ([]op.XAttr, error) {
	xs, _, err := t.readXAttrs(c, path)
	return xs, err
}

// GetXAttrs returns the named attributes of path (all that c may see when
// names is empty), with HDFS's checks and messages.
func (t *Tree) GetXAttrs(c Caller, path string, names []op.XAttr) ([]op.XAttr, error) {
	if len(names) > 0 {
		if err := t.checkXAttrsEnabled(); err != nil {
			return nil, err
		}
		_, raw, err := t.stripRaw(c, path)
		if err != nil {
			return nil, err
		}
		for _, x := range names {
			x.Value = nil
			if err := t.xattrAllowed(c, x, raw); err != nil {
				return nil, err
			}
		}
	}
	all, _, err := t.readXAttrs(c, path)
	if err != nil || len(names) == 0 {
		return all, err
	}
	notFound := newErr("At least one of the attributes provided was not found.", ErrIO)
	out := make([]op.XAttr, 0, len(names))
	for _, want := range names {
		found := false
		for _, x := range all {
			if sameXAttr(x, want) {
				out = append(out, x)
				found = true
				break
			}
		}
		if !found {
			return nil, notFound
		}
	}
	return out, nil
}

// applySetXAttr and applyRemoveXAttr build a new attribute list instead
// of changing the old one in place: a snapshot's saved version may share
// the old list.
func (t *Tree) applySetXAttr(o *op.SetXAttr) error {
	w, n, err := t.existing(o.Path)
	if err != nil {
		return err
	}
	t.cow(w)
	f := t.mutFeatures(n)
	xs := slices.Clone(f.xattrs)
	for _, x := range o.XAttrs {
		x = op.XAttr{NS: x.NS, Name: strings.Clone(x.Name), Value: cloneValue(x.Value)}
		replaced := false
		for i := range xs {
			if sameXAttr(xs[i], x) {
				xs[i] = x
				replaced = true
				break
			}
		}
		if !replaced {
			xs = append(xs, x)
		}
	}
	f.xattrs = xs
	t.settle(n)
	return nil
}

func (t *Tree) applyRemoveXAttr(o *op.RemoveXAttr) error {
	w, n, err := t.existing(o.Path)
	if err != nil {
		return err
	}
	f := t.featuresOf(n)
	if f == nil {
		return nil
	}
	t.cow(w)
	var kept []op.XAttr
	for _, x := range f.xattrs {
		drop := false
		for _, r := range o.XAttrs {
			if sameXAttr(x, r) {
				drop = true
				break
			}
		}
		if !drop {
			kept = append(kept, x)
		}
	}
	f.xattrs = kept
	t.settle(n)
	return nil
}
