package blockmgmt

// blockMap is the blocks map, block id → *blockInfo. The entries live in a
// slab: fixed chunks of blockInfo values (no pointers inside, so the
// collector never scans them), each entry named by a 4-byte index that
// stays put for the entry's life; freed indices are reused. The lookup
// table is an open-addressing hash table with linear probing whose slots
// are those indices (0: empty), keyed by the id in the entry; deletion
// shifts the following entries back (no tombstones). A storage's replica
// list holds the same indices.
//
// The replicas of an entry with more than inlineReplicas of them are kept
// in more, by block id.
type blockMap struct {
	slots []uint32 // len is 0 or a power of two
	n     int

	chunks []*[slabChunk]blockInfo
	used   uint32   // indices handed out so far, 0 (never used) included
	free   []uint32 // indices of deleted entries, to reuse
	more   map[int64][]replica
}

const (
	slabShift = 13
	slabChunk = 1 << slabShift // entries per chunk (512 KiB)
	slabMask  = slabChunk - 1
	// maxBlocks is the most entries the slab can name (index 0 is not an
	// entry).
	maxBlocks = 1<<32 - 1
)

// minBlockMapSlots is the smallest table allocated.
const minBlockMapSlots = 64

func (t *blockMap) len() int { return t.n }

// at is the entry at slab index ix (non-zero).
func (t *blockMap) at(ix uint32) *blockInfo {
	return &t.chunks[ix>>slabShift][ix&slabMask]
}

// home is the slot where id's probe sequence starts (Fibonacci hashing).
func (t *blockMap) home(id int64) int {
	return int((uint64(id) * 0x9E3779B97F4A7C15) >> 32 & uint64(len(t.slots)-1))
}

// index returns the slab index of block id's entry, or 0.
func (t *blockMap) index(id int64) uint32 {
	if t.n == 0 {
		return 0
	}
	mask := len(t.slots) - 1
	for i := t.home(id); ; i = (i + 1) & mask {
		ix := t.slots[i]
		if ix == 0 || t.at(ix).ID == id {
			return ix
		}
	}
}

// get returns the entry of block id, or nil.
func (t *blockMap) get(id int64) *blockInfo {
	if ix := t.index(id); ix != 0 {
		return t.at(ix)
	}
	return nil
}

// add stores b as the entry of its id, replacing the one there (and any
// replicas it held outside), and returns the stored entry.
func (t *blockMap) add(b blockInfo) *blockInfo {
	if ix := t.index(b.ID); ix != 0 {
		p := t.at(ix)
		if p.n() == overflowN {
			delete(t.more, b.ID)
		}
		*p = b
		return p
	}
	if (t.n+1)*4 > len(t.slots)*3 {
		t.resize(max(minBlockMapSlots, 2*len(t.slots)))
	}
	ix := t.alloc()
	p := t.at(ix)
	*p = b
	mask := len(t.slots) - 1
	i := t.home(b.ID)
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = ix
	t.n++
	return p
}

// alloc takes a free slab index, adding a chunk when none is left.
func (t *blockMap) alloc() uint32 {
	if k := len(t.free); k > 0 {
		ix := t.free[k-1]
		t.free = t.free[:k-1]
		return ix
	}
	if t.used == 0 {
		t.used = 1 // index 0 marks an empty slot
	}
	if t.used == maxBlocks {
		// 4 billion blocks would take 256 GiB of entries alone.
		panic("blockmgmt: more than 4,294,967,294 blocks")
	}
	ix := t.used
	if int(ix>>slabShift) == len(t.chunks) {
		t.chunks = append(t.chunks, new([slabChunk]blockInfo))
	}
	t.used++
	return ix
}

// del removes the entry of block id, if any. Its slab index is reused by
// a later add: a *blockInfo of a deleted entry must not be kept.
func (t *blockMap) del(id int64) {
	if t.n == 0 {
		return
	}
	mask := len(t.slots) - 1
	i := t.home(id)
	for {
		ix := t.slots[i]
		if ix == 0 {
			return
		}
		if t.at(ix).ID == id {
			break
		}
		i = (i + 1) & mask
	}
	t.free = append(t.free, t.slots[i])
	if t.at(t.slots[i]).n() == overflowN {
		delete(t.more, id)
	}
	// Shift back every following entry of the run whose home is not
	// between the hole and itself (cyclically), so probes still find it.
	hole := i
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		ix := t.slots[j]
		if ix == 0 {
			break
		}
		h := t.home(t.at(ix).ID)
		if (j > hole && (h <= hole || h > j)) || (j < hole && h <= hole && h > j) {
			t.slots[hole] = ix
			hole = j
		}
	}
	t.slots[hole] = 0
	t.n--
	switch {
	case t.n == 0:
		// Everything is free: start the slab again.
		t.slots, t.chunks, t.used, t.free = nil, nil, 0, nil
	case len(t.slots) > minBlockMapSlots && t.n*8 < len(t.slots):
		t.resize(len(t.slots) / 2)
	}
}

func (t *blockMap) resize(size int) {
	old := t.slots
	t.slots = make([]uint32, size)
	mask := size - 1
	for _, ix := range old {
		if ix == 0 {
			continue
		}
		i := t.home(t.at(ix).ID)
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = ix
	}
}

// each calls fn for every entry, in no particular order; fn must not add
// or remove entries.
func (t *blockMap) each(fn func(b *blockInfo)) {
	for _, ix := range t.slots {
		if ix != 0 {
			fn(t.at(ix))
		}
	}
}
