package fsshell

import (
	"errors"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/hdfsgo/hdfsgo/client"
)

// item is one path a command works on: the text shown to the user (as
// typed, or derived from what was typed) and the resolved absolute path.
// fi is nil when the path does not exist.
type item struct {
	str string
	abs string
	fi  *client.FileInfo
	fs  fileSystem // the file system abs is a path of
}

func (it *item) exists() bool { return it.fi != nil }
func (it *item) isDir() bool  { return it.fi != nil && it.fi.IsDir() }

// status is the item's full status; callers check exists first.
func (it *item) status() *client.FileStatus { return it.fi.Status() }

// childString derives a child's display text from its parent's, keeping
// relative paths relative: "." has children "a", "d" has "d/a", "d/" has
// "d/a".
func childString(parent, name string) string {
	if parent == "." {
		return name
	}
	if strings.HasSuffix(parent, "/") {
		return parent + name
	}
	return parent + "/" + name
}

func (c *cmd) child(parent *item, fi *client.FileInfo) *item {
	return &item{str: childString(parent.str, fi.Name()), abs: fi.Path(), fi: fi, fs: parent.fs}
}

// children lists a directory item. A file is not a directory here, as in
// Hadoop's shell.
func (c *cmd) children(it *item) ([]*item, error) {
	if !it.exists() {
		return nil, pathErr(it.str, msgNotFound)
	}
	if !it.isDir() {
		return nil, pathErr(it.str, msgNotDir)
	}
	list, err := it.fs.ReadDir(c.ctx, it.abs)
	if err != nil {
		return nil, err
	}
	out := make([]*item, len(list))
	for i, fi := range list {
		out[i] = c.child(it, fi)
	}
	return out, nil
}

// childItem returns the item for name inside directory parent, with its
// status looked up.
func (c *cmd) childItem(parent *item, name string) (*item, error) {
	it := &item{str: childString(parent.str, name), abs: path.Join(parent.abs, name), fs: parent.fs}
	if err := c.lookup(it); err != nil {
		return nil, err
	}
	return it, nil
}

// lookup fills it.fi; a missing path leaves it nil.
func (c *cmd) lookup(it *item) error {
	fi, err := it.fs.Stat(c.ctx, it.abs)
	if errors.Is(err, fs.ErrNotExist) {
		it.fi = nil
		return nil
	}
	if err != nil {
		return err
	}
	it.fi = fi
	return nil
}

// newItem resolves one argument without glob expansion.
func (c *cmd) newItem(arg string) (*item, error) {
	fsys, err := c.fsFor(arg)
	if err != nil {
		return nil, err
	}
	abs, err := fsys.Resolve(arg)
	if err != nil {
		return nil, c.resolveErr(arg, err)
	}
	it := &item{str: arg, abs: abs, fs: fsys}
	if err := c.lookup(it); err != nil {
		return nil, err
	}
	return it, nil
}

func (c *cmd) resolveErr(arg string, err error) error {
	if errors.Is(err, client.ErrWrongFS) {
		return &shellError{msg: "Wrong FS: " + arg + ", expected: " + c.expectedURI(arg)}
	}
	return &shellError{msg: "`" + arg + "': " + err.Error()}
}

// hasGlob reports whether s contains glob syntax: a wildcard (*?[{) not
// escaped by a backslash, as Hadoop's GlobPattern decides.
func hasGlob(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?', '[', '{':
			return true
		}
	}
	return false
}

// expand turns an argument into items. A plain path gives one item,
// existing or not. A glob gives every existing match, shown in the form
// the argument was written in (URI, absolute or relative); no match is an
// error.
func (c *cmd) expand(arg string) ([]*item, error) {
	if !hasGlob(arg) {
		// Not a pattern: its escapes are dropped, as Hadoop's shell does
		// ("x\*y" names the file x*y).
		it, err := c.newItem(unescapeGlob(arg))
		if err != nil {
			return nil, err
		}
		return []*item{it}, nil
	}
	fsys, err := c.fsFor(arg)
	if err != nil {
		return nil, err
	}
	abs, err := fsys.Resolve(arg)
	if err != nil {
		return nil, c.resolveErr(arg, err)
	}
	matches, err := c.glob(fsys, abs)
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		return nil, pathErr(arg, msgNotFound)
	}
	prefix, relative := argForm(arg)
	out := make([]*item, len(matches))
	for i, m := range matches {
		var s string
		switch {
		case relative:
			s = relativize(fsys.WorkingDir(), m.Path())
		default:
			s = prefix + m.Path()
		}
		out[i] = &item{str: s, abs: m.Path(), fi: m, fs: fsys}
	}
	return out, nil
}

// argForm returns the scheme and authority an argument starts with
// ("hdfs://nn:8020", "hdfs:" or "") and whether it is a relative path.
func argForm(arg string) (prefix string, relative bool) {
	if i := strings.Index(arg, ":"); i > 0 && !strings.Contains(arg[:i], "/") {
		rest := arg[i+1:]
		if strings.HasPrefix(rest, "//") {
			j := strings.Index(rest[2:], "/")
			if j < 0 {
				return arg, false
			}
			return arg[:i+1+2+j], false
		}
		return arg[:i+1], false
	}
	return "", !strings.HasPrefix(arg, "/")
}

// relativize writes abs relative to the working directory wd, with ".."
// steps when abs is not below it.
func relativize(wd, abs string) string {
	if wd == abs {
		return "."
	}
	if strings.HasPrefix(abs, wd+"/") {
		return abs[len(wd)+1:]
	}
	w := strings.Split(strings.Trim(wd, "/"), "/")
	a := strings.Split(strings.Trim(abs, "/"), "/")
	if abs == "/" {
		a = nil
	}
	n := 0
	for n < len(w) && n < len(a) && w[n] == a[n] {
		n++
	}
	parts := make([]string, 0, len(w)-n+len(a)-n)
	for i := n; i < len(w); i++ {
		parts = append(parts, "..")
	}
	parts = append(parts, a[n:]...)
	return strings.Join(parts, "/")
}

// glob expands an absolute pattern component by component: a literal
// component extends each candidate, a glob component lists each candidate
// directory and keeps the matching names. Candidates that do not exist at
// the end are dropped.
func (c *cmd) glob(fsys fileSystem, abs string) ([]*client.FileInfo, error) {
	type cand struct {
		p  string
		fi *client.FileInfo // nil: not looked up yet
	}
	cands := []cand{{p: "/"}}
	for _, comp := range strings.Split(strings.Trim(abs, "/"), "/") {
		if comp == "" {
			continue
		}
		if !hasGlob(comp) {
			lit := unescapeGlob(comp)
			for i := range cands {
				cands[i] = cand{p: path.Join(cands[i].p, lit)}
			}
			continue
		}
		re, err := compileGlob(comp)
		if err != nil {
			return nil, &shellError{msg: "Illegal file pattern: " + err.Error()}
		}
		var next []cand
		for _, cd := range cands {
			fi := cd.fi
			if fi == nil {
				st, err := fsys.Stat(c.ctx, cd.p)
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				if err != nil {
					return nil, err
				}
				fi = st
			}
			if !fi.IsDir() {
				continue
			}
			list, err := fsys.ReadDir(c.ctx, cd.p)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			for _, e := range list {
				if re.MatchString(e.Name()) {
					next = append(next, cand{p: e.Path(), fi: e})
				}
			}
		}
		cands = next
	}
	var out []*client.FileInfo
	for _, cd := range cands {
		if cd.fi != nil {
			out = append(out, cd.fi)
			continue
		}
		st, err := fsys.Stat(c.ctx, cd.p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// errGlob describes a malformed glob pattern.
type errGlob string

func (e errGlob) Error() string { return string(e) }

// compileGlob translates one path component's glob into an anchored
// regular expression: * any run, ? one character, [abc] [a-z] [!x] [^x]
// classes, {a,b} alternatives (nestable), \ escapes the next character.
func compileGlob(pat string) (*regexp.Regexp, error) {
	if !utf8.ValidString(pat) {
		return nil, errGlob("pattern is not valid UTF-8")
	}
	var b strings.Builder
	b.WriteString("^")
	depth := 0
	for i := 0; i < len(pat); i++ {
		ch := pat[i]
		switch ch {
		case '\\':
			if i+1 >= len(pat) {
				return nil, errGlob("missing escaped character near the end of " + pat)
			}
			i++
			b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '{':
			depth++
			b.WriteString("(?:")
		case '}':
			if depth == 0 {
				b.WriteString(regexp.QuoteMeta("}"))
				continue
			}
			depth--
			b.WriteString(")")
		case ',':
			if depth > 0 {
				b.WriteString("|")
			} else {
				b.WriteString(",")
			}
		case '[':
			j := i + 1
			var cls strings.Builder
			cls.WriteString("[")
			if j < len(pat) && (pat[j] == '!' || pat[j] == '^') {
				cls.WriteString("^")
				j++
			}
			start := j
			for ; j < len(pat) && (pat[j] != ']' || j == start); j++ {
				c := pat[j]
				if c == '\\' && j+1 < len(pat) {
					j++
					c = pat[j]
				}
				if c == '\\' || c == '[' || c == ']' || c == '^' {
					cls.WriteByte('\\')
				}
				cls.WriteByte(c)
			}
			if j >= len(pat) {
				return nil, errGlob("unclosed character class in " + pat)
			}
			cls.WriteString("]")
			b.WriteString(cls.String())
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
		}
	}
	if depth != 0 {
		return nil, errGlob("unclosed group in " + pat)
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, errGlob("bad pattern " + pat)
	}
	return re, nil
}

// unescapeGlob removes glob escapes from a literal component.
func unescapeGlob(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// isLocalURI reports whether arg is a file: URI.
func isLocalURI(arg string) bool {
	scheme, _, ok := strings.Cut(arg, ":")
	return ok && strings.EqualFold(scheme, "file") && !strings.Contains(scheme, "/")
}

// localPathOf is the local path a file: URI names (file:/x, file:///x,
// file://localhost/x); any other argument is returned as it is.
func localPathOf(arg string) string {
	if !isLocalURI(arg) {
		return arg
	}
	_, p, _ := strings.Cut(arg, ":")
	if rest, ok := strings.CutPrefix(p, "//"); ok {
		if i := strings.Index(rest, "/"); i >= 0 {
			p = rest[i:]
		} else {
			p = "/"
		}
	}
	if p == "" {
		p = "/"
	}
	return p
}
