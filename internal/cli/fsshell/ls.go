package fsshell

import (
	"sort"
	"strconv"
	"strings"

	"github.com/hdfsgo/hdfsgo/client"
)

// lister is one -ls run. The column widths only grow during a run, so
// later listings line up with earlier ones, as in Hadoop.
type lister struct {
	c                                   *cmd
	pathOnly, dirRecurse, recursive     bool
	human, reverse, byTime, bySize      bool
	atime                               bool
	maxRepl, maxLen, maxOwner, maxGroup int
}

func runLsr(c *cmd, args []string) error {
	return runLs(c, append([]string{"-R"}, args...))
}

func runLs(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 0, unlimited, []string{"C", "d", "h", "R", "r", "t", "S", "u"}, false)
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
	if l.pathOnly {
		l.c.printf("%s\n", it.str)
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
	b.WriteString(it.str)
	l.c.printf("%s\n", b.String())
}

// lsDateLayout is Hadoop's "yyyy-MM-dd HH:mm".
const lsDateLayout = "2006-01-02 15:04"
