package namespace

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// ACLs as HDFS has them (AclTransformation, AclStorage, the permission
// checker's checkAccessAcl). An inode's logical ACL is its permission bits
// plus its aclFeature: owner entry = user bits, the feature's access
// entries (named users, the owning group, named groups), mask = group bits
// when the feature has access entries (else the group bits are the owning
// group's entry), other entry = other bits, then the default entries.

// MaxACLEntries is HDFS's limit on the entries of one scope of an ACL.
const MaxACLEntries = 32

// ACLEntryString is Hadoop's AclEntry text: "[default:]type:name:perm".
func ACLEntryString(e op.ACLEntry) string {
	var b strings.Builder
	if e.Scope == op.ACLDefault {
		b.WriteString("default:")
	}
	b.WriteString([...]string{"user", "group", "mask", "other"}[e.Type&3])
	b.WriteByte(':')
	b.WriteString(e.Name)
	b.WriteByte(':')
	b.WriteString(permSymbol(e.Perm))
	return b.String()
}

func permSymbol(p uint8) string {
	s := []byte("---")
	if p&4 != 0 {
		s[0] = 'r'
	}
	if p&2 != 0 {
		s[1] = 'w'
	}
	if p&1 != 0 {
		s[2] = 'x'
	}
	return string(s)
}

// aclLess is HDFS's ACL order: access before default; user, group, mask,
// other; the unnamed entry before the named ones, which sort by name.
func aclCompare(a, b op.ACLEntry) int {
	if a.Scope != b.Scope {
		return int(a.Scope) - int(b.Scope)
	}
	if a.Type != b.Type {
		return int(a.Type) - int(b.Type)
	}
	return strings.Compare(a.Name, b.Name)
}

func sameKey(a, b op.ACLEntry) bool { return aclCompare(a, b) == 0 }

// logicalACL is the full ACL of n, sorted.
func (t *Tree) logicalACL(n *inode) []op.ACLEntry {
	m := n.mode
	user := op.ACLEntry{Type: op.ACLUser, Perm: uint8(m >> 6 & 7)}
	other := op.ACLEntry{Type: op.ACLOther, Perm: uint8(m & 7)}
	var feat []op.ACLEntry
	if f := t.featuresOf(n); f != nil && f.acl != nil {
		feat = f.acl.entries
	}
	out := []op.ACLEntry{user}
	hasAccess := false
	for _, e := range feat {
		if e.Scope == op.ACLAccess {
			out = append(out, e)
			hasAccess = true
		}
	}
	if hasAccess {
		out = append(out, op.ACLEntry{Type: op.ACLMask, Perm: uint8(m >> 3 & 7)})
	} else {
		out = append(out, op.ACLEntry{Type: op.ACLGroup, Perm: uint8(m >> 3 & 7)})
	}
	out = append(out, other)
	for _, e := range feat {
		if e.Scope == op.ACLDefault {
			out = append(out, e)
		}
	}
	return out
}

func aclErr(msg string) error { return newErr(msg, ErrACL) }

// validateSpec checks an ACL spec: size and duplicates.
func validateSpec(spec []op.ACLEntry) ([]op.ACLEntry, error) {
	if len(spec) > MaxACLEntries {
		return nil, aclErr(fmt.Sprintf("Invalid ACL: ACL spec has %d entries, which exceeds maximum of %d.", len(spec), MaxACLEntries))
	}
	s := slices.Clone(spec)
	slices.SortStableFunc(s, aclCompare)
	for i := 1; i < len(s); i++ {
		if sameKey(s[i-1], s[i]) {
			return nil, aclErr("Invalid ACL: multiple entries with same scope, type and name.")
		}
	}
	return s, nil
}

func findKey(s []op.ACLEntry, e op.ACLEntry) (op.ACLEntry, bool) {
	for _, x := range s {
		if sameKey(x, e) {
			return x, true
		}
	}
	return op.ACLEntry{}, false
}

// aclBuild carries an ACL being transformed.
type aclBuild struct {
	entries    []op.ACLEntry
	mask       [2]*op.ACLEntry // provided mask per scope
	maskDirty  [2]bool
	scopeDirty [2]bool
}

func (b *aclBuild) copyDefaultsIfNeeded() {
	slices.SortStableFunc(b.entries, aclCompare)
	hasDefault := false
	for _, e := range b.entries {
		if e.Scope == op.ACLDefault {
			hasDefault = true
		}
	}
	if !hasDefault {
		return
	}
	var add []op.ACLEntry
	for _, typ := range []uint8{op.ACLUser, op.ACLGroup, op.ACLOther} {
		if _, ok := findKey(b.entries, op.ACLEntry{Scope: op.ACLDefault, Type: typ}); ok {
			continue
		}
		if a, ok := findKey(b.entries, op.ACLEntry{Scope: op.ACLAccess, Type: typ}); ok {
			add = append(add, op.ACLEntry{Scope: op.ACLDefault, Type: typ, Perm: a.Perm})
		}
	}
	b.entries = append(b.entries, add...)
}

func (b *aclBuild) calculateMasks() error {
	var found, needed [2]bool
	var union [2]uint8
	for _, e := range b.entries {
		found[e.Scope] = true
		if e.Type == op.ACLGroup || e.Name != "" {
			union[e.Scope] |= e.Perm
		}
		if e.Name != "" {
			needed[e.Scope] = true
		}
	}
	for sc := 0; sc < 2; sc++ {
		if !found[sc] {
			continue
		}
		switch {
		case b.mask[sc] == nil && needed[sc] && b.maskDirty[sc]:
			return aclErr("Invalid ACL: mask is required and cannot be deleted if the ACL has named entries.")
		case b.mask[sc] != nil && (!b.scopeDirty[sc] || b.maskDirty[sc]):
			b.entries = append(b.entries, *b.mask[sc])
		case needed[sc] || b.mask[sc] != nil:
			b.entries = append(b.entries, op.ACLEntry{Scope: uint8(sc), Type: op.ACLMask, Perm: union[sc]})
		}
	}
	return nil
}

// finish is HDFS's buildAndValidateAcl.
func (b *aclBuild) finish() ([]op.ACLEntry, error) {
	es := b.entries
	if len(es) > MaxACLEntries {
		return nil, aclErr(fmt.Sprintf("Invalid ACL: ACL has %d entries, which exceeds maximum of %d.", len(es), MaxACLEntries))
	}
	slices.SortStableFunc(es, aclCompare)
	for i, e := range es {
		if i > 0 && sameKey(es[i-1], e) {
			return nil, aclErr("Invalid ACL: multiple entries with same scope, type and name.")
		}
		if e.Name != "" && (e.Type == op.ACLMask || e.Type == op.ACLOther) {
			return nil, aclErr("Invalid ACL: this entry type must not have a name: " + ACLEntryString(e) + ".")
		}
	}
	hasDefault := false
	for _, e := range es {
		if e.Scope == op.ACLDefault {
			hasDefault = true
		}
	}
	for _, typ := range []uint8{op.ACLUser, op.ACLGroup, op.ACLOther} {
		if _, ok := findKey(es, op.ACLEntry{Scope: op.ACLAccess, Type: typ}); !ok {
			return nil, aclErr("Invalid ACL: the user, group and other entries are required.")
		}
		if hasDefault {
			if _, ok := findKey(es, op.ACLEntry{Scope: op.ACLDefault, Type: typ}); !ok {
				return nil, aclErr("Invalid default ACL: the user, group and other entries are required.")
			}
		}
	}
	return es, nil
}

func (b *aclBuild) keepMask(e op.ACLEntry) {
	m := e
	b.mask[e.Scope] = &m
}

// mergeACL is modifyAclEntries' transformation.
func mergeACL(existing, spec []op.ACLEntry) ([]op.ACLEntry, error) {
	spec, err := validateSpec(spec)
	if err != nil {
		return nil, err
	}
	b := &aclBuild{}
	var foundSpec []op.ACLEntry
	for _, ex := range existing {
		if s, ok := findKey(spec, ex); ok {
			foundSpec = append(foundSpec, s)
			b.scopeDirty[s.Scope] = true
			if s.Type == op.ACLMask {
				b.keepMask(s)
				b.maskDirty[s.Scope] = true
			} else {
				b.entries = append(b.entries, s)
			}
			continue
		}
		if ex.Type == op.ACLMask {
			b.keepMask(ex)
		} else {
			b.entries = append(b.entries, ex)
		}
	}
	for _, s := range spec {
		if _, ok := findKey(foundSpec, s); ok {
			continue
		}
		b.scopeDirty[s.Scope] = true
		if s.Type == op.ACLMask {
			b.keepMask(s)
			b.maskDirty[s.Scope] = true
		} else {
			b.entries = append(b.entries, s)
		}
	}
	b.copyDefaultsIfNeeded()
	if err := b.calculateMasks(); err != nil {
		return nil, err
	}
	return b.finish()
}

// filterACL is removeAclEntries' transformation.
func filterACL(existing, spec []op.ACLEntry) ([]op.ACLEntry, error) {
	spec, err := validateSpec(spec)
	if err != nil {
		return nil, err
	}
	b := &aclBuild{}
	for _, ex := range existing {
		if _, ok := findKey(spec, ex); ok {
			b.scopeDirty[ex.Scope] = true
			if ex.Type == op.ACLMask {
				b.maskDirty[ex.Scope] = true
			}
			continue
		}
		if ex.Type == op.ACLMask {
			b.keepMask(ex)
		} else {
			b.entries = append(b.entries, ex)
		}
	}
	b.copyDefaultsIfNeeded()
	if err := b.calculateMasks(); err != nil {
		return nil, err
	}
	return b.finish()
}

// replaceACL is setAcl's transformation: each scope the spec names is
// replaced, the other is kept.
func replaceACL(existing, spec []op.ACLEntry) ([]op.ACLEntry, error) {
	spec, err := validateSpec(spec)
	if err != nil {
		return nil, err
	}
	b := &aclBuild{}
	for _, s := range spec {
		b.scopeDirty[s.Scope] = true
		if s.Type == op.ACLMask {
			b.keepMask(s)
			b.maskDirty[s.Scope] = true
		} else {
			b.entries = append(b.entries, s)
		}
	}
	for _, ex := range existing {
		if b.scopeDirty[ex.Scope] {
			continue
		}
		if ex.Type == op.ACLMask {
			b.keepMask(ex)
		} else {
			b.entries = append(b.entries, ex)
		}
	}
	b.copyDefaultsIfNeeded()
	if err := b.calculateMasks(); err != nil {
		return nil, err
	}
	return b.finish()
}

func (t *Tree) checkACLsEnabled() error {
	if !t.cfg.ACLsEnabled {
		return newErr("The ACL operation has been rejected.  Support for ACLs has been disabled by setting dfs.namenode.acls.enabled to false.", ErrACL)
	}
	return nil
}

// aclTarget resolves the inode of an ACL change: it must exist, and the
// caller must own it (or be a superuser).
func (t *Tree) aclTarget(c Caller, p string) (*walk, error) {
	if err := t.checkACLsEnabled(); err != nil {
		return nil, err
	}
	w, err := t.resolveExisting(c, p, "cannot find %s")
	if err != nil {
		return nil, err
	}
	if err := t.checkPerm(c, w, permCheck{owner: true}); err != nil {
		return nil, err
	}
	return w, nil
}

// planACL plans an ACL change computed by transform from the inode's
// logical ACL.
func (t *Tree) planACL(c Caller, p string, transform func([]op.ACLEntry) ([]op.ACLEntry, error)) ([]op.Op, error) {
	w, err := t.aclTarget(c, p)
	if err != nil {
		return nil, err
	}
	n := w.last()
	acl, err := transform(t.logicalACL(n))
	if err != nil {
		return nil, err
	}
	if !n.isDir() {
		for _, e := range acl {
			if e.Scope == op.ACLDefault {
				return nil, aclErr("Invalid ACL: only directories may have a default ACL. Path: " + w.path)
			}
		}
	}
	return []op.Op{&op.SetACL{Path: w.path, Entries: acl}}, nil
}

// PlanModifyACLEntries plans modifyAclEntries.
func (t *Tree) PlanModifyACLEntries(c Caller, p string, spec []op.ACLEntry) ([]op.Op, error) {
	return t.planACL(c, p, func(ex []op.ACLEntry) ([]op.ACLEntry, error) { return mergeACL(ex, spec) })
}

// PlanRemoveACLEntries plans removeAclEntries (the spec's permissions are
// ignored).
func (t *Tree) PlanRemoveACLEntries(c Caller, p string, spec []op.ACLEntry) ([]op.Op, error) {
	return t.planACL(c, p, func(ex []op.ACLEntry) ([]op.ACLEntry, error) { return filterACL(ex, spec) })
}

// PlanRemoveDefaultACL plans removeDefaultAcl.
func (t *Tree) PlanRemoveDefaultACL(c Caller, p string) ([]op.Op, error) {
	return t.planACL(c, p, func(ex []op.ACLEntry) ([]op.ACLEntry, error) {
		b := &aclBuild{}
		for _, e := range ex {
			if e.Scope == op.ACLAccess {
				b.entries = append(b.entries, e)
			}
		}
		return b.finish()
	})
}

// PlanSetACL plans setAcl.
func (t *Tree) PlanSetACL(c Caller, p string, spec []op.ACLEntry) ([]op.Op, error) {
	return t.planACL(c, p, func(ex []op.ACLEntry) ([]op.ACLEntry, error) { return replaceACL(ex, spec) })
}

// PlanRemoveACL plans removeAcl: the extended entries go, the permission
// bits stay (the group bits become the owning group's entry).
func (t *Tree) PlanRemoveACL(c Caller, p string) ([]op.Op, error) {
	w, err := t.aclTarget(c, p)
	if err != nil {
		return nil, err
	}
	return []op.Op{&op.SetACL{Path: w.path}}, nil
}

// ACLStatus is getAclStatus's answer: the entries beyond the permission
// bits (as HDFS returns them) and the bits.
type ACLStatus struct {
	Owner, Group string
	Mode         uint16
	Entries      []op.ACLEntry
}

// GetACLStatus reports the ACL of p (traverse permission only).
func (t *Tree) GetACLStatus(c Caller, p string) (ACLStatus, error) {
	if err := t.checkACLsEnabled(); err != nil {
		return ACLStatus{}, err
	}
	if v, ok, err := t.snapRead(c, p, 0); ok {
		if err != nil {
			return ACLStatus{}, err
		}
		node, _, acl := t.sviewFeats(v)
		st := ACLStatus{Owner: t.userOf(node.at), Group: t.groupOf(node.at), Mode: node.at.mode}
		if acl != nil {
			st.Entries = slices.Clone(acl.entries)
		}
		return st, nil
	}
	w, err := t.resolveExisting(c, p, "cannot find %s")
	if err != nil {
		return ACLStatus{}, err
	}
	n := w.last()
	st := ACLStatus{Owner: t.userOf(n), Group: t.groupOf(n), Mode: n.mode}
	if f := t.featuresOf(n); f != nil && f.acl != nil {
		st.Entries = slices.Clone(f.acl.entries)
	}
	return st, nil
}

// aclAccess is HDFS's checkAccessAcl for an inode with an ACL: the owner
// by the user bits, a named user by its entry and the mask, the groups
// by their entries and the mask (any match grants; a match without the
// access denies), the rest by the other bits.
func (t *Tree) aclAccess(c Caller, n *inode, feat []op.ACLEntry, a Access) bool {
	m := Access(n.mode)
	if c.User == t.userOf(n) {
		return (m>>6)&a == a
	}
	mask := (m >> 3) & 7
	matched := false
	for _, e := range feat {
		if e.Scope != op.ACLAccess {
			break
		}
		switch e.Type {
		case op.ACLUser:
			if e.Name == c.User {
				return Access(e.Perm)&mask&a == a
			}
		case op.ACLGroup:
			g := e.Name
			if g == "" {
				g = t.groupOf(n)
			}
			if slices.Contains(c.Groups, g) {
				matched = true
				if Access(e.Perm)&mask&a == a {
					return true
				}
			}
		}
	}
	if matched {
		return false
	}
	return m&7&a == a
}

// withInheritedACLs adds, after each Mkdir and Add of ops whose parent has
// a default ACL, the op.SetACL that gives the new inode its inherited ACL
// (HDFS's copyINodeDefaultAcl): the parent's default entries become its
// access ACL, filtered by the create mode, and a directory also gets them
// as its default ACL. A parent created by the same ops inherits too.
func (t *Tree) withInheritedACLs(ops []op.Op) []op.Op {
	if len(t.acls) == 0 {
		return ops
	}
	newDirs := map[string][]op.ACLEntry{} // default ACLs of directories these ops create
	defaultsOf := func(p string) []op.ACLEntry {
		if d, ok := newDirs[p]; ok {
			return d
		}
		w := t.lookup(p)
		if w == nil || w.last() == nil {
			return nil
		}
		f := t.featuresOf(w.last())
		if f == nil || f.acl == nil {
			return nil
		}
		var d []op.ACLEntry
		for _, e := range f.acl.entries {
			if e.Scope == op.ACLDefault {
				d = append(d, e)
			}
		}
		return d
	}
	out := make([]op.Op, 0, len(ops))
	for _, o := range ops {
		out = append(out, o)
		var p string
		var mode uint16
		dir := false
		switch o := o.(type) {
		case *op.Mkdir:
			p, mode, dir = o.Path, o.Perm.Mode, true
		case *op.Add:
			p, mode = o.Path, o.Perm.Mode
		default:
			continue
		}
		def := defaultsOf(path.Dir(p))
		if len(def) == 0 {
			continue
		}
		if dir {
			newDirs[p] = def
		}
		out = append(out, &op.SetACL{Path: p, Entries: inheritACL(def, mode, dir)})
	}
	return out
}

// inheritACL is the full ACL a new inode with create mode gets from its
// parent's default entries def.
func inheritACL(def []op.ACLEntry, mode uint16, dir bool) []op.ACLEntry {
	minimal := len(def) == 3
	u, g, o := uint8(mode>>6&7), uint8(mode>>3&7), uint8(mode&7)
	var acl []op.ACLEntry
	for _, e := range def {
		a := op.ACLEntry{Scope: op.ACLAccess, Type: e.Type, Name: e.Name, Perm: e.Perm}
		switch {
		case e.Type == op.ACLUser && e.Name == "":
			a.Perm &= u
		case e.Type == op.ACLGroup && minimal:
			a.Perm &= g
		case e.Type == op.ACLMask:
			a.Perm &= g
		case e.Type == op.ACLOther:
			a.Perm &= o
		}
		acl = append(acl, a)
	}
	if dir {
		acl = append(acl, def...)
	}
	return acl
}

// InheritsDefaultACL reports whether the nearest existing directory above
// path has a default ACL: HDFS then creates the inode with the client's
// unmasked permission (dfs.namenode.posix.acl.inheritance.enabled), which
// the inherited ACL filters, instead of the umasked one.
func (t *Tree) InheritsDefaultACL(path string) bool {
	if len(t.acls) == 0 {
		return false
	}
	w := t.lookup(path)
	if w == nil {
		return false
	}
	k := lastExisting(w)
	if k == len(w.nodes)-1 {
		k-- // the inode itself exists: its parent decides
	}
	if k < 0 || w.nodes[k] == nil {
		return false
	}
	f := t.featuresOf(w.nodes[k])
	return f != nil && f.acl != nil && f.acl.entries[len(f.acl.entries)-1].Scope == op.ACLDefault
}
