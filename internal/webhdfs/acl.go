package webhdfs

import (
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// ACLEntry is one entry of an aclspec, with HDFS's AclEntryProto numbers:
// Scope 0 access, 1 default; Type 0 user, 1 group, 2 mask, 3 other; Perm
// the rwx bits.
type ACLEntry struct {
	Scope, Type, Perm uint8
	Name              string
}

var aclPerms = map[string]uint8{"---": 0, "--x": 1, "-w-": 2, "-wx": 3, "r--": 4, "r-x": 5, "rw-": 6, "rwx": 7}

// splitDropTrailing splits s at sep and drops trailing empty parts, as
// Java's String.split does.
func splitDropTrailing(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// ParseACLSpec reads an aclspec by Hadoop's rules: comma-separated
// "[default:]type:[name][:perm]" entries, where withPerm says whether each
// entry carries a permission (REMOVEACLENTRIES's do not). The error is an
// IllegalArgumentException with Hadoop's message.
func ParseACLSpec(spec string, withPerm bool) ([]ACLEntry, error) {
	bad := func(format, s string) error { return remoteerr.New(remoteerr.ClassIllegalArgument, format, s) }
	var out []ACLEntry
	for _, s := range splitDropTrailing(spec, ",") {
		f := splitDropTrailing(s, ":")
		var e ACLEntry
		i := 0
		if len(f) > 0 && f[0] == "default" {
			e.Scope = 1
			i++
		}
		if len(f) <= i {
			return nil, bad("Invalid <aclSpec> : %s", s)
		}
		switch strings.ToUpper(f[i]) {
		case "USER":
			e.Type = 0
		case "GROUP":
			e.Type = 1
		case "MASK":
			e.Type = 2
		case "OTHER":
			e.Type = 3
		default:
			return nil, bad("Invalid type of acl in <aclSpec> :%s", s)
		}
		i++
		if len(f) > i {
			e.Name = f[i]
			i++
		}
		if withPerm {
			if len(f) <= i {
				return nil, bad("Invalid <aclSpec> : %s", s)
			}
			p, ok := aclPerms[f[i]]
			if !ok {
				return nil, bad("Invalid permission in <aclSpec> : %s", s)
			}
			e.Perm = p
			i++
		}
		if len(f) > i {
			return nil, bad("Invalid <aclSpec> : %s", s)
		}
		out = append(out, e)
	}
	return out, nil
}

// ACLSpecText is entries written back as an aclspec that ParseACLSpec
// reads into the same entries (perms included when withPerm).
func ACLSpecText(entries []ACLEntry, withPerm bool) string {
	const rwx = "rwx"
	types := []string{"user", "group", "mask", "other"}
	parts := make([]string, 0, len(entries))
	for _, e := range entries {
		s := ""
		if e.Scope == 1 {
			s = "default:"
		}
		s += types[e.Type&3] + ":" + e.Name
		if withPerm {
			p := []byte("---")
			for i := range 3 {
				if e.Perm&(4>>i) != 0 {
					p[i] = rwx[i]
				}
			}
			s += ":" + string(p)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}
