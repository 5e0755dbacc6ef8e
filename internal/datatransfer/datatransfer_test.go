package datatransfer

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPacketHeaderGolden(t *testing.T) {
	tests := []struct {
		name string
		h    PacketHeader
		want string
	}{
		{"example", PacketHeader{OffsetInBlock: 0, Seqno: 1, DataLen: 4},
			"09 0000000000000000 11 0100000000000000 18 00 25 04000000"},
		{"last", PacketHeader{OffsetInBlock: 0x0102, Seqno: 7, LastPacketInBlock: true},
			"09 0201000000000000 11 0700000000000000 18 01 25 00000000"},
		{"sync", PacketHeader{Seqno: -1, DataLen: 512, SyncBlock: true},
			"09 0000000000000000 11 ffffffffffffffff 18 00 25 00020000 28 01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.h.AppendHeader(nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := unhex(t, tt.want); !bytes.Equal(got, want) {
				t.Fatalf("header = % x, want % x", got, want)
			}
			back, err := ParsePacketHeader(got)
			if err != nil {
				t.Fatal(err)
			}
			if back != tt.h {
				t.Fatalf("round trip = %+v, want %+v", back, tt.h)
			}
		})
	}
}

func TestAckGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteAck(&buf, &PipelineAck{Seqno: 1, Replies: []hdfs.Status{hdfs.Status_SUCCESS}}); err != nil {
		t.Fatal(err)
	}
	if want := unhex(t, "09 08 02 10 00 18 00 22 01 00"); !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("ack = % x, want % x", buf.Bytes(), want)
	}
	var a PipelineAck
	if err := ReadAck(bufio.NewReader(&buf), DefaultMaxMessageSize, &a); err != nil {
		t.Fatal(err)
	}
	if a.Seqno != 1 || len(a.Replies) != 1 || !a.Success() || len(a.Flags) != 1 || a.Flags[0] != 0 {
		t.Fatalf("decoded %+v", a)
	}
}

func TestAckFlagsAndStatus(t *testing.T) {
	a := &PipelineAck{Seqno: -1, Replies: []hdfs.Status{hdfs.Status_SUCCESS, hdfs.Status_ERROR_CHECKSUM}, DownstreamAckTimeNanos: 12345}
	b, err := AppendAck(nil, a)
	if err != nil {
		t.Fatal(err)
	}
	var got PipelineAck
	if err := ReadAck(bufio.NewReader(bytes.NewReader(b)), DefaultMaxMessageSize, &got); err != nil {
		t.Fatal(err)
	}
	if got.Success() || got.Seqno != -1 || got.DownstreamAckTimeNanos != 12345 {
		t.Fatalf("decoded %+v", got)
	}
	if len(got.Flags) != 2 || FlagStatus(got.Flags[1]) != hdfs.Status_ERROR_CHECKSUM {
		t.Fatalf("flags %v", got.Flags)
	}
	f := MakeFlag(hdfs.Status_ERROR, 3, 2)
	if FlagStatus(f) != hdfs.Status_ERROR || FlagECN(f) != 3 || FlagSlow(f) != 2 {
		t.Fatalf("flag %#x decodes wrong", f)
	}
	// Even an ack with no replies stays >= 5 bytes.
	b, _ = AppendAck(nil, &PipelineAck{Seqno: 0})
	if len(b) < MinResponseSize {
		t.Fatalf("empty ack is %d bytes", len(b))
	}
}

func TestWriteResponse(t *testing.T) {
	tests := []struct {
		name string
		resp *hdfs.BlockOpResponseProto
		want string
	}{
		{"success", &hdfs.BlockOpResponseProto{Status: hdfs.Status_SUCCESS.Enum()}, "04 08 00 12 00"},
		{"error link", &hdfs.BlockOpResponseProto{Status: hdfs.Status_ERROR.Enum(), FirstBadLink: proto.String("a:1")}, "07 08 01 12 03 61 3a 31"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteResponse(&buf, tt.resp); err != nil {
				t.Fatal(err)
			}
			if want := unhex(t, tt.want); !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("response = % x, want % x", buf.Bytes(), want)
			}
		})
	}
	// A response missing its required status is refused.
	if err := WriteResponse(io.Discard, &hdfs.BlockOpResponseProto{}); err == nil {
		t.Fatal("response without status was written")
	}
}

func readBlockReq() *hdfs.OpReadBlockProto {
	return &hdfs.OpReadBlockProto{
		Header: &hdfs.ClientOperationHeaderProto{
			BaseHeader: &hdfs.BaseHeaderProto{Block: &hdfs.ExtendedBlockProto{
				PoolId: proto.String("BP-1"), BlockId: proto.Uint64(1073741825), GenerationStamp: proto.Uint64(1001), NumBytes: proto.Uint64(4)}},
			ClientName: proto.String("client"),
		},
		Offset: proto.Uint64(0),
		Len:    proto.Uint64(4),
	}
}

func TestOpRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	req := readBlockReq()
	if err := WriteOp(&buf, OpReadBlock, req); err != nil {
		t.Fatal(err)
	}
	if b := buf.Bytes(); b[0] != 0 || b[1] != 28 || b[2] != 81 {
		t.Fatalf("op header % x", b[:3])
	}
	op, msg, err := ReadOp(bufio.NewReader(&buf), DefaultMaxMessageSize)
	if err != nil {
		t.Fatal(err)
	}
	if op != OpReadBlock || op.String() != "READ_BLOCK" {
		t.Fatalf("op %v", op)
	}
	if !proto.Equal(msg, req) {
		t.Fatalf("message %v, want %v", msg, req)
	}
}

func TestReadOpErrors(t *testing.T) {
	good, err := AppendOp(nil, OpReadBlock, readBlockReq())
	if err != nil {
		t.Fatal(err)
	}
	// Build a request without required fields by hand (Marshal refuses).
	partial, _ := proto.MarshalOptions{AllowPartial: true}.Marshal(&hdfs.OpReadBlockProto{Offset: proto.Uint64(1)})
	partialOp := append([]byte{0, 28, 81, byte(len(partial))}, partial...)
	tests := []struct {
		name string
		in   []byte
		max  int
		want error
	}{
		{"empty", nil, 100, io.EOF},
		{"short header", []byte{0, 28}, 100, io.ErrUnexpectedEOF},
		{"version", []byte{0, 27, 81, 0}, 100, ErrVersion},
		{"unknown op", []byte{0, 28, 79, 0}, 100, ErrUnknownOp},
		{"read metadata", []byte{0, 28, 82, 0}, 100, ErrNoMessage},
		{"too large", []byte{0, 28, 81, 0xff, 0xff, 0x03}, 100, ErrTooLarge},
		{"bad varint", []byte{0, 28, 81, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 100, ErrBadVarint},
		{"truncated body", good[:len(good)-1], 1000, io.ErrUnexpectedEOF},
		{"no length", good[:3], 1000, io.ErrUnexpectedEOF},
		{"over limit", good, 10, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ReadOp(bufio.NewReader(bytes.NewReader(tt.in)), tt.max)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if _, _, err := ReadOp(bufio.NewReader(bytes.NewReader(partialOp)), 100); err == nil {
		t.Fatal("request missing required fields accepted")
	}
}

func TestNewOpMessageCoversEveryOp(t *testing.T) {
	for op := OpWriteBlock; op <= OpBlockGroupChecksum; op++ {
		m, err := NewOpMessage(op)
		if op == OpReadMetadata {
			if !errors.Is(err, ErrNoMessage) {
				t.Errorf("%v: err %v", op, err)
			}
			continue
		}
		if err != nil || m == nil {
			t.Errorf("%v: %v", op, err)
		}
	}
	if Op(91).Valid() || Op(91).String() != "OP(91)" {
		t.Error("op 91 considered valid")
	}
}

func encodePacket(t testing.TB, h PacketHeader, sums, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := NewPacketWriter(&buf).WritePacket(h, sums, data); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestPacketRoundTrip(t *testing.T) {
	c := DefaultChecksum()
	sizes := []int{0, 1, 511, 512, 513, 4096, 65536}
	var stream bytes.Buffer
	for i, n := range sizes {
		data := bytes.Repeat([]byte{byte(i + 1)}, n)
		stream.Write(encodePacket(t, PacketHeader{OffsetInBlock: int64(i * 100), Seqno: int64(i)}, c.Compute(nil, data), data))
	}
	pr := NewPacketReader(&stream, 0)
	for i, n := range sizes {
		p, err := pr.Next()
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		if p.Header.Seqno != int64(i) || int(p.Header.DataLen) != n || len(p.Data) != n || p.Header.OffsetInBlock != int64(i*100) {
			t.Fatalf("packet %d: header %+v, %d data bytes", i, p.Header, len(p.Data))
		}
		if err := c.Verify(p.Data, p.Checksums); err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
	}
	if _, err := pr.Next(); err != io.EOF {
		t.Fatalf("after last packet: %v, want io.EOF", err)
	}
}

func TestPacketPLEN(t *testing.T) {
	data := []byte("abcd")
	sums := DefaultChecksum().Compute(nil, data)
	b := encodePacket(t, PacketHeader{Seqno: 1}, sums, data)
	if plen := binary.BigEndian.Uint32(b); plen != 4+4+4 {
		t.Fatalf("PLEN %d", plen)
	}
	if hlen := binary.BigEndian.Uint16(b[4:]); hlen != 25 {
		t.Fatalf("HLEN %d", hlen)
	}
	hb := encodePacket(t, PacketHeader{Seqno: HeartbeatSeqno}, nil, nil)
	if plen := binary.BigEndian.Uint32(hb); plen != 4 {
		t.Fatalf("heartbeat PLEN %d", plen)
	}
	p, err := NewPacketReader(bytes.NewReader(hb), 0).Next()
	if err != nil || !p.Header.IsHeartbeat() {
		t.Fatalf("heartbeat: %+v %v", p.Header, err)
	}
}

// countWriter counts Write calls.
type countWriter struct {
	n   int
	buf bytes.Buffer
}

func (w *countWriter) Write(p []byte) (int, error) { w.n++; return w.buf.Write(p) }

func TestPacketWriterWrites(t *testing.T) {
	for _, tt := range []struct {
		size, writes int
	}{{0, 1}, {100, 1}, {smallPacket, 1}, {smallPacket + 1, 2}, {65536, 2}} {
		w := &countWriter{}
		data := make([]byte, tt.size)
		if err := NewPacketWriter(w).WritePacket(PacketHeader{}, DefaultChecksum().Compute(nil, data), data); err != nil {
			t.Fatal(err)
		}
		if w.n != tt.writes {
			t.Errorf("%d bytes: %d writes, want %d", tt.size, w.n, tt.writes)
		}
	}
}

func rawPacket(plen uint32, hlen uint16, rest []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, plen)
	b = binary.BigEndian.AppendUint16(b, hlen)
	return append(b, rest...)
}

func TestPacketReaderErrors(t *testing.T) {
	hdr, _ := PacketHeader{DataLen: 10}.AppendHeader(nil)
	neg, _ := PacketHeader{DataLen: -1}.AppendHeader(nil)
	tests := []struct {
		name string
		in   []byte
		max  int
		want error
	}{
		{"short prefix", []byte{0, 0, 0}, 0, io.ErrUnexpectedEOF},
		{"plen below 4", rawPacket(3, 25, nil), 0, ErrBadPacket},
		{"negative plen", rawPacket(0x80000000, 25, nil), 0, ErrBadPacket},
		{"zero hlen", rawPacket(4, 0, nil), 0, ErrBadPacket},
		{"over limit", rawPacket(1000, 25, nil), 100, ErrBadPacket},
		{"truncated", rawPacket(4+10, uint16(len(hdr)), hdr), 0, io.ErrUnexpectedEOF},
		{"data beyond payload", rawPacket(4+5, uint16(len(hdr)), append(append([]byte{}, hdr...), 1, 2, 3, 4, 5)), 0, ErrBadPacket},
		{"negative data len", rawPacket(4, uint16(len(neg)), neg), 0, ErrBadPacket},
		{"garbage header", rawPacket(4, 3, []byte{0xff, 0xff, 0xff}), 0, ErrBadPacket},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewPacketReader(bytes.NewReader(tt.in), tt.max).Next()
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestChecksumComputeVerify(t *testing.T) {
	data := make([]byte, 1300)
	for i := range data {
		data[i] = byte(i * 7)
	}
	tests := []struct {
		c    DataChecksum
		sum0 uint32
	}{
		{DataChecksum{ChecksumCRC32C, 512}, crc32.Checksum(data[:512], crc32.MakeTable(crc32.Castagnoli))},
		{DataChecksum{ChecksumCRC32, 512}, crc32.ChecksumIEEE(data[:512])},
		{DataChecksum{ChecksumCRC32C, 100}, crc32.Checksum(data[:100], crc32.MakeTable(crc32.Castagnoli))},
	}
	for _, tt := range tests {
		t.Run(tt.c.String(), func(t *testing.T) {
			sums := tt.c.Compute(nil, data)
			if len(sums) != tt.c.ChecksumLen(len(data)) {
				t.Fatalf("%d checksum bytes", len(sums))
			}
			if got := binary.BigEndian.Uint32(sums); got != tt.sum0 {
				t.Fatalf("first sum %08x, want %08x", got, tt.sum0)
			}
			if err := tt.c.Verify(data, sums); err != nil {
				t.Fatal(err)
			}
			bad := append([]byte{}, data...)
			bad[1299] ^= 1
			var ce *ChecksumError
			err := tt.c.Verify(bad, sums)
			if !errors.As(err, &ce) || !errors.Is(err, ErrChecksum) {
				t.Fatalf("corrupt data: %v", err)
			}
			last := tt.c.NumChunks(len(data)) - 1
			if ce.ChunkIndex != last || ce.Offset != int64(last*tt.c.BytesPerChecksum) {
				t.Fatalf("error %+v, want chunk %d", ce, last)
			}
			if err := tt.c.Verify(data, sums[:len(sums)-1]); !errors.Is(err, ErrChecksumLength) {
				t.Fatalf("short sums: %v", err)
			}
		})
	}
	for _, c := range []DataChecksum{{ChecksumCRC32, 512}, {ChecksumCRC32C, 512}} {
		if got, want := c.Update(c.Sum(data[:100]), data[100:512]), c.Sum(data[:512]); got != want {
			t.Errorf("%v: Update %08x, want %08x", c, got, want)
		}
	}
	null := DataChecksum{ChecksumNull, 512}
	if null.Size() != 0 || len(null.Compute(nil, data)) != 0 || null.Verify(data, nil) != nil {
		t.Fatal("NULL checksum")
	}
}

func TestChunkRange(t *testing.T) {
	c := DefaultChecksum()
	tests := []struct {
		off, n              int64
		start, first, count int64
	}{
		{0, 0, 0, 0, 0},
		{0, 1, 0, 0, 1},
		{0, 512, 0, 0, 1},
		{0, 513, 0, 0, 2},
		{1, 511, 0, 0, 1},
		{1, 512, 0, 0, 2},
		{700, 100, 512, 1, 1},
		{511, 2, 0, 0, 2},
		{1024, 1, 1024, 2, 1},
	}
	for _, tt := range tests {
		s, f, n := c.ChunkRange(tt.off, tt.n)
		if s != tt.start || f != tt.first || n != tt.count {
			t.Errorf("ChunkRange(%d, %d) = %d, %d, %d; want %d, %d, %d", tt.off, tt.n, s, f, n, tt.start, tt.first, tt.count)
		}
	}
}

func TestChecksumProto(t *testing.T) {
	c, err := ChecksumFromProto(DefaultChecksum().Proto())
	if err != nil || c != DefaultChecksum() {
		t.Fatalf("%v %v", c, err)
	}
	bad := []*hdfs.ChecksumProto{
		nil,
		{Type: hdfs.ChecksumTypeProto(5).Enum(), BytesPerChecksum: proto.Uint32(512)},
		{Type: hdfs.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(), BytesPerChecksum: proto.Uint32(0)},
		{Type: hdfs.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(), BytesPerChecksum: proto.Uint32(1 << 30)},
	}
	for _, p := range bad {
		if _, err := ChecksumFromProto(p); !errors.Is(err, ErrBadChecksumType) {
			t.Errorf("%v: %v", p, err)
		}
	}
}

func TestFileChecksumVector(t *testing.T) {
	crcs := DefaultChecksum().Compute(nil, []byte("bar\n"))
	blk := BlockChecksumMD5(crcs)
	got := FileChecksumMD5MD5CRC([][md5.Size]byte{blk})
	if h := hex.EncodeToString(got[:]); h != "27c076e4987344253650d3335a5d08ce" {
		t.Fatalf("file checksum %s", h)
	}
	resp, err := BlockChecksumResponse(DefaultChecksum(), crcs)
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetCrcPerBlock() != 1 || resp.GetBytesPerCrc() != 512 || !bytes.Equal(resp.GetBlockChecksum(), blk[:]) {
		t.Fatalf("response %v", resp)
	}
}

func TestFileChecksumPadding(t *testing.T) {
	tests := []struct{ blocks, padded int }{{1, 32}, {2, 32}, {3, 64}, {4, 64}, {5, 128}, {9, 256}}
	for _, tt := range tests {
		md5s := make([][md5.Size]byte, tt.blocks)
		for i := range md5s {
			md5s[i][0] = byte(i + 1)
		}
		buf := make([]byte, tt.padded)
		for i := range md5s {
			copy(buf[i*16:], md5s[i][:])
		}
		if got, want := FileChecksumMD5MD5CRC(md5s), md5.Sum(buf); got != want {
			t.Errorf("%d blocks: padding is not %d bytes", tt.blocks, tt.padded)
		}
	}
}

// TestPacketReaderWindow reads a stream of packets of mixed sizes through
// windows smaller and larger than the packets, from readers that return a
// few bytes or everything at once, taking every Ready packet before reading
// on: each packet must be intact, and the ones taken together must still be
// intact when the batch ends.
func TestPacketReaderWindow(t *testing.T) {
	c := DefaultChecksum()
	var stream []byte
	var want [][]byte
	sizes := []int{0, 1, 511, 512, 513, 4096, 65536, 3000, 70000, 7, 65536, 65536, 100}
	for i, n := range sizes {
		data := bytes.Repeat([]byte{byte(i + 1)}, n)
		stream = append(stream, encodePacket(t, PacketHeader{Seqno: int64(i), OffsetInBlock: int64(i) * 1000}, c.Compute(nil, data), data)...)
		want = append(want, data)
	}
	readers := map[string]func([]byte) io.Reader{
		"whole":   func(b []byte) io.Reader { return bytes.NewReader(b) },
		"onebyte": func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) },
		"half":    func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) },
	}
	for _, win := range []int{PacketPrefixLen, 100, 4096, 70000, 1 << 20} {
		for name, mk := range readers {
			pr := NewPacketReaderWindow(mk(stream), 0, make([]byte, win))
			var batch []Packet
			check := func() {
				for _, p := range batch {
					if !bytes.Equal(p.Data, want[p.Header.Seqno]) || c.Verify(p.Data, p.Checksums) != nil {
						t.Fatalf("window %d, %s: packet %d damaged", win, name, p.Header.Seqno)
					}
				}
				batch = batch[:0]
			}
			for i := range sizes {
				if !pr.Ready() {
					check()
				}
				p, err := pr.Next()
				if err != nil {
					t.Fatalf("window %d, %s: packet %d: %v", win, name, i, err)
				}
				if p.Header.Seqno != int64(i) {
					t.Fatalf("window %d, %s: packet %d has seqno %d", win, name, i, p.Header.Seqno)
				}
				batch = append(batch, p)
			}
			check()
			if pr.Ready() {
				t.Fatalf("window %d, %s: ready after the last packet", win, name)
			}
			if _, err := pr.Next(); err != io.EOF {
				t.Fatalf("window %d, %s: after the last packet: %v, want EOF", win, name, err)
			}
		}
	}
}

func TestPacketReaderWindowTruncated(t *testing.T) {
	data := make([]byte, 1000)
	pkt := encodePacket(t, PacketHeader{Seqno: 1}, DefaultChecksum().Compute(nil, data), data)
	for _, win := range []int{16, 4096} {
		for _, cut := range []int{1, 5, 6, 40, len(pkt) - 1} {
			_, err := NewPacketReaderWindow(bytes.NewReader(pkt[:cut]), 0, make([]byte, win)).Next()
			if err != io.ErrUnexpectedEOF {
				t.Errorf("window %d, stream cut at %d: %v, want unexpected EOF", win, cut, err)
			}
		}
	}
}
