package fsshell

import (
	"regexp"
	"strings"
)

// findExpr is one primary of -find's expression; the expression is the
// conjunction of its primaries (Hadoop's -find knows -a/-and as its only
// operator).
type findExpr struct {
	name   *regexp.Regexp // -name / -iname: the base name matches
	fold   bool           // -iname: compare lower-cased
	suffix string         // -print "\n", -print0 "\x00"
	action bool
}

// runFind is -find: Hadoop's find with the primaries -name, -iname,
// -print and -print0 (joined by -a/-and or nothing). The paths are the
// arguments before the first one starting with "-" ("." when none); every
// path and everything below it is tested, parents first.
func runFind(c *cmd, args []string) error {
	if len(args) < 1 {
		return usagef("Not enough arguments: expected 1 but got 0")
	}
	var paths []string
	i := 0
	for ; i < len(args) && !strings.HasPrefix(args[i], "-"); i++ {
		paths = append(paths, args[i])
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	var exprs []findExpr
	hasAction := false
	rest := args[i:]
	for len(rest) > 0 {
		a := rest[0]
		rest = rest[1:]
		switch a {
		case "-a", "-and":
			if len(exprs) == 0 {
				return &shellError{msg: "Unexpected argument: " + a}
			}
		case "-name", "-iname":
			if len(rest) == 0 {
				return usagef("Not enough arguments: expected 1 but got 0")
			}
			pat := rest[0]
			rest = rest[1:]
			fold := a == "-iname"
			if fold {
				pat = strings.ToLower(pat)
			}
			re, err := compileGlob(pat)
			if err != nil {
				return &shellError{msg: err.Error()}
			}
			exprs = append(exprs, findExpr{name: re, fold: fold})
		case "-print":
			exprs = append(exprs, findExpr{suffix: "\n", action: true})
			hasAction = true
		case "-print0":
			exprs = append(exprs, findExpr{suffix: "\x00", action: true})
			hasAction = true
		default:
			return &shellError{msg: "Unexpected argument: " + a}
		}
	}
	if !hasAction {
		exprs = append(exprs, findExpr{suffix: "\n", action: true})
	}
	apply := func(it *item) error {
		name := baseName(it.abs)
		for _, e := range exprs {
			switch {
			case e.action:
				c.printf("%s%s", it.str, e.suffix)
			case e.fold && !e.name.MatchString(strings.ToLower(name)):
				return nil
			case !e.fold && !e.name.MatchString(name):
				return nil
			}
		}
		return nil
	}
	c.forEachArg(paths, func(it *item) error {
		return c.walk(it, true, apply)
	}, nil)
	return nil
}

// baseName is the last component of an absolute path ("" for "/").
func baseName(abs string) string {
	return abs[strings.LastIndex(abs, "/")+1:]
}

// runConcat is -concat TARGET SRC SRC...: the NameNode's concat.
func runConcat(c *cmd, args []string) error {
	const usage = "<target path> <src path> <src path> ..."
	var items []*item
	for _, a := range args {
		its, err := c.expand(a)
		if err != nil {
			return err
		}
		items = append(items, its...)
	}
	if len(items) < 1 {
		return &shellError{msg: "Target path not specified. " + usage}
	}
	if len(items) < 3 {
		return &shellError{msg: "The number of source paths is less than 2. " + usage}
	}
	target, srcs := items[0], items[1:]
	if !target.exists() || target.isDir() {
		return &shellError{msg: "Target path " + target.str + " does not exist or is not file."}
	}
	paths := make([]string, len(srcs))
	for i, s := range srcs {
		if !s.exists() || s.isDir() {
			return &shellError{msg: s.str + " does not exist or is not file."}
		}
		paths[i] = s.abs
	}
	return target.fs.Concat(c.ctx, target.abs, paths)
}
