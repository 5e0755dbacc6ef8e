package storage

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
)

// Meta file format constants. Part of the on-disk format.
const (
	// MetaVersion is the only meta file version (Hadoop's
	// BlockMetadataHeader.VERSION).
	MetaVersion = 1
	// MetaHeaderLen is the size of the meta file header.
	MetaHeaderLen = 7
)

// EncodeMetaHeader returns the 7-byte meta file header for c.
func EncodeMetaHeader(c datatransfer.DataChecksum) [MetaHeaderLen]byte {
	var h [MetaHeaderLen]byte
	binary.BigEndian.PutUint16(h[0:2], MetaVersion)
	h[2] = byte(c.Type)
	binary.BigEndian.PutUint32(h[3:7], uint32(c.BytesPerChecksum))
	return h
}

// ParseMetaHeader decodes and validates a meta file header.
func ParseMetaHeader(b []byte) (datatransfer.DataChecksum, error) {
	if len(b) < MetaHeaderLen {
		return datatransfer.DataChecksum{}, fmt.Errorf("%w: header of %d bytes", ErrBadMeta, len(b))
	}
	if v := binary.BigEndian.Uint16(b[0:2]); v != MetaVersion {
		return datatransfer.DataChecksum{}, fmt.Errorf("%w: version %d", ErrBadMeta, v)
	}
	bpc := binary.BigEndian.Uint32(b[3:7])
	if bpc > datatransfer.MaxBytesPerChecksum {
		return datatransfer.DataChecksum{}, fmt.Errorf("%w: bytesPerChecksum %d", ErrBadMeta, bpc)
	}
	c := datatransfer.DataChecksum{Type: datatransfer.ChecksumType(b[2]), BytesPerChecksum: int(bpc)}
	if err := c.Validate(); err != nil {
		return datatransfer.DataChecksum{}, fmt.Errorf("%w: %v", ErrBadMeta, err)
	}
	return c, nil
}

// ReadMetaHeader reads and validates the header at the start of a meta file.
func ReadMetaHeader(r io.ReaderAt) (datatransfer.DataChecksum, error) {
	var h [MetaHeaderLen]byte
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return datatransfer.DataChecksum{}, fmt.Errorf("%w: reading header: %v", ErrBadMeta, err)
	}
	return ParseMetaHeader(h[:])
}

// MetaFileLen is the length of a complete meta file for a block of blockLen
// bytes: the header plus one checksum per chunk, ⌈blockLen/bpc⌉ × size + 7.
func MetaFileLen(c datatransfer.DataChecksum, blockLen int64) int64 {
	bpc := int64(c.BytesPerChecksum)
	return MetaHeaderLen + (blockLen+bpc-1)/bpc*int64(c.Size())
}

// metaOffset is the position of chunk i's checksum in the meta file.
func metaOffset(c datatransfer.DataChecksum, chunk int64) int64 {
	return MetaHeaderLen + chunk*int64(c.Size())
}
