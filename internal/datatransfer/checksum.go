package datatransfer

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// ChecksumType is the algorithm of per-chunk checksums. The values are part of
// the wire and meta-file formats (Hadoop's DataChecksum.Type ids, equal to
// ChecksumTypeProto).
type ChecksumType uint8

// Checksum types.
const (
	ChecksumNull   ChecksumType = 0
	ChecksumCRC32  ChecksumType = 1 // IEEE polynomial
	ChecksumCRC32C ChecksumType = 2 // Castagnoli polynomial
)

func (t ChecksumType) String() string {
	switch t {
	case ChecksumNull:
		return "NULL"
	case ChecksumCRC32:
		return "CRC32"
	case ChecksumCRC32C:
		return "CRC32C"
	}
	return fmt.Sprintf("CHECKSUM(%d)", uint8(t))
}

// DefaultBytesPerChecksum is dfs.bytes-per-checksum's default.
const DefaultBytesPerChecksum = 512

// MaxBytesPerChecksum bounds the chunk size accepted from the wire or a meta
// file, so that one chunk never forces a large allocation.
const MaxBytesPerChecksum = 1 << 20

// castagnoli is the CRC32C table; crc32 picks the SSE4.2 / ARMv8 instructions
// for it when the CPU has them. Set once at init and never written.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// DataChecksum describes how a block's data is checksummed: one checksum of
// Type per BytesPerChecksum-byte chunk. The zero value is NULL with no chunk
// size, which Validate rejects.
type DataChecksum struct {
	Type             ChecksumType
	BytesPerChecksum int
}

// DefaultChecksum returns CRC32C per 512 bytes, what Hadoop 3.x writes by default.
func DefaultChecksum() DataChecksum {
	return DataChecksum{Type: ChecksumCRC32C, BytesPerChecksum: DefaultBytesPerChecksum}
}

// Validate checks the type and chunk size.
func (c DataChecksum) Validate() error {
	if c.Type > ChecksumCRC32C {
		return fmt.Errorf("%w: type %d", ErrBadChecksumType, uint8(c.Type))
	}
	if c.BytesPerChecksum <= 0 || c.BytesPerChecksum > MaxBytesPerChecksum {
		return fmt.Errorf("%w: bytesPerChecksum %d", ErrBadChecksumType, c.BytesPerChecksum)
	}
	return nil
}

func (c DataChecksum) String() string {
	return fmt.Sprintf("%s/%d", c.Type, c.BytesPerChecksum)
}

// Size is the number of bytes of one chunk's checksum: 4, or 0 for NULL.
func (c DataChecksum) Size() int {
	if c.Type == ChecksumNull {
		return 0
	}
	return 4
}

// NumChunks is the number of chunks n bytes of data make (the last may be
// partial).
func (c DataChecksum) NumChunks(n int) int {
	return (n + c.BytesPerChecksum - 1) / c.BytesPerChecksum
}

// ChecksumLen is the number of checksum bytes for n bytes of data.
func (c DataChecksum) ChecksumLen(n int) int { return c.NumChunks(n) * c.Size() }

// Sum returns the checksum of one chunk (0 for NULL).
func (c DataChecksum) Sum(chunk []byte) uint32 {
	switch c.Type {
	case ChecksumCRC32:
		return crc32.ChecksumIEEE(chunk)
	case ChecksumCRC32C:
		return crc32.Checksum(chunk, castagnoli)
	}
	return 0
}

// Update returns the checksum of a chunk whose earlier bytes had checksum crc
// (as returned by Sum or Update) and which continues with p:
// Update(Sum(a), b) == Sum(a ‖ b). It lets a chunk that grows across packets
// be summed without copying. 0 for NULL.
func (c DataChecksum) Update(crc uint32, p []byte) uint32 {
	switch c.Type {
	case ChecksumCRC32:
		return crc32.Update(crc, crc32.IEEETable, p)
	case ChecksumCRC32C:
		return crc32.Update(crc, castagnoli, p)
	}
	return 0
}

// Compute appends to dst one big-endian checksum per chunk of data, chunks
// counted from data[0], and returns the extended slice.
func (c DataChecksum) Compute(dst, data []byte) []byte {
	if c.Type == ChecksumNull {
		return dst
	}
	bpc := c.BytesPerChecksum
	for len(data) > 0 {
		n := min(bpc, len(data))
		dst = binary.BigEndian.AppendUint32(dst, c.Sum(data[:n]))
		data = data[n:]
	}
	return dst
}

// Verify checks sums (one big-endian checksum per chunk of data, chunks counted
// from data[0]) against data. A wrong number of checksum bytes is
// ErrChecksumLength; the first chunk that does not match is a *ChecksumError.
func (c DataChecksum) Verify(data, sums []byte) error {
	if want := c.ChecksumLen(len(data)); len(sums) != want {
		return fmt.Errorf("%w: %d data bytes need %d checksum bytes, got %d", ErrChecksumLength, len(data), want, len(sums))
	}
	if c.Type == ChecksumNull {
		return nil
	}
	bpc := c.BytesPerChecksum
	for i, off := 0, 0; off < len(data); i, off = i+1, off+bpc {
		end := min(off+bpc, len(data))
		got := c.Sum(data[off:end])
		want := binary.BigEndian.Uint32(sums[4*i:])
		if got != want {
			return &ChecksumError{ChunkIndex: i, Offset: int64(off), Want: want, Got: got}
		}
	}
	return nil
}

// ChunkRange returns the chunk-aligned range that covers the n bytes starting
// at offset: the offset of the first chunk's first byte, the index of that
// chunk, and the number of chunks. n == 0 gives count 0.
func (c DataChecksum) ChunkRange(offset, n int64) (start, first, count int64) {
	bpc := int64(c.BytesPerChecksum)
	first = offset / bpc
	start = first * bpc
	if n <= 0 {
		return start, first, 0
	}
	end := offset + n
	count = (end+bpc-1)/bpc - first
	return start, first, count
}

// Proto returns c as a ChecksumProto.
func (c DataChecksum) Proto() *hdfs.ChecksumProto {
	t := hdfs.ChecksumTypeProto(c.Type)
	bpc := uint32(c.BytesPerChecksum)
	return &hdfs.ChecksumProto{Type: &t, BytesPerChecksum: &bpc}
}

// ChecksumFromProto converts and validates a ChecksumProto.
func ChecksumFromProto(p *hdfs.ChecksumProto) (DataChecksum, error) {
	if p == nil {
		return DataChecksum{}, fmt.Errorf("%w: missing", ErrBadChecksumType)
	}
	bpc := p.GetBytesPerChecksum()
	if bpc > MaxBytesPerChecksum {
		return DataChecksum{}, fmt.Errorf("%w: bytesPerChecksum %d", ErrBadChecksumType, bpc)
	}
	c := DataChecksum{Type: ChecksumType(p.GetType()), BytesPerChecksum: int(bpc)}
	if p.GetType() < 0 || p.GetType() > 2 {
		return DataChecksum{}, fmt.Errorf("%w: type %d", ErrBadChecksumType, p.GetType())
	}
	return c, c.Validate()
}
