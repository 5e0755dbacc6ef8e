package vfs

import (
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

// MemFS is an in-memory FS for tests that remembers what a crash would keep.
//
// Every file node holds its current data and the data as of its last Sync;
// every directory holds its current entries and its entries as of its last
// SyncDir. CrashClone builds the file system a power cut would leave behind:
// starting from the root, only synced entries are followed and only synced data
// is kept. A file created and synced but whose directory was never synced is
// lost; a rename that was not followed by SyncDir of the directory is undone.
// The model is stricter than most real file systems, which is the point.
//
// Paths are slash-separated; relative paths are taken from the root. A MemFS is
// safe for concurrent use; one mutex guards the whole tree.
type MemFS struct {
	mu struct {
		sync.Mutex
		root  *memNode
		locks map[string]bool
	}
}

type memNode struct {
	isDir bool
	// Files.
	data   []byte
	synced []byte
	// Directories.
	children       map[string]*memNode
	syncedChildren map[string]*memNode
}

func newDirNode() *memNode {
	return &memNode{isDir: true, children: map[string]*memNode{}, syncedChildren: map[string]*memNode{}}
}

// NewMem returns an empty in-memory file system holding only the root directory.
func NewMem() *MemFS {
	m := &MemFS{}
	m.mu.root = newDirNode()
	m.mu.locks = map[string]bool{}
	return m
}

// CrashClone returns the file system as a crash at this instant would leave
// it: only data made durable by File.Sync, reachable through directory entries
// made durable by SyncDir, survives. Locks and open files do not carry over.
func (m *MemFS) CrashClone() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := NewMem()
	c.mu.root = crashCopy(m.mu.root)
	return c
}

func crashCopy(n *memNode) *memNode {
	if !n.isDir {
		d := append([]byte(nil), n.synced...)
		return &memNode{data: d, synced: append([]byte(nil), d...)}
	}
	c := newDirNode()
	for name, child := range n.syncedChildren {
		cc := crashCopy(child)
		c.children[name] = cc
		c.syncedChildren[name] = cc
	}
	return c
}

func splitPath(name string) []string {
	p := path.Clean("/" + name)
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

// walkLocked returns the node at name, or nil.
func (m *MemFS) walkLocked(name string) *memNode {
	n := m.mu.root
	for _, part := range splitPath(name) {
		if !n.isDir {
			return nil
		}
		n = n.children[part]
		if n == nil {
			return nil
		}
	}
	return n
}

// parentLocked returns the directory holding name and name's last element.
func (m *MemFS) parentLocked(op, name string) (*memNode, string, error) {
	parts := splitPath(name)
	if len(parts) == 0 {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	dir := m.walkLocked(strings.Join(parts[:len(parts)-1], "/"))
	if dir == nil {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	if !dir.isDir {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: errNotDir}
	}
	return dir, parts[len(parts)-1], nil
}

type memErr string

func (e memErr) Error() string { return string(e) }

const (
	errNotDir memErr = "not a directory"
	errIsDir  memErr = "is a directory"
	errClosed memErr = "file already closed"
	errNoWrit memErr = "file not open for writing"
	errNotEmp memErr = "directory not empty"
)

func (m *MemFS) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parentLocked("create", name)
	if err != nil {
		return nil, err
	}
	n := dir.children[base]
	if n != nil && n.isDir {
		return nil, &fs.PathError{Op: "create", Path: name, Err: errIsDir}
	}
	// A truncating create of an existing file keeps the inode, like O_TRUNC.
	if n == nil {
		n = &memNode{}
		dir.children[base] = n
	}
	n.data = n.data[:0:0]
	return &memFile{fs: m, n: n, name: name, write: true}, nil
}

func (m *MemFS) open(op, name string, write bool) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.walkLocked(name)
	if n == nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	if n.isDir {
		return nil, &fs.PathError{Op: op, Path: name, Err: errIsDir}
	}
	return &memFile{fs: m, n: n, name: name, write: write}, nil
}

func (m *MemFS) Open(name string) (File, error) { return m.open("open", name, false) }

func (m *MemFS) OpenReadWrite(name string) (File, error) { return m.open("open", name, true) }

func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parentLocked("remove", name)
	if err != nil {
		return err
	}
	n := dir.children[base]
	if n == nil {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	if n.isDir && len(n.children) > 0 {
		return &fs.PathError{Op: "remove", Path: name, Err: errNotEmp}
	}
	delete(dir.children, base)
	return nil
}

func (m *MemFS) RemoveAll(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parentLocked("removeall", name)
	if err != nil {
		if pe, ok := err.(*fs.PathError); ok && pe.Err == fs.ErrNotExist {
			return nil
		}
		return err
	}
	delete(dir.children, base)
	return nil
}

func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	odir, obase, err := m.parentLocked("rename", oldname)
	if err != nil {
		return err
	}
	n := odir.children[obase]
	if n == nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrNotExist}
	}
	ndir, nbase, err := m.parentLocked("rename", newname)
	if err != nil {
		return err
	}
	if t := ndir.children[nbase]; t != nil && t != n {
		if t.isDir != n.isDir {
			return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: errIsDir}
		}
		if t.isDir && len(t.children) > 0 {
			return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: errNotEmp}
		}
	}
	delete(odir.children, obase)
	ndir.children[nbase] = n
	return nil
}

func (m *MemFS) MkdirAll(dir string, perm os.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.mu.root
	for _, part := range splitPath(dir) {
		c := n.children[part]
		if c == nil {
			c = newDirNode()
			n.children[part] = c
		} else if !c.isDir {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: errNotDir}
		}
		n = c
	}
	return nil
}

func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.walkLocked(dir)
	if n == nil {
		return &fs.PathError{Op: "syncdir", Path: dir, Err: fs.ErrNotExist}
	}
	if !n.isDir {
		return &fs.PathError{Op: "syncdir", Path: dir, Err: errNotDir}
	}
	n.syncedChildren = make(map[string]*memNode, len(n.children))
	for k, v := range n.children {
		n.syncedChildren[k] = v
	}
	return nil
}

func (m *MemFS) List(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.walkLocked(dir)
	if n == nil {
		return nil, &fs.PathError{Op: "list", Path: dir, Err: fs.ErrNotExist}
	}
	if !n.isDir {
		return nil, &fs.PathError{Op: "list", Path: dir, Err: errNotDir}
	}
	names := make([]string, 0, len(n.children))
	for k := range n.children {
		names = append(names, k)
	}
	sort.Strings(names)
	return names, nil
}

func (m *MemFS) Stat(name string) (os.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.walkLocked(name)
	if n == nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return memInfo{name: path.Base(path.Clean("/" + name)), size: int64(len(n.data)), dir: n.isDir}, nil
}

func (m *MemFS) Lock(name string) (io.Closer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := path.Clean("/" + name)
	if m.mu.locks[key] {
		return nil, &LockedError{Path: name}
	}
	dir, base, err := m.parentLocked("lock", name)
	if err != nil {
		return nil, err
	}
	if dir.children[base] == nil {
		dir.children[base] = &memNode{}
	}
	m.mu.locks[key] = true
	return &memLock{fs: m, key: key}, nil
}

type memLock struct {
	fs   *MemFS
	key  string
	once sync.Once
}

func (l *memLock) Close() error {
	l.once.Do(func() {
		l.fs.mu.Lock()
		delete(l.fs.mu.locks, l.key)
		l.fs.mu.Unlock()
	})
	return nil
}

type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() os.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }

// memFile is an open MemFS file. Its position is its own; the data lives in
// the node, guarded by the file system's mutex.
type memFile struct {
	fs     *MemFS
	n      *memNode
	name   string
	write  bool
	pos    int64
	closed bool
}

func (f *memFile) pathErr(op string, err error) error {
	return &fs.PathError{Op: op, Path: f.name, Err: err}
}

func (f *memFile) Read(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, f.pathErr("read", errClosed)
	}
	if f.pos >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[f.pos:])
	f.pos += int64(n)
	return n, nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, f.pathErr("read", errClosed)
	}
	if off < 0 {
		return 0, f.pathErr("readat", fs.ErrInvalid)
	}
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, f.pathErr("write", errClosed)
	}
	if !f.write {
		return 0, f.pathErr("write", errNoWrit)
	}
	end := f.pos + int64(len(p))
	if end > int64(len(f.n.data)) {
		if end > int64(cap(f.n.data)) {
			nd := make([]byte, end, 2*end)
			copy(nd, f.n.data)
			f.n.data = nd
		} else {
			old := len(f.n.data)
			f.n.data = f.n.data[:end]
			clear(f.n.data[old:])
		}
	}
	copy(f.n.data[f.pos:], p)
	f.pos = end
	return len(p), nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return f.pathErr("close", errClosed)
	}
	f.closed = true
	return nil
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return f.pathErr("sync", errClosed)
	}
	f.n.synced = append(f.n.synced[:0], f.n.data...) // CrashClone copies, nothing else holds it
	return nil
}

func (f *memFile) Stat() (os.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return nil, f.pathErr("stat", errClosed)
	}
	return memInfo{name: path.Base(path.Clean("/" + f.name)), size: int64(len(f.n.data))}, nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return f.pathErr("truncate", errClosed)
	}
	if !f.write {
		return f.pathErr("truncate", errNoWrit)
	}
	if size < 0 {
		return f.pathErr("truncate", fs.ErrInvalid)
	}
	if size <= int64(len(f.n.data)) {
		f.n.data = f.n.data[:size]
		return nil
	}
	nd := make([]byte, size)
	copy(nd, f.n.data)
	f.n.data = nd
	return nil
}

func (f *memFile) Seek(offset int64, whence int) (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, f.pathErr("seek", errClosed)
	}
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = f.pos + offset
	case io.SeekEnd:
		abs = int64(len(f.n.data)) + offset
	default:
		return 0, f.pathErr("seek", fs.ErrInvalid)
	}
	if abs < 0 {
		return 0, f.pathErr("seek", fs.ErrInvalid)
	}
	f.pos = abs
	return abs, nil
}
