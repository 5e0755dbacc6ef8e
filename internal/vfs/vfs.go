// Package vfs is the seam for durable metadata I/O: edit segments, images, VERSION
// files, epoch files. Production code uses Default (the OS); tests substitute a
// file system that can crash (drop what was not synced) or fail chosen calls.
// Block data on DataNodes may use *os.File directly.
//
// All implementations are safe for concurrent use.
package vfs

import (
	"io"
	"os"
)

// File is an open file.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Closer
	// Sync makes the file's data durable (fdatasync).
	Sync() error
	Stat() (os.FileInfo, error)
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
}

// FS is a file system.
type FS interface {
	// Create creates or truncates name for writing.
	Create(name string) (File, error)
	// Open opens name read-only.
	Open(name string) (File, error)
	// OpenReadWrite opens an existing file for reading and writing.
	OpenReadWrite(name string) (File, error)
	Remove(name string) error
	RemoveAll(name string) error
	// Rename atomically replaces newname with oldname.
	Rename(oldname, newname string) error
	MkdirAll(dir string, perm os.FileMode) error
	// SyncDir makes the directory's entries (creates, renames, removes) durable.
	SyncDir(dir string) error
	// List returns the names in dir, sorted.
	List(dir string) ([]string, error)
	Stat(name string) (os.FileInfo, error)
	// Lock takes an exclusive advisory lock on name (created if missing); the
	// lock is held until the returned Closer is closed or the process dies.
	Lock(name string) (io.Closer, error)
}
