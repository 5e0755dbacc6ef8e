package vfs

import (
	"io"
	"os"
)

// Op names a call that WithErrors can fail.
type Op int

// Calls on an FS or on an open File.
const (
	OpCreate Op = iota
	OpOpen
	OpOpenReadWrite
	OpRemove
	OpRemoveAll
	OpRename // path is the old name
	OpMkdirAll
	OpSyncDir
	OpList
	OpStat
	OpLock
	OpRead // Read and ReadAt
	OpWrite
	OpSync
	OpClose
	OpFileStat
	OpTruncate
	OpSeek
)

var opNames = [...]string{
	OpCreate: "create", OpOpen: "open", OpOpenReadWrite: "open-rw", OpRemove: "remove",
	OpRemoveAll: "removeall", OpRename: "rename", OpMkdirAll: "mkdirall", OpSyncDir: "syncdir",
	OpList: "list", OpStat: "stat", OpLock: "lock", OpRead: "read", OpWrite: "write",
	OpSync: "sync", OpClose: "close", OpFileStat: "fstat", OpTruncate: "truncate", OpSeek: "seek",
}

func (o Op) String() string {
	if o >= 0 && int(o) < len(opNames) {
		return opNames[o]
	}
	return "op(?)"
}

// WithErrors wraps fs so that every call first asks inject(op, path); a non-nil
// answer is returned instead of making the call (nothing is written, synced or
// renamed). For calls on an open File, path is the name the file was opened
// with. inject must be safe for concurrent use; it is also the place to count
// calls (return nil to let them through).
func WithErrors(fs FS, inject func(op Op, path string) error) FS {
	return &errFS{fs: fs, inject: inject}
}

type errFS struct {
	fs     FS
	inject func(Op, string) error
}

type errFile struct {
	f      File
	name   string
	inject func(Op, string) error
}

func (e *errFS) wrap(f File, name string, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return &errFile{f: f, name: name, inject: e.inject}, nil
}

func (e *errFS) Create(name string) (File, error) {
	if err := e.inject(OpCreate, name); err != nil {
		return nil, err
	}
	f, err := e.fs.Create(name)
	return e.wrap(f, name, err)
}

func (e *errFS) Open(name string) (File, error) {
	if err := e.inject(OpOpen, name); err != nil {
		return nil, err
	}
	f, err := e.fs.Open(name)
	return e.wrap(f, name, err)
}

func (e *errFS) OpenReadWrite(name string) (File, error) {
	if err := e.inject(OpOpenReadWrite, name); err != nil {
		return nil, err
	}
	f, err := e.fs.OpenReadWrite(name)
	return e.wrap(f, name, err)
}

func (e *errFS) Remove(name string) error {
	if err := e.inject(OpRemove, name); err != nil {
		return err
	}
	return e.fs.Remove(name)
}

func (e *errFS) RemoveAll(name string) error {
	if err := e.inject(OpRemoveAll, name); err != nil {
		return err
	}
	return e.fs.RemoveAll(name)
}

func (e *errFS) Rename(oldname, newname string) error {
	if err := e.inject(OpRename, oldname); err != nil {
		return err
	}
	return e.fs.Rename(oldname, newname)
}

func (e *errFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := e.inject(OpMkdirAll, dir); err != nil {
		return err
	}
	return e.fs.MkdirAll(dir, perm)
}

func (e *errFS) SyncDir(dir string) error {
	if err := e.inject(OpSyncDir, dir); err != nil {
		return err
	}
	return e.fs.SyncDir(dir)
}

func (e *errFS) List(dir string) ([]string, error) {
	if err := e.inject(OpList, dir); err != nil {
		return nil, err
	}
	return e.fs.List(dir)
}

func (e *errFS) Stat(name string) (os.FileInfo, error) {
	if err := e.inject(OpStat, name); err != nil {
		return nil, err
	}
	return e.fs.Stat(name)
}

func (e *errFS) Lock(name string) (io.Closer, error) {
	if err := e.inject(OpLock, name); err != nil {
		return nil, err
	}
	return e.fs.Lock(name)
}

func (f *errFile) Read(p []byte) (int, error) {
	if err := f.inject(OpRead, f.name); err != nil {
		return 0, err
	}
	return f.f.Read(p)
}

func (f *errFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.inject(OpRead, f.name); err != nil {
		return 0, err
	}
	return f.f.ReadAt(p, off)
}

func (f *errFile) Write(p []byte) (int, error) {
	if err := f.inject(OpWrite, f.name); err != nil {
		return 0, err
	}
	return f.f.Write(p)
}

func (f *errFile) Close() error {
	if err := f.inject(OpClose, f.name); err != nil {
		// The file is closed anyway so that a failed close leaks nothing.
		f.f.Close()
		return err
	}
	return f.f.Close()
}

func (f *errFile) Sync() error {
	if err := f.inject(OpSync, f.name); err != nil {
		return err
	}
	return f.f.Sync()
}

func (f *errFile) Stat() (os.FileInfo, error) {
	if err := f.inject(OpFileStat, f.name); err != nil {
		return nil, err
	}
	return f.f.Stat()
}

func (f *errFile) Truncate(size int64) error {
	if err := f.inject(OpTruncate, f.name); err != nil {
		return err
	}
	return f.f.Truncate(size)
}

func (f *errFile) Seek(offset int64, whence int) (int64, error) {
	if err := f.inject(OpSeek, f.name); err != nil {
		return 0, err
	}
	return f.f.Seek(offset, whence)
}
