package clienttest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// DataNode is one in-memory DataNode.
type DataNode struct {
	c       *Cluster
	l       net.Listener
	uuid    string
	port    int
	wg      sync.WaitGroup
	ipc     *ipc.Server
	ipcL    net.Listener
	ipcDone chan struct{}

	// CorruptReads makes READ_BLOCK send one flipped byte in its first
	// data packet (the checksums stay those of the true data).
	CorruptReads atomic.Bool
	// ChecksumOK counts CHECKSUM_OK read statuses received from readers.
	ChecksumOK atomic.Int32
	// Heartbeats counts heartbeat packets received in write pipelines.
	Heartbeats atomic.Int32
	// Reads counts READ_BLOCK ops served.
	Reads atomic.Int32
	// FailWriteAfter, when above zero, makes the next WRITE_BLOCK this
	// node receives from a client drop the connection after that many
	// data packets (the last one unacknowledged), as a crashing node
	// would. It is reset to zero when it fires.
	FailWriteAfter atomic.Int32
	// FailLastPacket makes the next WRITE_BLOCK this node receives from a
	// client drop the connection when the last packet of the block
	// arrives, unacknowledged. It is reset when it fires.
	FailLastPacket atomic.Bool
	// RefuseWrites makes WRITE_BLOCK answer ERROR.
	RefuseWrites atomic.Bool
	// Stages records the stage of every WRITE_BLOCK received.
	stages struct {
		sync.Mutex
		list []string
	}

	mu struct {
		sync.Mutex
		replicas map[uint64]*replica
		conns    map[net.Conn]bool
	}
}

type replica struct {
	data []byte
	gs   uint64
	csum datatransfer.DataChecksum
}

func startDataNode(c *Cluster, i int) (*DataNode, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	dn := &DataNode{c: c, l: l, uuid: fmt.Sprintf("dn-%d", i), port: l.Addr().(*net.TCPAddr).Port}
	dn.mu.replicas = map[uint64]*replica{}
	dn.mu.conns = map[net.Conn]bool{}
	dn.wg.Add(1)
	go dn.serve()
	il, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		dn.close()
		return nil, err
	}
	dn.ipcL, dn.ipcDone = il, make(chan struct{})
	dn.ipc = ipc.NewServer(ipc.ServerConfig{Handlers: 1})
	ipc.Handle(dn.ipc.Service(clientDatanodeProtocol), "getReplicaVisibleLength",
		func(ctx context.Context, req *hdfs.GetReplicaVisibleLengthRequestProto) (*hdfs.GetReplicaVisibleLengthResponseProto, error) {
			r := dn.replica(req.GetBlock().GetBlockId())
			if r == nil {
				return nil, remoteerr.New(remoteerr.ClassIOException, "replica blk_%d not found", req.GetBlock().GetBlockId())
			}
			return &hdfs.GetReplicaVisibleLengthResponseProto{Length: proto.Uint64(uint64(len(r.data)))}, nil
		})
	go func() {
		defer close(dn.ipcDone)
		_ = dn.ipc.Serve(il)
	}()
	return dn, nil
}

// clientDatanodeProtocol is the RPC protocol of a DataNode's IPC port.
const clientDatanodeProtocol = "org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol"

// Addr returns the transfer address.
func (dn *DataNode) Addr() string { return dn.l.Addr().String() }

// Replica returns a copy of the data stored for block id, or nil.
func (dn *DataNode) Replica(id uint64) []byte {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	r := dn.mu.replicas[id]
	if r == nil {
		return nil
	}
	return append([]byte{}, r.data...)
}

// BlockIDs returns the ids of the blocks stored.
func (dn *DataNode) BlockIDs() []uint64 {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	var out []uint64
	for id := range dn.mu.replicas {
		out = append(out, id)
	}
	return out
}

func (dn *DataNode) info() *hdfs.DatanodeInfoProto {
	return &hdfs.DatanodeInfoProto{
		Id: &hdfs.DatanodeIDProto{
			IpAddr: proto.String("127.0.0.1"), HostName: proto.String("localhost"), DatanodeUuid: proto.String(dn.uuid),
			XferPort: proto.Uint32(uint32(dn.port)), InfoPort: proto.Uint32(0), IpcPort: proto.Uint32(uint32(dn.ipcL.Addr().(*net.TCPAddr).Port)),
		},
		Capacity: proto.Uint64(1 << 40), DfsUsed: proto.Uint64(0), Remaining: proto.Uint64(1 << 40),
		BlockPoolUsed: proto.Uint64(0), LastUpdate: proto.Uint64(0), XceiverCount: proto.Uint32(0),
		Location: proto.String("/default-rack"), AdminState: hdfs.DatanodeInfoProto_NORMAL.Enum(),
	}
}

func (dn *DataNode) close() {
	if dn.ipc != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = dn.ipc.Shutdown(ctx)
		cancel()
		<-dn.ipcDone
	}
	_ = dn.l.Close()
	dn.mu.Lock()
	for c := range dn.mu.conns {
		_ = c.Close()
	}
	dn.mu.Unlock()
	dn.wg.Wait()
}

func (dn *DataNode) cut(id uint64, n int) {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	if r := dn.mu.replicas[id]; r != nil && n <= len(r.data) {
		r.data = r.data[:n]
	}
}

func (dn *DataNode) serve() {
	defer dn.wg.Done()
	for {
		conn, err := dn.l.Accept()
		if err != nil {
			return
		}
		dn.mu.Lock()
		dn.mu.conns[conn] = true
		dn.mu.Unlock()
		dn.wg.Add(1)
		go func() {
			defer dn.wg.Done()
			defer func() {
				dn.mu.Lock()
				delete(dn.mu.conns, conn)
				dn.mu.Unlock()
				_ = conn.Close()
			}()
			_ = dn.handle(conn)
		}()
	}
}

func (dn *DataNode) handle(conn net.Conn) error {
	br := bufio.NewReaderSize(conn, 128<<10)
	op, msg, err := datatransfer.ReadOp(br, datatransfer.DefaultMaxMessageSize)
	if err != nil {
		return err
	}
	switch op {
	case datatransfer.OpWriteBlock:
		return dn.writeBlock(conn, br, msg.(*hdfs.OpWriteBlockProto))
	case datatransfer.OpReadBlock:
		return dn.readBlock(conn, br, msg.(*hdfs.OpReadBlockProto))
	case datatransfer.OpBlockChecksum:
		return dn.blockChecksum(conn, msg.(*hdfs.OpBlockChecksumProto))
	case datatransfer.OpTransferBlock:
		return dn.transferBlock(conn, msg.(*hdfs.OpTransferBlockProto))
	}
	return respond(conn, hdfs.Status_ERROR_UNSUPPORTED, "op "+op.String()+" not supported")
}

func respond(w io.Writer, s hdfs.Status, msg string) error {
	return datatransfer.WriteResponse(w, &hdfs.BlockOpResponseProto{Status: s.Enum(), FirstBadLink: proto.String(""), Message: proto.String(msg)})
}

// pipelineNodes returns the DataNodes of the cluster named in targets.
func (dn *DataNode) pipelineNodes(targets []*hdfs.DatanodeInfoProto) ([]*DataNode, error) {
	out := []*DataNode{dn}
	for _, t := range targets {
		var found *DataNode
		for _, d := range dn.c.dns {
			if d.uuid == t.GetId().GetDatanodeUuid() {
				found = d
			}
		}
		if found == nil {
			return nil, fmt.Errorf("unknown target %s", t.GetId().GetDatanodeUuid())
		}
		out = append(out, found)
	}
	return out, nil
}

func (dn *DataNode) writeBlock(conn net.Conn, br *bufio.Reader, req *hdfs.OpWriteBlockProto) error {
	b := req.GetHeader().GetBaseHeader().GetBlock()
	csum, err := datatransfer.ChecksumFromProto(req.GetRequestedChecksum())
	if err != nil {
		return respond(conn, hdfs.Status_ERROR_INVALID, err.Error())
	}
	nodes, err := dn.pipelineNodes(req.GetTargets())
	if err != nil {
		return respond(conn, hdfs.Status_ERROR, err.Error())
	}
	if dn.RefuseWrites.Load() {
		return respond(conn, hdfs.Status_ERROR, "writes refused")
	}
	gs := b.GetGenerationStamp()
	switch req.GetStage() {
	case hdfs.OpWriteBlockProto_PIPELINE_SETUP_CREATE:
	case hdfs.OpWriteBlockProto_PIPELINE_SETUP_APPEND:
		dn.mu.Lock()
		r := dn.mu.replicas[b.GetBlockId()]
		dn.mu.Unlock()
		if r == nil || uint64(len(r.data)) != req.GetMinBytesRcvd() {
			return respond(conn, hdfs.Status_ERROR, "replica for append not found or of another length")
		}
		gs = req.GetLatestGenerationStamp()
	case hdfs.OpWriteBlockProto_PIPELINE_SETUP_STREAMING_RECOVERY, hdfs.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY,
		hdfs.OpWriteBlockProto_PIPELINE_SETUP_APPEND_RECOVERY:
		for _, n := range nodes {
			if !n.recoverReplica(b.GetBlockId(), int(req.GetMinBytesRcvd()), req.GetLatestGenerationStamp()) {
				return respond(conn, hdfs.Status_ERROR, "no replica to recover on "+n.uuid)
			}
		}
		gs = req.GetLatestGenerationStamp()
	default:
		return respond(conn, hdfs.Status_ERROR_UNSUPPORTED, "stage "+req.GetStage().String()+" not supported")
	}
	dn.stages.Lock()
	dn.stages.list = append(dn.stages.list, req.GetStage().String())
	dn.stages.Unlock()
	failAfter := dn.FailWriteAfter.Swap(0)
	failLast := dn.FailLastPacket.Swap(false)
	if err := respond(conn, hdfs.Status_SUCCESS, ""); err != nil {
		return err
	}
	size := int64(req.GetMinBytesRcvd())
	if req.GetStage() == hdfs.OpWriteBlockProto_PIPELINE_SETUP_CREATE {
		size = 0
		for _, n := range nodes {
			n.store(b.GetBlockId(), 0, nil, gs, csum)
		}
	}
	pr := datatransfer.NewPacketReader(br, 0)
	replies := make([]hdfs.Status, len(nodes))
	for {
		pkt, err := pr.Next()
		if err != nil {
			return err
		}
		h := pkt.Header
		ack := &datatransfer.PipelineAck{Seqno: h.Seqno, Replies: replies}
		if h.IsHeartbeat() {
			dn.Heartbeats.Add(1)
			if err := datatransfer.WriteAck(conn, ack); err != nil {
				return err
			}
			continue
		}
		if failAfter > 0 && len(pkt.Data) > 0 {
			if failAfter--; failAfter == 0 {
				return errors.New("injected failure")
			}
		}
		if failLast && h.LastPacketInBlock {
			return errors.New("injected failure at the last packet")
		}
		if err := csum.Verify(pkt.Data, pkt.Checksums); err != nil {
			ack.Replies = []hdfs.Status{hdfs.Status_ERROR_CHECKSUM}
			_ = datatransfer.WriteAck(conn, ack)
			return err
		}
		if h.OffsetInBlock > size {
			return errors.New("packet beyond the end of the replica")
		}
		// Store at once on every node of the pipeline, so that flushed
		// data is readable.
		for _, n := range nodes {
			n.store(b.GetBlockId(), h.OffsetInBlock, pkt.Data, gs, csum)
		}
		size = h.OffsetInBlock + int64(len(pkt.Data))
		if err := datatransfer.WriteAck(conn, ack); err != nil {
			return err
		}
		if h.LastPacketInBlock {
			return nil
		}
	}
}

// store writes data at off of replica id, creating it if needed.
func (dn *DataNode) store(id uint64, off int64, data []byte, gs uint64, csum datatransfer.DataChecksum) {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	r := dn.mu.replicas[id]
	if r == nil {
		r = &replica{}
		dn.mu.replicas[id] = r
	}
	if off > int64(len(r.data)) {
		off = int64(len(r.data))
	}
	if off < int64(len(r.data)) {
		// A rewrite: never change bytes a reader may hold.
		r.data = append([]byte{}, r.data[:off]...)
	}
	r.data = append(r.data[:off], data...)
	r.gs, r.csum = gs, csum
}

// Stages returns the stages of the WRITE_BLOCK ops received, in order.
func (dn *DataNode) Stages() []string {
	dn.stages.Lock()
	defer dn.stages.Unlock()
	return append([]string(nil), dn.stages.list...)
}

// recoverReplica cuts replica id to n bytes for a pipeline recovery.
func (dn *DataNode) recoverReplica(id uint64, n int, gs uint64) bool {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	r := dn.mu.replicas[id]
	if r == nil || len(r.data) < n {
		return false
	}
	r.data = append([]byte{}, r.data[:n]...)
	r.gs = gs
	return true
}

func (dn *DataNode) replica(id uint64) *replica {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	r := dn.mu.replicas[id]
	if r == nil {
		return nil
	}
	cp := *r
	return &cp
}

func (dn *DataNode) readBlock(conn net.Conn, br *bufio.Reader, req *hdfs.OpReadBlockProto) error {
	dn.Reads.Add(1)
	b := req.GetHeader().GetBaseHeader().GetBlock()
	r := dn.replica(b.GetBlockId())
	if r == nil {
		return respond(conn, hdfs.Status_ERROR, "replica "+strconv.FormatUint(b.GetBlockId(), 10)+" not found")
	}
	off, n := int64(req.GetOffset()), int64(req.GetLen())
	if off > int64(len(r.data)) || off+n > int64(len(r.data)) {
		return respond(conn, hdfs.Status_ERROR_INVALID, "range beyond the replica")
	}
	bpc := int64(r.csum.BytesPerChecksum)
	start := off / bpc * bpc
	end := min((off+n+bpc-1)/bpc*bpc, int64(len(r.data)))
	resp := &hdfs.BlockOpResponseProto{
		Status: hdfs.Status_SUCCESS.Enum(), FirstBadLink: proto.String(""),
		ReadOpChecksumInfo: &hdfs.ReadOpChecksumInfoProto{Checksum: r.csum.Proto(), ChunkOffset: proto.Uint64(uint64(start))},
	}
	if err := datatransfer.WriteResponse(conn, resp); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(conn, 128<<10)
	pw := datatransfer.NewPacketWriter(bw)
	per := 128 * bpc
	seq := int64(0)
	var sums []byte
	first := true
	for pos := start; pos < end; pos += per {
		chunk := r.data[pos:min(pos+per, end)]
		sums = r.csum.Compute(sums[:0], chunk)
		if first && dn.CorruptReads.Load() {
			chunk = append([]byte{}, chunk...)
			chunk[len(chunk)/2] ^= 0xff
		}
		first = false
		if err := pw.WritePacket(datatransfer.PacketHeader{OffsetInBlock: pos, Seqno: seq}, sums, chunk); err != nil {
			return err
		}
		seq++
	}
	if err := pw.WritePacket(datatransfer.PacketHeader{OffsetInBlock: end, Seqno: seq, LastPacketInBlock: true}, nil, nil); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var st hdfs.ClientReadStatusProto
	if err := datatransfer.ReadDelimited(br, 64, &st); err == nil && st.GetStatus() == hdfs.Status_CHECKSUM_OK {
		dn.ChecksumOK.Add(1)
	}
	return nil
}

func (dn *DataNode) blockChecksum(conn net.Conn, req *hdfs.OpBlockChecksumProto) error {
	b := req.GetHeader().GetBlock()
	r := dn.replica(b.GetBlockId())
	if r == nil {
		return respond(conn, hdfs.Status_ERROR, "replica not found")
	}
	cr, err := datatransfer.BlockChecksumResponse(r.csum, r.csum.Compute(nil, r.data))
	if err != nil {
		return respond(conn, hdfs.Status_ERROR, err.Error())
	}
	return datatransfer.WriteResponse(conn, &hdfs.BlockOpResponseProto{Status: hdfs.Status_SUCCESS.Enum(), FirstBadLink: proto.String(""), ChecksumResponse: cr})
}

// transferBlock copies the first numBytes of a replica to the targets,
// in process.
func (dn *DataNode) transferBlock(conn net.Conn, req *hdfs.OpTransferBlockProto) error {
	b := req.GetHeader().GetBaseHeader().GetBlock()
	r := dn.replica(b.GetBlockId())
	if r == nil || uint64(len(r.data)) < b.GetNumBytes() {
		return respond(conn, hdfs.Status_ERROR, "replica to transfer not found or too short")
	}
	targets, err := dn.pipelineNodes(req.GetTargets())
	if err != nil {
		return respond(conn, hdfs.Status_ERROR, err.Error())
	}
	for _, t := range targets[1:] {
		t.store(b.GetBlockId(), 0, r.data[:b.GetNumBytes()], r.gs, r.csum)
	}
	return respond(conn, hdfs.Status_SUCCESS, "")
}
