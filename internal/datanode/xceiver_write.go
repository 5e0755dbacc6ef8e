package datanode

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"google.golang.org/protobuf/proto"
)

// ackQueueLen bounds the packets received but not yet acknowledged upstream.
const ackQueueLen = 128

// writeKind is one way of serving WRITE_BLOCK, chosen by the request's
// stage and by who sends it: a client (clientName set) or a DataNode. The
// kinds differ only in the fields below; every kind then runs the same
// stage: open the replica, connect the mirror, reply, receive packets
// (receiver), finish the replica on the last packet, acknowledge.
//
//	kind                 stage (sender)                        replies             replica
//	create               PIPELINE_SETUP_CREATE (client)        connect, acks       RBW → FINALIZED
//	replication          PIPELINE_SETUP_CREATE (DataNode)      none                TEMPORARY → FINALIZED
//	append               PIPELINE_SETUP_APPEND                 connect, acks       FINALIZED → RBW → FINALIZED
//	streaming recovery   PIPELINE_SETUP_STREAMING_RECOVERY     connect, acks       RBW cut to its acked length, new stamp
//	append recovery      PIPELINE_SETUP_APPEND_RECOVERY        connect, acks       FINALIZED or RBW reopened, new stamp
//	close recovery       PIPELINE_CLOSE_RECOVERY               connect, acks       FINALIZED at once, new stamp
//	transfer finalized   TRANSFER_FINALIZED                    closing response    TEMPORARY → FINALIZED
//	transfer RBW         TRANSFER_RBW                          closing response    TEMPORARY → RBW (not reported)
//
// The recovery kinds need a client name and a new generation stamp
// (latestGenerationStamp): the client rebuilt its pipeline under that
// stamp. Close recovery reports its replica RECEIVED before the connect
// reply; the packets a client may still send (the last one, again) are
// acknowledged without being written.
type writeKind struct {
	name string
	// open takes or creates the replica and returns where packets go.
	open func(bp *storage.BlockPool, a writeArgs) (replicaSink, error)
	// acks: a client's pipeline. The connect reply and one ack per packet
	// go upstream; only the pipeline's tail verifies checksums.
	acks bool
	// closeReply: one response after the last packet (TRANSFER_*).
	closeReply bool
	// recovery: the client rebuilt the pipeline; refusals are logged.
	recovery bool
	// keep: the replica already holds bytes worth keeping, so a failure
	// before the pipeline is set up closes it instead of aborting it.
	keep bool
	// receiving: RECEIVING_BLOCK is queued once the pipeline is set up.
	receiving bool
	// report: when the finished replica is reported RECEIVED.
	report reportAt
	// blameSource: a checksum mismatch means the replica of the sending
	// DataNode (the request's source) is corrupt; it is reported.
	blameSource bool
}

// reportAt says when a write reports its replica RECEIVED.
type reportAt int

const (
	// reportOnLast: finalized on the last packet and reported before that
	// packet's ack (a writer completes its file right after the ack).
	reportOnLast reportAt = iota
	// reportAtSetup: finalized during setup and reported before the
	// connect reply (downstream nodes have reported theirs before they
	// answered).
	reportAtSetup
	// reportNever: left an RBW for the recovered pipeline, which reports
	// it once finalized.
	reportNever
)

// writeArgs is what the open functions need of a WRITE_BLOCK request.
type writeArgs struct {
	b                  storage.Block
	newGS              int64 // latestGenerationStamp (0: none)
	minBytes, maxBytes int64
	ck                 datatransfer.DataChecksum
	st                 storage.StorageType // the volume type asked for
	// reserve is the space a replica being written is promised: the
	// DataNode's dfs.blocksize (Hadoop's estimateBlockSize).
	reserve int64
}

var (
	kindCreate = &writeKind{name: "create", acks: true, receiving: true,
		open: func(bp *storage.BlockPool, a writeArgs) (replicaSink, error) {
			return sinkOf(bp.CreateOn(a.st, storage.RBW, a.b, a.ck, a.reserve))
		}}
	kindReplication = &writeKind{name: "replication", blameSource: true, open: openTemporary}
	kindAppend      = &writeKind{name: "append", acks: true, keep: true, receiving: true,
		open: func(bp *storage.BlockPool, a writeArgs) (replicaSink, error) {
			newGS := a.newGS
			if newGS == 0 {
				newGS = a.b.GenStamp
			}
			b := a.b
			b.NumBytes = a.minBytes
			return sinkOf(bp.Append(b, newGS, a.ck, a.reserve))
		}}
	kindStreamingRecovery = &writeKind{name: "streaming recovery", acks: true, recovery: true, keep: true,
		open: func(bp *storage.BlockPool, a writeArgs) (replicaSink, error) {
			return sinkOf(bp.RecoverRBW(a.b, a.newGS, a.minBytes, a.maxBytes, a.ck, a.reserve))
		}}
	kindAppendRecovery = &writeKind{name: "append recovery", acks: true, recovery: true, keep: true, receiving: true,
		open: func(bp *storage.BlockPool, a writeArgs) (replicaSink, error) {
			return sinkOf(bp.RecoverAppend(a.b, a.newGS, a.minBytes, a.ck, a.reserve))
		}}
	kindCloseRecovery = &writeKind{name: "close recovery", acks: true, recovery: true, keep: true, report: reportAtSetup,
		open: func(bp *storage.BlockPool, a writeArgs) (replicaSink, error) {
			rep, err := bp.RecoverClose(a.b, a.newGS, a.minBytes)
			if err != nil {
				return nil, err
			}
			return &closedReplica{rep: rep}, nil
		}}
	kindTransferFinalized = &writeKind{name: "transfer finalized", closeReply: true, open: openTemporary}
	kindTransferRBW       = &writeKind{name: "transfer RBW", closeReply: true, report: reportNever,
		open: func(bp *storage.BlockPool, a writeArgs) (replicaSink, error) {
			w, err := bp.CreateOn(a.st, storage.Temporary, a.b, a.ck, copyReservation(a.b))
			if err != nil {
				return nil, err
			}
			return rbwCopy{w}, nil
		}}
)

// clientKinds and datanodeKinds choose the kind by stage.
var (
	clientKinds = map[hdfs.OpWriteBlockProto_BlockConstructionStage]*writeKind{
		hdfs.OpWriteBlockProto_PIPELINE_SETUP_CREATE:             kindCreate,
		hdfs.OpWriteBlockProto_PIPELINE_SETUP_APPEND:             kindAppend,
		hdfs.OpWriteBlockProto_PIPELINE_SETUP_STREAMING_RECOVERY: kindStreamingRecovery,
		hdfs.OpWriteBlockProto_PIPELINE_SETUP_APPEND_RECOVERY:    kindAppendRecovery,
		hdfs.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY:           kindCloseRecovery,
		hdfs.OpWriteBlockProto_TRANSFER_FINALIZED:                kindTransferFinalized,
		hdfs.OpWriteBlockProto_TRANSFER_RBW:                      kindTransferRBW,
	}
	datanodeKinds = map[hdfs.OpWriteBlockProto_BlockConstructionStage]*writeKind{
		hdfs.OpWriteBlockProto_PIPELINE_SETUP_CREATE: kindReplication,
		hdfs.OpWriteBlockProto_TRANSFER_FINALIZED:    kindTransferFinalized,
		hdfs.OpWriteBlockProto_TRANSFER_RBW:          kindTransferRBW,
	}
)

// writeKindOf returns the kind of a WRITE_BLOCK, or the status and error to
// refuse it with.
func writeKindOf(stage hdfs.OpWriteBlockProto_BlockConstructionStage, client bool, b storage.Block) (*writeKind, hdfs.Status, error) {
	kinds := datanodeKinds
	if client {
		kinds = clientKinds
	}
	if k := kinds[stage]; k != nil {
		return k, hdfs.Status_SUCCESS, nil
	}
	if k := clientKinds[stage]; k != nil && k.recovery {
		return nil, hdfs.Status_ERROR, fmt.Errorf("datanode: %v of %v needs a client name and a new generation stamp", stage, b)
	}
	if client {
		return nil, hdfs.Status_ERROR_UNSUPPORTED, fmt.Errorf("%w: write pipeline stage %v", ErrUnsupported, stage)
	}
	return nil, hdfs.Status_ERROR_UNSUPPORTED, fmt.Errorf("%w: write pipeline stage %v from a DataNode (no client name)", ErrUnsupported, stage)
}

func openTemporary(bp *storage.BlockPool, a writeArgs) (replicaSink, error) {
	return sinkOf(bp.CreateOn(a.st, storage.Temporary, a.b, a.ck, copyReservation(a.b)))
}

// sinkOf turns a storage call's writer into a sink (nil on error, not a
// nil writer in an interface).
func sinkOf(w *storage.ReplicaWriter, err error) (replicaSink, error) {
	if err != nil {
		return nil, err
	}
	return w, nil
}

// writeBlock serves WRITE_BLOCK: one stage of a write pipeline, as its
// writeKind says.
func (x *xceiver) writeBlock(ctx context.Context, req *hdfs.OpWriteBlockProto) error {
	hdr := req.GetHeader()
	eb := hdr.GetBaseHeader().GetBlock()
	client := hdr.GetClientName() != ""
	args := writeArgs{b: blockOf(eb), newGS: int64(req.GetLatestGenerationStamp()),
		minBytes: int64(req.GetMinBytesRcvd()), maxBytes: int64(req.GetMaxBytesRcvd()),
		st: storage.StorageType(req.GetStorageType()), reserve: x.dn.blockReserve()}
	k, st, err := writeKindOf(req.GetStage(), client, args.b)
	// A refusal is answered to writers that read a connect reply or a
	// closing response.
	replies := client
	if k != nil {
		replies = k.acks || k.closeReply
	}
	fail := func(st hdfs.Status, badLink string, err error) error {
		if replies {
			_ = x.conn.SetWriteDeadline(time.Now().Add(opTimeout))
			_ = datatransfer.WriteResponse(x.conn, &hdfs.BlockOpResponseProto{Status: st.Enum(),
				FirstBadLink: proto.String(badLink), Message: proto.String(err.Error())})
		}
		return err
	}
	if err != nil {
		return fail(st, "", err)
	}
	if k.recovery && args.newGS == 0 {
		return fail(hdfs.Status_ERROR, "", fmt.Errorf("datanode: %v of %v needs a client name and a new generation stamp", req.GetStage(), args.b))
	}
	bp, err := x.dn.pool(eb.GetPoolId())
	if err != nil {
		return fail(hdfs.Status_ERROR, "", err)
	}
	if args.ck, err = datatransfer.ChecksumFromProto(req.GetRequestedChecksum()); err != nil {
		return fail(hdfs.Status_ERROR, "", err)
	}
	sink, err := k.open(bp, args)
	if err != nil {
		x.dn.noteIOError(err)
		st := hdfs.Status_ERROR
		if errors.Is(err, storage.ErrReplicaExists) {
			st = hdfs.Status_ERROR_EXISTS
		}
		if k.recovery {
			x.log.Info("pipeline recovery refused", "stage", req.GetStage().String(), "block", args.b.String(), "err", err)
		} else {
			// The sender of a copy does not wait for this answer; say
			// here why the copy was not taken.
			x.peerLog.Warn("write refused", "stage", req.GetStage().String(), "block", args.b.String(), "remote", x.remote, "err", err)
		}
		return fail(st, "", err)
	}
	if k.acks {
		x.dn.act.countClient(x.conn, &x.dn.act.writesLocal, &x.dn.act.writesRemote)
	}
	// Until the pipeline is set up a new replica holds nothing worth
	// keeping; after that an unfinished RBW stays for block recovery (a
	// TEMPORARY one is deleted either way).
	setUp := k.keep
	defer func() {
		if setUp {
			_ = sink.Close()
		} else {
			_ = sink.Abort()
		}
	}()
	// A recovery that takes the replica over ends this stage now, even
	// when its upstream went silent without closing the connection.
	sink.OnStop(func() {
		x.log.Info("replica taken over, dropping the old pipeline's connection", "block", args.b.String())
		_ = x.conn.Close()
	})

	mirror, mirrorBr, st, badLink, err := x.connectMirror(ctx, req, k.acks)
	if err != nil {
		return fail(st, badLink, err)
	}
	if mirror != nil {
		defer mirror.Close()
		if k.acks {
			sink.SkipVerification() // the pipeline's last node verifies
		}
	}
	r := &receiver{x: x, src: x.conn, in: x.br, w: sink, bp: bp, mirror: mirror, quiet: k.report != reportOnLast}
	if k.report == reportAtSetup {
		rctx, cancel := context.WithTimeout(ctx, rpcTimeout)
		x.dn.notifyReceived(rctx, bp.ID, sink.Replica(), "")
		cancel()
	}
	if k.acks {
		_ = x.conn.SetWriteDeadline(time.Now().Add(opTimeout))
		if err := datatransfer.WriteResponse(x.conn, &hdfs.BlockOpResponseProto{Status: hdfs.Status_SUCCESS.Enum(), FirstBadLink: proto.String("")}); err != nil {
			return err
		}
	}
	setUp = true
	if k.receiving {
		x.dn.notifyReceiving(bp.ID, sink.Replica())
	}
	if k.acks {
		r.resp = newResponder(x.conn, mirrorBr, sink)
		if !r.resp.inline {
			go r.resp.run()
		}
	}
	err = r.receive(ctx)
	x.dn.noteIOError(err)
	if src := req.GetSource(); err != nil && k.blameSource && src != nil && errors.Is(err, datatransfer.ErrChecksum) {
		// A DataNode sent a copy that does not match its checksums: its
		// replica is corrupt. The copy goes first.
		blk := sink.Replica().Block
		_ = sink.Close()
		x.dn.reportBadReplica(ctx, bp.ID, blk, src)
	}
	if r.resp != nil {
		if !r.resp.inline {
			close(r.resp.q)
			if err != nil && mirror != nil {
				_ = mirror.Close() // unblocks a responder waiting for a downstream ack
			}
			<-r.resp.done
		}
		if err == nil {
			err = r.resp.err
		}
	}
	if err == nil && k.closeReply {
		_ = x.conn.SetWriteDeadline(time.Now().Add(opTimeout))
		err = datatransfer.WriteResponse(x.conn, &hdfs.BlockOpResponseProto{Status: hdfs.Status_SUCCESS.Enum(), FirstBadLink: proto.String("")})
	}
	return err
}

// connectMirror connects to the request's first target, if any, and sends
// it the request for the rest of the pipeline; with wantReply it reads the
// downstream connect reply too. On failure it returns the status and the
// first bad link to answer upstream with.
func (x *xceiver) connectMirror(ctx context.Context, req *hdfs.OpWriteBlockProto, wantReply bool) (net.Conn, *bufio.Reader, hdfs.Status, string, error) {
	targets := req.GetTargets()
	if len(targets) == 0 {
		return nil, nil, hdfs.Status_SUCCESS, "", nil
	}
	addr := xferAddrOf(targets[0])
	dctx, cancel := context.WithTimeout(ctx, connectTimeout)
	bh := req.GetHeader().GetBaseHeader()
	mirror, err := x.dn.dialProtected(dctx, addr, bh.GetBlock().GetPoolId(), bh.GetToken())
	cancel()
	if err != nil {
		return nil, nil, hdfs.Status_ERROR, addr, fmt.Errorf("datanode: connecting to mirror %s: %w", addr, err)
	}
	failed := func(st hdfs.Status, bad string, err error) (net.Conn, *bufio.Reader, hdfs.Status, string, error) {
		_ = mirror.Close()
		return nil, nil, st, bad, err
	}
	fwd := proto.Clone(req).(*hdfs.OpWriteBlockProto)
	fwd.Targets = targets[1:]
	if len(fwd.TargetStorageTypes) > 0 {
		fwd.TargetStorageTypes = fwd.TargetStorageTypes[1:]
	}
	if len(fwd.TargetStorageIds) > 0 {
		fwd.TargetStorageIds = fwd.TargetStorageIds[1:]
	}
	if len(fwd.TargetPinnings) > 0 {
		fwd.TargetPinnings = fwd.TargetPinnings[1:]
	}
	_ = mirror.SetDeadline(time.Now().Add(opTimeout))
	if err := datatransfer.WriteOp(mirror, datatransfer.OpWriteBlock, fwd); err != nil {
		return failed(hdfs.Status_ERROR, addr, fmt.Errorf("datanode: mirror %s: %w", addr, err))
	}
	br := bufio.NewReader(mirror)
	if wantReply {
		var resp hdfs.BlockOpResponseProto
		if err := datatransfer.ReadDelimited(br, datatransfer.DefaultMaxMessageSize, &resp); err != nil {
			return failed(hdfs.Status_ERROR, addr, fmt.Errorf("datanode: mirror %s: %w", addr, err))
		}
		if resp.GetStatus() != hdfs.Status_SUCCESS {
			bad := resp.GetFirstBadLink()
			if bad == "" {
				bad = addr
			}
			return failed(resp.GetStatus(), bad, fmt.Errorf("datanode: mirror %s refused the write: %s", addr, resp.GetMessage()))
		}
	}
	_ = mirror.SetDeadline(time.Time{})
	return mirror, br, hdfs.Status_SUCCESS, "", nil
}

// receiver reads the packets of one pipeline stage, mirrors them and writes
// them to the replica. It runs on the connection's goroutine.
//
// Packets are handled in batches: every packet already in the read window
// when the previous one is parsed joins the batch, and a batch ends when the
// next packet is not wholly received yet (so nothing waits for more data),
// or at a heartbeat, an hsync or the last packet. A batch is mirrored with
// one vectored write, stored with one (storage WritePackets) and, at the
// pipeline's tail, acknowledged with one write. An idle writer's packets
// are thus handled one by one as before; a busy one's in bursts, with a
// fraction of the system calls.
type receiver struct {
	x   *xceiver
	src net.Conn      // where packets come from
	in  *bufio.Reader // buffered src
	// delHint is the node the NameNode may delete a replica from once this
	// one is reported (REPLACE_BLOCK).
	delHint string
	// w stores the packets; its Finalize completes the replica on the
	// last packet. quiet: the result is not reported RECEIVED before the
	// last ack (already reported, or still an RBW).
	w      replicaSink
	quiet  bool
	bp     *storage.BlockPool
	mirror net.Conn
	resp   *responder // nil when the writer expects no acks
	// throttle, if set, is told the bytes of each batch stored (a
	// balancer move's share of dfs.datanode.balance.bandwidthPerSec).
	throttle func(n int64) error

	// The batch being gathered, and buffers reused from batch to batch.
	batch     []datatransfer.Packet
	stored    []storage.PacketData
	mirrored  datatransfer.PacketBatch
	mirrorErr error
}

// maxBatch bounds the packets handled together.
const maxBatch = 64

// writeWindow is the read window of a write pipeline stage: sixteen 64 KiB
// packets.
const writeWindow = 1 << 20

// enqueue hands a packet to the responder; false if the responder stopped.
func (r *receiver) enqueue(it ackItem) bool {
	if r.resp == nil {
		return true
	}
	if r.resp.inline {
		return r.resp.handle(it)
	}
	select {
	case r.resp.q <- it:
		return true
	case <-r.resp.done:
		return false
	}
}

func (r *receiver) receive(ctx context.Context) error {
	win := r.x.dn.windows.Get().(*[]byte)
	defer r.x.dn.windows.Put(win)
	pr := datatransfer.NewPacketReaderWindow(r.in, 0, *win)
	for {
		if !pr.Ready() && len(r.batch) > 0 {
			if done, err := r.flush(ctx); done || err != nil {
				return err
			}
		}
		if len(r.batch) == 0 {
			_ = r.src.SetReadDeadline(time.Now().Add(opTimeout))
		}
		pkt, err := pr.Next()
		if err != nil {
			if len(r.batch) > 0 {
				if done, ferr := r.flush(ctx); done || ferr != nil {
					return ferr
				}
			}
			return fmt.Errorf("datanode: receiving %v: %w", r.w.Replica().Block, err)
		}
		r.batch = append(r.batch, pkt)
		h := pkt.Header
		if h.IsHeartbeat() || h.SyncBlock || h.LastPacketInBlock || len(r.batch) >= maxBatch {
			if done, err := r.flush(ctx); done || err != nil {
				return err
			}
		}
	}
}

// flush mirrors, stores and acknowledges the batch. done reports that the
// stage is over (the last packet was handled, or the responder stopped).
func (r *receiver) flush(ctx context.Context) (done bool, err error) {
	batch := r.batch
	r.batch = r.batch[:0]
	r.mirrorBatch(batch)

	r.stored = r.stored[:0]
	for _, pkt := range batch {
		if len(pkt.Data) > 0 {
			r.stored = append(r.stored, storage.PacketData{Offset: pkt.Header.OffsetInBlock, Data: pkt.Data, Sums: pkt.Checksums})
		}
	}
	var nStored int
	var werr error
	if len(r.stored) > 0 {
		nStored, werr = r.w.WritePackets(r.stored)
		var n int64
		for _, p := range r.stored[:nStored] {
			n += int64(len(p.Data))
		}
		r.x.dn.act.bytesWritten.Add(n)
		if r.throttle != nil {
			if err := r.throttle(n); err != nil {
				return true, fmt.Errorf("datanode: receiving %v: %w", r.w.Replica().Block, err)
			}
		}
	}
	defer func() {
		if r.resp != nil && r.resp.inline {
			if ferr := r.resp.flushAcks(); ferr != nil && err == nil {
				done, err = true, ferr
			}
		}
	}()
	k := 0 // index in r.stored
	for _, pkt := range batch {
		h := pkt.Header
		if h.IsHeartbeat() {
			if !r.enqueue(ackItem{seqno: h.Seqno, status: hdfs.Status_SUCCESS}) {
				return true, r.resp.err
			}
			continue
		}
		if len(pkt.Data) > 0 {
			if k == nStored {
				st := hdfs.Status_ERROR
				if errors.Is(werr, datatransfer.ErrChecksum) {
					st = hdfs.Status_ERROR_CHECKSUM
					r.x.dn.act.verificationFailure.Add(1)
				}
				r.enqueue(ackItem{seqno: h.Seqno, status: st, last: true})
				return true, fmt.Errorf("datanode: writing %v: %w", r.w.Replica().Block, werr)
			}
			k++
		}
		if h.SyncBlock {
			if err := r.w.Sync(); err != nil {
				r.enqueue(ackItem{seqno: h.Seqno, status: hdfs.Status_ERROR, last: true})
				return true, err
			}
		}
		end := h.OffsetInBlock + int64(len(pkt.Data))
		if h.LastPacketInBlock {
			return true, r.finishBlock(ctx, h)
		}
		if !r.enqueue(ackItem{seqno: h.Seqno, end: end, status: hdfs.Status_SUCCESS}) {
			return true, r.resp.err
		}
	}
	return false, nil
}

// mirrorBatch sends the batch downstream in one vectored write, each
// packet exactly as it was read. A failed mirror is remembered: the stage
// goes on storing and acknowledging (with an error for the downstream
// nodes), as Hadoop's does.
func (r *receiver) mirrorBatch(batch []datatransfer.Packet) {
	if r.mirror == nil || r.mirrorErr != nil {
		return
	}
	for _, pkt := range batch {
		r.mirrored.AddRaw(pkt)
	}
	_ = r.mirror.SetWriteDeadline(time.Now().Add(writeTimeout))
	bufs := net.Buffers(r.mirrored.Buffers())
	_, err := bufs.WriteTo(r.mirror) // consumes its receiver
	r.mirrored.Reset()
	if err != nil {
		r.mirrorErr = err
		if r.resp != nil {
			r.resp.mirrorFailed.Store(true)
		}
		r.x.log.Warn("mirror failed", "err", err)
	}
}

// finishBlock completes the replica on the last packet and acknowledges it.
func (r *receiver) finishBlock(ctx context.Context, h datatransfer.PacketHeader) error {
	rep, err := r.w.Finalize(r.w.BytesOnDisk())
	if err != nil {
		r.enqueue(ackItem{seqno: h.Seqno, status: hdfs.Status_ERROR, last: true})
		return fmt.Errorf("datanode: finalizing: %w", err)
	}
	if !r.quiet {
		// The NameNode must know the replica before the writer sees the
		// last ack (the writer completes the file right after it).
		rctx, cancel := context.WithTimeout(ctx, rpcTimeout)
		r.x.dn.notifyReceived(rctx, r.bp.ID, rep, r.delHint)
		cancel()
	}
	r.x.dn.act.blocksWritten.Add(1)
	r.x.log.Debug("block received", "block", rep.Block.String())
	r.enqueue(ackItem{seqno: h.Seqno, end: rep.NumBytes, status: hdfs.Status_SUCCESS, last: true})
	return nil
}

// replicaSink is where a pipeline stage stores the packets it receives: a
// storage.ReplicaWriter, an rbwCopy or a closedReplica.
type replicaSink interface {
	Replica() storage.Replica
	WritePackets(pkts []storage.PacketData) (int, error)
	Sync() error
	BytesOnDisk() int64
	SetBytesAcked(n int64)
	// Finalize completes the replica once length bytes are stored.
	Finalize(length int64) (storage.Replica, error)
	SkipVerification()
	OnStop(f func())
	Close() error
	Abort() error
}

// rbwCopy is the sink of a TRANSFER_RBW copy: its last packet leaves the
// replica an RBW for the recovered pipeline to continue (ConvertToRBW)
// instead of finalizing it.
type rbwCopy struct{ *storage.ReplicaWriter }

func (c rbwCopy) Finalize(length int64) (storage.Replica, error) { return c.ConvertToRBW(length) }

// closedReplica is the sink of a PIPELINE_CLOSE_RECOVERY stage, whose replica
// was finalized during setup: packets resent by the writer may only carry
// bytes the replica already has, and are not written again.
type closedReplica struct{ rep storage.Replica }

func (c *closedReplica) Replica() storage.Replica { return c.rep }
func (c *closedReplica) Sync() error              { return nil }
func (c *closedReplica) BytesOnDisk() int64       { return c.rep.NumBytes }
func (c *closedReplica) SetBytesAcked(int64)      {}
func (c *closedReplica) SkipVerification()        {}
func (c *closedReplica) OnStop(func())            {}
func (c *closedReplica) Close() error             { return nil }
func (c *closedReplica) Abort() error             { return nil }

func (c *closedReplica) WritePackets(pkts []storage.PacketData) (int, error) {
	for i, p := range pkts {
		if p.Offset < 0 || p.Offset+int64(len(p.Data)) > c.rep.NumBytes {
			return i, fmt.Errorf("%w: packet at %d of %d bytes after %v was finalized with %d bytes",
				storage.ErrLength, p.Offset, len(p.Data), c.rep.Block, c.rep.NumBytes)
		}
	}
	return len(pkts), nil
}

func (c *closedReplica) Finalize(length int64) (storage.Replica, error) {
	if length != c.rep.NumBytes {
		return storage.Replica{}, fmt.Errorf("%w: %v finalized with %d bytes, not %d", storage.ErrLength, c.rep.Block, c.rep.NumBytes, length)
	}
	return c.rep, nil
}
