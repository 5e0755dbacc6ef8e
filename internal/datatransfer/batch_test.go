package datatransfer

import (
	"bytes"
	"testing"
)

// A batch of encoded and raw packets writes the bytes PacketWriter would,
// and a raw packet is forwarded byte for byte, whatever its header layout.
func TestPacketBatch(t *testing.T) {
	c := DefaultChecksum()
	data1 := bytes.Repeat([]byte("a"), 1000)
	data2 := bytes.Repeat([]byte("b"), 512)
	h1 := PacketHeader{OffsetInBlock: 0, Seqno: 0}
	h2 := PacketHeader{OffsetInBlock: 1000, Seqno: 1, SyncBlock: true}
	var want bytes.Buffer
	pw := NewPacketWriter(&want)
	for _, p := range []struct {
		h PacketHeader
		d []byte
	}{{h1, data1}, {h2, data2}, {PacketHeader{OffsetInBlock: 1512, Seqno: 2, LastPacketInBlock: true}, nil}} {
		if err := pw.WritePacket(p.h, c.Compute(nil, p.d), p.d); err != nil {
			t.Fatal(err)
		}
	}

	var b PacketBatch
	if err := b.Add(h1, c.Compute(nil, data1), data1); err != nil {
		t.Fatal(err)
	}
	// The other two as a reader returns them.
	pr := NewPacketReader(bytes.NewReader(want.Bytes()), 0)
	var pkts []Packet
	for i := 0; i < 3; i++ {
		p, err := pr.Next()
		if err != nil {
			t.Fatal(err)
		}
		pkts = append(pkts, p)
	}
	b.AddRaw(pkts[1])
	b.AddRaw(pkts[2])
	if b.Len() != 3 {
		t.Fatalf("Len %d, want 3", b.Len())
	}
	if got := bytes.Join(b.Buffers(), nil); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("batch bytes differ from PacketWriter's:\n got %x\nwant %x", got, want.Bytes())
	}
	b.Reset()
	if b.Len() != 0 || len(b.Buffers()) != 0 {
		t.Fatalf("after Reset: Len %d, %d buffers", b.Len(), len(b.Buffers()))
	}

	// A header in a layout of its own (fields out of order) is kept as it was.
	odd := []byte{0x11, 1, 0, 0, 0, 0, 0, 0, 0, 0x09, 0, 0, 0, 0, 0, 0, 0, 0, 0x18, 0, 0x25, 0, 0, 0, 0}
	var raw []byte
	raw = append(raw, 0, 0, 0, 4, 0, byte(len(odd)))
	raw = append(raw, odd...)
	p, err := NewPacketReader(bytes.NewReader(raw), 0).Next()
	if err != nil {
		t.Fatal(err)
	}
	b.AddRaw(p)
	if got := bytes.Join(b.Buffers(), nil); !bytes.Equal(got, raw) {
		t.Fatalf("raw packet not forwarded as read: %x, want %x", got, raw)
	}
}
