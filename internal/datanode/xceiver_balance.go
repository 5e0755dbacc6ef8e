package datanode

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/security/blocktoken"
	"google.golang.org/protobuf/proto"
)

// replaceKeepalive is how often a REPLACE_BLOCK still copying tells the
// balancer so (IN_PROGRESS): half of dfs.client.socket-timeout, as Hadoop's
// DataNode does, so that a slow, throttled copy does not time out.
var replaceKeepalive = opTimeout / 2

// acquireMove takes one of the node's balancer move slots
// (dfs.datanode.balance.max.concurrent.moves); false when all are taken.
func (dn *DataNode) acquireMove() bool {
	for {
		n := dn.moves.Load()
		if n >= dn.maxMoves {
			return false
		}
		if dn.moves.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (dn *DataNode) releaseMove() { dn.moves.Add(-1) }

// copyBlock serves COPY_BLOCK, the balancer's read of a whole replica from a
// proxy: the read response, then the block's packets from offset 0 and the
// empty last packet, at the balancer bandwidth's pace.
func (x *xceiver) copyBlock(ctx context.Context, req *hdfs.OpCopyBlockProto) error {
	eb := req.GetHeader().GetBlock()
	if !x.dn.acquireMove() {
		err := fmt.Errorf("Not able to copy block %d to %s because threads quota is exceeded.", eb.GetBlockId(), x.conn.RemoteAddr())
		x.respondErr(hdfs.Status_ERROR, err.Error())
		return err
	}
	defer x.dn.releaseMove()
	bp, err := x.dn.pool(eb.GetPoolId())
	if err != nil {
		x.respondErr(hdfs.Status_ERROR, err.Error())
		return err
	}
	rr, err := bp.OpenReader(blockOf(eb))
	if err != nil {
		x.respondErr(hdfs.Status_ERROR, err.Error())
		return err
	}
	defer rr.Close()
	if rr.Replica().State != storage.Finalized {
		err := fmt.Errorf("datanode: COPY_BLOCK of %v: replica is %v, not finalized: %w", blockOf(eb), rr.Replica().State, storage.ErrWrongState)
		x.respondErr(hdfs.Status_ERROR, err.Error())
		return err
	}
	x.dn.xmits.Add(1)
	defer x.dn.xmits.Add(-1)
	_ = x.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if err := datatransfer.WriteResponse(x.conn, &hdfs.BlockOpResponseProto{Status: hdfs.Status_SUCCESS.Enum(),
		ReadOpChecksumInfo: &hdfs.ReadOpChecksumInfoProto{Checksum: rr.Checksum().Proto(), ChunkOffset: proto.Uint64(0)}}); err != nil {
		return err
	}
	s := newBlockSender(rr)
	defer s.close()
	s.throttle = func(n int64) error { return x.dn.balance.Take(ctx, n) }
	if _, err = s.send(x.conn, 0, rr.Length(), 0, true); err != nil {
		x.dn.noteReadFailure(eb.GetPoolId(), rr.Replica(), err, true)
	}
	return err
}

// replaceBlock serves REPLACE_BLOCK (the balancer moving a replica here):
// the block is copied from the proxy with COPY_BLOCK into a TEMPORARY
// replica, finalized, reported RECEIVED with the deletion hint, and the
// balancer is answered.
func (x *xceiver) replaceBlock(ctx context.Context, req *hdfs.OpReplaceBlockProto) error {
	eb := req.GetHeader().GetBlock()
	if !x.dn.acquireMove() {
		err := fmt.Errorf("Not able to receive block %d from %s because threads quota is exceeded.", eb.GetBlockId(), x.conn.RemoteAddr())
		x.respondErr(hdfs.Status_ERROR, err.Error())
		return err
	}
	// The slot is given back before the answer goes out: a balancer that
	// starts its next move on hearing it must find the slot free.
	released := false
	release := func() {
		if !released {
			released = true
			x.dn.releaseMove()
		}
	}
	defer release()
	var keepalive sync.WaitGroup
	stopKeepalive := make(chan struct{})
	stopped := false
	stopProgress := func() { // before any other answer goes out
		if !stopped {
			stopped = true
			close(stopKeepalive)
			keepalive.Wait()
		}
	}
	defer stopProgress()
	fail := func(st hdfs.Status, err error) error {
		stopProgress()
		release()
		x.respondErr(st, err.Error())
		return err
	}
	bp, err := x.dn.pool(eb.GetPoolId())
	if err != nil {
		return fail(hdfs.Status_ERROR, err)
	}
	b := blockOf(eb)
	if r, ok := bp.Get(b.ID); ok && r.GenStamp >= b.GenStamp {
		return fail(hdfs.Status_ERROR, fmt.Errorf("datanode: REPLACE_BLOCK of %v: %w here (%v)", b, storage.ErrReplicaExists, r.State))
	}
	addr := xferAddrOf(req.GetSource())
	dctx, cancel := context.WithTimeout(ctx, connectTimeout)
	ctok := x.dn.token(eb.GetPoolId(), int64(eb.GetBlockId()), blocktoken.Copy)
	proxy, err := x.dn.dialProtected(dctx, addr, eb.GetPoolId(), ctok)
	cancel()
	if err != nil {
		return fail(hdfs.Status_ERROR, fmt.Errorf("datanode: REPLACE_BLOCK of %v: connecting to proxy %s: %w", b, addr, err))
	}
	defer proxy.Close()
	stop := context.AfterFunc(ctx, func() { _ = proxy.Close() })
	defer stop()
	_ = proxy.SetDeadline(time.Now().Add(opTimeout))
	if err := datatransfer.WriteOp(proxy, datatransfer.OpCopyBlock, &hdfs.OpCopyBlockProto{
		Header: &hdfs.BaseHeaderProto{Block: eb, Token: ctok}}); err != nil {
		return fail(hdfs.Status_ERROR, fmt.Errorf("datanode: REPLACE_BLOCK of %v: proxy %s: %w", b, addr, err))
	}
	pbr := bufio.NewReaderSize(proxy, readBufferSize)
	var resp hdfs.BlockOpResponseProto
	if err := datatransfer.ReadDelimited(pbr, datatransfer.DefaultMaxMessageSize, &resp); err != nil {
		return fail(hdfs.Status_ERROR, fmt.Errorf("datanode: REPLACE_BLOCK of %v: proxy %s: %w", b, addr, err))
	}
	if resp.GetStatus() != hdfs.Status_SUCCESS {
		return fail(hdfs.Status_ERROR, fmt.Errorf("datanode: REPLACE_BLOCK of %v: proxy %s refused the copy: %v %s", b, addr, resp.GetStatus(), resp.GetMessage()))
	}
	_ = proxy.SetDeadline(time.Time{})
	ck, err := datatransfer.ChecksumFromProto(resp.GetReadOpChecksumInfo().GetChecksum())
	if err != nil {
		return fail(hdfs.Status_ERROR, err)
	}
	w, err := bp.CreateTemporary(b, ck, copyReservation(b))
	if err != nil {
		st := hdfs.Status_ERROR
		if errors.Is(err, storage.ErrReplicaExists) {
			st = hdfs.Status_ERROR_EXISTS
		}
		return fail(st, err)
	}
	defer func() { _ = w.Close() }() // a copy not finalized is deleted
	keepalive.Add(1)
	go func() {
		defer keepalive.Done()
		t := time.NewTicker(replaceKeepalive)
		defer t.Stop()
		for {
			select {
			case <-stopKeepalive:
				return
			case <-t.C:
				_ = x.conn.SetWriteDeadline(time.Now().Add(opTimeout))
				if datatransfer.WriteResponse(x.conn, &hdfs.BlockOpResponseProto{Status: hdfs.Status_IN_PROGRESS.Enum()}) != nil {
					return
				}
			}
		}
	}()
	r := &receiver{x: x, src: proxy, in: pbr, w: w, bp: bp, delHint: req.GetDelHint(),
		throttle: func(n int64) error { return x.dn.balance.Take(ctx, n) }}
	if err := r.receive(ctx); err != nil {
		return fail(hdfs.Status_ERROR, err)
	}
	x.log.Info("block moved here", "block", w.Replica().Block.String(), "proxy", addr, "delHint", req.GetDelHint())
	stopProgress()
	release()
	_ = x.conn.SetWriteDeadline(time.Now().Add(opTimeout))
	return datatransfer.WriteResponse(x.conn, &hdfs.BlockOpResponseProto{Status: hdfs.Status_SUCCESS.Enum(), FirstBadLink: proto.String("")})
}
