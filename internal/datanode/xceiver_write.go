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

// writeBlock serves WRITE_BLOCK: one stage of a write pipeline.
//
// Who sends what (Hadoop's rules, by clientName and stage):
//
//	writer                          connect reply  per-packet acks  close reply  replica
//	client, SETUP_CREATE / APPEND   yes            yes              no           RBW
//	client, *_RECOVERY stages       yes            yes              no           RBW taken over (see below)
//	DataNode (clientName ""),       no             no               no           TEMPORARY
//	  SETUP_CREATE (replication)
//	client, TRANSFER_FINALIZED      no             no               yes          TEMPORARY → FINALIZED
//	client, TRANSFER_RBW            no             no               yes          TEMPORARY → RBW
//
// Pipeline recovery (the client rebuilt the pipeline under a new generation
// stamp, latestGenerationStamp): PIPELINE_SETUP_STREAMING_RECOVERY continues
// the RBW replica from its acknowledged length (storage RecoverRBW), the
// client resending from there; PIPELINE_SETUP_APPEND_RECOVERY reopens a
// replica of minBytesRcvd bytes (RecoverAppend); PIPELINE_CLOSE_RECOVERY
// finalizes the replica at once (RecoverClose) and reports it RECEIVED
// before the connect reply: the packets a client may still send (the last
// one, again) are acknowledged without being written.
func (x *xceiver) writeBlock(ctx context.Context, req *hdfs.OpWriteBlockProto) error {
	hdr := req.GetHeader()
	eb := hdr.GetBaseHeader().GetBlock()
	isClient := hdr.GetClientName() != ""
	stage := req.GetStage()
	isTransfer := stage == hdfs.OpWriteBlockProto_TRANSFER_RBW || stage == hdfs.OpWriteBlockProto_TRANSFER_FINALIZED
	acks := isClient && !isTransfer
	fail := func(st hdfs.Status, badLink string, err error) error {
		if acks || isTransfer {
			_ = x.conn.SetWriteDeadline(time.Now().Add(opTimeout))
			_ = datatransfer.WriteResponse(x.conn, &hdfs.BlockOpResponseProto{Status: st.Enum(),
				FirstBadLink: proto.String(badLink), Message: proto.String(err.Error())})
		}
		return err
	}
	bp, err := x.dn.pool(eb.GetPoolId())
	if err != nil {
		return fail(hdfs.Status_ERROR, "", err)
	}
	ck, err := datatransfer.ChecksumFromProto(req.GetRequestedChecksum())
	if err != nil {
		return fail(hdfs.Status_ERROR, "", err)
	}
	b := blockOf(eb)
	newGS := int64(req.GetLatestGenerationStamp())
	minBytes, maxBytes := int64(req.GetMinBytesRcvd()), int64(req.GetMaxBytesRcvd())
	recovery := stage == hdfs.OpWriteBlockProto_PIPELINE_SETUP_STREAMING_RECOVERY ||
		stage == hdfs.OpWriteBlockProto_PIPELINE_SETUP_APPEND_RECOVERY ||
		stage == hdfs.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY
	if recovery && (!isClient || newGS == 0) {
		err = fmt.Errorf("datanode: %v of %v needs a client name and a new generation stamp", stage, b)
		return fail(hdfs.Status_ERROR, "", err)
	}
	var w *storage.ReplicaWriter
	var closed storage.Replica // PIPELINE_CLOSE_RECOVERY: the finalized replica
	switch {
	case isTransfer || (stage == hdfs.OpWriteBlockProto_PIPELINE_SETUP_CREATE && !isClient):
		w, err = bp.CreateTemporary(b, ck, copyReservation(b))
	case stage == hdfs.OpWriteBlockProto_PIPELINE_SETUP_CREATE:
		w, err = bp.CreateRBW(b, ck, defaultBlockRes)
	case stage == hdfs.OpWriteBlockProto_PIPELINE_SETUP_APPEND:
		if newGS == 0 {
			newGS = b.GenStamp
		}
		b.NumBytes = minBytes
		w, err = bp.Append(b, newGS, ck, defaultBlockRes)
	case stage == hdfs.OpWriteBlockProto_PIPELINE_SETUP_STREAMING_RECOVERY:
		w, err = bp.RecoverRBW(b, newGS, minBytes, maxBytes, ck, defaultBlockRes)
	case stage == hdfs.OpWriteBlockProto_PIPELINE_SETUP_APPEND_RECOVERY:
		w, err = bp.RecoverAppend(b, newGS, minBytes, ck, defaultBlockRes)
	case stage == hdfs.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY:
		closed, err = bp.RecoverClose(b, newGS, minBytes)
	default:
		err = fmt.Errorf("%w: write pipeline stage %v", ErrUnsupported, stage)
		return fail(hdfs.Status_ERROR_UNSUPPORTED, "", err)
	}
	if err != nil {
		st := hdfs.Status_ERROR
		if errors.Is(err, storage.ErrReplicaExists) {
			st = hdfs.Status_ERROR_EXISTS
		}
		if recovery {
			x.log.Info("pipeline recovery refused", "stage", stage.String(), "block", b.String(), "err", err)
		}
		return fail(st, "", err)
	}
	if isClient && !isTransfer {
		x.dn.act.countClient(x.conn, &x.dn.act.writesLocal, &x.dn.act.writesRemote)
	}
	// Until the pipeline is set up a new replica holds nothing worth
	// keeping; an appended or recovered one keeps its bytes whatever
	// happens.
	setUp := stage == hdfs.OpWriteBlockProto_PIPELINE_SETUP_APPEND || recovery
	var sink replicaSink = w
	if w == nil {
		sink = &closedReplica{rep: closed}
	} else {
		defer func() {
			if setUp {
				_ = w.Close() // an unfinished RBW stays for block recovery
			} else {
				_ = w.Abort()
			}
		}()
		// A recovery that takes the replica over ends this stage now, even
		// when its upstream went silent without closing the connection.
		w.OnStop(func() {
			x.log.Info("replica taken over, dropping the old pipeline's connection", "block", b.String())
			_ = x.conn.Close()
		})
	}

	// Downstream.
	var mirror net.Conn
	var mirrorBr *bufio.Reader
	if targets := req.GetTargets(); len(targets) > 0 {
		addr := xferAddrOf(targets[0])
		dctx, cancel := context.WithTimeout(ctx, connectTimeout)
		mirror, err = x.dn.dialer.Dial(dctx, addr)
		cancel()
		if err != nil {
			return fail(hdfs.Status_ERROR, addr, fmt.Errorf("datanode: connecting to mirror %s: %w", addr, err))
		}
		defer mirror.Close()
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
			return fail(hdfs.Status_ERROR, addr, fmt.Errorf("datanode: mirror %s: %w", addr, err))
		}
		mirrorBr = bufio.NewReader(mirror)
		if acks {
			var resp hdfs.BlockOpResponseProto
			if err := datatransfer.ReadDelimited(mirrorBr, datatransfer.DefaultMaxMessageSize, &resp); err != nil {
				return fail(hdfs.Status_ERROR, addr, fmt.Errorf("datanode: mirror %s: %w", addr, err))
			}
			if resp.GetStatus() != hdfs.Status_SUCCESS {
				bad := resp.GetFirstBadLink()
				if bad == "" {
					bad = addr
				}
				return fail(resp.GetStatus(), bad, fmt.Errorf("datanode: mirror %s refused the write: %s", addr, resp.GetMessage()))
			}
		}
		_ = mirror.SetDeadline(time.Time{})
	}
	if w != nil && mirror != nil && isClient && !isTransfer {
		w.SkipVerification() // the pipeline's last node verifies
	}
	r := &receiver{x: x, src: x.conn, in: x.br, w: sink, bp: bp, mirror: mirror}
	switch {
	case w == nil:
		// Close recovery: the NameNode learns the finalized replica (and
		// its new stamp) before the writer hears the pipeline is back
		// (downstream nodes have reported theirs before they answered).
		rctx, cancel := context.WithTimeout(ctx, rpcTimeout)
		x.dn.notifyReceived(rctx, bp.ID, closed, "")
		cancel()
		r.quiet = true
	case stage == hdfs.OpWriteBlockProto_TRANSFER_RBW:
		// The copy joins the recovered pipeline as an RBW; the pipeline
		// reports it once finalized.
		r.finish, r.quiet = w.ConvertToRBW, true
	}
	if acks {
		_ = x.conn.SetWriteDeadline(time.Now().Add(opTimeout))
		if err := datatransfer.WriteResponse(x.conn, &hdfs.BlockOpResponseProto{Status: hdfs.Status_SUCCESS.Enum(), FirstBadLink: proto.String("")}); err != nil {
			return err
		}
	}

	setUp = true
	if acks && w != nil && stage != hdfs.OpWriteBlockProto_PIPELINE_SETUP_STREAMING_RECOVERY {
		x.dn.notifyReceiving(bp.ID, w.Replica())
	}
	if r.finish == nil {
		r.finish = sink.Finalize
	}
	if acks {
		r.resp = newResponder(x.conn, mirrorBr, sink)
		if !r.resp.inline {
			go r.resp.run()
		}
	}
	err = r.receive(ctx)
	if src := req.GetSource(); err != nil && w != nil && !isClient && src != nil && errors.Is(err, datatransfer.ErrChecksum) {
		// A DataNode sent a copy that does not match its checksums: its
		// replica is corrupt. The copy goes first.
		blk := w.Replica().Block
		_ = w.Close()
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
	if err == nil && isTransfer {
		_ = x.conn.SetWriteDeadline(time.Now().Add(opTimeout))
		err = datatransfer.WriteResponse(x.conn, &hdfs.BlockOpResponseProto{Status: hdfs.Status_SUCCESS.Enum(), FirstBadLink: proto.String("")})
	}
	return err
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
	w       replicaSink
	// finish completes the replica on the last packet (Finalize, or
	// ConvertToRBW for TRANSFER_RBW); quiet: the result is not reported
	// RECEIVED before the last ack (already reported, or still an RBW).
	finish func(length int64) (storage.Replica, error)
	quiet  bool
	bp     *storage.BlockPool
	mirror net.Conn
	resp   *responder // nil when the writer expects no acks

	// The batch being gathered, and buffers reused from batch to batch.
	batch     []datatransfer.Packet
	stored    []storage.PacketData
	prefixes  []byte // the mirrored packets' prefixes, back to back
	ends      []int  // where each prefix ends in prefixes
	mirrorBuf net.Buffers
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

// mirrorBatch sends the batch downstream in one vectored write. A failed
// mirror is remembered: the stage goes on storing and acknowledging (with
// an error for the downstream nodes), as Hadoop's does.
func (r *receiver) mirrorBatch(batch []datatransfer.Packet) {
	if r.mirror == nil || r.mirrorErr != nil {
		return
	}
	r.prefixes, r.ends = r.prefixes[:0], r.ends[:0]
	var err error
	for _, pkt := range batch {
		h := pkt.Header
		h.DataLen = int32(len(pkt.Data))
		if r.prefixes, err = datatransfer.AppendPacketPrefix(r.prefixes, h, pkt.Checksums); err != nil {
			break
		}
		r.ends = append(r.ends, len(r.prefixes))
	}
	if err == nil {
		r.mirrorBuf = r.mirrorBuf[:0]
		start := 0
		for i, pkt := range batch {
			r.mirrorBuf = append(r.mirrorBuf, r.prefixes[start:r.ends[i]])
			if len(pkt.Data) > 0 {
				r.mirrorBuf = append(r.mirrorBuf, pkt.Data)
			}
			start = r.ends[i]
		}
		_ = r.mirror.SetWriteDeadline(time.Now().Add(writeTimeout))
		nb := r.mirrorBuf // WriteTo consumes its receiver
		_, err = nb.WriteTo(r.mirror)
	}
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
	finish := r.finish
	if finish == nil {
		finish = r.w.Finalize
	}
	rep, err := finish(r.w.BytesOnDisk())
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
// storage.ReplicaWriter, or a closedReplica.
type replicaSink interface {
	Replica() storage.Replica
	WritePackets(pkts []storage.PacketData) (int, error)
	Sync() error
	BytesOnDisk() int64
	SetBytesAcked(n int64)
	Finalize(length int64) (storage.Replica, error)
}

// closedReplica is the sink of a PIPELINE_CLOSE_RECOVERY stage, whose replica
// was finalized during setup: packets resent by the writer may only carry
// bytes the replica already has, and are not written again.
type closedReplica struct{ rep storage.Replica }

func (c *closedReplica) Replica() storage.Replica { return c.rep }
func (c *closedReplica) Sync() error              { return nil }
func (c *closedReplica) BytesOnDisk() int64       { return c.rep.NumBytes }
func (c *closedReplica) SetBytesAcked(int64)      {}

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
