package datatransfer

import (
	"bytes"
	"io"
	"testing"
)

const benchPacket = 64 << 10

func BenchmarkChecksumComputeCRC32C64K(b *testing.B) {
	data := make([]byte, benchPacket)
	sums := make([]byte, 0, DefaultChecksum().ChecksumLen(len(data)))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sums = DefaultChecksum().Compute(sums[:0], data)
	}
}

func BenchmarkChecksumVerifyCRC32C64K(b *testing.B) {
	data := make([]byte, benchPacket)
	sums := DefaultChecksum().Compute(nil, data)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := DefaultChecksum().Verify(data, sums); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkChecksumComputeCRC32IEEE64K(b *testing.B) {
	c := DataChecksum{Type: ChecksumCRC32, BytesPerChecksum: 512}
	data := make([]byte, benchPacket)
	sums := make([]byte, 0, c.ChecksumLen(len(data)))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sums = c.Compute(sums[:0], data)
	}
}

func BenchmarkPacketEncode64K(b *testing.B) {
	data := make([]byte, benchPacket)
	sums := DefaultChecksum().Compute(nil, data)
	pw := NewPacketWriter(io.Discard)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := pw.WritePacket(PacketHeader{Seqno: 1}, sums, data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPacketDecode64K(b *testing.B) {
	data := make([]byte, benchPacket)
	pkt := encodePacket(b, PacketHeader{Seqno: 1}, DefaultChecksum().Compute(nil, data), data)
	r := bytes.NewReader(pkt)
	pr := NewPacketReader(r, 0)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(pkt)
		if _, err := pr.Next(); err != nil {
			b.Fatal(err)
		}
	}
}
