package blockmgmt

import (
	"math/rand/v2"
	"reflect"
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
			model[id] = bm.add(blockInfo{Block: Block{ID: id, NumBytes: id}})
		case 2, 3:
			bm.del(id)
			delete(model, id)
		}
		if got := bm.get(id); got != model[id] || (got != nil && got.NumBytes != id) {
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
	if bm.len() != 0 || bm.slots != nil || bm.chunks != nil {
		t.Fatalf("after deleting everything: len %d, %d slots", bm.len(), len(bm.slots))
	}
}

// TestBlockInfoSize keeps an entry of the blocks map, with room for three
// replicas, at 56 bytes, a replica at 8, and the entry free of pointers
// (the slab's chunks are then not scanned by the collector).
func TestBlockInfoSize(t *testing.T) {
	if s := unsafe.Sizeof(blockInfo{}); s > 56 {
		t.Fatalf("blockInfo is %d bytes", s)
	}
	if s := unsafe.Sizeof(replica{}); s > 8 {
		t.Fatalf("replica is %d bytes", s)
	}
	if hasPointers(reflect.TypeOf(blockInfo{})) {
		t.Fatal("blockInfo holds a pointer")
	}
}

func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	case reflect.Array:
		return hasPointers(t.Elem())
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return false
	}
	return true
}

// TestReplicaListForms adds replicas past the inline room and removes them
// again, checking the list and each storage's back index on the way. The
// storages get indices past 16 bits, so the index's high bits are used.
func TestReplicaListForms(t *testing.T) {
	m := New(DefaultConfig(), rand.New(rand.NewPCG(1, 2)))
	m.stors = make([]*storage, 70000)
	other := m.blocks.add(blockInfo{Block: Block{ID: 2}})
	b := m.blocks.add(blockInfo{Block: Block{ID: 1}})
	var sts []*storage
	for i := 0; i < 6; i++ {
		st := &storage{id: string(rune('a' + i)), dn: &datanode{}}
		m.addStorage(st)
		sts = append(sts, st)
		m.addReplica(other, st, Finalized, 0) // so that b's removals move other
		m.addReplica(b, st, Finalized, rMark)
	}
	check := func(want []*storage) {
		t.Helper()
		for _, blk := range []*blockInfo{b, other} {
			for i, r := range m.reps(blk) {
				st := m.stOf(r)
				if st.blocks[r.idx] != m.blocks.index(blk.ID) {
					t.Fatalf("blk_%d: replica %d on %s: index %d does not name the block", blk.ID, i, st.id, r.idx)
				}
				if r.flags&(rCorrupt|rMark) != rMark && blk == b {
					t.Fatalf("replica %d flags %#x", i, r.flags)
				}
			}
		}
		rs := m.reps(b)
		if len(rs) != len(want) {
			t.Fatalf("%d replicas, want %d", len(rs), len(want))
		}
		for i, r := range rs {
			if m.stOf(r) != want[i] {
				t.Fatalf("replica %d on %s, want %s", i, m.stOf(r).id, want[i].id)
			}
		}
		if (b.n() == overflowN) != (len(want) > inlineReplicas) {
			t.Fatalf("%d replicas: held outside the entry: %v", len(want), b.n() == overflowN)
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
	m.addReplica(b, sts[0], RBW, rMark)
	check([]*storage{sts[1], sts[4], sts[0]})
	if _, ok := m.blocks.more[b.ID]; ok || len(m.blocks.more) != 1 {
		t.Fatalf("blocks with replicas outside: %d (blk_1 among them: %v)", len(m.blocks.more), ok)
	}
}

// TestBlockInfoMeta sets each field packed in blockInfo.meta to its
// extremes and checks that the others keep their values, and that file
// ids beyond 36 bits (and negative ones) are kept aside and forgotten
// with the block.
func TestBlockInfoMeta(t *testing.T) {
	m := New(DefaultConfig(), rand.New(rand.NewPCG(1, 2)))
	b := m.blocks.add(blockInfo{Block: Block{ID: 9, NumBytes: 1, GenStamp: 2}})
	type fields struct {
		file  int64
		repl  int16
		state BlockUCState
		flags uint8
		n     uint8
		pol   uint8
	}
	get := func() fields {
		return fields{m.fileOf(b), b.repl(), b.state(), b.flags(), b.n(), b.policy()}
	}
	want := fields{}
	for step, f := range []func(){
		func() { m.setFile(b, bigFileID-1); want.file = bigFileID - 1 },
		func() { b.setRepl(1<<15 - 1); want.repl = 1<<15 - 1 },
		func() { b.setState(Committed); want.state = Committed },
		func() { b.setFlags(bComplete | bSafe | bCorrupt); want.flags = bComplete | bSafe | bCorrupt },
		func() { b.setN(overflowN); want.n = overflowN },
		func() { b.setPolicy(31); want.pol = 31 },
		func() { m.setFile(b, 1<<40); want.file = 1 << 40 },
		func() { b.setRepl(3); want.repl = 3 },
		func() { b.setState(Complete); want.state = Complete },
		func() { b.setFlags(0); want.flags = 0 },
		func() { b.setN(0); want.n = 0 },
		func() { b.setPolicy(200); want.pol = 0 }, // no such HDFS id: the default
		func() { m.setFile(b, -5); want.file = -5 },
		func() { m.setFile(b, 16386); want.file = 16386 },
		func() { m.setFile(b, 1<<36); want.file = 1 << 36 },
	} {
		f()
		if got := get(); got != want {
			t.Fatalf("step %d: %+v, want %+v", step, got, want)
		}
		if b.Block != (Block{ID: 9, NumBytes: 1, GenStamp: 2}) {
			t.Fatalf("step %d: block changed to %+v", step, b.Block)
		}
	}
	if len(m.bigFile) != 1 {
		t.Fatalf("%d file ids kept aside, want 1", len(m.bigFile))
	}
	m.setFile(b, 7)
	if len(m.bigFile) != 0 || m.fileOf(b) != 7 {
		t.Fatalf("file %d, %d kept aside", m.fileOf(b), len(m.bigFile))
	}
	m.setFile(b, 1<<50)
	m.forget(b)
	if len(m.bigFile) != 0 || m.blocks.len() != 0 {
		t.Fatalf("after forget: %d kept aside, %d blocks", len(m.bigFile), m.blocks.len())
	}
}
