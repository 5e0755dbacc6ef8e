package blockmgmt

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLowRedundancyModel drives the queues with random puts, removals and
// chooses against a model of FIFOs held in slices, bookmark included: a
// chosen block's bookmark moves past it, a removed bookmarked block moves
// it to the next one, and the end of a level sends it back to the front.
func TestLowRedundancyModel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var q lowRedundancy
	q.init()
	var levels [numLevels][]int64
	var bm [numLevels]int // index of the next block to visit; -1: the front
	for i := range bm {
		bm[i] = -1
	}
	where := map[int64]int{}
	one := map[int64]bool{}
	remove := func(id int64) {
		lv, ok := where[id]
		if !ok {
			return
		}
		j := slices.Index(levels[lv], id)
		levels[lv] = slices.Delete(levels[lv], j, j+1)
		switch {
		case bm[lv] == j && j == len(levels[lv]):
			bm[lv] = -1
		case bm[lv] > j:
			bm[lv]--
		}
		delete(where, id)
	}
	for step := range 20_000 {
		id := int64(r.IntN(300))
		switch k := r.IntN(10); {
		case k < 5:
			lv := r.IntN(numLevels)
			o := r.IntN(2) == 0
			q.put(id, lv, o)
			one[id] = o
			if old, ok := where[id]; !ok || old != lv {
				remove(id)
				levels[lv] = append(levels[lv], id)
				where[id] = lv
			}
		case k < 8:
			q.remove(id)
			remove(id)
		default:
			n := 1 + r.IntN(20)
			got := q.choose(n)
			var want []int64
			for lv := 0; lv < levelCorrupt && len(want) < n; lv++ {
				i := bm[lv]
				if i < 0 {
					i = 0
				}
				for ; i < len(levels[lv]) && len(want) < n; i++ {
					want = append(want, levels[lv][i])
				}
				if i >= len(levels[lv]) {
					i = -1
				}
				bm[lv] = i
			}
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: choose(%d) = %v, want %v", step, n, got, want)
			}
		}
		if q.size() != len(where) {
			t.Fatalf("step %d: size %d, want %d", step, q.size(), len(where))
		}
		for lv := range numLevels {
			var got []int64
			q.each(lv, func(id int64) { got = append(got, id) })
			if !slices.Equal(got, levels[lv]) || q.count(lv) != len(levels[lv]) {
				t.Fatalf("step %d: level %d holds %v (count %d), want %v", step, lv, got, q.count(lv), levels[lv])
			}
			ones := 0
			for _, id := range levels[lv] {
				if one[id] {
					ones++
				}
			}
			if q.countOnes(lv) != ones {
				t.Fatalf("step %d: level %d counts %d of replication 1, want %d", step, lv, q.countOnes(lv), ones)
			}
		}
	}
}

// BenchmarkLowRedundancyPut queues a million blocks, as leaving safe mode
// with no DataNode does (every block missing), and reports the heap each
// costs.
func BenchmarkLowRedundancyPut(b *testing.B) {
	const blocks = 1_000_000
	for range b.N {
		before := heapAfterGC()
		var q lowRedundancy
		q.init()
		for i := range blocks {
			q.put(int64(i), levelCorrupt, false)
		}
		b.ReportMetric(float64(heapAfterGC()-before)/blocks, "bytes/block")
		if q.size() != blocks {
			b.Fatal(q.size())
		}
	}
}
