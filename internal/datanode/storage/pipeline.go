package storage

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
)

// Write pipeline recovery: the replica of a block whose pipeline lost a node
// is taken over by the rebuilt pipeline under a new generation stamp. Each
// method stops a writer of the old pipeline still attached to the replica
// before it looks at the replica's length, so the old pipeline cannot touch
// the files afterwards (its later calls fail with ErrWriterStopped, and its
// Close leaves the replica alone).

// RecoverRBW takes over the RBW replica of b for a recovered streaming
// pipeline (WRITE_BLOCK stage PIPELINE_SETUP_STREAMING_RECOVERY). b.GenStamp
// is the stamp the client knows; the replica's must lie between it and
// newGS. The bytes acknowledged must be at least minBytesRcvd and the bytes
// received at most maxBytesRcvd (the client resends everything after
// minBytesRcvd). The unacknowledged tail is cut off (the checksum of a
// partial last chunk is recomputed), the meta file is renamed to newGS, and
// the returned writer continues at the acknowledged length. need is the
// space to reserve for the bytes to come; c the packets' checksum.
//
// Crash safety: the block file is cut first, then the meta file (its last
// checksum rewritten), then the meta file is renamed and the directory
// synced. A crash in between leaves an RBW that the startup scan validates
// against its checksums (see the package doc), under the old or the new
// stamp.
func (bp *BlockPool) RecoverRBW(b Block, newGS, minBytesRcvd, maxBytesRcvd int64, c datatransfer.DataChecksum, need int64) (*ReplicaWriter, error) {
	if err := checkChecksum(c); err != nil {
		return nil, err
	}
	r, unlock, err := bp.takeOver(b, newGS)
	if err != nil {
		return nil, err
	}
	defer unlock()
	switch {
	case r.state != RBW:
		return nil, fmt.Errorf("%w: streaming recovery of %s in state %s", ErrWrongState, b, r.state)
	case r.bytesAcked < minBytesRcvd || r.numBytes > maxBytesRcvd:
		return nil, fmt.Errorf("%w: streaming recovery of %s expects %d to %d bytes, replica has %d acknowledged of %d",
			ErrLength, b, minBytesRcvd, maxBytesRcvd, r.bytesAcked, r.numBytes)
	}
	if err := bp.reserveLocked(r, need); err != nil {
		return nil, err
	}
	if err := bp.cutAndRestampLocked(r, r.bytesAcked, newGS); err != nil {
		bp.releaseLocked(r)
		return nil, err
	}
	return bp.attachWriterLocked(r, c)
}

// RecoverClose completes the replica of b for a pipeline whose failure hit
// its last packet (stage PIPELINE_CLOSE_RECOVERY): an RBW or FINALIZED
// replica of exactly expectedLength bytes takes newGS (meta file renamed)
// and an RBW one is finalized. The stamps are checked as in RecoverRBW. The
// caller reports the returned replica to the NameNode.
func (bp *BlockPool) RecoverClose(b Block, newGS, expectedLength int64) (Replica, error) {
	r, unlock, err := bp.takeOver(b, newGS)
	if err != nil {
		return Replica{}, err
	}
	defer unlock()
	switch {
	case r.state != RBW && r.state != Finalized:
		return Replica{}, fmt.Errorf("%w: close recovery of %s in state %s", ErrWrongState, b, r.state)
	case r.numBytes != expectedLength:
		return Replica{}, fmt.Errorf("%w: close recovery of %s expects %d bytes, replica has %d", ErrLength, b, expectedLength, r.numBytes)
	}
	if err := bp.cutAndRestampLocked(r, r.numBytes, newGS); err != nil {
		return Replica{}, err
	}
	if r.state == RBW {
		bp.releaseLocked(r)
		dst, err := bp.moveToFinalized(r, bp.ds.cfg.SyncOnClose)
		if err != nil {
			return Replica{}, err
		}
		r.state, r.dir, r.bytesAcked = Finalized, dst, r.numBytes
	}
	return r.snapshot(), nil
}

// RecoverAppend reopens the replica of b for an append whose pipeline setup
// failed on another node (stage PIPELINE_SETUP_APPEND_RECOVERY): a FINALIZED
// replica moves back to rbw/ as in Append, an RBW one (already reopened by the
// failed attempt) is taken over; either must hold exactly expectedLength
// bytes, and takes newGS. The stamps are checked as in RecoverRBW.
func (bp *BlockPool) RecoverAppend(b Block, newGS, expectedLength int64, c datatransfer.DataChecksum, need int64) (*ReplicaWriter, error) {
	if err := checkChecksum(c); err != nil {
		return nil, err
	}
	r, unlock, err := bp.takeOver(b, newGS)
	if err != nil {
		return nil, err
	}
	defer unlock()
	switch {
	case r.state != RBW && r.state != Finalized:
		return nil, fmt.Errorf("%w: append recovery of %s in state %s", ErrWrongState, b, r.state)
	case r.numBytes != expectedLength:
		return nil, fmt.Errorf("%w: append recovery of %s expects %d bytes, replica has %d", ErrLength, b, expectedLength, r.numBytes)
	}
	if r.state == Finalized {
		return bp.appendLocked(r, b, newGS, c, need)
	}
	if err := bp.reserveLocked(r, need); err != nil {
		return nil, err
	}
	if err := bp.cutAndRestampLocked(r, r.numBytes, newGS); err != nil {
		bp.releaseLocked(r)
		return nil, err
	}
	return bp.attachWriterLocked(r, c)
}

// takeOver finds the replica of b, checks b.GenStamp ≤ the replica's stamp ≤
// newGS, and stops and detaches any writer. On success the map is left
// locked; the caller calls unlock.
func (bp *BlockPool) takeOver(b Block, newGS int64) (*replica, func(), error) {
	// The stamps are checked first: a stale request must not stop a live
	// writer.
	r, err := bp.lockStopped(b.ID, func(r *replica) error {
		switch {
		case r == nil:
			return fmt.Errorf("%w: recover pipeline of %s", ErrReplicaNotFound, b)
		case r.gs < b.GenStamp:
			return fmt.Errorf("%w: recover pipeline of %s, replica has older stamp %d", ErrGenStamp, b, r.gs)
		case r.gs > newGS:
			return fmt.Errorf("%w: recover pipeline of %s with stamp %d, replica already has %d", ErrGenStamp, b, newGS, r.gs)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if r.writer != nil {
		// A stopped writer of the old pipeline: its reservation goes
		// with it.
		r.writer = nil
		bp.releaseLocked(r)
	}
	return r, bp.replicas.mu.Unlock, nil
}

func (bp *BlockPool) reserveLocked(r *replica, need int64) error {
	ok, err := r.vol.reserve(need)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: recovery of blk_%d needs %d bytes on %s", ErrOutOfSpace, r.id, need, r.vol.Dir())
	}
	r.reserved = need
	return nil
}

func (bp *BlockPool) releaseLocked(r *replica) {
	r.vol.release(r.reserved)
	r.reserved = 0
}

// attachWriterLocked opens a writer on r's files after r.numBytes bytes.
func (bp *BlockPool) attachWriterLocked(r *replica, c datatransfer.DataChecksum) (*ReplicaWriter, error) {
	w, err := openWriter(bp, r, c)
	if err != nil {
		// The replica stays as an RBW without a writer, for block recovery.
		bp.releaseLocked(r)
		return nil, err
	}
	r.writer = w
	return w, nil
}

// cutAndRestampLocked cuts r's files to n bytes (at most r.numBytes), the
// last partial chunk's checksum recomputed, and renames the meta file to
// newGS; r's directory is synced when anything changed. All n bytes count
// as acknowledged afterwards.
func (bp *BlockPool) cutAndRestampLocked(r *replica, n, newGS int64) error {
	if n < 0 || n > r.numBytes {
		return fmt.Errorf("%w: cut blk_%d_%d to %d bytes, replica has %d", ErrLength, r.id, r.gs, n, r.numBytes)
	}
	changed := false
	if fi, err := os.Stat(r.blockPath()); err != nil {
		return fmt.Errorf("datanode/storage: %w", err)
	} else if fi.Size() != n {
		usedBefore := filesSize(r)
		if err := cutReplicaFiles(r.blockPath(), r.metaPath(), n); err != nil {
			return err
		}
		r.vol.addUsed(filesSize(r) - usedBefore)
		changed = true
	}
	r.numBytes, r.bytesAcked = n, n
	if newGS != r.gs {
		oldMeta := r.metaPath()
		newMeta := filepath.Join(r.dir, MetaFileName(r.id, newGS))
		if err := os.Rename(oldMeta, newMeta); err != nil {
			return fmt.Errorf("datanode/storage: new generation stamp for blk_%d: %w", r.id, err)
		}
		r.gs = newGS
		changed = true
	}
	if changed {
		if err := syncDir(r.dir); err != nil {
			return fmt.Errorf("datanode/storage: sync dir %s: %w", r.dir, err)
		}
	}
	return nil
}

// cutReplicaFiles truncates a block file to n bytes and its meta file to the
// checksums of those bytes, recomputing the last one when n ends inside a
// chunk.
func cutReplicaFiles(blockPath, metaPath string, n int64) error {
	if err := breakLinks(blockPath, metaPath); err != nil {
		return err
	}
	bf, err := os.OpenFile(blockPath, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("datanode/storage: %w", err)
	}
	defer bf.Close()
	mf, err := os.OpenFile(metaPath, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("datanode/storage: %w", err)
	}
	defer mf.Close()
	c, err := ReadMetaHeader(mf)
	if err != nil {
		return fmt.Errorf("%s: %w", metaPath, err)
	}
	bpc := int64(c.BytesPerChecksum)
	var sum []byte
	if rem := n % bpc; rem != 0 && c.Size() > 0 {
		last := make([]byte, rem)
		if _, err := bf.ReadAt(last, n-rem); err != nil {
			return fmt.Errorf("datanode/storage: read %s: %w", blockPath, err)
		}
		sum = binary.BigEndian.AppendUint32(nil, c.Sum(last))
	}
	if err := bf.Truncate(n); err != nil {
		return fmt.Errorf("datanode/storage: truncate %s: %w", blockPath, err)
	}
	metaLen := MetaFileLen(c, n)
	if sum != nil {
		if _, err := mf.WriteAt(sum, metaLen-int64(len(sum))); err != nil {
			return fmt.Errorf("datanode/storage: write %s: %w", metaPath, err)
		}
	}
	if err := mf.Truncate(metaLen); err != nil {
		return fmt.Errorf("datanode/storage: truncate %s: %w", metaPath, err)
	}
	return nil
}

// moveToFinalized moves r's meta file, then its block file, from r.dir to
// the pool's finalized/ directory of the block and returns that directory.
// The directories are synced when sync is set. r.dir is not changed.
func (bp *BlockPool) moveToFinalized(r *replica, sync bool) (string, error) {
	srcDir, srcMeta, srcBlock := r.dir, r.metaPath(), r.blockPath()
	dst := bp.layout(r.vol).blockDir(r.id)
	created, err := mkdirAllReport(dst)
	if err != nil {
		return "", err
	}
	dstMeta := filepath.Join(dst, filepath.Base(srcMeta))
	dstBlock := filepath.Join(dst, filepath.Base(srcBlock))
	if err := os.Rename(srcMeta, dstMeta); err != nil {
		return "", fmt.Errorf("datanode/storage: finalize: %w", err)
	}
	if err := os.Rename(srcBlock, dstBlock); err != nil {
		_ = os.Rename(dstMeta, srcMeta)
		return "", fmt.Errorf("datanode/storage: finalize: %w", err)
	}
	if sync {
		if err := syncDirs(append(created, dst, srcDir)...); err != nil {
			return "", err
		}
	}
	return dst, nil
}

// ConvertToRBW ends the copy of a replica being written elsewhere
// (WRITE_BLOCK stage TRANSFER_RBW) once length bytes (what is on disk) have
// arrived: the TEMPORARY replica's files move from tmp/ to rbw/ (meta first)
// and it becomes RBW with every byte acknowledged, ready for the recovered
// pipeline to continue it (RecoverRBW). It is not reported as received.
func (w *ReplicaWriter) ConvertToRBW(length int64) (Replica, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped.Load() {
		return Replica{}, ErrWriterStopped
	}
	if length != w.mu.onDisk {
		return Replica{}, fmt.Errorf("%w: convert with length %d, %d bytes on disk", ErrLength, length, w.mu.onDisk)
	}
	r := w.r
	if r.state != Temporary {
		return Replica{}, fmt.Errorf("%w: convert %s replica to RBW", ErrWrongState, r.state)
	}
	if err := w.closeFilesLocked(); err != nil {
		return Replica{}, fmt.Errorf("datanode/storage: close replica: %w", err)
	}
	srcDir, srcMeta, srcBlock := r.dir, r.metaPath(), r.blockPath()
	dst := w.bp.layout(r.vol).rbw()
	dstMeta := filepath.Join(dst, filepath.Base(srcMeta))
	dstBlock := filepath.Join(dst, filepath.Base(srcBlock))
	if err := os.Rename(srcMeta, dstMeta); err != nil {
		return Replica{}, fmt.Errorf("datanode/storage: convert to RBW: %w", err)
	}
	if err := os.Rename(srcBlock, dstBlock); err != nil {
		_ = os.Rename(dstMeta, srcMeta)
		return Replica{}, fmt.Errorf("datanode/storage: convert to RBW: %w", err)
	}
	if err := syncDirs(dst, srcDir); err != nil {
		return Replica{}, err
	}
	rm := w.bp.replicas
	rm.mu.Lock()
	defer rm.mu.Unlock()
	r.state, r.dir, r.numBytes, r.bytesAcked, r.writer = RBW, dst, length, length, nil
	r.vol.release(r.reserved)
	r.reserved = 0
	if rm.mu.m[r.id] != r {
		return Replica{}, fmt.Errorf("%w: %s was removed while being converted", ErrReplicaNotFound, Block{ID: r.id, GenStamp: r.gs})
	}
	return r.snapshot(), nil
}
