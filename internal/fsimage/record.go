package fsimage

import "github.com/hdfsgo/hdfsgo/internal/editlog/op"

// Header is the image's summary: what every loader needs before the first inode.
type Header struct {
	LayoutVersion int32
	NamespaceID   int32
	TxID          int64  // the image holds every edit up to and including TxID
	LastInodeID   uint64 // highest inode id handed out
	GenStamp      int64  // newest generation stamp handed out
	LastBlockID   int64  // newest block id handed out
	NumInodes     uint64 // inodes that follow, the root included
	// Delegation is the delegation-token secret manager's state (master
	// keys, live tokens), encoded by package namespace; it travels in its
	// own frame ('D', format version 3), nil when there is none.
	Delegation []byte
	// Snapshots is the snapshot state (snapshots, saved inode versions,
	// deleted inodes that snapshots keep), encoded by package namespace; it
	// travels in 'S' frames (format version 4), nil when there is none.
	Snapshots []byte
}

// Inode is one inode of the image. Inodes are written parent before child (a
// pre-order walk from the root, id 16385, whose ParentID is 0), so a loader can
// attach each one as it arrives without holding the whole image.
type Inode struct {
	ID       uint64
	ParentID uint64
	Name     []byte // local name; empty for the root
	IsDir    bool
	Perm     op.Perm
	Mtime    int64
	Atime    int64

	// Directories.
	NsQuota int64 // -1 when unset
	DsQuota int64 // -1 when unset
	// TypeQuotas are the storage-space quotas by storage type (format
	// version 5), in storage type order, each type at most once.
	TypeQuotas []TypeQuota

	// Files.
	Replication uint16
	BlockSize   int64
	Blocks      []op.Block
	UC          *UnderConstruction // nil for a closed file

	// Features (format version 2).
	StoragePolicy uint8         // op.StoragePolicyUnspecified: none
	XAttrs        []op.XAttr    // in the inode's order
	ACL           []op.ACLEntry // the ACL entries the permission bits do not hold
	Snapshottable bool          // directories: snapshots may be taken
}

// HasFeatures reports whether the inode has a storage policy, xattrs or an ACL.
func (in *Inode) HasFeatures() bool {
	return in.StoragePolicy != op.StoragePolicyUnspecified || len(in.XAttrs) > 0 || len(in.ACL) > 0
}

// TypeQuota is a directory's storage-space quota on one storage type
// (Hadoop's QuotaByStorageTypeEntryProto): Type is the StorageTypeProto
// number, Quota in bytes.
type TypeQuota struct {
	Type  uint8
	Quota int64
}

// UnderConstruction is the lease-related state of a file open for write.
type UnderConstruction struct {
	ClientName    string
	ClientMachine string
	// TruncateSource is the id of the block a copy-on-truncate copies into
	// the file's last block, or the last block's own id while an in-place
	// truncate cuts it; 0 for none (format version 8).
	TruncateSource int64
}
