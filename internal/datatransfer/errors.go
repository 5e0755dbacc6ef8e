package datatransfer

import (
	"errors"
	"fmt"
)

// Errors returned by this package. Decoders wrap them with %w and the detail
// (the offending length, opcode or field).
var (
	// ErrVersion: an op header carries a DataTransferProtocol version other
	// than Version.
	ErrVersion = errors.New("datatransfer: unsupported data transfer version")
	// ErrUnknownOp: an op header carries an opcode this package does not know.
	ErrUnknownOp = errors.New("datatransfer: unknown op")
	// ErrNoMessage: the op is known but has no request message format (READ_METADATA).
	ErrNoMessage = errors.New("datatransfer: op has no request message")
	// ErrTooLarge: a length prefix exceeds the limit the caller allows.
	ErrTooLarge = errors.New("datatransfer: message too large")
	// ErrBadVarint: a varint length prefix is malformed (more than 5 bytes or
	// overflowing 32 bits).
	ErrBadVarint = errors.New("datatransfer: malformed varint length")
	// ErrBadPacket: a packet's lengths are negative or inconsistent, or its
	// header is not a valid PacketHeaderProto.
	ErrBadPacket = errors.New("datatransfer: malformed packet")
	// ErrBadAck: a pipeline ack is not a valid PipelineAckProto.
	ErrBadAck = errors.New("datatransfer: malformed pipeline ack")
	// ErrBadChecksumType: a checksum descriptor has an unknown type or a
	// non-positive bytes-per-checksum.
	ErrBadChecksumType = errors.New("datatransfer: invalid checksum descriptor")
	// ErrChecksumLength: the checksum bytes given do not match the number of
	// chunks in the data.
	ErrChecksumLength = errors.New("datatransfer: checksum length does not match data length")
	// ErrChecksum is matched (errors.Is) by every *ChecksumError.
	ErrChecksum = errors.New("datatransfer: checksum mismatch")
)

// ChecksumError reports the first chunk whose checksum does not match its data.
// It matches ErrChecksum with errors.Is.
type ChecksumError struct {
	ChunkIndex int    // index of the bad chunk, counted from the start of the data verified
	Offset     int64  // byte offset of that chunk's first byte in the data verified
	Want, Got  uint32 // stored and computed checksums
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("datatransfer: checksum mismatch in chunk %d at offset %d: stored %08x, computed %08x",
		e.ChunkIndex, e.Offset, e.Want, e.Got)
}

// Is makes errors.Is(err, ErrChecksum) true.
func (e *ChecksumError) Is(target error) bool { return target == ErrChecksum }
