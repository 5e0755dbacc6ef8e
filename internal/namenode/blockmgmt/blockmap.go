package blockmgmt

// blockMap is the blocks map, block id → *blockInfo: an open-addressing
// hash table with linear probing whose slots are the entries' pointers,
// keyed by the id each entry holds. It costs one pointer per slot (at most
// 3/4 of the slots are used) and allocates nothing per entry, where a Go
// map of the same keys and values takes key, value and control bytes per
// slot. Deletion shifts the following entries back (no tombstones).
type blockMap struct {
	slots []*blockInfo // len is 0 or a power of two
	n     int
}

// minBlockMapSlots is the smallest table allocated.
const minBlockMapSlots = 64

func (t *blockMap) len() int { return t.n }

// home is the slot where id's probe sequence starts (Fibonacci hashing).
func (t *blockMap) home(id int64) int {
	return int((uint64(id) * 0x9E3779B97F4A7C15) >> 32 & uint64(len(t.slots)-1))
}

// get returns the entry of block id, or nil.
func (t *blockMap) get(id int64) *blockInfo {
	if t.n == 0 {
		return nil
	}
	mask := len(t.slots) - 1
	for i := t.home(id); ; i = (i + 1) & mask {
		b := t.slots[i]
		if b == nil || b.ID == id {
			return b
		}
	}
}

// put adds b, replacing the entry with the same id.
func (t *blockMap) put(b *blockInfo) {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.resize(max(minBlockMapSlots, 2*len(t.slots)))
	}
	mask := len(t.slots) - 1
	for i := t.home(b.ID); ; i = (i + 1) & mask {
		switch s := t.slots[i]; {
		case s == nil:
			t.slots[i] = b
			t.n++
			return
		case s.ID == b.ID:
			t.slots[i] = b
			return
		}
	}
}

// del removes the entry of block id, if any.
func (t *blockMap) del(id int64) {
	if t.n == 0 {
		return
	}
	mask := len(t.slots) - 1
	i := t.home(id)
	for {
		b := t.slots[i]
		if b == nil {
			return
		}
		if b.ID == id {
			break
		}
		i = (i + 1) & mask
	}
	// Shift back every following entry of the run whose home is not
	// between the hole and itself (cyclically), so probes still find it.
	hole := i
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		b := t.slots[j]
		if b == nil {
			break
		}
		h := t.home(b.ID)
		if (j > hole && (h <= hole || h > j)) || (j < hole && h <= hole && h > j) {
			t.slots[hole] = b
			hole = j
		}
	}
	t.slots[hole] = nil
	t.n--
	if t.n == 0 {
		t.slots = nil
	} else if len(t.slots) > minBlockMapSlots && t.n*8 < len(t.slots) {
		t.resize(len(t.slots) / 2)
	}
}

func (t *blockMap) resize(size int) {
	old := t.slots
	t.slots = make([]*blockInfo, size)
	mask := size - 1
	for _, b := range old {
		if b == nil {
			continue
		}
		i := t.home(b.ID)
		for t.slots[i] != nil {
			i = (i + 1) & mask
		}
		t.slots[i] = b
	}
}

// each calls fn for every entry, in no particular order; fn must not add
// or remove entries.
func (t *blockMap) each(fn func(b *blockInfo)) {
	for _, b := range t.slots {
		if b != nil {
			fn(b)
		}
	}
}
