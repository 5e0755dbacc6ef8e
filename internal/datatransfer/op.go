package datatransfer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// Version is the DataTransferProtocol version every op header carries (Hadoop
// 3.x's DataTransferProtocol.DATA_TRANSFER_VERSION). Part of the wire format.
const Version uint16 = 28

// OpHeaderLen is the size of the fixed part of an op request: version + opcode.
const OpHeaderLen = 3

// Op is a DataTransferProtocol opcode. The values are part of the wire format.
type Op uint8

// Opcodes (Hadoop's Op enum).
const (
	OpWriteBlock             Op = 80
	OpReadBlock              Op = 81
	OpReadMetadata           Op = 82
	OpReplaceBlock           Op = 83
	OpCopyBlock              Op = 84
	OpBlockChecksum          Op = 85
	OpTransferBlock          Op = 86
	OpRequestShortCircuitFDs Op = 87
	OpReleaseShortCircuitFDs Op = 88
	OpRequestShortCircuitShm Op = 89
	OpBlockGroupChecksum     Op = 90
)

var opNames = [...]string{
	"WRITE_BLOCK", "READ_BLOCK", "READ_METADATA", "REPLACE_BLOCK", "COPY_BLOCK",
	"BLOCK_CHECKSUM", "TRANSFER_BLOCK", "REQUEST_SHORT_CIRCUIT_FDS",
	"RELEASE_SHORT_CIRCUIT_FDS", "REQUEST_SHORT_CIRCUIT_SHM", "BLOCK_GROUP_CHECKSUM",
}

// Valid reports whether op is one of the known opcodes.
func (op Op) Valid() bool { return op >= OpWriteBlock && op <= OpBlockGroupChecksum }

// String returns Hadoop's name of the op, or "OP(<n>)" for an unknown code.
func (op Op) String() string {
	if op.Valid() {
		return opNames[op-OpWriteBlock]
	}
	return fmt.Sprintf("OP(%d)", uint8(op))
}

// NewOpMessage returns an empty request message of the type op carries.
// READ_METADATA has none (Hadoop removed it; its opcode stays reserved) and
// yields ErrNoMessage.
func NewOpMessage(op Op) (proto.Message, error) {
	switch op {
	case OpWriteBlock:
		return &hdfs.OpWriteBlockProto{}, nil
	case OpReadBlock:
		return &hdfs.OpReadBlockProto{}, nil
	case OpReplaceBlock:
		return &hdfs.OpReplaceBlockProto{}, nil
	case OpCopyBlock:
		return &hdfs.OpCopyBlockProto{}, nil
	case OpBlockChecksum:
		return &hdfs.OpBlockChecksumProto{}, nil
	case OpTransferBlock:
		return &hdfs.OpTransferBlockProto{}, nil
	case OpRequestShortCircuitFDs:
		return &hdfs.OpRequestShortCircuitAccessProto{}, nil
	case OpReleaseShortCircuitFDs:
		return &hdfs.ReleaseShortCircuitAccessRequestProto{}, nil
	case OpRequestShortCircuitShm:
		return &hdfs.ShortCircuitShmRequestProto{}, nil
	case OpBlockGroupChecksum:
		return &hdfs.OpBlockGroupChecksumProto{}, nil
	case OpReadMetadata:
		return nil, fmt.Errorf("%w: %s", ErrNoMessage, op)
	}
	return nil, fmt.Errorf("%w: %d", ErrUnknownOp, uint8(op))
}

// ReadOpHeader reads the 3-byte op header and checks the version and opcode.
// A clean end of stream before the first byte is io.EOF (the peer closed an
// idle connection).
func ReadOpHeader(r io.Reader) (Op, error) {
	var h [OpHeaderLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, err
	}
	if v := binary.BigEndian.Uint16(h[:2]); v != Version {
		return 0, fmt.Errorf("%w: got %d, want %d", ErrVersion, v, Version)
	}
	op := Op(h[2])
	if !op.Valid() {
		return 0, fmt.Errorf("%w: %d", ErrUnknownOp, h[2])
	}
	return op, nil
}

// ReadOpRaw reads an op header and the op's varint-delimited body (at most
// max bytes, checked before allocating) without decoding it.
func ReadOpRaw(r ByteReader, max int) (Op, []byte, error) {
	op, err := ReadOpHeader(r)
	if err != nil {
		return 0, nil, err
	}
	body, err := ReadDelimitedBytes(r, max, nil)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return op, nil, fmt.Errorf("datatransfer: read %s request: %w", op, err)
	}
	return op, body, nil
}

// ReadOp reads an op header and decodes the op's request message, whose type
// depends on the op (see NewOpMessage): *hdfs.OpWriteBlockProto for
// OpWriteBlock, *hdfs.OpReadBlockProto for OpReadBlock, and so on. The body is
// limited to max bytes; required fields are enforced.
func ReadOp(r ByteReader, max int) (Op, proto.Message, error) {
	op, body, err := ReadOpRaw(r, max)
	if err != nil {
		return op, nil, err
	}
	m, err := NewOpMessage(op)
	if err != nil {
		return op, nil, err
	}
	if err := proto.Unmarshal(body, m); err != nil {
		return op, nil, fmt.Errorf("datatransfer: decode %s request: %w", op, err)
	}
	return op, m, nil
}

// AppendOp appends an op request (header and varint-delimited message) to dst.
func AppendOp(dst []byte, op Op, m proto.Message) ([]byte, error) {
	if !op.Valid() {
		return dst, fmt.Errorf("%w: %d", ErrUnknownOp, uint8(op))
	}
	dst = binary.BigEndian.AppendUint16(dst, Version)
	dst = append(dst, byte(op))
	return AppendDelimited(dst, m)
}

// WriteOp writes an op request in a single Write.
func WriteOp(w io.Writer, op Op, m proto.Message) error {
	b, err := AppendOp(nil, op, m)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
