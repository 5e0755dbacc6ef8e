package datatransfer

import (
	"crypto/md5"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// BlockChecksumMD5 is the blockChecksum a DataNode returns for BLOCK_CHECKSUM
// with MD5CRC (the default): the MD5 of the block's stored chunk checksums,
// 4 big-endian bytes each, chunk-aligned from the block start, concatenated
// exactly as they follow the meta file header.
func BlockChecksumMD5(crcs []byte) [md5.Size]byte { return md5.Sum(crcs) }

// BlockChecksumResponse builds the checksumResponse of a BLOCK_CHECKSUM reply
// from a block's checksum descriptor and its stored chunk checksums.
func BlockChecksumResponse(c DataChecksum, crcs []byte) (*hdfs.OpBlockChecksumResponseProto, error) {
	if c.Size() == 0 {
		return nil, fmt.Errorf("%w: BLOCK_CHECKSUM needs a CRC type, block has %s", ErrBadChecksumType, c.Type)
	}
	if len(crcs)%c.Size() != 0 {
		return nil, fmt.Errorf("%w: %d checksum bytes", ErrChecksumLength, len(crcs))
	}
	sum := BlockChecksumMD5(crcs)
	t := hdfs.ChecksumTypeProto(c.Type)
	return &hdfs.OpBlockChecksumResponseProto{
		BytesPerCrc:   proto.Uint32(uint32(c.BytesPerChecksum)),
		CrcPerBlock:   proto.Uint64(uint64(len(crcs) / c.Size())),
		BlockChecksum: sum[:],
		CrcType:       &t,
	}, nil
}

// FileChecksumMD5MD5CRC computes a file's MD5-of-MD5-of-CRC checksum from the
// per-block MD5s in block order, the way Hadoop's client does: the MD5s are
// collected in a buffer that starts at 32 bytes and doubles whenever they no
// longer fit, and the MD5 is taken over the whole buffer, zero padding
// included. One block thus hashes its 16 bytes followed by 16 zero bytes.
func FileChecksumMD5MD5CRC(blockMD5s [][md5.Size]byte) [md5.Size]byte {
	total := len(blockMD5s) * md5.Size
	size := 32
	for size < total {
		size *= 2
	}
	buf := make([]byte, size)
	for i, m := range blockMD5s {
		copy(buf[i*md5.Size:], m[:])
	}
	return md5.Sum(buf)
}
