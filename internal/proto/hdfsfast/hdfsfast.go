// Package hdfsfast decodes the NameNode answers a client reads most — the
// file status of getFileInfo and create, and getListing's pages of them —
// without the generated code's reflection and its allocation per optional
// field: one allocation holds the message and all of its scalars (a
// listing's statuses: one array of them, their paths slices of one copy of
// the answer, their owners and groups shared strings). Importing the
// package registers the decoders with ipc.RegisterDecoder.
//
// A decoder takes the fields a NameNode fills in a status (type, path,
// length, permission, owner, group, times, replication, block size, file
// id, children, storage policy, flags), each with its proto wire type, and
// gives up — leaving the message to proto.Unmarshal — on anything else: a
// field it does not take (symlink, locations, encryption, erasure coding,
// namespace, unknown fields), a file type outside the enum, a permission
// sent twice (which proto merges), a missing required field, a malformed
// varint or length. What it decodes equals what proto.Unmarshal decodes
// (FuzzFileStatus compares the two on every input).
package hdfsfast

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

func init() {
	ipc.RegisterDecoder((&hdfs.GetFileInfoResponseProto{}).ProtoReflect().Descriptor().FullName(), decodeGetFileInfo)
	ipc.RegisterDecoder((&hdfs.GetListingResponseProto{}).ProtoReflect().Descriptor().FullName(), decodeGetListing)
	ipc.RegisterDecoder((&hdfs.CreateResponseProto{}).ProtoReflect().Descriptor().FullName(), decodeCreate)
}

// decodeGetFileInfo decodes a GetFileInfoResponseProto: an optional status
// (field 1).
func decodeGetFileInfo(b []byte, m proto.Message) bool {
	resp, ok := m.(*hdfs.GetFileInfoResponseProto)
	return ok && statusAnswer(b, func(st *hdfs.HdfsFileStatusProto) {
		resp.Reset()
		resp.Fs = st
	})
}

// decodeCreate decodes a CreateResponseProto: an optional status (field 1),
// the new file's.
func decodeCreate(b []byte, m proto.Message) bool {
	resp, ok := m.(*hdfs.CreateResponseProto)
	return ok && statusAnswer(b, func(st *hdfs.HdfsFileStatusProto) {
		resp.Reset()
		resp.Fs = st
	})
}

// statusAnswer decodes an answer made of one optional status, field 1,
// and hands it (nil when absent) to set; false, set not called, for
// anything else.
func statusAnswer(b []byte, set func(*hdfs.HdfsFileStatusProto)) bool {
	v, present, ok := onlyField1(b)
	if !ok {
		return false
	}
	var st *hdfs.HdfsFileStatusProto
	if present {
		if st, ok = DecodeFileStatus(v); !ok {
			return false
		}
	}
	set(st)
	return true
}

// onlyField1 reads an answer made of one optional message field, number 1:
// its bytes and whether it is there; not ok for anything else, a second
// occurrence included (proto merges it into the first).
func onlyField1(b []byte) (v []byte, present, ok bool) {
	if len(b) == 0 {
		return nil, false, true
	}
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || num != 1 || typ != protowire.BytesType {
		return nil, false, false
	}
	v, k := protowire.ConsumeBytes(b[n:])
	if k < 0 || n+k != len(b) {
		return nil, false, false
	}
	return v, true, true
}

// statusBox is a decoded status with room for its optional fields' values.
type statusBox struct {
	st       hdfs.HdfsFileStatusProto
	perm     hdfs.FsPermissionProto
	ft       hdfs.HdfsFileStatusProto_FileType
	mode     uint32
	repl     uint32
	policy   uint32
	flags    uint32
	children int32
	length   uint64
	mtime    uint64
	atime    uint64
	bsize    uint64
	id       uint64
	owner    string
	group    string
}

// The status's fields a decoder takes, by number.
const (
	fType     = 1
	fPath     = 2
	fLength   = 3
	fPerm     = 4
	fOwner    = 5
	fGroup    = 6
	fMtime    = 7
	fAtime    = 8
	fRepl     = 10
	fBsize    = 11
	fID       = 13
	fChildren = 14
	fPolicy   = 16
	fFlags    = 18

	required = 1<<fType | 1<<fPath | 1<<fLength | 1<<fPerm | 1<<fOwner | 1<<fGroup | 1<<fMtime | 1<<fAtime
)

// DecodeFileStatus decodes an HdfsFileStatusProto as proto.Unmarshal
// would, or reports false for a status it leaves to proto.Unmarshal (see
// the package doc).
func DecodeFileStatus(b []byte) (*hdfs.HdfsFileStatusProto, bool) {
	x := new(statusBox)
	var d decoder
	if !d.status(x, b, false) {
		return nil, false
	}
	return &x.st, true
}

// decoder decodes the statuses of one answer; their owners and groups,
// mostly the same few, share strings.
type decoder struct {
	owner, group string
}

// intern returns v as a string, last itself when equal.
func intern(last *string, v []byte) string {
	if string(v) != *last {
		*last = string(v)
	}
	return *last
}

// status decodes b into x. With alias, the path is a slice of b (which the
// caller owns) instead of a copy.
func (d *decoder) status(x *statusBox, b []byte, alias bool) bool {
	var seen uint32
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		switch num {
		case fType, fLength, fMtime, fAtime, fRepl, fBsize, fID, fChildren, fPolicy, fFlags:
			if typ != protowire.VarintType {
				return false
			}
			v, k := protowire.ConsumeVarint(b)
			if k < 0 {
				return false
			}
			b = b[k:]
			switch num {
			case fType:
				if v < uint64(hdfs.HdfsFileStatusProto_IS_DIR) || v > uint64(hdfs.HdfsFileStatusProto_IS_SYMLINK) {
					return false // proto keeps it as an unknown field
				}
				x.ft = hdfs.HdfsFileStatusProto_FileType(v)
			case fLength:
				x.length = v
			case fMtime:
				x.mtime = v
			case fAtime:
				x.atime = v
			case fRepl:
				x.repl = uint32(v)
			case fBsize:
				x.bsize = v
			case fID:
				x.id = v
			case fChildren:
				x.children = int32(v)
			case fPolicy:
				x.policy = uint32(v)
			case fFlags:
				x.flags = uint32(v)
			}
		case fPath, fPerm, fOwner, fGroup:
			if typ != protowire.BytesType {
				return false
			}
			v, k := protowire.ConsumeBytes(b)
			if k < 0 {
				return false
			}
			b = b[k:]
			switch num {
			case fPath:
				if alias {
					x.st.Path = v[:len(v):len(v)]
				} else {
					x.st.Path = append([]byte{}, v...)
				}
			case fPerm:
				if seen&(1<<fPerm) != 0 {
					return false // a second one is merged into the first
				}
				mode, ok := decodePermission(v)
				if !ok {
					return false
				}
				x.mode = mode
			case fOwner:
				x.owner = intern(&d.owner, v)
			case fGroup:
				x.group = intern(&d.group, v)
			}
		default:
			return false
		}
		seen |= 1 << num
	}
	if seen&required != required {
		return false
	}
	st := &x.st
	st.FileType = &x.ft
	st.Length = &x.length
	x.perm.Perm = &x.mode
	st.Permission = &x.perm
	st.Owner = &x.owner
	st.Group = &x.group
	st.ModificationTime = &x.mtime
	st.AccessTime = &x.atime
	has := func(num int) bool { return seen&(1<<num) != 0 }
	if has(fRepl) {
		st.BlockReplication = &x.repl
	}
	if has(fBsize) {
		st.Blocksize = &x.bsize
	}
	if has(fID) {
		st.FileId = &x.id
	}
	if has(fChildren) {
		st.ChildrenNum = &x.children
	}
	if has(fPolicy) {
		st.StoragePolicy = &x.policy
	}
	if has(fFlags) {
		st.Flags = &x.flags
	}
	return true
}

// decodeGetListing decodes a GetListingResponseProto: an optional
// DirectoryListingProto (field 1), whose statuses (field 1, repeated) are
// decoded into one array of boxes, their paths slices of one copy of the
// answer, and whose remainingEntries (field 2) is required.
func decodeGetListing(b []byte, m proto.Message) bool {
	resp, ok := m.(*hdfs.GetListingResponseProto)
	if !ok {
		return false
	}
	v, present, ok := onlyField1(b)
	if !ok {
		return false
	}
	var list *hdfs.DirectoryListingProto
	if present {
		if list, ok = decodeListing(v); !ok {
			return false
		}
	}
	resp.Reset()
	resp.DirList = list
	return true
}

// minStatus is the fewest bytes a status with its required fields takes
// (eight of them, a tag and a byte each, the permission two more), length
// prefix included: the count of a listing's statuses, which the decoder
// allocates for before it decodes them, is bounded by the answer's size.
const minStatus = 19

type listingBox struct {
	list      hdfs.DirectoryListingProto
	remaining uint32
}

func decodeListing(b []byte) (*hdfs.DirectoryListingProto, bool) {
	// Count the statuses first, so that they take one allocation.
	count, hasRemaining := 0, false
	for p := b; len(p) > 0; {
		num, typ, n := protowire.ConsumeTag(p)
		if n < 0 {
			return nil, false
		}
		k := protowire.ConsumeFieldValue(num, typ, p[n:])
		if k < 0 {
			return nil, false
		}
		switch {
		case num == 1 && typ == protowire.BytesType:
			if k < minStatus {
				return nil, false // leaves it to proto.Unmarshal, which refuses it
			}
			count++
		case num == 2 && typ == protowire.VarintType:
			hasRemaining = true
		default:
			return nil, false
		}
		p = p[n+k:]
	}
	if !hasRemaining {
		return nil, false
	}
	b = append([]byte(nil), b...) // the paths are slices of this copy
	boxes := make([]statusBox, count)
	x := new(listingBox)
	if count > 0 {
		x.list.PartialListing = make([]*hdfs.HdfsFileStatusProto, count)
	}
	var d decoder
	i := 0
	for len(b) > 0 {
		num, _, n := protowire.ConsumeTag(b)
		b = b[n:]
		if num == 1 {
			v, k := protowire.ConsumeBytes(b)
			b = b[k:]
			if !d.status(&boxes[i], v, true) {
				return nil, false
			}
			x.list.PartialListing[i] = &boxes[i].st
			i++
			continue
		}
		v, k := protowire.ConsumeVarint(b)
		b = b[k:]
		x.remaining = uint32(v)
	}
	x.list.RemainingEntries = &x.remaining
	return &x.list, true
}

// decodePermission decodes an FsPermissionProto: its one required field,
// perm (1), the last occurrence winning.
func decodePermission(b []byte) (uint32, bool) {
	var mode uint32
	found := false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num != 1 || typ != protowire.VarintType {
			return 0, false
		}
		v, k := protowire.ConsumeVarint(b[n:])
		if k < 0 {
			return 0, false
		}
		b = b[n+k:]
		mode, found = uint32(v), true
	}
	return mode, found
}
