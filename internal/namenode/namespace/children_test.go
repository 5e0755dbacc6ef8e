package namespace

import (
	"fmt"
	"slices"
	"testing"
)

// childModel is the reference: one sorted slice of names.
type childModel []string

func (m childModel) find(name string) (int, bool) { return slices.BinarySearch(m, name) }

// checkChildren compares ch with the model, entry by entry, and checks the
// layout's own rules.
func checkChildren(t *testing.T, ch *children, m childModel) {
	t.Helper()
	if ch.len() != len(m) {
		t.Fatalf("len %d, model %d", ch.len(), len(m))
	}
	var got []string
	for c := range ch.all() {
		got = append(got, c.name)
	}
	if !slices.Equal(got, m) && (len(got) != 0 || len(m) != 0) {
		t.Fatalf("entries %v, model %v", got, m)
	}
	if ch.big == nil {
		if len(ch.flat) > maxChunk {
			t.Fatalf("flat layout of %d entries", len(ch.flat))
		}
		return
	}
	if ch.big.n <= halfChunk {
		t.Fatalf("big layout of only %d entries", ch.big.n)
	}
	if len(ch.big.lasts) != len(ch.big.parts) {
		t.Fatalf("%d last names for %d chunks", len(ch.big.lasts), len(ch.big.parts))
	}
	for i, p := range ch.big.parts {
		if len(p) == 0 || len(p) > maxChunk {
			t.Fatalf("chunk %d has %d entries", i, len(p))
		}
		if ch.big.lasts[i] != p[len(p)-1].name {
			t.Fatalf("chunk %d ends with %q, its last name says %q", i, p[len(p)-1].name, ch.big.lasts[i])
		}
	}
}

// applyChildOps runs a byte-coded sequence of operations on children and
// on the model: inserts of runs of names (to reach the big layout in few
// bytes), removals of runs, lookups and pages.
func applyChildOps(t *testing.T, ops []byte) {
	var ch children
	var m childModel
	nodes := map[string]*inode{}
	// Runs of k are spread over the name space (k×37 mod 4096), so that
	// inserts land in the middle of chunks as well as at the end.
	name := func(k int) string { return fmt.Sprintf("f%05d", k*37%4096) }
	for i := 0; i+2 < len(ops); i += 3 {
		op, a, b := ops[i]%4, int(ops[i+1]), int(ops[i+2])
		base := (a << 4) % 4096
		switch op {
		case 0: // insert a run of up to 256 names
			for k := base; k < base+b+1; k++ {
				n := name(k)
				if _, ok := m.find(n); ok {
					continue
				}
				nd := &inode{name: n}
				nodes[n] = nd
				ch.insert(nd)
				j, _ := m.find(n)
				m = slices.Insert(m, j, n)
			}
		case 1: // remove a run
			for k := base; k < base+b+1; k++ {
				n := name(k)
				j, ok := m.find(n)
				if !ok {
					continue
				}
				ch.remove(nodes[n])
				m = slices.Delete(m, j, j+1)
			}
		case 2: // lookups, present and absent
			for _, n := range []string{name(base), name(base) + "x", ""} {
				_, ok := m.find(n)
				if got := ch.get(n); (got != nil) != ok || got != nil && got.name != n {
					t.Fatalf("get %q = %v, model has it: %v", n, got, ok)
				}
			}
		case 3: // a page after a name, present or not
			after := name(base)
			if b%2 == 1 {
				after += "x"
			}
			limit := b % 40
			page, rest := ch.page(after, limit)
			j, ok := m.find(after)
			if ok {
				j++
			}
			end := len(m)
			if limit > 0 {
				end = min(end, j+limit)
			}
			var got []string
			for _, c := range page {
				got = append(got, c.name)
			}
			if !slices.Equal(got, m[j:end]) || rest != len(m)-end {
				t.Fatalf("page after %q limit %d = %v (+%d), model %v (+%d)", after, limit, got, rest, m[j:end], len(m)-end)
			}
		}
		checkChildren(t, &ch, m)
	}
}

func TestChildrenLayouts(t *testing.T) {
	// Grow past maxChunk, shrink back below halfChunk, with pages and
	// lookups on the way: from flat to big and back.
	ops := []byte{
		0, 0, 255, 0, 16, 255, 0, 32, 255, 3, 10, 20, 2, 20, 0, // 768 entries: big
		0, 48, 255, 0, 64, 255, 3, 0, 0, 3, 60, 39, 2, 70, 0, // more splits
		1, 8, 255, 1, 24, 255, 3, 5, 11, 1, 40, 255, 1, 56, 255, // removals, merges
		1, 0, 255, 1, 16, 255, 1, 32, 255, 3, 0, 7, 1, 48, 255, 1, 64, 255, // back to flat, then empty
	}
	applyChildOps(t, ops)
}

// TestChildrenAppendsFillChunks: names inserted in order leave every chunk
// but the last full (a split in halves would leave them half empty), and
// the layout still matches the model, with removals and inserts in the
// middle afterwards.
func TestChildrenAppendsFillChunks(t *testing.T) {
	var ch children
	var m childModel
	nodes := map[string]*inode{}
	for k := 0; k < 3*maxChunk+10; k++ {
		n := fmt.Sprintf("part-%06d", 2*k)
		nodes[n] = &inode{name: n}
		ch.insert(nodes[n])
		m = append(m, n)
	}
	checkChildren(t, &ch, m)
	for i, p := range ch.big.parts {
		if i < len(ch.big.parts)-1 && len(p) != maxChunk {
			t.Fatalf("chunk %d of %d holds %d entries, want %d", i, len(ch.big.parts), len(p), maxChunk)
		}
	}
	if len(ch.big.parts) != 4 {
		t.Fatalf("%d chunks, want 4", len(ch.big.parts))
	}
	for k := 1; k < 3*maxChunk; k += 97 { // into full chunks: they split
		n := fmt.Sprintf("part-%06d", k)
		nodes[n] = &inode{name: n}
		ch.insert(nodes[n])
		j, _ := m.find(n)
		m = slices.Insert(m, j, n)
		checkChildren(t, &ch, m)
	}
	for k := 0; k < 3*maxChunk+10; k += 3 {
		n := fmt.Sprintf("part-%06d", 2*k)
		ch.remove(nodes[n])
		j, _ := m.find(n)
		m = slices.Delete(m, j, j+1)
		checkChildren(t, &ch, m)
	}
}

// FuzzChildren drives the children layout and a sorted slice of names with
// the same operations and compares them after each.
func FuzzChildren(f *testing.F) {
	f.Add([]byte{0, 0, 255, 0, 16, 255, 0, 32, 255, 3, 10, 20, 1, 8, 255, 2, 20, 0})
	f.Add([]byte{0, 3, 200, 0, 200, 100, 1, 3, 50, 3, 3, 17, 0, 100, 255, 1, 120, 255})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 300 {
			ops = ops[:300]
		}
		applyChildOps(t, ops)
	})
}
