package datanode

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"google.golang.org/protobuf/proto"
)

// FuzzXceiver sends arbitrary bytes to a DataNode's streaming port (the
// other end of which is anyone on the network) and checks that the
// connection ends once the input does, and that the DataNode still serves a
// valid request afterwards.
func FuzzXceiver(f *testing.F) {
	ck := datatransfer.DefaultChecksum()
	seed := func(op datatransfer.Op, m proto.Message, tail ...[]byte) []byte {
		b, err := datatransfer.AppendOp(nil, op, m)
		if err != nil {
			f.Fatal(err)
		}
		for _, t := range tail {
			b = append(b, t...)
		}
		return b
	}
	data := randomData(1500, 30)
	pkt, _ := datatransfer.AppendPacketPrefix(nil, datatransfer.PacketHeader{Seqno: 1, DataLen: int32(len(data))}, ck.Compute(nil, data))
	pkt = append(pkt, data...)
	last, _ := datatransfer.AppendPacketPrefix(nil, datatransfer.PacketHeader{OffsetInBlock: 1500, Seqno: 2, LastPacketInBlock: true}, nil)
	f.Add(seed(datatransfer.OpWriteBlock, writeReq(1, 1001, nil, ck), pkt, last))
	f.Add(seed(datatransfer.OpWriteBlock, writeReq(2, 1001, nil, ck), pkt[:40]))
	f.Add(seed(datatransfer.OpReadBlock, &hdfs.OpReadBlockProto{Header: &hdfs.ClientOperationHeaderProto{
		BaseHeader: &hdfs.BaseHeaderProto{Block: ext(1, 1001, 0)}, ClientName: proto.String("c")},
		Offset: proto.Uint64(7), Len: proto.Uint64(100)}))
	f.Add(seed(datatransfer.OpBlockChecksum, &hdfs.OpBlockChecksumProto{Header: &hdfs.BaseHeaderProto{Block: ext(1, 1001, 0)}}))
	f.Add([]byte{0, 28, 80, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{3, 8, 6, 0, 0, 28})

	nn := newFakeNN(f, "CID-fuzz")
	dn := startDN(f, nn)
	addr := dn.XferAddr().String()
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(waitFor))
		go func() {
			_, _ = c.Write(in)
			_ = c.(*net.TCPConn).CloseWrite()
		}()
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatalf("connection did not end after the input: %v", err)
		}
		cc := dial(t, dn)
		req := &hdfs.OpBlockChecksumProto{Header: &hdfs.BaseHeaderProto{Block: ext(999, 1, 0), Token: emptyToken()}}
		if err := datatransfer.WriteOp(cc.conn, datatransfer.OpBlockChecksum, req); err != nil {
			t.Fatal(err)
		}
		var resp hdfs.BlockOpResponseProto
		if err := datatransfer.ReadDelimited(cc.br, 1<<20, &resp); err != nil {
			t.Fatalf("DataNode stopped answering: %v", err)
		}
	})
}
