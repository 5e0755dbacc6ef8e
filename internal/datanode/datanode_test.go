package datanode

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	hstorage "github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
	"google.golang.org/protobuf/proto"
)

func TestStartupRegistersAndReports(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	d1, d2 := t.TempDir(), t.TempDir()
	cfg := testConfig(nn.addr, d1, d2)
	dn, err := Start(context.Background(), cfg, Deps{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := dn.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	nn.mu.Lock()
	versions, regs := nn.mu.versions, append([]*dnpb.DatanodeRegistrationProto(nil), nn.mu.regs...)
	nn.mu.Unlock()
	if versions < 1 || len(regs) != 1 {
		t.Fatalf("versionRequest %d, registrations %d", versions, len(regs))
	}
	id := regs[0].GetDatanodeID()
	if id.GetDatanodeUuid() != dn.DatanodeUUID() || id.GetXferPort() != tcpPort(dn.XferAddr()) || id.GetIpcPort() != tcpPort(dn.IPCAddr()) || id.GetIpAddr() != "127.0.0.1" {
		t.Fatalf("registration %v", id)
	}
	if si := regs[0].GetStorageInfo(); si.GetClusterID() != "CID-test" || int32(si.GetLayoutVersion()) != hstorage.DataNodeLayoutVersion || si.GetNamespceID() != 4711 {
		t.Fatalf("storage info %v", si)
	}
	br := <-nn.reports
	if br.GetBlockPoolId() != testPool || len(br.GetReports()) != 2 {
		t.Fatalf("block report %v", br)
	}
	sids := dn.StorageIDs()
	for i, r := range br.GetReports() {
		if r.GetStorage().GetStorageUuid() != sids[i] || sids[i] == "" {
			t.Fatalf("report %d for storage %s, want %s", i, r.GetStorage().GetStorageUuid(), sids[i])
		}
		if reps, ok := DecodeBlockReport(r.GetBlocks()); !ok || len(reps) != 0 {
			t.Fatalf("empty report decodes to %v %v", reps, ok)
		}
	}
	for range 2 {
		hb := <-nn.heartbeats
		if len(hb.GetReports()) != 2 || hb.GetReports()[0].GetCapacity() == 0 || hb.GetReports()[0].GetStorageUuid() != sids[0] {
			t.Fatalf("heartbeat %v", hb)
		}
	}
	for _, d := range []string{d1, d2} {
		v, err := hstorage.ReadVersion(vfs.Default, filepath.Join(d, "current", "VERSION"))
		if err != nil {
			t.Fatal(err)
		}
		if v.ClusterID != "CID-test" || v.DatanodeUUID != dn.DatanodeUUID() || v.LayoutVersion != -57 {
			t.Fatalf("VERSION of %s: %+v", d, v)
		}
	}
	uuid := dn.DatanodeUUID()
	if err := dn.Close(); err != nil {
		t.Fatal(err)
	}
	// A restart keeps the identity.
	dn, err = Start(context.Background(), cfg, Deps{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer dn.Close()
	if dn.DatanodeUUID() != uuid || dn.StorageIDs()[0] != sids[0] {
		t.Fatalf("restart changed identity: %s %v", dn.DatanodeUUID(), dn.StorageIDs())
	}
}

func TestStartBeforeNameNode(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	cfg := testConfig(addr, t.TempDir())
	h := newSignalHandler("namenode not ready")
	dn, err := Start(context.Background(), cfg, Deps{Logger: slog.New(h)})
	if err != nil {
		t.Fatal(err)
	}
	defer dn.Close()
	select { // the first handshake attempt failed
	case <-h.ch:
	case <-time.After(waitFor):
		t.Fatal("no failed handshake logged")
	}
	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	startFakeNN(t, l, "CID-late")
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := dn.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestVolumeOfAnotherClusterRefused(t *testing.T) {
	dir := t.TempDir()
	nnA := newFakeNN(t, "CID-A")
	dn := startDN(t, nnA, func(c *Config) { c.DataDirs = []string{dir} })
	_ = dn.Close()

	nnB := newFakeNN(t, "CID-B")
	dn2, err := Start(context.Background(), testConfig(nnB.addr, dir), Deps{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer dn2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	err = dn2.WaitReady(ctx)
	if !errors.Is(err, ErrClusterMismatch) {
		t.Fatalf("WaitReady = %v, want ErrClusterMismatch", err)
	}
	for _, s := range []string{dir, "CID-A", "CID-B"} {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("error %q does not name %s", err, s)
		}
	}
	<-dn2.Done()
}

func TestRegistrationRefusedStops(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	nn.mu.Lock()
	nn.mu.refuse = true
	nn.mu.Unlock()
	dn, err := Start(context.Background(), testConfig(nn.addr, t.TempDir()), Deps{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer dn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := dn.WaitReady(ctx); err == nil || !strings.Contains(err.Error(), "DisallowedDatanodeException") && !strings.Contains(err.Error(), "denied") {
		t.Fatalf("WaitReady = %v, want the refusal", err)
	}
	<-dn.Done()
}

func TestSecondDataNodeOnSameDirRefused(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dir := t.TempDir()
	startDN(t, nn, func(c *Config) { c.DataDirs = []string{dir} })
	_, err := Start(context.Background(), testConfig(nn.addr, dir), Deps{Logger: testLogger(t)})
	if !errors.Is(err, hstorage.ErrLocked) {
		t.Fatalf("second Start = %v, want ErrLocked", err)
	}
}

func TestPipelineWriteReadChecksum(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dns := []*DataNode{startDN(t, nn), startDN(t, nn), startDN(t, nn)}
	data := randomData(300_000, 1)
	segments := []int{100, 700, 1, 511, 70_000, 3, 200_000, 100_000}
	const id, gs = 1073741825, 1001
	c := dial(t, dns[0])
	acks := c.writeBlock(id, gs, []*hdfs.DatanodeInfoProto{info(dns[1]), info(dns[2])}, data, segments, nil)
	for i, a := range acks {
		if a.Seqno != int64(i+1) || len(a.Replies) != 3 || !a.Success() {
			t.Fatalf("ack %d: %+v", i, a)
		}
	}
	// Every DataNode reported RECEIVED before the client got the last ack.
	received := map[string]bool{}
	for _, e := range nn.ibrsNow() {
		if e.block == id && e.status == dnpb.ReceivedDeletedBlockInfoProto_RECEIVED && e.len == int64(len(data)) {
			received[e.uuid] = true
		}
	}
	for i, dn := range dns {
		if !received[dn.DatanodeUUID()] {
			t.Fatalf("datanode %d had not reported RECEIVED before the last ack; reports %+v", i, nn.ibrsNow())
		}
	}
	ck := datatransfer.DefaultChecksum()
	hdrBytes := storage.EncodeMetaHeader(ck)
	wantMeta := append(hdrBytes[:], ck.Compute(nil, data)...)
	for i, dn := range dns {
		bp, err := dn.BlockPool(testPool)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := bp.Get(id)
		if !ok || r.State != storage.Finalized || r.NumBytes != int64(len(data)) || r.GenStamp != gs {
			t.Fatalf("datanode %d replica %+v %v", i, r, ok)
		}
		if !bytes.Equal(readFile(t, r.BlockPath), data) {
			t.Fatalf("datanode %d: block file differs", i)
		}
		if !bytes.Equal(readFile(t, r.MetaPath), wantMeta) {
			t.Fatalf("datanode %d: meta file differs", i)
		}
	}
	for i, dn := range dns {
		for _, rg := range [][2]int64{{0, int64(len(data))}, {1, 1}, {511, 2}, {512, 70_000}, {65_536 * 2, 1000}, {int64(len(data)) - 7, 7}, {int64(len(data)), 0}} {
			got := dial(t, dn).readBlock(id, gs, rg[0], rg[1])
			if !bytes.Equal(got, data[rg[0]:rg[0]+rg[1]]) {
				t.Fatalf("datanode %d read %v: wrong bytes", i, rg)
			}
		}
		cr := dial(t, dn).blockChecksum(id, gs)
		want := datatransfer.BlockChecksumMD5(ck.Compute(nil, data))
		if !bytes.Equal(cr.GetBlockChecksum(), want[:]) || cr.GetBytesPerCrc() != 512 || cr.GetCrcPerBlock() != uint64(ck.NumChunks(len(data))) {
			t.Fatalf("datanode %d checksum %v", i, cr)
		}
	}
	// Several reads on one connection (keepalive), with a CHECKSUM_OK in between.
	c2 := dial(t, dns[1])
	c2.readBlock(id, gs, 0, 10)
	if err := datatransfer.WriteDelimited(c2.conn, &hdfs.ClientReadStatusProto{Status: hdfs.Status_CHECKSUM_OK.Enum()}); err != nil {
		t.Fatal(err)
	}
	if got := c2.readBlock(id, gs, 1000, 10); !bytes.Equal(got, data[1000:1010]) {
		t.Fatal("second read on the connection: wrong bytes")
	}
}

func TestWriteBadChecksumGetsErrorChecksum(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dn := startDN(t, nn)
	c := dial(t, dn)
	ck := datatransfer.DefaultChecksum()
	c.startWrite(writeReq(7, 1001, nil, ck))
	// Four packets in one write, so that the DataNode takes them as one
	// batch; the third is corrupt. The first two are stored and acked, the
	// third gets ERROR_CHECKSUM, the fourth nothing.
	data := randomData(4*2048, 2)
	var burst bytes.Buffer
	pw := datatransfer.NewPacketWriter(&burst)
	for i := range 4 {
		chunk := data[i*2048 : (i+1)*2048]
		sums := ck.Compute(nil, chunk)
		if i == 2 {
			sums[5] ^= 0xFF
		}
		if err := pw.WritePacket(datatransfer.PacketHeader{Seqno: int64(i + 1), OffsetInBlock: int64(i * 2048)}, sums, chunk); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.conn.Write(burst.Bytes()); err != nil {
		t.Fatal(err)
	}
	want := []hdfs.Status{hdfs.Status_SUCCESS, hdfs.Status_SUCCESS, hdfs.Status_ERROR_CHECKSUM}
	for i, st := range want {
		var a datatransfer.PipelineAck
		if err := datatransfer.ReadAck(c.br, 1<<20, &a); err != nil {
			t.Fatalf("ack %d: %v", i+1, err)
		}
		if a.Seqno != int64(i+1) || len(a.Replies) != 1 || a.Replies[0] != st {
			t.Fatalf("ack %+v, want seqno %d %v", a, i+1, st)
		}
	}
	var a datatransfer.PipelineAck
	if err := datatransfer.ReadAck(c.br, 1<<20, &a); err == nil {
		t.Fatalf("ack %+v after the corrupt packet", a)
	}
	bp, err := dn.BlockPool(testPool)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := bp.Get(7); !ok || r.NumBytes != 2*2048 {
		t.Fatalf("replica %+v (%v), want the two good packets' 4096 bytes", r, ok)
	}
}

func TestXceiverLimit(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dn := startDN(t, nn, func(c *Config) { c.MaxTransferThreads = 1 })
	hold := dial(t, dn) // occupies the only xceiver
	_ = hold
	c := dial(t, dn)
	req := &hdfs.OpBlockChecksumProto{Header: &hdfs.BaseHeaderProto{Block: ext(1, 1, 0), Token: emptyToken()}}
	if err := datatransfer.WriteOp(c.conn, datatransfer.OpBlockChecksum, req); err != nil {
		t.Fatal(err)
	}
	var resp hdfs.BlockOpResponseProto
	if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.GetStatus() != hdfs.Status_ERROR || !strings.Contains(resp.GetMessage(), "exceeds the limit of concurrent xceivers: 1") {
		t.Fatalf("response %v %q", resp.GetStatus(), resp.GetMessage())
	}
}

func TestInvalidateFromHeartbeat(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dn := startDN(t, nn)
	data := randomData(5000, 3)
	dial(t, dn).writeBlock(42, 1001, nil, data, []int{len(data)}, nil)
	bp, _ := dn.BlockPool(testPool)
	r, ok := bp.Get(42)
	if !ok {
		t.Fatal("replica missing")
	}
	nn.queue(dn.DatanodeUUID(), &dnpb.DatanodeCommandProto{CmdType: dnpb.DatanodeCommandProto_BlockCommand.Enum(),
		BlkCmd: &dnpb.BlockCommandProto{Action: dnpb.BlockCommandProto_INVALIDATE.Enum(), BlockPoolId: proto.String(testPool),
			Blocks: []*hdfs.BlockProto{{BlockId: proto.Uint64(42), GenStamp: proto.Uint64(1001), NumBytes: proto.Uint64(5000)}}}})
	e := nn.waitIBR(t, "DELETED 42", func(e ibrSeen) bool {
		return e.block == 42 && e.status == dnpb.ReceivedDeletedBlockInfoProto_DELETED
	})
	if e.storage != r.StorageID {
		t.Fatalf("DELETED reported for storage %q, want %q", e.storage, r.StorageID)
	}
	if _, ok := bp.Get(42); ok {
		t.Fatal("replica still in the map")
	}
	if _, err := os.Stat(r.BlockPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("block file still there: %v", err)
	}
}

func TestStandbyCommandsIgnored(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dn := startDN(t, nn)
	data := randomData(1000, 20)
	dial(t, dn).writeBlock(43, 1001, nil, data, []int{len(data)}, nil)
	nn.mu.Lock()
	nn.mu.standby = true
	nn.mu.Unlock()
	nn.queue(dn.DatanodeUUID(), &dnpb.DatanodeCommandProto{CmdType: dnpb.DatanodeCommandProto_BlockCommand.Enum(),
		BlkCmd: &dnpb.BlockCommandProto{Action: dnpb.BlockCommandProto_INVALIDATE.Enum(), BlockPoolId: proto.String(testPool),
			Blocks: []*hdfs.BlockProto{{BlockId: proto.Uint64(43), GenStamp: proto.Uint64(1001), NumBytes: proto.Uint64(1000)}}}})
	for len(nn.heartbeats) > 0 {
		<-nn.heartbeats
	}
	// The command went out with one of the next two heartbeats, and the
	// actor handled it before sending the one after.
	for range 3 {
		<-nn.heartbeats
	}
	bp, _ := dn.BlockPool(testPool)
	if _, ok := bp.Get(43); !ok {
		t.Fatal("a standby's DNA_INVALIDATE was carried out")
	}
}

func TestTransferCommandCopiesReplica(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	src, dst := startDN(t, nn), startDN(t, nn)
	data := randomData(200_000, 4)
	dial(t, src).writeBlock(77, 1005, nil, data, []int{len(data)}, nil)
	nn.queue(src.DatanodeUUID(), &dnpb.DatanodeCommandProto{CmdType: dnpb.DatanodeCommandProto_BlockCommand.Enum(),
		BlkCmd: &dnpb.BlockCommandProto{Action: dnpb.BlockCommandProto_TRANSFER.Enum(), BlockPoolId: proto.String(testPool),
			Blocks:  []*hdfs.BlockProto{{BlockId: proto.Uint64(77), GenStamp: proto.Uint64(1005), NumBytes: proto.Uint64(200_000)}},
			Targets: []*hdfs.DatanodeInfosProto{{Datanodes: []*hdfs.DatanodeInfoProto{info(dst)}}}}})
	nn.waitIBR(t, "RECEIVED 77 on the target", func(e ibrSeen) bool {
		return e.block == 77 && e.uuid == dst.DatanodeUUID() && e.status == dnpb.ReceivedDeletedBlockInfoProto_RECEIVED
	})
	bp, _ := dst.BlockPool(testPool)
	r, ok := bp.Get(77)
	if !ok || r.State != storage.Finalized || r.GenStamp != 1005 {
		t.Fatalf("target replica %+v %v", r, ok)
	}
	if !bytes.Equal(readFile(t, r.BlockPath), data) {
		t.Fatal("target block differs")
	}
}

// TestTransferOfCorruptReplica: the target of a replication finds the copy
// does not match its checksums, drops it and reports the source's replica.
func TestTransferOfCorruptReplica(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	src, dst := startDN(t, nn), startDN(t, nn)
	data := randomData(20_000, 22)
	dial(t, src).writeBlock(78, 1005, nil, data, []int{len(data)}, nil)
	sbp, _ := src.BlockPool(testPool)
	r, _ := sbp.Get(78)
	f, err := os.OpenFile(r.BlockPath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{data[10_000] ^ 0xFF}, 10_000); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	nn.queue(src.DatanodeUUID(), &dnpb.DatanodeCommandProto{CmdType: dnpb.DatanodeCommandProto_BlockCommand.Enum(),
		BlkCmd: &dnpb.BlockCommandProto{Action: dnpb.BlockCommandProto_TRANSFER.Enum(), BlockPoolId: proto.String(testPool),
			Blocks:  []*hdfs.BlockProto{{BlockId: proto.Uint64(78), GenStamp: proto.Uint64(1005), NumBytes: proto.Uint64(20_000)}},
			Targets: []*hdfs.DatanodeInfosProto{{Datanodes: []*hdfs.DatanodeInfoProto{info(dst)}}}}})
	select {
	case <-nn.bad:
	case <-time.After(waitFor):
		t.Fatal("no reportBadBlocks")
	}
	nn.mu.Lock()
	bad := nn.mu.badBlocks
	nn.mu.Unlock()
	if len(bad) != 1 || bad[0].GetB().GetBlockId() != 78 || len(bad[0].GetLocs()) != 1 ||
		bad[0].GetLocs()[0].GetId().GetDatanodeUuid() != src.DatanodeUUID() {
		t.Fatalf("bad blocks %v", bad)
	}
	dbp, _ := dst.BlockPool(testPool)
	if r, ok := dbp.Get(78); ok {
		t.Fatalf("corrupt copy kept on the target: %v", r.State)
	}
}

func TestReplicaVisibleLength(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dn := startDN(t, nn)
	data := randomData(3000, 5)
	dial(t, dn).writeBlock(9, 1001, nil, data, []int{len(data)}, nil)
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{dn.IPCAddr().String()}, User: "hdfs", Protocol: ClientDatanodeProtocol})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	var resp hdfs.GetReplicaVisibleLengthResponseProto
	if err := c.Call(ctx, "getReplicaVisibleLength", &hdfs.GetReplicaVisibleLengthRequestProto{Block: ext(9, 1001, 0)}, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.GetLength() != 3000 {
		t.Fatalf("visible length %d", resp.GetLength())
	}
	if err := c.Call(ctx, "getReplicaVisibleLength", &hdfs.GetReplicaVisibleLengthRequestProto{Block: ext(10, 1001, 0)}, &resp); err == nil {
		t.Fatal("missing replica: no error")
	}
}

func TestBlockRecoveryAsPrimary(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dns := []*DataNode{startDN(t, nn), startDN(t, nn)}
	// An unfinished write: two packets, no last packet, connection dropped.
	c := dial(t, dns[0])
	ck := datatransfer.DefaultChecksum()
	c.startWrite(writeReq(55, 1001, []*hdfs.DatanodeInfoProto{info(dns[1])}, ck))
	data := randomData(3000, 6)
	pw := datatransfer.NewPacketWriter(c.conn)
	for i, p := range [][2]int{{0, 1024}, {1024, 3000}} {
		if err := pw.WritePacket(datatransfer.PacketHeader{OffsetInBlock: int64(p[0]), Seqno: int64(i + 1)}, ck.Compute(nil, data[p[0]:p[1]]), data[p[0]:p[1]]); err != nil {
			t.Fatal(err)
		}
		var a datatransfer.PipelineAck
		if err := datatransfer.ReadAck(c.br, 1<<20, &a); err != nil || !a.Success() {
			t.Fatalf("ack %+v %v", a, err)
		}
	}
	_ = c.conn.Close()
	nn.queue(dns[0].DatanodeUUID(), &dnpb.DatanodeCommandProto{CmdType: dnpb.DatanodeCommandProto_BlockRecoveryCommand.Enum(),
		RecoveryCmd: &dnpb.BlockRecoveryCommandProto{Blocks: []*hdfs.RecoveringBlockProto{{
			NewGenStamp: proto.Uint64(1002),
			Block: &hdfs.LocatedBlockProto{B: ext(55, 1001, 3000), Offset: proto.Uint64(0), Corrupt: proto.Bool(false), BlockToken: emptyToken(),
				Locs: []*hdfs.DatanodeInfoProto{info(dns[0]), info(dns[1])}},
		}}}})
	var commit *dnpb.CommitBlockSynchronizationRequestProto
	select {
	case commit = <-nn.commits:
	case <-time.After(waitFor):
		t.Fatal("no commitBlockSynchronization")
	}
	if commit.GetNewGenStamp() != 1002 || commit.GetNewLength() != 3000 || !commit.GetCloseFile() || len(commit.GetNewTaragets()) != 2 {
		t.Fatalf("commit %v", commit)
	}
	for i, dn := range dns {
		bp, _ := dn.BlockPool(testPool)
		r, ok := bp.Get(55)
		if !ok || r.State != storage.Finalized || r.GenStamp != 1002 || r.NumBytes != 3000 {
			t.Fatalf("datanode %d replica after recovery %+v", i, r)
		}
	}
}

func TestUnsupportedOpAnswered(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dn := startDN(t, nn)
	c := dial(t, dn)
	req := &hdfs.OpRequestShortCircuitAccessProto{Header: &hdfs.BaseHeaderProto{Block: ext(1, 1, 0), Token: emptyToken()}, MaxVersion: proto.Uint32(1)}
	if err := datatransfer.WriteOp(c.conn, datatransfer.OpRequestShortCircuitFDs, req); err != nil {
		t.Fatal(err)
	}
	var resp hdfs.BlockOpResponseProto
	if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.GetStatus() != hdfs.Status_ERROR_UNSUPPORTED || resp.GetMessage() == "" {
		t.Fatalf("response %v %q", resp.GetStatus(), resp.GetMessage())
	}
}

func TestReregistration(t *testing.T) {
	tests := []struct {
		name    string
		trigger func(nn *fakeNN, dn *DataNode)
	}{
		{"DNA_REGISTER", func(nn *fakeNN, dn *DataNode) {
			nn.queue(dn.DatanodeUUID(), &dnpb.DatanodeCommandProto{CmdType: dnpb.DatanodeCommandProto_RegisterCommand.Enum(),
				RegisterCmd: &dnpb.RegisterCommandProto{}})
		}},
		{"UnregisteredNodeException", func(nn *fakeNN, dn *DataNode) {
			nn.mu.Lock()
			nn.mu.failHeartbeats = 1
			nn.mu.Unlock()
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nn := newFakeNN(t, "CID-test")
			dn := startDN(t, nn)
			<-nn.reports
			if n := nn.registrations(); n != 1 {
				t.Fatalf("%d registrations", n)
			}
			tc.trigger(nn, dn)
			select {
			case <-nn.reports: // the full report that follows a registration
			case <-time.After(waitFor):
				t.Fatal("no block report after re-registration")
			}
			if n := nn.registrations(); n != 2 {
				t.Fatalf("%d registrations, want 2", n)
			}
		})
	}
}

// TestPeriodicBlockReport drives the DataNode's clock: a full report follows
// every dfs.blockreport.intervalMsec, heartbeats every dfs.heartbeat.interval.
func TestPeriodicBlockReport(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	cfg := testConfig(nn.addr, t.TempDir())
	cfg.HeartbeatInterval = time.Minute
	dn, err := Start(context.Background(), cfg, Deps{Logger: testLogger(t), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer dn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := dn.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	<-nn.reports
	<-nn.heartbeats
	for clk.Pending() == 0 { // the heartbeat ticker is armed once the first heartbeat went out
		time.Sleep(time.Millisecond)
	}
	// Two more heartbeats: the actor sends a due report right after a
	// heartbeat, so none came with the first if the second arrives alone.
	for range 2 {
		clk.Advance(time.Minute)
		<-nn.heartbeats
	}
	select {
	case r := <-nn.reports:
		t.Fatalf("block report before the interval: %v", r)
	default:
	}
	clk.Advance(time.Hour)
	select {
	case <-nn.reports:
	case <-time.After(waitFor):
		t.Fatal("no block report after the interval")
	}
}

// TestCloseDuringWrite: Close ends a pipeline in progress and returns with
// every goroutine stopped (goleak checks the rest); the unfinished replica
// stays RBW on disk and is found again, as RWR, at the next start.
func TestCloseDuringWrite(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dir := t.TempDir()
	dn := startDN(t, nn, func(c *Config) { c.DataDirs = []string{dir} })
	c := dial(t, dn)
	ck := datatransfer.DefaultChecksum()
	c.startWrite(writeReq(101, 1001, nil, ck))
	data := randomData(4096, 18)
	if err := datatransfer.NewPacketWriter(c.conn).WritePacket(datatransfer.PacketHeader{Seqno: 1}, ck.Compute(nil, data), data); err != nil {
		t.Fatal(err)
	}
	var a datatransfer.PipelineAck
	if err := datatransfer.ReadAck(c.br, 1<<20, &a); err != nil || !a.Success() {
		t.Fatalf("ack %+v %v", a, err)
	}
	if err := dn.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.br.ReadByte(); err == nil {
		t.Fatal("connection still open after Close")
	}
	for len(nn.reports) > 0 { // the first run's reports
		<-nn.reports
	}
	dn2 := startDN(t, nn, func(c *Config) { c.DataDirs = []string{dir} })
	bp, _ := dn2.BlockPool(testPool)
	r, ok := bp.Get(101)
	if !ok || r.State != storage.RWR || r.NumBytes != 4096 {
		t.Fatalf("replica after restart %+v %v", r, ok)
	}
	br := <-nn.reports // the restarted node's first full report lists it
	if br.GetRegistration().GetDatanodeID().GetDatanodeUuid() != dn2.DatanodeUUID() {
		t.Fatalf("report from %s", br.GetRegistration().GetDatanodeID().GetDatanodeUuid())
	}
	reps, ok := DecodeBlockReport(br.GetReports()[0].GetBlocks())
	want := []ReportedReplica{{Block: storage.Block{ID: 101, GenStamp: 1001, NumBytes: 4096}, State: storage.RWR}}
	if !ok || !reflect.DeepEqual(reps, want) {
		t.Fatalf("block report %+v %v", reps, ok)
	}
}

// TestPipelineBadChecksumAtTail sends a burst through three DataNodes whose
// third packet is corrupt. Only the last node verifies checksums (the
// others store what they mirror): it answers ERROR_CHECKSUM, no node counts
// the packet as acknowledged, and every replica's visible length stops
// before it, which is where pipeline recovery resumes.
func TestPipelineBadChecksumAtTail(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dns := []*DataNode{startDN(t, nn), startDN(t, nn), startDN(t, nn)}
	c := dial(t, dns[0])
	ck := datatransfer.DefaultChecksum()
	const id = 8
	c.startWrite(writeReq(id, 1001, []*hdfs.DatanodeInfoProto{info(dns[1]), info(dns[2])}, ck))
	data := randomData(4*2048, 3)
	var burst bytes.Buffer
	pw := datatransfer.NewPacketWriter(&burst)
	for i := range 4 {
		chunk := data[i*2048 : (i+1)*2048]
		sums := ck.Compute(nil, chunk)
		if i == 2 {
			sums[1] ^= 0x40
		}
		if err := pw.WritePacket(datatransfer.PacketHeader{Seqno: int64(i + 1), OffsetInBlock: int64(i * 2048)}, sums, chunk); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.conn.Write(burst.Bytes()); err != nil {
		t.Fatal(err)
	}
	ok := []hdfs.Status{hdfs.Status_SUCCESS, hdfs.Status_SUCCESS, hdfs.Status_SUCCESS}
	want := [][]hdfs.Status{ok, ok, {hdfs.Status_SUCCESS, hdfs.Status_SUCCESS, hdfs.Status_ERROR_CHECKSUM}}
	for i, w := range want {
		var a datatransfer.PipelineAck
		if err := datatransfer.ReadAck(c.br, 1<<20, &a); err != nil {
			t.Fatalf("ack %d: %v", i+1, err)
		}
		if a.Seqno != int64(i+1) || !slices.Equal(a.Replies, w) {
			t.Fatalf("ack %+v, want seqno %d %v", a, i+1, w)
		}
	}
	for i, dn := range dns {
		bp, err := dn.BlockPool(testPool)
		if err != nil {
			t.Fatal(err)
		}
		r, found := bp.Get(id)
		if !found || r.BytesAcked != 2*2048 {
			t.Fatalf("datanode %d: replica %+v (%v), want 4096 bytes acknowledged", i, r, found)
		}
	}
}

// TestOneNameNodeRefusesTheOtherServes: of an HA pair, the NameNode whose
// host lists refuse the node loses only its own actor; the DataNode stays
// up, ready and registered with the other, and stops once both refuse.
func TestOneNameNodeRefusesTheOtherServes(t *testing.T) {
	good, bad := newFakeNN(t, "CID-test"), newFakeNN(t, "CID-test")
	bad.mu.Lock()
	bad.mu.refuse = true
	bad.mu.Unlock()
	cfg := testConfig(good.addr, t.TempDir())
	cfg.NameNodes = []string{good.addr, bad.addr}
	dn, err := Start(context.Background(), cfg, Deps{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer dn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := dn.WaitReady(ctx); err != nil {
		t.Fatalf("WaitReady = %v, want ready through the NameNode that accepts the node", err)
	}
	// Heartbeats keep reaching the one that accepted it.
	for range 2 {
		select {
		case <-good.heartbeats:
		case <-dn.Done():
			t.Fatalf("DataNode stopped: %v", dn.Err())
		case <-ctx.Done():
			t.Fatal("no heartbeat reached the accepting NameNode")
		}
	}
	select {
	case <-dn.Done():
		t.Fatalf("DataNode stopped: %v", dn.Err())
	default:
	}

	// Both refusing: the DataNode stops, naming the refusal.
	good.mu.Lock()
	good.mu.refuse = true
	good.mu.failHeartbeats = 1 << 20 // ask it to register again
	good.mu.Unlock()
	select {
	case <-dn.Done():
		if err := dn.Err(); err == nil || !strings.Contains(err.Error(), "DisallowedDatanodeException") {
			t.Fatalf("Err = %v, want the refusal", err)
		}
	case <-ctx.Done():
		t.Fatal("DataNode still running with both NameNodes refusing it")
	}
}
