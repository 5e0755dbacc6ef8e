package datatransfer

import (
	"bufio"
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// Bounds of AllocBound for the decoders: a few times the input, plus a
// bufio.Reader, the first chunk of a growing buffer and what the fuzzing
// engine itself allocates meanwhile. The limits the
// targets pass are large (fuzzMax, DefaultMaxPacketSize) so that a decoder
// allocating by an announced length would exceed the bound by far.
const (
	allocPerByte = 32
	allocFixed   = 256 << 10
	fuzzMax      = 16 << 20
)

func FuzzReadOp(f *testing.F) {
	good, _ := AppendOp(nil, OpReadBlock, readBlockReq())
	f.Add(good)
	f.Add([]byte{0, 28, 80, 0})
	f.Add([]byte{0, 28, 85, 2, 10, 0})
	f.Add([]byte{0, 28, 81, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{0, 28, 80, 0xff, 0xff, 0xff, 0x07, 1, 2}) // claims 16 MiB, sends 2 bytes
	f.Fuzz(func(t *testing.T, in []byte) {
		var op Op
		var msg proto.Message
		var err error
		testtool.AllocBound(t, len(in), allocPerByte, allocFixed, func() {
			op, msg, err = ReadOp(bufio.NewReader(bytes.NewReader(in)), fuzzMax)
		})
		if err != nil {
			return
		}
		// A decoded request re-encodes and decodes to the same message.
		b, err := AppendOp(nil, op, msg)
		if err != nil {
			t.Fatalf("re-encode %v: %v", op, err)
		}
		op2, msg2, err := ReadOp(bufio.NewReader(bytes.NewReader(b)), 1<<20)
		if err != nil || op2 != op || !proto.Equal(msg, msg2) {
			t.Fatalf("round trip: %v %v", op2, err)
		}
	})
}

func FuzzReadPacket(f *testing.F) {
	data := []byte("hello, packet")
	f.Add(encodePacket(f, PacketHeader{Seqno: 1, OffsetInBlock: 512}, DefaultChecksum().Compute(nil, data), data))
	f.Add(encodePacket(f, PacketHeader{Seqno: HeartbeatSeqno}, nil, nil))
	f.Add(rawPacket(4, 3, []byte{1, 2, 3}))
	f.Add([]byte{0, 0xf0, 0, 0, 0, 25, 1, 2, 3}) // claims 15 MiB, sends 3 bytes
	f.Fuzz(func(t *testing.T, in []byte) {
		win := 4096
		if len(in) > 0 && in[0]&1 == 1 {
			win = 64 // exercise packets larger than the window
		}
		pr := NewPacketReaderWindow(bytes.NewReader(in), DefaultMaxPacketSize, make([]byte, win))
		for i := 0; i < 4; i++ {
			var p Packet
			var err error
			testtool.AllocBound(t, len(in), allocPerByte, allocFixed, func() { p, err = pr.Next() })
			if err != nil {
				return
			}
			if int(p.Header.DataLen) != len(p.Data) {
				t.Fatalf("DataLen %d, %d data bytes", p.Header.DataLen, len(p.Data))
			}
			b := encodePacket(t, p.Header, p.Checksums, p.Data)
			p2, err := NewPacketReader(bytes.NewReader(b), 0).Next()
			if err != nil || p2.Header != p.Header || !bytes.Equal(p2.Data, p.Data) || !bytes.Equal(p2.Checksums, p.Checksums) {
				t.Fatalf("round trip: %+v %v", p2.Header, err)
			}
			_ = DefaultChecksum().Verify(p.Data, p.Checksums)
		}
	})
}

func FuzzReadAck(f *testing.F) {
	f.Add([]byte{0x09, 0x08, 0x02, 0x10, 0x00, 0x18, 0x00, 0x22, 0x01, 0x00})
	b, _ := AppendAck(nil, &PipelineAck{Seqno: -2, Replies: []hdfs.Status{hdfs.Status_OOB_RESTART, hdfs.Status_SUCCESS}})
	f.Add(b)
	f.Add([]byte{0xff, 0xff, 0xff, 0x07, 0x08}) // claims 16 MiB, sends 1 byte
	f.Fuzz(func(t *testing.T, in []byte) {
		var a PipelineAck
		var err error
		testtool.AllocBound(t, len(in), allocPerByte, allocFixed, func() {
			err = ReadAck(bufio.NewReader(bytes.NewReader(in)), fuzzMax, &a)
		})
		if err != nil {
			return
		}
		_ = a.Success()
		out, err := AppendAck(nil, &a)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		var b PipelineAck
		if err := ReadAck(bufio.NewReader(bytes.NewReader(out)), 1<<20, &b); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		// Flags absent on the wire are derived from the replies when
		// encoding, one per reply.
		wantFlags := len(a.Flags)
		if wantFlags == 0 {
			wantFlags = len(a.Replies)
		}
		if b.Seqno != a.Seqno || len(b.Replies) != len(a.Replies) || len(b.Flags) != wantFlags {
			t.Fatalf("round trip %+v != %+v", b, a)
		}
	})
}
