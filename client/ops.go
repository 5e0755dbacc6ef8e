package client

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// Stat returns the status of name. A missing path fails with an error
// matching fs.ErrNotExist.
func (f *FileSystem) Stat(ctx context.Context, name string) (*FileInfo, error) {
	p, err := f.resolve("stat", name)
	if err != nil {
		return nil, err
	}
	fi, err := f.getFileInfo(ctx, p)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if fi == nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return fi, nil
}

// getFileInfo returns nil, nil for a missing path (the response carries no
// status, the way the NameNode says "not found").
func (f *FileSystem) getFileInfo(ctx context.Context, p string) (*FileInfo, error) {
	resp := &hdfs.GetFileInfoResponseProto{}
	if err := f.call(ctx, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(p)}, resp); err != nil {
		return nil, err
	}
	if resp.Fs == nil {
		return nil, nil
	}
	return newFileInfo(p, resp.Fs), nil
}

// Mkdir creates directory name with permission perm (minus the umask). The
// parent must exist; an existing name fails with fs.ErrExist.
func (f *FileSystem) Mkdir(ctx context.Context, name string, perm fs.FileMode) error {
	return f.mkdir(ctx, name, perm, false)
}

// MkdirAll creates directory name and any missing parents in one mkdirs
// call. An existing directory is not an error; an existing file fails with
// the NameNode's error (fs.ErrExist or remoteerr.ErrParentNotDirectory).
func (f *FileSystem) MkdirAll(ctx context.Context, name string, perm fs.FileMode) error {
	return f.mkdir(ctx, name, perm, true)
}

func (f *FileSystem) mkdir(ctx context.Context, name string, perm fs.FileMode, parents bool) error {
	p, err := f.resolve("mkdir", name)
	if err != nil {
		return err
	}
	if !parents {
		// The NameNode accepts mkdirs of an existing directory, so the
		// "exists" answer of Mkdir is the client's own check.
		fi, err := f.getFileInfo(ctx, p)
		if err != nil {
			return &fs.PathError{Op: "mkdir", Path: name, Err: err}
		}
		if fi != nil {
			return &fs.PathError{Op: "mkdir", Path: name, Err: fs.ErrExist}
		}
	}
	req := &hdfs.MkdirsRequestProto{
		Src:          proto.String(p),
		Masked:       &hdfs.FsPermissionProto{Perm: proto.Uint32(permBits(perm) &^ f.umask)},
		CreateParent: proto.Bool(parents),
	}
	resp := &hdfs.MkdirsResponseProto{}
	if err := f.call(ctx, "mkdirs", req, resp); err != nil {
		return &fs.PathError{Op: "mkdir", Path: name, Err: err}
	}
	if !resp.GetResult() {
		return &fs.PathError{Op: "mkdir", Path: name, Err: ErrNotDone}
	}
	return nil
}

// Remove deletes a file or an empty directory. A non-empty directory fails
// with an error matching syscall.ENOTEMPTY; a missing one with
// fs.ErrNotExist.
func (f *FileSystem) Remove(ctx context.Context, name string) error {
	p, err := f.resolve("remove", name)
	if err != nil {
		return err
	}
	fi, err := f.getFileInfo(ctx, p)
	if err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	if fi == nil {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	ok, err := f.delete(ctx, p, false)
	if err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	if !ok {
		// Gone between the check and the delete.
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	return nil
}

// RemoveAll deletes name and everything under it. A missing name is not
// an error.
func (f *FileSystem) RemoveAll(ctx context.Context, name string) error {
	p, err := f.resolve("remove", name)
	if err != nil {
		return err
	}
	if _, err := f.delete(ctx, p, true); err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

func (f *FileSystem) delete(ctx context.Context, p string, recursive bool) (bool, error) {
	resp := &hdfs.DeleteResponseProto{}
	err := f.call(ctx, "delete", &hdfs.DeleteRequestProto{Src: proto.String(p), Recursive: proto.Bool(recursive)}, resp)
	if err != nil {
		return false, err
	}
	return resp.GetResult(), nil
}

// Rename moves oldname to newname, which must not exist (fs.ErrExist
// otherwise). It is rename2 without OVERWRITE.
func (f *FileSystem) Rename(ctx context.Context, oldname, newname string) error {
	return f.rename(ctx, oldname, newname, false, false)
}

// RenameOverwrite moves oldname to newname, replacing newname if it is a
// file or an empty directory of the same kind.
func (f *FileSystem) RenameOverwrite(ctx context.Context, oldname, newname string) error {
	return f.rename(ctx, oldname, newname, true, false)
}

// RenameToTrash moves oldname to newname, which must not exist, as a move
// to the trash (rename2 with moveToTrash, as Hadoop's trash sends it): the
// NameNode also asks of the caller what a recursive delete of oldname
// would.
func (f *FileSystem) RenameToTrash(ctx context.Context, oldname, newname string) error {
	return f.rename(ctx, oldname, newname, false, true)
}

func (f *FileSystem) rename(ctx context.Context, oldname, newname string, overwrite, toTrash bool) error {
	src, err := f.resolve("rename", oldname)
	if err != nil {
		return err
	}
	dst, err := f.resolve("rename", newname)
	if err != nil {
		return err
	}
	req := &hdfs.Rename2RequestProto{Src: proto.String(src), Dst: proto.String(dst), OverwriteDest: proto.Bool(overwrite)}
	if toTrash {
		req.MoveToTrash = proto.Bool(true)
	}
	if err := f.call(ctx, "rename2", req, &hdfs.Rename2ResponseProto{}); err != nil {
		return &fs.PathError{Op: "rename", Path: oldname, Err: err}
	}
	return nil
}

// Chmod sets the permission bits of name (rwxrwxrwx and fs.ModeSticky; no
// umask applies).
func (f *FileSystem) Chmod(ctx context.Context, name string, mode fs.FileMode) error {
	p, err := f.resolve("chmod", name)
	if err != nil {
		return err
	}
	req := &hdfs.SetPermissionRequestProto{Src: proto.String(p), Permission: &hdfs.FsPermissionProto{Perm: proto.Uint32(permBits(mode))}}
	if err := f.call(ctx, "setPermission", req, &hdfs.SetPermissionResponseProto{}); err != nil {
		return &fs.PathError{Op: "chmod", Path: name, Err: err}
	}
	return nil
}

// Chown sets the owner and group of name. An empty owner or group is left
// unchanged (the field is not sent).
func (f *FileSystem) Chown(ctx context.Context, name, owner, group string) error {
	p, err := f.resolve("chown", name)
	if err != nil {
		return err
	}
	req := &hdfs.SetOwnerRequestProto{Src: proto.String(p)}
	if owner != "" {
		req.Username = proto.String(owner)
	}
	if group != "" {
		req.Groupname = proto.String(group)
	}
	if err := f.call(ctx, "setOwner", req, &hdfs.SetOwnerResponseProto{}); err != nil {
		return &fs.PathError{Op: "chown", Path: name, Err: err}
	}
	return nil
}

// Chtimes sets the access and modification times of name. A zero
// time.Time leaves that time unchanged.
func (f *FileSystem) Chtimes(ctx context.Context, name string, atime, mtime time.Time) error {
	ms := func(t time.Time) int64 {
		if t.IsZero() {
			return -1
		}
		return t.UnixMilli()
	}
	return f.setTimes(ctx, "chtimes", name, ms(mtime), ms(atime))
}

// SetTimes is setTimes as Hadoop defines it: times in milliseconds since
// the epoch, -1 to leave one unchanged.
func (f *FileSystem) SetTimes(ctx context.Context, name string, mtimeMillis, atimeMillis int64) error {
	return f.setTimes(ctx, "chtimes", name, mtimeMillis, atimeMillis)
}

func (f *FileSystem) setTimes(ctx context.Context, op, name string, mtime, atime int64) error {
	p, err := f.resolve(op, name)
	if err != nil {
		return err
	}
	req := &hdfs.SetTimesRequestProto{Src: proto.String(p), Mtime: proto.Uint64(uint64(mtime)), Atime: proto.Uint64(uint64(atime))}
	if err := f.call(ctx, "setTimes", req, &hdfs.SetTimesResponseProto{}); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return nil
}

// SetReplication sets the target replication of file name. It returns
// false when the NameNode did not change it (e.g. name is a directory).
func (f *FileSystem) SetReplication(ctx context.Context, name string, n uint16) (bool, error) {
	p, err := f.resolve("setrep", name)
	if err != nil {
		return false, err
	}
	resp := &hdfs.SetReplicationResponseProto{}
	if err := f.call(ctx, "setReplication", &hdfs.SetReplicationRequestProto{Src: proto.String(p), Replication: proto.Uint32(uint32(n))}, resp); err != nil {
		return false, &fs.PathError{Op: "setrep", Path: name, Err: err}
	}
	return resp.GetResult(), nil
}

// ContentSummary returns totals over the subtree at name.
func (f *FileSystem) ContentSummary(ctx context.Context, name string) (*ContentSummary, error) {
	const op = "content summary"
	p, err := f.resolve(op, name)
	if err != nil {
		return nil, err
	}
	resp := &hdfs.GetContentSummaryResponseProto{}
	if err := f.call(ctx, "getContentSummary", &hdfs.GetContentSummaryRequestProto{Path: proto.String(p)}, resp); err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	s := resp.Summary
	if s == nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: ErrBadResponse}
	}
	return &ContentSummary{
		Length:         int64(s.GetLength()),
		FileCount:      int64(s.GetFileCount()),
		DirectoryCount: int64(s.GetDirectoryCount()),
		Quota:          int64(s.GetQuota()),
		SpaceConsumed:  int64(s.GetSpaceConsumed()),
		SpaceQuota:     int64(s.GetSpaceQuota()),

		ErasureCodingPolicy: s.GetErasureCodingPolicy(),

		SnapshotLength:         int64(s.GetSnapshotLength()),
		SnapshotFileCount:      int64(s.GetSnapshotFileCount()),
		SnapshotDirectoryCount: int64(s.GetSnapshotDirectoryCount()),
		SnapshotSpaceConsumed:  int64(s.GetSnapshotSpaceConsumed()),
	}, nil
}

// QuotaUsage returns the quotas of name and their use.
func (f *FileSystem) QuotaUsage(ctx context.Context, name string) (*QuotaUsage, error) {
	const op = "quota usage"
	p, err := f.resolve(op, name)
	if err != nil {
		return nil, err
	}
	resp := &hdfs.GetQuotaUsageResponseProto{}
	if err := f.call(ctx, "getQuotaUsage", &hdfs.GetQuotaUsageRequestProto{Path: proto.String(p)}, resp); err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	u := resp.Usage
	if u == nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: ErrBadResponse}
	}
	q := &QuotaUsage{
		FileAndDirectoryCount: int64(u.GetFileAndDirectoryCount()),
		Quota:                 int64(u.GetQuota()),
		SpaceConsumed:         int64(u.GetSpaceConsumed()),
		SpaceQuota:            int64(u.GetSpaceQuota()),
	}
	for _, t := range u.GetTypeQuotaInfos().GetTypeQuotaInfo() {
		if q.TypeQuotas == nil {
			q.TypeQuotas = map[string]TypeQuota{}
		}
		q.TypeQuotas[t.GetType().String()] = TypeQuota{Quota: int64(t.GetQuota()), Consumed: int64(t.GetConsumed())}
	}
	return q, nil
}

// SetQuota sets the namespace and disk-space quotas of directory name.
// Pass QuotaDontSet to keep one, QuotaReset to remove one.
func (f *FileSystem) SetQuota(ctx context.Context, name string, nsQuota, dsQuota int64) error {
	const op = "set quota"
	p, err := f.resolve(op, name)
	if err != nil {
		return err
	}
	req := &hdfs.SetQuotaRequestProto{Path: proto.String(p), NamespaceQuota: proto.Uint64(uint64(nsQuota)), StoragespaceQuota: proto.Uint64(uint64(dsQuota))}
	if err := f.call(ctx, "setQuota", req, &hdfs.SetQuotaResponseProto{}); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return nil
}

// SetTypeQuota sets the space quota of directory name on one storage type
// ("SSD", "DISK", "ARCHIVE", ...): dsQuota bytes, or QuotaReset to remove
// it (setQuota with a storage type).
func (f *FileSystem) SetTypeQuota(ctx context.Context, name, storageType string, dsQuota int64) error {
	const op = "set quota"
	p, err := f.resolve(op, name)
	if err != nil {
		return err
	}
	t, ok := hdfs.StorageTypeProto_value[strings.ToUpper(storageType)]
	if !ok {
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("unknown storage type %q", storageType)}
	}
	req := &hdfs.SetQuotaRequestProto{Path: proto.String(p), NamespaceQuota: proto.Uint64(uint64(QuotaDontSet)),
		StoragespaceQuota: proto.Uint64(uint64(dsQuota)), StorageType: hdfs.StorageTypeProto(t).Enum()}
	if err := f.call(ctx, "setQuota", req, &hdfs.SetQuotaResponseProto{}); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return nil
}

// StatFs returns the cluster's capacity and block counts.
func (f *FileSystem) StatFs(ctx context.Context) (FsStats, error) {
	resp := &hdfs.GetFsStatsResponseProto{}
	if err := f.call(ctx, "getFsStats", &hdfs.GetFsStatusRequestProto{}, resp); err != nil {
		return FsStats{}, err
	}
	return FsStats{
		Capacity:              resp.GetCapacity(),
		Used:                  resp.GetUsed(),
		Remaining:             resp.GetRemaining(),
		UnderReplicated:       resp.GetUnderReplicated(),
		CorruptBlocks:         resp.GetCorruptBlocks(),
		MissingBlocks:         resp.GetMissingBlocks(),
		MissingReplOneBlocks:  resp.GetMissingReplOneBlocks(),
		BlocksInFuture:        resp.GetBlocksInFuture(),
		PendingDeletionBlocks: resp.GetPendingDeletionBlocks(),
	}, nil
}

// ServerDefaults returns the NameNode's defaults for new files. The first
// answer is cached for the life of the FileSystem.
func (f *FileSystem) ServerDefaults(ctx context.Context) (ServerDefaults, error) {
	f.mu.Lock()
	d := f.mu.defaults
	f.mu.Unlock()
	if d != nil {
		return *d, nil
	}
	resp := &hdfs.GetServerDefaultsResponseProto{}
	if err := f.call(ctx, "getServerDefaults", &hdfs.GetServerDefaultsRequestProto{}, resp); err != nil {
		return ServerDefaults{}, err
	}
	s := resp.ServerDefaults
	if s == nil {
		return ServerDefaults{}, ErrBadResponse
	}
	d = &ServerDefaults{
		BlockSize:           int64(s.GetBlockSize()),
		BytesPerChecksum:    s.GetBytesPerChecksum(),
		WritePacketSize:     s.GetWritePacketSize(),
		Replication:         uint16(s.GetReplication()),
		FileBufferSize:      s.GetFileBufferSize(),
		EncryptDataTransfer: s.GetEncryptDataTransfer(),
		TrashInterval:       time.Duration(s.GetTrashInterval()) * time.Minute,
		ChecksumType:        strings.TrimPrefix(s.GetChecksumType().String(), "CHECKSUM_"),
		KeyProviderURI:      s.GetKeyProviderUri(),
		PolicyID:            uint8(s.GetPolicyId()),
	}
	f.mu.Lock()
	f.mu.defaults = d
	f.mu.Unlock()
	return *d, nil
}

// CreateEmptyFile creates a zero-length file (create, then complete with
// no block) with permission perm minus the umask. The parent must exist;
// an existing name fails with fs.ErrExist.
func (f *FileSystem) CreateEmptyFile(ctx context.Context, name string, perm fs.FileMode) error {
	const op = "create"
	p, err := f.resolve(op, name)
	if err != nil {
		return err
	}
	repl, bs := uint32(f.replication), uint64(f.blockSize)
	if repl == 0 || bs == 0 {
		d, err := f.ServerDefaults(ctx)
		if err != nil {
			return &fs.PathError{Op: op, Path: name, Err: err}
		}
		if repl == 0 {
			repl = uint32(d.Replication)
		}
		if bs == 0 {
			bs = uint64(d.BlockSize)
		}
	}
	req := &hdfs.CreateRequestProto{
		Src:          proto.String(p),
		Masked:       &hdfs.FsPermissionProto{Perm: proto.Uint32(permBits(perm) &^ f.umask)},
		ClientName:   proto.String(f.clientName),
		CreateFlag:   proto.Uint32(uint32(hdfs.CreateFlagProto_CREATE)),
		CreateParent: proto.Bool(false),
		Replication:  proto.Uint32(repl),
		BlockSize:    proto.Uint64(bs),
	}
	resp := &hdfs.CreateResponseProto{}
	if err := f.call(ctx, "create", req, resp); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	creq := &hdfs.CompleteRequestProto{Src: proto.String(p), ClientName: proto.String(f.clientName)}
	if id := resp.GetFs().GetFileId(); id != 0 {
		creq.FileId = proto.Uint64(id)
	}
	cresp := &hdfs.CompleteResponseProto{}
	if err := f.call(ctx, "complete", creq, cresp); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	if !cresp.GetResult() {
		return &fs.PathError{Op: op, Path: name, Err: ErrNotDone}
	}
	return nil
}

// Access checks whether the user may access name in the way perm's
// owner bits say (0o4 read, 0o2 write, 0o1 execute; e.g. 0o6 for read and
// write). It returns nil when allowed and an error matching
// fs.ErrPermission when not (checkAccess, Hadoop's FileSystem.access).
func (f *FileSystem) Access(ctx context.Context, name string, perm fs.FileMode) error {
	const op = "access"
	p, err := f.resolve(op, name)
	if err != nil {
		return err
	}
	mode := hdfs.AclEntryProto_FsActionProto(perm.Perm() & 0o7)
	req := &hdfs.CheckAccessRequestProto{Path: proto.String(p), Mode: mode.Enum()}
	if err := f.call(ctx, "checkAccess", req, &hdfs.CheckAccessResponseProto{}); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return nil
}
