package client

import (
	"context"
	"io/fs"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// ACLScope is an ACL entry's scope.
type ACLScope uint8

// The scopes.
const (
	ACLAccess  ACLScope = 0
	ACLDefault ACLScope = 1
)

// ACLType is an ACL entry's type.
type ACLType uint8

// The types.
const (
	ACLUser  ACLType = 0
	ACLGroup ACLType = 1
	ACLMask  ACLType = 2
	ACLOther ACLType = 3
)

// ACLEntry is one entry of an ACL: Perm holds rwx in its low 3 bits; Name
// is empty for the owner, owning group, mask and other entries.
type ACLEntry struct {
	Scope ACLScope
	Type  ACLType
	Name  string
	Perm  uint8
}

// PermString is the permission as "r-x".
func PermString(p uint8) string {
	b := []byte("---")
	for i, c := range "rwx" {
		if p&(4>>i) != 0 {
			b[i] = byte(c)
		}
	}
	return string(b)
}

// String is Hadoop's entry text, e.g. "default:user:bob:r-x".
func (e ACLEntry) String() string {
	var b strings.Builder
	if e.Scope == ACLDefault {
		b.WriteString("default:")
	}
	b.WriteString([...]string{"user", "group", "mask", "other"}[e.Type&3])
	b.WriteString(":" + e.Name + ":" + PermString(e.Perm))
	return b.String()
}

// ACLStatus is an inode's ACL as the NameNode reports it: the owner,
// group, permission bits and the entries the bits do not hold (named
// users and groups, the owning group's entry when there is a mask, and
// the default entries).
type ACLStatus struct {
	Owner, Group string
	Sticky       bool
	Permission   uint16
	Entries      []ACLEntry
}

func aclProtos(es []ACLEntry) []*hdfs.AclEntryProto {
	out := make([]*hdfs.AclEntryProto, 0, len(es))
	for _, e := range es {
		p := &hdfs.AclEntryProto{
			Type:        hdfs.AclEntryProto_AclEntryTypeProto(e.Type).Enum(),
			Scope:       hdfs.AclEntryProto_AclEntryScopeProto(e.Scope).Enum(),
			Permissions: hdfs.AclEntryProto_FsActionProto(e.Perm & 7).Enum(),
		}
		if e.Name != "" {
			p.Name = proto.String(e.Name)
		}
		out = append(out, p)
	}
	return out
}

func (f *FileSystem) aclCall(ctx context.Context, op, name, method string, build func(p string) (req, resp proto.Message)) error {
	p, err := f.resolve(op, name)
	if err != nil {
		return err
	}
	req, resp := build(p)
	if err := f.call(ctx, method, req, resp); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return nil
}

// ModifyACLEntries adds or replaces the given entries of name's ACL.
func (f *FileSystem) ModifyACLEntries(ctx context.Context, name string, spec []ACLEntry) error {
	return f.aclCall(ctx, "modifyaclentries", name, "modifyAclEntries", func(p string) (proto.Message, proto.Message) {
		return &hdfs.ModifyAclEntriesRequestProto{Src: proto.String(p), AclSpec: aclProtos(spec)}, &hdfs.ModifyAclEntriesResponseProto{}
	})
}

// RemoveACLEntries removes the given entries (permissions ignored).
func (f *FileSystem) RemoveACLEntries(ctx context.Context, name string, spec []ACLEntry) error {
	return f.aclCall(ctx, "removeaclentries", name, "removeAclEntries", func(p string) (proto.Message, proto.Message) {
		return &hdfs.RemoveAclEntriesRequestProto{Src: proto.String(p), AclSpec: aclProtos(spec)}, &hdfs.RemoveAclEntriesResponseProto{}
	})
}

// RemoveDefaultACL removes name's default ACL.
func (f *FileSystem) RemoveDefaultACL(ctx context.Context, name string) error {
	return f.aclCall(ctx, "removedefaultacl", name, "removeDefaultAcl", func(p string) (proto.Message, proto.Message) {
		return &hdfs.RemoveDefaultAclRequestProto{Src: proto.String(p)}, &hdfs.RemoveDefaultAclResponseProto{}
	})
}

// RemoveACL removes every ACL entry of name but the permission bits.
func (f *FileSystem) RemoveACL(ctx context.Context, name string) error {
	return f.aclCall(ctx, "removeacl", name, "removeAcl", func(p string) (proto.Message, proto.Message) {
		return &hdfs.RemoveAclRequestProto{Src: proto.String(p)}, &hdfs.RemoveAclResponseProto{}
	})
}

// SetACL replaces the ACL of name (each scope spec names) by spec.
func (f *FileSystem) SetACL(ctx context.Context, name string, spec []ACLEntry) error {
	return f.aclCall(ctx, "setacl", name, "setAcl", func(p string) (proto.Message, proto.Message) {
		return &hdfs.SetAclRequestProto{Src: proto.String(p), AclSpec: aclProtos(spec)}, &hdfs.SetAclResponseProto{}
	})
}

// GetACLStatus returns the ACL of name.
func (f *FileSystem) GetACLStatus(ctx context.Context, name string) (*ACLStatus, error) {
	resp := &hdfs.GetAclStatusResponseProto{}
	err := f.aclCall(ctx, "getaclstatus", name, "getAclStatus", func(p string) (proto.Message, proto.Message) {
		return &hdfs.GetAclStatusRequestProto{Src: proto.String(p)}, resp
	})
	if err != nil {
		return nil, err
	}
	r := resp.GetResult()
	st := &ACLStatus{Owner: r.GetOwner(), Group: r.GetGroup(), Sticky: r.GetSticky(), Permission: uint16(r.GetPermission().GetPerm() & 0o1777)}
	for _, e := range r.GetEntries() {
		st.Entries = append(st.Entries, ACLEntry{Scope: ACLScope(e.GetScope()), Type: ACLType(e.GetType()), Name: e.GetName(), Perm: uint8(e.GetPermissions())})
	}
	return st, nil
}
