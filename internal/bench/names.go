package bench

import (
	"strconv"
	"strings"
)

// names generates the paths an op works on: n leaves under base, at most
// perDir leaves in one directory and at most perDir subdirectories in one
// directory, so the tree stays shallow and evenly filled, as Hadoop's
// benchmark lays it out. Leaf i lives in leaf directory i/perDir; the leaf
// directory's path spells that number in base perDir, one level per digit
// (with perDir 1, every leaf directory sits directly under base).
type names struct {
	base   string
	prefix string // leaf name prefix
	perDir int
	n      int
	depth  int // directory levels under base
}

func newNames(base, prefix string, n, perDir int) names {
	if perDir < 1 {
		perDir = 1
	}
	dirs := (n + perDir - 1) / perDir
	depth := 1
	if perDir > 1 {
		for c := perDir; c < dirs; c *= perDir {
			depth++
		}
	}
	return names{base: base, prefix: prefix, perDir: perDir, n: n, depth: depth}
}

// dir is the path of leaf directory d.
func (g names) dir(d int) string {
	var b strings.Builder
	b.WriteString(g.base)
	digits := make([]int, g.depth)
	if g.perDir == 1 {
		digits[0] = d
	} else {
		for i := g.depth - 1; i >= 0; i-- {
			digits[i] = d % g.perDir
			d /= g.perDir
		}
	}
	for _, v := range digits {
		b.WriteString("/ThroughputBenchDir")
		b.WriteString(strconv.Itoa(v))
	}
	return b.String()
}

// numDirs is the number of leaf directories.
func (g names) numDirs() int { return (g.n + g.perDir - 1) / g.perDir }

// path is the path of leaf i.
func (g names) path(i int) string {
	return g.dir(i/g.perDir) + "/" + g.prefix + strconv.Itoa(i)
}
