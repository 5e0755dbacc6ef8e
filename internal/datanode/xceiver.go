package datanode

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/ratelog"
	"github.com/hdfsgo/hdfsgo/internal/security/blocktoken"
	"google.golang.org/protobuf/proto"
)

// Streaming timeouts (Hadoop's defaults: dfs.client.socket-timeout 60 s,
// dfs.datanode.socket.write.timeout 480 s, keepalive 4 s).
const (
	opTimeout      = 60 * time.Second
	keepAlive      = 4 * time.Second
	writeTimeout   = 480 * time.Second
	connectTimeout = 60 * time.Second
	rejectTimeout  = 5 * time.Second
	readBufferSize = 128 << 10
	// unixSocketBuffer is the send buffer asked for on domain socket
	// connections (capped by the kernel at net.core.wmem_max).
	unixSocketBuffer = 4 << 20
	maxPacketData    = 64 << 10  // data bytes per read packet
	defaultBlockRes  = 128 << 20 // space reserved for a new replica when dfs.blocksize is unset
)

// xceiverServer accepts streaming connections, on TCP and on the domain
// socket, and runs one goroutine per connection, at most max at a time.
type xceiverServer struct {
	dn  *DataNode
	ls  []net.Listener
	max int
	n   atomic.Int32
	wg  sync.WaitGroup
	// unixAccepted counts the connections accepted on the domain socket.
	unixAccepted atomic.Int64
	// peerLog takes the records a peer can cause (bad op headers and
	// bodies, refused reads, refused connections), rate-limited.
	peerLog *ratelog.Logger

	mu struct {
		sync.Mutex
		closed bool
		conns  map[net.Conn]struct{}
		// writers are the connections serving WRITE_BLOCK, which
		// evictWriters closes.
		writers map[net.Conn]struct{}
	}
}

func newXceiverServer(dn *DataNode, max int, ls ...net.Listener) *xceiverServer {
	xs := &xceiverServer{dn: dn, ls: ls, max: max, peerLog: ratelog.New(dn.log, dn.clk, ratelog.DefaultWindow, ratelog.DefaultBurst)}
	xs.mu.conns = map[net.Conn]struct{}{}
	xs.mu.writers = map[net.Conn]struct{}{}
	return xs
}

// markWriter records that c serves a write (until untrack).
func (xs *xceiverServer) markWriter(c net.Conn) {
	xs.mu.Lock()
	xs.mu.writers[c] = struct{}{}
	xs.mu.Unlock()
}

// evictWriters closes every connection serving a write: their clients
// rebuild their pipelines without this DataNode (ClientDatanodeProtocol
// evictWriters). It returns how many it closed.
func (xs *xceiverServer) evictWriters() int {
	xs.mu.Lock()
	defer xs.mu.Unlock()
	n := 0
	for c := range xs.mu.writers {
		_ = c.Close()
		n++
	}
	return n
}

// active is the number of connections being served (the heartbeat's
// xceiverCount).
func (xs *xceiverServer) active() int { return int(xs.n.Load()) }

// serve accepts on l, one of xs.ls, until close.
func (xs *xceiverServer) serve(ctx context.Context, l net.Listener) {
	backoff := 5 * time.Millisecond
	for {
		c, err := l.Accept()
		if err != nil {
			xs.mu.Lock()
			closed := xs.mu.closed
			xs.mu.Unlock()
			if closed {
				return
			}
			if errors.Is(err, net.ErrClosed) {
				xs.dn.fail(fmt.Errorf("datanode: streaming server: %w", err))
				return
			}
			// Out of file descriptors and the like: wait and go on.
			xs.dn.log.Error("xceiver accept failed", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		if uc, ok := c.(*net.UnixConn); ok {
			xs.unixAccepted.Add(1)
			// See client's dialer: the default UNIX socket buffer holds
			// too little of a read's packets.
			_ = uc.SetWriteBuffer(unixSocketBuffer)
		}
		if !xs.track(c) {
			_ = c.Close()
			return
		}
		xs.wg.Add(1)
		if int(xs.n.Add(1)) > xs.max {
			xs.n.Add(-1)
			go xs.reject(c)
			continue
		}
		go func() {
			defer xs.n.Add(-1)
			xs.handle(ctx, c)
		}()
	}
}

func (xs *xceiverServer) track(c net.Conn) bool {
	xs.mu.Lock()
	defer xs.mu.Unlock()
	if xs.mu.closed {
		return false
	}
	xs.mu.conns[c] = struct{}{}
	return true
}

func (xs *xceiverServer) untrack(c net.Conn) {
	xs.mu.Lock()
	delete(xs.mu.conns, c)
	delete(xs.mu.writers, c)
	xs.mu.Unlock()
	_ = c.Close()
	xs.wg.Done()
}

// close stops accepting and closes every connection.
func (xs *xceiverServer) close() {
	xs.mu.Lock()
	xs.mu.closed = true
	for c := range xs.mu.conns {
		_ = c.Close()
	}
	xs.mu.Unlock()
	for _, l := range xs.ls {
		_ = l.Close()
	}
}

func (xs *xceiverServer) wait() { xs.wg.Wait() }

// reject answers the op of a connection over the limit with an error.
func (xs *xceiverServer) reject(c net.Conn) {
	defer xs.untrack(c)
	_ = c.SetDeadline(time.Now().Add(rejectTimeout))
	br := bufio.NewReader(c)
	if _, _, err := datatransfer.ReadOpRaw(br, datatransfer.DefaultMaxMessageSize); err != nil {
		return
	}
	msg := fmt.Sprintf("xceiver count %d exceeds the limit of concurrent xceivers: %d", xs.max+1, xs.max)
	xs.peerLog.Warn("connection refused", "remote", remoteName(c), "reason", msg)
	_ = datatransfer.WriteResponse(c, &hdfs.BlockOpResponseProto{Status: hdfs.Status_ERROR.Enum(), Message: proto.String(msg)})
}

// remoteName names the peer of c for logs: its address, or "local" for a
// peer on the domain socket (whose address is empty, or "@").
func remoteName(c net.Conn) string {
	if _, ok := c.(*net.UnixConn); ok {
		return "local"
	}
	if a := c.RemoteAddr(); a != nil {
		return a.String()
	}
	return "?"
}

// xceiver serves one connection.
type xceiver struct {
	dn *DataNode
	// conn is the connection ops are served on: raw itself, or the
	// protected stream over it after a SASL handshake.
	conn net.Conn
	raw  net.Conn
	br   *bufio.Reader
	log  *slog.Logger
	// peerLog is the server's rate-limited logger; records carry the
	// peer's address.
	peerLog *ratelog.Logger
	remote  string
	// lastRead is the replica the last READ_BLOCK sent whole, until the
	// client's ClientReadStatusProto says whether it verified it.
	lastRead *readRecord
}

// readRecord names a replica a client read whole.
type readRecord struct {
	pool string
	rep  storage.Replica
}

func (xs *xceiverServer) handle(ctx context.Context, c net.Conn) {
	defer xs.untrack(c)
	x := &xceiver{dn: xs.dn, conn: c, raw: c, br: bufio.NewReaderSize(c, readBufferSize),
		log: xs.dn.log.With("remote", remoteName(c)), peerLog: xs.peerLog, remote: remoteName(c)}
	_ = c.SetDeadline(time.Now().Add(opTimeout))
	if !x.protect() {
		return
	}
	_ = c.SetWriteDeadline(time.Time{})
	first := true
	for {
		d := keepAlive
		if first {
			d = opTimeout
		}
		_ = c.SetReadDeadline(time.Now().Add(d))
		b, err := x.br.Peek(1)
		if err != nil {
			return
		}
		if b[0] != 0 && first {
			// Not an op header (whose version starts with a 0 byte): most
			// likely the SASL handshake of a protecting client.
			x.peerLog.Warn("connection does not start with an op header (a SASL handshake? dfs.data.transfer.protection is not set on this DataNode)",
				"remote", x.remote, "firstByte", b[0])
			return
		}
		if b[0] != 0 {
			// A ClientReadStatusProto after a read (its length prefix is
			// never 0, an op header always starts with a 0 byte).
			var st hdfs.ClientReadStatusProto
			if err := datatransfer.ReadDelimited(x.br, datatransfer.DefaultMaxMessageSize, &st); err != nil {
				return
			}
			x.readStatus(st.GetStatus())
			continue
		}
		first = false
		op, msg, err := datatransfer.ReadOp(x.br, datatransfer.DefaultMaxMessageSize)
		if err != nil {
			var ne net.Error
			if !errors.Is(err, io.EOF) && !(errors.As(err, &ne) && ne.Timeout()) {
				// A wrong version, an unknown op, a body that is too long
				// or does not decode: Hadoop logs these with the peer.
				x.peerLog.Warn("closing connection: bad op", "remote", x.remote, "err", err)
				if errors.Is(err, datatransfer.ErrUnknownOp) || errors.Is(err, datatransfer.ErrNoMessage) {
					x.respondErr(hdfs.Status_ERROR_UNSUPPORTED, err.Error())
				}
			}
			return
		}
		_ = c.SetReadDeadline(time.Time{})
		keep, err := x.dispatch(ctx, op, msg)
		if err != nil {
			x.log.Debug("op failed", "op", op.String(), "err", err)
		}
		if !keep || err != nil {
			return
		}
	}
}

func (x *xceiver) dispatch(ctx context.Context, op datatransfer.Op, msg proto.Message) (keep bool, err error) {
	if i := timedOp(op); i >= 0 {
		start := time.Now()
		defer func() { x.dn.act.ops[i].add(time.Since(start)) }()
	}
	if err := x.checkToken(op, msg); err != nil {
		x.peerLog.Warn("block access token refused", "remote", x.remote, "op", op.String(), "err", err)
		x.respondErr(hdfs.Status_ERROR_ACCESS_TOKEN, err.Error())
		return false, err
	}
	switch op {
	case datatransfer.OpWriteBlock:
		x.dn.xs.markWriter(x.raw)
		return false, x.writeBlock(ctx, msg.(*hdfs.OpWriteBlockProto))
	case datatransfer.OpReadBlock:
		return x.readBlock(msg.(*hdfs.OpReadBlockProto))
	case datatransfer.OpBlockChecksum:
		return true, x.blockChecksum(msg.(*hdfs.OpBlockChecksumProto))
	case datatransfer.OpTransferBlock:
		return false, x.transferBlock(ctx, msg.(*hdfs.OpTransferBlockProto))
	case datatransfer.OpCopyBlock:
		return false, x.copyBlock(ctx, msg.(*hdfs.OpCopyBlockProto))
	case datatransfer.OpReplaceBlock:
		return false, x.replaceBlock(ctx, msg.(*hdfs.OpReplaceBlockProto))
	default:
		err := fmt.Errorf("%w: op %v is not implemented by this DataNode", ErrUnsupported, op)
		x.respondErr(hdfs.Status_ERROR_UNSUPPORTED, err.Error())
		return false, err
	}
}

// readStatus takes a client's verdict on the read before: CHECKSUM_OK after
// a whole replica counts as the block scanner's verification of it;
// ERROR_CHECKSUM makes the replica a suspect for the scanner.
func (x *xceiver) readStatus(st hdfs.Status) {
	rec := x.lastRead
	x.lastRead = nil
	switch st {
	case hdfs.Status_CHECKSUM_OK:
		if rec != nil {
			if v := x.dn.volumeByDir(rec.rep.VolumeDir); v != nil {
				x.dn.blockScan.MarkVerified(rec.pool, v, rec.rep.ID)
			}
		}
		x.dn.act.blocksVerified.Add(1)
	case hdfs.Status_ERROR_CHECKSUM:
		if rec != nil {
			x.log.Warn("client reports a checksum error reading a replica", "block", rec.rep.Block.String())
			if v := x.dn.volumeByDir(rec.rep.VolumeDir); v != nil {
				x.dn.blockScan.MarkSuspect(rec.pool, v, rec.rep.ID)
			}
		}
	}
}

// tokenModes is the access each op needs, as Hadoop's DataXceiver checks.
var tokenModes = map[datatransfer.Op]blocktoken.Mode{
	datatransfer.OpWriteBlock:    blocktoken.Write,
	datatransfer.OpReadBlock:     blocktoken.Read,
	datatransfer.OpBlockChecksum: blocktoken.Read,
	datatransfer.OpTransferBlock: blocktoken.Copy,
	datatransfer.OpCopyBlock:     blocktoken.Copy,
	datatransfer.OpReplaceBlock:  blocktoken.Replace,
}

// checkToken verifies the block access token of an op (every op, when
// the NameNode turned tokens on).
func (x *xceiver) checkToken(op datatransfer.Op, msg proto.Message) error {
	mode, ok := tokenModes[op]
	if !ok || !x.dn.tokens.Enabled() {
		return nil
	}
	var h *hdfs.BaseHeaderProto
	switch m := msg.(type) {
	case *hdfs.OpWriteBlockProto:
		h = m.GetHeader().GetBaseHeader()
	case *hdfs.OpReadBlockProto:
		h = m.GetHeader().GetBaseHeader()
	case *hdfs.OpBlockChecksumProto:
		h = m.GetHeader()
	case *hdfs.OpTransferBlockProto:
		h = m.GetHeader().GetBaseHeader()
	case *hdfs.OpCopyBlockProto:
		h = m.GetHeader()
	case *hdfs.OpReplaceBlockProto:
		h = m.GetHeader()
	}
	b := h.GetBlock()
	return x.dn.tokens.Check(h.GetToken(), b.GetPoolId(), int64(b.GetBlockId()), mode, x.dn.clk.Now())
}

// token returns a block token the DataNode issues itself (transfers and
// copies it starts), or the empty token when tokens are off.
func (dn *DataNode) token(pool string, blockID int64, mode blocktoken.Mode) *common.TokenProto {
	if t := dn.tokens.Generate(dn.cfg.User, pool, blockID, mode, dn.clk.Now()); t != nil {
		return t
	}
	return emptyToken()
}

func (x *xceiver) respondErr(st hdfs.Status, msg string) {
	_ = x.conn.SetWriteDeadline(time.Now().Add(opTimeout))
	_ = datatransfer.WriteResponse(x.conn, &hdfs.BlockOpResponseProto{Status: st.Enum(), Message: proto.String(msg)})
}

// blockReserve is the space promised to a replica being written: the
// DataNode's dfs.blocksize, as Hadoop's estimateBlockSize.
func (dn *DataNode) blockReserve() int64 {
	if dn.cfg.BlockSize > 0 {
		return dn.cfg.BlockSize
	}
	return defaultBlockRes
}

// copyReservation is the space reserved for a copy of a finished replica
// (a transfer, a balancer move): its length, which the sender states, as
// Hadoop's createTemporary does; a whole default block when unstated. A
// nearly full volume can thus still take small replicas.
func copyReservation(b storage.Block) int64 {
	if b.NumBytes > 0 {
		return b.NumBytes
	}
	return defaultBlockRes
}

// blockOf converts an ExtendedBlockProto.
func blockOf(eb *hdfs.ExtendedBlockProto) storage.Block {
	return storage.Block{ID: int64(eb.GetBlockId()), GenStamp: int64(eb.GetGenerationStamp()), NumBytes: int64(eb.GetNumBytes())}
}

func extBlock(pool string, b storage.Block) *hdfs.ExtendedBlockProto {
	return &hdfs.ExtendedBlockProto{PoolId: proto.String(pool), BlockId: proto.Uint64(uint64(b.ID)),
		GenerationStamp: proto.Uint64(uint64(b.GenStamp)), NumBytes: proto.Uint64(uint64(b.NumBytes))}
}

func emptyToken() *common.TokenProto {
	return &common.TokenProto{Identifier: []byte{}, Password: []byte{}, Kind: proto.String(""), Service: proto.String("")}
}

// xferAddrOf is the streaming address of a DataNode as the NameNode or a
// client describes it.
func xferAddrOf(d *hdfs.DatanodeInfoProto) string {
	id := d.GetId()
	return net.JoinHostPort(id.GetIpAddr(), strconv.Itoa(int(id.GetXferPort())))
}

func (x *xceiver) blockChecksum(req *hdfs.OpBlockChecksumProto) error {
	eb := req.GetHeader().GetBlock()
	if t := req.GetBlockChecksumOptions().GetBlockChecksumType(); t != hdfs.BlockChecksumTypeProto_MD5CRC {
		err := fmt.Errorf("%w: block checksum type %v", ErrUnsupported, t)
		x.respondErr(hdfs.Status_ERROR_UNSUPPORTED, err.Error())
		return err
	}
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
	crcs, err := rr.BlockChecksums(nil)
	if err != nil {
		x.respondErr(hdfs.Status_ERROR, err.Error())
		return err
	}
	cr, err := datatransfer.BlockChecksumResponse(rr.Checksum(), crcs)
	if err != nil {
		x.respondErr(hdfs.Status_ERROR, err.Error())
		return err
	}
	_ = x.conn.SetWriteDeadline(time.Now().Add(opTimeout))
	return datatransfer.WriteResponse(x.conn, &hdfs.BlockOpResponseProto{Status: hdfs.Status_SUCCESS.Enum(), ChecksumResponse: cr})
}
