package datatransfer

import (
	"fmt"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// UnknownSeqno is the seqno of an out-of-band ack (Hadoop's
// PipelineAck.UNKOWN_SEQNO), which carries an OOB_* status instead of
// answering a packet.
const UnknownSeqno int64 = -2

// Bits of an ack's per-node flag word (Hadoop's PipelineAck header format):
// status in bits 0-3, one reserved bit, ECN in bits 5-6, SLOW in bits 7-8.
const (
	flagStatusMask = 0xf
	flagECNShift   = 5
	flagSlowShift  = 7
)

// PipelineAck is the acknowledgement of one packet, sent upstream: one status
// per DataNode of the pipeline from this node down (PipelineAckProto).
type PipelineAck struct {
	Seqno                  int64
	Replies                []hdfs.Status
	DownstreamAckTimeNanos uint64
	// Flags carries one flag word per reply. If nil when encoding, the flags
	// are derived from Replies (status only, ECN and SLOW disabled).
	Flags []uint32

	buf []byte // ReadAck's reusable message buffer
}

// Success reports whether every reply is SUCCESS.
func (a *PipelineAck) Success() bool {
	for _, s := range a.Replies {
		if s != hdfs.Status_SUCCESS {
			return false
		}
	}
	return true
}

// FlagStatus returns the status bits of a flag word.
func FlagStatus(flag uint32) hdfs.Status { return hdfs.Status(flag & flagStatusMask) }

// FlagECN returns the ECN bits of a flag word.
func FlagECN(flag uint32) uint32 { return (flag >> flagECNShift) & 3 }

// FlagSlow returns the SLOW bits of a flag word.
func FlagSlow(flag uint32) uint32 { return (flag >> flagSlowShift) & 3 }

// MakeFlag builds a flag word from a status, ECN and SLOW value.
func MakeFlag(s hdfs.Status, ecn, slow uint32) uint32 {
	return uint32(s)&flagStatusMask | (ecn&3)<<flagECNShift | (slow&3)<<flagSlowShift
}

// Proto returns a as a PipelineAckProto with downstreamAckTimeNanos and flag
// always present, as Hadoop sends them. This also keeps every ack at 5 bytes
// or more, which stock clients need (see WriteResponse).
func (a *PipelineAck) Proto() *hdfs.PipelineAckProto {
	flags := a.Flags
	if flags == nil {
		flags = make([]uint32, len(a.Replies))
		for i, s := range a.Replies {
			flags[i] = MakeFlag(s, 0, 0)
		}
	}
	replies := a.Replies
	if replies == nil {
		replies = []hdfs.Status{}
	}
	return &hdfs.PipelineAckProto{
		Seqno:                  proto.Int64(a.Seqno),
		Reply:                  replies,
		DownstreamAckTimeNanos: proto.Uint64(a.DownstreamAckTimeNanos),
		Flag:                   flags,
	}
}

// Wire tags of the PipelineAckProto fields.
const (
	tagAckSeqno      = 1<<3 | 0 // sint64 (zigzag varint)
	tagAckReply      = 2<<3 | 0 // repeated enum, unpacked (proto2)
	tagAckDownstream = 3<<3 | 0 // uint64 varint
	tagAckFlag       = 4<<3 | 2 // packed repeated uint32
)

// AppendAck appends a, varint-delimited, to dst. The bytes are those
// proto.Marshal produces for a.Proto(), built by hand because every packet
// is answered by one.
func AppendAck(dst []byte, a *PipelineAck) ([]byte, error) {
	flagsLen := 0
	if a.Flags == nil {
		for _, s := range a.Replies {
			flagsLen += protowire.SizeVarint(uint64(MakeFlag(s, 0, 0)))
		}
	} else {
		for _, f := range a.Flags {
			flagsLen += protowire.SizeVarint(uint64(f))
		}
	}
	zz := protowire.EncodeZigZag(a.Seqno)
	size := 1 + protowire.SizeVarint(zz) + 1 + protowire.SizeVarint(a.DownstreamAckTimeNanos)
	for _, s := range a.Replies {
		size += 1 + protowire.SizeVarint(uint64(int64(s)))
	}
	if flagsLen > 0 {
		size += 1 + protowire.SizeVarint(uint64(flagsLen)) + flagsLen
	}
	dst = protowire.AppendVarint(dst, uint64(size))
	dst = append(dst, tagAckSeqno)
	dst = protowire.AppendVarint(dst, zz)
	for _, s := range a.Replies {
		dst = append(dst, tagAckReply)
		dst = protowire.AppendVarint(dst, uint64(int64(s)))
	}
	dst = append(dst, tagAckDownstream)
	dst = protowire.AppendVarint(dst, a.DownstreamAckTimeNanos)
	if flagsLen > 0 {
		dst = append(dst, tagAckFlag)
		dst = protowire.AppendVarint(dst, uint64(flagsLen))
		if a.Flags == nil {
			for _, s := range a.Replies {
				dst = protowire.AppendVarint(dst, uint64(MakeFlag(s, 0, 0)))
			}
		} else {
			for _, f := range a.Flags {
				dst = protowire.AppendVarint(dst, uint64(f))
			}
		}
	}
	return dst, nil
}

// WriteAck writes a, varint-delimited, in a single Write.
func WriteAck(w io.Writer, a *PipelineAck) error {
	b, err := AppendAck(nil, a)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// ReadAck reads one varint-delimited ack of at most max bytes into a,
// replacing its contents. a's slices and read buffer are reused.
func ReadAck(r ByteReader, max int, a *PipelineAck) error {
	body, err := ReadDelimitedBytes(r, max, a.buf)
	if err != nil {
		return err
	}
	a.buf = body[:0]
	return a.Unmarshal(body)
}

// Unmarshal decodes a PipelineAckProto body (without its length prefix),
// reusing a's slices. The fields HDFS nodes send are decoded directly;
// anything else (unknown fields, packed replies, unknown statuses) goes
// through the protobuf library.
func (a *PipelineAck) Unmarshal(body []byte) error {
	if a.unmarshalCommon(body) {
		return nil
	}
	var p hdfs.PipelineAckProto
	if err := proto.Unmarshal(body, &p); err != nil {
		return fmt.Errorf("%w: %v", ErrBadAck, err)
	}
	a.Seqno = p.GetSeqno()
	a.Replies = p.GetReply()
	a.DownstreamAckTimeNanos = p.GetDownstreamAckTimeNanos()
	a.Flags = p.GetFlag()
	return nil
}

// unmarshalCommon decodes body into a if it holds only the fields this
// package writes, in the forms it writes them; false leaves a in an
// unspecified state for the general decoder to overwrite.
func (a *PipelineAck) unmarshalCommon(body []byte) bool {
	var seqno int64
	var down uint64
	haveSeqno := false
	replies := a.Replies[:0]
	flags := a.Flags[:0]
	for len(body) > 0 {
		tag := body[0]
		body = body[1:]
		switch tag {
		case tagAckSeqno, tagAckReply, tagAckDownstream:
			v, n := protowire.ConsumeVarint(body)
			if n < 0 {
				return false
			}
			body = body[n:]
			switch tag {
			case tagAckSeqno:
				seqno, haveSeqno = protowire.DecodeZigZag(v), true
			case tagAckReply:
				if v > math.MaxInt32 {
					return false
				}
				if _, ok := hdfs.Status_name[int32(v)]; !ok {
					return false
				}
				replies = append(replies, hdfs.Status(v))
			default:
				down = v
			}
		case tagAckFlag:
			packed, n := protowire.ConsumeBytes(body)
			if n < 0 {
				return false
			}
			body = body[n:]
			for len(packed) > 0 {
				v, n := protowire.ConsumeVarint(packed)
				if n < 0 || v > math.MaxUint32 {
					return false
				}
				packed = packed[n:]
				flags = append(flags, uint32(v))
			}
		default:
			return false
		}
	}
	if !haveSeqno {
		return false
	}
	a.Seqno, a.DownstreamAckTimeNanos = seqno, down
	a.Replies, a.Flags = replies, flags
	// The general decoder leaves absent repeated fields nil.
	if len(replies) == 0 {
		a.Replies = nil
	}
	if len(flags) == 0 {
		a.Flags = nil
	}
	return true
}
