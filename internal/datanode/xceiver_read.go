package datanode

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/security/blocktoken"
	"google.golang.org/protobuf/proto"
)

// readBlock serves READ_BLOCK: chunk-aligned packets from the chunk holding
// the requested offset, then an empty last packet.
func (x *xceiver) readBlock(req *hdfs.OpReadBlockProto) (keep bool, err error) {
	eb := req.GetHeader().GetBaseHeader().GetBlock()
	bp, err := x.dn.pool(eb.GetPoolId())
	if err != nil {
		x.respondErr(hdfs.Status_ERROR, err.Error())
		return false, err
	}
	rr, err := bp.OpenReader(blockOf(eb))
	if err != nil {
		st := hdfs.Status_ERROR
		if errors.Is(err, storage.ErrReplicaNotFound) {
			st = hdfs.Status_ERROR_INVALID
		}
		x.respondErr(st, err.Error())
		if r, ok := bp.Get(int64(eb.GetBlockId())); ok {
			x.dn.noteReadFailure(eb.GetPoolId(), r, err, false)
		}
		return false, err
	}
	defer rr.Close()
	off, n, length := int64(req.GetOffset()), int64(req.GetLen()), rr.Length()
	if n < 0 {
		n = length // a length above 2^63-1 (negative here): Hadoop reads it as the replica's
	}
	if err := checkReadRange(off, n, length); err != nil {
		// Hadoop's BlockSender refuses the same ranges, with this text.
		msg := fmt.Sprintf("Offset %d and length %d don't match block %s:%v ( blockLen %d )",
			off, n, eb.GetPoolId(), blockOf(eb), length)
		x.peerLog.Warn("read refused", "remote", x.remote, "op", "READ_BLOCK", "reason", msg)
		x.respondErr(hdfs.Status_ERROR, msg)
		return false, fmt.Errorf("%w: %s", err, msg)
	}
	end := off + n
	ck := rr.Checksum()
	bpc := int64(ck.BytesPerChecksum)
	if bpc <= 0 {
		bpc = datatransfer.DefaultBytesPerChecksum
	}
	start := off - off%bpc
	if end%bpc != 0 {
		end = min(end+bpc-end%bpc, length)
	}
	s := newBlockSender(rr)
	defer s.close()
	announced := ck
	if !req.GetSendChecksums() {
		// The reader verifies nothing: announce NULL and send no checksums.
		announced = datatransfer.DataChecksum{Type: datatransfer.ChecksumNull, BytesPerChecksum: int(bpc)}
		s.noSums = true
	}
	_ = x.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if err := datatransfer.WriteResponse(x.conn, &hdfs.BlockOpResponseProto{Status: hdfs.Status_SUCCESS.Enum(),
		ReadOpChecksumInfo: &hdfs.ReadOpChecksumInfoProto{Checksum: announced.Proto(), ChunkOffset: proto.Uint64(uint64(start))}}); err != nil {
		return false, err
	}
	x.dn.act.countClient(x.conn, &x.dn.act.readsLocal, &x.dn.act.readsRemote)
	_, err = s.send(x.conn, start, end, 0, true)
	x.dn.act.bytesRead.Add(s.sent)
	if err != nil {
		// Clients close as soon as they have their bytes; an error of the
		// disk is noted.
		x.dn.noteReadFailure(eb.GetPoolId(), rr.Replica(), err, false)
		return false, nil
	}
	x.dn.act.blocksRead.Add(1)
	if rep := rr.Replica(); start == 0 && end == length && rep.State == storage.Finalized {
		x.lastRead = &readRecord{pool: eb.GetPoolId(), rep: rep}
	}
	return true, nil
}

// checkReadRange accepts a read of n bytes at off from a replica of length
// bytes as Hadoop's BlockSender does: 0 <= off <= length, 0 <= n and
// off + n <= length. It never computes off + n, which could overflow.
func checkReadRange(off, n, length int64) error {
	if off < 0 || off > length || n < 0 || n > length-off {
		return errBadRange
	}
	return nil
}

// blockSender sends a replica's data as packets. Data goes out with
// sendfile(2) when the connection is a TCP connection: the packet prefix
// (lengths, header, checksums read from the meta file) is written, then the
// data is copied from the block file by the kernel. Replicas being written,
// other connections, and a meta file that moved meanwhile fall back to
// ReplicaReader.ReadChunks.
type blockSender struct {
	rr   *storage.ReplicaReader
	ck   datatransfer.DataChecksum
	meta *os.File // nil: use ReadChunks
	// noSums sends packets without checksums (READ_BLOCK with
	// sendChecksums false).
	noSums bool
	pw     *datatransfer.PacketWriter
	sent   int64 // data bytes sent so far
	// throttle, if set, is told the bytes of each packet before it goes
	// (balancer copies and re-replication, at the balancer bandwidth).
	throttle func(n int64) error
	pre      []byte
	sums     []byte
	data     []byte
}

func newBlockSender(rr *storage.ReplicaReader) *blockSender {
	s := &blockSender{rr: rr, ck: rr.Checksum()}
	if rr.Replica().State != storage.Finalized {
		// The last chunk of a replica being written changes under the
		// reader; ReadChunks deals with it.
		return s
	}
	if f, err := os.Open(rr.Replica().MetaPath); err == nil {
		if got, err := storage.ReadMetaHeader(f); err == nil && got == s.ck {
			s.meta = f
		} else {
			_ = f.Close()
		}
	}
	return s
}

func (s *blockSender) close() {
	if s.meta != nil {
		_ = s.meta.Close()
	}
}

// send writes packets covering [start, end) (start chunk-aligned) with seqnos
// from seqno, then, if last, the empty lastPacketInBlock packet. It returns
// the next seqno.
func (s *blockSender) send(w net.Conn, start, end, seqno int64, last bool) (int64, error) {
	bpc := int64(s.ck.BytesPerChecksum)
	if bpc <= 0 {
		bpc = datatransfer.DefaultBytesPerChecksum
	}
	per := max(maxPacketData/bpc, 1) * bpc
	tcp, _ := w.(*net.TCPConn)
	if s.pw == nil {
		s.pw = datatransfer.NewPacketWriter(w)
	}
	for pos := start; pos < end; seqno++ {
		n := min(per, end-pos)
		if s.throttle != nil {
			if err := s.throttle(n); err != nil {
				return seqno, err
			}
		}
		_ = w.SetWriteDeadline(time.Now().Add(writeTimeout))
		if tcp != nil && s.meta != nil {
			if err := s.sendfilePacket(tcp, pos, n, seqno, bpc); err != nil {
				return seqno, err
			}
		} else {
			data, sums, err := s.rr.ReadChunks(pos, int(n), s.data, s.sums)
			if err != nil {
				return seqno, err
			}
			s.data, s.sums = data[:0], sums[:0]
			if int64(len(data)) != n {
				return seqno, fmt.Errorf("datanode: short read of %v at %d: %d of %d bytes", s.rr.Replica().Block, pos, len(data), n)
			}
			h := datatransfer.PacketHeader{OffsetInBlock: pos, Seqno: seqno, DataLen: int32(n)}
			if s.noSums {
				sums = nil
			}
			if err := s.pw.WritePacket(h, sums, data); err != nil {
				return seqno, err
			}
		}
		pos += n
		s.sent += n
	}
	if last {
		_ = w.SetWriteDeadline(time.Now().Add(writeTimeout))
		h := datatransfer.PacketHeader{OffsetInBlock: end, Seqno: seqno, LastPacketInBlock: true}
		if err := s.pw.WritePacket(h, nil, nil); err != nil {
			return seqno, err
		}
		seqno++
	}
	return seqno, nil
}

func (s *blockSender) sendfilePacket(w *net.TCPConn, pos, n, seqno, bpc int64) error {
	nsum := int((n + bpc - 1) / bpc * int64(s.ck.Size()))
	if s.noSums {
		nsum = 0
	}
	if cap(s.sums) < nsum {
		s.sums = make([]byte, nsum)
	}
	sums := s.sums[:nsum]
	if nsum > 0 {
		if _, err := s.meta.ReadAt(sums, storage.MetaHeaderLen+pos/bpc*int64(s.ck.Size())); err != nil {
			return fmt.Errorf("datanode: reading checksums of %v: %w", s.rr.Replica().Block, err)
		}
	}
	var err error
	s.pre, err = datatransfer.AppendPacketPrefix(s.pre[:0], datatransfer.PacketHeader{OffsetInBlock: pos, Seqno: seqno, DataLen: int32(n)}, sums)
	if err != nil {
		return err
	}
	if _, err := w.Write(s.pre); err != nil {
		return err
	}
	f := s.rr.DataFile()
	if _, err := f.Seek(pos, io.SeekStart); err != nil {
		return err
	}
	m, err := w.ReadFrom(&io.LimitedReader{R: f, N: n})
	if err != nil {
		return err
	}
	if m != n {
		return fmt.Errorf("datanode: short send of %v at %d: %d of %d bytes", s.rr.Replica().Block, pos, m, n)
	}
	return nil
}

// transferBlock serves TRANSFER_BLOCK: send the replica to the targets
// (pipeline recovery adding a DataNode), then answer the requester.
func (x *xceiver) transferBlock(ctx context.Context, req *hdfs.OpTransferBlockProto) error {
	hdr := req.GetHeader()
	eb := hdr.GetBaseHeader().GetBlock()
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	err := x.dn.sendBlock(ctx, eb.GetPoolId(), blockOf(eb), req.GetTargets(), hdr.GetClientName())
	_ = x.conn.SetWriteDeadline(time.Now().Add(opTimeout))
	if err != nil {
		x.respondErr(hdfs.Status_ERROR, err.Error())
		return err
	}
	return datatransfer.WriteResponse(x.conn, &hdfs.BlockOpResponseProto{Status: hdfs.Status_SUCCESS.Enum(), FirstBadLink: proto.String("")})
}

// sendBlock copies a local replica to targets[0] (which forwards it to the
// rest) with WRITE_BLOCK, as Hadoop's DataTransfer does. clientName "" is
// replication ordered by the NameNode (stage PIPELINE_SETUP_CREATE, nothing
// comes back); otherwise a client's TRANSFER_BLOCK (stage TRANSFER_RBW or
// TRANSFER_FINALIZED, a closing response is awaited).
func (dn *DataNode) sendBlock(ctx context.Context, poolID string, b storage.Block, targets []*hdfs.DatanodeInfoProto, clientName string) error {
	if len(targets) == 0 {
		return fmt.Errorf("datanode: transfer of %v without targets", b)
	}
	dn.xmits.Add(1)
	defer dn.xmits.Add(-1)
	bp, err := dn.pool(poolID)
	if err != nil {
		return err
	}
	rr, err := bp.OpenReader(b)
	if err != nil {
		return err
	}
	defer rr.Close()
	rep := rr.Replica()
	stage := hdfs.OpWriteBlockProto_PIPELINE_SETUP_CREATE
	if clientName != "" {
		stage = hdfs.OpWriteBlockProto_TRANSFER_FINALIZED
		if rep.State == storage.RBW {
			stage = hdfs.OpWriteBlockProto_TRANSFER_RBW
		}
	}
	length := rr.Length()
	sent := rep.Block
	sent.NumBytes = length
	addr := xferAddrOf(targets[0])
	dctx, cancel := context.WithTimeout(ctx, connectTimeout)
	wtok := dn.token(poolID, int64(sent.ID), blocktoken.Write)
	conn, err := dn.dialProtected(dctx, addr, poolID, wtok)
	cancel()
	if err != nil {
		return fmt.Errorf("datanode: transfer of %v to %s: %w", b, addr, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	req := &hdfs.OpWriteBlockProto{
		Header: &hdfs.ClientOperationHeaderProto{
			BaseHeader: &hdfs.BaseHeaderProto{Block: extBlock(poolID, sent), Token: wtok},
			ClientName: proto.String(clientName),
		},
		Targets:               targets[1:],
		Stage:                 stage.Enum(),
		PipelineSize:          proto.Uint32(uint32(len(targets))),
		MinBytesRcvd:          proto.Uint64(0),
		MaxBytesRcvd:          proto.Uint64(0),
		LatestGenerationStamp: proto.Uint64(0),
		RequestedChecksum:     rr.Checksum().Proto(),
	}
	if self := dn.selfInfo(poolID); self != nil {
		req.Source = self
	}
	_ = conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if err := datatransfer.WriteOp(conn, datatransfer.OpWriteBlock, req); err != nil {
		return fmt.Errorf("datanode: transfer of %v to %s: %w", b, addr, err)
	}
	s := newBlockSender(rr)
	defer s.close()
	if clientName == "" {
		// Re-replication shares the balancer's bandwidth; a client's
		// TRANSFER_BLOCK (pipeline recovery) is waited for and is not
		// throttled.
		s.throttle = func(n int64) error { return dn.balance.Take(ctx, n) }
	}
	if _, err := s.send(conn, 0, length, 0, true); err != nil {
		dn.noteReadFailure(poolID, rep, err, true)
		return fmt.Errorf("datanode: transfer of %v to %s: %w", b, addr, err)
	}
	if clientName != "" {
		_ = conn.SetReadDeadline(time.Now().Add(writeTimeout))
		var resp hdfs.BlockOpResponseProto
		if err := datatransfer.ReadDelimited(bufio.NewReader(conn), datatransfer.DefaultMaxMessageSize, &resp); err != nil {
			return fmt.Errorf("datanode: transfer of %v to %s: %w", b, addr, err)
		}
		if resp.GetStatus() != hdfs.Status_SUCCESS {
			return fmt.Errorf("datanode: transfer of %v to %s: %v %s", b, addr, resp.GetStatus(), resp.GetMessage())
		}
	}
	dn.act.blocksReplicated.Add(1)
	dn.log.Info("transferred block", "block", sent.String(), "to", addr)
	return nil
}
