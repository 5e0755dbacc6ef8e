package client

import (
	"io/fs"
	"path"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// FileType is the kind of an inode.
type FileType uint8

// File types, as HDFS knows them.
const (
	TypeFile FileType = iota
	TypeDir
	TypeSymlink
)

// String returns "file", "directory" or "symlink".
func (t FileType) String() string {
	switch t {
	case TypeDir:
		return "directory"
	case TypeSymlink:
		return "symlink"
	default:
		return "file"
	}
}

// FileStatus is everything the NameNode reports about one inode. It is what
// (*FileInfo).Sys returns.
type FileStatus struct {
	Path        string // absolute path
	Type        FileType
	Length      int64
	Permission  uint16 // HDFS permission bits: 0777 plus the sticky bit 01000
	Owner       string
	Group       string
	ModTime     time.Time
	AccessTime  time.Time
	Replication uint16 // 0 for directories
	BlockSize   int64  // 0 for directories
	FileID      uint64 // inode id
	ChildrenNum int32  // -1 when not reported
	Symlink     string // link target of a symlink
	HasACL      bool
	Encrypted   bool
	ErasureCode bool // erasure-coded file or directory
	Snapshots   bool // snapshottable directory
	StoragePol  uint8
}

// FileInfo describes one file; it implements fs.FileInfo.
type FileInfo struct {
	name   string
	status FileStatus
}

var _ fs.FileInfo = (*FileInfo)(nil)

// Name returns the base name ("/" for the root).
func (fi *FileInfo) Name() string { return fi.name }

// Size returns the length in bytes (0 for directories).
func (fi *FileInfo) Size() int64 { return fi.status.Length }

// Mode returns the permission bits plus fs.ModeDir, fs.ModeSymlink and
// fs.ModeSticky as they apply.
func (fi *FileInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.status.Permission & 0o777)
	if fi.status.Permission&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	switch fi.status.Type {
	case TypeDir:
		m |= fs.ModeDir
	case TypeSymlink:
		m |= fs.ModeSymlink
	}
	return m
}

// ModTime returns the modification time (millisecond precision).
func (fi *FileInfo) ModTime() time.Time { return fi.status.ModTime }

// IsDir reports whether the inode is a directory.
func (fi *FileInfo) IsDir() bool { return fi.status.Type == TypeDir }

// Sys returns the *FileStatus with every field the NameNode reported.
func (fi *FileInfo) Sys() any { return fi.Status() }

// Status returns the full status; the same value as Sys.
func (fi *FileInfo) Status() *FileStatus { return &fi.status }

// Path returns the absolute path of the file.
func (fi *FileInfo) Path() string { return fi.status.Path }

// HDFS permission-short bits that older servers use as flags instead of
// HdfsFileStatusProto.flags.
const (
	permACLBit       = 1 << 12
	permEncryptedBit = 1 << 13
	permECBit        = 1 << 14
)

func msTime(ms uint64) time.Time {
	return time.UnixMilli(int64(ms))
}

// newFileInfo converts a status from the wire; p is its absolute path.
func newFileInfo(p string, s *hdfs.HdfsFileStatusProto) *FileInfo {
	perm := s.GetPermission().GetPerm()
	flags := s.GetFlags()
	st := FileStatus{
		Path:        p,
		Length:      int64(s.GetLength()),
		Permission:  uint16(perm & 0o1777),
		Owner:       s.GetOwner(),
		Group:       s.GetGroup(),
		ModTime:     msTime(s.GetModificationTime()),
		AccessTime:  msTime(s.GetAccessTime()),
		Replication: uint16(s.GetBlockReplication()),
		BlockSize:   int64(s.GetBlocksize()),
		FileID:      s.GetFileId(),
		ChildrenNum: s.GetChildrenNum(),
		Symlink:     string(s.GetSymlink()),
		HasACL:      flags&uint32(hdfs.HdfsFileStatusProto_HAS_ACL) != 0 || perm&permACLBit != 0,
		Encrypted:   flags&uint32(hdfs.HdfsFileStatusProto_HAS_CRYPT) != 0 || perm&permEncryptedBit != 0,
		ErasureCode: flags&uint32(hdfs.HdfsFileStatusProto_HAS_EC) != 0 || perm&permECBit != 0,
		Snapshots:   flags&uint32(hdfs.HdfsFileStatusProto_SNAPSHOT_ENABLED) != 0,
		StoragePol:  uint8(s.GetStoragePolicy()),
	}
	switch s.GetFileType() {
	case hdfs.HdfsFileStatusProto_IS_DIR:
		st.Type = TypeDir
	case hdfs.HdfsFileStatusProto_IS_SYMLINK:
		st.Type = TypeSymlink
	default:
		st.Type = TypeFile
	}
	name := path.Base(p)
	return &FileInfo{name: name, status: st}
}

// ContentSummary is the answer of getContentSummary: totals over a
// subtree. Quotas not set are -1.
type ContentSummary struct {
	Length         int64 // bytes in files
	FileCount      int64
	DirectoryCount int64 // includes the directory itself
	Quota          int64 // namespace quota, -1 if none
	SpaceConsumed  int64 // bytes including replicas
	SpaceQuota     int64 // disk-space quota, -1 if none
	// ErasureCodingPolicy is the policy's name: "Replicated" for a
	// replicated file, "" for a directory without a policy.
	ErasureCodingPolicy string
	// What only snapshots below the path keep (deleted files and
	// directories, blocks files no longer hold); the totals above
	// include it, as HDFS counts it.
	SnapshotLength, SnapshotFileCount, SnapshotDirectoryCount, SnapshotSpaceConsumed int64
}

// QuotaUsage is the answer of getQuotaUsage.
type QuotaUsage struct {
	FileAndDirectoryCount int64
	Quota                 int64 // namespace quota, -1 if none
	SpaceConsumed         int64
	SpaceQuota            int64 // disk-space quota, -1 if none
	// TypeQuotas are the per-storage-type quotas by type name ("SSD",
	// "DISK", ...); a type missing has none.
	TypeQuotas map[string]TypeQuota
}

// TypeQuota is the quota of one storage type and its use.
type TypeQuota struct {
	Quota, Consumed int64
}

// FsStats is the answer of getFsStats: cluster-wide capacity and block
// health.
type FsStats struct {
	Capacity              uint64
	Used                  uint64
	Remaining             uint64
	UnderReplicated       uint64
	CorruptBlocks         uint64
	MissingBlocks         uint64
	MissingReplOneBlocks  uint64
	BlocksInFuture        uint64
	PendingDeletionBlocks uint64
}

// ServerDefaults are the NameNode's defaults for new files.
type ServerDefaults struct {
	BlockSize           int64
	BytesPerChecksum    uint32
	WritePacketSize     uint32
	Replication         uint16
	FileBufferSize      uint32
	EncryptDataTransfer bool
	TrashInterval       time.Duration // 0: trash disabled on the server
	ChecksumType        string        // e.g. "CRC32C"
	KeyProviderURI      string
	PolicyID            uint8
}

// Quota values for SetQuota, as Hadoop defines them.
const (
	// QuotaDontSet leaves a quota unchanged.
	QuotaDontSet int64 = 1<<63 - 1
	// QuotaReset removes a quota.
	QuotaReset int64 = -1
)

// NewFileInfo builds a FileInfo from a status, for file systems other
// than HDFS (the local one behind file: URIs, say). Its name is the last
// element of st.Path ("/" for the root).
func NewFileInfo(st FileStatus) *FileInfo {
	return &FileInfo{name: path.Base(st.Path), status: st}
}
