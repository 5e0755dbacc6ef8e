package storage

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
)

// scanVolume adds the replicas of this pool found on v to the map: tmp/ is
// emptied, finalized/ gives FINALIZED replicas, rbw/ gives RWR replicas whose
// length is validated against their checksums.
func (bp *BlockPool) scanVolume(v *Volume, res *ScanResult) error {
	l := bp.layout(v)
	ents, err := os.ReadDir(l.tmp())
	if err != nil {
		return fmt.Errorf("datanode/storage: scan %s: %w", l.tmp(), err)
	}
	for _, e := range ents {
		p := filepath.Join(l.tmp(), e.Name())
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("datanode/storage: empty %s: %w", l.tmp(), err)
		}
		res.Removed = append(res.Removed, p)
	}
	if err := bp.scanDir(v, l.finalized(), Finalized, res); err != nil {
		return err
	}
	return bp.scanDir(v, l.rbw(), RWR, res)
}

func (bp *BlockPool) scanDir(v *Volume, dir string, state ReplicaState, res *ScanResult) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("datanode/storage: scan %s: %w", dir, err)
	}
	var blocks []int64
	metas := map[int64][]int64{}
	var recovering []string
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() {
			if state == Finalized && strings.HasPrefix(name, subdirPrefix) {
				if err := bp.scanDir(v, filepath.Join(dir, name), state, res); err != nil {
					return err
				}
			}
			continue
		}
		if id, ok := ParseBlockFileName(name); ok {
			blocks = append(blocks, id)
		} else if id, gs, ok := ParseMetaFileName(name); ok {
			metas[id] = append(metas[id], gs)
		} else if strings.HasSuffix(name, RecoverySuffix) {
			recovering = append(recovering, name)
		} else if strings.HasSuffix(name, UnlinkSuffix) {
			// A copy breakLinks did not finish; the original is intact.
			p := filepath.Join(dir, name)
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("datanode/storage: remove %s: %w", p, err)
			}
			res.Removed = append(res.Removed, p)
		}
	}
	for _, name := range recovering {
		id, gs, ok := parseRecoveryName(name)
		if !ok {
			res.Problems = append(res.Problems, "unrecognised file: "+filepath.Join(dir, name))
			continue
		}
		done, err := settleRecovery(dir, name, id, gs, res)
		if err != nil {
			return err
		}
		if done {
			metas[id] = append(metas[id], gs)
		}
	}
	sort.Slice(blocks, func(i, j int) bool { return blocks[i] < blocks[j] })
	for _, id := range blocks {
		gss := metas[id]
		delete(metas, id)
		if len(gss) == 0 {
			res.Problems = append(res.Problems, "block file without meta file: "+filepath.Join(dir, BlockFileName(id)))
			continue
		}
		sort.Slice(gss, func(i, j int) bool { return gss[i] > gss[j] })
		for _, stale := range gss[1:] {
			p := filepath.Join(dir, MetaFileName(id, stale))
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("datanode/storage: remove stale meta file: %w", err)
			}
			res.Removed = append(res.Removed, p)
		}
		r := &replica{id: id, gs: gss[0], state: state, vol: v, dir: dir}
		if state == Finalized {
			fi, err := os.Stat(r.blockPath())
			if err != nil || !fi.Mode().IsRegular() {
				res.Problems = append(res.Problems, fmt.Sprintf("unreadable block file %s: %v", r.blockPath(), err))
				continue
			}
			r.numBytes = fi.Size()
		} else {
			n, err := validateLength(r.blockPath(), r.metaPath())
			if err != nil {
				res.Problems = append(res.Problems, err.Error())
			}
			r.numBytes = n
		}
		r.bytesAcked = r.numBytes
		v.addUsed(filesSize(r))
		bp.addScanned(r, res)
	}
	for id, gss := range metas {
		for _, gs := range gss {
			res.Problems = append(res.Problems, "meta file without block file: "+filepath.Join(dir, MetaFileName(id, gs)))
		}
	}
	return nil
}

// filesSize returns the bytes r's files take.
func filesSize(r *replica) int64 {
	var n int64
	for _, p := range []string{r.blockPath(), r.metaPath()} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// addScanned puts a replica found on disk into the map. When the block is
// already there (another volume, or both finalized/ and rbw/) the one to keep
// is chosen as Hadoop does: the newer generation stamp, then the greater
// length; on a tie a FINALIZED replica wins over an RWR one, then the one
// found first. The other's files are deleted.
func (bp *BlockPool) addScanned(r *replica, res *ScanResult) {
	rm := bp.replicas
	rm.mu.Lock()
	defer rm.mu.Unlock()
	old := rm.mu.m[r.id]
	if old == nil {
		rm.mu.m[r.id] = r
		return
	}
	keep, lose := old, r
	switch {
	case r.gs != old.gs:
		if r.gs > old.gs {
			keep, lose = r, old
		}
	case r.numBytes != old.numBytes:
		if r.numBytes > old.numBytes {
			keep, lose = r, old
		}
	case r.state == Finalized && old.state != Finalized:
		keep, lose = r, old
	}
	rm.mu.m[r.id] = keep
	lose.vol.addUsed(-filesSize(lose))
	for _, p := range []string{lose.blockPath(), lose.metaPath()} {
		if err := os.Remove(p); err == nil {
			res.Removed = append(res.Removed, p)
		}
	}
}

// validateLength returns the number of bytes of an RBW replica found at
// startup that its checksums vouch for, and cuts the files to it.
//
// Like Hadoop (BlockPoolSlice.validateIntegrityAndSetLength), it assumes a
// crash can only have damaged the tail: the chunks considered are those both
// files cover, min(⌈block length/bpc⌉, (meta length-7)/4); only the last of
// them is verified. If its checksum matches, the valid length ends with that
// chunk, otherwise at its start. A block file longer than that is truncated
// (as Hadoop does), and so is a meta file with checksums beyond it, so that
// the meta file is again exactly MetaFileLen of the block.
//
// The files are cut by name, after breakLinks: an RBW replica that an
// upgrade's previous/ also names keeps its old bytes there.
func validateLength(blockPath, metaPath string) (int64, error) {
	bf, err := os.Open(blockPath)
	if err != nil {
		return 0, fmt.Errorf("datanode/storage: validate %s: %w", blockPath, err)
	}
	defer bf.Close()
	mf, err := os.Open(metaPath)
	if err != nil {
		return 0, fmt.Errorf("datanode/storage: validate %s: %w", blockPath, err)
	}
	defer mf.Close()
	bfi, err := bf.Stat()
	if err != nil {
		return 0, err
	}
	mfi, err := mf.Stat()
	if err != nil {
		return 0, err
	}
	blockLen, metaLen := bfi.Size(), mfi.Size()
	if metaLen < MetaHeaderLen {
		return 0, fmt.Errorf("%w: %s has no complete header", ErrBadMeta, metaPath)
	}
	c, err := ReadMetaHeader(mf)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", metaPath, err)
	}
	valid := blockLen
	if c.Size() > 0 {
		valid, err = validChecksummedLength(bf, mf, c, blockLen, metaLen)
		if err != nil {
			return 0, err
		}
	}
	if blockLen > valid {
		if err := breakLinks(blockPath); err != nil {
			return 0, err
		}
		if err := os.Truncate(blockPath, valid); err != nil {
			return 0, fmt.Errorf("datanode/storage: truncate %s: %w", blockPath, err)
		}
	}
	if want := MetaFileLen(c, valid); metaLen > want {
		if err := breakLinks(metaPath); err != nil {
			return 0, err
		}
		if err := os.Truncate(metaPath, want); err != nil {
			return 0, fmt.Errorf("datanode/storage: truncate %s: %w", metaPath, err)
		}
	}
	return valid, nil
}

func validChecksummedLength(bf, mf io.ReaderAt, c datatransfer.DataChecksum, blockLen, metaLen int64) (int64, error) {
	bpc := int64(c.BytesPerChecksum)
	chunks := min((blockLen+bpc-1)/bpc, (metaLen-MetaHeaderLen)/int64(c.Size()))
	if chunks == 0 {
		return 0, nil
	}
	lastStart := (chunks - 1) * bpc
	lastLen := min(bpc, blockLen-lastStart)
	buf := make([]byte, lastLen)
	if _, err := bf.ReadAt(buf, lastStart); err != nil {
		return 0, fmt.Errorf("datanode/storage: read last chunk: %w", err)
	}
	var sum [4]byte
	if _, err := mf.ReadAt(sum[:], metaOffset(c, chunks-1)); err != nil {
		return 0, fmt.Errorf("datanode/storage: read last checksum: %w", err)
	}
	if c.Sum(buf) == binary.BigEndian.Uint32(sum[:]) {
		return lastStart + lastLen, nil
	}
	return lastStart, nil
}
