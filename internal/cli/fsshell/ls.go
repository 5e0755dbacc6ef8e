package fsshell

import (
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hdfsgo/hdfsgo/client"
)

// lister is one -ls run. The column widths only grow during a run, so
// later listings line up with earlier ones, as in Hadoop.
type lister struct {
	c                                   *cmd
	pathOnly, dirRecurse, recursive     bool
	human, reverse, byTime, bySize      bool
	atime, showEC, hideNonPrintable     bool
	maxRepl, maxLen, maxOwner, maxGroup int
	ec                                  map[*item]string // -e: each item's policy name
	ecWidth                             int
}

func runLsr(c *cmd, args []string) error {
	return runLs(c, append([]string{"-R"}, args...))
}

func runLs(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 0, unlimited, []string{"C", "d", "h", "q", "R", "r", "t", "S", "u", "e"}, false)
	if err != nil {
		return err
	}
	l := &lister{c: c, maxRepl: 3, maxLen: 10}
	l.pathOnly = f.on("C")
	l.dirRecurse = !f.on("d")
	l.recursive = f.on("R") && l.dirRecurse
	l.human = f.on("h")
	l.reverse = f.on("r")
	l.byTime = f.on("t")
	l.bySize = !l.byTime && f.on("S")
	l.atime = f.on("u")
	l.showEC = f.on("e")
	l.hideNonPrintable = f.on("q")
	l.ec = map[*item]string{}
	if len(rest) == 0 {
		rest = []string{"."}
	}
	c.forEachArg(rest, func(it *item) error {
		if l.dirRecurse && it.isDir() {
			return l.recurse(it)
		}
		l.processPaths(nil, []*item{it})
		return nil
	}, nil)
	return nil
}

func (l *lister) recurse(it *item) error {
	kids, err := l.c.children(it)
	if err != nil {
		return err
	}
	l.processPaths(it, kids)
	return nil
}

func (l *lister) processPaths(parent *item, items []*item) {
	if parent != nil && !l.recursive && len(items) != 0 {
		if !l.pathOnly {
			l.c.printf("Found %d items\n", len(items))
		}
		l.sort(items)
	}
	if !l.pathOnly {
		l.adjustWidths(items)
	}
	for _, it := range items {
		l.print(it)
		if l.recursive && it.isDir() {
			if err := l.recurse(it); err != nil {
				l.c.failErr(it.str, err)
			}
		}
	}
}

func (l *lister) sort(items []*item) {
	sign := 1
	if l.reverse {
		sign = -1
	}
	t := func(it *item) int64 {
		if l.atime {
			return it.status().AccessTime.UnixMilli()
		}
		return it.status().ModTime.UnixMilli()
	}
	cmp := func(a, b *item) int {
		switch {
		case l.byTime:
			return compareInt(t(b), t(a))
		case l.bySize:
			return compareInt(b.status().Length, a.status().Length)
		default:
			return strings.Compare(a.str, b.str)
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return sign*cmp(items[i], items[j]) < 0 })
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (l *lister) adjustWidths(items []*item) {
	if l.showEC {
		// Hadoop sizes the policy column per listing, not per run, and
		// to the number of digits of the longest name's length (not to
		// the length itself): the same width is kept here, so that the
		// lines are byte for byte Hadoop's.
		l.ecWidth = 0
		for _, it := range items {
			name := ""
			if s, err := it.fs.ContentSummary(l.c.ctx, it.abs); err == nil {
				name = s.ErasureCodingPolicy
			}
			l.ec[it] = name
			l.ecWidth = max(l.ecWidth, len(strconv.Itoa(len(name))))
		}
	}
	for _, it := range items {
		s := it.status()
		l.maxRepl = max(l.maxRepl, len(strconv.Itoa(int(s.Replication))))
		l.maxLen = max(l.maxLen, len(strconv.FormatInt(s.Length, 10)))
		l.maxOwner = max(l.maxOwner, len(s.Owner))
		l.maxGroup = max(l.maxGroup, len(s.Group))
	}
}

// print writes one line:
//
//	drwxr-xr-x   - alice supergroup          0 2026-12-01 20:00 /d
//	-rw-r--r--   3 alice supergroup       1234 2026-12-01 20:00 /d/f
func (l *lister) print(it *item) {
	name := it.str
	if l.hideNonPrintable {
		name = printable(name)
	}
	if l.pathOnly {
		l.c.printf("%s\n", name)
		return
	}
	s := it.status()
	var b strings.Builder
	if it.isDir() {
		b.WriteString("d")
	} else {
		b.WriteString("-")
	}
	b.WriteString(permString(s.Permission))
	if s.HasACL {
		b.WriteString("+")
	} else {
		b.WriteString(" ")
	}
	repl := "-"
	if s.Type == client.TypeFile {
		repl = strconv.Itoa(int(s.Replication))
	}
	b.WriteString(padLeft(repl, l.maxRepl) + " ")
	if l.showEC {
		b.WriteString(" " + padLeft(l.ec[it], l.ecWidth) + " ")
	}
	if l.maxOwner > 0 {
		b.WriteString(padRight(s.Owner, l.maxOwner) + " ")
	} else {
		b.WriteString(s.Owner)
	}
	if l.maxGroup > 0 {
		b.WriteString(padRight(s.Group, l.maxGroup) + " ")
	} else {
		b.WriteString(s.Group)
	}
	b.WriteString(padLeft(formatSize(s.Length, l.human), l.maxLen) + " ")
	t := s.ModTime
	if l.atime {
		t = s.AccessTime
	}
	b.WriteString(t.In(l.c.tz()).Format(lsDateLayout))
	b.WriteString(" ")
	b.WriteString(name)
	l.c.printf("%s\n", b.String())
}

// printable is -ls -q's form of a path: every control, format,
// private-use, surrogate or unassigned character becomes "?".
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z) {
			return '?'
		}
		return r
	}, s)
}

// lsDateLayout is Hadoop's "yyyy-MM-dd HH:mm".
const lsDateLayout = "2006-01-02 15:04"
