package fsshell

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
)

// localBlockSize is Hadoop's fs.local.block.size default (32 MiB), the
// block size its local file system reports for every path.
const localBlockSize = 32 << 20

// localUmask is Hadoop's default fs.permissions.umask-mode, applied to
// new files and directories as its local file system does.
const localUmask = 0o022

// errNoChecksum is the local file system's answer to -checksum: it keeps
// no checksum of whole files (Hadoop's prints NONE).
var errNoChecksum = errors.New("no file checksum")

// localFS is the file system of file: URIs: the machine's own files,
// with Hadoop's LocalFileSystem semantics (no .crc checksum files).
type localFS struct {
	mu     sync.Mutex
	users  map[uint32]string
	groups map[uint32]string
}

func newLocalFS() *localFS {
	return &localFS{users: map[uint32]string{}, groups: map[uint32]string{}}
}

var _ fileSystem = (*localFS)(nil)

// URI is the prefix of fully qualified local paths: "file:" + "/x".
func (l *localFS) URI() string { return "file:" }

func (l *localFS) User() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return strconv.Itoa(os.Getuid())
}

func (l *localFS) WorkingDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "/"
	}
	return filepath.ToSlash(wd)
}

// Resolve turns file:/x, file:///x, file://localhost/x or a plain path
// (relative ones against the process's working directory) into a clean
// absolute path. Another authority than localhost is not this machine.
func (l *localFS) Resolve(name string) (string, error) {
	p := name
	if isLocalURI(name) {
		_, rest, _ := strings.Cut(name, ":")
		if r, ok := strings.CutPrefix(rest, "//"); ok {
			auth, tail := r, "/"
			if i := strings.IndexByte(r, '/'); i >= 0 {
				auth, tail = r[:i], r[i:]
			}
			if auth != "" && auth != "localhost" {
				return "", client.ErrWrongFS
			}
			rest = tail
		}
		p = rest
	} else if i := strings.Index(p, ":"); i > 0 && !strings.Contains(p[:i], "/") {
		return "", client.ErrWrongFS // another scheme: not a local path
	}
	if p == "" {
		return "", fs.ErrInvalid
	}
	if p[0] != '/' {
		p = l.WorkingDir() + "/" + p
	}
	return path.Clean(p), nil
}

func (l *localFS) name(uid uint32, group bool) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.users
	if group {
		m = l.groups
	}
	if n, ok := m[uid]; ok {
		return n
	}
	id := strconv.FormatUint(uint64(uid), 10)
	n := id
	if group {
		if g, err := user.LookupGroupId(id); err == nil {
			n = g.Name
		}
	} else if u, err := user.LookupId(id); err == nil {
		n = u.Username
	}
	m[uid] = n
	return n
}

// info converts an os.FileInfo of the local path p.
func (l *localFS) info(p string, fi os.FileInfo) *client.FileInfo {
	st := client.FileStatus{
		Path:        p,
		Type:        client.TypeFile,
		Length:      fi.Size(),
		Permission:  uint16(fi.Mode().Perm()),
		ModTime:     fi.ModTime().Truncate(time.Millisecond),
		Replication: 1,
		BlockSize:   localBlockSize,
		ChildrenNum: -1,
	}
	if fi.Mode()&fs.ModeSticky != 0 {
		st.Permission |= 0o1000
	}
	if fi.IsDir() {
		st.Type = client.TypeDir
	}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Owner = l.name(sys.Uid, false)
		st.Group = l.name(sys.Gid, true)
		st.AccessTime = time.Unix(int64(sys.Atim.Sec), int64(sys.Atim.Nsec)).Truncate(time.Millisecond)
		st.FileID = sys.Ino
	}
	return client.NewFileInfo(st)
}

func (l *localFS) Stat(_ context.Context, name string) (*client.FileInfo, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	return l.info(name, fi), nil
}

func (l *localFS) ReadDir(_ context.Context, name string) ([]*client.FileInfo, error) {
	ents, err := os.ReadDir(name)
	if err != nil {
		return nil, err
	}
	out := make([]*client.FileInfo, 0, len(ents))
	for _, e := range ents {
		p := path.Join(name, e.Name())
		fi, err := os.Stat(p)
		if err != nil {
			continue // gone since the listing, or a dangling link
		}
		out = append(out, l.info(p, fi))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func (l *localFS) Mkdir(_ context.Context, name string, perm fs.FileMode) error {
	return os.Mkdir(name, perm.Perm()&^localUmask)
}

func (l *localFS) MkdirAll(_ context.Context, name string, perm fs.FileMode) error {
	if fi, err := os.Stat(name); err == nil && !fi.IsDir() {
		return &fs.PathError{Op: "mkdir", Path: name, Err: fs.ErrExist}
	}
	return os.MkdirAll(name, perm.Perm()&^localUmask)
}

func (l *localFS) Remove(_ context.Context, name string) error {
	err := os.Remove(name)
	if errors.Is(err, syscall.EEXIST) {
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.ENOTEMPTY}
	}
	return err
}

func (l *localFS) RemoveAll(_ context.Context, name string) error {
	if _, err := os.Lstat(name); err != nil {
		return err
	}
	return os.RemoveAll(name)
}

func (l *localFS) Rename(_ context.Context, oldname, newname string) error {
	if _, err := os.Lstat(newname); err == nil {
		return &fs.PathError{Op: "rename", Path: newname, Err: fs.ErrExist}
	}
	return os.Rename(oldname, newname)
}

func (l *localFS) RenameOverwrite(_ context.Context, oldname, newname string) error {
	return os.Rename(oldname, newname)
}

// RenameToTrash is Rename: the local file system has no delete check of
// its own to add.
func (l *localFS) RenameToTrash(ctx context.Context, oldname, newname string) error {
	return l.Rename(ctx, oldname, newname)
}

func (l *localFS) Chmod(_ context.Context, name string, mode fs.FileMode) error {
	return os.Chmod(name, mode&(fs.ModePerm|fs.ModeSticky))
}

func (l *localFS) Chown(_ context.Context, name, owner, group string) error {
	uid, gid := -1, -1
	if owner != "" {
		u, err := user.Lookup(owner)
		if err != nil {
			return &shellError{msg: "chown: invalid user: '" + owner + "'"}
		}
		uid, _ = strconv.Atoi(u.Uid)
	}
	if group != "" {
		g, err := user.LookupGroup(group)
		if err != nil {
			return &shellError{msg: "chgrp: invalid group: '" + group + "'"}
		}
		gid, _ = strconv.Atoi(g.Gid)
	}
	return os.Chown(name, uid, gid)
}

// SetTimes sets the times; -1 leaves one as it is, as in HDFS.
func (l *localFS) SetTimes(_ context.Context, name string, mtimeMillis, atimeMillis int64) error {
	fi, err := os.Stat(name)
	if err != nil {
		return err
	}
	cur := l.info(name, fi).Status()
	mt, at := cur.ModTime, cur.AccessTime
	if mtimeMillis >= 0 {
		mt = time.UnixMilli(mtimeMillis)
	}
	if atimeMillis >= 0 {
		at = time.UnixMilli(atimeMillis)
	}
	return os.Chtimes(name, at, mt)
}

// SetReplication succeeds and changes nothing, as Hadoop's local file
// system does.
func (l *localFS) SetReplication(_ context.Context, name string, _ uint16) (bool, error) {
	if _, err := os.Stat(name); err != nil {
		return false, err
	}
	return true, nil
}

// ContentSummary walks the tree; the space consumed is the length (one
// copy of each byte), and there are no quotas.
func (l *localFS) ContentSummary(_ context.Context, name string) (*client.ContentSummary, error) {
	cs := &client.ContentSummary{Quota: -1, SpaceQuota: -1}
	err := filepath.WalkDir(name, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil // a dangling link: not counted
		}
		if fi.IsDir() {
			cs.DirectoryCount++
			return nil
		}
		cs.FileCount++
		cs.Length += fi.Size()
		return nil
	})
	if err != nil {
		return nil, err
	}
	cs.SpaceConsumed = cs.Length
	if cs.DirectoryCount == 0 {
		cs.ErasureCodingPolicy = "Replicated" // a file, as HDFS names it
	}
	return cs, nil
}

func (l *localFS) QuotaUsage(ctx context.Context, name string) (*client.QuotaUsage, error) {
	cs, err := l.ContentSummary(ctx, name)
	if err != nil {
		return nil, err
	}
	return &client.QuotaUsage{FileAndDirectoryCount: cs.FileCount + cs.DirectoryCount, Quota: -1,
		SpaceConsumed: cs.SpaceConsumed, SpaceQuota: -1}, nil
}

// StatFs reports the volume of the root directory.
func (l *localFS) StatFs(context.Context) (client.FsStats, error) {
	var s syscall.Statfs_t
	if err := syscall.Statfs("/", &s); err != nil {
		return client.FsStats{}, err
	}
	bs := uint64(s.Bsize)
	total, free := s.Blocks*bs, s.Bavail*bs
	return client.FsStats{Capacity: total, Used: total - s.Bfree*bs, Remaining: free}, nil
}

func (l *localFS) ServerDefaults(context.Context) (client.ServerDefaults, error) {
	return client.ServerDefaults{BlockSize: localBlockSize, Replication: 1}, nil
}

func (l *localFS) CreateEmptyFile(_ context.Context, name string, perm fs.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm.Perm()&^localUmask)
	if err != nil {
		return err
	}
	return f.Close()
}

// Access asks the kernel whether this process may access name as perm's
// owner bits say.
func (l *localFS) Access(_ context.Context, name string, perm fs.FileMode) error {
	if err := syscall.Access(name, uint32(perm.Perm()&0o7)); err != nil {
		return &fs.PathError{Op: "access", Path: name, Err: err}
	}
	return nil
}

// localReader is an open local file with its length at open time.
type localReader struct {
	*os.File
	size int64
}

func (r localReader) Size() int64 { return r.size }

func (l *localFS) Open(_ context.Context, name string) (fileReader, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
	}
	return localReader{File: f, size: fi.Size()}, nil
}

func (l *localFS) Create(ctx context.Context, name string) (io.WriteCloser, error) {
	return l.CreateFile(ctx, name, client.CreateOptions{Overwrite: true})
}

// CreateFile creates name, making missing parents as Hadoop's local file
// system does.
func (l *localFS) CreateFile(_ context.Context, name string, opts client.CreateOptions) (io.WriteCloser, error) {
	if err := os.MkdirAll(path.Dir(name), 0o777&^localUmask); err != nil {
		return nil, err
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if !opts.Overwrite {
		flag = os.O_WRONLY | os.O_CREATE | os.O_EXCL
	}
	perm := opts.Perm.Perm()
	if perm == 0 {
		perm = 0o666
	}
	return os.OpenFile(name, flag, perm&^localUmask)
}

func (l *localFS) Append(_ context.Context, name string) (io.WriteCloser, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
}

func (l *localFS) Checksum(context.Context, string) (client.FileChecksum, error) {
	return client.FileChecksum{}, errNoChecksum
}

// Truncate cuts name to size bytes; growing a file is refused, as in
// Hadoop.
func (l *localFS) Truncate(_ context.Context, name string, size int64) (bool, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return false, err
	}
	if size > fi.Size() {
		return false, &shellError{msg: "Cannot truncate to a larger file size. Current size: " +
			strconv.FormatInt(fi.Size(), 10) + ", truncate size: " + strconv.FormatInt(size, 10) + "."}
	}
	return true, os.Truncate(name, size)
}

func (l *localFS) IsFileClosed(context.Context, string) (bool, error) { return true, nil }

// unsupportedLocal is Hadoop's answer for an operation its local file
// system lacks.
func unsupportedLocal(op string) error {
	return &shellError{msg: "RawLocalFileSystem doesn't support " + op}
}

func (l *localFS) BlockLocations(context.Context, string, int64, int64) ([]client.BlockLocation, error) {
	return nil, unsupportedLocal("getFileBlockLocations")
}

func (l *localFS) Concat(context.Context, string, []string) error {
	return unsupportedLocal("concat")
}

func (l *localFS) ModifyACLEntries(context.Context, string, []client.ACLEntry) error {
	return unsupportedLocal("modifyAclEntries")
}

func (l *localFS) RemoveACLEntries(context.Context, string, []client.ACLEntry) error {
	return unsupportedLocal("removeAclEntries")
}

func (l *localFS) RemoveDefaultACL(context.Context, string) error {
	return unsupportedLocal("removeDefaultAcl")
}

func (l *localFS) RemoveACL(context.Context, string) error { return unsupportedLocal("removeAcl") }

func (l *localFS) SetACL(context.Context, string, []client.ACLEntry) error {
	return unsupportedLocal("setAcl")
}

func (l *localFS) GetACLStatus(context.Context, string) (*client.ACLStatus, error) {
	return nil, unsupportedLocal("getAclStatus")
}

func (l *localFS) SetXAttr(context.Context, string, string, []byte, client.XAttrFlag) error {
	return unsupportedLocal("setXAttr")
}

func (l *localFS) RemoveXAttr(context.Context, string, string) error {
	return unsupportedLocal("removeXAttr")
}

func (l *localFS) GetXAttrs(context.Context, string, ...string) ([]client.XAttr, error) {
	return nil, unsupportedLocal("getXAttrs")
}

func (l *localFS) CreateSnapshot(context.Context, string, string) (string, error) {
	return "", unsupportedLocal("createSnapshot")
}

func (l *localFS) DeleteSnapshot(context.Context, string, string) error {
	return unsupportedLocal("deleteSnapshot")
}

func (l *localFS) RenameSnapshot(context.Context, string, string, string) error {
	return unsupportedLocal("renameSnapshot")
}
