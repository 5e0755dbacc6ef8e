package client

import (
	"context"
	"errors"
	"io"
	"io/fs"
)

// FS returns the file system as an io/fs.FS rooted at HDFS's "/" (use
// fs.Sub for a subtree). Every call it makes uses ctx. The result also
// implements fs.ReadDirFS, fs.ReadFileFS and fs.StatFS; its files are
// *Reader-backed (io.ReaderAt, io.Seeker, io.WriterTo) and its
// directories implement fs.ReadDirFile.
func (f *FileSystem) FS(ctx context.Context) fs.FS { return &ioFS{f: f, ctx: ctx} }

type ioFS struct {
	f   *FileSystem
	ctx context.Context
}

var (
	_ fs.ReadDirFS  = (*ioFS)(nil)
	_ fs.ReadFileFS = (*ioFS)(nil)
	_ fs.StatFS     = (*ioFS)(nil)
)

// abs maps an io/fs name to an HDFS path.
func (x *ioFS) abs(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return "/", nil
	}
	return "/" + name, nil
}

// rename gives an error the io/fs name instead of the HDFS path.
func rename(err error, op, name string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: op, Path: name, Err: pe.Err}
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// named is a FileInfo under another name ("." for the root).
type named struct {
	*FileInfo
	name string
}

func (n named) Name() string { return n.name }

func infoAs(fi *FileInfo, name string) fs.FileInfo {
	base := name
	if i := lastSlash(name); i >= 0 {
		base = name[i+1:]
	}
	return named{fi, base}
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

func (x *ioFS) Stat(name string) (fs.FileInfo, error) {
	p, err := x.abs("stat", name)
	if err != nil {
		return nil, err
	}
	fi, err := x.f.Stat(x.ctx, p)
	if err != nil {
		return nil, rename(err, "stat", name)
	}
	return infoAs(fi, name), nil
}

func (x *ioFS) Open(name string) (fs.File, error) {
	p, err := x.abs("open", name)
	if err != nil {
		return nil, err
	}
	fi, err := x.f.Stat(x.ctx, p)
	if err != nil {
		return nil, rename(err, "open", name)
	}
	if fi.IsDir() {
		return &ioDir{fsys: x, name: name, path: p, info: infoAs(fi, name)}, nil
	}
	r, err := x.f.Open(x.ctx, p)
	if err != nil {
		return nil, rename(err, "open", name)
	}
	return &ioFile{Reader: r, info: infoAs(fi, name)}, nil
}

func (x *ioFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := x.abs("readdir", name)
	if err != nil {
		return nil, err
	}
	fi, err := x.f.Stat(x.ctx, p)
	if err != nil {
		return nil, rename(err, "readdir", name)
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	list, err := x.f.ReadDir(x.ctx, p)
	if err != nil {
		return nil, rename(err, "readdir", name)
	}
	out := make([]fs.DirEntry, len(list))
	for i, e := range list {
		out[i] = fs.FileInfoToDirEntry(e)
	}
	return out, nil
}

func (x *ioFS) ReadFile(name string) ([]byte, error) {
	p, err := x.abs("readfile", name)
	if err != nil {
		return nil, err
	}
	fi, err := x.f.Stat(x.ctx, p)
	if err != nil {
		return nil, rename(err, "readfile", name)
	}
	if fi.IsDir() {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: errors.New("is a directory")}
	}
	b, err := x.f.ReadFile(x.ctx, p)
	if err != nil {
		return nil, rename(err, "readfile", name)
	}
	return b, nil
}

// ioFile is an open regular file.
type ioFile struct {
	*Reader
	info fs.FileInfo
}

func (f *ioFile) Stat() (fs.FileInfo, error) { return f.info, nil }

// ioDir is an open directory; its entries are listed on the first
// ReadDir.
type ioDir struct {
	fsys    *ioFS
	name    string
	path    string
	info    fs.FileInfo
	entries []fs.DirEntry
	listed  bool
	closed  bool
}

func (d *ioDir) Stat() (fs.FileInfo, error) { return d.info, nil }

func (d *ioDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: errors.New("is a directory")}
}

func (d *ioDir) Close() error {
	d.closed = true
	return nil
}

func (d *ioDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.closed {
		return nil, &fs.PathError{Op: "readdir", Path: d.name, Err: fs.ErrClosed}
	}
	if !d.listed {
		list, err := d.fsys.ReadDir(d.name)
		if err != nil {
			return nil, err
		}
		d.entries, d.listed = list, true
	}
	if n <= 0 {
		out := d.entries
		d.entries = nil
		return out, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	k := min(n, len(d.entries))
	out := d.entries[:k:k]
	d.entries = d.entries[k:]
	return out, nil
}
