package namespace

import (
	"iter"
	"slices"
)

// A directory's children, sorted by name in byte order.
//
// A directory of up to maxChunk entries keeps them in one sorted slice
// (flat): the smallest layout, and a memmove of at most maxChunk pointers
// per insertion or removal. Past maxChunk the entries move to a list of
// sorted chunks of halfChunk..maxChunk entries (big), so that an insertion
// or a removal in a directory of a million entries costs a binary search
// among the chunks, one in a chunk and a memmove inside one chunk (plus,
// once per halfChunk insertions, a split that inserts a chunk into the
// list); a directory shrunk to halfChunk entries goes back to flat. A name
// past the last one, when the last chunk (or the flat slice) is full,
// starts a new chunk instead of splitting the full one in halves: names
// created in order (part-00000, part-00001, ...) then leave full chunks
// behind them, not half-empty ones.
//
//	flat: [a b c d ... ]                      ≤ maxChunk entries
//	big:  parts: [a..f] [g..m] [n..t] ...     each sorted, each halfChunk..maxChunk
//	                                          (a removal may leave fewer until merged)
//
// Every chunk is non-empty and the concatenation of the chunks is sorted,
// so the chunk holding a name is the first whose last entry is ≥ it.
type children struct {
	flat []*inode
	big  *chunks
}

// chunks is the big layout; n counts all entries. lasts[i] is the name of
// the last entry of parts[i]: the search among chunks reads this one array
// instead of an inode per step.
type chunks struct {
	parts [][]*inode
	lasts []string
	n     int
}

// Sizes of the layouts (see children).
const (
	maxChunk  = 512
	halfChunk = maxChunk / 2
	// minChunk: a chunk this small is merged with a neighbour when the two
	// fit in one.
	minChunk = maxChunk / 8
)

// search returns the position of the first entry of s whose name is ≥
// name, and whether that entry has the name. Written out rather than with
// sort.Search: it runs for every component of every path resolved, under
// the namesystem lock, and the closure showed in profiles of creates.
func search(s []*inode, name string) (int, bool) {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m].name < name {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(s) && s[lo].name == name
}

// part returns the index of the chunk where name is or would go.
func (c *chunks) part(name string) int {
	lo, hi := 0, len(c.lasts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.lasts[m] < name {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return min(lo, len(c.parts)-1)
}

func (ch *children) len() int {
	if ch.big != nil {
		return ch.big.n
	}
	return len(ch.flat)
}

// get returns the child called name, or nil.
func (ch *children) get(name string) *inode {
	s := ch.flat
	if ch.big != nil {
		s = ch.big.parts[ch.big.part(name)]
	}
	if i, ok := search(s, name); ok {
		return s[i]
	}
	return nil
}

// insert adds c, whose name is not among the children.
func (ch *children) insert(c *inode) {
	if ch.big == nil {
		if k := len(ch.flat); k == maxChunk && ch.flat[k-1].name < c.name {
			ch.big = &chunks{parts: [][]*inode{ch.flat}, lasts: []string{ch.flat[k-1].name}, n: k}
			ch.flat = nil
			ch.big.appendChunk(c)
			return
		}
		ch.flat = insertAt(ch.flat, c)
		if len(ch.flat) > maxChunk {
			ch.toBig()
		}
		return
	}
	b := ch.big
	k := b.part(c.name)
	if k == len(b.parts)-1 && len(b.parts[k]) >= maxChunk && b.lasts[k] < c.name {
		b.appendChunk(c)
		return
	}
	p := insertAt(b.parts[k], c)
	b.n++
	if len(p) <= maxChunk {
		b.parts[k] = p
		b.lasts[k] = p[len(p)-1].name
		return
	}
	// Split in two halves, each in an array of its own.
	left := make([]*inode, halfChunk, maxChunk)
	copy(left, p[:halfChunk])
	right := make([]*inode, len(p)-halfChunk, maxChunk)
	copy(right, p[halfChunk:])
	b.parts[k] = left
	b.parts = slices.Insert(b.parts, k+1, right)
	b.lasts[k] = left[len(left)-1].name
	b.lasts = slices.Insert(b.lasts, k+1, right[len(right)-1].name)
}

// appendChunk adds a chunk holding c, whose name is past every entry.
func (b *chunks) appendChunk(c *inode) {
	p := make([]*inode, 1, maxChunk)
	p[0] = c
	b.parts = append(b.parts, p)
	b.lasts = append(b.lasts, c.name)
	b.n++
}

// insertAt inserts c into the sorted s.
func insertAt(s []*inode, c *inode) []*inode {
	if k := len(s); k == 0 || s[k-1].name < c.name {
		return append(s, c)
	}
	i, _ := search(s, c.name)
	s = append(s, nil)
	copy(s[i+1:], s[i:])
	s[i] = c
	return s
}

// toBig moves a flat layout that outgrew maxChunk into chunks.
func (ch *children) toBig() {
	b := &chunks{n: len(ch.flat)}
	for s := ch.flat; len(s) > 0; {
		k := min(halfChunk, len(s))
		p := make([]*inode, k, maxChunk)
		copy(p, s[:k])
		b.parts = append(b.parts, p)
		b.lasts = append(b.lasts, p[k-1].name)
		s = s[k:]
	}
	ch.flat, ch.big = nil, b
}

// remove drops c if it is among the children.
func (ch *children) remove(c *inode) {
	if ch.big == nil {
		i, ok := search(ch.flat, c.name)
		if !ok || ch.flat[i] != c {
			return
		}
		ch.flat = removeAt(ch.flat, i)
		if len(ch.flat) == 0 {
			ch.flat = nil
		}
		return
	}
	b := ch.big
	k := b.part(c.name)
	p := b.parts[k]
	i, ok := search(p, c.name)
	if !ok || p[i] != c {
		return
	}
	p = removeAt(p, i)
	b.n--
	switch {
	case len(p) == 0:
		b.parts = slices.Delete(b.parts, k, k+1)
		b.lasts = slices.Delete(b.lasts, k, k+1)
	case len(p) < minChunk && k+1 < len(b.parts) && len(p)+len(b.parts[k+1]) <= maxChunk:
		b.parts[k] = append(p, b.parts[k+1]...)
		b.lasts[k] = b.lasts[k+1]
		b.parts = slices.Delete(b.parts, k+1, k+2)
		b.lasts = slices.Delete(b.lasts, k+1, k+2)
	case len(p) < minChunk && k > 0 && len(p)+len(b.parts[k-1]) <= maxChunk:
		b.parts[k-1] = append(b.parts[k-1], p...)
		b.lasts[k-1] = p[len(p)-1].name
		b.parts = slices.Delete(b.parts, k, k+1)
		b.lasts = slices.Delete(b.lasts, k, k+1)
	default:
		b.parts[k] = p
		b.lasts[k] = p[len(p)-1].name
	}
	if b.n <= halfChunk {
		flat := make([]*inode, 0, b.n)
		for _, p := range b.parts {
			flat = append(flat, p...)
		}
		ch.flat, ch.big = flat, nil
	}
}

func removeAt(s []*inode, i int) []*inode {
	copy(s[i:], s[i+1:])
	s[len(s)-1] = nil
	return s[:len(s)-1]
}

// all yields the children in name order. The children must not change
// while it runs.
func (ch *children) all() iter.Seq[*inode] {
	return func(yield func(*inode) bool) {
		if ch.big == nil {
			for _, c := range ch.flat {
				if !yield(c) {
					return
				}
			}
			return
		}
		for _, p := range ch.big.parts {
			for _, c := range p {
				if !yield(c) {
					return
				}
			}
		}
	}
}

// page returns up to limit children (all when limit <= 0) whose names sort
// strictly after after, and how many children come after those. Its cost
// is the page plus two binary searches, and a sum over the chunks for the
// count.
func (ch *children) page(after string, limit int) ([]*inode, int) {
	if ch.big == nil {
		i, found := search(ch.flat, after)
		if found {
			i++
		}
		end := len(ch.flat)
		if limit > 0 && i+limit < end {
			end = i + limit
		}
		return ch.flat[i:end:end], len(ch.flat) - end
	}
	b := ch.big
	k := b.part(after)
	i, found := search(b.parts[k], after)
	if found {
		i++
	}
	before := i // entries up to and including the start position
	for _, p := range b.parts[:k] {
		before += len(p)
	}
	want := b.n - before
	if limit > 0 {
		want = min(want, limit)
	}
	out := make([]*inode, 0, want)
	for ; k < len(b.parts) && len(out) < want; k, i = k+1, 0 {
		p := b.parts[k][i:]
		out = append(out, p[:min(len(p), want-len(out))]...)
	}
	return out, b.n - before - len(out)
}
