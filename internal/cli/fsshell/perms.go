package fsshell

import (
	"errors"
	"io/fs"
	"regexp"
	"strings"
)

// modeChange is a parsed chmod MODE: per class (sticky, user, group,
// other) an operator ('+', '-', '=' or 0 for "keep") and the bits
// (r=4 w=2 x=1, X=8 meaning "x if a directory or already executable by
// someone").
type modeChange struct {
	op   [4]byte
	bits [4]uint16
}

const (
	clsSticky = iota
	clsUser
	clsGroup
	clsOther
)

var (
	symbolicClause = regexp.MustCompile(`^\s*([ugoa]*)([+=-]+)([rwxXt]+)([,\s]*)\s*`)
	octalMode      = regexp.MustCompile(`^\s*[+]?([01]?)([0-7]{3})\s*$`)
)

// errBadMode: the MODE of chmod is neither symbolic nor octal.
var errBadMode = errors.New("fsshell: bad mode")

// parseMode parses a chmod MODE: comma-separated symbolic clauses
// ("u+x,g-w", "+t", "a=r") or 3-4 octal digits. A later clause for the
// same class replaces an earlier one, as in Hadoop.
func parseMode(s string) (*modeChange, error) {
	m := &modeChange{}
	if loc := symbolicClause.FindStringSubmatchIndex(s); loc != nil {
		rest := s
		for first := true; first || rest != ""; first = false {
			g := symbolicClause.FindStringSubmatch(rest)
			if g == nil {
				return nil, errBadMode
			}
			whole := g[0]
			who, ops, perms, sep := g[1], g[2], g[3], g[4]
			op := ops[len(ops)-1]
			u, gr, o := false, false, false
			for _, ch := range who {
				switch ch {
				case 'u':
					u = true
				case 'g':
					gr = true
				case 'o':
					o = true
				}
			}
			if !u && !gr && !o {
				u, gr, o = true, true, true
			}
			var bits uint16
			sticky := false
			for _, ch := range perms {
				switch ch {
				case 'r':
					bits |= 4
				case 'w':
					bits |= 2
				case 'x':
					bits |= 1
				case 'X':
					bits |= 8
				case 't':
					sticky = true
				}
			}
			if u {
				m.op[clsUser], m.bits[clsUser] = op, bits
			}
			if gr {
				m.op[clsGroup], m.bits[clsGroup] = op, bits
			}
			if o {
				m.op[clsOther], m.bits[clsOther] = op, bits
				m.op[clsSticky] = op
				m.bits[clsSticky] = 0
				if sticky {
					m.bits[clsSticky] = 1
				}
			}
			rest = rest[len(whole):]
			if rest != "" && !strings.Contains(sep, ",") {
				return nil, errBadMode
			}
		}
		return m, nil
	}
	g := octalMode.FindStringSubmatch(s)
	if g == nil {
		return nil, errBadMode
	}
	if g[1] != "" {
		m.op[clsSticky], m.bits[clsSticky] = '=', uint16(g[1][0]-'0')
	}
	for i, cls := range []int{clsUser, clsGroup, clsOther} {
		m.op[cls], m.bits[cls] = '=', uint16(g[2][i]-'0')
	}
	return m, nil
}

// apply returns the new permission for a file with permission old; isDir
// decides what X means.
func (m *modeChange) apply(old uint16, isDir bool) uint16 {
	exeOK := isDir || old&0o111 != 0
	seg := func(cls int, existing uint16) uint16 {
		mode := m.bits[cls]
		capX := false
		if mode&8 != 0 {
			capX = true
			mode = mode&^8 | 1
		}
		switch m.op[cls] {
		case '+':
			mode |= existing
		case '-':
			mode = ^mode & existing
		case '=':
		default:
			mode = existing
		}
		if capX && !exeOK && mode&1 != 0 && m.op[cls] != '-' {
			mode &^= 1
		}
		return mode
	}
	return (seg(clsSticky, old>>9)&1)<<9 |
		(seg(clsUser, old>>6&7)&7)<<6 |
		(seg(clsGroup, old>>3&7)&7)<<3 |
		seg(clsOther, old&7)&7
}

func runChmod(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 2, unlimited, []string{"R"}, true)
	if err != nil {
		return err
	}
	modeStr := rest[0]
	m, err := parseMode(modeStr)
	if err != nil {
		return usagef("chmod : mode '%s' does not match the expected pattern.", modeStr)
	}
	c.forEachArg(rest[1:], func(it *item) error {
		return c.walk(it, f.on("R"), func(it *item) error {
			s := it.status()
			newPerm := m.apply(s.Permission, it.isDir())
			if newPerm == s.Permission {
				return nil
			}
			mode := fs.FileMode(newPerm & 0o777)
			if newPerm&0o1000 != 0 {
				mode |= fs.ModeSticky
			}
			if err := it.fs.Chmod(c.ctx, it.abs, mode); err != nil {
				return &shellError{msg: "changing permissions of '" + it.str + "': " + remoteText(err)}
			}
			return nil
		})
	}, nil)
	return nil
}

// ownerChars are the characters Hadoop accepts in owner and group names.
const ownerChars = `[-_./@a-zA-Z0-9]`

var (
	chownPattern = regexp.MustCompile(`^\s*(` + ownerChars + `+)?([:](` + ownerChars + `*))?\s*$`)
	chgrpPattern = regexp.MustCompile(`^\s*(` + ownerChars + `+)\s*$`)
)

func runChown(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 2, unlimited, []string{"R"}, false)
	if err != nil {
		return err
	}
	spec := rest[0]
	g := chownPattern.FindStringSubmatch(spec)
	if g == nil {
		return usagef("'%s' does not match expected pattern for [owner][:group].", spec)
	}
	owner, group := g[1], g[3]
	if owner == "" && group == "" {
		return usagef("'%s' does not specify owner or group.", spec)
	}
	return c.chown(f.on("R"), owner, group, rest[1:])
}

func runChgrp(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 2, unlimited, []string{"R"}, false)
	if err != nil {
		return err
	}
	g := chgrpPattern.FindStringSubmatch(rest[0])
	if g == nil {
		return usagef("'%s' does not match expected pattern for group", rest[0])
	}
	return c.chown(f.on("R"), "", g[1], rest[1:])
}

// chown sets what differs of owner and group ("" = keep) on each path.
func (c *cmd) chown(recursive bool, owner, group string, paths []string) error {
	c.forEachArg(paths, func(it *item) error {
		return c.walk(it, recursive, func(it *item) error {
			s := it.status()
			o, g := owner, group
			if o == s.Owner {
				o = ""
			}
			if g == s.Group {
				g = ""
			}
			if o == "" && g == "" {
				return nil
			}
			if err := it.fs.Chown(c.ctx, it.abs, o, g); err != nil {
				return &shellError{msg: "changing ownership of '" + it.str + "': " + remoteText(err)}
			}
			return nil
		})
	}, nil)
	return nil
}
