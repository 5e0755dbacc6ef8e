// Package op is the vocabulary of namespace mutations: one Go type per edit-log
// operation. It is pure data: the namespace core applies ops (namespace.Tree.Apply),
// the editlog package encodes and decodes them, and nothing else defines a mutation.
//
// An op records the outcome of a decision, never the decision itself: paths are the
// resolved, final paths (a rename "into a directory" carries the full destination),
// inode ids and block ids are the ones allocated, times are absolute milliseconds.
// Applying the same ops to the same tree therefore always yields the same tree,
// which is what makes image + edits reproduce exactly what clients saw.
//
// Opcode numbers are Hadoop's FSEditLogOpCodes values, kept so that a reader who
// knows HDFS recognises them; the record encoding around them is our own (see
// package editlog).
package op

// Code identifies an op type. The values are part of the edit-log format.
type Code int8

// Opcodes, numbered as Hadoop's FSEditLogOpCodes. Part of the on-disk format.
const (
	CodeAdd              Code = 0  // OP_ADD: create (or overwrite) a file, under construction
	CodeRenameOld        Code = 1  // OP_RENAME_OLD: rename without options
	CodeDelete           Code = 2  // OP_DELETE
	CodeMkdir            Code = 3  // OP_MKDIR: one directory
	CodeSetReplication   Code = 4  // OP_SET_REPLICATION
	CodeSetPermissions   Code = 7  // OP_SET_PERMISSIONS
	CodeSetOwner         Code = 8  // OP_SET_OWNER
	CodeClose            Code = 9  // OP_CLOSE: file complete, lease released
	CodeTimes            Code = 13 // OP_TIMES
	CodeSetQuota         Code = 14 // OP_SET_QUOTA
	CodeRename           Code = 15 // OP_RENAME: rename2 with options
	CodeConcat           Code = 16 // OP_CONCAT_DELETE
	CodeReassignLease    Code = 22 // OP_REASSIGN_LEASE
	CodeEndLogSegment    Code = 23 // OP_END_LOG_SEGMENT
	CodeStartLogSegment  Code = 24 // OP_START_LOG_SEGMENT
	CodeUpdateBlocks     Code = 25 // OP_UPDATE_BLOCKS
	CodeCreateSnapshot   Code = 26 // OP_CREATE_SNAPSHOT (layout version 5)
	CodeDeleteSnapshot   Code = 27 // OP_DELETE_SNAPSHOT (layout version 5)
	CodeRenameSnapshot   Code = 28 // OP_RENAME_SNAPSHOT (layout version 5)
	CodeAllowSnapshot    Code = 29 // OP_ALLOW_SNAPSHOT
	CodeDisallowSnapshot Code = 30 // OP_DISALLOW_SNAPSHOT
	CodeSetGenstamp      Code = 31 // OP_SET_GENSTAMP_V2
	CodeAllocateBlockID  Code = 32 // OP_ALLOCATE_BLOCK_ID
	CodeAddBlock         Code = 33 // OP_ADD_BLOCK
	CodeSetACL           Code = 40 // OP_SET_ACL: replace an inode's ACL
	CodeSetXAttr         Code = 43 // OP_SET_XATTR: set extended attributes
	CodeRemoveXAttr      Code = 44 // OP_REMOVE_XATTR
	CodeSetStoragePolicy Code = 45 // OP_SET_STORAGE_POLICY
	CodeTruncate         Code = 46 // OP_TRUNCATE
	CodeAppend           Code = 47 // OP_APPEND

	CodeGetDelegationToken    Code = 18 // OP_GET_DELEGATION_TOKEN (layout version 4)
	CodeRenewDelegationToken  Code = 19 // OP_RENEW_DELEGATION_TOKEN (layout version 4)
	CodeCancelDelegationToken Code = 20 // OP_CANCEL_DELEGATION_TOKEN (layout version 4)
	CodeUpdateMasterKey       Code = 21 // OP_UPDATE_MASTER_KEY (layout version 4)
)

// Op is one namespace mutation. The concrete types below are the only
// implementations.
type Op interface {
	Code() Code
}

// Perm is an inode's owner, group and permission bits (the low 16 bits of an
// FsPermission: 0o7777 plus nothing else).
type Perm struct {
	User  string
	Group string
	Mode  uint16
}

// RPCID names the client call that caused an op: the client's 16-byte id
// and its call id, as Hadoop's edit log records them for the calls its
// retry cache protects. A standby, a restarted NameNode and the Backup Node
// rebuild their retry caches from these, so that a client retrying a create
// or a delete after a failover gets the first answer instead of a second
// execution. The zero value (no client id) means "not from a client call".
type RPCID struct {
	ClientID []byte
	CallID   int32
}

// Valid reports whether the id names a call.
func (r RPCID) Valid() bool { return len(r.ClientID) > 0 }

// WithRPC is implemented by the ops that carry the RPCID of their call: Add,
// Append, Delete, RenameOld, Rename, Concat, Truncate, UpdateBlocks,
// SetXAttr and RemoveXAttr.
type WithRPC interface {
	Op
	RPCIDPtr() *RPCID
}

// Block is one block of a file as the namespace knows it.
type Block struct {
	ID       int64
	NumBytes int64
	GenStamp int64
}

// Add creates the file Path (InodeID new) under construction for ClientName.
// With Overwrite an existing file at Path is deleted first (its blocks freed).
type Add struct {
	InodeID       uint64
	Path          string
	Replication   uint16
	Mtime         int64
	Atime         int64
	BlockSize     int64
	Perm          Perm
	ClientName    string
	ClientMachine string
	Overwrite     bool
	RPC           RPCID
}

// Mkdir creates one directory; its parent exists.
type Mkdir struct {
	InodeID uint64
	Path    string
	Mtime   int64
	Perm    Perm
}

// Delete removes Path and everything below it; the parent's mtime becomes Mtime.
type Delete struct {
	Path  string
	Mtime int64
	RPC   RPCID
}

// RenameOld moves Src to exactly Dst (Dst does not exist).
type RenameOld struct {
	Src   string
	Dst   string
	Mtime int64
	RPC   RPCID
}

// Rename moves Src to exactly Dst; with Overwrite an existing Dst (file or empty
// directory) is removed first.
type Rename struct {
	Src       string
	Dst       string
	Mtime     int64
	Overwrite bool
	RPC       RPCID
}

// SetReplication sets a file's replication factor.
type SetReplication struct {
	Path        string
	Replication uint16
}

// SetPermissions sets an inode's permission bits.
type SetPermissions struct {
	Path string
	Mode uint16
}

// SetOwner sets an inode's owner and/or group; an empty string leaves it unchanged.
type SetOwner struct {
	Path  string
	User  string
	Group string
}

// Times sets mtime and atime; -1 leaves a value unchanged.
type Times struct {
	Path  string
	Mtime int64
	Atime int64
}

// Quota values with a special meaning (Hadoop's HdfsConstants).
const (
	QuotaDontSet int64 = 1<<63 - 1 // leave this quota unchanged
	QuotaReset   int64 = -1        // clear the quota
)

// SetQuota sets a directory's namespace and storage-space quotas.
type SetQuota struct {
	Path    string
	NsQuota int64
	DsQuota int64
}

// Concat appends the blocks of Srcs, in order, to Target and deletes Srcs.
type Concat struct {
	Target string
	Srcs   []string
	Mtime  int64
	RPC    RPCID
}

// ReassignLease moves the lease on Path from Holder to NewHolder.
type ReassignLease struct {
	Holder    string
	Path      string
	NewHolder string
}

// StartLogSegment opens every segment; EndLogSegment closes every finalized one.
type StartLogSegment struct{}

// EndLogSegment is the last record of a finalized segment.
type EndLogSegment struct{}

// UpdateBlocks replaces the block list of the under-construction file Path.
type UpdateBlocks struct {
	Path   string
	Blocks []Block
	RPC    RPCID
}

// SetGenstamp records the newest generation stamp handed out.
type SetGenstamp struct {
	GenStamp int64
}

// AllocateBlockID records the newest block id handed out.
type AllocateBlockID struct {
	BlockID int64
}

// AddBlock appends Last to the under-construction file Path; Penultimate, when
// set, is the previous last block with its final length.
type AddBlock struct {
	Path        string
	Penultimate *Block
	Last        Block
}

// Close completes the file Path with its final block list and releases its lease.
type Close struct {
	Path   string
	Mtime  int64
	Atime  int64
	Blocks []Block
}

// Append reopens the closed file Path for ClientName. Without NewBlock a partial
// last block is reopened; with NewBlock the next write starts a new block.
type Append struct {
	Path          string
	ClientName    string
	ClientMachine string
	NewBlock      bool
	RPC           RPCID
}

// Truncate cuts Path to NewLength. When the cut falls inside a block, the file stays
// under construction for ClientName and TruncateBlock is the block being recovered
// (with its new generation stamp and length).
type Truncate struct {
	Path          string
	ClientName    string
	ClientMachine string
	NewLength     int64
	Mtime         int64
	TruncateBlock *Block
	RPC           RPCID
}

// DelegationTokenID is a delegation token's identifier (Hadoop's
// AbstractDelegationTokenIdentifier): who owns it, who may renew it, the
// real user of a proxy, when it was issued and its last possible expiry
// (ms), its sequence number and the master key that signs it.
type DelegationTokenID struct {
	Owner, Renewer, RealUser string
	IssueDate, MaxDate       int64
	SequenceNumber           int32
	MasterKeyID              int32
}

// GetDelegationToken records a token issued, valid until Expiry (ms).
type GetDelegationToken struct {
	ID     DelegationTokenID
	Expiry int64
}

// RenewDelegationToken records a token's new expiry (ms).
type RenewDelegationToken struct {
	ID     DelegationTokenID
	Expiry int64
}

// CancelDelegationToken records a token cancelled.
type CancelDelegationToken struct {
	ID DelegationTokenID
}

// UpdateMasterKey records a new master key of the delegation-token secret
// manager: its id, expiry (ms) and secret. It becomes the current key;
// keys that expired before it was made are forgotten.
type UpdateMasterKey struct {
	KeyID  int32
	Expiry int64
	Secret []byte
}

func (*GetDelegationToken) Code() Code    { return CodeGetDelegationToken }
func (*RenewDelegationToken) Code() Code  { return CodeRenewDelegationToken }
func (*CancelDelegationToken) Code() Code { return CodeCancelDelegationToken }
func (*UpdateMasterKey) Code() Code       { return CodeUpdateMasterKey }

// XAttr namespaces, numbered as Hadoop's XAttr.NameSpace (and
// XAttrNamespaceProto). Part of the on-disk formats.
const (
	XAttrUser     uint8 = 0
	XAttrTrusted  uint8 = 1
	XAttrSecurity uint8 = 2
	XAttrSystem   uint8 = 3
	XAttrRaw      uint8 = 4
)

// XAttr is one extended attribute: its namespace, its name within the
// namespace (without the "user." prefix) and its value (nil: none).
type XAttr struct {
	NS    uint8
	Name  string
	Value []byte
}

// SetXAttr sets the extended attributes XAttrs of Path, replacing
// attributes of the same namespace and name and adding the others.
type SetXAttr struct {
	Path   string
	XAttrs []XAttr
	RPC    RPCID
}

// RemoveXAttr removes the named extended attributes of Path (the values
// are not used).
type RemoveXAttr struct {
	Path   string
	XAttrs []XAttr
	RPC    RPCID
}

// AllowSnapshot makes the directory Path snapshottable.
type AllowSnapshot struct {
	Path string
}

// DisallowSnapshot makes the directory Path not snapshottable.
type DisallowSnapshot struct {
	Path string
}

// CreateSnapshot takes the snapshot Name of the snapshottable directory
// Root at Mtime (the snapshot's time and the directory's new mtime). The
// snapshot's id is the tree's snapshot counter plus one: ids are not
// recorded, they follow from the order of the ops.
type CreateSnapshot struct {
	Root  string
	Name  string
	Mtime int64
	RPC   RPCID
}

// DeleteSnapshot deletes the snapshot Name of Root at Mtime.
type DeleteSnapshot struct {
	Root  string
	Name  string
	Mtime int64
	RPC   RPCID
}

// RenameSnapshot renames the snapshot OldName of Root to NewName at Mtime.
type RenameSnapshot struct {
	Root    string
	OldName string
	NewName string
	Mtime   int64
	RPC     RPCID
}

// Storage policy id meaning "none set on this inode: inherit the parent's"
// (Hadoop's BLOCK_STORAGE_POLICY_ID_UNSPECIFIED).
const StoragePolicyUnspecified uint8 = 0

// SetStoragePolicy sets the storage policy of Path; PolicyID
// StoragePolicyUnspecified unsets it.
type SetStoragePolicy struct {
	Path     string
	PolicyID uint8
}

// ACL entry scopes and types, numbered as Hadoop's AclEntryScope and
// AclEntryType (and acl.proto). Part of the on-disk formats.
const (
	ACLAccess  uint8 = 0
	ACLDefault uint8 = 1

	ACLUser  uint8 = 0
	ACLGroup uint8 = 1
	ACLMask  uint8 = 2
	ACLOther uint8 = 3
)

// ACLEntry is one ACL entry; Perm holds rwx in its low 3 bits and Name is
// empty for the unnamed entries (owner, owning group, mask, other).
type ACLEntry struct {
	Scope uint8
	Type  uint8
	Perm  uint8
	Name  string
}

// SetACL replaces the ACL of Path by Entries, a full, valid, sorted ACL
// (with the owner, group and other entries), or an empty list to remove
// it. Applying it also sets the inode's permission bits from the ACL: the
// owner and other entries, and the mask (or the group entry when there
// is no mask) as the group bits.
type SetACL struct {
	Path    string
	Entries []ACLEntry
}

func (*Add) Code() Code              { return CodeAdd }
func (*Mkdir) Code() Code            { return CodeMkdir }
func (*Delete) Code() Code           { return CodeDelete }
func (*RenameOld) Code() Code        { return CodeRenameOld }
func (*Rename) Code() Code           { return CodeRename }
func (*SetReplication) Code() Code   { return CodeSetReplication }
func (*SetPermissions) Code() Code   { return CodeSetPermissions }
func (*SetOwner) Code() Code         { return CodeSetOwner }
func (*Times) Code() Code            { return CodeTimes }
func (*SetQuota) Code() Code         { return CodeSetQuota }
func (*Concat) Code() Code           { return CodeConcat }
func (*ReassignLease) Code() Code    { return CodeReassignLease }
func (*StartLogSegment) Code() Code  { return CodeStartLogSegment }
func (*EndLogSegment) Code() Code    { return CodeEndLogSegment }
func (*UpdateBlocks) Code() Code     { return CodeUpdateBlocks }
func (*SetGenstamp) Code() Code      { return CodeSetGenstamp }
func (*AllocateBlockID) Code() Code  { return CodeAllocateBlockID }
func (*AddBlock) Code() Code         { return CodeAddBlock }
func (*Close) Code() Code            { return CodeClose }
func (*Append) Code() Code           { return CodeAppend }
func (*Truncate) Code() Code         { return CodeTruncate }
func (*SetXAttr) Code() Code         { return CodeSetXAttr }
func (*RemoveXAttr) Code() Code      { return CodeRemoveXAttr }
func (*SetStoragePolicy) Code() Code { return CodeSetStoragePolicy }
func (*SetACL) Code() Code           { return CodeSetACL }
func (*AllowSnapshot) Code() Code    { return CodeAllowSnapshot }
func (*DisallowSnapshot) Code() Code { return CodeDisallowSnapshot }
func (*CreateSnapshot) Code() Code   { return CodeCreateSnapshot }
func (*DeleteSnapshot) Code() Code   { return CodeDeleteSnapshot }
func (*RenameSnapshot) Code() Code   { return CodeRenameSnapshot }

func (o *Add) RPCIDPtr() *RPCID          { return &o.RPC }
func (o *Delete) RPCIDPtr() *RPCID       { return &o.RPC }
func (o *RenameOld) RPCIDPtr() *RPCID    { return &o.RPC }
func (o *Rename) RPCIDPtr() *RPCID       { return &o.RPC }
func (o *Concat) RPCIDPtr() *RPCID       { return &o.RPC }
func (o *UpdateBlocks) RPCIDPtr() *RPCID { return &o.RPC }
func (o *Append) RPCIDPtr() *RPCID       { return &o.RPC }
func (o *Truncate) RPCIDPtr() *RPCID     { return &o.RPC }
func (o *SetXAttr) RPCIDPtr() *RPCID     { return &o.RPC }
func (o *RemoveXAttr) RPCIDPtr() *RPCID  { return &o.RPC }

func (o *CreateSnapshot) RPCIDPtr() *RPCID { return &o.RPC }
func (o *DeleteSnapshot) RPCIDPtr() *RPCID { return &o.RPC }
func (o *RenameSnapshot) RPCIDPtr() *RPCID { return &o.RPC }

// Since is the edit-log layout version that introduced the opcode (1 for
// the first ones).
func (c Code) Since() int32 {
	switch c {
	case CodeSetACL, CodeSetXAttr, CodeRemoveXAttr, CodeSetStoragePolicy, CodeAllowSnapshot, CodeDisallowSnapshot:
		return 3
	case CodeGetDelegationToken, CodeRenewDelegationToken, CodeCancelDelegationToken, CodeUpdateMasterKey:
		return 4
	case CodeCreateSnapshot, CodeDeleteSnapshot, CodeRenameSnapshot:
		return 5
	}
	return 1
}

// String returns Hadoop's name of the opcode, e.g. "OP_ADD".
func (c Code) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return "OP_INVALID"
}

var codeNames = map[Code]string{
	CodeAdd: "OP_ADD", CodeRenameOld: "OP_RENAME_OLD", CodeDelete: "OP_DELETE",
	CodeMkdir: "OP_MKDIR", CodeSetReplication: "OP_SET_REPLICATION",
	CodeSetPermissions: "OP_SET_PERMISSIONS", CodeSetOwner: "OP_SET_OWNER",
	CodeClose: "OP_CLOSE", CodeTimes: "OP_TIMES", CodeSetQuota: "OP_SET_QUOTA",
	CodeRename: "OP_RENAME", CodeConcat: "OP_CONCAT_DELETE",
	CodeReassignLease: "OP_REASSIGN_LEASE", CodeEndLogSegment: "OP_END_LOG_SEGMENT",
	CodeStartLogSegment: "OP_START_LOG_SEGMENT", CodeUpdateBlocks: "OP_UPDATE_BLOCKS",
	CodeSetGenstamp: "OP_SET_GENSTAMP_V2", CodeAllocateBlockID: "OP_ALLOCATE_BLOCK_ID",
	CodeAddBlock: "OP_ADD_BLOCK", CodeTruncate: "OP_TRUNCATE", CodeAppend: "OP_APPEND",
	CodeSetACL: "OP_SET_ACL", CodeSetXAttr: "OP_SET_XATTR", CodeRemoveXAttr: "OP_REMOVE_XATTR",
	CodeSetStoragePolicy: "OP_SET_STORAGE_POLICY", CodeAllowSnapshot: "OP_ALLOW_SNAPSHOT",
	CodeDisallowSnapshot:   "OP_DISALLOW_SNAPSHOT",
	CodeGetDelegationToken: "OP_GET_DELEGATION_TOKEN", CodeRenewDelegationToken: "OP_RENEW_DELEGATION_TOKEN",
	CodeCancelDelegationToken: "OP_CANCEL_DELEGATION_TOKEN", CodeUpdateMasterKey: "OP_UPDATE_MASTER_KEY",
	CodeCreateSnapshot: "OP_CREATE_SNAPSHOT", CodeDeleteSnapshot: "OP_DELETE_SNAPSHOT",
	CodeRenameSnapshot: "OP_RENAME_SNAPSHOT",
}
