package blocklist

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// Replica states as numbered on the wire (HdfsServerConstants.ReplicaState).
const (
	Finalized uint8 = 0
	RBW       uint8 = 1
	RWR       uint8 = 2
	RUR       uint8 = 3
	Temporary uint8 = 4
)

// CapabilityBlockReportBuffers is the bit of NamespaceInfoProto.capabilities
// by which a NameNode says it reads the buffers encoding
// (NamespaceInfo.Capability.STORAGE_BLOCK_REPORT_BUFFERS). Part of the
// protocol.
const CapabilityBlockReportBuffers uint64 = 1 << 0

// BufferSize is the largest buffer EncodeBuffers makes (64 KiB, Hadoop's
// chunk size).
const BufferSize = 64 << 10

// Masks of the reserved high bits of the buffers form.
const (
	numBytesMask = 1<<48 - 1
	stateMask    = 1<<4 - 1
)

// delimiter is the value of the three longs between the two sections of
// the long list (-1 as a Java long).
const delimiter = ^uint64(0)

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("blocklist: malformed block report")

// Replica is one replica of a report.
type Replica struct {
	ID, NumBytes, GenStamp int64
	State                  uint8
}

// EncodeLongs encodes reps in the long-list form: finalized replicas
// first, the others after the delimiter.
func EncodeLongs(reps []Replica) []uint64 {
	fin := 0
	for _, r := range reps {
		if r.State == Finalized {
			fin++
		}
	}
	uc := len(reps) - fin
	out := make([]uint64, 2+3*(fin+1)+4*uc)
	out[0], out[1] = uint64(fin), uint64(uc)
	f, u := 2, 2+3*fin
	out[u], out[u+1], out[u+2] = delimiter, delimiter, delimiter
	u += 3
	for _, r := range reps {
		if r.State == Finalized {
			out[f], out[f+1], out[f+2] = uint64(r.ID), uint64(r.NumBytes), uint64(r.GenStamp)
			f += 3
			continue
		}
		out[u], out[u+1], out[u+2], out[u+3] = uint64(r.ID), uint64(r.NumBytes), uint64(r.GenStamp), uint64(r.State)
		u += 4
	}
	return out
}

// EncodeBuffers encodes reps in the buffers form, cut every BufferSize
// bytes, and returns the buffers and numberOfBlocks.
func EncodeBuffers(reps []Replica) ([][]byte, uint64) {
	var all []byte
	for _, r := range reps {
		all = protowire.AppendVarint(all, protowire.EncodeZigZag(r.ID))
		all = protowire.AppendVarint(all, uint64(r.NumBytes))
		all = protowire.AppendVarint(all, uint64(r.GenStamp))
		all = protowire.AppendVarint(all, uint64(r.State))
	}
	var bufs [][]byte
	for len(all) > BufferSize {
		bufs = append(bufs, all[:BufferSize:BufferSize])
		all = all[BufferSize:]
	}
	if len(all) > 0 || len(bufs) == 0 {
		bufs = append(bufs, all)
	}
	return bufs, uint64(len(reps))
}

// Iter yields a decoded report's replicas in the order they were encoded.
// The zero Iter is an empty report.
type Iter struct {
	n, done uint64
	// the long list
	longs     []uint64
	finalized uint64
	// the buffers
	r byteReader
}

// Len is the number of replicas the report holds.
func (it *Iter) Len() int { return int(it.n) }

// Next returns the next replica, or false after the last.
func (it *Iter) Next() (Replica, bool) {
	if it.done >= it.n {
		return Replica{}, false
	}
	i := it.done
	it.done++
	if it.longs != nil {
		if i < it.finalized {
			p := it.longs[2+3*i:]
			return Replica{ID: int64(p[0]), NumBytes: int64(p[1]), GenStamp: int64(p[2]), State: Finalized}, true
		}
		p := it.longs[2+3*it.finalized+3+4*(i-it.finalized):]
		return Replica{ID: int64(p[0]), NumBytes: int64(p[1]), GenStamp: int64(p[2]), State: uint8(p[3])}, true
	}
	// NewBuffers checked that every varint is whole.
	id, _ := it.r.varint()
	nb, _ := it.r.varint()
	gs, _ := it.r.varint()
	st, _ := it.r.varint()
	return Replica{ID: protowire.DecodeZigZag(id), NumBytes: int64(nb & numBytesMask), GenStamp: int64(gs), State: uint8(st & stateMask)}, true
}

// NewLongs checks a long list and returns its iterator. An empty list is an
// empty report. The delimiter may be left out when there are no other
// replicas.
func NewLongs(l []uint64) (*Iter, error) {
	if len(l) == 0 {
		return &Iter{}, nil
	}
	if len(l) < 2 {
		return nil, fmt.Errorf("%w: list of %d longs has no header", ErrMalformed, len(l))
	}
	fin, uc := l[0], l[1]
	n := uint64(len(l))
	if fin > n || uc > n || n != 2+3*fin+3+4*uc && (uc != 0 || n != 2+3*fin) {
		return nil, fmt.Errorf("%w: list of %d longs does not hold %d finalized and %d other replicas", ErrMalformed, len(l), fin, uc)
	}
	if uc > 0 {
		if d := l[2+3*fin:]; d[0] != delimiter || d[1] != delimiter || d[2] != delimiter {
			return nil, fmt.Errorf("%w: no delimiter after %d finalized replicas", ErrMalformed, fin)
		}
	}
	return &Iter{n: fin + uc, longs: l, finalized: fin}, nil
}

// NewBuffers checks a buffers report of n replicas and returns its
// iterator. The count must match what the bytes hold.
func NewBuffers(bufs [][]byte, n uint64) (*Iter, error) {
	var total uint64
	for _, b := range bufs {
		total += uint64(len(b))
	}
	// A replica is at least four one-byte varints.
	if n > total/4 {
		return nil, fmt.Errorf("%w: report says %d replicas but its %d bytes hold at most %d", ErrMalformed, n, total, total/4)
	}
	check := byteReader{bufs: bufs}
	for i := uint64(0); i < n; i++ {
		for range 4 {
			if _, ok := check.varint(); !ok {
				return nil, fmt.Errorf("%w: replica %d of %d is cut short or has a varint longer than 10 bytes", ErrMalformed, i+1, n)
			}
		}
	}
	if !check.empty() {
		return nil, fmt.Errorf("%w: bytes left after the %d replicas the report announces", ErrMalformed, n)
	}
	return &Iter{n: n, r: byteReader{bufs: bufs}}, nil
}

// byteReader reads varints from the concatenation of bufs.
type byteReader struct {
	bufs [][]byte
	cur  []byte
}

func (r *byteReader) empty() bool {
	for len(r.cur) == 0 {
		if len(r.bufs) == 0 {
			return true
		}
		r.cur, r.bufs = r.bufs[0], r.bufs[1:]
	}
	return false
}

// varint reads one varint, across a buffer boundary if need be.
func (r *byteReader) varint() (uint64, bool) {
	if r.empty() {
		return 0, false
	}
	if v, k := protowire.ConsumeVarint(r.cur); k > 0 {
		r.cur = r.cur[k:]
		return v, true
	} else if len(r.cur) >= 10 {
		return 0, false // too long or overflowing
	}
	// It continues in the next buffer: byte by byte.
	var v uint64
	for i := 0; i < 10; i++ {
		if r.empty() {
			return 0, false
		}
		c := r.cur[0]
		r.cur = r.cur[1:]
		if i == 9 && c > 1 {
			return 0, false
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, true
		}
	}
	return 0, false
}
