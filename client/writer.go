package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// CreateOptions are the parameters of CreateFile. Zero values mean the
// FileSystem's Options, else the NameNode's server defaults.
type CreateOptions struct {
	Replication uint16
	BlockSize   int64
	// Perm is the permission before the umask; 0 means 0666 (Hadoop's
	// default for files).
	Perm fs.FileMode
	// Overwrite replaces an existing file instead of failing with
	// fs.ErrExist.
	Overwrite bool
	// CreateParent creates missing parent directories.
	CreateParent bool
}

// Writer writes one HDFS file. It implements io.Writer, io.ReaderFrom and
// io.Closer. Data is cut into packets of chunk-checksummed data sent down
// the block's DataNode pipeline; Write returns once the data is buffered
// or queued, Flush and Sync wait for the DataNodes' acknowledgements.
// A Writer must be closed: Close sends what is buffered, ends the last
// block and completes the file. Its methods may be called from several
// goroutines; they are serialized.
type Writer struct {
	f           *FileSystem
	ctx         context.Context
	name        string // as the caller wrote it
	path        string // absolute
	fileID      uint64
	blockSize   int64
	replication uint16 // of the file, for the replace-datanode-on-failure policy
	csum        datatransfer.DataChecksum
	packetSize  int // data bytes of a full packet, a multiple of the chunk size
	free        chan []byte

	mu struct {
		sync.Mutex
		buf        []byte // data of the packet being filled
		lb         *hdfs.LocatedBlockProto
		prev       *hdfs.ExtendedBlockProto // last finished block
		pipe       *pipeline
		blockBytes int64 // bytes of lb already sent
		seqno      int64
		excluded   []*hdfs.DatanodeInfoProto
		appendOpen bool // lb is the reopened last block of an append
		persisted  bool // fsync was called since lb was allocated
		flushed    bool // Flush or Sync happened in this block
		appended   bool // this block was reopened by an append
		err        error
		closed     bool
	}
}

// Create creates name (which must not exist) with the default options
// and returns a Writer for it.
func (f *FileSystem) Create(ctx context.Context, name string) (*Writer, error) {
	return f.CreateFile(ctx, name, CreateOptions{})
}

// CreateFile creates name with opts and returns a Writer for it. The
// context is used by every call the Writer makes, until Close.
func (f *FileSystem) CreateFile(ctx context.Context, name string, opts CreateOptions) (*Writer, error) {
	const op = "create"
	p, err := f.resolve(op, name)
	if err != nil {
		return nil, err
	}
	d, err := f.ServerDefaults(ctx)
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	repl, bs := opts.Replication, opts.BlockSize
	if repl == 0 {
		repl = f.replication
	}
	if repl == 0 {
		repl = d.Replication
	}
	if bs == 0 {
		bs = f.blockSize
	}
	if bs == 0 {
		bs = d.BlockSize
	}
	perm := opts.Perm
	if perm == 0 {
		perm = 0o666
	}
	flag := uint32(hdfs.CreateFlagProto_CREATE)
	if opts.Overwrite {
		flag |= uint32(hdfs.CreateFlagProto_OVERWRITE)
	}
	req := &hdfs.CreateRequestProto{
		Src:          proto.String(p),
		Masked:       &hdfs.FsPermissionProto{Perm: proto.Uint32(permBits(perm) &^ f.umask)},
		ClientName:   proto.String(f.clientName),
		CreateFlag:   proto.Uint32(flag),
		CreateParent: proto.Bool(opts.CreateParent),
		Replication:  proto.Uint32(uint32(repl)),
		BlockSize:    proto.Uint64(uint64(bs)),
	}
	resp := &hdfs.CreateResponseProto{}
	if err := f.call(ctx, "create", req, resp); err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	w := f.newWriter(ctx, name, p, resp.GetFs().GetFileId(), bs, d)
	w.replication = repl
	f.beginLease()
	return w, nil
}

// Append opens the existing file name for appending. The first write
// reopens its last block if that is not full, or starts a new block.
func (f *FileSystem) Append(ctx context.Context, name string) (*Writer, error) {
	const op = "append"
	p, err := f.resolve(op, name)
	if err != nil {
		return nil, err
	}
	d, err := f.ServerDefaults(ctx)
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	req := &hdfs.AppendRequestProto{
		Src:        proto.String(p),
		ClientName: proto.String(f.clientName),
		Flag:       proto.Uint32(uint32(hdfs.CreateFlagProto_APPEND)),
	}
	resp := &hdfs.AppendResponseProto{}
	if err := f.call(ctx, "append", req, resp); err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	st := resp.GetStat()
	bs := int64(st.GetBlocksize())
	if bs <= 0 {
		bs = d.BlockSize
	}
	w := f.newWriter(ctx, name, p, st.GetFileId(), bs, d)
	w.replication = uint16(st.GetBlockReplication())
	if lb := resp.GetBlock(); lb != nil {
		if int64(lb.GetB().GetNumBytes()) < bs {
			w.mu.lb = lb
			w.mu.blockBytes = int64(lb.GetB().GetNumBytes())
			w.mu.appendOpen = true
		} else {
			w.mu.prev = copyBlock(lb.GetB())
		}
	}
	f.beginLease()
	return w, nil
}

func (f *FileSystem) newWriter(ctx context.Context, name, p string, fileID uint64, bs int64, d ServerDefaults) *Writer {
	w := &Writer{f: f, ctx: ctx, name: name, path: p, fileID: fileID, blockSize: bs, csum: checksumFromDefaults(d)}
	ps := f.packetSize
	if ps <= 0 {
		ps = int(d.WritePacketSize)
	}
	if ps <= 0 || ps > maxWritePacketSize {
		ps = defaultPacketSize
	}
	// As Hadoop: whole chunks (data plus checksum) that fit in the packet
	// size after the largest header.
	chunk := w.csum.BytesPerChecksum + w.csum.Size()
	chunks := max((ps-datatransfer.PacketPrefixLen-datatransfer.MaxPacketHeaderLen)/chunk, 1)
	w.packetSize = chunks * w.csum.BytesPerChecksum
	w.free = make(chan []byte, maxPacketsInFlight+1)
	w.mu.buf = make([]byte, 0, w.packetSize)
	return w
}

// Name returns the name the Writer was opened with.
func (w *Writer) Name() string { return w.name }

func (w *Writer) pathErr(op string, err error) error {
	return &fs.PathError{Op: op, Path: w.name, Err: err}
}

// roomLocked is the size of the packet being filled: up to the next chunk
// boundary when the block offset is not chunk-aligned (after a flush or on
// append), else a full packet; never past the block's end.
func (w *Writer) roomLocked() int {
	off := w.mu.blockBytes
	bpc := int64(w.csum.BytesPerChecksum)
	room := int64(w.packetSize)
	if r := off % bpc; r != 0 {
		room = bpc - r
	}
	return int(min(room, w.blockSize-off))
}

// Write implements io.Writer.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked(); err != nil {
		return 0, err
	}
	n := 0
	for len(p) > 0 {
		if err := w.ensureBlockLocked(); err != nil {
			return n, w.setErrLocked(err)
		}
		room := w.roomLocked() - len(w.mu.buf)
		k := min(room, len(p))
		w.mu.buf = append(w.mu.buf, p[:k]...)
		p = p[k:]
		n += k
		if err := w.afterFillLocked(); err != nil {
			return n, w.setErrLocked(err)
		}
	}
	if err := w.flushPendingLocked(); err != nil {
		return n, w.setErrLocked(err)
	}
	return n, nil
}

// flushPendingLocked writes the packets queued on the pipeline and not yet
// sent (see pipeline.send), recovering the pipeline as needed.
func (w *Writer) flushPendingLocked() error {
	if w.mu.pipe == nil {
		return nil
	}
	err := w.mu.pipe.flush()
	if err == nil {
		return nil
	}
	return w.recoverLocked(err, nil)
}

// ReadFrom implements io.ReaderFrom: it reads straight into packet
// buffers.
func (w *Writer) ReadFrom(r io.Reader) (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked(); err != nil {
		return 0, err
	}
	var total int64
	for {
		if err := w.ensureBlockLocked(); err != nil {
			return total, w.setErrLocked(err)
		}
		room := w.roomLocked()
		buf := w.mu.buf
		want := room - len(buf)
		n, rerr := r.Read(buf[len(buf):room])
		w.mu.buf = buf[:len(buf)+n]
		total += int64(n)
		if err := w.afterFillLocked(); err != nil {
			return total, w.setErrLocked(err)
		}
		if n < want || rerr != nil {
			// The source is slow or done: what is gathered goes out now.
			if err := w.flushPendingLocked(); err != nil {
				return total, w.setErrLocked(err)
			}
		}
		if rerr == io.EOF {
			return total, nil
		}
		if rerr != nil {
			return total, rerr
		}
	}
}

// afterFillLocked sends the packet when it is full, and ends the block when
// it is.
func (w *Writer) afterFillLocked() error {
	if len(w.mu.buf) < w.roomLocked() {
		return nil
	}
	if err := w.sendLocked(false, false); err != nil {
		return err
	}
	if w.mu.blockBytes >= w.blockSize {
		return w.endBlockLocked()
	}
	return nil
}

func (w *Writer) usableLocked() error {
	if w.mu.closed {
		return w.pathErr("write", ErrWriterClosed)
	}
	if w.mu.err == nil && w.ctx.Err() != nil {
		return w.setErrLocked(w.ctx.Err())
	}
	return w.mu.err
}

func (w *Writer) setErrLocked(err error) error {
	if w.mu.err == nil {
		if _, ok := err.(*fs.PathError); !ok {
			err = w.pathErr("write", err)
		}
		w.mu.err = err
	}
	if w.mu.pipe != nil {
		w.mu.pipe.close()
		w.mu.pipe = nil
	}
	return w.mu.err
}

// sendLocked sends the buffered data as the next packet (possibly empty).
func (w *Writer) sendLocked(sync, last bool) error {
	w.mu.seqno++
	pkt := &packet{hdr: datatransfer.PacketHeader{
		OffsetInBlock: w.mu.blockBytes, Seqno: w.mu.seqno, LastPacketInBlock: last, SyncBlock: sync,
	}}
	if len(w.mu.buf) > 0 {
		pkt.data = w.mu.buf
		w.mu.blockBytes += int64(len(pkt.data))
		select {
		case b := <-w.free:
			w.mu.buf = b
		default:
			w.mu.buf = make([]byte, 0, w.packetSize)
		}
	}
	queued, err := w.mu.pipe.send(w.ctx, pkt, w.csum)
	if err == nil {
		return nil
	}
	var pending []*packet
	if !queued {
		pending = []*packet{pkt}
	}
	return w.recoverLocked(err, pending)
}

// waitLocked waits for the ack of the last packet sent, recovering the
// pipeline as needed.
func (w *Writer) waitLocked() error {
	for {
		err := w.mu.pipe.waitAcked(w.ctx, w.mu.seqno)
		if err == nil {
			return nil
		}
		if rerr := w.recoverLocked(err, nil); rerr != nil {
			return rerr
		}
	}
}

// maxRecoveries bounds the pipeline rebuilds of one failure (Hadoop's
// DataStreamer gives up after 5).
const maxRecoveries = 5

// recoverLocked rebuilds a failed pipeline the way Hadoop's DataStreamer
// does: the node blamed for the failure is dropped, the NameNode gives the
// block a new generation stamp (updateBlockForPipeline), the remaining
// nodes are set up again with a recovery stage, the NameNode records the
// new pipeline (updatePipeline), and every packet not acknowledged is sent
// again. Replacement nodes are added first while Hadoop's DEFAULT
// replace-datanode-on-failure policy asks for one (shouldReplaceLocked),
// on a best-effort basis. pending are packets that never reached the old
// pipeline's queue.
func (w *Writer) recoverLocked(cause error, pending []*packet) error {
	old := w.mu.pipe
	w.mu.pipe = nil
	unacked, bad := old.unacked()
	unacked = append(unacked, pending...)
	if w.ctx.Err() != nil {
		return cause
	}
	nodes := old.nodes
	var failed []*hdfs.DatanodeInfoProto
	for attempt := 0; attempt < maxRecoveries; attempt++ {
		if bad < 0 || bad >= len(nodes) {
			bad = 0
		}
		failed = append(failed, nodes[bad])
		nodes = append(nodes[:bad:bad], nodes[bad+1:]...)
		if len(nodes) == 0 {
			break
		}
		acked := w.mu.blockBytes
		if len(unacked) > 0 {
			acked = unacked[0].hdr.OffsetInBlock
		}
		// Best effort: without a new node the pipeline goes on with the
		// ones left. Unlike Hadoop, which adds one node per recovery,
		// nodes are added until the policy is satisfied, so that a
		// pipeline that lost several nodes at once is whole again.
		for w.shouldReplaceLocked(len(nodes)) {
			more, err := w.addDatanodeLocked(nodes, failed, acked)
			if err != nil {
				break
			}
			nodes = more
		}
		p, badIdx, err := w.rebuildLocked(nodes, unacked)
		if err != nil {
			if badIdx == rebuildFatal {
				return err
			}
			cause, bad = err, badIdx
			continue
		}
		var rest []*packet
		failed := false
		for i, pkt := range unacked {
			queued, err := p.send(w.ctx, pkt, w.csum)
			if err != nil {
				failed, cause = true, err
				if queued {
					rest = unacked[i+1:]
				} else {
					rest = unacked[i:]
				}
				break
			}
		}
		if !failed {
			if err := p.flush(); err != nil {
				failed, cause = true, err
			}
		}
		if !failed {
			w.mu.pipe = p
			return nil
		}
		unacked, bad = p.unacked()
		unacked = append(unacked, rest...)
		nodes = p.nodes
	}
	// One "write pipeline failed" in the message, however many the causes
	// carry; errors.Is still finds ErrPipeline and the cause.
	detail := cause.Error()
	for strings.HasPrefix(detail, ErrPipeline.Error()+": ") {
		detail = strings.TrimPrefix(detail, ErrPipeline.Error()+": ")
	}
	return &pipelineError{
		msg:   fmt.Sprintf("%v: block %s: no usable datanode left: %s", ErrPipeline, blockName(w.mu.lb.GetB()), detail),
		cause: cause,
	}
}

// pipelineError is a pipeline's final failure: ErrPipeline with its cause.
type pipelineError struct {
	msg   string
	cause error
}

func (e *pipelineError) Error() string   { return e.msg }
func (e *pipelineError) Unwrap() []error { return []error{ErrPipeline, e.cause} }

// rebuildFatal is the bad-node index rebuildLocked returns when the
// failure is not a DataNode's (a NameNode call failed).
const rebuildFatal = -2

// rebuildLocked sets up a recovery pipeline over nodes for the current
// block.
func (w *Writer) rebuildLocked(nodes []*hdfs.DatanodeInfoProto, unacked []*packet) (*pipeline, int, error) {
	lb := w.mu.lb
	ub := &hdfs.UpdateBlockForPipelineResponseProto{}
	if err := w.f.call(w.ctx, "updateBlockForPipeline", &hdfs.UpdateBlockForPipelineRequestProto{
		Block: lb.GetB(), ClientName: proto.String(w.f.clientName)}, ub); err != nil {
		return nil, rebuildFatal, err
	}
	newGS := ub.GetBlock().GetB().GetGenerationStamp()
	acked := w.mu.blockBytes
	stage := hdfs.OpWriteBlockProto_PIPELINE_SETUP_STREAMING_RECOVERY
	if len(unacked) > 0 {
		acked = unacked[0].hdr.OffsetInBlock
	}
	for _, pkt := range unacked {
		if pkt.hdr.LastPacketInBlock {
			stage = hdfs.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY
		}
	}
	hb := proto.Clone(lb).(*hdfs.LocatedBlockProto)
	hb.B.NumBytes = proto.Uint64(uint64(acked))
	if t := ub.GetBlock().GetBlockToken(); t != nil {
		hb.BlockToken = t
	}
	storage := map[string]string{}
	for i, l := range lb.GetLocs() {
		if i < len(lb.GetStorageIDs()) {
			storage[l.GetId().GetDatanodeUuid()] = lb.GetStorageIDs()[i]
		}
	}
	var ids []string
	for _, n := range nodes {
		if id, ok := storage[n.GetId().GetDatanodeUuid()]; ok {
			ids = append(ids, id)
		}
	}
	if len(ids) != len(nodes) {
		ids = nil
	}
	hb.Locs, hb.StorageIDs, hb.StorageTypes = nodes, ids, nil
	p, bad, err := openPipeline(w.ctx, w.f.dialer, w.f.clientName, hb, nodes, stage, newGS, acked, w.mu.blockBytes, w.csum, w.free, w.f.heartbeat)
	if err != nil {
		return nil, bad, err
	}
	nb := copyBlock(lb.GetB())
	nb.GenerationStamp = proto.Uint64(newGS)
	nb.NumBytes = proto.Uint64(uint64(acked))
	up := &hdfs.UpdatePipelineRequestProto{
		ClientName: proto.String(w.f.clientName),
		OldBlock:   lb.GetB(),
		NewBlock:   nb,
		NewNodes:   idsOf(nodes),
		StorageIDs: ids,
	}
	if err := w.f.call(w.ctx, "updatePipeline", up, &hdfs.UpdatePipelineResponseProto{}); err != nil {
		p.close()
		return nil, rebuildFatal, err
	}
	hb.B = copyBlock(nb)
	w.mu.lb = hb
	return p, -1, nil
}

// ensureBlockLocked makes sure a pipeline is open for the next byte.
func (w *Writer) ensureBlockLocked() error {
	if w.mu.pipe != nil {
		return nil
	}
	if w.mu.appendOpen {
		return w.reopenForAppendLocked()
	}
	return w.nextBlockLocked()
}

// nextBlockLocked asks the NameNode for a new block and opens its
// pipeline; a pipeline that cannot be set up is abandoned and the bad node
// excluded, up to blockWriteRetries times.
func (w *Writer) nextBlockLocked() error {
	var lastErr error
	for try := 0; try < blockWriteRetries; try++ {
		lb, err := w.addBlock()
		if err != nil {
			return err
		}
		p, bad, err := openPipeline(w.ctx, w.f.dialer, w.f.clientName, lb, lb.GetLocs(),
			hdfs.OpWriteBlockProto_PIPELINE_SETUP_CREATE, 0, 0, 0, w.csum, w.free, w.f.heartbeat)
		if err == nil {
			w.mu.pipe, w.mu.lb, w.mu.blockBytes, w.mu.seqno = p, lb, 0, 0
			w.mu.persisted, w.mu.flushed, w.mu.appended = false, false, false
			return nil
		}
		lastErr = err
		ab := &hdfs.AbandonBlockRequestProto{B: lb.GetB(), Src: proto.String(w.path), Holder: proto.String(w.f.clientName)}
		if w.fileID != 0 {
			ab.FileId = proto.Uint64(w.fileID)
		}
		if aerr := w.f.call(w.ctx, "abandonBlock", ab, &hdfs.AbandonBlockResponseProto{}); aerr != nil {
			return errors.Join(err, aerr)
		}
		// A refused token is no fault of the node: the next addBlock
		// brings a new one (and a new block).
		if bad >= 0 && bad < len(lb.GetLocs()) && !w.f.tokenError(err) {
			w.mu.excluded = append(w.mu.excluded, lb.GetLocs()[bad])
		}
	}
	return lastErr
}

// addBlock calls addBlock, retrying while the NameNode says the previous
// block is not replicated yet.
func (w *Writer) addBlock() (*hdfs.LocatedBlockProto, error) {
	req := &hdfs.AddBlockRequestProto{
		Src:          proto.String(w.path),
		ClientName:   proto.String(w.f.clientName),
		Previous:     w.mu.prev,
		ExcludeNodes: w.mu.excluded,
	}
	if w.fileID != 0 {
		req.FileId = proto.Uint64(w.fileID)
	}
	var lb *hdfs.LocatedBlockProto
	_, err := retryFalse(w.ctx, func() (bool, error) {
		resp := &hdfs.AddBlockResponseProto{}
		err := w.f.call(w.ctx, "addBlock", req, resp)
		if err != nil {
			if class, _ := remoteerr.ClassOf(err); strings.HasSuffix(class, "NotReplicatedYetException") {
				return false, nil
			}
			return false, err
		}
		lb = resp.GetBlock()
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if lb == nil {
		return nil, fmt.Errorf("%w: addBlock gave no block for %s", ErrNotComplete, w.path)
	}
	if len(lb.GetLocs()) == 0 {
		return nil, fmt.Errorf("%w: addBlock gave no locations for %s", ErrPipeline, w.path)
	}
	return lb, nil
}

// reopenForAppendLocked reopens the file's partial last block: a new
// generation stamp (updateBlockForPipeline), WRITE_BLOCK with stage
// PIPELINE_SETUP_APPEND, then updatePipeline to commit the stamp.
func (w *Writer) reopenForAppendLocked() error {
	lb := w.mu.lb
	nodes := lb.GetLocs()
	stage := hdfs.OpWriteBlockProto_PIPELINE_SETUP_APPEND
	var (
		p       *pipeline
		newGS   uint64
		withTok *hdfs.LocatedBlockProto
	)
	for attempt := 0; ; attempt++ {
		ub := &hdfs.UpdateBlockForPipelineResponseProto{}
		if err := w.f.call(w.ctx, "updateBlockForPipeline", &hdfs.UpdateBlockForPipelineRequestProto{
			Block: lb.GetB(), ClientName: proto.String(w.f.clientName)}, ub); err != nil {
			return err
		}
		newGS = ub.GetBlock().GetB().GetGenerationStamp()
		if newGS == 0 {
			return fmt.Errorf("%w: updateBlockForPipeline gave no generation stamp", ErrBadResponse)
		}
		withTok = proto.Clone(lb).(*hdfs.LocatedBlockProto)
		if t := ub.GetBlock().GetBlockToken(); t != nil {
			withTok.BlockToken = t
		}
		var bad int
		var err error
		p, bad, err = openPipeline(w.ctx, w.f.dialer, w.f.clientName, withTok, nodes,
			stage, newGS, w.mu.blockBytes, w.mu.blockBytes, w.csum, w.free, w.f.heartbeat)
		if err == nil {
			break
		}
		// A node that fails the setup is left out and the others are set
		// up again with the append recovery stage, as Hadoop does.
		if bad < 0 || bad >= len(nodes) || len(nodes) == 1 || attempt+1 >= maxRecoveries || w.ctx.Err() != nil {
			return err
		}
		nodes = append(nodes[:bad:bad], nodes[bad+1:]...)
		stage = hdfs.OpWriteBlockProto_PIPELINE_SETUP_APPEND_RECOVERY
	}
	nb := copyBlock(lb.GetB())
	nb.GenerationStamp = proto.Uint64(newGS)
	storage := map[string]string{}
	for i, l := range lb.GetLocs() {
		if i < len(lb.GetStorageIDs()) {
			storage[l.GetId().GetDatanodeUuid()] = lb.GetStorageIDs()[i]
		}
	}
	var ids []string
	for _, n := range nodes {
		if id, ok := storage[n.GetId().GetDatanodeUuid()]; ok {
			ids = append(ids, id)
		}
	}
	if len(ids) != len(nodes) {
		ids = nil
	}
	up := &hdfs.UpdatePipelineRequestProto{
		ClientName: proto.String(w.f.clientName),
		OldBlock:   lb.GetB(),
		NewBlock:   nb,
		NewNodes:   idsOf(nodes),
		StorageIDs: ids,
	}
	if err := w.f.call(w.ctx, "updatePipeline", up, &hdfs.UpdatePipelineResponseProto{}); err != nil {
		p.close()
		return err
	}
	withTok.B = nb
	withTok.Locs, withTok.StorageIDs, withTok.StorageTypes = nodes, ids, nil
	w.mu.lb, w.mu.pipe, w.mu.seqno, w.mu.appendOpen = withTok, p, 0, false
	w.mu.appended = true
	return nil
}

func idsOf(locs []*hdfs.DatanodeInfoProto) []*hdfs.DatanodeIDProto {
	out := make([]*hdfs.DatanodeIDProto, len(locs))
	for i, l := range locs {
		out[i] = l.GetId()
	}
	return out
}

// endBlockLocked sends what is buffered, waits until all of it is
// acknowledged, then sends the empty last packet and waits for its ack, and
// closes the pipeline. As in Hadoop's DataStreamer, the last packet goes
// alone: a failure while it is unacknowledged is a close recovery
// (PIPELINE_CLOSE_RECOVERY), where every node of the rebuilt pipeline
// already holds the whole block.
func (w *Writer) endBlockLocked() error {
	if len(w.mu.buf) > 0 {
		if err := w.sendLocked(false, false); err != nil {
			return err
		}
	}
	if err := w.waitLocked(); err != nil {
		return err
	}
	if err := w.sendLocked(false, true); err != nil {
		return err
	}
	if err := w.waitLocked(); err != nil {
		return err
	}
	w.mu.pipe.close()
	w.mu.pipe = nil
	b := copyBlock(w.mu.lb.GetB())
	b.NumBytes = proto.Uint64(uint64(w.mu.blockBytes))
	w.mu.prev, w.mu.lb, w.mu.blockBytes = b, nil, 0
	return nil
}

// Flush sends the buffered data and waits until every DataNode of the
// pipeline has acknowledged it (Hadoop's hflush); new readers see it.
func (w *Writer) Flush() error { return w.flush(false) }

// Sync is Flush that also asks the DataNodes to make the data durable on
// disk (Hadoop's hsync).
func (w *Writer) Sync() error { return w.flush(true) }

func (w *Writer) flush(sync bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked(); err != nil {
		return err
	}
	if w.mu.pipe == nil {
		if len(w.mu.buf) == 0 && !(sync && w.mu.appendOpen) {
			return nil
		}
		if err := w.ensureBlockLocked(); err != nil {
			return w.setErrLocked(err)
		}
	}
	w.mu.flushed = true
	if len(w.mu.buf) > 0 || sync {
		if err := w.sendLocked(sync, false); err != nil {
			return w.setErrLocked(err)
		}
	}
	if err := w.waitLocked(); err != nil {
		return w.setErrLocked(err)
	}
	// As Hadoop's client: the first flush of a block, and every Sync, tell
	// the NameNode the block's length (readers ask the DataNodes for the
	// rest, getReplicaVisibleLength).
	if w.mu.persisted && !sync {
		return nil
	}
	w.mu.persisted = true
	fr := &hdfs.FsyncRequestProto{
		Src: proto.String(w.path), Client: proto.String(w.f.clientName),
		LastBlockLength: proto.Int64(w.mu.blockBytes),
	}
	if w.fileID != 0 {
		fr.FileId = proto.Uint64(w.fileID)
	}
	if err := w.f.call(w.ctx, "fsync", fr, &hdfs.FsyncResponseProto{}); err != nil {
		return w.setErrLocked(err)
	}
	return nil
}

// Close sends the buffered data, ends the last block and completes the
// file, retrying complete while the NameNode answers false (the last
// block is not yet minimally replicated).
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return w.mu.err
	}
	w.mu.closed = true
	defer w.f.endLease()
	if w.mu.err == nil && w.ctx.Err() != nil {
		w.setErrLocked(w.ctx.Err())
	}
	if w.mu.err != nil {
		if w.mu.pipe != nil {
			w.mu.pipe.close()
			w.mu.pipe = nil
		}
		return w.mu.err
	}
	if w.mu.pipe != nil {
		if err := w.endBlockLocked(); err != nil {
			return w.setErrLocked(err)
		}
	}
	last := w.mu.prev
	if w.mu.appendOpen {
		last = w.mu.lb.GetB()
	}
	req := &hdfs.CompleteRequestProto{Src: proto.String(w.path), ClientName: proto.String(w.f.clientName), Last: last}
	if w.fileID != 0 {
		req.FileId = proto.Uint64(w.fileID)
	}
	ok, err := retryFalse(w.ctx, func() (bool, error) {
		resp := &hdfs.CompleteResponseProto{}
		if err := w.f.call(w.ctx, "complete", req, resp); err != nil {
			return false, err
		}
		return resp.GetResult(), nil
	})
	if err != nil {
		return w.setErrLocked(err)
	}
	if !ok {
		return w.setErrLocked(ErrNotComplete)
	}
	return nil
}

// WriteFile creates (or with overwrite true replaces) name with data.
func (f *FileSystem) WriteFile(ctx context.Context, name string, data []byte, overwrite bool) error {
	w, err := f.CreateFile(ctx, name, CreateOptions{Overwrite: overwrite})
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
