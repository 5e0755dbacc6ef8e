package datanode

import (
	"bytes"
	"net"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"google.golang.org/protobuf/proto"
)

func TestAppendThroughPipeline(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dns := []*DataNode{startDN(t, nn), startDN(t, nn)}
	first := randomData(3000, 10)
	more := randomData(70_000, 11)
	targets := []*hdfs.DatanodeInfoProto{info(dns[1])}
	dial(t, dns[0]).writeBlock(21, 1001, targets, first, []int{len(first)}, nil)

	for _, newGS := range []int64{1001, 1002} { // the stock client keeps the stamp; Hadoop's bumps it
		req := writeReq(21, 1001, targets, datatransfer.DefaultChecksum())
		if newGS == 1002 {
			req.Header.BaseHeader.Block = ext(21, 1001, int64(len(first)))
		}
		req.Stage = hdfs.OpWriteBlockProto_PIPELINE_SETUP_APPEND.Enum()
		req.MinBytesRcvd = proto.Uint64(uint64(len(first)))
		req.MaxBytesRcvd = proto.Uint64(uint64(len(first)))
		req.LatestGenerationStamp = proto.Uint64(uint64(newGS))
		acks := dial(t, dns[0]).write(req, len(first), more, []int{100, len(more)}, nil)
		for _, a := range acks {
			if !a.Success() || len(a.Replies) != 2 {
				t.Fatalf("ack %+v", a)
			}
		}
		first = append(first, more...)
		more = randomData(1000, int(newGS))
		for i, dn := range dns {
			bp, _ := dn.BlockPool(testPool)
			r, ok := bp.Get(21)
			if !ok || r.State != storage.Finalized || r.GenStamp != newGS || r.NumBytes != int64(len(first)) {
				t.Fatalf("datanode %d after append: %+v", i, r)
			}
			if got := dial(t, dn).readBlock(21, newGS, 0, int64(len(first))); !bytes.Equal(got, first) {
				t.Fatalf("datanode %d: appended block reads back wrong", i)
			}
			ck := datatransfer.DefaultChecksum()
			want := datatransfer.BlockChecksumMD5(ck.Compute(nil, first))
			if cr := dial(t, dn).blockChecksum(21, newGS); !bytes.Equal(cr.GetBlockChecksum(), want[:]) {
				t.Fatalf("datanode %d: checksum after append differs", i)
			}
		}
	}
}

func TestHeartbeatPacketAcked(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dns := []*DataNode{startDN(t, nn), startDN(t, nn)}
	c := dial(t, dns[0])
	ck := datatransfer.DefaultChecksum()
	if err := datatransfer.WriteOp(c.conn, datatransfer.OpWriteBlock, writeReq(31, 1001, []*hdfs.DatanodeInfoProto{info(dns[1])}, ck)); err != nil {
		t.Fatal(err)
	}
	var resp hdfs.BlockOpResponseProto
	if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil || resp.GetStatus() != hdfs.Status_SUCCESS {
		t.Fatalf("%v %v", err, resp.GetStatus())
	}
	pw := datatransfer.NewPacketWriter(c.conn)
	data := randomData(1000, 12)
	steps := []struct {
		h    datatransfer.PacketHeader
		data []byte
	}{
		{datatransfer.PacketHeader{Seqno: datatransfer.HeartbeatSeqno}, nil},
		{datatransfer.PacketHeader{Seqno: 1}, data},
		{datatransfer.PacketHeader{Seqno: datatransfer.HeartbeatSeqno}, nil},
		{datatransfer.PacketHeader{OffsetInBlock: 1000, Seqno: 2, LastPacketInBlock: true}, nil},
	}
	for _, st := range steps {
		if err := pw.WritePacket(st.h, ck.Compute(nil, st.data), st.data); err != nil {
			t.Fatal(err)
		}
		var a datatransfer.PipelineAck
		if err := datatransfer.ReadAck(c.br, 1<<20, &a); err != nil {
			t.Fatal(err)
		}
		if a.Seqno != st.h.Seqno || !a.Success() || len(a.Replies) != 2 {
			t.Fatalf("ack %+v for packet %d", a, st.h.Seqno)
		}
	}
}

func TestUnreachableDownstreamReported(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dn := startDN(t, nn)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := tcpPort(l.Addr())
	_ = l.Close()
	dead := &hdfs.DatanodeInfoProto{Id: &hdfs.DatanodeIDProto{IpAddr: proto.String("127.0.0.1"), HostName: proto.String("dead"),
		DatanodeUuid: proto.String("dead"), XferPort: proto.Uint32(port), InfoPort: proto.Uint32(0), IpcPort: proto.Uint32(0)}}
	c := dial(t, dn)
	if err := datatransfer.WriteOp(c.conn, datatransfer.OpWriteBlock, writeReq(41, 1001, []*hdfs.DatanodeInfoProto{dead}, datatransfer.DefaultChecksum())); err != nil {
		t.Fatal(err)
	}
	var resp hdfs.BlockOpResponseProto
	if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.GetStatus() != hdfs.Status_ERROR || resp.GetFirstBadLink() != xferAddrOf(dead) {
		t.Fatalf("response %v, firstBadLink %q", resp.GetStatus(), resp.GetFirstBadLink())
	}
}

func TestTransferBlockOp(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	src, dst := startDN(t, nn), startDN(t, nn)
	data := randomData(10_000, 13)
	dial(t, src).writeBlock(51, 1001, nil, data, []int{len(data)}, nil)
	c := dial(t, src)
	req := &hdfs.OpTransferBlockProto{
		Header: &hdfs.ClientOperationHeaderProto{BaseHeader: &hdfs.BaseHeaderProto{Block: ext(51, 1001, 10_000), Token: emptyToken()},
			ClientName: proto.String("DFSClient_test")},
		Targets: []*hdfs.DatanodeInfoProto{info(dst)},
	}
	if err := datatransfer.WriteOp(c.conn, datatransfer.OpTransferBlock, req); err != nil {
		t.Fatal(err)
	}
	var resp hdfs.BlockOpResponseProto
	if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.GetStatus() != hdfs.Status_SUCCESS {
		t.Fatalf("TRANSFER_BLOCK: %v %s", resp.GetStatus(), resp.GetMessage())
	}
	bp, _ := dst.BlockPool(testPool)
	r, ok := bp.Get(51)
	if !ok || r.NumBytes != 10_000 || !bytes.Equal(readFile(t, r.BlockPath), data) {
		t.Fatalf("target replica %+v %v", r, ok)
	}
	nn.waitIBR(t, "RECEIVED 51 on the target", func(e ibrSeen) bool {
		return e.block == 51 && e.uuid == dst.DatanodeUUID() && e.status == dnpb.ReceivedDeletedBlockInfoProto_RECEIVED
	})
}

func TestReadErrorsAndNoChecksums(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dn := startDN(t, nn)
	data := randomData(5000, 14)
	dial(t, dn).writeBlock(61, 1001, nil, data, []int{len(data)}, nil)
	read := func(id, gs, off, n int64, sums bool) (*hdfs.BlockOpResponseProto, *client) {
		c := dial(t, dn)
		req := &hdfs.OpReadBlockProto{Header: &hdfs.ClientOperationHeaderProto{
			BaseHeader: &hdfs.BaseHeaderProto{Block: ext(id, gs, 0), Token: emptyToken()}, ClientName: proto.String("c")},
			Offset: proto.Uint64(uint64(off)), Len: proto.Uint64(uint64(n)), SendChecksums: proto.Bool(sums)}
		if err := datatransfer.WriteOp(c.conn, datatransfer.OpReadBlock, req); err != nil {
			t.Fatal(err)
		}
		var resp hdfs.BlockOpResponseProto
		if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil {
			t.Fatal(err)
		}
		return &resp, c
	}
	tests := []struct {
		name           string
		id, gs, off, n int64
		want           hdfs.Status
	}{
		{"unknown block", 62, 1001, 0, 10, hdfs.Status_ERROR_INVALID},
		{"newer stamp asked", 61, 1002, 0, 10, hdfs.Status_ERROR},
		{"offset past the end", 61, 1001, 5001, 1, hdfs.Status_ERROR},
	}
	for _, tc := range tests {
		if resp, _ := read(tc.id, tc.gs, tc.off, tc.n, true); resp.GetStatus() != tc.want || resp.GetMessage() == "" {
			t.Errorf("%s: %v %q, want %v", tc.name, resp.GetStatus(), resp.GetMessage(), tc.want)
		}
	}
	resp, c := read(61, 1001, 600, 3000, false)
	if resp.GetStatus() != hdfs.Status_SUCCESS || resp.GetReadOpChecksumInfo().GetChecksum().GetType() != hdfs.ChecksumTypeProto_CHECKSUM_NULL {
		t.Fatalf("read without checksums: %v", resp)
	}
	pr := datatransfer.NewPacketReader(c.br, 0)
	var got []byte
	for {
		p, err := pr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Checksums) != 0 {
			t.Fatalf("packet with %d checksum bytes", len(p.Checksums))
		}
		if p.Header.LastPacketInBlock {
			break
		}
		got = append(got, p.Data...)
	}
	if !bytes.Equal(got, data[512:4096]) {
		t.Fatalf("read %d bytes without checksums, want data[512:4096]", len(got))
	}
}

// TestReadWhileWriting reads an RBW replica: readers see the acknowledged
// bytes, and getReplicaVisibleLength says how many.
func TestReadWhileWriting(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dn := startDN(t, nn)
	c := dial(t, dn)
	ck := datatransfer.DefaultChecksum()
	if err := datatransfer.WriteOp(c.conn, datatransfer.OpWriteBlock, writeReq(71, 1001, nil, ck)); err != nil {
		t.Fatal(err)
	}
	var resp hdfs.BlockOpResponseProto
	if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil || resp.GetStatus() != hdfs.Status_SUCCESS {
		t.Fatalf("%v %v", err, resp.GetStatus())
	}
	data := randomData(1500, 15)
	pw := datatransfer.NewPacketWriter(c.conn)
	for i, p := range [][2]int{{0, 700}, {700, 1024}, {1024, 1500}} { // hflush-like unaligned packets
		if err := pw.WritePacket(datatransfer.PacketHeader{OffsetInBlock: int64(p[0]), Seqno: int64(i + 1)}, ck.Compute(nil, data[p[0]:p[1]]), data[p[0]:p[1]]); err != nil {
			t.Fatal(err)
		}
		var a datatransfer.PipelineAck
		if err := datatransfer.ReadAck(c.br, 1<<20, &a); err != nil || !a.Success() {
			t.Fatalf("ack %+v %v", a, err)
		}
		n := int64(p[1])
		if got := dial(t, dn).readBlock(71, 1001, 0, n); !bytes.Equal(got, data[:n]) {
			t.Fatalf("after %d bytes: read back wrong", n)
		}
		if v, err := dn.visibleLength(ext(71, 1001, 0)); err != nil || v != n {
			t.Fatalf("visible length %d %v, want %d", v, err, n)
		}
	}
}

func TestRecoveryStagesRefused(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dn := startDN(t, nn)
	for _, st := range []hdfs.OpWriteBlockProto_BlockConstructionStage{
		hdfs.OpWriteBlockProto_PIPELINE_SETUP_STREAMING_RECOVERY,
		hdfs.OpWriteBlockProto_PIPELINE_SETUP_APPEND_RECOVERY,
		hdfs.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY,
		hdfs.OpWriteBlockProto_TRANSFER_RBW,
	} {
		c := dial(t, dn)
		req := writeReq(81, 1001, nil, datatransfer.DefaultChecksum())
		req.Stage = st.Enum()
		if err := datatransfer.WriteOp(c.conn, datatransfer.OpWriteBlock, req); err != nil {
			t.Fatal(err)
		}
		var resp hdfs.BlockOpResponseProto
		if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil {
			t.Fatalf("%v: %v", st, err)
		}
		if resp.GetStatus() != hdfs.Status_ERROR_UNSUPPORTED || resp.GetMessage() == "" {
			t.Fatalf("%v: %v %q", st, resp.GetStatus(), resp.GetMessage())
		}
	}
}

// TestFailedSetupLeavesNoReplica: a pipeline whose downstream cannot be
// reached leaves no replica behind, so the block can be written again.
func TestFailedSetupLeavesNoReplica(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dn := startDN(t, nn)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := tcpPort(l.Addr())
	_ = l.Close()
	dead := &hdfs.DatanodeInfoProto{Id: &hdfs.DatanodeIDProto{IpAddr: proto.String("127.0.0.1"), HostName: proto.String("dead"),
		DatanodeUuid: proto.String("dead"), XferPort: proto.Uint32(port), InfoPort: proto.Uint32(0), IpcPort: proto.Uint32(0)}}
	c := dial(t, dn)
	if err := datatransfer.WriteOp(c.conn, datatransfer.OpWriteBlock, writeReq(91, 1001, []*hdfs.DatanodeInfoProto{dead}, datatransfer.DefaultChecksum())); err != nil {
		t.Fatal(err)
	}
	var resp hdfs.BlockOpResponseProto
	if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil || resp.GetStatus() != hdfs.Status_ERROR {
		t.Fatalf("%v %v", err, resp.GetStatus())
	}
	// The connection closes once the DataNode gave up on the write.
	if _, err := c.br.ReadByte(); err == nil {
		t.Fatal("connection still open")
	}
	bp, _ := dn.BlockPool(testPool)
	if r, ok := bp.Get(91); ok {
		t.Fatalf("replica left behind: %+v", r)
	}
	data := randomData(1000, 17)
	dial(t, dn).writeBlock(91, 1001, nil, data, []int{len(data)}, nil)
}

// TestReplaceBlock moves a replica as the balancer does: REPLACE_BLOCK to the
// new holder, which copies it from the proxy with COPY_BLOCK.
func TestReplaceBlock(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	proxy, target := startDN(t, nn), startDN(t, nn)
	data := randomData(150_000, 19)
	dial(t, proxy).writeBlock(111, 1001, nil, data, []int{len(data)}, nil)
	replace := func() *hdfs.BlockOpResponseProto {
		c := dial(t, target)
		req := &hdfs.OpReplaceBlockProto{Header: &hdfs.BaseHeaderProto{Block: ext(111, 1001, int64(len(data))), Token: emptyToken()},
			DelHint: proto.String("old-node-uuid"), Source: info(proxy)}
		if err := datatransfer.WriteOp(c.conn, datatransfer.OpReplaceBlock, req); err != nil {
			t.Fatal(err)
		}
		var resp hdfs.BlockOpResponseProto
		if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil {
			t.Fatal(err)
		}
		return &resp
	}
	if resp := replace(); resp.GetStatus() != hdfs.Status_SUCCESS {
		t.Fatalf("REPLACE_BLOCK: %v %s", resp.GetStatus(), resp.GetMessage())
	}
	e := nn.waitIBR(t, "RECEIVED 111 on the target", func(e ibrSeen) bool {
		return e.block == 111 && e.uuid == target.DatanodeUUID() && e.status == dnpb.ReceivedDeletedBlockInfoProto_RECEIVED
	})
	if e.delHint != "old-node-uuid" || e.len != int64(len(data)) {
		t.Fatalf("report %+v", e)
	}
	bp, _ := target.BlockPool(testPool)
	r, ok := bp.Get(111)
	if !ok || r.State != storage.Finalized || !bytes.Equal(readFile(t, r.BlockPath), data) {
		t.Fatalf("moved replica %+v %v", r, ok)
	}
	if resp := replace(); resp.GetStatus() == hdfs.Status_SUCCESS || resp.GetMessage() == "" {
		t.Fatalf("second REPLACE_BLOCK: %v %q, want an error", resp.GetStatus(), resp.GetMessage())
	}
}

// TestFailedAppendSetupKeepsData: an append whose downstream cannot be
// reached leaves the replica's bytes in place.
func TestFailedAppendSetupKeepsData(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dn := startDN(t, nn)
	data := randomData(3000, 21)
	dial(t, dn).writeBlock(121, 1001, nil, data, []int{len(data)}, nil)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := tcpPort(l.Addr())
	_ = l.Close()
	dead := &hdfs.DatanodeInfoProto{Id: &hdfs.DatanodeIDProto{IpAddr: proto.String("127.0.0.1"), HostName: proto.String("dead"),
		DatanodeUuid: proto.String("dead"), XferPort: proto.Uint32(port), InfoPort: proto.Uint32(0), IpcPort: proto.Uint32(0)}}
	req := writeReq(121, 1001, []*hdfs.DatanodeInfoProto{dead}, datatransfer.DefaultChecksum())
	req.Stage = hdfs.OpWriteBlockProto_PIPELINE_SETUP_APPEND.Enum()
	req.MinBytesRcvd = proto.Uint64(3000)
	req.MaxBytesRcvd = proto.Uint64(3000)
	req.LatestGenerationStamp = proto.Uint64(1002)
	c := dial(t, dn)
	if err := datatransfer.WriteOp(c.conn, datatransfer.OpWriteBlock, req); err != nil {
		t.Fatal(err)
	}
	var resp hdfs.BlockOpResponseProto
	if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil || resp.GetStatus() != hdfs.Status_ERROR {
		t.Fatalf("%v %v", err, resp.GetStatus())
	}
	if _, err := c.br.ReadByte(); err == nil {
		t.Fatal("connection still open")
	}
	bp, _ := dn.BlockPool(testPool)
	r, ok := bp.Get(121)
	if !ok || r.NumBytes != 3000 || !bytes.Equal(readFile(t, r.BlockPath), data) {
		t.Fatalf("replica after a failed append %+v %v", r, ok)
	}
}
