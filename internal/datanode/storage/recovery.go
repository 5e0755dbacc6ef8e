package storage

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// RecoverySuffix marks the meta file UpdateReplicaUnderRecovery writes before
// it takes the replica's new generation stamp: blk_<id>_<newGS>.meta.recovery.
// Part of the on-disk format (our own; Hadoop never leaves such a file).
const RecoverySuffix = ".recovery"

// RecoveryInfo is what InitReplicaRecovery reports to the recovery's primary
// DataNode (ReplicaRecoveryInfo): the replica's block, with its length on
// disk, and its state before recovery.
type RecoveryInfo struct {
	Block
	OriginalState ReplicaState
}

// InitReplicaRecovery starts block recovery on the replica of b (the
// NameNode's RECOVERBLOCK, through InterDatanodeProtocol): a writer still
// attached is stopped, and an RBW, RWR or FINALIZED replica becomes RUR with
// the given recovery id. A replica already under recovery takes the newer id;
// one whose recovery id is the same or newer is ErrRecoveryInProgress. The
// replica's stamp must be at least b's and below recoveryID.
func (bp *BlockPool) InitReplicaRecovery(b Block, recoveryID int64) (RecoveryInfo, error) {
	// As Hadoop does, the writer is stopped before the stamps are looked
	// at: block recovery overrides whatever pipeline is still running.
	r, err := bp.lockStopped(b.ID, func(r *replica) error {
		if r == nil {
			return fmt.Errorf("%w: recover %s", ErrReplicaNotFound, b)
		}
		return nil
	})
	if err != nil {
		return RecoveryInfo{}, err
	}
	defer bp.replicas.mu.Unlock()
	switch {
	case r.gs < b.GenStamp:
		return RecoveryInfo{}, fmt.Errorf("%w: recover %s, replica has older stamp %d", ErrGenStamp, b, r.gs)
	case r.gs >= recoveryID:
		return RecoveryInfo{}, fmt.Errorf("%w: recover %s with id %d, replica already has stamp %d", ErrGenStamp, b, recoveryID, r.gs)
	case r.state == Temporary:
		return RecoveryInfo{}, fmt.Errorf("%w: recover %s in state %s", ErrWrongState, b, r.state)
	case r.state == RUR:
		if r.recoveryID >= recoveryID {
			return RecoveryInfo{}, fmt.Errorf("%w: %s has recovery id %d, asked for %d", ErrRecoveryInProgress, b, r.recoveryID, recoveryID)
		}
	default:
		r.original, r.state = r.state, RUR
	}
	r.recoveryID = recoveryID
	r.writer = nil
	r.vol.release(r.reserved)
	r.reserved = 0
	return RecoveryInfo{Block: Block{ID: r.id, GenStamp: r.gs, NumBytes: r.numBytes}, OriginalState: r.original}, nil
}

// UpdateReplicaUnderRecovery ends recovery of the RUR replica old (old.NumBytes
// its length on disk as InitReplicaRecovery reported it): the replica is cut
// to newLength, takes recoveryID as its generation stamp and becomes
// FINALIZED in finalized/.
//
// The steps keep a crash from leaving a replica whose meta file does not
// describe its block file:
//  1. the new meta file (checksums of the first newLength bytes, the last
//     partial chunk recomputed) is written as blk_<id>_<newGS>.meta.recovery
//     and synced;
//  2. the block file is truncated to newLength and synced;
//  3. the .recovery file is renamed to blk_<id>_<newGS>.meta, the old meta
//     file removed and the directory synced;
//  4. the files move to finalized/ as in Finalize.
//
// At startup a .recovery file is completed (step 3) if it matches its block
// file exactly, and removed otherwise (see the package doc).
func (bp *BlockPool) UpdateReplicaUnderRecovery(old Block, recoveryID, newLength int64) (Replica, error) {
	rm := bp.replicas
	rm.mu.Lock()
	defer rm.mu.Unlock()
	r := rm.mu.m[old.ID]
	switch {
	case r == nil:
		return Replica{}, fmt.Errorf("%w: update %s", ErrReplicaNotFound, old)
	case r.state != RUR:
		return Replica{}, fmt.Errorf("%w: update %s in state %s", ErrWrongState, old, r.state)
	case r.recoveryID != recoveryID:
		return Replica{}, fmt.Errorf("%w: update %s with recovery id %d, replica is under %d", ErrRecoveryInProgress, old, recoveryID, r.recoveryID)
	case r.gs != old.GenStamp:
		return Replica{}, fmt.Errorf("%w: update %s, replica has %d", ErrGenStamp, old, r.gs)
	case r.numBytes != old.NumBytes:
		return Replica{}, fmt.Errorf("%w: update %s of %d bytes, replica has %d", ErrLength, old, old.NumBytes, r.numBytes)
	case newLength < 0 || newLength > r.numBytes:
		return Replica{}, fmt.Errorf("%w: update %s to %d bytes, replica has %d", ErrLength, old, newLength, r.numBytes)
	}
	oldMeta, block := r.metaPath(), r.blockPath()
	newMeta := filepath.Join(r.dir, MetaFileName(r.id, recoveryID))
	tmpMeta := newMeta + RecoverySuffix
	usedBefore := filesSize(r)
	if err := writeTruncatedMeta(block, oldMeta, tmpMeta, newLength); err != nil {
		os.Remove(tmpMeta)
		return Replica{}, err
	}
	if err := truncateSync(block, newLength); err != nil {
		os.Remove(tmpMeta)
		return Replica{}, err
	}
	if err := os.Rename(tmpMeta, newMeta); err != nil {
		return Replica{}, fmt.Errorf("datanode/storage: update %s: %w", old, err)
	}
	if err := os.Remove(oldMeta); err != nil {
		return Replica{}, fmt.Errorf("datanode/storage: update %s: %w", old, err)
	}
	if err := syncDir(r.dir); err != nil {
		return Replica{}, fmt.Errorf("datanode/storage: sync dir %s: %w", r.dir, err)
	}
	r.gs, r.numBytes, r.bytesAcked = recoveryID, newLength, newLength
	r.vol.addUsed(filesSize(r) - usedBefore)
	dst := bp.layout(r.vol).blockDir(r.id)
	if r.dir != dst {
		created, err := mkdirAllReport(dst)
		if err != nil {
			return Replica{}, err
		}
		if err := os.Rename(r.metaPath(), filepath.Join(dst, MetaFileName(r.id, r.gs))); err != nil {
			return Replica{}, fmt.Errorf("datanode/storage: finalize %s: %w", old, err)
		}
		if err := os.Rename(r.blockPath(), filepath.Join(dst, BlockFileName(r.id))); err != nil {
			return Replica{}, fmt.Errorf("datanode/storage: finalize %s: %w", old, err)
		}
		if err := syncDirs(append(created, dst, r.dir)...); err != nil {
			return Replica{}, err
		}
		r.dir = dst
	}
	r.state, r.recoveryID = Finalized, 0
	return r.snapshot(), nil
}

// writeTruncatedMeta writes to dst a meta file for the first n bytes of the
// block, copying the checksums of oldMeta and recomputing the last one if n
// ends inside a chunk, and syncs it.
func writeTruncatedMeta(blockPath, oldMeta, dst string, n int64) error {
	in, err := os.Open(oldMeta)
	if err != nil {
		return fmt.Errorf("datanode/storage: %w", err)
	}
	defer in.Close()
	c, err := ReadMetaHeader(in)
	if err != nil {
		return fmt.Errorf("%s: %w", oldMeta, err)
	}
	size := MetaFileLen(c, n)
	buf := make([]byte, size)
	if _, err := in.ReadAt(buf, 0); err != nil {
		return fmt.Errorf("%w: %s: reading %d bytes: %v", ErrBadMeta, oldMeta, size, err)
	}
	bpc := int64(c.BytesPerChecksum)
	if rem := n % bpc; rem != 0 && c.Size() > 0 {
		last := make([]byte, rem)
		bf, err := os.Open(blockPath)
		if err != nil {
			return fmt.Errorf("datanode/storage: %w", err)
		}
		_, err = bf.ReadAt(last, n-rem)
		bf.Close()
		if err != nil {
			return fmt.Errorf("datanode/storage: read %s: %w", blockPath, err)
		}
		binary.BigEndian.PutUint32(buf[size-4:], c.Sum(last))
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("datanode/storage: %w", err)
	}
	if _, err := out.Write(buf); err != nil {
		out.Close()
		return fmt.Errorf("datanode/storage: write %s: %w", dst, err)
	}
	if err := fdatasync(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func truncateSync(path string, n int64) error {
	if err := breakLinks(path); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("datanode/storage: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(n); err != nil {
		return fmt.Errorf("datanode/storage: truncate %s: %w", path, err)
	}
	return fdatasync(f)
}

// parseRecoveryName parses blk_<id>_<gs>.meta.recovery.
func parseRecoveryName(name string) (id, gs int64, ok bool) {
	base, found := strings.CutSuffix(name, RecoverySuffix)
	if !found {
		return 0, 0, false
	}
	return ParseMetaFileName(base)
}

// settleRecovery completes or removes a .recovery meta file found at startup
// in dir: if it describes its block file exactly (its length is MetaFileLen
// of the block's length and the last chunk's checksum matches), step 2 of
// UpdateReplicaUnderRecovery was done and the rename is redone; otherwise it
// is removed and the replica stays as it was.
// It reports whether the meta file blk_<id>_<gs>.meta now exists.
func settleRecovery(dir, name string, id, gs int64, res *ScanResult) (bool, error) {
	p := filepath.Join(dir, name)
	ok, err := metaMatches(filepath.Join(dir, BlockFileName(id)), p)
	if err != nil || !ok {
		if err := os.Remove(p); err != nil {
			return false, fmt.Errorf("datanode/storage: remove %s: %w", p, err)
		}
		res.Removed = append(res.Removed, p)
		return false, nil
	}
	if err := os.Rename(p, filepath.Join(dir, MetaFileName(id, gs))); err != nil {
		return false, fmt.Errorf("datanode/storage: complete recovery of %s: %w", p, err)
	}
	return true, syncDir(dir)
}

// metaMatches reports whether metaPath has exactly one checksum per chunk of
// blockPath and the last one matches.
func metaMatches(blockPath, metaPath string) (bool, error) {
	bf, err := os.Open(blockPath)
	if err != nil {
		return false, err
	}
	defer bf.Close()
	mf, err := os.Open(metaPath)
	if err != nil {
		return false, err
	}
	defer mf.Close()
	c, err := ReadMetaHeader(mf)
	if err != nil {
		return false, err
	}
	bfi, err := bf.Stat()
	if err != nil {
		return false, err
	}
	mfi, err := mf.Stat()
	if err != nil {
		return false, err
	}
	blockLen := bfi.Size()
	if mfi.Size() != MetaFileLen(c, blockLen) {
		return false, nil
	}
	if c.Size() == 0 || blockLen == 0 {
		return true, nil
	}
	bpc := int64(c.BytesPerChecksum)
	lastStart := (blockLen - 1) / bpc * bpc
	last := make([]byte, blockLen-lastStart)
	if _, err := bf.ReadAt(last, lastStart); err != nil && err != io.EOF {
		return false, err
	}
	var sum [4]byte
	if _, err := mf.ReadAt(sum[:], mfi.Size()-4); err != nil {
		return false, err
	}
	return c.Sum(last) == binary.BigEndian.Uint32(sum[:]), nil
}

// InspectCopySource is initReplicaRecovery for a copy-on-truncate: the
// replica of b is only read (a snapshot keeps reading it), so it must be
// FINALIZED, with a stamp at least b's and below recoveryID; its state is
// left alone.
func (bp *BlockPool) InspectCopySource(b Block, recoveryID int64) (RecoveryInfo, error) {
	rm := bp.replicas
	rm.mu.Lock()
	defer rm.mu.Unlock()
	r := rm.mu.m[b.ID]
	switch {
	case r == nil:
		return RecoveryInfo{}, fmt.Errorf("%w: copy from %s", ErrReplicaNotFound, b)
	case r.gs < b.GenStamp:
		return RecoveryInfo{}, fmt.Errorf("%w: copy from %s, replica has older stamp %d", ErrGenStamp, b, r.gs)
	case r.gs >= recoveryID:
		return RecoveryInfo{}, fmt.Errorf("%w: copy from %s with id %d, replica already has stamp %d", ErrGenStamp, b, recoveryID, r.gs)
	case r.state != Finalized:
		return RecoveryInfo{}, fmt.Errorf("%w: copy from %s in state %s", ErrWrongState, b, r.state)
	}
	return RecoveryInfo{Block: Block{ID: r.id, GenStamp: r.gs, NumBytes: r.numBytes}, OriginalState: Finalized}, nil
}

// CopyReplica ends a copy-on-truncate on this node: the first newLength
// bytes of the FINALIZED replica src become a new FINALIZED replica of block
// newID with stamp newGS, on the same volume, its meta file holding the
// checksums of src with the last partial chunk's recomputed; src is left as
// it is. The copy is written in tmp/ (emptied at start-up, so a crash leaves
// nothing) and synced, then moved to finalized/ as Finalize does. A replica
// of newID already there with newGS and newLength is the result of an
// earlier call and is returned; one with an older stamp is replaced.
func (bp *BlockPool) CopyReplica(src Block, newID, newGS, newLength int64) (Replica, error) {
	rm := bp.replicas
	rm.mu.Lock()
	r := rm.mu.m[src.ID]
	var err error
	switch {
	case r == nil:
		err = fmt.Errorf("%w: copy from %s", ErrReplicaNotFound, src)
	case r.state != Finalized:
		err = fmt.Errorf("%w: copy from %s in state %s", ErrWrongState, src, r.state)
	case r.gs != src.GenStamp:
		err = fmt.Errorf("%w: copy from %s, replica has %d", ErrGenStamp, src, r.gs)
	case newLength < 0 || newLength > r.numBytes:
		err = fmt.Errorf("%w: copy %d bytes of %s, replica has %d", ErrLength, newLength, src, r.numBytes)
	case newID == src.ID:
		err = fmt.Errorf("%w: copy %s onto itself", ErrReplicaExists, src)
	}
	if err == nil {
		if e := rm.mu.m[newID]; e != nil && e.gs >= newGS {
			if e.gs == newGS && e.numBytes == newLength && e.state == Finalized {
				rep := e.snapshot()
				rm.mu.Unlock()
				return rep, nil
			}
			err = fmt.Errorf("%w: blk_%d in state %s with stamp %d, copy asked for %d", ErrReplicaExists, newID, e.state, e.gs, newGS)
		}
	}
	if err != nil {
		rm.mu.Unlock()
		return Replica{}, err
	}
	v, srcBlock, srcMeta := r.vol, r.blockPath(), r.metaPath()
	rm.mu.Unlock()

	// The source is finalized, so its files do not change while they are
	// copied without the lock.
	tmp := bp.layout(v).tmp()
	tmpBlock := filepath.Join(tmp, BlockFileName(newID))
	tmpMeta := filepath.Join(tmp, MetaFileName(newID, newGS))
	cleanup := func() { os.Remove(tmpBlock); os.Remove(tmpMeta) }
	if err := copyPrefix(srcBlock, tmpBlock, newLength); err != nil {
		cleanup()
		return Replica{}, err
	}
	if err := writeTruncatedMeta(srcBlock, srcMeta, tmpMeta, newLength); err != nil {
		cleanup()
		return Replica{}, err
	}
	if err := syncDir(tmp); err != nil {
		cleanup()
		return Replica{}, fmt.Errorf("datanode/storage: sync dir %s: %w", tmp, err)
	}

	rm.mu.Lock()
	defer rm.mu.Unlock()
	if e := rm.mu.m[newID]; e != nil {
		if e.gs >= newGS {
			cleanup()
			return Replica{}, fmt.Errorf("%w: blk_%d appeared with stamp %d during the copy", ErrReplicaExists, newID, e.gs)
		}
		bp.discardLocked(e)
	}
	dst := bp.layout(v).blockDir(newID)
	created, err := mkdirAllReport(dst)
	if err != nil {
		cleanup()
		return Replica{}, err
	}
	nr := &replica{id: newID, gs: newGS, state: Finalized, vol: v, dir: dst, numBytes: newLength, bytesAcked: newLength}
	if err := os.Rename(tmpMeta, nr.metaPath()); err != nil {
		cleanup()
		return Replica{}, fmt.Errorf("datanode/storage: finalize the copy blk_%d: %w", newID, err)
	}
	if err := os.Rename(tmpBlock, nr.blockPath()); err != nil {
		os.Remove(nr.metaPath())
		cleanup()
		return Replica{}, fmt.Errorf("datanode/storage: finalize the copy blk_%d: %w", newID, err)
	}
	if err := syncDirs(append(created, dst, tmp)...); err != nil {
		return Replica{}, err
	}
	rm.mu.m[newID] = nr
	v.addUsed(filesSize(nr))
	return nr.snapshot(), nil
}

// copyPrefix writes the first n bytes of src to a new file dst and syncs it.
func copyPrefix(src, dst string, n int64) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("datanode/storage: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("datanode/storage: %w", err)
	}
	if k, err := io.Copy(out, io.LimitReader(in, n)); err != nil || k != n {
		out.Close()
		if err == nil {
			err = fmt.Errorf("%w: %s has %d bytes, %d needed", ErrLength, src, k, n)
		}
		return fmt.Errorf("datanode/storage: copy %s: %w", src, err)
	}
	if err := fdatasync(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
