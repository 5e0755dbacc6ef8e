package namespace

import (
	"fmt"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// UCBlocks returns the path and block list of the file under construction
// fileID (or at path, for clients that send no id) held by clientName. The
// slice must not be modified.
func (t *Tree) UCBlocks(c Caller, path, clientName string, fileID uint64) (string, []op.Block, error) {
	w, err := t.ucByIDOrPath(path, fileID)
	if err != nil {
		return "", nil, err
	}
	if err := t.traverse(c, w, false); err != nil {
		return "", nil, err
	}
	f, err := t.checkLease(w, clientName, fileID)
	if err != nil {
		return "", nil, err
	}
	return w.path, f.blocks(), nil
}

// PlanAbandonBlock plans abandonBlock: the lease holder gives up the last block
// of its file (a pipeline it could not set up). Abandoning a block the file no
// longer has is a no-op, as for a retried call.
func (t *Tree) PlanAbandonBlock(c Caller, path, clientName string, fileID uint64, blockID int64) ([]op.Op, error) {
	p, blocks, err := t.UCBlocks(c, path, clientName, fileID)
	if err != nil {
		return nil, err
	}
	n := len(blocks)
	if n == 0 || blocks[n-1].ID != blockID {
		for _, b := range blocks {
			if b.ID == blockID {
				return nil, newErr(fmt.Sprintf("Cannot abandon block %d of %s: it is not the last block", blockID, p), ErrBlockMismatch)
			}
		}
		return nil, nil
	}
	return []op.Op{&op.UpdateBlocks{Path: p, Blocks: cloneBlocks(blocks[:n-1])}}, nil
}

// PlanUpdateLastBlock plans the change of an under-construction file's last
// block to a new generation stamp and length (updatePipeline after a pipeline
// was rebuilt, fsync recording a length). The block must be the file's last
// and its stamp may only grow.
func (t *Tree) PlanUpdateLastBlock(c Caller, path, clientName string, fileID uint64, blockID, newGenStamp, newLength int64) ([]op.Op, error) {
	p, blocks, err := t.UCBlocks(c, path, clientName, fileID)
	if err != nil {
		return nil, err
	}
	n := len(blocks)
	if n == 0 || blocks[n-1].ID != blockID {
		return nil, newErr(fmt.Sprintf("Block %d is not the last block of %s", blockID, p), ErrBlockMismatch)
	}
	lb := blocks[n-1]
	if newGenStamp < lb.GenStamp {
		return nil, newErr(fmt.Sprintf("Update of blk_%d_%d to an older generation stamp %d", lb.ID, lb.GenStamp, newGenStamp), ErrBlockMismatch)
	}
	if newGenStamp > t.genStamp {
		return nil, newErr(fmt.Sprintf("Generation stamp %d of blk_%d was never handed out (newest is %d)", newGenStamp, lb.ID, t.genStamp), ErrBlockMismatch)
	}
	if newGenStamp == lb.GenStamp && newLength == lb.NumBytes {
		return nil, nil
	}
	nb := cloneBlocks(blocks)
	nb[n-1].GenStamp = newGenStamp
	nb[n-1].NumBytes = newLength
	return []op.Op{&op.UpdateBlocks{Path: p, Blocks: nb}}, nil
}

// FileBlocks returns the id, replication, preferred block size, block list and
// under-construction state of the file at path, checking traverse permission
// and READ on the file (getBlockLocations). The slice must not be modified.
func (t *Tree) FileBlocks(c Caller, path string) (FileInfo, []op.Block, error) {
	if t.maybeSnapPath(path) {
		if v, ok, err := t.resolveSnap(c, path); ok {
			if err != nil {
				return FileInfo{}, nil, err
			}
			return t.snapBlocks(c, v)
		}
	}
	w, err := t.resolveExisting(c, path, "File does not exist: %s")
	if err != nil {
		return FileInfo{}, nil, err
	}
	f := w.last()
	if f.isDir() {
		return FileInfo{}, nil, newErr("Path is not a file: "+w.path, ErrNotFound, ErrNotFile)
	}
	if err := t.checkPerm(c, w, permCheck{self: Read}); err != nil {
		return FileInfo{}, nil, err
	}
	return t.info(f), f.blocks(), nil
}

// EachFileWithBlocks calls fn for every file that has blocks, with its inode
// id, replication, effective storage policy id, blocks and whether it is
// under construction (to rebuild the block manager's map at start-up).
func (t *Tree) EachFileWithBlocks(fn func(id uint64, replication uint16, policy uint8, blocks []op.Block, uc bool)) {
	t.walkFilesWithBlocks(t.root, op.StoragePolicyUnspecified, func(f *inode, policy uint8) {
		fn(f.id, f.repl(), policy, f.blocks(), f.ucd() != nil)
	})
	// Blocks only snapshots hold take the default policy.
	t.eachHeldBlock(func(id uint64, replication uint16, blocks []op.Block, uc bool) {
		fn(id, replication, op.StoragePolicyUnspecified, blocks, uc)
	})
}

// InodeID returns the id of the inode at path, without permission checks (for
// the NameNode's own bookkeeping).
func (t *Tree) InodeID(path string) (uint64, bool) {
	w, err := t.resolve(path, false)
	if err != nil || w.last() == nil {
		return 0, false
	}
	return w.last().id, true
}

// PlanCloseUnderConstruction plans the NameNode closing the file under
// construction fileID itself, after lease recovery, with blocks as its final
// block list: an op.Close, whoever holds the lease.
func (t *Tree) PlanCloseUnderConstruction(fileID uint64, blocks []op.Block, now int64) ([]op.Op, error) {
	f, ok := t.uc[fileID]
	if !ok {
		return nil, newErr(fmt.Sprintf("inode %d is not a file under construction", fileID), ErrNotUnderConstruction)
	}
	path := joinPath(dirPath(f.ucd().parent), f.name)
	return []op.Op{&op.Close{Path: path, Mtime: now, Atime: f.atime, Blocks: cloneBlocks(blocks)}}, nil
}

// PlanReassignLease plans moving the lease on the file under construction
// fileID to newHolder (the NameNode takes over a file it recovers).
func (t *Tree) PlanReassignLease(fileID uint64, newHolder string) ([]op.Op, error) {
	f, ok := t.uc[fileID]
	if !ok {
		return nil, newErr(fmt.Sprintf("inode %d is not a file under construction", fileID), ErrNotUnderConstruction)
	}
	if f.ucd().client == newHolder {
		return nil, nil
	}
	path := joinPath(dirPath(f.ucd().parent), f.name)
	return []op.Op{&op.ReassignLease{Holder: f.ucd().client, Path: path, NewHolder: newHolder}}, nil
}

// UnderConstructionFile reports the path, holder and blocks of the file under
// construction fileID (nil slice aliasing the tree: do not modify).
func (t *Tree) UnderConstructionFile(fileID uint64) (path, holder string, repl uint16, blocks []op.Block, ok bool) {
	f, ok := t.uc[fileID]
	if !ok {
		return "", "", 0, nil, false
	}
	return joinPath(dirPath(f.ucd().parent), f.name), f.ucd().client, f.repl(), f.blocks(), true
}

// TruncateSource reports, for the file under construction fileID whose last
// block is being made by a copy-on-truncate, the id of the block it copies
// (held by a snapshot); ok is false for every other file.
func (t *Tree) TruncateSource(fileID uint64) (src int64, ok bool) {
	f, found := t.uc[fileID]
	if !found || f.ucd().truncSrc == 0 {
		return 0, false
	}
	return f.ucd().truncSrc, true
}

// TruncatingInPlace reports whether the file under construction fileID is
// open because an in-place truncate cut its last block: every block
// recovery of that block must cut the replicas to the block's length.
func (t *Tree) TruncatingInPlace(fileID uint64) bool {
	f, found := t.uc[fileID]
	return found && f.ucd().truncInPlace
}
