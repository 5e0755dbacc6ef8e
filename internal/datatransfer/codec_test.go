package datatransfer

import (
	"bytes"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// The hand-built encoders must produce exactly what the protobuf library does.
func TestEncodersMatchProto(t *testing.T) {
	headers := []PacketHeader{
		{},
		{OffsetInBlock: 1 << 40, Seqno: 99, DataLen: 65536},
		{OffsetInBlock: -1, Seqno: HeartbeatSeqno, LastPacketInBlock: true, DataLen: -5, SyncBlock: true},
	}
	for _, h := range headers {
		got, _ := h.AppendHeader(nil)
		want, err := marshalOpts.Marshal(h.Proto())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("header %+v: % x, protobuf % x", h, got, want)
		}
	}
	acks := []PipelineAck{
		{},
		{Seqno: 1, Replies: []hdfs.Status{hdfs.Status_SUCCESS}},
		{Seqno: -2, Replies: []hdfs.Status{hdfs.Status_OOB_RESTART, hdfs.Status_ERROR_CHECKSUM, hdfs.Status_SUCCESS}, DownstreamAckTimeNanos: 1 << 50},
		{Seqno: 1 << 62, Replies: []hdfs.Status{hdfs.Status_ERROR}, Flags: []uint32{MakeFlag(hdfs.Status_ERROR, 3, 2), 1 << 31}},
		{Seqno: 5, Flags: []uint32{}},
	}
	for _, a := range acks {
		got, _ := AppendAck(nil, &a)
		want, err := AppendDelimited(nil, a.Proto())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("ack %+v: % x, protobuf % x", a, got, want)
		}
	}
}

func protoHeader(b []byte) (PacketHeader, error) {
	var p hdfs.PacketHeaderProto
	if err := proto.Unmarshal(b, &p); err != nil {
		return PacketHeader{}, err
	}
	return PacketHeader{OffsetInBlock: p.GetOffsetInBlock(), Seqno: p.GetSeqno(),
		LastPacketInBlock: p.GetLastPacketInBlock(), DataLen: p.GetDataLen(), SyncBlock: p.GetSyncBlock()}, nil
}

// FuzzPacketHeaderDecoder checks that ParsePacketHeader agrees with the
// protobuf library on any input.
func FuzzPacketHeaderDecoder(f *testing.F) {
	for _, h := range []PacketHeader{{Seqno: 1, DataLen: 4}, {Seqno: -1, SyncBlock: true, LastPacketInBlock: true}} {
		b, _ := h.AppendHeader(nil)
		f.Add(b)
	}
	f.Add(append(bytes.Repeat([]byte{0}, 24), 1))
	f.Fuzz(func(t *testing.T, in []byte) {
		var got PacketHeader
		var err error
		testtool.AllocBound(t, len(in), allocPerByte, allocFixed, func() { got, err = ParsePacketHeader(in) })
		want, werr := protoHeader(in)
		if (err != nil) != (werr != nil) || got != want {
			t.Fatalf("ParsePacketHeader = %+v, %v; protobuf %+v, %v", got, err, want, werr)
		}
	})
}

// FuzzAckDecoder checks that PipelineAck.Unmarshal, reusing its slices,
// agrees with the protobuf library on any input.
func FuzzAckDecoder(f *testing.F) {
	b, _ := AppendAck(nil, &PipelineAck{Seqno: 3, Replies: []hdfs.Status{hdfs.Status_SUCCESS, hdfs.Status_ERROR}})
	f.Add(b[1:])
	f.Add([]byte{0x08, 0x02, 0x12, 0x01, 0x00})       // packed replies
	f.Add([]byte{0x08, 0x02, 0x10, 0x7f, 0x20, 0x01}) // unknown status, unpacked flag
	a := PipelineAck{Replies: make([]hdfs.Status, 0, 4), Flags: make([]uint32, 0, 4)}
	f.Fuzz(func(t *testing.T, in []byte) {
		var err error
		testtool.AllocBound(t, len(in), allocPerByte, allocFixed, func() { err = a.Unmarshal(in) })
		var p hdfs.PipelineAckProto
		werr := proto.Unmarshal(in, &p)
		if (err != nil) != (werr != nil) {
			t.Fatalf("Unmarshal error %v, protobuf %v", err, werr)
		}
		if err != nil {
			return
		}
		if a.Seqno != p.GetSeqno() || a.DownstreamAckTimeNanos != p.GetDownstreamAckTimeNanos() ||
			!slices.Equal(a.Replies, p.GetReply()) || !slices.Equal(a.Flags, p.GetFlag()) ||
			(a.Flags == nil) != (p.GetFlag() == nil) || (a.Replies == nil) != (p.GetReply() == nil) {
			t.Fatalf("Unmarshal = %+v, protobuf %v", a, &p)
		}
	})
}
