package blockmgmt

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestBlockMapModel runs random puts, deletes and lookups against a Go map,
// with ids from a small range so that probe runs collide, wrap around the
// end of the table and shrink it again.
func TestBlockMapModel(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	var bm blockMap
	model := map[int64]*blockInfo{}
	for step := 0; step < 200000; step++ {
		id := rnd.Int64N(3000) - 100 // negative ids exist (legacy random block ids)
		switch rnd.IntN(5) {
		case 0, 1:
			b := &blockInfo{Block: Block{ID: id}}
			bm.put(b)
			model[id] = b
		case 2, 3:
			bm.del(id)
			delete(model, id)
		}
		if got := bm.get(id); got != model[id] {
			t.Fatalf("step %d: get(%d) = %p, want %p", step, id, got, model[id])
		}
		if bm.len() != len(model) {
			t.Fatalf("step %d: len %d, want %d", step, bm.len(), len(model))
		}
		if step%10000 == 0 {
			seen := 0
			bm.each(func(b *blockInfo) {
				if model[b.ID] != b {
					t.Fatalf("step %d: each gave blk_%d that the model lacks", step, b.ID)
				}
				seen++
			})
			if seen != len(model) {
				t.Fatalf("step %d: each gave %d entries, want %d", step, seen, len(model))
			}
			for id, b := range model {
				if bm.get(id) != b {
					t.Fatalf("step %d: blk_%d lost", step, id)
				}
			}
		}
	}
	// Empty it: the table is released.
	for id := range model {
		bm.del(id)
	}
	if bm.len() != 0 || bm.slots != nil {
		t.Fatalf("after deleting everything: len %d, %d slots", bm.len(), len(bm.slots))
	}
}

// TestBlockInfoSize keeps an entry of the blocks map, with room for three
// replicas, within the 96-byte size class.
func TestBlockInfoSize(t *testing.T) {
	if s := unsafe.Sizeof(blockInfo{}); s > 96 {
		t.Fatalf("blockInfo is %d bytes", s)
	}
}

// TestReplicaListForms adds replicas past the inline room and removes them
// again, checking the list and each storage's back index on the way.
func TestReplicaListForms(t *testing.T) {
	m := New(DefaultConfig(), rand.New(rand.NewPCG(1, 2)))
	b := &blockInfo{Block: Block{ID: 1}}
	var sts []*storage
	for i := 0; i < 6; i++ {
		st := &storage{id: string(rune('a' + i)), dn: &datanode{}}
		sts = append(sts, st)
		m.addReplica(b, st, Finalized, 0)
	}
	check := func(want []*storage) {
		t.Helper()
		rs := b.reps()
		if len(rs) != len(want) {
			t.Fatalf("%d replicas, want %d", len(rs), len(want))
		}
		for i, r := range rs {
			if r.st != want[i] || r.st.blocks[r.idx] != b {
				t.Fatalf("replica %d on %s (index %d), want %s", i, r.st.id, r.idx, want[i].id)
			}
		}
		if (b.more != nil) != (len(want) > inlineReplicas) {
			t.Fatalf("%d replicas held outside the entry: %v", len(want), b.more != nil)
		}
	}
	check(sts)
	m.removeReplicaAt(b, 0)
	check(sts[1:])
	m.removeReplicaAt(b, 2)
	want := []*storage{sts[1], sts[2], sts[4], sts[5]}
	check(want)
	m.removeReplicaAt(b, 3)
	check(want[:3])
	m.removeReplicaAt(b, 1)
	check([]*storage{sts[1], sts[4]})
	m.addReplica(b, sts[0], RBW, 0)
	check([]*storage{sts[1], sts[4], sts[0]})
}
