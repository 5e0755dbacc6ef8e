package fsshell

import (
	"fmt"
	"strings"

	"github.com/hdfsgo/hdfsgo/client"
)

// javaSplit is Java's String.split(sep) for a literal separator: trailing
// empty strings are dropped.
func javaSplit(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

var permSymbols = map[string]uint8{"---": 0, "--x": 1, "-w-": 2, "-wx": 3, "r--": 4, "r-x": 5, "rw-": 6, "rwx": 7}

// parseACLSpec is Hadoop's AclEntry.parseAclSpec: comma-separated
// "[default:]type:[name][:perm]" entries; withPerm says whether each must
// carry a permission (all but -x).
func parseACLSpec(spec string, withPerm bool) ([]client.ACLEntry, error) {
	var out []client.ACLEntry
	for _, s := range javaSplit(spec, ",") {
		f := javaSplit(s, ":")
		if len(f) == 0 {
			return nil, fmt.Errorf("Invalid <aclSpec> : %s", s)
		}
		var e client.ACLEntry
		i := 0
		if f[0] == "default" {
			e.Scope = client.ACLDefault
			i++
		}
		if len(f) <= i {
			return nil, fmt.Errorf("Invalid <aclSpec> : %s", s)
		}
		switch strings.ToUpper(f[i]) {
		case "USER":
			e.Type = client.ACLUser
		case "GROUP":
			e.Type = client.ACLGroup
		case "MASK":
			e.Type = client.ACLMask
		case "OTHER":
			e.Type = client.ACLOther
		default:
			return nil, fmt.Errorf("Invalid type of acl in <aclSpec> :%s", s)
		}
		i++
		if len(f) > i {
			e.Name = f[i]
			i++
		}
		if withPerm {
			if len(f) <= i {
				return nil, fmt.Errorf("Invalid <aclSpec> : %s", s)
			}
			p, ok := permSymbols[f[i]]
			if !ok {
				return nil, fmt.Errorf("Invalid permission in <aclSpec> : %s", s)
			}
			e.Perm = p
			i++
		}
		if len(f) > i {
			return nil, fmt.Errorf("Invalid <aclSpec> : %s", s)
		}
		out = append(out, e)
	}
	return out, nil
}

func runSetfacl(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 0, unlimited, []string{"b", "k", "R", "m", "x", "-set"}, false)
	if err != nil {
		return err
	}
	b, k, m, x, set := f.on("b"), f.on("k"), f.on("m"), f.on("x"), f.on("-set")
	oneRemove, oneModify := b || k, m || x
	if (b && k) || (m && x) || (oneRemove && oneModify) || (set && (oneRemove || oneModify)) {
		return usagef("Specified flags contains both remove and modify flags")
	}
	var spec, accessSpec []client.ACLEntry
	if oneModify || set {
		if len(rest) == 0 {
			return usagef("Missing arguments: <acl_spec> <path>")
		}
		if len(rest) < 2 {
			return usagef("Missing either <acl_spec> or <path>")
		}
		spec, err = parseACLSpec(rest[0], !x)
		if err != nil {
			return usagef("%v", err)
		}
		if len(spec) == 0 {
			return usagef("Missing <acl_spec> entry")
		}
		rest = rest[1:]
		for _, e := range spec {
			if e.Scope == client.ACLAccess {
				accessSpec = append(accessSpec, e)
			}
		}
	}
	switch {
	case len(rest) == 0:
		return usagef("<path> is missing")
	case len(rest) > 1:
		return usagef("Too many arguments")
	case !oneRemove && !oneModify && !set:
		return usagef("Expected one of -b, -k, -m, -x or --set")
	}
	recursive := f.on("R")
	c.forEachArg(rest, func(it *item) error {
		return c.walk(it, recursive, func(it *item) error {
			entries := spec
			if recursive && !it.isDir() {
				entries = accessSpec // files take no default entries
			}
			var err error
			switch {
			case b:
				err = it.fs.RemoveACL(c.ctx, it.abs)
			case k:
				err = it.fs.RemoveDefaultACL(c.ctx, it.abs)
			case m:
				if len(entries) > 0 {
					err = it.fs.ModifyACLEntries(c.ctx, it.abs, entries)
				}
			case x:
				if len(entries) > 0 {
					err = it.fs.RemoveACLEntries(c.ctx, it.abs, entries)
				}
			case set:
				if len(entries) > 0 {
					err = it.fs.SetACL(c.ctx, it.abs, entries)
				}
			}
			if err != nil {
				return &shellError{msg: c.describe(it.str, err)}
			}
			return nil
		})
	}, nil)
	return nil
}

// fullACL is Hadoop's AclUtil.getAclFromPermAndEntries: the whole ACL
// from the permission bits and the status entries.
func fullACL(perm uint16, entries []client.ACLEntry) []client.ACLEntry {
	out := []client.ACLEntry{{Type: client.ACLUser, Perm: uint8(perm >> 6 & 7)}}
	hasAccess := false
	for _, e := range entries {
		if e.Scope == client.ACLAccess {
			out = append(out, e)
			hasAccess = true
		}
	}
	if hasAccess {
		out = append(out, client.ACLEntry{Type: client.ACLMask, Perm: uint8(perm >> 3 & 7)})
	} else {
		out = append(out, client.ACLEntry{Type: client.ACLGroup, Perm: uint8(perm >> 3 & 7)})
	}
	out = append(out, client.ACLEntry{Type: client.ACLOther, Perm: uint8(perm & 7)})
	for _, e := range entries {
		if e.Scope == client.ACLDefault {
			out = append(out, e)
		}
	}
	return out
}

func runGetfacl(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 1, unlimited, []string{"R"}, false)
	if err != nil {
		return err
	}
	c.forEachArg(rest, func(it *item) error {
		return c.walk(it, f.on("R"), func(it *item) error {
			s := it.status()
			var entries []client.ACLEntry
			if s.HasACL {
				st, err := it.fs.GetACLStatus(c.ctx, it.abs)
				if err != nil {
					return &shellError{msg: c.describe(it.str, err)}
				}
				entries = st.Entries
			}
			c.printf("# file: %s\n# owner: %s\n# group: %s\n", it.str, s.Owner, s.Group)
			if s.Permission&0o1000 != 0 {
				flag := "T"
				if s.Permission&1 != 0 {
					flag = "t"
				}
				c.printf("# flags: --%s\n", flag)
			}
			var access, def []client.ACLEntry
			for _, e := range fullACL(s.Permission, entries) {
				if e.Scope == client.ACLDefault {
					def = append(def, e)
				} else {
					access = append(access, e)
				}
			}
			c.printScope(access, s.Permission, entries)
			c.printScope(def, s.Permission, entries)
			c.printf("\n")
			return nil
		})
	}, nil)
	return nil
}

// printScope prints one scope's entries, with "#effective:" where the
// mask narrows an entry (Hadoop's printAclEntriesForSingleScope).
func (c *cmd) printScope(es []client.ACLEntry, perm uint16, status []client.ACLEntry) {
	if len(es) == 0 {
		return
	}
	if len(es) == 3 {
		for _, e := range es {
			c.printf("%s\n", e)
		}
		return
	}
	for _, e := range es {
		eff := e.Perm
		if e.Type != client.ACLMask && (e.Name != "" || e.Type == client.ACLGroup) {
			if e.Scope == client.ACLAccess {
				eff &= uint8(perm >> 3 & 7)
			} else if len(status) >= 2 {
				eff &= status[len(status)-2].Perm // the default mask
			}
		}
		if e.Type != client.ACLMask && eff != e.Perm {
			c.printf("%s\t#effective:%s\n", e, client.PermString(eff))
		} else {
			c.printf("%s\n", e)
		}
	}
}
