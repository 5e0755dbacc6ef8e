package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	hstorage "github.com/hdfsgo/hdfsgo/internal/storage"
)

// BlockPool is the replicas of one block pool (one namespace) across the
// dataset's volumes. Safe for concurrent use.
type BlockPool struct {
	ID       string
	ds       *Dataset
	ver      *hstorage.Version // the pool's VERSION, for volumes added later
	replicas *ReplicaMap
}

// Map returns the pool's replica map.
func (bp *BlockPool) Map() *ReplicaMap { return bp.replicas }

// Replicas returns the material of a full block report: every replica,
// sorted by block id.
func (bp *BlockPool) Replicas() []Replica { return bp.replicas.List() }

// Get returns a snapshot of the replica of block id.
func (bp *BlockPool) Get(id int64) (Replica, bool) { return bp.replicas.Get(id) }

func (bp *BlockPool) layout(v *Volume) poolLayout { return newPoolLayout(v.Dir(), bp.ID) }

// CreateRBW creates a replica being written (state RBW) in rbw/ of a volume
// chosen round robin among those with need bytes remaining (usually the
// block size), and returns its writer. A replica of the block with an older
// generation stamp is stale and is invalidated first; one with the same or a
// newer stamp is ErrReplicaExists.
func (bp *BlockPool) CreateRBW(b Block, c datatransfer.DataChecksum, need int64) (*ReplicaWriter, error) {
	return bp.CreateOn(AnyStorage, RBW, b, c, need)
}

// CreateTemporary creates a TEMPORARY replica in tmp/ for a copy coming in
// from another DataNode (replication, balancing). It is invisible to readers
// until finalized; closing its writer without finalizing deletes it.
func (bp *BlockPool) CreateTemporary(b Block, c datatransfer.DataChecksum, need int64) (*ReplicaWriter, error) {
	return bp.CreateOn(AnyStorage, Temporary, b, c, need)
}

// CreateOn is CreateRBW (state RBW) or CreateTemporary (state Temporary) on
// a volume of storage type st: the one a write asks for (WRITE_BLOCK's
// storageType), or AnyStorage. When no volume has that type, any volume is
// used.
func (bp *BlockPool) CreateOn(st StorageType, state ReplicaState, b Block, c datatransfer.DataChecksum, need int64) (*ReplicaWriter, error) {
	if state != RBW && state != Temporary {
		return nil, fmt.Errorf("%w: create a replica in state %s", ErrWrongState, state)
	}
	if err := checkChecksum(c); err != nil {
		return nil, err
	}
	rm := bp.replicas
	old, err := bp.lockStopped(b.ID, func(old *replica) error {
		if old != nil && old.gs >= b.GenStamp {
			return fmt.Errorf("%w: %s in state %s with generation stamp %d, asked for %d",
				ErrReplicaExists, b, old.state, old.gs, b.GenStamp)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	defer rm.mu.Unlock()
	if old != nil {
		bp.discardLocked(old)
	}
	v, err := bp.ds.chooseVolume(need, st)
	if err != nil {
		return nil, err
	}
	l := bp.layout(v)
	dir := l.rbw()
	if state == Temporary {
		dir = l.tmp()
	}
	r := &replica{id: b.ID, gs: b.GenStamp, state: state, vol: v, dir: dir, reserved: need}
	w, err := createWriter(bp, r, c)
	if err != nil {
		v.release(need)
		return nil, err
	}
	r.writer = w
	rm.mu.m[b.ID] = r
	return w, nil
}

// maxWriterStops bounds how many writers lockStopped stops for one call:
// each stop lets another goroutine attach a new writer before the map is
// locked again, which only a recovery storm would do repeatedly.
const maxWriterStops = 16

// lockStopped is the one place a replica transition takes a replica away
// from its writer. It locks the replica map and looks up the replica of id
// (nil if there is none) and runs check on it; an error from check ends the
// call, with the map unlocked, before any writer is touched. If the replica
// has a writer still attached, the writer is stopped with the map unlocked
// (stop waits for a WritePacket or Finalize in progress, and Finalize marks
// the writer stopped before it moves the files) and the replica is looked up
// and checked again. On success the map is left locked, the replica's writer
// is nil or stopped (still attached: the caller detaches it), and the caller
// unlocks rm.mu.
func (bp *BlockPool) lockStopped(id int64, check func(r *replica) error) (*replica, error) {
	rm := bp.replicas
	var stopped *ReplicaWriter
	for stops := 0; ; stops++ {
		rm.mu.Lock()
		r := rm.mu.m[id]
		if err := check(r); err != nil {
			rm.mu.Unlock()
			return nil, err
		}
		if r == nil || r.writer == nil || r.writer == stopped {
			return r, nil
		}
		w := r.writer
		rm.mu.Unlock()
		if stops == maxWriterStops {
			return nil, fmt.Errorf("%w: blk_%d: %d writers replaced each other while it was being taken over", ErrWrongState, id, stops)
		}
		w.stop()
		stopped = w
	}
}

// Append reopens the FINALIZED replica b (b.GenStamp its current stamp,
// b.NumBytes its expected length) for writing: its files move back to rbw/,
// the meta file taking the name of newGS, and the replica becomes RBW. need
// is the space to reserve for the bytes to come. c is the checksum of the
// packets the writer will receive; the stored checksum stays the one in the
// meta file, and packets are translated when they differ.
func (bp *BlockPool) Append(b Block, newGS int64, c datatransfer.DataChecksum, need int64) (*ReplicaWriter, error) {
	if err := checkChecksum(c); err != nil {
		return nil, err
	}
	rm := bp.replicas
	rm.mu.Lock()
	defer rm.mu.Unlock()
	r := rm.mu.m[b.ID]
	switch {
	case r == nil:
		return nil, fmt.Errorf("%w: %s", ErrReplicaNotFound, b)
	case r.state != Finalized:
		return nil, fmt.Errorf("%w: append to %s in state %s", ErrWrongState, b, r.state)
	case r.gs != b.GenStamp:
		return nil, fmt.Errorf("%w: append to %s, replica has %d", ErrGenStamp, b, r.gs)
	case newGS < r.gs:
		return nil, fmt.Errorf("%w: new generation stamp %d is older than the replica's %d", ErrGenStamp, newGS, r.gs)
	case r.numBytes != b.NumBytes:
		return nil, fmt.Errorf("%w: append to %s expects %d bytes, replica has %d", ErrLength, b, b.NumBytes, r.numBytes)
	}
	return bp.appendLocked(r, b, newGS, c, need)
}

// appendLocked moves the FINALIZED replica r back to rbw/ under newGS and
// opens its writer (Append, RecoverAppend). The caller holds the map's lock
// and has checked r.
func (bp *BlockPool) appendLocked(r *replica, b Block, newGS int64, c datatransfer.DataChecksum, need int64) (*ReplicaWriter, error) {
	ok, err := r.vol.reserve(need)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: append to %s needs %d bytes on %s", ErrOutOfSpace, b, need, r.vol.Dir())
	}
	l := bp.layout(r.vol)
	oldDir, oldMeta, oldBlock := r.dir, r.metaPath(), r.blockPath()
	newMeta := filepath.Join(l.rbw(), MetaFileName(r.id, newGS))
	newBlock := filepath.Join(l.rbw(), BlockFileName(r.id))
	if err := os.Rename(oldMeta, newMeta); err != nil {
		r.vol.release(need)
		return nil, fmt.Errorf("datanode/storage: append %s: %w", b, err)
	}
	if err := os.Rename(oldBlock, newBlock); err != nil {
		_ = os.Rename(newMeta, oldMeta)
		r.vol.release(need)
		return nil, fmt.Errorf("datanode/storage: append %s: %w", b, err)
	}
	if err := syncDirs(l.rbw(), oldDir); err != nil {
		return nil, err
	}
	r.state, r.gs, r.dir, r.bytesAcked, r.reserved = RBW, newGS, l.rbw(), r.numBytes, need
	w, err := openWriter(bp, r, c)
	if err != nil {
		// The files are in rbw/ now; the replica stays as an RBW without a
		// writer, for recovery to deal with.
		r.vol.release(need)
		r.reserved = 0
		return nil, err
	}
	r.writer = w
	return w, nil
}

// Invalidate removes the given replicas (the NameNode's DNA_INVALIDATE): each
// leaves the replica map at once, any writer is stopped, its files are
// renamed into the pool's tmp/ and the volume's deleter unlinks them later
// and then calls Config.OnDeleted. A block that is missing or has another
// generation stamp is skipped; the returned error lists every skipped block.
func (bp *BlockPool) Invalidate(blocks []Block) error {
	var errs []error
	for _, b := range blocks {
		if err := bp.invalidate(b); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (bp *BlockPool) invalidate(b Block) error {
	r, err := bp.lockStopped(b.ID, func(r *replica) error {
		switch {
		case r == nil:
			return fmt.Errorf("%w: invalidate %s", ErrReplicaNotFound, b)
		case r.gs != b.GenStamp:
			return fmt.Errorf("%w: invalidate %s, replica has %d", ErrGenStamp, b, r.gs)
		}
		return nil
	})
	if err != nil {
		return err
	}
	bp.discardLocked(r)
	bp.replicas.mu.Unlock()
	return nil
}

// discardLocked removes r from the map, renames its files into the pool's
// tmp/ under unique names (so the block id can be reused at once and a crash
// cannot bring them back) and queues them for the volume's deleter. r's
// writer, if any, has been stopped. The caller holds rm.mu.
func (bp *BlockPool) discardLocked(r *replica) {
	delete(bp.replicas.mu.m, r.id)
	r.vol.release(r.reserved)
	r.reserved = 0
	r.writer = nil
	tmp := bp.layout(r.vol).tmp()
	seq := strconv.FormatInt(r.vol.nextSeq(), 10)
	var paths []string
	var bytes int64
	for _, p := range []string{r.blockPath(), r.metaPath()} {
		if fi, err := os.Stat(p); err == nil {
			bytes += fi.Size()
		}
		dst := filepath.Join(tmp, "deleted-"+seq+"-"+filepath.Base(p))
		if err := os.Rename(p, dst); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			dst = p // delete in place
		}
		paths = append(paths, dst)
	}
	r.vol.enqueueDelete(deleteTask{
		poolID: bp.ID,
		block:  Block{ID: r.id, GenStamp: r.gs, NumBytes: r.numBytes},
		paths:  paths,
		bytes:  bytes,
		done:   bp.ds.cfg.OnDeleted,
	})
}

// stopWriters stops every writer of the pool (dataset shutdown).
func (bp *BlockPool) stopWriters() {
	rm := bp.replicas
	rm.mu.Lock()
	var ws []*ReplicaWriter
	for _, r := range rm.mu.m {
		if r.writer != nil {
			ws = append(ws, r.writer)
		}
	}
	rm.mu.Unlock()
	for _, w := range ws {
		w.stop()
	}
}

// syncDirs fsyncs each distinct directory.
func syncDirs(dirs ...string) error {
	seen := map[string]bool{}
	for _, d := range dirs {
		if seen[d] {
			continue
		}
		seen[d] = true
		if err := syncDir(d); err != nil {
			return fmt.Errorf("datanode/storage: sync dir %s: %w", d, err)
		}
	}
	return nil
}

// removeVolume takes every replica on v out of the map (its volume left
// service) and returns them; their writers are stopped first.
func (bp *BlockPool) removeVolume(v *Volume) []Replica {
	rm := bp.replicas
	var out []Replica
	// Writers are stopped with the map unlocked (stop waits for a packet
	// being written), then the replicas are taken out; a writer attached
	// meanwhile is stopped in the next round.
	for round := 0; round <= maxWriterStops; round++ {
		var ws []*ReplicaWriter
		rm.mu.Lock()
		for _, r := range rm.mu.m {
			if r.vol == v && r.writer != nil && !r.writer.stopped.Load() {
				ws = append(ws, r.writer)
			}
		}
		if len(ws) == 0 {
			for id, r := range rm.mu.m {
				if r.vol != v {
					continue
				}
				out = append(out, r.snapshot())
				r.vol.release(r.reserved)
				r.reserved, r.writer = 0, nil
				delete(rm.mu.m, id)
			}
			rm.mu.Unlock()
			sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
			return out
		}
		rm.mu.Unlock()
		for _, w := range ws {
			w.stop()
		}
	}
	// Writers kept appearing: take the replicas out anyway, the writers
	// attached last fail when they touch the map.
	rm.mu.Lock()
	defer rm.mu.Unlock()
	for id, r := range rm.mu.m {
		if r.vol == v {
			out = append(out, r.snapshot())
			r.reserved, r.writer = 0, nil
			delete(rm.mu.m, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
