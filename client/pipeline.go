package client

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// packet is one data packet of a write pipeline, kept until it is acked.
type packet struct {
	hdr  datatransfer.PacketHeader
	data []byte // owned by the packet until its ack; then back to the pool
}

// pipeline is the connection to the first DataNode of one block's write
// pipeline. The writer's goroutine sends packets (send); the ack goroutine
// started by openPipeline reads the acks and matches them, in order, with
// the packets in queue. A packet is put in queue before it is written, so
// queue's capacity (maxPacketsInFlight) is the backpressure.
type pipeline struct {
	conn  net.Conn
	nodes []*hdfs.DatanodeInfoProto
	// wmu serializes writes to conn: the writer's packets and the
	// heartbeat goroutine's. Packets queued by send wait in batch (seqnos
	// first to last) until flush writes them together.
	wmu struct {
		sync.Mutex
		pw          *datatransfer.PacketWriter
		sums        []byte
		batch       datatransfer.PacketBatch
		first, last int64 // seqnos of the batch's packets
		lastSend    time.Time
	}
	hbStop chan struct{}
	hbDone chan struct{}
	queue  chan *packet
	// lastQueued is the seqno of the packet send queued last (the writer's
	// goroutine only).
	lastQueued int64
	free       chan []byte // data buffers of acked packets, for reuse
	done       chan struct{}
	// popped is a packet the ack goroutine took from queue but could not
	// match with a good ack; it is still unacknowledged. Written by the
	// ack goroutine before done is closed.
	popped *packet

	mu struct {
		sync.Mutex
		acked int64 // highest seqno acknowledged
		// wakeAt is the seqno whose ack wakes the waiter of waitAcked: the
		// ack goroutine does not wake it for every ack.
		wakeAt int64
		err    error // first failure; the pipeline is dead once set
		bad    int   // index in nodes of the node blamed for err (-1: none)
		cond   *sync.Cond
	}
}

// openPipeline connects to nodes[0], sends WRITE_BLOCK and reads the
// response. On a refused setup the error names the bad node (badIndex,
// -1 when unknown).
func openPipeline(ctx context.Context, d *dnDialer, clientName string, lb *hdfs.LocatedBlockProto, nodes []*hdfs.DatanodeInfoProto,
	stage hdfs.OpWriteBlockProto_BlockConstructionStage, newGS uint64, minBytes, maxBytes int64,
	csum datatransfer.DataChecksum, free chan []byte, heartbeat time.Duration) (p *pipeline, badIndex int, err error) {
	if len(nodes) == 0 {
		return nil, -1, fmt.Errorf("%w: block %s has no locations", ErrPipeline, blockName(lb.GetB()))
	}
	addr := dnAddr(nodes[0].GetId())
	conn, err := d.Dial(ctx, addr, lb.GetB(), lb.GetBlockToken())
	if err != nil {
		return nil, 0, fmt.Errorf("%w: connect to %s: %w", ErrPipeline, addr, err)
	}
	stop := watchCtx(ctx, conn)
	defer stop()
	b := copyBlock(lb.GetB())
	targets := nodes[1:]
	req := &hdfs.OpWriteBlockProto{
		Header:                clientHeader(b, lb.GetBlockToken(), clientName),
		Targets:               targets,
		Stage:                 stage.Enum(),
		PipelineSize:          proto.Uint32(uint32(len(nodes))),
		MinBytesRcvd:          proto.Uint64(uint64(minBytes)),
		MaxBytesRcvd:          proto.Uint64(uint64(maxBytes)),
		LatestGenerationStamp: proto.Uint64(newGS),
		RequestedChecksum:     csum.Proto(),
	}
	if len(lb.GetStorageTypes()) > 1 {
		req.TargetStorageTypes = lb.GetStorageTypes()[1:]
	}
	if ids := lb.GetStorageIDs(); len(ids) > 0 {
		req.StorageId = proto.String(ids[0])
		if len(ids) > 1 {
			req.TargetStorageIds = ids[1:]
		}
	}
	br := bufio.NewReaderSize(conn, 4096)
	if err := datatransfer.WriteOp(conn, datatransfer.OpWriteBlock, req); err != nil {
		conn.Close()
		return nil, 0, fmt.Errorf("%w: WRITE_BLOCK to %s: %v", ErrPipeline, addr, err)
	}
	resp := &hdfs.BlockOpResponseProto{}
	if err := datatransfer.ReadDelimited(br, datatransfer.DefaultMaxMessageSize, resp); err != nil {
		conn.Close()
		return nil, 0, fmt.Errorf("%w: WRITE_BLOCK response from %s: %v", ErrPipeline, addr, err)
	}
	if err := opResponseError("WRITE_BLOCK", addr, resp); err != nil {
		conn.Close()
		bad := 0
		if fb := resp.GetFirstBadLink(); fb != "" {
			for i, n := range nodes {
				if dnAddr(n.GetId()) == fb {
					bad = i
				}
			}
		}
		return nil, bad, fmt.Errorf("%w: %w", ErrPipeline, err)
	}
	p = &pipeline{
		conn:   conn,
		nodes:  nodes,
		hbStop: make(chan struct{}),
		hbDone: make(chan struct{}),
		queue:  make(chan *packet, maxPacketsInFlight),
		free:   free,
		done:   make(chan struct{}),
	}
	p.mu.cond = sync.NewCond(&p.mu.Mutex)
	p.mu.bad = -1
	p.wmu.pw = datatransfer.NewPacketWriter(conn)
	p.wmu.lastSend = time.Now()
	go p.readAcks(br)
	go p.heartbeats(heartbeat)
	return p, -1, nil
}

// fail records the first error, blaming the first node (the one this
// client talks to) unless failNode named another, and wakes every waiter.
func (p *pipeline) fail(err error) { p.failNode(err, 0) }

func (p *pipeline) failNode(err error, bad int) {
	p.mu.Lock()
	if p.mu.err == nil {
		p.mu.err = err
		p.mu.bad = bad
	}
	p.mu.cond.Broadcast()
	p.mu.Unlock()
	_ = p.conn.Close()
}

func (p *pipeline) errLocked() error { return p.mu.err }

func (p *pipeline) readAcks(br *bufio.Reader) {
	defer close(p.done)
	var ack datatransfer.PipelineAck
	for {
		if err := datatransfer.ReadAck(br, datatransfer.DefaultMaxMessageSize, &ack); err != nil {
			p.fail(fmt.Errorf("%w: reading ack from %s: %v", ErrPipeline, dnAddr(p.nodes[0].GetId()), err))
			return
		}
		if ack.Seqno == datatransfer.HeartbeatSeqno {
			continue
		}
		var pkt *packet
		select {
		case pkt = <-p.queue:
		default:
			p.fail(fmt.Errorf("%w: ack for seqno %d with no packet outstanding", ErrPipeline, ack.Seqno))
			return
		}
		if ack.Seqno != pkt.hdr.Seqno {
			p.popped = pkt
			p.fail(fmt.Errorf("%w: ack for seqno %d, expected %d", ErrPipeline, ack.Seqno, pkt.hdr.Seqno))
			return
		}
		for i, s := range ack.Replies {
			if s != hdfs.Status_SUCCESS {
				node := "?"
				if i < len(p.nodes) {
					node = dnAddr(p.nodes[i].GetId())
				}
				p.popped = pkt
				p.failNode(fmt.Errorf("%w: datanode %s answered %s for packet %d", ErrPipeline, node, s, pkt.hdr.Seqno), i)
				return
			}
		}
		if pkt.data != nil {
			select {
			case p.free <- pkt.data[:0]:
			default:
			}
		}
		p.mu.Lock()
		p.mu.acked = pkt.hdr.Seqno
		if p.mu.acked >= p.mu.wakeAt {
			p.mu.cond.Broadcast()
		}
		last := pkt.hdr.LastPacketInBlock
		p.mu.Unlock()
		if last {
			return
		}
	}
}

// maxPendingPackets is how many packets send gathers before writing them
// (one vectored write of about 1 MiB with 64 KiB packets).
const maxPendingPackets = 16

// send queues pkt for its ack and for writing; the packets queued are
// written together once maxPendingPackets are pending, or by flush. queued
// reports whether pkt went into the queue (and is thus among the unacked
// packets on failure). A full queue is flushed before waiting on it: the
// acks that make room need the packets sent.
func (p *pipeline) send(ctx context.Context, pkt *packet, csum datatransfer.DataChecksum) (queued bool, err error) {
	select {
	case p.queue <- pkt:
	default:
		// Full: wait until a batch fits, not for each ack in turn. The
		// queue holds seqnos lastQueued-cap+1 .. lastQueued, and an ack is
		// counted after its packet left the queue.
		if err := p.waitAcked(ctx, p.lastQueued-int64(cap(p.queue))+maxPendingPackets); err != nil {
			return false, err
		}
		select {
		case p.queue <- pkt:
		case <-p.done:
			return false, p.err()
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	p.lastQueued = pkt.hdr.Seqno
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.wmu.sums = csum.Compute(p.wmu.sums[:0], pkt.data)
	if err := p.wmu.batch.Add(pkt.hdr, p.wmu.sums, pkt.data); err != nil {
		p.fail(fmt.Errorf("%w: packet %d: %v", ErrPipeline, pkt.hdr.Seqno, err))
		return true, p.err()
	}
	if p.wmu.batch.Len() == 1 {
		p.wmu.first = pkt.hdr.Seqno
	}
	p.wmu.last = pkt.hdr.Seqno
	if p.wmu.batch.Len() >= maxPendingPackets || pkt.hdr.LastPacketInBlock || pkt.hdr.SyncBlock {
		return true, p.flushLocked()
	}
	return true, nil
}

// flush writes the packets send queued and has not written yet.
func (p *pipeline) flush() error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	return p.flushLocked()
}

func (p *pipeline) flushLocked() error {
	if p.wmu.batch.Len() == 0 {
		return nil
	}
	bufs := net.Buffers(p.wmu.batch.Buffers())
	first, last := p.wmu.first, p.wmu.last
	_, err := bufs.WriteTo(p.conn) // consumes the local copy of the slice
	p.wmu.batch.Reset()
	p.wmu.lastSend = time.Now()
	if err != nil {
		p.fail(fmt.Errorf("%w: sending packets %d to %d to %s: %v", ErrPipeline, first, last, dnAddr(p.nodes[0].GetId()), err))
		return p.err()
	}
	return nil
}

// waitAcked blocks until seqno is acked or the pipeline fails. ctx ending
// kills the pipeline (the cond cannot watch ctx).
func (p *pipeline) waitAcked(ctx context.Context, seqno int64) error {
	if err := p.flush(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { p.fail(ctx.Err()) })
	defer stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.wakeAt = seqno
	for p.mu.acked < seqno && p.mu.err == nil {
		p.mu.cond.Wait()
	}
	if p.mu.acked >= seqno {
		return nil
	}
	return p.errLocked()
}

func (p *pipeline) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.err == nil {
		return fmt.Errorf("%w: pipeline closed", ErrPipeline)
	}
	return p.mu.err
}

// heartbeats sends a heartbeat packet (seqno -1) whenever nothing was
// sent for every, so that the DataNodes do not time an idle pipeline out
// (Hadoop sends one after half the socket timeout, 30 s).
func (p *pipeline) heartbeats(every time.Duration) {
	defer close(p.hbDone)
	t := time.NewTicker(every / 4)
	defer t.Stop()
	for {
		select {
		case <-p.hbStop:
			return
		case <-p.done:
			return
		case <-t.C:
		}
		p.wmu.Lock()
		err := p.flushLocked() // anything left pending goes first
		if err == nil && time.Since(p.wmu.lastSend) >= every {
			err = p.wmu.pw.WritePacket(datatransfer.PacketHeader{Seqno: datatransfer.HeartbeatSeqno}, nil, nil)
			p.wmu.lastSend = time.Now()
		}
		p.wmu.Unlock()
		if err != nil {
			p.fail(fmt.Errorf("%w: sending heartbeat to %s: %v", ErrPipeline, dnAddr(p.nodes[0].GetId()), err))
			return
		}
	}
}

// close tears the connection down and waits for the ack and heartbeat
// goroutines.
func (p *pipeline) close() {
	_ = p.conn.Close()
	<-p.done
	p.stopHeartbeats()
}

func (p *pipeline) stopHeartbeats() {
	select {
	case <-p.hbStop:
	default:
		close(p.hbStop)
	}
	<-p.hbDone
}

// unacked closes the pipeline and returns the packets sent but not
// acknowledged, in order, and the index of the node blamed for the
// failure.
func (p *pipeline) unacked() ([]*packet, int) {
	p.close()
	var out []*packet
	if p.popped != nil {
		out = append(out, p.popped)
	}
	for {
		select {
		case pkt := <-p.queue:
			out = append(out, pkt)
		default:
			p.mu.Lock()
			bad := p.mu.bad
			p.mu.Unlock()
			return out, bad
		}
	}
}
