package client

import (
	"bufio"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// shouldReplaceLocked is Hadoop's DEFAULT replace-datanode-on-failure
// condition for a pipeline left with n nodes: the file wants 3 replicas or
// more and either half of them or more are gone, or the block was
// appended to or hflushed (readers may already rely on its replicas).
func (w *Writer) shouldReplaceLocked(n int) bool {
	r := int(w.replication)
	if r < 3 || n >= r || n == 0 {
		return false
	}
	return n <= r/2 || w.mu.appended || w.mu.flushed
}

// addDatanodeLocked asks the NameNode for one more node for the current
// block (getAdditionalDatanode), copies the acknowledged part of the
// replica to it from an existing node (TRANSFER_BLOCK) and returns the new
// pipeline's nodes in the NameNode's order. acked is the replica length
// every existing node holds.
func (w *Writer) addDatanodeLocked(nodes, failed []*hdfs.DatanodeInfoProto, acked int64) ([]*hdfs.DatanodeInfoProto, error) {
	lb := w.mu.lb
	b := copyBlock(lb.GetB())
	b.NumBytes = proto.Uint64(uint64(acked))
	req := &hdfs.GetAdditionalDatanodeRequestProto{
		Src:                proto.String(w.path),
		Blk:                b,
		Existings:          nodes,
		Excludes:           failed,
		NumAdditionalNodes: proto.Uint32(1),
		ClientName:         proto.String(w.f.clientName),
	}
	if w.fileID != 0 {
		req.FileId = proto.Uint64(w.fileID)
	}
	resp := &hdfs.GetAdditionalDatanodeResponseProto{}
	if err := w.f.call(w.ctx, "getAdditionalDatanode", req, resp); err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, n := range nodes {
		have[n.GetId().GetDatanodeUuid()] = true
	}
	locs := resp.GetBlock().GetLocs()
	added := -1
	for i, l := range locs {
		if !have[l.GetId().GetDatanodeUuid()] {
			added = i
		}
	}
	if added < 0 || len(locs) != len(nodes)+1 {
		return nil, fmt.Errorf("%w: getAdditionalDatanode gave no new node", ErrBadResponse)
	}
	// The source is a neighbour of the new node in the pipeline order.
	src := locs[max(added-1, 0)]
	if added == 0 {
		src = locs[1]
	}
	tok := lb.GetBlockToken()
	if t := resp.GetBlock().GetBlockToken(); t != nil {
		tok = t
	}
	if err := transferBlock(w, src, locs[added], b, tok); err != nil {
		return nil, err
	}
	nl := proto.Clone(lb).(*hdfs.LocatedBlockProto)
	nl.Locs = locs
	nl.StorageIDs = resp.GetBlock().GetStorageIDs()
	nl.StorageTypes = resp.GetBlock().GetStorageTypes()
	w.mu.lb = nl
	return locs, nil
}

// transferBlock has src copy block b to target (TRANSFER_BLOCK).
func transferBlock(w *Writer, src, target *hdfs.DatanodeInfoProto, b *hdfs.ExtendedBlockProto, tok *common.TokenProto) error {
	addr := dnAddr(src.GetId())
	conn, err := w.f.dialer.Dial(w.ctx, addr, b, tok)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := watchCtx(w.ctx, conn)
	defer stop()
	req := &hdfs.OpTransferBlockProto{
		Header:             clientHeader(b, tok, w.f.clientName),
		Targets:            []*hdfs.DatanodeInfoProto{target},
		TargetStorageTypes: []hdfs.StorageTypeProto{hdfs.StorageTypeProto_DISK},
	}
	if err := datatransfer.WriteOp(conn, datatransfer.OpTransferBlock, req); err != nil {
		return err
	}
	resp := &hdfs.BlockOpResponseProto{}
	if err := datatransfer.ReadDelimited(bufio.NewReader(conn), datatransfer.DefaultMaxMessageSize, resp); err != nil {
		return fmt.Errorf("%w: TRANSFER_BLOCK response from %s: %v", ErrDataNode, addr, err)
	}
	return opResponseError("TRANSFER_BLOCK", addr, resp)
}
