package fsimage

import (
	"errors"
	"fmt"
)

// Errors of this package, wrapped with the file (and offset) involved.
var (
	// ErrCorrupt: an image file is damaged or was cut short. The concrete
	// error is a *CorruptError giving the offset.
	ErrCorrupt = errors.New("fsimage: corrupt image")
	// ErrMD5Mismatch: an image's bytes do not hash to its .md5 file.
	ErrMD5Mismatch = errors.New("fsimage: md5 mismatch")
	// ErrBadMD5File: an .md5 file is not "<hex> *<name>\n" for its image.
	ErrBadMD5File = errors.New("fsimage: bad md5 file")
	// ErrNoImage: no complete image was found in the given directories.
	ErrNoImage = errors.New("fsimage: no image found")
	// ErrInvalidInode: Writer.Write got an inode the format cannot hold
	// (a directory with blocks, a name over MaxNameLen, …).
	ErrInvalidInode = errors.New("fsimage: invalid inode")
	// ErrCountMismatch: Writer.Close found a different number of inodes
	// written than Header.NumInodes promised.
	ErrCountMismatch = errors.New("fsimage: inode count does not match header")
	// ErrClosed: the Writer was already closed or failed.
	ErrClosed = errors.New("fsimage: writer closed")
)

// Internal errors, never returned to callers unwrapped.
var (
	errShort         = errors.New("short") // a decoder ran past its slice
	errAbandoned     = errors.New("fsimage: save abandoned")
	errAllDirsFailed = errors.New("fsimage: writing failed in every directory")
)

// CorruptError says where an image is damaged. It matches ErrCorrupt.
type CorruptError struct {
	Offset int64  // byte offset in the file where the damage was found
	Reason string // what was wrong
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("fsimage: corrupt image at offset %d: %s", e.Offset, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }
