package datanode

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitFor bounds every wait of the tests; it is a hang guard, not a timed
// assertion.
const waitFor = 20 * time.Second

func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("DN_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

const testPool = "BP-1-127.0.0.1-1"

// ibrSeen is one incremental report entry the fake NameNode received.
type ibrSeen struct {
	uuid    string
	storage string
	block   int64
	gs      int64
	len     int64
	status  dnpb.ReceivedDeletedBlockInfoProto_BlockStatus
	delHint string
}

// fakeNN is a NameNode that answers the DatanodeProtocol minimally and
// records what it was sent.
type fakeNN struct {
	srv  *ipc.Server
	addr string
	ns   *hdfs.NamespaceInfoProto

	ibr        chan ibrSeen
	heartbeats chan *dnpb.HeartbeatRequestProto
	reports    chan *dnpb.BlockReportRequestProto
	commits    chan *dnpb.CommitBlockSynchronizationRequestProto
	bad        chan struct{} // a reportBadBlocks call arrived

	mu struct {
		sync.Mutex
		versions  int
		regs      []*dnpb.DatanodeRegistrationProto
		cmds      map[string][]*dnpb.DatanodeCommandProto // by datanode uuid
		ibrs      []ibrSeen
		badBlocks []*hdfs.LocatedBlockProto
		// failHeartbeats answers that many heartbeats with
		// UnregisteredNodeException.
		failHeartbeats int
		// standby makes heartbeats answer as a standby NameNode.
		standby bool
		// refuse answers registrations with DisallowedDatanodeException.
		refuse bool
	}
}

func newFakeNN(t testing.TB, clusterID string) *fakeNN {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startFakeNN(t, l, clusterID)
}

func startFakeNN(t testing.TB, l net.Listener, clusterID string) *fakeNN {
	nn := &fakeNN{srv: ipc.NewServer(ipc.ServerConfig{}), addr: l.Addr().String(),
		ibr: make(chan ibrSeen, 1000), heartbeats: make(chan *dnpb.HeartbeatRequestProto, 1000),
		reports: make(chan *dnpb.BlockReportRequestProto, 100), commits: make(chan *dnpb.CommitBlockSynchronizationRequestProto, 10), bad: make(chan struct{}, 1)}
	nn.mu.cmds = map[string][]*dnpb.DatanodeCommandProto{}
	nn.ns = &hdfs.NamespaceInfoProto{
		BuildVersion: proto.String("test"), Unused: proto.Uint32(0), BlockPoolID: proto.String(testPool),
		StorageInfo: &hdfs.StorageInfoProto{LayoutVersion: proto.Uint32(uint32(0xFFFFFC17)), NamespceID: proto.Uint32(4711),
			ClusterID: proto.String(clusterID), CTime: proto.Uint64(0)},
		SoftwareVersion: proto.String("3.3.6"),
	}
	svc := nn.srv.Service(DatanodeProtocol)
	ipc.Handle(svc, "versionRequest", func(ctx context.Context, req *hdfs.VersionRequestProto) (*hdfs.VersionResponseProto, error) {
		nn.mu.Lock()
		nn.mu.versions++
		nn.mu.Unlock()
		return &hdfs.VersionResponseProto{Info: nn.ns}, nil
	})
	ipc.Handle(svc, "registerDatanode", func(ctx context.Context, req *dnpb.RegisterDatanodeRequestProto) (*dnpb.RegisterDatanodeResponseProto, error) {
		nn.mu.Lock()
		refuse := nn.mu.refuse
		nn.mu.regs = append(nn.mu.regs, req.GetRegistration())
		nn.mu.Unlock()
		if refuse {
			return nil, remoteerr.New("org.apache.hadoop.hdfs.server.protocol.DisallowedDatanodeException", "Datanode denied communication with namenode")
		}
		return &dnpb.RegisterDatanodeResponseProto{Registration: req.GetRegistration()}, nil
	})
	ipc.Handle(svc, "sendHeartbeat", func(ctx context.Context, req *dnpb.HeartbeatRequestProto) (*dnpb.HeartbeatResponseProto, error) {
		uuid := req.GetRegistration().GetDatanodeID().GetDatanodeUuid()
		nn.mu.Lock()
		if nn.mu.failHeartbeats > 0 {
			nn.mu.failHeartbeats--
			nn.mu.Unlock()
			return nil, remoteerr.New("org.apache.hadoop.hdfs.protocol.UnregisteredNodeException", "Unregistered server: %s", uuid)
		}
		cmds := nn.mu.cmds[uuid]
		delete(nn.mu.cmds, uuid)
		state := hdfs.NNHAStatusHeartbeatProto_ACTIVE
		if nn.mu.standby {
			state = hdfs.NNHAStatusHeartbeatProto_STANDBY
		}
		nn.mu.Unlock()
		select {
		case nn.heartbeats <- req:
		default:
		}
		return &dnpb.HeartbeatResponseProto{Cmds: cmds,
			HaStatus: &hdfs.NNHAStatusHeartbeatProto{State: state.Enum(), Txid: proto.Uint64(1)}}, nil
	})
	ipc.Handle(svc, "blockReport", func(ctx context.Context, req *dnpb.BlockReportRequestProto) (*dnpb.BlockReportResponseProto, error) {
		nn.reports <- req
		return &dnpb.BlockReportResponseProto{}, nil
	})
	ipc.Handle(svc, "blockReceivedAndDeleted", func(ctx context.Context, req *dnpb.BlockReceivedAndDeletedRequestProto) (*dnpb.BlockReceivedAndDeletedResponseProto, error) {
		uuid := req.GetRegistration().GetDatanodeID().GetDatanodeUuid()
		for _, s := range req.GetBlocks() {
			for _, b := range s.GetBlocks() {
				e := ibrSeen{uuid: uuid, storage: s.GetStorageUuid(), block: int64(b.GetBlock().GetBlockId()),
					gs: int64(b.GetBlock().GetGenStamp()), len: int64(b.GetBlock().GetNumBytes()), status: b.GetStatus(), delHint: b.GetDeleteHint()}
				nn.mu.Lock()
				nn.mu.ibrs = append(nn.mu.ibrs, e)
				nn.mu.Unlock()
				nn.ibr <- e
			}
		}
		return &dnpb.BlockReceivedAndDeletedResponseProto{}, nil
	})
	ipc.Handle(svc, "reportBadBlocks", func(ctx context.Context, req *dnpb.ReportBadBlocksRequestProto) (*dnpb.ReportBadBlocksResponseProto, error) {
		defer func() {
			select {
			case nn.bad <- struct{}{}:
			default:
			}
		}()
		nn.mu.Lock()
		nn.mu.badBlocks = append(nn.mu.badBlocks, req.GetBlocks()...)
		nn.mu.Unlock()
		return &dnpb.ReportBadBlocksResponseProto{}, nil
	})
	ipc.Handle(svc, "errorReport", func(ctx context.Context, req *dnpb.ErrorReportRequestProto) (*dnpb.ErrorReportResponseProto, error) {
		return &dnpb.ErrorReportResponseProto{}, nil
	})
	ipc.Handle(svc, "commitBlockSynchronization", func(ctx context.Context, req *dnpb.CommitBlockSynchronizationRequestProto) (*dnpb.CommitBlockSynchronizationResponseProto, error) {
		nn.commits <- req
		return &dnpb.CommitBlockSynchronizationResponseProto{}, nil
	})
	go func() { _ = nn.srv.Serve(l) }()
	t.Cleanup(func() { _ = nn.srv.Close() })
	return nn
}

func (nn *fakeNN) registrations() int {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	return len(nn.mu.regs)
}

// queue makes the next heartbeat of DataNode uuid return c.
func (nn *fakeNN) queue(uuid string, c *dnpb.DatanodeCommandProto) {
	nn.mu.Lock()
	nn.mu.cmds[uuid] = append(nn.mu.cmds[uuid], c)
	nn.mu.Unlock()
}

// ibrsNow returns the incremental report entries received so far.
func (nn *fakeNN) ibrsNow() []ibrSeen {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	return append([]ibrSeen(nil), nn.mu.ibrs...)
}

// waitIBR waits for an entry matching f.
func (nn *fakeNN) waitIBR(t testing.TB, what string, f func(ibrSeen) bool) ibrSeen {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		select {
		case e := <-nn.ibr:
			if f(e) {
				return e
			}
		case <-deadline:
			t.Fatalf("no incremental report %s; seen %+v", what, nn.ibrsNow())
		}
	}
}

func testConfig(nnAddr string, dirs ...string) Config {
	return Config{
		DataDirs:            dirs,
		XferAddress:         "127.0.0.1:0",
		HTTPAddress:         "127.0.0.1:0",
		IPCAddress:          "127.0.0.1:0",
		HeartbeatInterval:   20 * time.Millisecond,
		BlockReportInterval: time.Hour,
		MaxTransferThreads:  64,
		NameNodes:           []string{nnAddr},
		User:                "hdfs",
		Hostname:            "localhost",
	}
}

// startDN starts a DataNode on a fresh directory and waits until it is
// registered.
func startDN(t testing.TB, nn *fakeNN, mod ...func(*Config)) *DataNode {
	t.Helper()
	cfg := testConfig(nn.addr, t.TempDir())
	for _, m := range mod {
		m(&cfg)
	}
	dn, err := Start(context.Background(), cfg, Deps{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := dn.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return dn
}

// info describes dn as a pipeline target.
func info(dn *DataNode) *hdfs.DatanodeInfoProto {
	return &hdfs.DatanodeInfoProto{Id: &hdfs.DatanodeIDProto{
		IpAddr: proto.String("127.0.0.1"), HostName: proto.String("localhost"), DatanodeUuid: proto.String(dn.DatanodeUUID()),
		XferPort: proto.Uint32(tcpPort(dn.XferAddr())), InfoPort: proto.Uint32(0), IpcPort: proto.Uint32(tcpPort(dn.IPCAddr())),
	}}
}

// client is a test writer/reader speaking DataTransferProtocol.
type client struct {
	t    testing.TB
	conn net.Conn
	br   *bufio.Reader
}

func dial(t testing.TB, dn *DataNode) *client {
	t.Helper()
	c, err := net.Dial("tcp", dn.XferAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(waitFor))
	t.Cleanup(func() { _ = c.Close() })
	return &client{t: t, conn: c, br: bufio.NewReader(c)}
}

func ext(id, gs, n int64) *hdfs.ExtendedBlockProto {
	return &hdfs.ExtendedBlockProto{PoolId: proto.String(testPool), BlockId: proto.Uint64(uint64(id)),
		GenerationStamp: proto.Uint64(uint64(gs)), NumBytes: proto.Uint64(uint64(n))}
}

func writeReq(id, gs int64, targets []*hdfs.DatanodeInfoProto, ck datatransfer.DataChecksum) *hdfs.OpWriteBlockProto {
	return &hdfs.OpWriteBlockProto{
		Header: &hdfs.ClientOperationHeaderProto{BaseHeader: &hdfs.BaseHeaderProto{Block: ext(id, gs, 0), Token: emptyToken()},
			ClientName: proto.String("DFSClient_test")},
		Targets: targets, Stage: hdfs.OpWriteBlockProto_PIPELINE_SETUP_CREATE.Enum(),
		PipelineSize: proto.Uint32(uint32(len(targets))), MinBytesRcvd: proto.Uint64(0), MaxBytesRcvd: proto.Uint64(0),
		LatestGenerationStamp: proto.Uint64(0), RequestedChecksum: ck.Proto(),
	}
}

// packetsFor cuts data, to be written at block offset base, as a stock
// client does when it flushes after each of the given segment lengths:
// packets of at most 64 KiB, a packet starting inside a chunk ending at the
// next chunk boundary. It returns block offsets.
func packetsFor(base int, data []byte, segments []int, bpc int) [][2]int {
	var out [][2]int
	pos := base
	for _, seg := range segments {
		end := min(pos+seg, base+len(data))
		for pos < end {
			n := min(end-pos, 64<<10)
			if r := pos % bpc; r != 0 {
				n = min(n, bpc-r)
			}
			out = append(out, [2]int{pos, pos + n})
			pos += n
		}
	}
	return out
}

// writeBlock writes data as one block through the pipeline starting at
// c's DataNode and returns the acks, in order. beforeLastAck runs just before
// the last packet is sent.
func (c *client) writeBlock(id, gs int64, targets []*hdfs.DatanodeInfoProto, data []byte, segments []int, beforeLastAck func()) []datatransfer.PipelineAck {
	return c.write(writeReq(id, gs, targets, datatransfer.DefaultChecksum()), 0, data, segments, beforeLastAck)
}

// sendWriteOp sends a WRITE_BLOCK request and returns the DataNode's
// response, whatever its status.
func (c *client) sendWriteOp(req *hdfs.OpWriteBlockProto) *hdfs.BlockOpResponseProto {
	c.t.Helper()
	if err := datatransfer.WriteOp(c.conn, datatransfer.OpWriteBlock, req); err != nil {
		c.t.Fatal(err)
	}
	var resp hdfs.BlockOpResponseProto
	if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil {
		c.t.Fatal(err)
	}
	return &resp
}

// startWrite sends a WRITE_BLOCK request and fails the test unless the
// DataNode accepts it.
func (c *client) startWrite(req *hdfs.OpWriteBlockProto) {
	c.t.Helper()
	if resp := c.sendWriteOp(req); resp.GetStatus() != hdfs.Status_SUCCESS {
		c.t.Fatalf("write refused: %v %s (bad link %q)", resp.GetStatus(), resp.GetMessage(), resp.GetFirstBadLink())
	}
}

// write sends req, then data (starting at block offset base) in packets.
func (c *client) write(req *hdfs.OpWriteBlockProto, base int, data []byte, segments []int, beforeLastAck func()) []datatransfer.PipelineAck {
	t := c.t
	t.Helper()
	ck, err := datatransfer.ChecksumFromProto(req.GetRequestedChecksum())
	if err != nil {
		t.Fatal(err)
	}
	c.startWrite(req)
	pkts := packetsFor(base, data, segments, ck.BytesPerChecksum)
	var acks []datatransfer.PipelineAck
	ackErr := make(chan error, 1)
	var mu sync.Mutex
	total := len(pkts) + 1
	readAcks := func(n int) {
		for i := 0; i < n; i++ {
			var a datatransfer.PipelineAck
			if err := datatransfer.ReadAck(c.br, 1<<20, &a); err != nil {
				ackErr <- err
				return
			}
			mu.Lock()
			acks = append(acks, a)
			mu.Unlock()
		}
		ackErr <- nil
	}
	go readAcks(total - 1)
	// The packets go out in bursts of up to 1 MiB, so that the DataNodes
	// receive, mirror and store several at a time.
	bw := bufio.NewWriterSize(c.conn, 1<<20)
	pw := datatransfer.NewPacketWriter(bw)
	var sums []byte
	for i, p := range pkts {
		chunk := data[p[0]-base : p[1]-base]
		h := datatransfer.PacketHeader{OffsetInBlock: int64(p[0]), Seqno: int64(i + 1)}
		sums = ck.Compute(sums[:0], chunk)
		if err := pw.WritePacket(h, sums, chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := <-ackErr; err != nil {
		t.Fatal(err)
	}
	if beforeLastAck != nil {
		beforeLastAck()
	}
	h := datatransfer.PacketHeader{OffsetInBlock: int64(base + len(data)), Seqno: int64(total), LastPacketInBlock: true}
	if err := pw.WritePacket(h, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	go readAcks(1)
	if err := <-ackErr; err != nil {
		t.Fatal(err)
	}
	return acks
}

// readBlock reads [off, off+n) of a block with READ_BLOCK and checks the
// packet rules the stock client relies on.
func (c *client) readBlock(id, gs, off, n int64) []byte {
	t := c.t
	t.Helper()
	req := &hdfs.OpReadBlockProto{Header: &hdfs.ClientOperationHeaderProto{
		BaseHeader: &hdfs.BaseHeaderProto{Block: ext(id, gs, off+n), Token: emptyToken()}, ClientName: proto.String("DFSClient_test")},
		Offset: proto.Uint64(uint64(off)), Len: proto.Uint64(uint64(n))}
	if err := datatransfer.WriteOp(c.conn, datatransfer.OpReadBlock, req); err != nil {
		t.Fatal(err)
	}
	var resp hdfs.BlockOpResponseProto
	if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.GetStatus() != hdfs.Status_SUCCESS {
		t.Fatalf("read refused: %v %s", resp.GetStatus(), resp.GetMessage())
	}
	ck, err := datatransfer.ChecksumFromProto(resp.GetReadOpChecksumInfo().GetChecksum())
	if err != nil {
		t.Fatal(err)
	}
	start := int64(resp.GetReadOpChecksumInfo().GetChunkOffset())
	if start > off || start%int64(ck.BytesPerChecksum) != 0 || off-start >= int64(ck.BytesPerChecksum) {
		t.Fatalf("chunkOffset %d for offset %d", start, off)
	}
	pr := datatransfer.NewPacketReader(c.br, 0)
	got := make([]byte, 0, off-start+n+int64(ck.BytesPerChecksum))
	pos := start
	for {
		p, err := pr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if p.Header.LastPacketInBlock {
			if len(p.Data) != 0 {
				t.Fatalf("last packet carries %d bytes", len(p.Data))
			}
			break
		}
		if p.Header.OffsetInBlock != pos {
			t.Fatalf("packet at %d, expected %d", p.Header.OffsetInBlock, pos)
		}
		if err := ck.Verify(p.Data, p.Checksums); err != nil {
			t.Fatalf("packet at %d: %v", pos, err)
		}
		got = append(got, p.Data...)
		pos += int64(len(p.Data))
	}
	if int64(len(got)) < off-start+n {
		t.Fatalf("read %d bytes from %d, want at least %d", len(got), start, off-start+n)
	}
	return got[off-start : off-start+n]
}

func (c *client) blockChecksum(id, gs int64) *hdfs.OpBlockChecksumResponseProto {
	t := c.t
	t.Helper()
	req := &hdfs.OpBlockChecksumProto{Header: &hdfs.BaseHeaderProto{Block: ext(id, gs, 0), Token: emptyToken()}}
	if err := datatransfer.WriteOp(c.conn, datatransfer.OpBlockChecksum, req); err != nil {
		t.Fatal(err)
	}
	var resp hdfs.BlockOpResponseProto
	if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.GetStatus() != hdfs.Status_SUCCESS {
		t.Fatalf("checksum refused: %v %s", resp.GetStatus(), resp.GetMessage())
	}
	return resp.GetChecksumResponse()
}

func randomData(n int, seed int) []byte {
	b := make([]byte, n)
	x := uint32(seed*2654435761 + 1)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// signalHandler is a log handler that closes ch at the first record with
// message msg.
type signalHandler struct {
	msg  string
	ch   chan struct{}
	once *sync.Once
}

func newSignalHandler(msg string) signalHandler {
	return signalHandler{msg: msg, ch: make(chan struct{}), once: new(sync.Once)}
}

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.ch) })
	}
	return nil
}
func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h signalHandler) WithGroup(string) slog.Handler      { return h }
