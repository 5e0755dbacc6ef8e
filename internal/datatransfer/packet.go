package datatransfer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// Packet framing sizes. Part of the wire format.
const (
	// PacketPrefixLen is the fixed prefix of a packet: PLEN (4) + HLEN (2).
	PacketPrefixLen = 6
	// MaxPacketHeaderLen bounds HLEN as sent by this package: the five
	// header fields encode in at most 27 bytes.
	MaxPacketHeaderLen = 27
	// DefaultMaxPacketSize is Hadoop's limit on PLEN + HLEN (16 MiB).
	DefaultMaxPacketSize = 16 << 20
	// HeartbeatSeqno is the seqno of a write pipeline heartbeat packet.
	HeartbeatSeqno int64 = -1
)

// PacketHeader is the header of one data packet (PacketHeaderProto).
type PacketHeader struct {
	OffsetInBlock     int64 // block offset of the packet's first data byte
	Seqno             int64
	LastPacketInBlock bool
	DataLen           int32 // number of data bytes in the packet
	SyncBlock         bool  // the writer asks for the data to be made durable (hsync)
}

// IsHeartbeat reports whether h is a write pipeline heartbeat.
func (h PacketHeader) IsHeartbeat() bool {
	return h.Seqno == HeartbeatSeqno && h.DataLen == 0 && !h.LastPacketInBlock
}

// Proto returns h as a PacketHeaderProto. syncBlock is left unset when false,
// as Hadoop does, so the common header is 25 bytes.
func (h PacketHeader) Proto() *hdfs.PacketHeaderProto {
	p := &hdfs.PacketHeaderProto{
		OffsetInBlock:     proto.Int64(h.OffsetInBlock),
		Seqno:             proto.Int64(h.Seqno),
		LastPacketInBlock: proto.Bool(h.LastPacketInBlock),
		DataLen:           proto.Int32(h.DataLen),
	}
	if h.SyncBlock {
		p.SyncBlock = proto.Bool(true)
	}
	return p
}

// Wire tags of the PacketHeaderProto fields, in field number order.
const (
	tagOffsetInBlock     = 1<<3 | 1 // fixed64
	tagSeqno             = 2<<3 | 1 // fixed64
	tagLastPacketInBlock = 3<<3 | 0 // varint
	tagDataLen           = 4<<3 | 5 // fixed32
	tagSyncBlock         = 5<<3 | 0 // varint
	// packetHeaderLen is the encoded size of a header without syncBlock.
	packetHeaderLen = 25
)

// AppendHeader appends the encoded PacketHeaderProto (without PLEN/HLEN).
// The bytes are those proto.Marshal produces (fields in number order), built
// by hand because every packet of a pipeline carries one.
func (h PacketHeader) AppendHeader(dst []byte) ([]byte, error) {
	dst = append(dst, tagOffsetInBlock)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(h.OffsetInBlock))
	dst = append(dst, tagSeqno)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(h.Seqno))
	dst = append(dst, tagLastPacketInBlock, boolByte(h.LastPacketInBlock))
	dst = append(dst, tagDataLen)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.DataLen))
	if h.SyncBlock {
		dst = append(dst, tagSyncBlock, 1)
	}
	return dst, nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// ParsePacketHeader decodes a PacketHeaderProto. The layout every HDFS
// writer sends (the four required fields in order, optionally syncBlock) is
// decoded directly; anything else goes through the protobuf library, which
// enforces the required fields.
func ParsePacketHeader(b []byte) (PacketHeader, error) {
	if h, ok := parseCanonicalHeader(b); ok {
		return h, nil
	}
	var p hdfs.PacketHeaderProto
	if err := proto.Unmarshal(b, &p); err != nil {
		return PacketHeader{}, fmt.Errorf("%w: header: %v", ErrBadPacket, err)
	}
	return PacketHeader{
		OffsetInBlock:     p.GetOffsetInBlock(),
		Seqno:             p.GetSeqno(),
		LastPacketInBlock: p.GetLastPacketInBlock(),
		DataLen:           p.GetDataLen(),
		SyncBlock:         p.GetSyncBlock(),
	}, nil
}

// parseCanonicalHeader decodes b if it is laid out as AppendHeader writes.
func parseCanonicalHeader(b []byte) (PacketHeader, bool) {
	if len(b) != packetHeaderLen && len(b) != packetHeaderLen+2 {
		return PacketHeader{}, false
	}
	if b[0] != tagOffsetInBlock || b[9] != tagSeqno || b[18] != tagLastPacketInBlock || b[19] > 1 || b[20] != tagDataLen {
		return PacketHeader{}, false
	}
	h := PacketHeader{
		OffsetInBlock:     int64(binary.LittleEndian.Uint64(b[1:])),
		Seqno:             int64(binary.LittleEndian.Uint64(b[10:])),
		LastPacketInBlock: b[19] == 1,
		DataLen:           int32(binary.LittleEndian.Uint32(b[21:])),
	}
	if len(b) > packetHeaderLen {
		if b[25] != tagSyncBlock || b[26] > 1 {
			return PacketHeader{}, false
		}
		h.SyncBlock = b[26] == 1
	}
	return h, true
}

// AppendPacketPrefix appends everything of a packet that precedes its data:
// PLEN, HLEN, the header and the checksums. h.DataLen must be the length of
// the data the caller sends next (for instance with sendfile). It is the
// building block of PacketWriter for callers that send the data themselves.
func AppendPacketPrefix(dst []byte, h PacketHeader, sums []byte) ([]byte, error) {
	if h.DataLen < 0 {
		return dst, fmt.Errorf("%w: negative data length %d", ErrBadPacket, h.DataLen)
	}
	plen := 4 + int64(len(sums)) + int64(h.DataLen)
	if plen > DefaultMaxPacketSize {
		return dst, fmt.Errorf("%w: packet of %d bytes exceeds %d", ErrBadPacket, plen, DefaultMaxPacketSize)
	}
	start := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, uint32(plen))
	dst = append(dst, 0, 0) // HLEN, filled below
	hstart := len(dst)
	dst, err := h.AppendHeader(dst)
	if err != nil {
		return dst[:start], err
	}
	binary.BigEndian.PutUint16(dst[hstart-2:], uint16(len(dst)-hstart))
	return append(dst, sums...), nil
}

// smallPacket is the data size up to which PacketWriter copies the data next
// to the header and writes the packet in one call.
const smallPacket = 4 << 10

// PacketWriter writes packets to a stream. It keeps one buffer for the packet
// prefix and is not safe for concurrent use.
type PacketWriter struct {
	w   io.Writer
	buf []byte
}

// NewPacketWriter returns a PacketWriter writing to w.
func NewPacketWriter(w io.Writer) *PacketWriter {
	return &PacketWriter{w: w, buf: make([]byte, 0, 64+smallPacket)}
}

// WritePacket writes one packet. h.DataLen is set from len(data). The prefix
// (lengths, header, checksums) and the data go out in at most two Writes; a
// small packet goes out in one.
func (pw *PacketWriter) WritePacket(h PacketHeader, sums, data []byte) error {
	if len(data) > DefaultMaxPacketSize {
		return fmt.Errorf("%w: %d data bytes", ErrBadPacket, len(data))
	}
	h.DataLen = int32(len(data))
	b, err := AppendPacketPrefix(pw.buf[:0], h, sums)
	if err != nil {
		return err
	}
	if len(data) <= smallPacket {
		b = append(b, data...)
		pw.buf = b[:0]
		_, err = pw.w.Write(b)
		return err
	}
	pw.buf = b[:0]
	if _, err := pw.w.Write(b); err != nil {
		return err
	}
	_, err = pw.w.Write(data)
	return err
}

// Packet is one packet as read by PacketReader. Checksums, Data and Raw
// alias the reader's buffer; see PacketReader for how long they stay valid.
type Packet struct {
	Header    PacketHeader
	Checksums []byte
	Data      []byte
	// Raw is the whole packet as it was read (PLEN, HLEN, header,
	// checksums, data): what a write pipeline stage forwards downstream.
	Raw []byte
}

// DefaultPacketWindow is the read window of NewPacketReader: room for two
// 64 KiB packets.
const DefaultPacketWindow = 128 << 10

// PacketReader reads packets from a stream through a read window: each read
// of the stream takes as much as the window holds, so that a busy stream
// yields several packets per read. A packet larger than the window is read
// into a buffer of its own. It is not safe for concurrent use.
//
// The packet Next returns stays valid until a call to Next made while Ready
// reports false: a caller may take every packet already in the window
// (Ready true), work on them together, and only then read on. That is what
// lets a DataNode store and acknowledge a burst of packets with one write.
//
// The reader may read past the last packet of the stream: the stream is
// meant for packets only.
type PacketReader struct {
	r          io.Reader
	max        int
	win        []byte
	start, end int    // unread bytes: win[start:end]
	big        []byte // the last packet larger than the window
}

// NewPacketReader returns a reader of packets from r whose PLEN + HLEN is at
// most maxSize bytes (DefaultMaxPacketSize if maxSize <= 0), with a window of
// DefaultPacketWindow bytes.
func NewPacketReader(r io.Reader, maxSize int) *PacketReader {
	return NewPacketReaderWindow(r, maxSize, make([]byte, DefaultPacketWindow))
}

// NewPacketReaderWindow is NewPacketReader with the caller's window (at
// least PacketPrefixLen bytes; a pooled buffer, for instance). The window
// belongs to the reader until the caller stops using it and its packets.
func NewPacketReaderWindow(r io.Reader, maxSize int, window []byte) *PacketReader {
	if maxSize <= 0 {
		maxSize = DefaultMaxPacketSize
	}
	if len(window) < PacketPrefixLen {
		window = make([]byte, DefaultPacketWindow)
	}
	return &PacketReader{r: r, max: maxSize, win: window}
}

// Ready reports whether the next packet is wholly in the window: Next then
// returns it without reading the stream, and the packets returned before
// stay valid. A malformed length also reports false (Next returns the
// error).
func (pr *PacketReader) Ready() bool {
	n := pr.end - pr.start
	if n < PacketPrefixLen {
		return false
	}
	size, err := pr.sizeOf(pr.win[pr.start:])
	return err == nil && size <= n
}

// sizeOf checks the prefix at the start of b and returns the packet's whole
// size, prefix included.
func (pr *PacketReader) sizeOf(b []byte) (int, error) {
	plen := int64(int32(binary.BigEndian.Uint32(b[:4])))
	hlen := int64(binary.BigEndian.Uint16(b[4:]))
	if plen < 4 {
		return 0, fmt.Errorf("%w: payload length %d is below 4", ErrBadPacket, plen)
	}
	if hlen == 0 {
		return 0, fmt.Errorf("%w: empty header", ErrBadPacket)
	}
	if plen+hlen > int64(pr.max) {
		return 0, fmt.Errorf("%w: packet of %d bytes exceeds limit %d", ErrBadPacket, plen+hlen, pr.max)
	}
	return int(PacketPrefixLen + hlen + plen - 4), nil
}

// fill reads until the window holds at least need unread bytes (need at
// most len(pr.win)). It may move the unread bytes to the window's start,
// which is why packets returned before are then invalid. A stream ending
// first is io.EOF if the window held nothing, else io.ErrUnexpectedEOF.
func (pr *PacketReader) fill(need int) error {
	if pr.start > 0 && (len(pr.win)-pr.start < need || len(pr.win)-pr.end < len(pr.win)/2) {
		pr.end = copy(pr.win, pr.win[pr.start:pr.end])
		pr.start = 0
	}
	for pr.end-pr.start < need {
		n, err := pr.r.Read(pr.win[pr.end:])
		pr.end += n
		if pr.end-pr.start >= need {
			return nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) && pr.end > pr.start {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// Next reads one packet. A clean end of stream before the first byte is
// io.EOF; lengths that are negative, inconsistent or over the limit are
// ErrBadPacket; a stream that ends inside a packet is io.ErrUnexpectedEOF.
func (pr *PacketReader) Next() (Packet, error) {
	if pr.end-pr.start < PacketPrefixLen {
		if err := pr.fill(PacketPrefixLen); err != nil {
			return Packet{}, err
		}
	}
	size, err := pr.sizeOf(pr.win[pr.start:])
	if err != nil {
		return Packet{}, err
	}
	var buf []byte
	if size <= len(pr.win) {
		if pr.end-pr.start < size {
			if err := pr.fill(size); err != nil {
				return Packet{}, err
			}
		}
		buf = pr.win[pr.start : pr.start+size : pr.start+size]
		pr.start += size
	} else {
		// Larger than the window: into a buffer of its own, kept for the
		// next such packet. A new one grows as the bytes arrive, so a
		// packet announced at the limit and never sent costs little.
		have := pr.win[pr.start:pr.end]
		pr.start, pr.end = 0, 0
		if cap(pr.big) >= size {
			buf = pr.big[:size:size]
			n := copy(buf, have)
			if _, err := io.ReadFull(pr.r, buf[n:]); err != nil {
				return Packet{}, unexpectedEOF(err)
			}
		} else {
			b, err := readGrowing(pr.r, append(pr.big[:0], have...), size-len(have))
			if err != nil {
				pr.big = nil
				return Packet{}, err
			}
			pr.big = b
			buf = b[:size:size]
		}
	}
	hlen := int(binary.BigEndian.Uint16(buf[4:]))
	h, err := ParsePacketHeader(buf[PacketPrefixLen : PacketPrefixLen+hlen])
	if err != nil {
		return Packet{}, err
	}
	payload := buf[PacketPrefixLen+hlen:]
	if h.DataLen < 0 || int64(h.DataLen) > int64(len(payload)) {
		return Packet{}, fmt.Errorf("%w: data length %d with %d payload bytes", ErrBadPacket, h.DataLen, len(payload))
	}
	ns := len(payload) - int(h.DataLen)
	return Packet{Header: h, Checksums: payload[:ns:ns], Data: payload[ns:], Raw: buf}, nil
}
