package storage

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	hstorage "github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testPool = "BP-1-127.0.0.1-1764622225000"

var testNow = time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)

func bpVersion() *hstorage.Version {
	return &hstorage.Version{LayoutVersion: hstorage.DataNodeLayoutVersion, NamespaceID: 42, BlockPoolID: testPool}
}

func testVolumeVersion(i int) *hstorage.Version {
	return &hstorage.Version{
		LayoutVersion: hstorage.DataNodeLayoutVersion, StorageType: hstorage.StorageTypeDataNode,
		ClusterID: "CID-test", StorageID: fmt.Sprintf("DS-%d", i), DatanodeUUID: "dn-uuid",
	}
}

// cluster is a test dataset over volumes in temp dirs.
type cluster struct {
	t       *testing.T
	dirs    []string
	cfg     Config
	statfs  func(dir string) (DiskStat, error)
	ds      *Dataset
	bp      *BlockPool
	scan    ScanResult
	deleted chan Block
}

func newCluster(t *testing.T, nvols int, statfs func(string) (DiskStat, error)) *cluster {
	t.Helper()
	c := &cluster{t: t, statfs: statfs, deleted: make(chan Block, 100)}
	root := t.TempDir()
	for i := 0; i < nvols; i++ {
		c.dirs = append(c.dirs, filepath.Join(root, fmt.Sprintf("vol%d", i)))
	}
	c.cfg = Config{OnDeleted: func(pool string, b Block) { c.deleted <- b }}
	c.open(true)
	t.Cleanup(func() { c.close() })
	return c
}

func (c *cluster) open(format bool) {
	c.t.Helper()
	var vols []*Volume
	for i, d := range c.dirs {
		v, err := OpenVolume(VolumeConfig{Dir: d, Testing: VolumeTesting{StatFS: c.statfs, LockHolder: "test"}})
		if err != nil {
			c.t.Fatal(err)
		}
		if format && v.Version() == nil {
			if err := v.Format(testVolumeVersion(i), testNow); err != nil {
				c.t.Fatal(err)
			}
		}
		vols = append(vols, v)
	}
	ds, err := NewDataset(c.cfg, vols)
	if err != nil {
		c.t.Fatal(err)
	}
	bp, res, err := ds.AddBlockPool(bpVersion(), testNow)
	if err != nil {
		c.t.Fatal(err)
	}
	c.ds, c.bp, c.scan = ds, bp, res
}

func (c *cluster) close() {
	if c.ds != nil {
		if err := c.ds.Close(); err != nil {
			c.t.Error(err)
		}
		c.ds = nil
	}
}

func (c *cluster) restart() {
	c.t.Helper()
	c.close()
	c.open(false)
}

func randBytes(seed int64, n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

// writePackets writes data to w in packets cut at the given lengths, each
// with checksums over its own bytes in checksum c.
func writePackets(t *testing.T, w *ReplicaWriter, c datatransfer.DataChecksum, base int64, data []byte, cuts []int) {
	t.Helper()
	off := 0
	for _, n := range cuts {
		p := data[off : off+n]
		if err := w.WritePacket(base+int64(off), p, c.Compute(nil, p)); err != nil {
			t.Fatalf("packet at %d (+%d): %v", base+int64(off), n, err)
		}
		off += n
		w.SetBytesAcked(base + int64(off))
	}
	if off != len(data) {
		t.Fatalf("cuts cover %d of %d bytes", off, len(data))
	}
}

// checkFiles checks that a replica's meta file holds exactly the checksums of
// its block file and returns the block data.
func checkFiles(t *testing.T, r Replica) []byte {
	t.Helper()
	data, err := os.ReadFile(r.BlockPath)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := os.ReadFile(r.MetaPath)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseMetaHeader(meta)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) != r.NumBytes {
		t.Fatalf("block file %d bytes, replica %d", len(data), r.NumBytes)
	}
	if want := MetaFileLen(c, int64(len(data))); int64(len(meta)) != want {
		t.Fatalf("meta file %d bytes, want %d", len(meta), want)
	}
	if want := c.Compute(nil, data); !bytes.Equal(meta[MetaHeaderLen:], want) {
		t.Fatal("stored checksums differ from a fresh computation over the block file")
	}
	return data
}

// readAll reads a replica through ReplicaReader in chunk-aligned pieces,
// verifying every piece.
func readAll(t *testing.T, bp *BlockPool, b Block, piece int) []byte {
	t.Helper()
	rr, err := bp.OpenReader(b)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	var out []byte
	var dbuf, sbuf []byte
	for off := int64(0); off < rr.Length(); {
		data, sums, err := rr.ReadChunks(off, piece, dbuf, sbuf)
		if err != nil {
			t.Fatal(err)
		}
		if err := rr.Checksum().Verify(data, sums); err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		out = append(out, data...)
		off += int64(len(data))
		dbuf, sbuf = data, sums
	}
	return out
}

func TestLayout(t *testing.T) {
	tests := []struct {
		id   int64
		a, b int
	}{
		{0, 0, 0},
		{1073741825, 0, 0},
		{0x12345678, 20, 22},
		{0x001f1f00, 31, 31},
		{-1, 31, 31},
		{1<<16 | 3<<8, 1, 3},
	}
	for _, tt := range tests {
		a, b := BlockSubdirs(tt.id)
		if a != tt.a || b != tt.b {
			t.Errorf("BlockSubdirs(%d) = %d, %d; want %d, %d", tt.id, a, b, tt.a, tt.b)
		}
		want := filepath.Join("f", fmt.Sprintf("subdir%d", tt.a), fmt.Sprintf("subdir%d", tt.b))
		if got := IDToBlockDir("f", tt.id); got != want {
			t.Errorf("IDToBlockDir(%d) = %s, want %s", tt.id, got, want)
		}
	}
	names := []struct {
		name   string
		block  bool
		meta   bool
		id, gs int64
	}{
		{"blk_1073741825", true, false, 1073741825, 0},
		{"blk_-42", true, false, -42, 0},
		{"blk_1073741825_1001.meta", false, true, 1073741825, 1001},
		{"blk_-42_7.meta", false, true, -42, 7},
		{"blk_1_2.meta.tmp", false, false, 0, 0},
		{"blk_x", false, false, 0, 0},
		{"blk_1_x.meta", false, false, 0, 0},
		{"deleted-1-blk_5", false, false, 0, 0},
		{"blk_05", false, false, 0, 0},
		{"blk_+5", false, false, 0, 0},
		{"blk_5_01.meta", false, false, 0, 0},
	}
	for _, n := range names {
		id, ok := ParseBlockFileName(n.name)
		if ok != n.block || (ok && id != n.id) {
			t.Errorf("ParseBlockFileName(%q) = %d, %v", n.name, id, ok)
		}
		id, gs, ok := ParseMetaFileName(n.name)
		if ok != n.meta || (ok && (id != n.id || gs != n.gs)) {
			t.Errorf("ParseMetaFileName(%q) = %d, %d, %v", n.name, id, gs, ok)
		}
	}
	if BlockFileName(-42) != "blk_-42" || MetaFileName(5, 1001) != "blk_5_1001.meta" {
		t.Error("file names")
	}
}

func TestMetaHeader(t *testing.T) {
	tests := []struct {
		c    datatransfer.DataChecksum
		want string
	}{
		{datatransfer.DefaultChecksum(), "00010200000200"},
		{datatransfer.DataChecksum{Type: datatransfer.ChecksumCRC32, BytesPerChecksum: 512}, "00010100000200"},
		{datatransfer.DataChecksum{Type: datatransfer.ChecksumNull, BytesPerChecksum: 512}, "00010000000200"},
	}
	for _, tt := range tests {
		h := EncodeMetaHeader(tt.c)
		if got := hex.EncodeToString(h[:]); got != tt.want {
			t.Errorf("%v: header %s, want %s", tt.c, got, tt.want)
		}
		c, err := ParseMetaHeader(h[:])
		if err != nil || c != tt.c {
			t.Errorf("%v: parsed %v, %v", tt.c, c, err)
		}
	}
	for _, bad := range []string{"000102000002", "00020200000200", "00010300000200", "00010200000000", "000102ffffffff"} {
		b, _ := hex.DecodeString(bad)
		if _, err := ParseMetaHeader(b); !errors.Is(err, ErrBadMeta) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	c := datatransfer.DefaultChecksum()
	for _, tt := range []struct{ n, want int64 }{{0, 7}, {1, 11}, {512, 11}, {513, 15}, {1024, 15}} {
		if got := MetaFileLen(c, tt.n); got != tt.want {
			t.Errorf("MetaFileLen(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

func TestWriteFinalizeReadUnaligned(t *testing.T) {
	tests := []struct {
		name string
		cuts []int
	}{
		{"one byte then unaligned", []int{1, 700, 100, 223, 5000, 3}},
		{"aligned", []int{512, 1024, 4096, 100}},
		{"tiny", []int{1, 1, 1, 509, 1, 511, 2}},
		{"crossing chunks", []int{300, 900, 1300, 7}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, 1, nil)
			total := 0
			for _, n := range tt.cuts {
				total += n
			}
			data := randBytes(int64(i), total)
			b := Block{ID: 1073741825 + int64(i), GenStamp: 1001}
			w, err := c.bp.CreateRBW(b, datatransfer.DefaultChecksum(), 128<<20)
			if err != nil {
				t.Fatal(err)
			}
			writePackets(t, w, datatransfer.DefaultChecksum(), 0, data, tt.cuts)
			if got, ok := c.bp.Get(b.ID); !ok || got.State != RBW || got.NumBytes != int64(total) {
				t.Fatalf("before finalize: %+v", got)
			}
			rep, err := w.Finalize(int64(total))
			if err != nil {
				t.Fatal(err)
			}
			wantDir := IDToBlockDir(filepath.Join(c.dirs[0], "current", testPool, "current", "finalized"), b.ID)
			if rep.State != Finalized || filepath.Dir(rep.BlockPath) != wantDir || filepath.Base(rep.MetaPath) != MetaFileName(b.ID, 1001) {
				t.Fatalf("finalized replica %+v", rep)
			}
			if got := checkFiles(t, rep); !bytes.Equal(got, data) {
				t.Fatal("block file differs from the data written")
			}
			if got := readAll(t, c.bp, b, 4096); !bytes.Equal(got, data) {
				t.Fatal("read back differs")
			}
			if err := w.WritePacket(int64(total), []byte{1}, datatransfer.DefaultChecksum().Compute(nil, []byte{1})); !errors.Is(err, ErrWriterStopped) {
				t.Fatalf("write after finalize: %v", err)
			}
		})
	}
}

func TestWritePacketEdges(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	w, err := c.bp.CreateRBW(Block{ID: 7, GenStamp: 1}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	data := randBytes(7, 3000)
	if err := w.WritePacket(0, data[:1000], ck.Compute(nil, data[:1000])); err != nil {
		t.Fatal(err)
	}
	// Resent overlap: only the new bytes land.
	if err := w.WritePacket(500, data[500:1500], ck.Compute(nil, data[500:1500])); err != nil {
		t.Fatal(err)
	}
	// Entirely old: no-op.
	if err := w.WritePacket(0, data[:100], ck.Compute(nil, data[:100])); err != nil {
		t.Fatal(err)
	}
	if w.BytesOnDisk() != 1500 {
		t.Fatalf("bytes on disk %d", w.BytesOnDisk())
	}
	// Gap.
	if err := w.WritePacket(1600, data[1600:1700], ck.Compute(nil, data[1600:1700])); !errors.Is(err, ErrGap) {
		t.Fatalf("gap: %v", err)
	}
	// Bad checksum: typed error, nothing written.
	sums := ck.Compute(nil, data[1500:2500])
	sums[5] ^= 1
	var ce *datatransfer.ChecksumError
	if err := w.WritePacket(1500, data[1500:2500], sums); !errors.As(err, &ce) || ce.ChunkIndex != 1 {
		t.Fatalf("bad checksum: %v", err)
	}
	if w.BytesOnDisk() != 1500 {
		t.Fatalf("bytes on disk after bad packet %d", w.BytesOnDisk())
	}
	if err := w.WritePacket(1500, data[1500:], ck.Compute(nil, data[1500:])); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finalize(2999); !errors.Is(err, ErrLength) {
		t.Fatalf("finalize with wrong length: %v", err)
	}
	rep, err := w.Finalize(3000)
	if err != nil {
		t.Fatal(err)
	}
	if got := checkFiles(t, rep); !bytes.Equal(got, data) {
		t.Fatal("data differs")
	}
}

func TestCreateExisting(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	w, err := c.bp.CreateRBW(Block{ID: 9, GenStamp: 5}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	writePackets(t, w, ck, 0, []byte("stale"), []int{5})
	for _, gs := range []int64{5, 4} {
		if _, err := c.bp.CreateRBW(Block{ID: 9, GenStamp: gs}, ck, 1<<20); !errors.Is(err, ErrReplicaExists) {
			t.Fatalf("create with gs %d: %v", gs, err)
		}
	}
	// A newer stamp replaces the stale replica (its writer is stopped).
	w2, err := c.bp.CreateRBW(Block{ID: 9, GenStamp: 6}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WritePacket(5, []byte("x"), ck.Compute(nil, []byte("x"))); !errors.Is(err, ErrWriterStopped) {
		t.Fatalf("stale writer: %v", err)
	}
	if b := <-c.deleted; b.GenStamp != 5 {
		t.Fatalf("deleted %v", b)
	}
	writePackets(t, w2, ck, 0, []byte("fresh!"), []int{6})
	rep, err := w2.Finalize(6)
	if err != nil {
		t.Fatal(err)
	}
	if got := checkFiles(t, rep); string(got) != "fresh!" {
		t.Fatalf("data %q", got)
	}
	if reps := c.bp.Replicas(); len(reps) != 1 || reps[0].GenStamp != 6 {
		t.Fatalf("replicas %+v", reps)
	}
}

func TestTemporary(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	tmp := filepath.Join(c.dirs[0], "current", testPool, "tmp")
	w, err := c.bp.CreateTemporary(Block{ID: 11, GenStamp: 1}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := c.bp.Get(11); r.State != Temporary || filepath.Dir(r.BlockPath) != tmp {
		t.Fatalf("temporary replica %+v", r)
	}
	if _, err := c.bp.OpenReader(Block{ID: 11, GenStamp: 1}); !errors.Is(err, ErrWrongState) {
		t.Fatalf("read temporary: %v", err)
	}
	writePackets(t, w, ck, 0, []byte("abc"), []int{3})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.bp.Get(11); ok {
		t.Fatal("closed temporary replica still in map")
	}
	<-c.deleted
	w, err = c.bp.CreateTemporary(Block{ID: 11, GenStamp: 1}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	writePackets(t, w, ck, 0, []byte("abcd"), []int{4})
	rep, err := w.Finalize(4)
	if err != nil {
		t.Fatal(err)
	}
	if rep.State != Finalized || string(checkFiles(t, rep)) != "abcd" {
		t.Fatalf("finalized %+v", rep)
	}
}

func TestRestartRBWBecomesRWR(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	data := randBytes(3, 2000)
	w, err := c.bp.CreateRBW(Block{ID: 20, GenStamp: 3}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	writePackets(t, w, ck, 0, data, []int{1000, 1000})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if r, _ := c.bp.Get(20); r.State != RBW || r.NumBytes != 2000 {
		t.Fatalf("closed RBW %+v", r)
	}
	w2, err := c.bp.CreateRBW(Block{ID: 21, GenStamp: 3}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	writePackets(t, w2, ck, 0, data[:10], []int{10})
	if _, err := w2.Finalize(10); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(c.dirs[0], "current", testPool, "tmp", "blk_99")
	if err := os.WriteFile(junk, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.restart()
	r, ok := c.bp.Get(20)
	if !ok || r.State != RWR || r.NumBytes != 2000 || r.GenStamp != 3 {
		t.Fatalf("after restart %+v", r)
	}
	if f, _ := c.bp.Get(21); f.State != Finalized || f.NumBytes != 10 {
		t.Fatalf("finalized after restart %+v", f)
	}
	if _, err := os.Stat(junk); !os.IsNotExist(err) {
		t.Fatalf("tmp/ not emptied: %v", err)
	}
	if _, err := c.bp.OpenReader(Block{ID: 20, GenStamp: 3}); !errors.Is(err, ErrWrongState) {
		t.Fatalf("read RWR: %v", err)
	}
	checkFiles(t, r)
}

func TestRestartTornReplica(t *testing.T) {
	ck := datatransfer.DefaultChecksum()
	tests := []struct {
		name    string
		damage  func(t *testing.T, r Replica)
		wantLen int64
	}{
		{"meta short by a chunk", func(t *testing.T, r Replica) {
			truncate(t, r.MetaPath, MetaFileLen(ck, 1024))
		}, 1024},
		{"meta header only", func(t *testing.T, r Replica) {
			truncate(t, r.MetaPath, MetaHeaderLen)
		}, 0},
		{"last checksum torn", func(t *testing.T, r Replica) {
			truncate(t, r.MetaPath, MetaFileLen(ck, 1300)-2)
		}, 1024},
		{"last chunk data corrupt", func(t *testing.T, r Replica) {
			corrupt(t, r.BlockPath, 1299)
		}, 1024},
		// Only the last chunk is checked, over the bytes the block file
		// has: the partial chunk that grew without its checksum is lost.
		{"block longer than checksums", func(t *testing.T, r Replica) {
			appendBytes(t, r.BlockPath, []byte("tail bytes with no checksum"))
		}, 1024},
		{"block a chunk longer than checksums", func(t *testing.T, r Replica) {
			appendBytes(t, r.BlockPath, make([]byte, 1000))
		}, 1024},
		{"intact", func(t *testing.T, r Replica) {}, 1300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, 1, nil)
			data := randBytes(5, 1300)
			w, err := c.bp.CreateRBW(Block{ID: 30, GenStamp: 2}, ck, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			writePackets(t, w, ck, 0, data, []int{700, 600})
			r := w.Replica()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			c.close()
			tt.damage(t, r)
			c.open(false)
			got, ok := c.bp.Get(30)
			if !ok || got.State != RWR || got.NumBytes != tt.wantLen {
				t.Fatalf("after restart %+v, want length %d", got, tt.wantLen)
			}
			if stored := checkFiles(t, got); !bytes.Equal(stored, data[:tt.wantLen]) {
				t.Fatal("kept bytes differ")
			}
		})
	}
}

func truncate(t *testing.T, p string, n int64) {
	t.Helper()
	if err := os.Truncate(p, n); err != nil {
		t.Fatal(err)
	}
}

func corrupt(t *testing.T, p string, off int64) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func appendBytes(t *testing.T, p string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// plant writes a finalized replica's files directly into a volume.
func plant(t *testing.T, vol string, id, gs int64, data []byte) (blockPath, metaPath string) {
	t.Helper()
	dir := IDToBlockDir(filepath.Join(vol, "current", testPool, "current", "finalized"), id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	blockPath = filepath.Join(dir, BlockFileName(id))
	metaPath = filepath.Join(dir, MetaFileName(id, gs))
	h := EncodeMetaHeader(datatransfer.DefaultChecksum())
	meta := datatransfer.DefaultChecksum().Compute(h[:], data)
	if err := os.WriteFile(blockPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(metaPath, meta, 0o644); err != nil {
		t.Fatal(err)
	}
	return blockPath, metaPath
}

func TestDuplicateResolution(t *testing.T) {
	tests := []struct {
		name             string
		gs0, gs1         int64
		len0, len1       int
		keepVol          int
		keepGS, keepSize int64
	}{
		{"newer stamp wins", 1, 2, 100, 50, 1, 2, 50},
		{"newer stamp wins, first volume", 3, 2, 10, 50, 0, 3, 10},
		{"same stamp, longer wins", 2, 2, 10, 50, 1, 2, 50},
		{"tie keeps first", 2, 2, 10, 10, 0, 2, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, 2, nil)
			c.close()
			b0, m0 := plant(t, c.dirs[0], 77, tt.gs0, randBytes(1, tt.len0))
			b1, m1 := plant(t, c.dirs[1], 77, tt.gs1, randBytes(2, tt.len1))
			c.open(false)
			r, ok := c.bp.Get(77)
			if !ok || r.GenStamp != tt.keepGS || r.NumBytes != tt.keepSize || r.VolumeDir != c.dirs[tt.keepVol] {
				t.Fatalf("kept %+v", r)
			}
			lose := []string{b1, m1}
			if tt.keepVol == 1 {
				lose = []string{b0, m0}
			}
			for _, p := range lose {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Errorf("loser %s still there: %v", p, err)
				}
			}
			checkFiles(t, r)
		})
	}
}

func TestDuplicateMetaFiles(t *testing.T) {
	c := newCluster(t, 1, nil)
	c.close()
	data := randBytes(9, 600)
	_, m1 := plant(t, c.dirs[0], 78, 1, data)
	_, m3 := plant(t, c.dirs[0], 78, 3, data)
	c.open(false)
	r, ok := c.bp.Get(78)
	if !ok || r.GenStamp != 3 || r.MetaPath != m3 {
		t.Fatalf("kept %+v", r)
	}
	if _, err := os.Stat(m1); !os.IsNotExist(err) {
		t.Fatalf("stale meta file kept: %v", err)
	}
	if len(c.scan.Removed) != 1 || c.scan.Removed[0] != m1 {
		t.Fatalf("scan removed %v", c.scan.Removed)
	}
}

func TestRBWAndFinalizedDuplicate(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	data := randBytes(4, 900)
	w, err := c.bp.CreateRBW(Block{ID: 79, GenStamp: 5}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	writePackets(t, w, ck, 0, data, []int{900})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c.close()
	plant(t, c.dirs[0], 79, 4, data[:500])
	c.open(false)
	if r, _ := c.bp.Get(79); r.State != RWR || r.GenStamp != 5 || r.NumBytes != 900 {
		t.Fatalf("kept %+v", r)
	}
}

func TestVolumeChoice(t *testing.T) {
	free := map[string]int64{}
	statfs := func(dir string) (DiskStat, error) {
		return DiskStat{Total: 1 << 40, Available: free[filepath.Base(dir)]}, nil
	}
	free["vol0"], free["vol1"], free["vol2"] = 1<<30, 1<<30, 1<<30
	c := newCluster(t, 3, statfs)
	ck := datatransfer.DefaultChecksum()
	var got []string
	create := func(id int64) (*ReplicaWriter, error) {
		w, err := c.bp.CreateRBW(Block{ID: id, GenStamp: 1}, ck, 128<<20)
		if err == nil {
			got = append(got, filepath.Base(w.Replica().VolumeDir))
		}
		return w, err
	}
	var ws []*ReplicaWriter
	for id := int64(1); id <= 4; id++ {
		w, err := create(id)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	if strings.Join(got, ",") != "vol0,vol1,vol2,vol0" {
		t.Fatalf("round robin gave %v", got)
	}
	for _, w := range ws {
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
	}
	// vol1 is full: skipped.
	free["vol1"] = 100 << 20
	got = nil
	for id := int64(10); id < 14; id++ {
		w, err := create(id)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws[:0], w)
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range got {
		if v == "vol1" {
			t.Fatalf("full volume chosen: %v", got)
		}
	}
	// Reservations count: vol0 fits 8 blocks of 128 MiB, not 9.
	free["vol2"] = 0
	var open []*ReplicaWriter
	for id := int64(100); ; id++ {
		w, err := c.bp.CreateRBW(Block{ID: id, GenStamp: 1}, ck, 128<<20)
		if err != nil {
			if !errors.Is(err, ErrOutOfSpace) {
				t.Fatal(err)
			}
			for _, d := range []string{"vol0", "vol1", "vol2"} {
				if !strings.Contains(err.Error(), d) {
					t.Errorf("error does not name %s: %v", d, err)
				}
			}
			break
		}
		open = append(open, w)
	}
	if len(open) != 8 {
		t.Fatalf("%d writers fit in 1 GiB of 128 MiB reservations", len(open))
	}
	for _, w := range open {
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestComputeReport(t *testing.T) {
	tests := []struct {
		name                        string
		st                          DiskStat
		reserved, used, forReplicas int64
		capacity, remaining, nonDfs int64
	}{
		{"empty", DiskStat{Total: 1000, Available: 1000}, 0, 0, 0, 1000, 1000, 0},
		{"reserve", DiskStat{Total: 1000, Available: 1000}, 100, 0, 0, 900, 900, 0},
		{"dfs used", DiskStat{Total: 1000, Available: 700}, 100, 300, 0, 900, 600, 0},
		{"other data beyond reserve", DiskStat{Total: 1000, Available: 500}, 100, 200, 0, 900, 500, 200},
		{"writers", DiskStat{Total: 1000, Available: 1000}, 0, 0, 300, 1000, 700, 0},
		{"over-full", DiskStat{Total: 1000, Available: 0}, 100, 950, 0, 900, 0, 0},
	}
	for _, tt := range tests {
		r := computeReport("d", "id", tt.st, tt.reserved, tt.used, tt.forReplicas)
		if r.Capacity != tt.capacity || r.Remaining != tt.remaining || r.NonDfsUsed != tt.nonDfs {
			t.Errorf("%s: %+v", tt.name, r)
		}
	}
}

func TestReportsStatfs(t *testing.T) {
	c := newCluster(t, 1, nil)
	reps, err := c.ds.Reports()
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 || reps[0].Capacity <= 0 || reps[0].StorageID != "DS-0" {
		t.Fatalf("reports %+v", reps)
	}
}

func TestInvalidateAsync(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	var reps []Replica
	for id := int64(1); id <= 3; id++ {
		w, err := c.bp.CreateRBW(Block{ID: id, GenStamp: 1}, ck, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		writePackets(t, w, ck, 0, randBytes(id, 1000), []int{1000})
		if id < 3 {
			r, err := w.Finalize(1000)
			if err != nil {
				t.Fatal(err)
			}
			reps = append(reps, r)
		} else {
			reps = append(reps, w.Replica()) // still being written
		}
	}
	err := c.bp.Invalidate([]Block{{ID: 1, GenStamp: 1}, {ID: 2, GenStamp: 9}, {ID: 3, GenStamp: 1}, {ID: 4, GenStamp: 1}})
	if !errors.Is(err, ErrGenStamp) || !errors.Is(err, ErrReplicaNotFound) {
		t.Fatalf("invalidate errors: %v", err)
	}
	for _, id := range []int64{1, 3} {
		if _, ok := c.bp.Get(id); ok {
			t.Fatalf("replica %d still in map", id)
		}
	}
	if _, ok := c.bp.Get(2); !ok {
		t.Fatal("replica with other stamp removed")
	}
	got := map[int64]bool{}
	for len(got) < 2 {
		got[(<-c.deleted).ID] = true
	}
	if !got[1] || !got[3] {
		t.Fatalf("deleted %v", got)
	}
	for _, r := range []Replica{reps[0], reps[2]} {
		for _, p := range []string{r.BlockPath, r.MetaPath} {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("%s still there", p)
			}
		}
	}
	tmp, _ := os.ReadDir(filepath.Join(c.dirs[0], "current", testPool, "tmp"))
	if len(tmp) != 0 {
		t.Fatalf("tmp/ holds %d entries after deletion", len(tmp))
	}
	// The id can be reused at once.
	if _, err := c.bp.CreateRBW(Block{ID: 1, GenStamp: 2}, ck, 1<<20); err != nil {
		t.Fatal(err)
	}
}

func TestAppend(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	data := randBytes(11, 1700)
	b := Block{ID: 40, GenStamp: 1001}
	w, err := c.bp.CreateRBW(b, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	writePackets(t, w, ck, 0, data[:1000], []int{1000})
	if _, err := w.Finalize(1000); err != nil {
		t.Fatal(err)
	}
	b.NumBytes = 1000
	if _, err := c.bp.Append(Block{ID: 40, GenStamp: 1001, NumBytes: 999}, 1002, ck, 1<<20); !errors.Is(err, ErrLength) {
		t.Fatalf("append with wrong length: %v", err)
	}
	if _, err := c.bp.Append(Block{ID: 40, GenStamp: 1000, NumBytes: 1000}, 1002, ck, 1<<20); !errors.Is(err, ErrGenStamp) {
		t.Fatalf("append with wrong stamp: %v", err)
	}
	if _, err := c.bp.Append(b, 1000, ck, 1<<20); !errors.Is(err, ErrGenStamp) {
		t.Fatalf("append with older new stamp: %v", err)
	}
	// A reader of the finalized length opened before the append.
	rr, err := c.bp.OpenReader(b)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	// Packets from a CRC32 client: stored checksums stay CRC32C.
	crc32 := datatransfer.DataChecksum{Type: datatransfer.ChecksumCRC32, BytesPerChecksum: 512}
	w, err = c.bp.Append(b, 1002, crc32, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	r := w.Replica()
	rbw := filepath.Join(c.dirs[0], "current", testPool, "current", "rbw")
	if r.State != RBW || r.GenStamp != 1002 || r.MetaPath != filepath.Join(rbw, MetaFileName(40, 1002)) || r.BytesAcked != 1000 {
		t.Fatalf("appending replica %+v", r)
	}
	if _, err := c.bp.Append(b, 1003, ck, 1<<20); !errors.Is(err, ErrWrongState) {
		t.Fatalf("second append: %v", err)
	}
	writePackets(t, w, crc32, 1000, data[1000:], []int{24, 500, 176})
	// The old reader still sees 1000 valid bytes, last chunk included.
	if got, sums, err := rr.ReadChunks(512, 1024, nil, nil); err != nil || len(got) != 488 || ck.Verify(got, sums) != nil {
		t.Fatalf("old reader: %d bytes, %v", len(got), err)
	}
	rep, err := w.Finalize(1700)
	if err != nil {
		t.Fatal(err)
	}
	if rep.GenStamp != 1002 || filepath.Base(rep.MetaPath) != MetaFileName(40, 1002) {
		t.Fatalf("finalized %+v", rep)
	}
	if got := checkFiles(t, rep); !bytes.Equal(got, data) {
		t.Fatal("appended data differs")
	}
	if got := readAll(t, c.bp, Block{ID: 40, GenStamp: 1002}, 1024); !bytes.Equal(got, data) {
		t.Fatal("read back differs")
	}
	if _, err := c.bp.OpenReader(Block{ID: 40, GenStamp: 1003}); !errors.Is(err, ErrGenStamp) {
		t.Fatalf("read with newer stamp: %v", err)
	}
}

func TestReadRBWVisibleLength(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	data := randBytes(12, 2000)
	w, err := c.bp.CreateRBW(Block{ID: 50, GenStamp: 1}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WritePacket(0, data[:1000], ck.Compute(nil, data[:1000])); err != nil {
		t.Fatal(err)
	}
	w.SetBytesAcked(700)
	rr, err := c.bp.OpenReader(Block{ID: 50, GenStamp: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	if rr.Length() != 700 {
		t.Fatalf("visible length %d", rr.Length())
	}
	// The writer carries on inside the chunk the reader ends in.
	if err := w.WritePacket(1000, data[1000:2000], ck.Compute(nil, data[1000:2000])); err != nil {
		t.Fatal(err)
	}
	got, sums, err := rr.ReadChunks(0, 4096, nil, nil)
	if err != nil || !bytes.Equal(got, data[:700]) {
		t.Fatalf("read %d bytes: %v", len(got), err)
	}
	if err := ck.Verify(got, sums); err != nil {
		t.Fatal(err)
	}
	all, err := rr.BlockChecksums(nil)
	if err != nil || ck.Verify(data[:700], all) != nil {
		t.Fatalf("block checksums: %v", err)
	}
	if _, _, err := rr.ReadChunks(100, 512, nil, nil); err == nil {
		t.Fatal("unaligned read accepted")
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestBlockChecksumVector(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	w, err := c.bp.CreateRBW(Block{ID: 60, GenStamp: 1}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	writePackets(t, w, ck, 0, []byte("bar\n"), []int{2, 2})
	if _, err := w.Finalize(4); err != nil {
		t.Fatal(err)
	}
	rr, err := c.bp.OpenReader(Block{ID: 60, GenStamp: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	crcs, err := rr.BlockChecksums(nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := datatransfer.FileChecksumMD5MD5CRC([][md5.Size]byte{datatransfer.BlockChecksumMD5(crcs)})
	if got := hex.EncodeToString(sum[:]); got != "27c076e4987344253650d3335a5d08ce" {
		t.Fatalf("file checksum %s", got)
	}
}

func TestVolumeLockAndVersion(t *testing.T) {
	c := newCluster(t, 1, nil)
	if _, err := OpenVolume(VolumeConfig{Dir: c.dirs[0]}); !errors.Is(err, hstorage.ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
	v, err := hstorage.ReadVersion(vfs.Default, filepath.Join(c.dirs[0], "current", testPool, "current", "VERSION"))
	if err != nil || v.BlockPoolID != testPool || v.NamespaceID != 42 {
		t.Fatalf("block pool VERSION %+v %v", v, err)
	}
	c.close()
	// Another namespace's pool id in the same directory is refused.
	vol, err := OpenVolume(VolumeConfig{Dir: c.dirs[0], Testing: VolumeTesting{LockHolder: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := NewDataset(Config{}, []*Volume{vol})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	bad := bpVersion()
	bad.NamespaceID = 43
	if _, _, err := ds.AddBlockPool(bad, testNow); !errors.Is(err, ErrBadVolume) {
		t.Fatalf("other namespace: %v", err)
	}
	if _, err := ds.BlockPool("BP-nope"); !errors.Is(err, ErrUnknownPool) {
		t.Fatalf("unknown pool: %v", err)
	}
}

// TestWritePacketsBatch stores batches mixing runs of aligned packets with
// the cases that leave a run (unaligned start, resent bytes, a short packet
// in the middle) and a batch whose third packet has a bad checksum: the
// packets before it are stored, it and the rest are not.
func TestWritePacketsBatch(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	w, err := c.bp.CreateRBW(Block{ID: 11, GenStamp: 1}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	data := randBytes(11, 20000)
	pd := func(from, to int) PacketData {
		return PacketData{Offset: int64(from), Data: data[from:to], Sums: ck.Compute(nil, data[from:to])}
	}
	batch := []PacketData{pd(0, 1024), pd(1024, 4096), pd(4096, 4100), pd(4100, 5000), pd(4600, 6144), pd(6144, 8192)}
	if n, err := w.WritePackets(batch); n != len(batch) || err != nil {
		t.Fatalf("first batch: %d stored, %v", n, err)
	}
	if w.BytesOnDisk() != 8192 {
		t.Fatalf("bytes on disk %d, want 8192", w.BytesOnDisk())
	}
	bad := pd(9216, 10240)
	bad.Sums = append([]byte(nil), bad.Sums...)
	bad.Sums[0] ^= 1
	batch = []PacketData{pd(8192, 8704), pd(8704, 9216), bad, pd(10240, 11264)}
	var ce *datatransfer.ChecksumError
	if n, err := w.WritePackets(batch); n != 2 || !errors.As(err, &ce) {
		t.Fatalf("batch with a bad packet: %d stored, %v; want 2 and a checksum error", n, err)
	}
	if w.BytesOnDisk() != 9216 {
		t.Fatalf("bytes on disk %d after the bad packet, want 9216", w.BytesOnDisk())
	}
	if n, err := w.WritePackets([]PacketData{pd(9216, 15000), pd(15000, 20000)}); n != 2 || err != nil {
		t.Fatalf("last batch: %d stored, %v", n, err)
	}
	rep, err := w.Finalize(20000)
	if err != nil {
		t.Fatal(err)
	}
	if got := checkFiles(t, rep); !bytes.Equal(got, data) {
		t.Fatal("block file differs from the data written")
	}
}
