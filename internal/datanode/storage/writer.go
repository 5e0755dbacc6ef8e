package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
)

// ReplicaWriter writes the data of one RBW or TEMPORARY replica: the block
// file and, chunk-aligned from the block start, the meta file's checksums.
// One goroutine (the pipeline stage receiving packets) calls WritePacket,
// Sync and Finalize; SetBytesAcked may be called from the ack responder;
// stopping (invalidation, shutdown) may come from anywhere.
type ReplicaWriter struct {
	bp     *BlockPool
	r      *replica
	stored datatransfer.DataChecksum // the meta file's
	client datatransfer.DataChecksum // the packets'

	stopped atomic.Bool // set under mu; read without it for a quick check
	// onStop is called once when someone else stops the writer (see
	// OnStop); nil when not set or already called.
	onStop atomic.Pointer[func()]
	// trust: the packets' checksums are not verified (SkipVerification).
	trust bool

	mu struct {
		sync.Mutex
		data, meta *os.File
		onDisk     int64
		alloc      int64 // block file bytes preallocated (0: none yet)
		dirSynced  bool
		scratch    []byte // the partial chunk read back from disk
		sums       []byte // checksums recomputed for storing
		iovData    [][]byte
		iovSums    [][]byte
	}
}

// createWriter creates the block and meta files of the new replica r
// (which must not exist on disk) and returns its writer.
func createWriter(bp *BlockPool, r *replica, c datatransfer.DataChecksum) (*ReplicaWriter, error) {
	data, err := os.OpenFile(r.blockPath(), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("datanode/storage: create replica: %w", err)
	}
	meta, err := os.OpenFile(r.metaPath(), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		data.Close()
		os.Remove(r.blockPath())
		return nil, fmt.Errorf("datanode/storage: create replica: %w", err)
	}
	h := EncodeMetaHeader(c)
	if _, err := meta.WriteAt(h[:], 0); err != nil {
		data.Close()
		meta.Close()
		os.Remove(r.blockPath())
		os.Remove(r.metaPath())
		return nil, fmt.Errorf("datanode/storage: write meta header: %w", err)
	}
	r.vol.addUsed(MetaHeaderLen)
	w := &ReplicaWriter{bp: bp, r: r, stored: c, client: c}
	w.mu.data, w.mu.meta = data, meta
	return w, nil
}

// openWriter opens the existing files of r (moved to rbw/ by Append) for
// writing after r.numBytes bytes.
func openWriter(bp *BlockPool, r *replica, client datatransfer.DataChecksum) (*ReplicaWriter, error) {
	// Files an upgrade's previous/ still names get a copy of their own
	// before bytes are written into them.
	if err := breakLinks(r.blockPath(), r.metaPath()); err != nil {
		return nil, err
	}
	data, err := os.OpenFile(r.blockPath(), os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("datanode/storage: open replica: %w", err)
	}
	meta, err := os.OpenFile(r.metaPath(), os.O_RDWR, 0)
	if err != nil {
		data.Close()
		return nil, fmt.Errorf("datanode/storage: open replica: %w", err)
	}
	stored, err := ReadMetaHeader(meta)
	if err == nil {
		var fi os.FileInfo
		if fi, err = meta.Stat(); err == nil && fi.Size() < MetaFileLen(stored, r.numBytes) {
			err = fmt.Errorf("%w: %s is %d bytes, %d bytes of data need %d", ErrBadMeta, r.metaPath(), fi.Size(), r.numBytes, MetaFileLen(stored, r.numBytes))
		}
	}
	if err != nil {
		data.Close()
		meta.Close()
		return nil, err
	}
	w := &ReplicaWriter{bp: bp, r: r, stored: stored, client: client}
	w.mu.data, w.mu.meta = data, meta
	w.mu.onDisk = r.numBytes
	return w, nil
}

// Replica returns a snapshot of the replica being written.
func (w *ReplicaWriter) Replica() Replica {
	rm := w.bp.replicas
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return w.r.snapshot()
}

// StoredChecksum is the checksum the replica's meta file uses.
func (w *ReplicaWriter) StoredChecksum() datatransfer.DataChecksum { return w.stored }

// BytesOnDisk returns the number of bytes written to the block file.
func (w *ReplicaWriter) BytesOnDisk() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.onDisk
}

// WritePacket stores one packet's data, whose first byte is at offsetInBlock
// and whose checksums (in the writer's client checksum, one per chunk counted
// from the packet's first byte) are sums. It verifies sums first (a mismatch
// is a *datatransfer.ChecksumError and nothing is written). The packet may
// start and end anywhere: bytes already on disk (a resent packet) are
// skipped, a start beyond the bytes on disk is ErrGap, and the meta file stays
// chunk-aligned from the block start: when the packet begins inside a chunk,
// that chunk's checksum is recomputed from the bytes on disk and the new ones.
// Data is written before checksums, as Hadoop does; the startup scan cuts a
// torn tail (see the package doc).
func (w *ReplicaWriter) WritePacket(offsetInBlock int64, data, sums []byte) error {
	_, err := w.WritePackets([]PacketData{{Offset: offsetInBlock, Data: data, Sums: sums}})
	return err
}

// PacketData is the payload of one packet for WritePackets.
type PacketData struct {
	Offset int64  // block offset of the first data byte
	Data   []byte // the data
	Sums   []byte // its checksums, one per chunk counted from Data's first byte
}

// maxBatchIovecs bounds the buffers of one vectored write (Linux's IOV_MAX
// is 1024).
const maxBatchIovecs = 512

// WritePackets stores packets in order, each as WritePacket does, and
// returns how many were stored: all of them, or the ones before the first
// that fails (whose error is returned; nothing of it is written). Packets
// that follow each other chunk-aligned, the common case of a streaming
// pipeline, are written together: one vectored write for their data and
// one for their checksums.
func (w *ReplicaWriter) WritePackets(pkts []PacketData) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped.Load() {
		return 0, ErrWriterStopped
	}
	done := 0
	for done < len(pkts) {
		n := w.runLocked(pkts[done:])
		if n == 0 {
			// Not part of a run: a resent, unaligned or re-encoded packet.
			if err := w.writeOneLocked(pkts[done]); err != nil {
				return done, err
			}
			done++
			continue
		}
		if err := w.writeRunLocked(pkts[done : done+n]); err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

// runLocked returns how many packets at the start of pkts form a run: each
// starts chunk-aligned where the one before ends (the first at the bytes on
// disk), every one but the last ends on a chunk boundary, and their sums
// are the stored checksums as they are. Packets with bad sums end the run
// (writeOneLocked reports them).
func (w *ReplicaWriter) runLocked(pkts []PacketData) int {
	if w.stored != w.client || w.stored.Size() == 0 {
		return 0
	}
	bpc := int64(w.stored.BytesPerChecksum)
	off := w.mu.onDisk
	n, iov := 0, 0
	for _, p := range pkts {
		if p.Offset != off || off%bpc != 0 || len(p.Data) == 0 || iov+2 > maxBatchIovecs {
			break
		}
		if !w.trust && w.client.Verify(p.Data, p.Sums) != nil {
			break
		}
		n, iov = n+1, iov+2
		off += int64(len(p.Data))
	}
	return n
}

// writeRunLocked writes a run (see runLocked) whose checksums are verified.
func (w *ReplicaWriter) writeRunLocked(run []PacketData) error {
	start := w.mu.onDisk
	end := start
	data, sums := w.mu.iovData[:0], w.mu.iovSums[:0]
	for _, p := range run {
		data = append(data, p.Data)
		sums = append(sums, p.Sums)
		end += int64(len(p.Data))
	}
	bpc := int64(w.stored.BytesPerChecksum)
	if end > w.mu.alloc {
		w.preallocLocked(end)
	}
	w.mu.iovData, w.mu.iovSums = data, sums
	if err := pwritevFull(w.mu.data, data, start); err != nil {
		return err
	}
	if err := pwritevFull(w.mu.meta, sums, metaOffset(w.stored, start/bpc)); err != nil {
		return err
	}
	w.advanceLocked(end)
	return nil
}

// writeOneLocked stores one packet with everything WritePacket allows.
func (w *ReplicaWriter) writeOneLocked(p PacketData) error {
	offsetInBlock, data, sums := p.Offset, p.Data, p.Sums
	if err := w.verify(data, sums); err != nil {
		return fmt.Errorf("datanode/storage: packet at offset %d: %w", offsetInBlock, err)
	}
	onDisk := w.mu.onDisk
	if offsetInBlock < 0 || offsetInBlock > onDisk {
		return fmt.Errorf("%w: packet at offset %d, %d bytes on disk", ErrGap, offsetInBlock, onDisk)
	}
	end := offsetInBlock + int64(len(data))
	if end <= onDisk {
		return nil
	}
	off := offsetInBlock
	if off < onDisk {
		data = data[onDisk-off:]
		off = onDisk
	}
	bpc := int64(w.stored.BytesPerChecksum)
	var stored []byte
	switch {
	case w.stored.Size() == 0:
	case off == offsetInBlock && w.stored == w.client && off%bpc == 0:
		stored = sums // the packet's chunks are the block's chunks
	default:
		var err error
		if stored, err = w.storedSumsLocked(off, data); err != nil {
			return err
		}
	}
	if end > w.mu.alloc {
		w.preallocLocked(end)
	}
	if _, err := w.mu.data.WriteAt(data, off); err != nil {
		return fmt.Errorf("datanode/storage: write %s: %w", w.mu.data.Name(), err)
	}
	if len(stored) > 0 {
		if _, err := w.mu.meta.WriteAt(stored, metaOffset(w.stored, off/bpc)); err != nil {
			return fmt.Errorf("datanode/storage: write %s: %w", w.mu.meta.Name(), err)
		}
	}
	w.advanceLocked(end)
	return nil
}

func (w *ReplicaWriter) verify(data, sums []byte) error {
	if w.trust {
		return nil
	}
	return w.client.Verify(data, sums)
}

// SkipVerification makes the writer store packets without verifying their
// checksums, which are stored as they come. It is for the stages of a
// client's write pipeline that mirror their packets downstream: the last
// stage verifies every packet, and one it rejects is never acknowledged, so
// pipeline recovery cuts it from every replica (Hadoop's BlockReceiver
// makes the same choice). Call it before the first WritePacket(s).
func (w *ReplicaWriter) SkipVerification() { w.trust = true }

// advanceLocked records that the block file now holds end bytes (and the
// meta file their checksums).
func (w *ReplicaWriter) advanceLocked(end int64) {
	onDisk := w.mu.onDisk
	w.mu.onDisk = end
	w.r.vol.addUsed(end - onDisk + MetaFileLen(w.stored, end) - MetaFileLen(w.stored, onDisk))
	rm := w.bp.replicas
	rm.mu.Lock()
	w.r.numBytes = end
	rm.mu.Unlock()
}

// pwritevFull writes bufs to f at off with as few pwritev calls as the
// kernel allows.
func pwritevFull(f *os.File, bufs [][]byte, off int64) error {
	fd := int(f.Fd())
	for len(bufs) > 0 {
		n, err := unix.Pwritev(fd, bufs, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "pwritev", Path: f.Name(), Err: err}
		}
		if n == 0 {
			return &os.PathError{Op: "pwritev", Path: f.Name(), Err: io.ErrShortWrite}
		}
		off += int64(n)
		for n > 0 && len(bufs) > 0 {
			if n < len(bufs[0]) {
				bufs[0] = bufs[0][n:]
				n = 0
				break
			}
			n -= len(bufs[0])
			bufs = bufs[1:]
		}
		for len(bufs) > 0 && len(bufs[0]) == 0 {
			bufs = bufs[1:]
		}
	}
	return nil
}

// preallocStep is how far ahead of the data the block file's space is
// allocated. Writing into allocated (unwritten) extents costs the kernel far
// less than delayed allocation page by page.
const preallocStep = 8 << 20

// preallocLocked allocates the block file's space up to at least end, without
// changing its size (FALLOC_FL_KEEP_SIZE: readers, the startup scan and the
// block length still see only the bytes written). The space beyond the data
// is given back when the files are closed. It is only an optimisation: a file
// system that cannot preallocate just stops being asked.
func (w *ReplicaWriter) preallocLocked(end int64) {
	if w.mu.alloc < 0 {
		return
	}
	start := max(w.mu.alloc, w.mu.onDisk)
	n := (end - start + preallocStep - 1) / preallocStep * preallocStep
	for {
		err := unix.Fallocate(int(w.mu.data.Fd()), unix.FALLOC_FL_KEEP_SIZE, start, n)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			w.mu.alloc = -1
			return
		}
		w.mu.alloc = start + n
		return
	}
}

// trimLocked gives back the preallocated space beyond the block file's end.
func (w *ReplicaWriter) trimLocked() error {
	if w.mu.alloc <= 0 {
		return nil
	}
	w.mu.alloc = 0
	fi, err := w.mu.data.Stat()
	if err != nil {
		return fmt.Errorf("datanode/storage: %w", err)
	}
	// Truncating to the current size frees the blocks allocated past it.
	if err := w.mu.data.Truncate(fi.Size()); err != nil {
		return fmt.Errorf("datanode/storage: %w", err)
	}
	return nil
}

// storedSumsLocked computes the stored checksums of the chunks data touches
// when it lands at off: the first chunk's bytes before off come from disk.
func (w *ReplicaWriter) storedSumsLocked(off int64, data []byte) ([]byte, error) {
	c := w.stored
	bpc := int64(c.BytesPerChecksum)
	sums := w.mu.sums[:0]
	chunkStart := off / bpc * bpc
	if prefix := off - chunkStart; prefix > 0 {
		if int64(cap(w.mu.scratch)) < prefix {
			w.mu.scratch = make([]byte, bpc)
		}
		buf := w.mu.scratch[:prefix]
		if _, err := w.mu.data.ReadAt(buf, chunkStart); err != nil {
			return nil, fmt.Errorf("datanode/storage: read back partial chunk of %s: %w", w.mu.data.Name(), err)
		}
		n := min(bpc-prefix, int64(len(data)))
		crc := c.Update(c.Sum(buf), data[:n])
		sums = binary.BigEndian.AppendUint32(sums, crc)
		data = data[n:]
	}
	sums = c.Compute(sums, data)
	w.mu.sums = sums
	return sums, nil
}

// SetBytesAcked records that n bytes were acknowledged by the pipeline
// downstream: the length readers may see while the replica is RBW. A writer
// whose replica was taken over (pipeline or block recovery) changes nothing.
func (w *ReplicaWriter) SetBytesAcked(n int64) {
	rm := w.bp.replicas
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if w.r.writer != w {
		return
	}
	n = min(n, w.r.numBytes)
	if n > w.r.bytesAcked {
		w.r.bytesAcked = n
	}
}

// Sync makes the written data and checksums durable (fdatasync of both files,
// and the first time, of the directory that holds them): what a packet with
// syncBlock asks for.
func (w *ReplicaWriter) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped.Load() {
		return ErrWriterStopped
	}
	return w.syncLocked()
}

func (w *ReplicaWriter) syncLocked() error {
	for _, f := range []*os.File{w.mu.data, w.mu.meta} {
		if err := fdatasync(f); err != nil {
			return err
		}
	}
	if !w.mu.dirSynced {
		if err := syncDir(filepath.Dir(w.mu.data.Name())); err != nil {
			return fmt.Errorf("datanode/storage: sync dir of %s: %w", w.mu.data.Name(), err)
		}
		w.mu.dirSynced = true
	}
	return nil
}

func fdatasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
		}
		return nil
	}
}

// closeFilesLocked closes both files and marks the writer stopped.
func (w *ReplicaWriter) closeFilesLocked() error {
	if w.stopped.Load() {
		return nil
	}
	w.stopped.Store(true)
	err0 := w.trimLocked()
	err1 := w.mu.data.Close()
	err2 := w.mu.meta.Close()
	return errors.Join(err0, err1, err2)
}

// stop ends the writer without touching the replica's state: the files are
// closed and every later call fails with ErrWriterStopped. It waits for a
// WritePacket or Finalize in progress, then calls the OnStop function.
func (w *ReplicaWriter) stop() {
	w.mu.Lock()
	_ = w.closeFilesLocked()
	w.mu.Unlock()
	if f := w.onStop.Swap(nil); f != nil {
		(*f)()
	}
}

// OnStop sets a function to call when the writer is stopped by someone
// other than its owner: a pipeline or block recovery takes the replica over,
// a newer replica of the block replaces it, it is invalidated, or the
// dataset shuts down. The pipeline stage that owns the writer uses it to
// drop its connections at once instead of waiting for a silent upstream to
// time out (Hadoop interrupts the old writer thread). It is not called when
// the owner finalizes, closes or aborts the writer. f must not call back
// into the writer.
func (w *ReplicaWriter) OnStop(f func()) { w.onStop.Store(&f) }

// Finalize completes the replica once length bytes (which must be what is on
// disk) are written: the files are synced if SyncOnClose is set, moved to
// finalized/subdir<a>/subdir<b>/ (meta first, then block; the directories
// are synced if SyncOnClose is set or Sync was called), and the replica
// becomes FINALIZED.
func (w *ReplicaWriter) Finalize(length int64) (Replica, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped.Load() {
		return Replica{}, ErrWriterStopped
	}
	if length != w.mu.onDisk {
		return Replica{}, fmt.Errorf("%w: finalize with length %d, %d bytes on disk", ErrLength, length, w.mu.onDisk)
	}
	if w.bp.ds.cfg.SyncOnClose {
		if err := w.syncLocked(); err != nil {
			return Replica{}, err
		}
	}
	if err := w.closeFilesLocked(); err != nil {
		return Replica{}, fmt.Errorf("datanode/storage: close replica: %w", err)
	}
	r := w.r
	// r.dir, r.id and r.gs change only under this writer (stopped now) and
	// recovery, which stops the writer first.
	srcDir, srcMeta, srcBlock := r.dir, r.metaPath(), r.blockPath()
	dst := w.bp.layout(r.vol).blockDir(r.id)
	created, err := mkdirAllReport(dst)
	if err != nil {
		return Replica{}, err
	}
	dstMeta := filepath.Join(dst, filepath.Base(srcMeta))
	dstBlock := filepath.Join(dst, filepath.Base(srcBlock))
	if err := os.Rename(srcMeta, dstMeta); err != nil {
		return Replica{}, fmt.Errorf("datanode/storage: finalize: %w", err)
	}
	if err := os.Rename(srcBlock, dstBlock); err != nil {
		_ = os.Rename(dstMeta, srcMeta)
		return Replica{}, fmt.Errorf("datanode/storage: finalize: %w", err)
	}
	// The moves are made durable only when the files were (SyncOnClose, or
	// an hsync during the write), as Hadoop does (dfs.datanode.synconclose
	// is false by default); otherwise a crash may leave the replica in rbw/,
	// where the startup scan finds it as RWR.
	if w.bp.ds.cfg.SyncOnClose || w.mu.dirSynced {
		dirs := append(created, dst, srcDir)
		if err := syncDirs(dirs...); err != nil {
			return Replica{}, err
		}
	}
	rm := w.bp.replicas
	rm.mu.Lock()
	defer rm.mu.Unlock()
	r.state, r.dir, r.numBytes, r.bytesAcked, r.writer = Finalized, dst, length, length, nil
	r.vol.release(r.reserved)
	r.reserved = 0
	if rm.mu.m[r.id] != r {
		return Replica{}, fmt.Errorf("%w: %s was removed while being finalized", ErrReplicaNotFound, Block{ID: r.id, GenStamp: r.gs})
	}
	return r.snapshot(), nil
}

// mkdirAllReport creates dir and its missing parents and returns the parents
// of the directories it created (whose entries must be synced).
func mkdirAllReport(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("datanode/storage: %w", err)
		}
		missing = append(missing, filepath.Dir(d))
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("datanode/storage: %w", err)
	}
	return missing, nil
}

// Close ends writing without finalizing. An RBW replica stays as it is, with
// the bytes written so far, for a later pipeline or block recovery; a
// TEMPORARY replica is deleted. Closing a writer that was finalized, stopped
// or taken over by recovery does nothing more.
func (w *ReplicaWriter) Close() error {
	return w.end(false)
}

// Abort ends writing and deletes the replica and its files, unless the
// writer was already finalized or the replica taken over (by recovery or a
// newer writer).
func (w *ReplicaWriter) Abort() error {
	return w.end(true)
}

func (w *ReplicaWriter) end(abort bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.closeFilesLocked()
	rm := w.bp.replicas
	rm.mu.Lock()
	defer rm.mu.Unlock()
	r := w.r
	if rm.mu.m[r.id] != r || r.writer != w {
		return err
	}
	r.writer = nil
	r.vol.release(r.reserved)
	r.reserved = 0
	if abort || r.state == Temporary {
		w.bp.discardLocked(r)
	}
	return err
}
