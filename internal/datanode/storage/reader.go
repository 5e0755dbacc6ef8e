package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
)

// ReplicaReader reads a FINALIZED replica, or an RBW one up to the bytes
// acknowledged when it was opened, together with its chunk checksums. It is
// not safe for concurrent use; open one per reader.
type ReplicaReader struct {
	rep    Replica
	length int64
	c      datatransfer.DataChecksum
	data   *os.File
	meta   *os.File
	// rbw: the replica was being written at open, so the checksum of a
	// partial last chunk on disk may cover bytes beyond length.
	rbw bool
}

// OpenReader opens the replica of b for reading. b.GenStamp is the stamp the
// reader knows: a replica with an older one is ErrGenStamp (a newer one is
// fine, the block was appended to or recovered since). Only FINALIZED and RBW
// replicas can be read.
func (bp *BlockPool) OpenReader(b Block) (*ReplicaReader, error) {
	rm := bp.replicas
	for attempt := 0; ; attempt++ {
		rm.mu.Lock()
		r := rm.mu.m[b.ID]
		if r == nil {
			rm.mu.Unlock()
			return nil, fmt.Errorf("%w: %s", ErrReplicaNotFound, b)
		}
		if r.state != Finalized && r.state != RBW {
			rm.mu.Unlock()
			return nil, fmt.Errorf("%w: read %s in state %s", ErrWrongState, b, r.state)
		}
		if r.gs < b.GenStamp {
			rm.mu.Unlock()
			return nil, fmt.Errorf("%w: read %s, replica has %d", ErrGenStamp, b, r.gs)
		}
		rr := &ReplicaReader{rep: r.snapshot(), length: r.numBytes, rbw: r.state == RBW}
		if rr.rbw {
			rr.length = r.bytesAcked
		}
		rm.mu.Unlock()
		err := rr.open()
		if err == nil {
			return rr, nil
		}
		// A finalize or append moves the files between the snapshot and
		// the open: look again.
		if errors.Is(err, fs.ErrNotExist) && attempt < 3 {
			continue
		}
		return nil, err
	}
}

func (rr *ReplicaReader) open() error {
	data, err := os.Open(rr.rep.BlockPath)
	if err != nil {
		return fmt.Errorf("datanode/storage: open replica: %w", err)
	}
	meta, err := os.Open(rr.rep.MetaPath)
	if err != nil {
		data.Close()
		return fmt.Errorf("datanode/storage: open replica: %w", err)
	}
	c, err := ReadMetaHeader(meta)
	if err != nil {
		data.Close()
		meta.Close()
		return fmt.Errorf("%s: %w", rr.rep.MetaPath, err)
	}
	rr.data, rr.meta, rr.c = data, meta, c
	return nil
}

// Replica returns the replica as it was when the reader was opened.
func (rr *ReplicaReader) Replica() Replica { return rr.rep }

// Length is the number of bytes readable.
func (rr *ReplicaReader) Length() int64 { return rr.length }

// Checksum is the replica's stored checksum.
func (rr *ReplicaReader) Checksum() datatransfer.DataChecksum { return rr.c }

// DataFile is the block file, for callers that send data with sendfile. Only
// the first Length bytes are the replica's.
func (rr *ReplicaReader) DataFile() *os.File { return rr.data }

// ReadAt reads block data, bounded by Length (io.EOF past it).
func (rr *ReplicaReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("datanode/storage: negative offset %d", off)
	}
	if off >= rr.length {
		return 0, io.EOF
	}
	short := false
	if rest := rr.length - off; int64(len(p)) > rest {
		p, short = p[:rest], true
	}
	n, err := rr.data.ReadAt(p, off)
	if err == nil && short {
		err = io.EOF
	}
	return n, err
}

// ReadChunks reads the whole chunks of data starting at off (a multiple of
// bytes-per-checksum) up to max bytes (the block's final partial chunk
// included), and their checksums. It returns slices of dataBuf and sumBuf,
// grown if too small. max is rounded down to whole chunks unless the read
// reaches Length; reading at Length returns nothing.
func (rr *ReplicaReader) ReadChunks(off int64, max int, dataBuf, sumBuf []byte) (data, sums []byte, err error) {
	bpc := int64(rr.c.BytesPerChecksum)
	if off < 0 || off%bpc != 0 || off > rr.length {
		return nil, nil, fmt.Errorf("datanode/storage: read at %d: not a chunk start within %d bytes", off, rr.length)
	}
	end := min(off+int64(max), rr.length)
	if end < rr.length {
		end -= end % bpc
	}
	if end <= off {
		if off == rr.length {
			return dataBuf[:0], sumBuf[:0], nil
		}
		return nil, nil, fmt.Errorf("datanode/storage: read of %d bytes is less than a chunk (%d)", max, bpc)
	}
	n := int(end - off)
	if cap(dataBuf) < n {
		dataBuf = make([]byte, n)
	}
	data = dataBuf[:n]
	if _, err := rr.data.ReadAt(data, off); err != nil {
		return nil, nil, fmt.Errorf("datanode/storage: read %s at %d: %w", rr.rep.BlockPath, off, err)
	}
	sums, err = rr.checksums(off/bpc, data, sumBuf)
	return data, sums, err
}

// checksums returns the stored checksums of the chunks of data, which starts
// at chunk first, fixing up a partial last chunk that is not covered by its
// stored checksum (see fixLast).
func (rr *ReplicaReader) checksums(first int64, data, sumBuf []byte) ([]byte, error) {
	size := rr.c.Size()
	nsum := rr.c.ChecksumLen(len(data))
	if cap(sumBuf) < nsum {
		sumBuf = make([]byte, nsum)
	}
	sums := sumBuf[:nsum]
	if size == 0 {
		return sums, nil
	}
	if _, err := rr.meta.ReadAt(sums, metaOffset(rr.c, first)); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: %s is shorter than its %d bytes of data need", ErrBadMeta, rr.rep.MetaPath, rr.length)
		}
		return nil, fmt.Errorf("datanode/storage: read %s: %w", rr.rep.MetaPath, err)
	}
	bpc := int64(rr.c.BytesPerChecksum)
	end := first*bpc + int64(len(data))
	if end == rr.length && rr.length%bpc != 0 {
		last := data[(len(data)-1)/int(bpc)*int(bpc):]
		rr.fixLast(sums[nsum-size:], last)
	}
	return sums, nil
}

// fixLast replaces the stored checksum of the partial last chunk when the
// replica may have grown past Length since the reader opened it: an RBW
// replica, or a finalized one that was reopened for append, whose writer
// rewrites that checksum for the longer chunk. For a finalized replica that
// did not grow, a mismatch is left alone for the reader to detect.
func (rr *ReplicaReader) fixLast(sum []byte, last []byte) {
	if !rr.rbw {
		if rr.c.Sum(last) == binary.BigEndian.Uint32(sum) {
			return
		}
		fi, err := rr.data.Stat()
		if err != nil || fi.Size() <= rr.length {
			return
		}
	}
	binary.BigEndian.PutUint32(sum, rr.c.Sum(last))
}

// BlockChecksums returns the stored checksums of the whole readable length,
// chunk-aligned from the block start (the input of BLOCK_CHECKSUM).
func (rr *ReplicaReader) BlockChecksums(dst []byte) ([]byte, error) {
	bpc := int64(rr.c.BytesPerChecksum)
	nsum := rr.c.ChecksumLen(int(rr.length))
	if cap(dst) < nsum {
		dst = make([]byte, nsum)
	}
	sums := dst[:nsum]
	if rr.c.Size() == 0 || nsum == 0 {
		return sums, nil
	}
	if _, err := rr.meta.ReadAt(sums, MetaHeaderLen); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: %s is shorter than its %d bytes of data need", ErrBadMeta, rr.rep.MetaPath, rr.length)
		}
		return nil, fmt.Errorf("datanode/storage: read %s: %w", rr.rep.MetaPath, err)
	}
	if rem := rr.length % bpc; rem != 0 {
		last := make([]byte, rem)
		if _, err := rr.data.ReadAt(last, rr.length-rem); err != nil {
			return nil, fmt.Errorf("datanode/storage: read %s: %w", rr.rep.BlockPath, err)
		}
		rr.fixLast(sums[nsum-4:], last)
	}
	return sums, nil
}

// Close closes the files.
func (rr *ReplicaReader) Close() error {
	return errors.Join(rr.data.Close(), rr.meta.Close())
}
