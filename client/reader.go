package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// prefetchSize is how much of a file one getBlockLocations call covers
// (Hadoop's dfs.client.read.prefetch.size: ten default blocks).
const prefetchSize = 10 * 128 << 20

// Reader reads one HDFS file. It implements io.Reader, io.ReaderAt,
// io.Seeker, io.WriterTo and io.Closer. Every chunk is verified against
// its checksum; a replica that fails (connect error, error status,
// checksum mismatch) is skipped for the rest of the Reader's life and the
// read resumes at the same offset on the next location; checksum
// mismatches are reported to the NameNode (reportBadBlocks).
//
// ReadAt may be called concurrently with any method; Read, Seek and
// WriteTo share the file offset and must not run concurrently with each
// other.
type Reader struct {
	f    *FileSystem
	ctx  context.Context
	name string
	path string

	mu struct {
		sync.Mutex
		blocks []*hdfs.LocatedBlockProto // sorted by offset
		size   int64
		dead   map[string]bool // DataNode addresses that failed this reader
		// rounds counts the times every location of a block failed since a
		// block range was last read whole.
		rounds int
	}

	off     int64 // sequential offset (Read, Seek, WriteTo)
	br      *blockReader
	brBlock *hdfs.LocatedBlockProto
	closed  bool
}

// Open opens name for reading. The context is used by every call the
// Reader makes.
func (f *FileSystem) Open(ctx context.Context, name string) (*Reader, error) {
	p, err := f.resolve("open", name)
	if err != nil {
		return nil, err
	}
	r := &Reader{f: f, ctx: ctx, name: name, path: p}
	r.mu.dead = map[string]bool{}
	if err := r.fetch(0); err != nil {
		return nil, err
	}
	return r, nil
}

// ReadFile returns the whole content of name.
func (f *FileSystem) ReadFile(ctx context.Context, name string) ([]byte, error) {
	r, err := f.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var b bytes.Buffer
	b.Grow(int(r.Size()))
	if _, err := r.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (r *Reader) pathErr(op string, err error) error {
	return &fs.PathError{Op: op, Path: r.name, Err: err}
}

// fetch asks the NameNode for the blocks from off on and merges them into
// the cache.
func (r *Reader) fetch(off int64) error {
	req := &hdfs.GetBlockLocationsRequestProto{Src: proto.String(r.path), Offset: proto.Uint64(uint64(off)), Length: proto.Uint64(prefetchSize)}
	resp := &hdfs.GetBlockLocationsResponseProto{}
	if err := r.f.call(r.ctx, "getBlockLocations", req, resp); err != nil {
		return r.pathErr("open", err)
	}
	lbs := resp.GetLocations()
	if lbs == nil {
		return r.pathErr("open", fs.ErrNotExist)
	}
	size := int64(lbs.GetFileLength())
	blocks := lbs.GetBlocks()
	if last := lbs.GetLastBlock(); lbs.GetUnderConstruction() && last != nil && !lbs.GetIsLastBlockComplete() {
		// The NameNode leaves the block being written out of fileLength.
		// Its length is what a DataNode holding it can vouch for
		// (getReplicaVisibleLength), else what the writer last reported
		// to the NameNode (fsync).
		if n, ok := r.f.visibleLength(r.ctx, last); ok && n > int64(last.GetB().GetNumBytes()) {
			last = proto.Clone(last).(*hdfs.LocatedBlockProto)
			last.B.NumBytes = proto.Uint64(uint64(n))
		}
		// The block being written replaces any entry for it in blocks.
		kept := make([]*hdfs.LocatedBlockProto, 0, len(blocks)+1)
		for _, b := range blocks {
			if b.GetOffset() != last.GetOffset() {
				kept = append(kept, b)
			}
		}
		blocks = append(kept, last)
		size = max(size, int64(last.GetOffset()+last.GetB().GetNumBytes()))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.size = size
	byOff := map[uint64]*hdfs.LocatedBlockProto{}
	for _, b := range r.mu.blocks {
		byOff[b.GetOffset()] = b
	}
	for _, b := range blocks {
		byOff[b.GetOffset()] = b
	}
	r.mu.blocks = r.mu.blocks[:0]
	for _, b := range byOff {
		r.mu.blocks = append(r.mu.blocks, b)
	}
	sort.Slice(r.mu.blocks, func(i, j int) bool { return r.mu.blocks[i].GetOffset() < r.mu.blocks[j].GetOffset() })
	return nil
}

// clientDatanodeProtocol is the RPC protocol a DataNode serves clients on
// its IPC port.
const clientDatanodeProtocol = "org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol"

// visibleLength asks the locations of a block being written how many of
// its bytes readers may see, the first answer winning.
func (f *FileSystem) visibleLength(ctx context.Context, lb *hdfs.LocatedBlockProto) (int64, bool) {
	req := &hdfs.GetReplicaVisibleLengthRequestProto{Block: lb.GetB()}
	for _, loc := range lb.GetLocs() {
		id := loc.GetId()
		if id.GetIpcPort() == 0 {
			continue
		}
		cfg := ipc.ClientConfig{
			Addresses:   []string{net.JoinHostPort(id.GetIpAddr(), strconv.Itoa(int(id.GetIpcPort())))},
			User:        f.user,
			Protocol:    clientDatanodeProtocol,
			DialTimeout: dialTimeout,
			MaxRetries:  -1,
		}
		if tok := lb.GetBlockToken(); len(tok.GetIdentifier()) > 0 {
			// With block tokens on, the DataNode takes the block token as
			// the connection's credential (TOKEN) and checks that it
			// grants READ on the block.
			cfg.Token, cfg.TokenUser = tok, f.user
		}
		c := ipc.NewClient(cfg)
		resp := &hdfs.GetReplicaVisibleLengthResponseProto{}
		err := c.Call(ctx, "getReplicaVisibleLength", req, resp)
		c.Close()
		if err == nil {
			return int64(resp.GetLength()), true
		}
	}
	return 0, false
}

// Size returns the file's length as known when it was opened.
func (r *Reader) Size() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.size
}

// Name returns the name the Reader was opened with.
func (r *Reader) Name() string { return r.name }

// locate returns the block holding file offset off, fetching locations
// when the cache does not cover it.
func (r *Reader) locate(off int64) (*hdfs.LocatedBlockProto, error) {
	for try := 0; try < 2; try++ {
		r.mu.Lock()
		bs := r.mu.blocks
		i := sort.Search(len(bs), func(i int) bool {
			return int64(bs[i].GetOffset()+bs[i].GetB().GetNumBytes()) > off
		})
		var lb *hdfs.LocatedBlockProto
		if i < len(bs) && int64(bs[i].GetOffset()) <= off {
			lb = bs[i]
		}
		r.mu.Unlock()
		if lb != nil {
			return lb, nil
		}
		if try == 0 {
			if err := r.fetch(off); err != nil {
				return nil, err
			}
		}
	}
	return nil, r.pathErr("read", fmt.Errorf("%w: no block at offset %d", ErrNoReplica, off))
}

// openAt opens a block reader for n bytes at file offset off (n < 0: to
// the end of the block), trying the live locations in order. When every
// location has failed it waits, forgets the failures, asks the NameNode
// for the locations again and retries, up to blockAcquireFailures times in
// all, as Hadoop's reader does.
func (r *Reader) openAt(off, n int64) (*blockReader, *hdfs.LocatedBlockProto, error) {
	// A refused block token (expired, say) is cured once by asking the
	// NameNode for the block's locations and tokens again, as Hadoop's
	// DFSInputStream does.
	refetch := 1
rounds:
	for {
		var errs []string
		lb, err := r.locate(off)
		if err != nil {
			return nil, nil, err
		}
		boff := off - int64(lb.GetOffset())
		m := n
		if rest := int64(lb.GetB().GetNumBytes()) - boff; m < 0 || m > rest {
			m = rest
		}
		for _, loc := range lb.GetLocs() {
			addr := dnAddr(loc.GetId())
			r.mu.Lock()
			dead := r.mu.dead[addr]
			r.mu.Unlock()
			if dead {
				continue
			}
			br, err := openBlockReader(r.ctx, r.f.dialer, r.f.clientName, lb, loc, boff, m)
			if err == nil {
				return br, lb, nil
			}
			if r.ctx.Err() != nil {
				return nil, nil, r.pathErr("read", r.ctx.Err())
			}
			if refetch > 0 && r.f.tokenError(err) {
				refetch--
				if err := r.fetch(off); err != nil {
					return nil, nil, err
				}
				continue rounds
			}
			errs = append(errs, addr+": "+err.Error())
			r.markDead(addr)
		}
		r.mu.Lock()
		r.mu.rounds++
		failures := r.mu.rounds - 1
		r.mu.Unlock()
		if failures+1 >= blockAcquireFailures {
			return nil, nil, r.noReplica(lb, off, errs)
		}
		// Hadoop waits a growing, randomized window before trying again.
		wait := r.f.retryWindow*time.Duration(failures) + time.Duration(rand.Int64N(int64(r.f.retryWindow)*int64(failures+1)+1))
		t := time.NewTimer(wait)
		select {
		case <-r.ctx.Done():
			t.Stop()
			return nil, nil, r.pathErr("read", r.ctx.Err())
		case <-t.C:
		}
		r.mu.Lock()
		r.mu.dead = map[string]bool{}
		r.mu.Unlock()
		if err := r.fetch(off); err != nil {
			return nil, nil, err
		}
	}
}

func (r *Reader) noReplica(lb *hdfs.LocatedBlockProto, off int64, errs []string) error {
	var nodes []string
	for _, l := range lb.GetLocs() {
		nodes = append(nodes, dnAddr(l.GetId()))
	}
	msg := fmt.Sprintf("%s at file offset %d from any of [%s]", blockName(lb.GetB()), off, strings.Join(nodes, ", "))
	if len(errs) > 0 {
		msg += ": " + strings.Join(errs, "; ")
	}
	return r.pathErr("read", fmt.Errorf("%w: %s", ErrNoReplica, msg))
}

// blockDone resets the failure rounds after a block range was read whole.
func (r *Reader) blockDone() {
	r.mu.Lock()
	r.mu.rounds = 0
	r.mu.Unlock()
}

func (r *Reader) markDead(addr string) {
	r.mu.Lock()
	r.mu.dead[addr] = true
	r.mu.Unlock()
}

// replicaFailed handles an error of an open block reader: the node is
// skipped from now on, and a checksum error is reported to the NameNode.
func (r *Reader) replicaFailed(lb *hdfs.LocatedBlockProto, br *blockReader, err error) {
	br.close(false)
	r.markDead(br.node)
	var ce *badChecksumError
	if !errors.As(err, &ce) {
		return
	}
	bad := proto.Clone(lb).(*hdfs.LocatedBlockProto)
	bad.Locs = nil
	for _, l := range lb.GetLocs() {
		if dnAddr(l.GetId()) == br.node {
			bad.Locs = append(bad.Locs, l)
		}
	}
	bad.StorageIDs, bad.StorageTypes, bad.IsCached = nil, nil, nil
	bad.Corrupt = proto.Bool(true)
	if bad.BlockToken == nil {
		bad.BlockToken = tokenOrEmpty(nil)
	}
	// Best effort: the read goes on from another replica either way.
	_ = r.f.call(r.ctx, "reportBadBlocks", &hdfs.ReportBadBlocksRequestProto{Blocks: []*hdfs.LocatedBlockProto{bad}}, &hdfs.ReportBadBlocksResponseProto{})
}

// usable reports why the Reader cannot be used: closed, or its context
// ended.
func (r *Reader) usable() error {
	if r.closed {
		return r.pathErr("read", fs.ErrClosed)
	}
	if err := r.ctx.Err(); err != nil {
		return r.pathErr("read", err)
	}
	return nil
}

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	if err := r.usable(); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if r.off >= r.Size() {
			return 0, io.EOF
		}
		if r.br == nil {
			br, lb, err := r.openAt(r.off, -1)
			if err != nil {
				return 0, err
			}
			r.br, r.brBlock = br, lb
		}
		n, err := r.br.Read(p)
		r.off += int64(n)
		if n > 0 {
			return n, nil
		}
		if err == io.EOF {
			r.br.finish()
			r.br = nil
			r.blockDone()
			continue
		}
		r.replicaFailed(r.brBlock, r.br, err)
		r.br = nil
	}
}

// WriteTo implements io.WriterTo: it streams the rest of the file to w
// straight from the packet buffers.
func (r *Reader) WriteTo(w io.Writer) (int64, error) {
	if err := r.usable(); err != nil {
		return 0, err
	}
	var total int64
	for r.off < r.Size() {
		if r.br == nil {
			br, lb, err := r.openAt(r.off, -1)
			if err != nil {
				return total, err
			}
			r.br, r.brBlock = br, lb
		}
		n, werr, rerr := r.br.writeTo(w)
		r.off += n
		total += n
		if werr != nil {
			return total, werr
		}
		if rerr != nil {
			r.replicaFailed(r.brBlock, r.br, rerr)
			r.br = nil
			continue
		}
		r.br.finish()
		r.br = nil
		r.blockDone()
	}
	return total, nil
}

// ReadAt implements io.ReaderAt; it does not move the Read offset.
func (r *Reader) ReadAt(p []byte, off int64) (int, error) {
	if err := r.usable(); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, r.pathErr("read", fs.ErrInvalid)
	}
	size := r.Size()
	n := 0
	for n < len(p) && off+int64(n) < size {
		want := min(int64(len(p)-n), size-off-int64(n))
		br, lb, err := r.openAt(off+int64(n), want)
		if err != nil {
			return n, err
		}
		k, err := io.ReadFull(br, p[n:n+int(min(want, br.end-br.pos))])
		n += k
		if err != nil {
			r.replicaFailed(lb, br, err)
			continue
		}
		br.finish()
		r.blockDone()
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Seek implements io.Seeker. Seeking past the end is allowed; reads there
// return io.EOF.
func (r *Reader) Seek(offset int64, whence int) (int64, error) {
	if r.closed {
		return 0, r.pathErr("seek", fs.ErrClosed)
	}
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = r.off + offset
	case io.SeekEnd:
		abs = r.Size() + offset
	default:
		return r.off, r.pathErr("seek", fs.ErrInvalid)
	}
	if abs < 0 {
		return r.off, r.pathErr("seek", fs.ErrInvalid)
	}
	if abs != r.off && r.br != nil {
		r.br.close(false)
		r.br = nil
	}
	r.off = abs
	return abs, nil
}

// Close releases the DataNode connection.
func (r *Reader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.br != nil {
		r.br.close(false)
		r.br = nil
	}
	return nil
}
