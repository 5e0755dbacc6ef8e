package fsshell

import (
	"context"
	"io"
	"io/fs"
	"strings"

	"github.com/hdfsgo/hdfsgo/client"
)

// fileSystem is what the shell needs of a file system: the HDFS client
// (hdfsFS) and the local file system behind file: URIs (localFS) both
// provide it. Paths are absolute, as Resolve returns them.
type fileSystem interface {
	URI() string
	User() string
	WorkingDir() string
	Resolve(name string) (string, error)

	Stat(ctx context.Context, name string) (*client.FileInfo, error)
	ReadDir(ctx context.Context, name string) ([]*client.FileInfo, error)
	Mkdir(ctx context.Context, name string, perm fs.FileMode) error
	MkdirAll(ctx context.Context, name string, perm fs.FileMode) error
	Remove(ctx context.Context, name string) error
	RemoveAll(ctx context.Context, name string) error
	Rename(ctx context.Context, oldname, newname string) error
	RenameOverwrite(ctx context.Context, oldname, newname string) error
	RenameToTrash(ctx context.Context, oldname, newname string) error
	Chmod(ctx context.Context, name string, mode fs.FileMode) error
	Chown(ctx context.Context, name, owner, group string) error
	SetTimes(ctx context.Context, name string, mtimeMillis, atimeMillis int64) error
	SetReplication(ctx context.Context, name string, n uint16) (bool, error)
	ContentSummary(ctx context.Context, name string) (*client.ContentSummary, error)
	QuotaUsage(ctx context.Context, name string) (*client.QuotaUsage, error)
	StatFs(ctx context.Context) (client.FsStats, error)
	ServerDefaults(ctx context.Context) (client.ServerDefaults, error)
	CreateEmptyFile(ctx context.Context, name string, perm fs.FileMode) error
	Access(ctx context.Context, name string, perm fs.FileMode) error

	Open(ctx context.Context, name string) (fileReader, error)
	Create(ctx context.Context, name string) (io.WriteCloser, error)
	CreateFile(ctx context.Context, name string, opts client.CreateOptions) (io.WriteCloser, error)
	Append(ctx context.Context, name string) (io.WriteCloser, error)
	Checksum(ctx context.Context, name string) (client.FileChecksum, error)
	Truncate(ctx context.Context, name string, size int64) (bool, error)
	IsFileClosed(ctx context.Context, name string) (bool, error)
	BlockLocations(ctx context.Context, name string, off, n int64) ([]client.BlockLocation, error)
	Concat(ctx context.Context, target string, srcs []string) error

	ModifyACLEntries(ctx context.Context, name string, spec []client.ACLEntry) error
	RemoveACLEntries(ctx context.Context, name string, spec []client.ACLEntry) error
	RemoveDefaultACL(ctx context.Context, name string) error
	RemoveACL(ctx context.Context, name string) error
	SetACL(ctx context.Context, name string, spec []client.ACLEntry) error
	GetACLStatus(ctx context.Context, name string) (*client.ACLStatus, error)
	SetXAttr(ctx context.Context, name, attr string, value []byte, flag client.XAttrFlag) error
	RemoveXAttr(ctx context.Context, name, attr string) error
	GetXAttrs(ctx context.Context, name string, attrs ...string) ([]client.XAttr, error)

	CreateSnapshot(ctx context.Context, dir, name string) (string, error)
	DeleteSnapshot(ctx context.Context, dir, name string) error
	RenameSnapshot(ctx context.Context, dir, oldName, newName string) error
}

// fileReader is an open file: read, seek, and its length when opened.
type fileReader interface {
	io.ReadSeekCloser
	Size() int64
}

// hdfsFS adapts the HDFS client to fileSystem.
type hdfsFS struct{ *client.FileSystem }

var _ fileSystem = hdfsFS{}

func (h hdfsFS) Open(ctx context.Context, name string) (fileReader, error) {
	r, err := h.FileSystem.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (h hdfsFS) Create(ctx context.Context, name string) (io.WriteCloser, error) {
	w, err := h.FileSystem.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	return w, nil
}

func (h hdfsFS) CreateFile(ctx context.Context, name string, opts client.CreateOptions) (io.WriteCloser, error) {
	w, err := h.FileSystem.CreateFile(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	return w, nil
}

func (h hdfsFS) Append(ctx context.Context, name string) (io.WriteCloser, error) {
	w, err := h.FileSystem.Append(ctx, name)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// expectedURI names, in a Wrong FS error, the file system the argument
// should have named: file:/// for file: URIs, the default one otherwise.
func (c *cmd) expectedURI(arg string) string {
	if isLocalURI(arg) || c.fs == c.local {
		return "file:///"
	}
	return c.fs.URI()
}

// fsFor picks the file system an argument names: the local one for file:
// URIs, the shell's default one otherwise. When the default is the local
// file system, an hdfs://HOST:PORT path reaches that cluster through
// Env.DialHDFS (once per authority).
func (c *cmd) fsFor(arg string) (fileSystem, error) {
	if isLocalURI(arg) {
		return c.local, nil
	}
	if c.fs != c.local {
		return c.fs, nil
	}
	scheme, rest, ok := strings.Cut(arg, ":")
	if !ok || strings.Contains(scheme, "/") || !strings.EqualFold(scheme, "hdfs") {
		return c.fs, nil
	}
	auth := ""
	if r, ok := strings.CutPrefix(rest, "//"); ok {
		auth, _, _ = strings.Cut(r, "/")
	}
	if auth == "" {
		return nil, &shellError{msg: "Incomplete HDFS URI, no host: " + arg}
	}
	if c.env.DialHDFS == nil {
		return c.fs, nil
	}
	if h, ok := c.remote[auth]; ok {
		return h, nil
	}
	f, err := c.env.DialHDFS("hdfs://" + auth)
	if err != nil {
		return nil, err
	}
	if c.remote == nil {
		c.remote = map[string]hdfsFS{}
	}
	c.remote[auth] = hdfsFS{f}
	return c.remote[auth], nil
}
