package client

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// Data-path constants, Hadoop's client defaults.
const (
	// dialTimeout bounds a DataNode TCP connect (dfs.client.socket-timeout
	// is 60 s in Hadoop; a connect that slow means the node is gone).
	dialTimeout = 10 * time.Second
	// maxPacketsInFlight bounds packets sent but not yet acknowledged
	// (dfs.client.write.max-packets-in-flight).
	maxPacketsInFlight = 80
	// defaultPacketSize is dfs.client-write-packet-size.
	defaultPacketSize = 64 << 10
	// maxWritePacketSize is the largest packet a DataNode accepts
	// (Hadoop's PacketReceiver limit, 16 MiB), less room for the header
	// and checksums.
	maxWritePacketSize = 16<<20 - 1<<20
	// blockWriteRetries is dfs.client.block.write.retries: how many times
	// a new block's pipeline setup is tried, excluding the failed node.
	blockWriteRetries = 3
	// completeRetries and completeFirstWait: complete (and addBlock while
	// the previous block is not yet minimally replicated) is retried with
	// doubling waits (dfs.client.block.write.locateFollowingBlock.*).
	completeRetries   = 10
	completeFirstWait = 100 * time.Millisecond
	// leaseRenewInterval: half the NameNode's soft lease limit (60 s).
	leaseRenewInterval = 30 * time.Second
	// heartbeatInterval: an idle write pipeline gets a heartbeat packet
	// after this long without a packet (half Hadoop's socket timeout).
	heartbeatInterval = 30 * time.Second
	// blockAcquireFailures is how many rounds over a block's locations a
	// reader makes (dfs.client.max.block.acquire.failures), and
	// retryWindow the base of the wait between rounds
	// (dfs.client.retry.window.base).
	blockAcquireFailures = 3
	retryWindow          = 3 * time.Second
	// readBufferSize is the buffered reader in front of a block
	// connection; packets larger than it are read past it directly.
	readBufferSize = 64 << 10
)

// dnAddr returns the transfer address host:port of a DataNode.
func dnAddr(id *hdfs.DatanodeIDProto) string {
	return net.JoinHostPort(id.GetIpAddr(), strconv.Itoa(int(id.GetXferPort())))
}

// watchCtx closes c when ctx ends before stop is called, so that blocking
// socket calls return. The returned stop must be called.
func watchCtx(ctx context.Context, c net.Conn) (stop func() bool) {
	return context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
}

// opResponseError turns a non-SUCCESS BlockOpResponseProto into an error.
func opResponseError(what, addr string, r *hdfs.BlockOpResponseProto) error {
	if r.GetStatus() == hdfs.Status_SUCCESS {
		return nil
	}
	msg := r.GetMessage()
	if r.GetFirstBadLink() != "" {
		msg += " (first bad link " + r.GetFirstBadLink() + ")"
	}
	if r.GetStatus() == hdfs.Status_ERROR_ACCESS_TOKEN {
		return fmt.Errorf("%w: %w: %s to %s: %s", ErrDataNode, ErrAccessToken, what, addr, msg)
	}
	return fmt.Errorf("%w: %s to %s: %s %s", ErrDataNode, what, addr, r.GetStatus(), msg)
}

func clientHeader(b *hdfs.ExtendedBlockProto, tok *common.TokenProto, clientName string) *hdfs.ClientOperationHeaderProto {
	return &hdfs.ClientOperationHeaderProto{
		BaseHeader: &hdfs.BaseHeaderProto{Block: b, Token: tokenOrEmpty(tok)},
		ClientName: proto.String(clientName),
	}
}

// tokenOrEmpty returns tok, or an empty token with the required fields
// set (the DataNode's parser demands them).
func tokenOrEmpty(tok *common.TokenProto) *common.TokenProto {
	if tok != nil {
		return tok
	}
	return &common.TokenProto{Identifier: []byte{}, Password: []byte{}, Kind: proto.String(""), Service: proto.String("")}
}

func copyBlock(b *hdfs.ExtendedBlockProto) *hdfs.ExtendedBlockProto {
	return proto.Clone(b).(*hdfs.ExtendedBlockProto)
}

func blockName(b *hdfs.ExtendedBlockProto) string {
	return fmt.Sprintf("%s:blk_%d_%d", b.GetPoolId(), b.GetBlockId(), b.GetGenerationStamp())
}

// checksumFromDefaults picks the write checksum from the server defaults.
func checksumFromDefaults(d ServerDefaults) datatransfer.DataChecksum {
	c := datatransfer.DefaultChecksum()
	switch d.ChecksumType {
	case "CRC32":
		c.Type = datatransfer.ChecksumCRC32
	case "NULL":
		c.Type = datatransfer.ChecksumNull
	}
	if d.BytesPerChecksum > 0 && d.BytesPerChecksum <= datatransfer.MaxBytesPerChecksum {
		c.BytesPerChecksum = int(d.BytesPerChecksum)
	}
	return c
}

// retryFalse calls fn until it reports true, waiting completeFirstWait
// and doubling between tries, at most completeRetries times.
func retryFalse(ctx context.Context, fn func() (bool, error)) (bool, error) {
	wait := completeFirstWait
	for i := 0; ; i++ {
		ok, err := fn()
		if err != nil || ok || i+1 >= completeRetries {
			return ok, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-t.C:
		}
		wait *= 2
	}
}
