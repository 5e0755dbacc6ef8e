package client

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// goodReadStream is a DataNode's complete answer to READ_BLOCK of "hello"
// at offset 1: response, one packet, the final empty packet.
func goodReadStream(t testing.TB) []byte {
	var b bytes.Buffer
	cs := datatransfer.DefaultChecksum()
	err := datatransfer.WriteResponse(&b, &hdfs.BlockOpResponseProto{
		Status: hdfs.Status_SUCCESS.Enum(), FirstBadLink: proto.String(""),
		ReadOpChecksumInfo: &hdfs.ReadOpChecksumInfoProto{Checksum: cs.Proto(), ChunkOffset: proto.Uint64(0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	pw := datatransfer.NewPacketWriter(&b)
	data := []byte("hello")
	if err := pw.WritePacket(datatransfer.PacketHeader{}, cs.Compute(nil, data), data); err != nil {
		t.Fatal(err)
	}
	if err := pw.WritePacket(datatransfer.PacketHeader{OffsetInBlock: 5, Seqno: 1, LastPacketInBlock: true}, nil, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// readFrom runs a block read of 4 bytes at offset 1 against a peer that
// answers with stream.
func readFrom(stream []byte) ([]byte, error) {
	cli, srv := net.Pipe()
	go func() {
		defer srv.Close()
		if _, _, err := datatransfer.ReadOp(bufio.NewReader(srv), datatransfer.DefaultMaxMessageSize); err != nil {
			return
		}
		_, _ = srv.Write(stream)
	}()
	lb := &hdfs.LocatedBlockProto{B: &hdfs.ExtendedBlockProto{PoolId: proto.String("bp"), BlockId: proto.Uint64(1),
		GenerationStamp: proto.Uint64(1), NumBytes: proto.Uint64(5)}}
	br, err := startBlockRead(context.Background(), cli, "peer", "c", lb, 1, 4)
	if err != nil {
		return nil, err
	}
	defer br.finish()
	return io.ReadAll(br)
}

func TestBlockReaderStream(t *testing.T) {
	got, err := readFrom(goodReadStream(t))
	if err != nil || string(got) != "ello" {
		t.Fatalf("read %q, %v", got, err)
	}
	bad := goodReadStream(t)
	bad[len(bad)-40] ^= 1 // inside the first packet's data or checksum
	if got, err := readFrom(bad); err == nil && string(got) != "ello" {
		t.Fatalf("corrupt stream read %q without error", got)
	}
}

// FuzzBlockReader feeds arbitrary DataNode answers to the block reader: it
// must return data or an error, never panic or hang.
func FuzzBlockReader(f *testing.F) {
	f.Add(goodReadStream(f))
	f.Add([]byte{})
	f.Add([]byte{0x05, 0x08, 0x01, 0x12, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, stream []byte) {
		got, err := readFrom(stream)
		if err == nil && len(got) > 4 {
			t.Fatalf("read %d bytes of a 4-byte range", len(got))
		}
	})
}
