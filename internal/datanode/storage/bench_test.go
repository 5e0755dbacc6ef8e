package storage

import (
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
)

// BenchmarkWritePacket64K measures storing 64 KiB packets (aligned, so the
// packet's checksums are stored as received) into the page cache.
func BenchmarkWritePacket64K(b *testing.B) {
	benchWrite(b, 0)
}

// BenchmarkWritePacket64KUnaligned measures packets that start mid-chunk, so
// the stored checksums are recomputed and a partial chunk is read back.
func BenchmarkWritePacket64KUnaligned(b *testing.B) {
	benchWrite(b, 100)
}

func benchWrite(b *testing.B, shift int) {
	dir := b.TempDir()
	vol, err := OpenVolume(VolumeConfig{Dir: dir, Testing: VolumeTesting{LockHolder: "bench"}})
	if err != nil {
		b.Fatal(err)
	}
	if err := vol.Format(testVolumeVersion(0), testNow); err != nil {
		b.Fatal(err)
	}
	ds, err := NewDataset(Config{}, []*Volume{vol})
	if err != nil {
		b.Fatal(err)
	}
	defer ds.Close()
	bp, _, err := ds.AddBlockPool(bpVersion(), testNow)
	if err != nil {
		b.Fatal(err)
	}
	ck := datatransfer.DefaultChecksum()
	data := randBytes(1, 64<<10)
	sums := ck.Compute(nil, data)
	var w *ReplicaWriter
	var off int64
	id := int64(0)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if w == nil || off >= 128<<20 {
			if w != nil {
				_ = w.Abort()
			}
			id++
			if w, err = bp.CreateRBW(Block{ID: id, GenStamp: 1}, ck, 0); err != nil {
				b.Fatal(err)
			}
			off = 0
			if shift > 0 {
				if err := w.WritePacket(0, data[:shift], ck.Compute(nil, data[:shift])); err != nil {
					b.Fatal(err)
				}
				off = int64(shift)
			}
		}
		if err := w.WritePacket(off, data, sums); err != nil {
			b.Fatal(err)
		}
		off += int64(len(data))
	}
	if w != nil {
		_ = w.Abort()
	}
}
