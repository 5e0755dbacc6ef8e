package datanode

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/datanode/throttle"
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
	c.startWrite(writeReq(31, 1001, []*hdfs.DatanodeInfoProto{info(dns[1])}, ck))
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
	resp := c.sendWriteOp(writeReq(41, 1001, []*hdfs.DatanodeInfoProto{dead}, datatransfer.DefaultChecksum()))
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
	c.startWrite(writeReq(71, 1001, nil, ck))
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

// startPartial sets up a pipeline for block id at c's DataNode, writes data
// in packets of 1000 bytes, waits for their acks and drops the connection
// (the writer's first node sees its upstream die).
func (c *client) startPartial(id, gs int64, targets []*hdfs.DatanodeInfoProto, data []byte) {
	t := c.t
	t.Helper()
	ck := datatransfer.DefaultChecksum()
	c.startWrite(writeReq(id, gs, targets, ck))
	pw := datatransfer.NewPacketWriter(c.conn)
	n := 0
	for off := 0; off < len(data); off += 1000 {
		chunk := data[off:min(off+1000, len(data))]
		n++
		if err := pw.WritePacket(datatransfer.PacketHeader{OffsetInBlock: int64(off), Seqno: int64(n)}, ck.Compute(nil, chunk), chunk); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		var a datatransfer.PipelineAck
		if err := datatransfer.ReadAck(c.br, 1<<20, &a); err != nil || !a.Success() {
			t.Fatalf("ack %d: %v %+v", i, err, a)
		}
	}
	_ = c.conn.Close()
}

// TestRecoveryDropsSilentUpstream: the writer of a pipeline stops sending
// without closing its connection (a partitioned client or upstream node);
// a recovery of the block takes the replica over and the DataNode drops the
// old connection at once instead of waiting 60 s for it to time out.
func TestRecoveryDropsSilentUpstream(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dn := startDN(t, nn)
	old := dial(t, dn)
	ck := datatransfer.DefaultChecksum()
	old.startWrite(writeReq(81, 1001, nil, ck))
	data := randomData(3000, 81)
	if err := datatransfer.NewPacketWriter(old.conn).WritePacket(datatransfer.PacketHeader{OffsetInBlock: 0, Seqno: 1},
		ck.Compute(nil, data[:2000]), data[:2000]); err != nil {
		t.Fatal(err)
	}
	var a datatransfer.PipelineAck
	if err := datatransfer.ReadAck(old.br, 1<<20, &a); err != nil || !a.Success() {
		t.Fatalf("ack: %v %+v", err, a)
	}
	// The old writer goes silent; the recovery continues the block.
	req := recoveryReq(81, 1001, 1002, 2000, 2000, nil, hdfs.OpWriteBlockProto_PIPELINE_SETUP_STREAMING_RECOVERY)
	for _, a := range dial(t, dn).write(req, 2000, data[2000:], []int{1000}, nil) {
		if !a.Success() {
			t.Fatalf("recovery ack %+v", a)
		}
	}
	_ = old.conn.SetReadDeadline(time.Now().Add(waitFor))
	_, err := old.br.ReadByte()
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the old pipeline's connection is still open after the takeover: %v", err)
	}
	if got := dial(t, dn).readBlock(81, 1002, 0, 3000); !bytes.Equal(got, data) {
		t.Fatal("recovered block reads back wrong")
	}
}

func recoveryReq(id, gs, newGS, minBytes, maxBytes int64, targets []*hdfs.DatanodeInfoProto, st hdfs.OpWriteBlockProto_BlockConstructionStage) *hdfs.OpWriteBlockProto {
	req := writeReq(id, gs, targets, datatransfer.DefaultChecksum())
	req.Header.BaseHeader.Block = ext(id, gs, minBytes)
	req.Stage = st.Enum()
	req.MinBytesRcvd = proto.Uint64(uint64(minBytes))
	req.MaxBytesRcvd = proto.Uint64(uint64(maxBytes))
	req.LatestGenerationStamp = proto.Uint64(uint64(newGS))
	return req
}

// TestStreamingRecoveryWithTransfer: the first pipeline (dn0 → dn1) loses
// its writer mid-block; dn1 copies its RBW replica to dn2 (TRANSFER_BLOCK,
// stage TRANSFER_RBW), and the rebuilt pipeline dn0 → dn2 continues the
// block under a new stamp from the acknowledged length.
func TestStreamingRecoveryWithTransfer(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dns := []*DataNode{startDN(t, nn), startDN(t, nn), startDN(t, nn)}
	data := randomData(9000, 30)
	dial(t, dns[0]).startPartial(61, 1001, []*hdfs.DatanodeInfoProto{info(dns[1])}, data[:4500])

	c := dial(t, dns[1])
	treq := &hdfs.OpTransferBlockProto{
		Header: &hdfs.ClientOperationHeaderProto{BaseHeader: &hdfs.BaseHeaderProto{Block: ext(61, 1001, 4500), Token: emptyToken()},
			ClientName: proto.String("DFSClient_test")},
		Targets: []*hdfs.DatanodeInfoProto{info(dns[2])},
	}
	if err := datatransfer.WriteOp(c.conn, datatransfer.OpTransferBlock, treq); err != nil {
		t.Fatal(err)
	}
	var resp hdfs.BlockOpResponseProto
	if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil || resp.GetStatus() != hdfs.Status_SUCCESS {
		t.Fatalf("TRANSFER_BLOCK: %v %v %s", err, resp.GetStatus(), resp.GetMessage())
	}
	bp2, _ := dns[2].BlockPool(testPool)
	if r, ok := bp2.Get(61); !ok || r.State != storage.RBW || r.NumBytes != 4500 || r.BytesAcked != 4500 {
		t.Fatalf("transferred replica %+v %v", r, ok)
	}

	req := recoveryReq(61, 1001, 1002, 4500, 4500, []*hdfs.DatanodeInfoProto{info(dns[2])}, hdfs.OpWriteBlockProto_PIPELINE_SETUP_STREAMING_RECOVERY)
	for _, a := range dial(t, dns[0]).write(req, 4500, data[4500:], []int{4500}, nil) {
		if !a.Success() || len(a.Replies) != 2 {
			t.Fatalf("ack %+v", a)
		}
	}
	for _, i := range []int{0, 2} {
		bp, _ := dns[i].BlockPool(testPool)
		if r, ok := bp.Get(61); !ok || r.State != storage.Finalized || r.GenStamp != 1002 || r.NumBytes != 9000 {
			t.Fatalf("datanode %d: %+v", i, r)
		}
		if got := dial(t, dns[i]).readBlock(61, 1002, 0, 9000); !bytes.Equal(got, data) {
			t.Fatalf("datanode %d: block reads back wrong", i)
		}
	}
	// Both reports are sent before the last ack.
	reported := map[string]bool{}
	for _, e := range nn.ibrsNow() {
		if e.block == 61 && e.gs == 1002 && e.status == dnpb.ReceivedDeletedBlockInfoProto_RECEIVED {
			reported[e.uuid] = true
		}
	}
	if !reported[dns[0].DatanodeUUID()] || !reported[dns[2].DatanodeUUID()] || len(reported) != 2 {
		t.Fatalf("RECEIVED at the new stamp from %v", reported)
	}
	for _, e := range nn.ibrsNow() {
		if e.block == 61 && e.gs == 1001 && e.status == dnpb.ReceivedDeletedBlockInfoProto_RECEIVED {
			t.Fatalf("the RBW copy was reported received: %+v", e)
		}
	}
}

// TestCloseRecovery: the last packet of a block was not acknowledged; the
// rebuilt pipeline finalizes the replicas during setup and reports them
// before answering, and acknowledges a resent last packet.
func TestCloseRecovery(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dns := []*DataNode{startDN(t, nn), startDN(t, nn)}
	data := randomData(3500, 31)
	dial(t, dns[0]).startPartial(62, 1001, []*hdfs.DatanodeInfoProto{info(dns[1])}, data)

	c := dial(t, dns[0])
	req := recoveryReq(62, 1001, 1005, 3500, 3500, []*hdfs.DatanodeInfoProto{info(dns[1])}, hdfs.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY)
	c.startWrite(req)
	reported := map[string]bool{}
	for _, e := range nn.ibrsNow() {
		if e.block == 62 && e.gs == 1005 && e.status == dnpb.ReceivedDeletedBlockInfoProto_RECEIVED {
			reported[e.uuid] = true
		}
	}
	for i, dn := range dns {
		if !reported[dn.DatanodeUUID()] {
			t.Fatalf("datanode %d did not report the block before the setup answer", i)
		}
		bp, _ := dn.BlockPool(testPool)
		if r, _ := bp.Get(62); r.State != storage.Finalized || r.GenStamp != 1005 || r.NumBytes != 3500 {
			t.Fatalf("datanode %d: %+v", i, r)
		}
	}
	pw := datatransfer.NewPacketWriter(c.conn)
	if err := pw.WritePacket(datatransfer.PacketHeader{OffsetInBlock: 3500, Seqno: 5, LastPacketInBlock: true}, nil, nil); err != nil {
		t.Fatal(err)
	}
	var a datatransfer.PipelineAck
	if err := datatransfer.ReadAck(c.br, 1<<20, &a); err != nil || !a.Success() || a.Seqno != 5 || len(a.Replies) != 2 {
		t.Fatalf("last ack %v %+v", err, a)
	}
	if got := dial(t, dns[1]).readBlock(62, 1005, 0, 3500); !bytes.Equal(got, data) {
		t.Fatal("block reads back wrong")
	}
}

// TestRecoveryRefused: recovery stages that do not fit the replica are
// answered with an error and leave it as it was.
func TestRecoveryRefused(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dn := startDN(t, nn)
	data := randomData(2000, 32)
	dial(t, dn).startPartial(63, 1003, nil, data)
	stream := hdfs.OpWriteBlockProto_PIPELINE_SETUP_STREAMING_RECOVERY
	for _, tc := range []struct {
		name string
		req  *hdfs.OpWriteBlockProto
	}{
		{"replica older than the client's stamp", recoveryReq(63, 1004, 1005, 2000, 2000, nil, stream)},
		{"new stamp older than the replica's", recoveryReq(63, 1001, 1002, 2000, 2000, nil, stream)},
		{"more acknowledged bytes expected", recoveryReq(63, 1003, 1005, 2001, 3000, nil, stream)},
		{"no new stamp", recoveryReq(63, 1003, 0, 2000, 2000, nil, stream)},
		{"close with another length", recoveryReq(63, 1003, 1005, 1999, 1999, nil, hdfs.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY)},
		{"unknown block", recoveryReq(64, 1003, 1005, 0, 0, nil, stream)},
	} {
		c := dial(t, dn)
		resp := c.sendWriteOp(tc.req)
		if resp.GetStatus() != hdfs.Status_ERROR || resp.GetMessage() == "" {
			t.Fatalf("%s: %v %q", tc.name, resp.GetStatus(), resp.GetMessage())
		}
		bp, _ := dn.BlockPool(testPool)
		if r, _ := bp.Get(63); r.State != storage.RBW || r.GenStamp != 1003 || r.NumBytes != 2000 {
			t.Fatalf("%s: replica now %+v", tc.name, r)
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
	if resp := c.sendWriteOp(writeReq(91, 1001, []*hdfs.DatanodeInfoProto{dead}, datatransfer.DefaultChecksum())); resp.GetStatus() != hdfs.Status_ERROR {
		t.Fatalf("response %v", resp.GetStatus())
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

// TestReplaceBlockQuotaAndProgress: a node with every balancer move slot
// taken refuses one more (the proxy's COPY_BLOCK and the target's
// REPLACE_BLOCK alike), and a slow, throttled move answers IN_PROGRESS
// while it copies, then SUCCESS.
func TestReplaceBlockQuotaAndProgress(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	proxy, target := startDN(t, nn), startDN(t, nn)
	data := randomData(150_000, 23)
	dial(t, proxy).writeBlock(131, 1001, nil, data, []int{len(data)}, nil)
	replace := func() []*hdfs.BlockOpResponseProto {
		c := dial(t, target)
		req := &hdfs.OpReplaceBlockProto{Header: &hdfs.BaseHeaderProto{Block: ext(131, 1001, int64(len(data))), Token: emptyToken()},
			DelHint: proto.String("old-node-uuid"), Source: info(proxy)}
		if err := datatransfer.WriteOp(c.conn, datatransfer.OpReplaceBlock, req); err != nil {
			t.Fatal(err)
		}
		var out []*hdfs.BlockOpResponseProto
		for {
			var resp hdfs.BlockOpResponseProto
			if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil {
				t.Fatal(err)
			}
			out = append(out, &resp)
			if resp.GetStatus() != hdfs.Status_IN_PROGRESS {
				return out
			}
		}
	}
	for _, busy := range []*DataNode{target, proxy} {
		busy.moves.Store(busy.maxMoves)
		got := replace()
		last := got[len(got)-1]
		if last.GetStatus() != hdfs.Status_ERROR || !strings.Contains(last.GetMessage(), "threads quota is exceeded") {
			t.Fatalf("move with every slot taken: %v %q", last.GetStatus(), last.GetMessage())
		}
		busy.moves.Store(0)
	}
	old := replaceKeepalive
	replaceKeepalive = 20 * time.Millisecond
	defer func() { replaceKeepalive = old }()
	// 200 KB/s on both ends: the 150 KB block takes about half a second.
	for _, d := range []*DataNode{proxy, target} {
		d.balance = throttle.New(d.scanClock, 200_000) // no reserve left from the default rate
	}
	got := replace()
	last := got[len(got)-1]
	if last.GetStatus() != hdfs.Status_SUCCESS || len(got) < 2 {
		t.Fatalf("throttled move answered %d times, last %v %q; want IN_PROGRESS then SUCCESS", len(got), last.GetStatus(), last.GetMessage())
	}
	// The proxy's COPY_BLOCK ends just after the target's answer.
	for deadline := time.Now().Add(5 * time.Second); target.moves.Load()+proxy.moves.Load() != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d move slots still taken after the move", target.moves.Load()+proxy.moves.Load())
		}
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
	if resp := c.sendWriteOp(req); resp.GetStatus() != hdfs.Status_ERROR {
		t.Fatalf("response %v", resp.GetStatus())
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

// TestNearlyFullVolumeTakesSmallCopies: a volume with less room than a
// whole block refuses new client replicas (which reserve a block) but takes
// the copy of a small finished replica, which reserves only its length.
func TestNearlyFullVolumeTakesSmallCopies(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	src := startDN(t, nn)
	cfg := testConfig(nn.addr, t.TempDir())
	small := storage.VolumeTesting{StatFS: func(string) (storage.DiskStat, error) {
		return storage.DiskStat{Total: 1 << 30, Available: 64 << 20}, nil
	}}
	dst, err := Start(context.Background(), cfg, Deps{Logger: testLogger(t), VolumeTesting: small})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dst.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := dst.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	c := dial(t, dst)
	if resp := c.sendWriteOp(writeReq(91, 1001, nil, datatransfer.DefaultChecksum())); resp.GetStatus() == hdfs.Status_SUCCESS {
		t.Fatalf("a client replica on a volume with 64 MiB left: %v", resp.GetStatus())
	}

	data := randomData(10_000, 92)
	dial(t, src).writeBlock(92, 1001, nil, data, []int{len(data)}, nil)
	tc := dial(t, src)
	req := &hdfs.OpTransferBlockProto{
		Header: &hdfs.ClientOperationHeaderProto{BaseHeader: &hdfs.BaseHeaderProto{Block: ext(92, 1001, 10_000), Token: emptyToken()},
			ClientName: proto.String("DFSClient_test")},
		Targets: []*hdfs.DatanodeInfoProto{info(dst)},
	}
	if err := datatransfer.WriteOp(tc.conn, datatransfer.OpTransferBlock, req); err != nil {
		t.Fatal(err)
	}
	var resp hdfs.BlockOpResponseProto
	if err := datatransfer.ReadDelimited(tc.br, 1<<20, &resp); err != nil || resp.GetStatus() != hdfs.Status_SUCCESS {
		t.Fatalf("copy of a 10 kB replica to the nearly full volume: %v %v %s", err, resp.GetStatus(), resp.GetMessage())
	}
	bp, _ := dst.BlockPool(testPool)
	if r, ok := bp.Get(92); !ok || r.NumBytes != 10_000 {
		t.Fatalf("copied replica %+v %v", r, ok)
	}
}
