package namespace

import (
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// aclFeature is the part of an ACL that the permission bits do not hold:
// the named user and group entries, the owning group's entry when a mask
// takes its place in the group bits, and the default entries. Inodes with
// the same ACL share one aclFeature (Tree.acls), as HDFS shares its
// AclFeature objects, so an ACL set on a million files costs one copy.
type aclFeature struct {
	entries []op.ACLEntry // sorted as HDFS sorts ACLs
	key     string        // the encoding of entries, the key in Tree.acls
	refs    int
}

func aclKey(es []op.ACLEntry) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteByte(e.Scope<<5 | e.Type<<3 | e.Perm)
		b.WriteString(e.Name)
		b.WriteByte(0)
	}
	return b.String()
}

// internACL returns the shared feature holding es, taking a reference.
func (t *Tree) internACL(es []op.ACLEntry) *aclFeature {
	k := aclKey(es)
	if a := t.acls[k]; a != nil {
		a.refs++
		return a
	}
	if t.acls == nil {
		t.acls = make(map[string]*aclFeature)
	}
	a := &aclFeature{entries: append([]op.ACLEntry(nil), es...), key: k, refs: 1}
	for i := range a.entries {
		a.entries[i].Name = strings.Clone(a.entries[i].Name)
	}
	t.acls[k] = a
	return a
}

// releaseACL drops a reference to a.
func (t *Tree) releaseACL(a *aclFeature) {
	a.refs--
	if a.refs <= 0 {
		delete(t.acls, a.key)
	}
}

// NumACLs counts the distinct ACLs in use.
func (t *Tree) NumACLs() int { return len(t.acls) }

// applySetACL replaces n's ACL by o.Entries (a full, sorted ACL) and sets
// its permission bits from it, as HDFS's AclStorage does; an empty list
// removes the ACL and gives the group bits back to the owning group's
// entry.
func (t *Tree) applySetACL(o *op.SetACL) error {
	w, n, err := t.existing(o.Path)
	if err != nil {
		return err
	}
	t.cow(w)
	if len(o.Entries) == 0 {
		t.removeACL(n)
		return nil
	}
	var access, def []op.ACLEntry
	user, group, mask, other := -1, -1, -1, -1
	for _, e := range o.Entries {
		if e.Scope == op.ACLDefault {
			def = append(def, e)
			continue
		}
		access = append(access, e)
		switch {
		case e.Type == op.ACLUser && e.Name == "":
			user = int(e.Perm)
		case e.Type == op.ACLGroup && e.Name == "":
			group = int(e.Perm)
		case e.Type == op.ACLMask:
			mask = int(e.Perm)
		case e.Type == op.ACLOther:
			other = int(e.Perm)
		}
	}
	if user < 0 || group < 0 || other < 0 || len(access) < 3 {
		return corruptf("set acl on %s: the access ACL lacks a user, group or other entry", o.Path)
	}
	if len(access) > 3 && mask < 0 {
		return corruptf("set acl on %s: an extended access ACL without a mask", o.Path)
	}
	gbits := group
	if mask >= 0 {
		gbits = mask
	}
	n.mode = n.mode&0o7000 | uint16(user)<<6 | uint16(gbits)<<3 | uint16(other)
	var feat []op.ACLEntry
	if len(access) > 3 {
		// Between the owner's entry and the mask: named users, the owning
		// group, named groups (the ACL is sorted).
		feat = append(feat, access[1:len(access)-2]...)
	}
	feat = append(feat, def...)
	f := t.featuresOf(n)
	if len(feat) == 0 {
		if f != nil && f.acl != nil {
			t.releaseACL(f.acl)
			f.acl = nil
			t.settle(n)
		}
		return nil
	}
	f = t.mutFeatures(n)
	old := f.acl
	f.acl = t.internACL(feat)
	if old != nil {
		t.releaseACL(old)
	}
	return nil
}

// removeACL drops n's ACL; with an extended access ACL the group bits
// (the mask) become the owning group's entry again.
func (t *Tree) removeACL(n *inode) {
	f := t.featuresOf(n)
	if f == nil || f.acl == nil {
		return
	}
	for _, e := range f.acl.entries {
		if e.Scope == op.ACLAccess && e.Type == op.ACLGroup && e.Name == "" {
			n.mode = n.mode&^0o070 | uint16(e.Perm)<<3
			break
		}
	}
	t.releaseACL(f.acl)
	f.acl = nil
	t.settle(n)
}
