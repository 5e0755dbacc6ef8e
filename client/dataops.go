package client

import (
	"bufio"
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// FileChecksum is a file's MD5-of-MD5-of-CRC checksum, as
// `hdfs dfs -checksum` prints it.
type FileChecksum struct {
	// Algorithm is Hadoop's name, e.g. "MD5-of-0MD5-of-512CRC32C":
	// MD5-of-<crcPerBlock>MD5-of-<bytesPerCRC><CRC type>.
	Algorithm string
	// Bytes is the checksum's serialized form: bytesPerCRC (int32 BE),
	// crcPerBlock (int64 BE), then the 16-byte MD5.
	//
	//	+-------------+-------------------+----------------+
	//	| bytesPerCRC | crcPerBlock       | MD5 (16 bytes) |
	//	| 4 bytes BE  | 8 bytes BE        |                |
	//	+-------------+-------------------+----------------+
	Bytes []byte
}

// MD5 returns the file MD5 (the last 16 bytes of Bytes).
func (c FileChecksum) MD5() []byte {
	if len(c.Bytes) < md5.Size {
		return nil
	}
	return c.Bytes[len(c.Bytes)-md5.Size:]
}

// String returns "<Algorithm>\t<hex of Bytes>" as -checksum prints after
// the path.
func (c FileChecksum) String() string {
	return c.Algorithm + "\t" + hex.EncodeToString(c.Bytes)
}

// Checksum computes name's MD5-of-MD5-of-CRC file checksum: one
// BLOCK_CHECKSUM per block (failing over between replicas), then the MD5
// over the blocks' MD5s, as Hadoop's client does. crcPerBlock is reported
// only for files of more than one block, as in Hadoop.
func (f *FileSystem) Checksum(ctx context.Context, name string) (FileChecksum, error) {
	const op = "checksum"
	r, err := f.Open(ctx, name)
	if err != nil {
		return FileChecksum{}, err
	}
	defer r.Close()
	r.mu.Lock()
	size := r.mu.size
	r.mu.Unlock()
	var md5s [][md5.Size]byte
	var bytesPerCRC uint32
	var crcPerBlock uint64
	crcType := datatransfer.ChecksumCRC32
	nblocks := 0
	for off := int64(0); off < size; {
		lb, err := r.locate(off)
		if err != nil {
			return FileChecksum{}, err
		}
		sum, err := f.blockChecksum(ctx, lb)
		if err != nil {
			return FileChecksum{}, &fs.PathError{Op: op, Path: name, Err: err}
		}
		if nblocks == 0 {
			bytesPerCRC = sum.GetBytesPerCrc()
			crcPerBlock = sum.GetCrcPerBlock()
			if sum.CrcType != nil {
				crcType = datatransfer.ChecksumType(sum.GetCrcType())
			}
		}
		var m [md5.Size]byte
		if len(sum.GetBlockChecksum()) != md5.Size {
			return FileChecksum{}, &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: block checksum of %d bytes", ErrDataNode, len(sum.GetBlockChecksum()))}
		}
		copy(m[:], sum.GetBlockChecksum())
		md5s = append(md5s, m)
		nblocks++
		off = int64(lb.GetOffset() + lb.GetB().GetNumBytes())
		if lb.GetB().GetNumBytes() == 0 {
			break
		}
	}
	if nblocks <= 1 {
		crcPerBlock = 0
	}
	fileMD5 := datatransfer.FileChecksumMD5MD5CRC(md5s)
	b := binary.BigEndian.AppendUint32(nil, bytesPerCRC)
	b = binary.BigEndian.AppendUint64(b, crcPerBlock)
	b = append(b, fileMD5[:]...)
	return FileChecksum{
		Algorithm: fmt.Sprintf("MD5-of-%dMD5-of-%d%s", crcPerBlock, bytesPerCRC, crcType),
		Bytes:     b,
	}, nil
}

func (f *FileSystem) blockChecksum(ctx context.Context, lb *hdfs.LocatedBlockProto) (*hdfs.OpBlockChecksumResponseProto, error) {
	var errs []string
	for _, loc := range lb.GetLocs() {
		addr := dnAddr(loc.GetId())
		sum, err := blockChecksumFrom(ctx, f.dialer, lb, addr)
		if err == nil {
			return sum, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		errs = append(errs, addr+": "+err.Error())
	}
	return nil, fmt.Errorf("%w: checksum of %s: %s", ErrNoReplica, blockName(lb.GetB()), strings.Join(errs, "; "))
}

func blockChecksumFrom(ctx context.Context, d *dnDialer, lb *hdfs.LocatedBlockProto, addr string) (*hdfs.OpBlockChecksumResponseProto, error) {
	conn, err := d.Dial(ctx, addr, lb.GetB(), lb.GetBlockToken())
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stop := watchCtx(ctx, conn)
	defer stop()
	req := &hdfs.OpBlockChecksumProto{Header: &hdfs.BaseHeaderProto{Block: lb.GetB(), Token: tokenOrEmpty(lb.GetBlockToken())}}
	if err := datatransfer.WriteOp(conn, datatransfer.OpBlockChecksum, req); err != nil {
		return nil, err
	}
	resp := &hdfs.BlockOpResponseProto{}
	if err := datatransfer.ReadDelimited(bufio.NewReader(conn), datatransfer.DefaultMaxMessageSize, resp); err != nil {
		return nil, err
	}
	if err := opResponseError("BLOCK_CHECKSUM", addr, resp); err != nil {
		return nil, err
	}
	if resp.GetChecksumResponse() == nil {
		return nil, fmt.Errorf("%w: BLOCK_CHECKSUM from %s without checksum", ErrDataNode, addr)
	}
	return resp.GetChecksumResponse(), nil
}

// Truncate cuts name to size bytes. done reports whether the file is
// ready at once; false means the last block is being recovered and the
// file stays closed to writers until that finishes (Hadoop's truncate).
func (f *FileSystem) Truncate(ctx context.Context, name string, size int64) (done bool, err error) {
	const op = "truncate"
	p, err := f.resolve(op, name)
	if err != nil {
		return false, err
	}
	if size < 0 {
		return false, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	resp := &hdfs.TruncateResponseProto{}
	req := &hdfs.TruncateRequestProto{Src: proto.String(p), NewLength: proto.Uint64(uint64(size)), ClientName: proto.String(f.clientName)}
	if err := f.call(ctx, "truncate", req, resp); err != nil {
		return false, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return resp.GetResult(), nil
}

// RecoverLease asks the NameNode to recover the lease of name (another
// client's abandoned write). It reports whether the file is closed now.
func (f *FileSystem) RecoverLease(ctx context.Context, name string) (bool, error) {
	const op = "recover lease"
	p, err := f.resolve(op, name)
	if err != nil {
		return false, err
	}
	resp := &hdfs.RecoverLeaseResponseProto{}
	if err := f.call(ctx, "recoverLease", &hdfs.RecoverLeaseRequestProto{Src: proto.String(p), ClientName: proto.String(f.clientName)}, resp); err != nil {
		return false, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return resp.GetResult(), nil
}

// IsFileClosed reports whether name is closed: not open for write and not
// under lease or block recovery (e.g. after a truncate inside a block).
func (f *FileSystem) IsFileClosed(ctx context.Context, name string) (bool, error) {
	const op = "isFileClosed"
	p, err := f.resolve(op, name)
	if err != nil {
		return false, err
	}
	resp := &hdfs.IsFileClosedResponseProto{}
	if err := f.call(ctx, "isFileClosed", &hdfs.IsFileClosedRequestProto{Src: proto.String(p)}, resp); err != nil {
		return false, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return resp.GetResult(), nil
}

// BlockLocation is one block of a file and where its replicas are.
type BlockLocation struct {
	Offset int64
	Length int64
	Hosts  []string // DataNode transfer addresses host:port
}

// BlockLocations returns the blocks of name that overlap [off, off+n).
func (f *FileSystem) BlockLocations(ctx context.Context, name string, off, n int64) ([]BlockLocation, error) {
	const op = "getBlockLocations"
	p, err := f.resolve(op, name)
	if err != nil {
		return nil, err
	}
	req := &hdfs.GetBlockLocationsRequestProto{Src: proto.String(p), Offset: proto.Uint64(uint64(off)), Length: proto.Uint64(uint64(n))}
	resp := &hdfs.GetBlockLocationsResponseProto{}
	if err := f.call(ctx, "getBlockLocations", req, resp); err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	if resp.GetLocations() == nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	var out []BlockLocation
	for _, lb := range resp.GetLocations().GetBlocks() {
		bl := BlockLocation{Offset: int64(lb.GetOffset()), Length: int64(lb.GetB().GetNumBytes())}
		for _, l := range lb.GetLocs() {
			bl.Hosts = append(bl.Hosts, dnAddr(l.GetId()))
		}
		out = append(out, bl)
	}
	return out, nil
}

// Concat appends the blocks of the files srcs, in order, to the file
// target and deletes srcs (ClientProtocol concat). The NameNode requires
// every file in the same directory, closed, with the same block size.
func (f *FileSystem) Concat(ctx context.Context, target string, srcs []string) error {
	const op = "concat"
	trg, err := f.resolve(op, target)
	if err != nil {
		return err
	}
	req := &hdfs.ConcatRequestProto{Trg: proto.String(trg)}
	for _, s := range srcs {
		p, err := f.resolve(op, s)
		if err != nil {
			return err
		}
		req.Srcs = append(req.Srcs, p)
	}
	if err := f.call(ctx, "concat", req, &hdfs.ConcatResponseProto{}); err != nil {
		return &fs.PathError{Op: op, Path: target, Err: err}
	}
	return nil
}
