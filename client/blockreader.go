package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// blockReader streams one range of one replica: READ_BLOCK, then packets
// whose chunk checksums are verified before their data is handed out.
// It belongs to one goroutine.
type blockReader struct {
	conn    net.Conn
	stop    func() bool
	pr      *datatransfer.PacketReader
	csum    datatransfer.DataChecksum
	node    string
	wirePos int64  // block offset of the next byte the DataNode sends
	pos     int64  // block offset of data[0]
	end     int64  // end of the requested range (block offset)
	data    []byte // verified data not handed out yet
	last    bool   // the final empty packet was read
}

// errBadChecksum wraps a checksum mismatch with the replica it came from.
type badChecksumError struct {
	node  string
	block string
	off   int64
	err   error
}

func (e *badChecksumError) Error() string {
	return fmt.Sprintf("client: checksum error in block %s at offset %d from %s: %v", e.block, e.off, e.node, e.err)
}

func (e *badChecksumError) Unwrap() error { return e.err }

func openBlockReader(ctx context.Context, d *dnDialer, clientName string, lb *hdfs.LocatedBlockProto, node *hdfs.DatanodeInfoProto, off, n int64) (*blockReader, error) {
	addr := dnAddr(node.GetId())
	conn, err := d.Dial(ctx, addr, lb.GetB(), lb.GetBlockToken())
	if err != nil {
		return nil, err
	}
	return startBlockRead(ctx, conn, addr, clientName, lb, off, n)
}

// startBlockRead sends READ_BLOCK for n bytes at block offset off on conn
// and reads the response; conn is closed on failure.
func startBlockRead(ctx context.Context, conn net.Conn, addr, clientName string, lb *hdfs.LocatedBlockProto, off, n int64) (*blockReader, error) {
	b := &blockReader{conn: conn, stop: watchCtx(ctx, conn), node: addr, end: off + n}
	var err error
	req := &hdfs.OpReadBlockProto{
		Header: clientHeader(lb.GetB(), lb.GetBlockToken(), clientName),
		Offset: proto.Uint64(uint64(off)),
		Len:    proto.Uint64(uint64(n)),
	}
	if err := datatransfer.WriteOp(conn, datatransfer.OpReadBlock, req); err != nil {
		b.close(false)
		return nil, err
	}
	br := bufio.NewReaderSize(conn, readBufferSize)
	resp := &hdfs.BlockOpResponseProto{}
	if err := datatransfer.ReadDelimited(br, datatransfer.DefaultMaxMessageSize, resp); err != nil {
		b.close(false)
		return nil, err
	}
	if err := opResponseError("READ_BLOCK", addr, resp); err != nil {
		b.close(false)
		return nil, err
	}
	info := resp.GetReadOpChecksumInfo()
	b.csum, err = datatransfer.ChecksumFromProto(info.GetChecksum())
	if err != nil {
		b.close(false)
		return nil, fmt.Errorf("%w: READ_BLOCK from %s: %v", ErrDataNode, addr, err)
	}
	co := int64(info.GetChunkOffset())
	if co > off || off-co >= int64(b.csum.BytesPerChecksum) {
		b.close(false)
		return nil, fmt.Errorf("%w: READ_BLOCK from %s: chunk offset %d for offset %d", ErrDataNode, addr, co, off)
	}
	b.wirePos, b.pos = co, co
	b.pr = datatransfer.NewPacketReader(br, 0)
	// Skip to off.
	for b.pos < off {
		if err := b.next(); err != nil {
			b.close(false)
			return nil, err
		}
		if len(b.data) == 0 && b.last {
			b.close(false)
			return nil, fmt.Errorf("%w: READ_BLOCK from %s ended before offset %d", ErrDataNode, addr, off)
		}
		skip := min(int64(len(b.data)), off-b.pos)
		b.data = b.data[skip:]
		b.pos += skip
	}
	return b, nil
}

// next reads and verifies the next packet into data. It must only be
// called when data is empty.
func (b *blockReader) next() error {
	pkt, err := b.pr.Next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	if pkt.Header.OffsetInBlock != b.wirePos && len(pkt.Data) > 0 {
		return fmt.Errorf("%w: packet at block offset %d, expected %d", ErrDataNode, pkt.Header.OffsetInBlock, b.wirePos)
	}
	if err := b.csum.Verify(pkt.Data, pkt.Checksums); err != nil {
		var ce *datatransfer.ChecksumError
		off := b.wirePos
		if errors.As(err, &ce) {
			off += ce.Offset
		}
		return &badChecksumError{node: b.node, off: off, err: err}
	}
	b.pos = b.wirePos
	b.wirePos += int64(len(pkt.Data))
	b.data = pkt.Data
	if pkt.Header.LastPacketInBlock {
		b.last = true
	}
	if len(pkt.Data) == 0 && !b.last {
		return fmt.Errorf("%w: empty data packet before the end", ErrDataNode)
	}
	// Drop what lies past the requested range (the rest of the last
	// chunk).
	if over := b.pos + int64(len(b.data)) - b.end; over > 0 {
		b.data = b.data[:max(int64(len(b.data))-over, 0)]
	}
	return nil
}

// fill makes data non-empty; io.EOF at the end of the range.
func (b *blockReader) fill() error {
	for len(b.data) == 0 {
		if b.pos >= b.end || b.last {
			if b.pos < b.end {
				return fmt.Errorf("%w: replica on %s ended at offset %d, expected %d", ErrDataNode, b.node, b.pos, b.end)
			}
			return io.EOF
		}
		if err := b.next(); err != nil {
			return err
		}
	}
	return nil
}

func (b *blockReader) Read(p []byte) (int, error) {
	if err := b.fill(); err != nil {
		return 0, err
	}
	n := copy(p, b.data)
	b.data = b.data[n:]
	b.pos += int64(n)
	return n, nil
}

// writeTo hands every remaining byte of the range to w, without copying.
// It returns the bytes written and, separately, a write error of w.
func (b *blockReader) writeTo(w io.Writer) (n int64, werr, rerr error) {
	for {
		if err := b.fill(); err != nil {
			if err == io.EOF {
				return n, nil, nil
			}
			return n, nil, err
		}
		k, err := w.Write(b.data)
		n += int64(k)
		b.data = b.data[k:]
		b.pos += int64(k)
		if err != nil {
			return n, err, nil
		}
	}
}

// finish reads the final empty packet when the whole range was consumed
// and tells the DataNode the data checked out (CHECKSUM_OK), as Hadoop's
// reader does; then it closes the connection.
func (b *blockReader) finish() {
	ok := false
	if len(b.data) == 0 && b.pos >= b.end {
		if !b.last {
			for !b.last {
				if err := b.next(); err != nil {
					break
				}
				b.data = nil
			}
		}
		ok = b.last
	}
	b.close(ok)
}

func (b *blockReader) close(sendOK bool) {
	if sendOK {
		_ = datatransfer.WriteDelimited(b.conn, &hdfs.ClientReadStatusProto{Status: hdfs.Status_CHECKSUM_OK.Enum()})
	}
	b.stop()
	_ = b.conn.Close()
}
