package datatransfer

import (
	"fmt"
	"io"

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

// AppendAck appends a, varint-delimited, to dst.
func AppendAck(dst []byte, a *PipelineAck) ([]byte, error) { return AppendDelimited(dst, a.Proto()) }

// WriteAck writes a, varint-delimited, in a single Write.
func WriteAck(w io.Writer, a *PipelineAck) error { return WriteDelimited(w, a.Proto()) }

// ReadAck reads one varint-delimited ack of at most max bytes into a,
// replacing its contents.
func ReadAck(r ByteReader, max int, a *PipelineAck) error {
	body, err := ReadDelimitedBytes(r, max, nil)
	if err != nil {
		return err
	}
	return a.Unmarshal(body)
}

// Unmarshal decodes a PipelineAckProto body (without its length prefix).
func (a *PipelineAck) Unmarshal(body []byte) error {
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
