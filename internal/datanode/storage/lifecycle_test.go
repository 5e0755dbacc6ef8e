package storage

import (
	"encoding/json"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
)

// finalize writes data as a finalized replica of id through the normal
// write path and returns it.
func finalize(t *testing.T, bp *BlockPool, id, gs int64, data []byte) Replica {
	t.Helper()
	ck := datatransfer.DefaultChecksum()
	w, err := bp.CreateRBW(Block{ID: id, GenStamp: gs}, ck, int64(len(data))+1)
	if err != nil {
		t.Fatal(err)
	}
	writePackets(t, w, ck, 0, data, []int{len(data)})
	r, err := w.Finalize(int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// dirScan runs one directory scan of c's pool: every volume's report, the
// differences with the map, and CheckAndUpdate on each.
func dirScan(t *testing.T, c *cluster, deleting func(int64) bool) (DiffStats, []Fix) {
	t.Helper()
	var disk []ScanInfo
	for _, v := range c.ds.Volumes() {
		rep, err := c.bp.CompileReport(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		disk = append(disk, rep...)
	}
	sort.SliceStable(disk, func(i, j int) bool { return disk[i].ID < disk[j].ID })
	diff, st := Differences(c.bp.Replicas(), disk, deleting)
	var fixes []Fix
	for _, si := range diff {
		f, err := c.bp.CheckAndUpdate(si)
		if err != nil {
			t.Fatal(err)
		}
		fixes = append(fixes, f)
	}
	return st, fixes
}

// Each way disk and replica map can disagree, found by one directory scan
// and fixed as Hadoop's checkAndUpdate does. Every case starts from the
// same two finalized replicas, blk_1 and blk_2 (stamp 1001), on vol0.
func TestDirectoryScanCases(t *testing.T) {
	data := randBytes(7, 3000)
	tests := []struct {
		name  string
		setup func(t *testing.T, c *cluster, r1 Replica) (deleting func(int64) bool)
		stats DiffStats
		fix   FixAction // of the single difference (FixNone: none, or only files deleted)
		check func(t *testing.T, c *cluster, r1 Replica, fixes []Fix)
	}{
		{
			name:  "in agreement",
			setup: func(t *testing.T, c *cluster, r1 Replica) func(int64) bool { return nil },
			stats: DiffStats{TotalBlocks: 2},
			fix:   -1,
		},
		{
			name: "block file missing",
			setup: func(t *testing.T, c *cluster, r1 Replica) func(int64) bool {
				if err := os.Remove(r1.BlockPath); err != nil {
					t.Fatal(err)
				}
				return nil
			},
			stats: DiffStats{TotalBlocks: 2, MissingBlockFile: 1},
			fix:   FixRemoved,
			check: func(t *testing.T, c *cluster, r1 Replica, fixes []Fix) {
				if _, ok := c.bp.Get(1); ok {
					t.Fatal("blk_1 still in the map")
				}
				if fileExists(r1.MetaPath) {
					t.Fatal("its meta file was left behind")
				}
			},
		},
		{
			name: "block and meta files missing",
			setup: func(t *testing.T, c *cluster, r1 Replica) func(int64) bool {
				os.Remove(r1.BlockPath)
				os.Remove(r1.MetaPath)
				return nil
			},
			stats: DiffStats{TotalBlocks: 2, MissingBlockFile: 1, MissingMetaFile: 1},
			fix:   FixRemoved,
		},
		{
			name: "meta file missing",
			setup: func(t *testing.T, c *cluster, r1 Replica) func(int64) bool {
				os.Remove(r1.MetaPath)
				return nil
			},
			stats: DiffStats{TotalBlocks: 2, MissingMetaFile: 1, MismatchBlocks: 1},
			fix:   FixUpdated,
			check: func(t *testing.T, c *cluster, r1 Replica, fixes []Fix) {
				if r, _ := c.bp.Get(1); r.GenStamp != 0 {
					t.Fatalf("stamp %d, want 0 (the NameNode then deletes the replica as stale)", r.GenStamp)
				}
			},
		},
		{
			name: "block and meta file on disk, not in the map",
			setup: func(t *testing.T, c *cluster, r1 Replica) func(int64) bool {
				plant(t, c.dirs[1], 77, 1005, data[:1234])
				return nil
			},
			stats: DiffStats{TotalBlocks: 2, MissingMemoryBlocks: 1},
			fix:   FixAdded,
			check: func(t *testing.T, c *cluster, r1 Replica, fixes []Fix) {
				r, ok := c.bp.Get(77)
				if !ok || r.GenStamp != 1005 || r.NumBytes != 1234 || r.State != Finalized || r.VolumeDir != c.dirs[1] {
					t.Fatalf("blk_77 in the map as %+v, %v", r, ok)
				}
				if got := readAll(t, c.bp, r.Block, 512); string(got) != string(data[:1234]) {
					t.Fatal("the added replica does not read back")
				}
			},
		},
		{
			name: "meta file alone on disk",
			setup: func(t *testing.T, c *cluster, r1 Replica) func(int64) bool {
				b, _ := plant(t, c.dirs[0], 78, 1005, data[:10])
				os.Remove(b)
				return nil
			},
			stats: DiffStats{TotalBlocks: 2, MissingMemoryBlocks: 1, MissingBlockFile: 1},
			fix:   FixNone,
			check: func(t *testing.T, c *cluster, r1 Replica, fixes []Fix) {
				if len(fixes[0].Deleted) != 1 || !strings.HasSuffix(fixes[0].Deleted[0], MetaFileName(78, 1005)) {
					t.Fatalf("deleted %v, want the lone meta file", fixes[0].Deleted)
				}
				if _, ok := c.bp.Get(78); ok {
					t.Fatal("blk_78 entered the map")
				}
			},
		},
		{
			name: "block file alone on disk",
			setup: func(t *testing.T, c *cluster, r1 Replica) func(int64) bool {
				_, m := plant(t, c.dirs[0], 79, 1005, data[:10])
				os.Remove(m)
				return nil
			},
			stats: DiffStats{TotalBlocks: 2, MissingMemoryBlocks: 1, MissingMetaFile: 1},
			fix:   FixAdded,
			check: func(t *testing.T, c *cluster, r1 Replica, fixes []Fix) {
				if r, ok := c.bp.Get(79); !ok || r.GenStamp != 0 {
					t.Fatalf("blk_79 = %+v, %v; want stamp 0", r, ok)
				}
			},
		},
		{
			name: "length differs",
			setup: func(t *testing.T, c *cluster, r1 Replica) func(int64) bool {
				appendBytes(t, r1.BlockPath, []byte("tail"))
				return nil
			},
			stats: DiffStats{TotalBlocks: 2, MismatchBlocks: 1},
			fix:   FixLength,
			check: func(t *testing.T, c *cluster, r1 Replica, fixes []Fix) {
				if r, _ := c.bp.Get(1); r.NumBytes != r1.NumBytes+4 {
					t.Fatalf("length %d, want the block file's %d", r.NumBytes, r1.NumBytes+4)
				}
				if fixes[0].Old.NumBytes != r1.NumBytes {
					t.Fatalf("old length %d, want %d", fixes[0].Old.NumBytes, r1.NumBytes)
				}
			},
		},
		{
			name: "generation stamp differs",
			setup: func(t *testing.T, c *cluster, r1 Replica) func(int64) bool {
				if err := os.Rename(r1.MetaPath, filepath.Join(filepath.Dir(r1.MetaPath), MetaFileName(1, 1010))); err != nil {
					t.Fatal(err)
				}
				return nil
			},
			stats: DiffStats{TotalBlocks: 2, MismatchBlocks: 1},
			fix:   FixUpdated,
			check: func(t *testing.T, c *cluster, r1 Replica, fixes []Fix) {
				if r, _ := c.bp.Get(1); r.GenStamp != 1010 {
					t.Fatalf("stamp %d, want 1010 from the meta file", r.GenStamp)
				}
			},
		},
		{
			name: "newer copy on another volume",
			setup: func(t *testing.T, c *cluster, r1 Replica) func(int64) bool {
				plant(t, c.dirs[1], 1, 1002, data[:r1.NumBytes])
				return nil
			},
			stats: DiffStats{TotalBlocks: 2, MismatchBlocks: 1},
			fix:   FixUpdated,
			check: func(t *testing.T, c *cluster, r1 Replica, fixes []Fix) {
				r, _ := c.bp.Get(1)
				if r.GenStamp != 1002 || r.VolumeDir != c.dirs[1] {
					t.Fatalf("kept %+v, want the newer copy on vol1", r)
				}
				if fileExists(r1.BlockPath) || fileExists(r1.MetaPath) {
					t.Fatal("the older copy's files are still there")
				}
			},
		},
		{
			name: "same copy on another volume",
			setup: func(t *testing.T, c *cluster, r1 Replica) func(int64) bool {
				plant(t, c.dirs[1], 1, 1001, data[:r1.NumBytes])
				return nil
			},
			stats: DiffStats{TotalBlocks: 2, DuplicateBlocks: 1},
			fix:   FixNone,
			check: func(t *testing.T, c *cluster, r1 Replica, fixes []Fix) {
				if r, _ := c.bp.Get(1); r.VolumeDir != c.dirs[0] {
					t.Fatalf("kept %s, want the map's own copy", r.VolumeDir)
				}
				if len(fixes[0].Deleted) != 2 {
					t.Fatalf("deleted %v, want the other copy's two files", fixes[0].Deleted)
				}
			},
		},
		{
			name: "copy without meta file on another volume",
			setup: func(t *testing.T, c *cluster, r1 Replica) func(int64) bool {
				_, m := plant(t, c.dirs[0], 2, 1001, data[:100])
				os.Remove(m)
				return nil
			},
			stats: DiffStats{TotalBlocks: 2, MismatchBlocks: 1, MissingMetaFile: 1},
			fix:   FixNone,
			check: func(t *testing.T, c *cluster, r1 Replica, fixes []Fix) {
				if len(fixes[0].Deleted) != 1 || !strings.HasPrefix(fixes[0].Deleted[0], c.dirs[0]) {
					t.Fatalf("deleted %v, want the stray block file on vol0", fixes[0].Deleted)
				}
				if r, _ := c.bp.Get(2); r.GenStamp != 1001 || r.VolumeDir != c.dirs[1] {
					t.Fatalf("blk_2 changed to %+v", r)
				}
			},
		},
		{
			name: "files of a replica being deleted",
			setup: func(t *testing.T, c *cluster, r1 Replica) func(int64) bool {
				plant(t, c.dirs[0], 80, 1005, data[:10])
				return func(id int64) bool { return id == 80 }
			},
			stats: DiffStats{TotalBlocks: 2},
			fix:   -1,
		},
		{
			name: "finalized files of a replica being written",
			setup: func(t *testing.T, c *cluster, r1 Replica) func(int64) bool {
				w, err := c.bp.CreateRBW(Block{ID: 81, GenStamp: 1005}, datatransfer.DefaultChecksum(), 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { w.Abort() })
				plant(t, c.dirs[1], 81, 1004, data[:10])
				return nil
			},
			stats: DiffStats{TotalBlocks: 2, MissingMemoryBlocks: 1},
			fix:   FixNone,
			check: func(t *testing.T, c *cluster, r1 Replica, fixes []Fix) {
				if r, _ := c.bp.Get(81); r.State != RBW || r.GenStamp != 1005 {
					t.Fatalf("the RBW replica changed to %+v", r)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, 2, nil)
			// Round robin: the first replica goes to vol0, the second to
			// vol1; move the second's files next to the first's.
			r1 := finalize(t, c.bp, 1, 1001, data)
			r2 := finalize(t, c.bp, 2, 1001, data[:2000])
			c.restart() // the map is rebuilt from disk
			r1, _ = c.bp.Get(1)
			r2, _ = c.bp.Get(2)
			if r2.VolumeDir != c.dirs[1] || r1.VolumeDir != c.dirs[0] {
				t.Fatalf("replicas on %s and %s", r1.VolumeDir, r2.VolumeDir)
			}
			deleting := tt.setup(t, c, r1)
			st, fixes := dirScan(t, c, deleting)
			if st != tt.stats {
				t.Fatalf("stats\n got %v\nwant %v", st, tt.stats)
			}
			if tt.fix == -1 {
				if len(fixes) != 0 {
					t.Fatalf("fixes %+v, want none", fixes)
				}
				return
			}
			if len(fixes) != 1 || fixes[0].Action != tt.fix {
				t.Fatalf("fixes %+v, want one %v", fixes, tt.fix)
			}
			if tt.check != nil {
				tt.check(t, c, r1, fixes)
			}
			// A second scan finds nothing more to fix.
			if _, again := dirScan(t, c, deleting); len(again) != 0 {
				for _, f := range again {
					if f.Action != FixNone || len(f.Deleted) > 0 {
						t.Fatalf("second scan fixed again: %+v", again)
					}
				}
			}
		})
	}
}

// The block iterator walks finalized/ in Hadoop's order (names sorted as
// strings at every level), and a saved cursor resumes the pass.
func TestBlockIteratorCursor(t *testing.T) {
	c := newCluster(t, 1, nil)
	ids := []int64{1, 300, 70000, 1073741825, 2 << 16, 10 << 16, 5}
	for _, id := range ids {
		plant(t, c.dirs[0], id, 1000, randBytes(id, 100))
	}
	c.restart()
	v := c.ds.Volumes()[0]
	var want []int64
	{
		type named struct {
			path string
			id   int64
		}
		var all []named
		for _, id := range ids {
			a, b := BlockSubdirs(id)
			all = append(all, named{filepath.Join("subdir"+strconv.Itoa(a), "subdir"+strconv.Itoa(b), BlockFileName(id)), id})
		}
		sort.Slice(all, func(i, j int) bool {
			pi, pj := strings.Split(all[i].path, "/"), strings.Split(all[j].path, "/")
			for k := range pi {
				if pi[k] != pj[k] {
					return pi[k] < pj[k]
				}
			}
			return false
		})
		for _, n := range all {
			want = append(want, n.id)
		}
	}
	it := c.bp.NewBlockIterator(v, "scanner", testNow)
	var got []int64
	for range 3 {
		id, ok, err := it.Next()
		if err != nil || !ok {
			t.Fatalf("Next = %d, %v, %v", id, ok, err)
		}
		got = append(got, id)
	}
	if err := it.Save(testNow); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(c.dirs[0], "current", testPool, "scanner.cursor"))
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"lastSavedMs", "iterStartMs", "curFinalizedDir", "curFinalizedSubDir", "curEntry", "atEnd"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("cursor file lacks %q: %s", k, raw)
		}
	}
	it2, err := c.bp.LoadBlockIterator(v, "scanner")
	if err != nil {
		t.Fatal(err)
	}
	if it2.Cursor().Position() != it.Cursor().Position() {
		t.Fatalf("loaded at %s, saved at %s", it2.Cursor().Position(), it.Cursor().Position())
	}
	for {
		id, ok, err := it2.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, id)
	}
	if !it2.AtEnd() {
		t.Fatal("not at end after the last block")
	}
	if len(got) != len(want) {
		t.Fatalf("walked %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("walked %v, want %v", got, want)
		}
	}
	if _, err := c.bp.LoadBlockIterator(v, "other"); err == nil {
		t.Fatal("loaded a cursor that was never saved")
	}
}

// Verify finds a flipped byte, a short block file and a short meta file,
// paces itself, and treats a replica that left as not found.
func TestVerify(t *testing.T) {
	c := newCluster(t, 2, nil)
	data := randBytes(3, 700<<10)
	r := finalize(t, c.bp, 1, 1001, data)
	v, _ := c.ds.Volume(r.VolumeDir)
	var paced int64
	got, n, err := c.bp.Verify(v, 1, func(k int64) error { paced += k; return nil })
	if err != nil || n != int64(len(data)) || paced != int64(len(data)) || got.Block != r.Block {
		t.Fatalf("Verify = %+v, %d, %v (paced %d)", got, n, err, paced)
	}
	corrupt(t, r.BlockPath, 300<<10+17)
	_, _, err = c.bp.Verify(v, 1, nil)
	var ce *CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) || ce.Offset != 300<<10 {
		t.Fatalf("flipped byte: %v (offset %+v)", err, ce)
	}
	corrupt(t, r.BlockPath, 300<<10+17) // back
	truncate(t, r.BlockPath, 500<<10)
	if _, _, err := c.bp.Verify(v, 1, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("short block file: %v", err)
	}
	truncate(t, r.BlockPath, 0)
	appendBytes(t, r.BlockPath, data)
	truncate(t, r.MetaPath, 100)
	if _, _, err := c.bp.Verify(v, 1, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("short meta file: %v", err)
	}
	other := c.ds.Volumes()[1]
	if other == v {
		other = c.ds.Volumes()[0]
	}
	if _, _, err := c.bp.Verify(other, 1, nil); !errors.Is(err, ErrReplicaNotFound) {
		t.Fatalf("verify on the wrong volume: %v", err)
	}
	stop := errors.New("stop")
	if _, _, err := c.bp.Verify(v, 1, func(int64) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("pace error: %v", err)
	}
}

func TestRoundRobinPolicy(t *testing.T) {
	var p RoundRobinPolicy
	avail := []int64{100, 5, 100}
	var got []int
	for range 4 {
		got = append(got, p.Choose(avail, 10))
	}
	if want := []int{0, 2, 0, 2}; !equalInts(got, want) {
		t.Fatalf("chose %v, want %v (the full volume skipped)", got, want)
	}
	if i := p.Choose([]int64{1, 2}, 10); i != -1 {
		t.Fatalf("chose %d with no room anywhere", i)
	}
}

func TestAvailableSpacePolicy(t *testing.T) {
	const gib = 1 << 30
	// Within the threshold: round robin.
	p := NewAvailableSpacePolicy(10*gib, 0.75, rand.New(rand.NewSource(1)))
	var got []int
	for range 3 {
		got = append(got, p.Choose([]int64{100 * gib, 95 * gib, 92 * gib}, 1))
	}
	if !equalInts(got, []int{0, 1, 2}) {
		t.Fatalf("balanced volumes: chose %v, want round robin", got)
	}
	// One volume far emptier: it gets about 3 in 4 replicas.
	counts := make([]int, 3)
	for range 4000 {
		counts[p.Choose([]int64{500 * gib, 20 * gib, 25 * gib}, 1)]++
	}
	if f := float64(counts[0]) / 4000; f < 0.55 || f > 0.65 {
		// Two low volumes weigh against one high one: 0.75·1 / (0.75·1 + 0.25·2) = 0.6.
		t.Fatalf("high volume took %.2f of the replicas (%v), want about 0.6", f, counts)
	}
	// The low volumes cannot take the replica: the high one always does.
	for range 100 {
		if i := p.Choose([]int64{500 * gib, 1, 2}, 100); i != 0 {
			t.Fatalf("chose low volume %d without room", i)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A volume taken out of service takes its replicas along (returned as
// lost), stops the writers on it, releases its lock, and comes back with
// its replicas when added again.
func TestRemoveAndAddVolume(t *testing.T) {
	c := newCluster(t, 2, nil)
	data := randBytes(5, 5000)
	r1 := finalize(t, c.bp, 1, 1001, data) // vol0
	r2 := finalize(t, c.bp, 2, 1001, data) // vol1
	ck := datatransfer.DefaultChecksum()
	w3, err := c.bp.CreateRBW(Block{ID: 3, GenStamp: 1001}, ck, 1<<20) // vol0
	if err != nil {
		t.Fatal(err)
	}
	writePackets(t, w3, ck, 0, data[:1024], []int{1024})
	stopped := make(chan struct{})
	w3.OnStop(func() { close(stopped) })
	w4, err := c.bp.CreateRBW(Block{ID: 4, GenStamp: 1001}, ck, 1<<20) // vol1
	if err != nil {
		t.Fatal(err)
	}
	defer w4.Abort()
	if r1.VolumeDir != c.dirs[0] || r2.VolumeDir != c.dirs[1] || w3.Replica().VolumeDir != c.dirs[0] {
		t.Fatalf("placement %s %s %s", r1.VolumeDir, r2.VolumeDir, w3.Replica().VolumeDir)
	}
	if err := c.bp.Invalidate([]Block{r1.Block}); err != nil {
		t.Fatal(err)
	}
	v0, _ := c.ds.Volume(c.dirs[0])
	lost, err := c.ds.RemoveVolume(v0)
	if err != nil {
		t.Fatal(err)
	}
	<-stopped
	var lostIDs []int64
	for _, l := range lost {
		lostIDs = append(lostIDs, l.Replica.ID)
	}
	sort.Slice(lostIDs, func(i, j int) bool { return lostIDs[i] < lostIDs[j] })
	// blk_1 may have been deleted already, or still be queued.
	if !(equalInt64s(lostIDs, []int64{3}) || equalInt64s(lostIDs, []int64{1, 3})) {
		t.Fatalf("lost %v, want blk_3 (and blk_1 if its deletion was pending)", lostIDs)
	}
	if err := w3.WritePacket(1024, data[1024:2048], ck.Compute(nil, data[1024:2048])); !errors.Is(err, ErrWriterStopped) {
		t.Fatalf("writer on the removed volume: %v", err)
	}
	w3.Close()
	if _, ok := c.bp.Get(3); ok {
		t.Fatal("blk_3 still in the map")
	}
	if r, ok := c.bp.Get(2); !ok || r.VolumeDir != c.dirs[1] {
		t.Fatal("blk_2 on the other volume is gone")
	}
	w5, err := c.bp.CreateRBW(Block{ID: 5, GenStamp: 1001}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if w5.Replica().VolumeDir != c.dirs[1] {
		t.Fatalf("new replica on %s, want the volume left", w5.Replica().VolumeDir)
	}
	w5.Abort()
	if _, err := c.ds.RemoveVolume(v0); !errors.Is(err, ErrBadVolume) {
		t.Fatalf("second removal: %v", err)
	}
	// The lock is free: the volume can be opened and added again.
	v, err := OpenVolume(VolumeConfig{Dir: c.dirs[0], Testing: VolumeTesting{LockHolder: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.ds.AddVolume(v, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := c.bp.Get(3); !ok || r.State != RWR {
		t.Fatalf("blk_3 after the volume came back: %+v, %v (scan %+v)", r, ok, res)
	}
	if _, err := c.ds.AddVolume(v, testNow); !errors.Is(err, ErrBadVolume) {
		t.Fatalf("adding a volume twice: %v", err)
	}
}

func equalInt64s(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
