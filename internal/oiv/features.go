package oiv

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/xmltext"
)

// The inode features of image format 2 as the XML shows them, in Hadoop's
// element names: <storagePolicyId>, <acls><acl>user:bob:r-x</acl></acls>
// (an ACL entry as Hadoop's AclEntry prints it) and
// <xattrs><xattr><ns>USER</ns><name>n</name><val>text</val></xattr>
// (<valHex> instead of <val> for a value that is not printable text); a
// snapshottable directory is listed in the SnapshotSection.

var (
	xattrNamespaces = []string{op.XAttrUser: "USER", op.XAttrTrusted: "TRUSTED", op.XAttrSecurity: "SECURITY",
		op.XAttrSystem: "SYSTEM", op.XAttrRaw: "RAW"}
	aclTypeNames = []string{op.ACLUser: "user", op.ACLGroup: "group", op.ACLMask: "mask", op.ACLOther: "other"}
)

// aclString is an ACL entry as Hadoop prints it: [default:]type:name:rwx.
func aclString(e op.ACLEntry) string {
	var b strings.Builder
	if e.Scope == op.ACLDefault {
		b.WriteString("default:")
	}
	if int(e.Type) < len(aclTypeNames) {
		b.WriteString(aclTypeNames[e.Type])
	} else {
		b.WriteString(strconv.Itoa(int(e.Type)))
	}
	b.WriteByte(':')
	b.WriteString(e.Name)
	b.WriteByte(':')
	for i, c := range "rwx" {
		if e.Perm&(4>>i) != 0 {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// parseACL reads what aclString writes.
func parseACL(s string) (op.ACLEntry, error) {
	var e op.ACLEntry
	rest, ok := strings.CutPrefix(s, "default:")
	if ok {
		e.Scope = op.ACLDefault
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 3 || len(parts[2]) != 3 {
		return e, fmt.Errorf("ACL entry %q is not [default:]type:name:rwx", s)
	}
	t := -1
	for i, n := range aclTypeNames {
		if n == parts[0] {
			t = i
		}
	}
	if t < 0 {
		return e, fmt.Errorf("ACL entry %q: unknown type %q", s, parts[0])
	}
	e.Type, e.Name = uint8(t), parts[1]
	for i := range 3 {
		switch parts[2][i] {
		case "rwx"[i]:
			e.Perm |= 4 >> i
		case '-':
		default:
			return e, fmt.Errorf("ACL entry %q: permission %q is not like rwx", s, parts[2])
		}
	}
	return e, nil
}

// printable reports whether an xattr value can be shown as text.
func printable(v []byte) bool {
	if !utf8.Valid(v) {
		return false
	}
	for _, r := range string(v) {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// writeFeatures writes the inode's storage policy, ACL and xattrs.
func (w xw) writeFeatures(in *fsimage.Inode) {
	if in.StoragePolicy != op.StoragePolicyUnspecified {
		w.o("storagePolicyId", int64(in.StoragePolicy))
	}
	if len(in.ACL) > 0 {
		w.WriteString("<acls>")
		for _, e := range in.ACL {
			w.o("acl", xmltext.Escape(aclString(e)))
		}
		w.WriteString("</acls>")
	}
	if len(in.XAttrs) > 0 {
		w.WriteString("<xattrs>")
		for _, x := range in.XAttrs {
			w.WriteString("<xattr>")
			ns := strconv.Itoa(int(x.NS))
			if int(x.NS) < len(xattrNamespaces) {
				ns = xattrNamespaces[x.NS]
			}
			w.o("ns", ns)
			w.o("name", xmltext.Escape(x.Name))
			switch {
			case x.Value == nil:
			case printable(x.Value):
				w.o("val", xmltext.Escape(string(x.Value)))
			default:
				w.o("valHex", hex.EncodeToString(x.Value))
			}
			w.WriteString("</xattr>")
		}
		w.WriteString("</xattrs>")
	}
}

// xattrNamespace is the number of a namespace name.
func xattrNamespace(s string) (uint8, error) {
	for i, n := range xattrNamespaces {
		if n == s {
			return uint8(i), nil
		}
	}
	return 0, fmt.Errorf("unknown xattr namespace %q", s)
}

// xattrFullName is the attribute's name with its namespace prefix, as
// WebHDFS shows it ("user.a1").
func xattrFullName(x op.XAttr) string {
	ns := "ns" + strconv.Itoa(int(x.NS))
	if int(x.NS) < len(xattrNamespaces) {
		ns = strings.ToLower(xattrNamespaces[x.NS])
	}
	return ns + "." + x.Name
}
