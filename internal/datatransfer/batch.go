package datatransfer

// PacketBatch gathers packets to be sent with one vectored write: a write
// pipeline's client, which encodes each packet's prefix (Add), and a
// DataNode mirroring packets downstream exactly as it read them (AddRaw).
// Buffers returns the byte slices to hand to net.Buffers (writev); the data
// and raw packets are referenced, not copied, and must stay untouched until
// the write is done. Not safe for concurrent use.
//
//	var b datatransfer.PacketBatch
//	_ = b.Add(h, sums, data)
//	nb := net.Buffers(b.Buffers())
//	_, err := nb.WriteTo(conn)
//	b.Reset()
type PacketBatch struct {
	prefixes []byte // the prefixes Add encoded, back to back
	items    []batchItem
	bufs     [][]byte
}

// batchItem is one packet of a batch: the end of its prefix in prefixes
// (-1 for a raw packet) and its data, or the raw packet.
type batchItem struct {
	prefixEnd int
	data      []byte
}

// Add appends a packet whose prefix (PLEN, HLEN, header, checksums) is
// encoded here; h.DataLen is set from len(data).
func (b *PacketBatch) Add(h PacketHeader, sums, data []byte) error {
	h.DataLen = int32(len(data))
	p, err := AppendPacketPrefix(b.prefixes, h, sums)
	if err != nil {
		return err
	}
	b.prefixes = p
	b.items = append(b.items, batchItem{prefixEnd: len(p), data: data})
	return nil
}

// AddRaw appends a packet as PacketReader read it (p.Raw), to be forwarded
// byte for byte.
func (b *PacketBatch) AddRaw(p Packet) {
	b.items = append(b.items, batchItem{prefixEnd: -1, data: p.Raw})
}

// Len is the number of packets in the batch.
func (b *PacketBatch) Len() int { return len(b.items) }

// Buffers returns the batch as the buffers of one vectored write, in
// packet order. They are valid until the next Add, AddRaw or Reset.
func (b *PacketBatch) Buffers() [][]byte {
	bufs := b.bufs[:0]
	start := 0
	for _, it := range b.items {
		if it.prefixEnd >= 0 {
			bufs = append(bufs, b.prefixes[start:it.prefixEnd])
			start = it.prefixEnd
		}
		if len(it.data) > 0 {
			bufs = append(bufs, it.data)
		}
	}
	b.bufs = bufs
	return bufs
}

// Reset empties the batch, dropping its references to the packets' data,
// and keeps its buffers for the next one.
func (b *PacketBatch) Reset() {
	clear(b.items)
	clear(b.bufs)
	b.items, b.bufs, b.prefixes = b.items[:0], b.bufs[:0], b.prefixes[:0]
}
