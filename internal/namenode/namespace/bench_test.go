package namespace

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// buildFiles creates dirs × perDir empty closed files through Apply(Add)+Apply(Close)
// and returns the tree.
func buildFiles(tb testing.TB, dirs, perDir int) *Tree {
	tr := New(DefaultConfig("root"))
	perm := op.Perm{User: "gohdfs1", Group: "supergroup", Mode: 0o644}
	dperm := op.Perm{User: "gohdfs1", Group: "supergroup", Mode: 0o755}
	for d := 0; d < dirs; d++ {
		dir := fmt.Sprintf("/d%04d", d)
		if err := tr.Apply(&op.Mkdir{InodeID: tr.NextInodeID(), Path: dir, Mtime: 1, Perm: dperm}); err != nil {
			tb.Fatal(err)
		}
		for f := 0; f < perDir; f++ {
			p := fmt.Sprintf("%s/f%07d", dir, f)
			add := &op.Add{InodeID: tr.NextInodeID(), Path: p, Replication: 3, Mtime: 2, Atime: 2,
				BlockSize: 134217728, Perm: perm, ClientName: "DFSClient_1", ClientMachine: "127.0.0.1"}
			if err := tr.Apply(add); err != nil {
				tb.Fatal(err)
			}
			if err := tr.Apply(&op.Close{Path: p, Mtime: 3, Atime: 2}); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return tr
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkMemoryPerFile reports the heap held per empty file in a namespace
// of 1,000,000 files in 1,000 directories (run with -benchtime=1x).
func BenchmarkMemoryPerFile(b *testing.B) {
	for i := 0; i < b.N; i++ {
		before := heapInUse()
		tr := buildFiles(b, 1000, 1000)
		after := heapInUse()
		b.ReportMetric(float64(after-before)/1e6, "bytes/file")
		runtime.KeepAlive(tr)
	}
}

// TestMemoryPerFile checks the per-file heap on 100,000 files.
func TestMemoryPerFile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 100,000 files")
	}
	before := heapInUse()
	tr := buildFiles(t, 100, 1000)
	after := heapInUse()
	per := float64(after-before) / 100000
	runtime.KeepAlive(tr)
	t.Logf("%.1f bytes/file", per)
	if per > 200 {
		t.Fatalf("%.1f bytes per file, budget 200", per)
	}
}

func BenchmarkApplyAdd(b *testing.B) {
	tr := New(DefaultConfig("root"))
	perm := op.Perm{User: "u", Group: "g", Mode: 0o644}
	paths := make([]string, 1000)
	for d := range paths {
		paths[d] = fmt.Sprintf("/d%03d", d)
		if err := tr.Apply(&op.Mkdir{InodeID: tr.NextInodeID(), Path: paths[d], Perm: perm}); err != nil {
			b.Fatal(err)
		}
	}
	ops := make([]op.Add, b.N)
	for i := range ops {
		ops[i] = op.Add{Path: fmt.Sprintf("%s/f%d", paths[i%1000], i), Replication: 3, BlockSize: 1 << 27, Perm: perm, ClientName: "c"}
	}
	b.ResetTimer()
	for i := range ops {
		ops[i].InodeID = tr.NextInodeID()
		if err := tr.Apply(&ops[i]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStat(b *testing.B) {
	tr := buildFiles(b, 100, 1000)
	paths := make([]string, 1000)
	for i := range paths {
		paths[i] = fmt.Sprintf("/d%04d/f%07d", i%100, i)
	}
	c := Caller{User: "gohdfs2"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tr.Stat(c, paths[i%len(paths)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlanCreate(b *testing.B) {
	tr := buildFiles(b, 100, 100)
	c := Caller{User: "gohdfs1"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tr.PlanCreate(c, "/d0042/new", 0o644, "c", "m", CreateFlags{Create: true}, false, 3, 1<<27, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatDeep is getFileInfo's work in the namespace: Stat of files
// six components deep (the depth of hdfs bench namenode's files), 100,000
// files.
func BenchmarkStatDeep(b *testing.B) {
	tr := New(DefaultConfig("root"))
	dperm := op.Perm{User: "gohdfs1", Group: "supergroup", Mode: 0o755}
	perm := op.Perm{User: "gohdfs1", Group: "supergroup", Mode: 0o644}
	var paths []string
	made := map[string]bool{}
	for d := 0; d < 25000; d++ {
		dir := fmt.Sprintf("/nnThroughputBenchmark/fileStatus/ThroughputBenchDir%d/ThroughputBenchDir%d/ThroughputBenchDir%d", d/1000, d/100%10, d%100)
		for k := 1; k <= len(dir); k++ {
			if k < len(dir) && dir[k] != '/' {
				continue
			}
			if d := dir[:k]; !made[d] {
				made[d] = true
				if err := tr.Apply(&op.Mkdir{InodeID: tr.NextInodeID(), Path: d, Mtime: 1, Perm: dperm}); err != nil {
					b.Fatal(err)
				}
			}
		}
		for f := 0; f < 4; f++ {
			p := fmt.Sprintf("%s/ThroughputBench%d", dir, d*4+f)
			if err := tr.Apply(&op.Add{InodeID: tr.NextInodeID(), Path: p, Replication: 3, Mtime: 2, Atime: 2,
				BlockSize: 134217728, Perm: perm, ClientName: "c", ClientMachine: "m"}); err != nil {
				b.Fatal(err)
			}
			paths = append(paths, p)
		}
	}
	c := Caller{User: "gohdfs1", Groups: []string{"supergroup"}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tr.Stat(c, paths[i%len(paths)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBigDir measures, in one tree, a create (Apply of OP_ADD and
// OP_CLOSE) and a delete of a file in a directory of 1,000,000 files, the
// new name falling anywhere among the others, and the same in an empty
// directory beside it (same heap, same garbage collector work); then a
// getListing page of 1,000 entries from the middle of the big directory and
// from a directory of 1,000.
func BenchmarkBigDir(b *testing.B) {
	const big = 1_000_000
	tr := New(DefaultConfig("root"))
	perm := op.Perm{User: "u", Group: "g", Mode: 0o644}
	for _, d := range []string{"/big", "/small", "/page"} {
		if err := tr.Apply(&op.Mkdir{InodeID: tr.NextInodeID(), Path: d, Mtime: 1, Perm: op.Perm{User: "u", Group: "g", Mode: 0o755}}); err != nil {
			b.Fatal(err)
		}
	}
	add := func(p string) {
		if err := tr.Apply(&op.Add{InodeID: tr.NextInodeID(), Path: p, Replication: 3, Mtime: 2, Atime: 2,
			BlockSize: 1 << 27, Perm: perm, ClientName: "c", ClientMachine: "m"}); err != nil {
			b.Fatal(err)
		}
		if err := tr.Apply(&op.Close{Path: p, Mtime: 3, Atime: 2}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range big {
		add(fmt.Sprintf("/big/f%08d", i*2))
	}
	for i := range 1000 {
		add(fmt.Sprintf("/page/f%08d", i*2))
	}
	// New names fall between existing ones (odd numbers, spread over the
	// whole range).
	name := func(dir string, i int) string { return fmt.Sprintf("%s/f%08d-%d", dir, (i*7919%big)*2+1, i) }
	del := func(p string) {
		if err := tr.Apply(&op.Delete{Path: p, Mtime: 4}); err != nil {
			b.Fatal(err)
		}
	}
	for _, dir := range []string{"/small", "/big"} {
		b.Run("create"+dir, func(b *testing.B) {
			for i := range b.N {
				add(name(dir, i))
			}
			b.StopTimer()
			for i := range b.N {
				del(name(dir, i))
			}
		})
		b.Run("delete"+dir, func(b *testing.B) {
			b.StopTimer()
			for i := range b.N {
				add(name(dir, i))
			}
			b.StartTimer()
			for i := range b.N {
				del(name(dir, i))
			}
		})
	}
	c := Caller{User: "u", Super: true}
	for _, l := range []struct {
		dir, after string
	}{{"/page", "f"}, {"/big", fmt.Sprintf("f%08d", big)}} {
		b.Run("listPage1000"+l.dir, func(b *testing.B) {
			for range b.N {
				page, _, err := tr.List(c, l.dir, []byte(l.after), 1000)
				if err != nil || len(page) != 1000 {
					b.Fatalf("%d entries, %v", len(page), err)
				}
			}
		})
	}
}

// BenchmarkDeleteTree1M: the namespace part of a recursive delete of a
// directory of 1,000,000 one-block files (what the delete op's apply does
// under the NameNode's write lock: unlinking the tree, the counters, and
// collecting the blocks freed).
func BenchmarkDeleteTree1M(b *testing.B) {
	const files = 1_000_000
	var opTime, released, longest time.Duration
	nslices := 0
	perm := op.Perm{User: "u", Group: "g", Mode: 0o644}
	for range b.N {
		b.StopTimer()
		tr := New(DefaultConfig("root"))
		if err := tr.Apply(&op.Mkdir{InodeID: tr.NextInodeID(), Path: "/victim", Mtime: 1, Perm: op.Perm{User: "u", Group: "g", Mode: 0o755}}); err != nil {
			b.Fatal(err)
		}
		for i := range files {
			p := fmt.Sprintf("/victim/f%08d", i)
			if err := tr.Apply(&op.Add{InodeID: tr.NextInodeID(), Path: p, Replication: 3, Mtime: 2, Atime: 2,
				BlockSize: 1 << 27, Perm: perm, ClientName: "c", ClientMachine: "m"}); err != nil {
				b.Fatal(err)
			}
			if err := tr.Apply(&op.Close{Path: p, Mtime: 3, Atime: 2, Blocks: []op.Block{{ID: int64(1<<30 + i), NumBytes: 1, GenStamp: 1001}}}); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		b.StartTimer()
		var eff Effects
		start := time.Now()
		if err := tr.ApplyEffects(&op.Delete{Path: "/victim", Mtime: 4}, &eff); err != nil {
			b.Fatal(err)
		}
		opTime += time.Since(start)
		// What the op detached is released in slices of 2 ms, as the
		// NameNode's default slice budget.
		freed := len(eff.FreedBlocks)
		for more := true; more; {
			var slice Effects
			s := time.Now()
			more = tr.ReleaseDetached(func() bool { return time.Since(s) >= 2*time.Millisecond }, &slice)
			d := time.Since(s)
			released += d
			longest = max(longest, d)
			nslices++
			freed += len(slice.FreedBlocks)
		}
		if freed != files {
			b.Fatalf("%d blocks freed, want %d", freed, files)
		}
	}
	b.ReportMetric(float64(opTime.Microseconds())/1e3/float64(b.N), "ms/delete-op")
	b.ReportMetric(float64(released.Microseconds())/1e3/float64(b.N), "ms/release")
	b.ReportMetric(float64(longest.Microseconds())/1e3, "ms/longest-slice")
	b.ReportMetric(float64(nslices)/float64(b.N), "slices/delete")
}

// BenchmarkContentSummaryRoot answers getContentSummary of "/" over
// 1,000,000 files in 1,000 directories, for a superuser (no permission
// walk) and for the owner of the files (every directory checked).
func BenchmarkContentSummaryRoot(b *testing.B) {
	tr := buildFiles(b, 1000, 1000)
	for _, c := range []struct {
		name   string
		caller Caller
	}{{"super", Caller{User: "root"}}, {"user", Caller{User: "gohdfs1"}}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				s, err := tr.ContentSummary(c.caller, "/")
				if err != nil || s.FileCount != 1_000_000 || s.DirectoryCount != 1001 {
					b.Fatalf("%+v %v", s, err)
				}
			}
		})
	}
}
