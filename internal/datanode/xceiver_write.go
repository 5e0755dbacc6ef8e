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
		w, err = bp.CreateTemporary(b, ck, defaultBlockRes)
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
	}

	// Downstream.
	var mirror net.Conn
	var mirrorBr *bufio.Reader
	if targets := req.GetTargets(); len(targets) > 0 {
		addr := xferAddrOf(targets[0])
		dctx, cancel := context.WithTimeout(ctx, connectTimeout)
		var d net.Dialer
		mirror, err = d.DialContext(dctx, "tcp", addr)
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
	// bufs and nb hold a mirrored packet for one vectored write without
	// allocating per packet.
	bufs [2][]byte
	nb   net.Buffers
}

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
	conn := r.src
	pr := datatransfer.NewPacketReader(r.in, 0)
	var pw *datatransfer.PacketWriter
	if r.mirror != nil {
		pw = datatransfer.NewPacketWriter(r.mirror)
	}
	var mirrorErr error
	for {
		_ = conn.SetReadDeadline(time.Now().Add(opTimeout))
		pkt, err := pr.Next()
		if err != nil {
			return fmt.Errorf("datanode: receiving %v: %w", r.w.Replica().Block, err)
		}
		h := pkt.Header
		if r.mirror != nil && mirrorErr == nil {
			bufs, err := pw.Buffers(h, pkt.Checksums, pkt.Data)
			if err == nil {
				_ = r.mirror.SetWriteDeadline(time.Now().Add(writeTimeout))
				r.nb = r.bufs[:copy(r.bufs[:], bufs)]
				_, err = r.nb.WriteTo(r.mirror)
			}
			if err != nil {
				mirrorErr = err
				if r.resp != nil {
					r.resp.mirrorFailed.Store(true)
				}
				r.x.log.Warn("mirror failed", "err", err)
			}
		}
		if h.IsHeartbeat() {
			if !r.enqueue(ackItem{seqno: h.Seqno, status: hdfs.Status_SUCCESS}) {
				return r.resp.err
			}
			continue
		}
		if len(pkt.Data) > 0 {
			if err := r.w.WritePacket(h.OffsetInBlock, pkt.Data, pkt.Checksums); err != nil {
				st := hdfs.Status_ERROR
				if errors.Is(err, datatransfer.ErrChecksum) {
					st = hdfs.Status_ERROR_CHECKSUM
				}
				r.enqueue(ackItem{seqno: h.Seqno, status: st, last: true})
				return fmt.Errorf("datanode: writing %v: %w", r.w.Replica().Block, err)
			}
		}
		if h.SyncBlock {
			if err := r.w.Sync(); err != nil {
				r.enqueue(ackItem{seqno: h.Seqno, status: hdfs.Status_ERROR, last: true})
				return err
			}
		}
		end := h.OffsetInBlock + int64(len(pkt.Data))
		if h.LastPacketInBlock {
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
				// The NameNode must know the replica before the writer sees
				// the last ack (the writer completes the file right after it).
				rctx, cancel := context.WithTimeout(ctx, rpcTimeout)
				r.x.dn.notifyReceived(rctx, r.bp.ID, rep, r.delHint)
				cancel()
			}
			r.x.log.Debug("block received", "block", rep.Block.String())
			r.enqueue(ackItem{seqno: h.Seqno, end: rep.NumBytes, status: hdfs.Status_SUCCESS, last: true})
			return nil
		}
		if !r.enqueue(ackItem{seqno: h.Seqno, end: end, status: hdfs.Status_SUCCESS}) {
			return r.resp.err
		}
	}
}

// replicaSink is where a pipeline stage stores the packets it receives: a
// storage.ReplicaWriter, or a closedReplica.
type replicaSink interface {
	Replica() storage.Replica
	WritePacket(offsetInBlock int64, data, sums []byte) error
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

func (c *closedReplica) WritePacket(off int64, data, _ []byte) error {
	if off < 0 || off+int64(len(data)) > c.rep.NumBytes {
		return fmt.Errorf("%w: packet at %d of %d bytes after %v was finalized with %d bytes",
			storage.ErrLength, off, len(data), c.rep.Block, c.rep.NumBytes)
	}
	return nil
}

func (c *closedReplica) Finalize(length int64) (storage.Replica, error) {
	if length != c.rep.NumBytes {
		return storage.Replica{}, fmt.Errorf("%w: %v finalized with %d bytes, not %d", storage.ErrLength, c.rep.Block, c.rep.NumBytes, length)
	}
	return c.rep, nil
}
