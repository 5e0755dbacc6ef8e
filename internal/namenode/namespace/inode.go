package namespace

// This is the one file of the package allowed to import unsafe
// (TestPureCoreImports): an inode keeps what only a directory or only a
// file needs behind one untyped pointer, which keeps a file's inode at 64
// bytes. Every conversion of that pointer is in this file, guarded by the
// flags that say what it points at.

import (
	"unsafe"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// inode is one file or directory. Kept small (64 bytes, TestInodeSize):
// one is allocated per file. What only one kind of inode needs hangs off
// the single pointer x, told apart by the flags in attr:
//
//	directory (attrDir):      x is its *dirData
//	file, attrExt set:        x is a *fileExt (open for write, or more
//	                          blocks than nblk counts)
//	file, attrExt clear:      x points at the first of nblk op.Blocks (an
//	                          array shared with the op or copy that set it,
//	                          never written in place), nil without blocks
//
// attr also packs a file's preferred block size and replication.
type inode struct {
	id    uint64
	name  string
	mtime int64
	atime int64
	x     unsafe.Pointer
	attr  uint64
	owner uint32 // index into Tree.owners
	mode  uint16
	nblk  uint16 // blocks at x (files without attrExt)
}

// attr's layout.
const (
	attrPrefBits  = 46                  // preferred block size: bits 0..45
	attrPrefMask  = 1<<attrPrefBits - 1 //
	attrReplShift = attrPrefBits        // replication: bits 46..61
	attrExt       = uint64(1) << 62     // file: x is a *fileExt
	attrDir       = uint64(1) << 63     // directory: x is a *dirData
	maxInline     = 1<<16 - 1           // most blocks counted by nblk
)

// MaxBlockSize is the largest preferred block size an inode holds
// (2^46 bytes, above HDFS's dfs.namenode.fs-limits.max-block-size ceiling).
const MaxBlockSize = attrPrefMask

// fileExt is what a file holds beyond its inode while it is open for
// write, or when it has more blocks than an inode counts.
type fileExt struct {
	blocks []op.Block
	uc     *ucData // nil when closed
}

func (n *inode) isDir() bool { return n.attr&attrDir != 0 }

// dir is a directory's data, nil for a file.
func (n *inode) dir() *dirData {
	if n.attr&attrDir == 0 {
		return nil
	}
	return (*dirData)(n.x)
}

// setDir makes n a directory holding d.
func (n *inode) setDir(d *dirData) {
	n.attr = attrDir
	n.x = unsafe.Pointer(d)
	n.nblk = 0
}

func (n *inode) ext() *fileExt {
	if n.attr&(attrExt|attrDir) != attrExt {
		return nil
	}
	return (*fileExt)(n.x)
}

// blocks is a file's block list; callers must not write to it (copy first).
func (n *inode) blocks() []op.Block {
	if n.attr&attrDir != 0 {
		return nil
	}
	if e := n.ext(); e != nil {
		return e.blocks
	}
	if n.x == nil {
		return nil
	}
	return unsafe.Slice((*op.Block)(n.x), int(n.nblk))
}

// setBlocks makes bs the file's block list; bs is kept, not copied.
func (n *inode) setBlocks(bs []op.Block) {
	if e := n.ext(); e != nil {
		e.blocks = bs
		n.settleExt()
		return
	}
	if len(bs) > maxInline {
		n.x = unsafe.Pointer(&fileExt{blocks: bs})
		n.attr |= attrExt
		n.nblk = 0
		return
	}
	n.nblk = uint16(len(bs))
	if len(bs) == 0 {
		n.x = nil
		return
	}
	n.x = unsafe.Pointer(&bs[0])
}

// ucd is the lease data of a file open for write, nil otherwise.
func (n *inode) ucd() *ucData {
	if e := n.ext(); e != nil {
		return e.uc
	}
	return nil
}

// setUC opens the file for write (u non-nil) or closes it.
func (n *inode) setUC(u *ucData) {
	if n.attr&attrDir != 0 {
		return
	}
	e := n.ext()
	if e == nil {
		if u == nil {
			return
		}
		e = &fileExt{blocks: n.blocks()}
		n.x = unsafe.Pointer(e)
		n.attr |= attrExt
		n.nblk = 0
	}
	e.uc = u
	n.settleExt()
}

// settleExt moves a closed file's blocks back into the inode when it can.
func (n *inode) settleExt() {
	e := n.ext()
	if e == nil || e.uc != nil || len(e.blocks) > maxInline {
		return
	}
	n.attr &^= attrExt
	n.x = nil
	n.setBlocks(e.blocks)
}

// pref is a file's preferred block size.
func (n *inode) pref() int64 { return int64(n.attr & attrPrefMask) }

func (n *inode) setPref(p int64) {
	n.attr = n.attr&^attrPrefMask | uint64(p)&attrPrefMask
}

// repl is a file's replication.
func (n *inode) repl() uint16 { return uint16(n.attr >> attrReplShift) }

func (n *inode) setRepl(r uint16) {
	n.attr = n.attr&^(0xFFFF<<attrReplShift) | uint64(r)<<attrReplShift
}
