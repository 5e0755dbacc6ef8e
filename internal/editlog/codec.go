package editlog

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// Format constants. Part of the on-disk format (see the package doc).
const (
	// SegmentMagic opens every segment file.
	SegmentMagic = "HDEL"
	// LayoutVersion is the segment layout this package writes. It only grows.
	// Version 2 added the rpc field to the ops that carry the call that
	// caused them (op.WithRPC); version 3 added OP_SET_ACL, OP_SET_XATTR,
	// OP_REMOVE_XATTR, OP_SET_STORAGE_POLICY, OP_ALLOW_SNAPSHOT and
	// OP_DISALLOW_SNAPSHOT; version 4 the delegation-token ops
	// (OP_GET_DELEGATION_TOKEN 18, OP_RENEW_DELEGATION_TOKEN 19,
	// OP_CANCEL_DELEGATION_TOKEN 20, OP_UPDATE_MASTER_KEY 21); version 5
	// the snapshot ops (OP_CREATE_SNAPSHOT 26, OP_DELETE_SNAPSHOT 27,
	// OP_RENAME_SNAPSHOT 28); version 6 OP_SET_QUOTA_BY_STORAGETYPE (48).
	// Older segments are still read; a new opcode in an older segment is
	// corruption.
	LayoutVersion int32 = 6
	// SegmentHeaderSize is len(SegmentMagic) plus the int32 layout version.
	SegmentHeaderSize = 8
	// RecordHeaderSize is opcode (1) + txid (8) + body length (4).
	RecordHeaderSize = 13
	// RecordTrailerSize is the CRC32C.
	RecordTrailerSize = 4
	// MaxRecordBody bounds a record's body; a longer length field is corruption.
	MaxRecordBody = 1 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// AppendSegmentHeader appends the segment file header to buf.
func AppendSegmentHeader(buf []byte) []byte {
	buf = append(buf, SegmentMagic...)
	return binary.BigEndian.AppendUint32(buf, uint32(LayoutVersion))
}

// ReadSegmentHeader reads and checks a segment header. A file shorter than the
// header is a *TornRecordError at offset 0 (an empty segment); a bad magic or
// an unknown layout version is a *CorruptionError.
func ReadSegmentHeader(r io.Reader, file string) (version int32, err error) {
	var h [SegmentHeaderSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return 0, &TornRecordError{File: file, Offset: 0}
		}
		return 0, err
	}
	if string(h[:4]) != SegmentMagic {
		return 0, &CorruptionError{File: file, Offset: 0, Reason: fmt.Sprintf("bad segment magic %q", h[:4])}
	}
	v := int32(binary.BigEndian.Uint32(h[4:]))
	if v < 1 || v > LayoutVersion {
		return 0, &CorruptionError{File: file, Offset: 0, Reason: fmt.Sprintf("unsupported layout version %d (this build reads 1..%d)", v, LayoutVersion)}
	}
	return v, nil
}

// EncodeRecord appends the record for txid and o to buf and returns the
// extended buffer. It allocates only when buf must grow. An op whose body
// would exceed MaxRecordBody (a concat of very many long paths, say) is an
// error wrapping ErrRecordTooLarge, and buf comes back as it was. It panics
// if o is not one of the op package's types, a programming error.
func EncodeRecord(buf []byte, txid int64, o op.Op) ([]byte, error) {
	start := len(buf)
	buf = append(buf, byte(o.Code()))
	buf = binary.BigEndian.AppendUint64(buf, uint64(txid))
	buf = append(buf, 0, 0, 0, 0) // length, patched below
	bodyStart := len(buf)
	buf = appendBody(buf, o)
	n := len(buf) - bodyStart
	if n > MaxRecordBody {
		return buf[:start], fmt.Errorf("%w: %v record body of %d bytes exceeds %d", ErrRecordTooLarge, o.Code(), n, MaxRecordBody)
	}
	binary.BigEndian.PutUint32(buf[bodyStart-4:], uint32(n))
	crc := crc32.Checksum(buf[start:], castagnoli)
	return binary.BigEndian.AppendUint32(buf, crc), nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendDTID(b []byte, id op.DelegationTokenID) []byte {
	b = appendString(b, id.Owner)
	b = appendString(b, id.Renewer)
	b = appendString(b, id.RealUser)
	b = binary.AppendVarint(b, id.IssueDate)
	b = binary.AppendVarint(b, id.MaxDate)
	b = binary.AppendVarint(b, int64(id.SequenceNumber))
	return binary.AppendVarint(b, int64(id.MasterKeyID))
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendPerm(b []byte, p op.Perm) []byte {
	b = appendString(b, p.User)
	b = appendString(b, p.Group)
	return binary.AppendUvarint(b, uint64(p.Mode))
}

func appendBlock(b []byte, blk op.Block) []byte {
	b = binary.AppendVarint(b, blk.ID)
	b = binary.AppendVarint(b, blk.NumBytes)
	return binary.AppendVarint(b, blk.GenStamp)
}

func appendBlocks(b []byte, blks []op.Block) []byte {
	b = binary.AppendUvarint(b, uint64(len(blks)))
	for _, blk := range blks {
		b = appendBlock(b, blk)
	}
	return b
}

func appendOptBlock(b []byte, blk *op.Block) []byte {
	if blk == nil {
		return append(b, 0)
	}
	return appendBlock(append(b, 1), *blk)
}

func appendXAttrs(b []byte, xs []op.XAttr) []byte {
	b = binary.AppendUvarint(b, uint64(len(xs)))
	for _, x := range xs {
		b = binary.AppendUvarint(b, uint64(x.NS))
		b = appendString(b, x.Name)
		b = appendBool(b, x.Value != nil)
		if x.Value != nil {
			b = binary.AppendUvarint(b, uint64(len(x.Value)))
			b = append(b, x.Value...)
		}
	}
	return b
}

// appendBody appends o's fields in the order the package doc lists them.
func appendBody(b []byte, o op.Op) []byte {
	switch o := o.(type) {
	case *op.Add:
		b = binary.AppendUvarint(b, o.InodeID)
		b = appendString(b, o.Path)
		b = binary.AppendUvarint(b, uint64(o.Replication))
		b = binary.AppendVarint(b, o.Mtime)
		b = binary.AppendVarint(b, o.Atime)
		b = binary.AppendVarint(b, o.BlockSize)
		b = appendPerm(b, o.Perm)
		b = appendString(b, o.ClientName)
		b = appendString(b, o.ClientMachine)
		b = appendBool(b, o.Overwrite)
	case *op.Mkdir:
		b = binary.AppendUvarint(b, o.InodeID)
		b = appendString(b, o.Path)
		b = binary.AppendVarint(b, o.Mtime)
		b = appendPerm(b, o.Perm)
	case *op.Delete:
		b = appendString(b, o.Path)
		b = binary.AppendVarint(b, o.Mtime)
	case *op.RenameOld:
		b = appendString(b, o.Src)
		b = appendString(b, o.Dst)
		b = binary.AppendVarint(b, o.Mtime)
	case *op.Rename:
		b = appendString(b, o.Src)
		b = appendString(b, o.Dst)
		b = binary.AppendVarint(b, o.Mtime)
		b = appendBool(b, o.Overwrite)
	case *op.SetReplication:
		b = appendString(b, o.Path)
		b = binary.AppendUvarint(b, uint64(o.Replication))
	case *op.SetPermissions:
		b = appendString(b, o.Path)
		b = binary.AppendUvarint(b, uint64(o.Mode))
	case *op.GetDelegationToken:
		b = appendDTID(b, o.ID)
		b = binary.AppendVarint(b, o.Expiry)
	case *op.RenewDelegationToken:
		b = appendDTID(b, o.ID)
		b = binary.AppendVarint(b, o.Expiry)
	case *op.CancelDelegationToken:
		b = appendDTID(b, o.ID)
	case *op.UpdateMasterKey:
		b = binary.AppendVarint(b, int64(o.KeyID))
		b = binary.AppendVarint(b, o.Expiry)
		b = appendString(b, string(o.Secret))
	case *op.SetOwner:
		b = appendString(b, o.Path)
		b = appendString(b, o.User)
		b = appendString(b, o.Group)
	case *op.Times:
		b = appendString(b, o.Path)
		b = binary.AppendVarint(b, o.Mtime)
		b = binary.AppendVarint(b, o.Atime)
	case *op.SetQuota:
		b = appendString(b, o.Path)
		b = binary.AppendVarint(b, o.NsQuota)
		b = binary.AppendVarint(b, o.DsQuota)
	case *op.Concat:
		b = appendString(b, o.Target)
		b = binary.AppendUvarint(b, uint64(len(o.Srcs)))
		for _, s := range o.Srcs {
			b = appendString(b, s)
		}
		b = binary.AppendVarint(b, o.Mtime)
	case *op.ReassignLease:
		b = appendString(b, o.Holder)
		b = appendString(b, o.Path)
		b = appendString(b, o.NewHolder)
	case *op.StartLogSegment, *op.EndLogSegment:
	case *op.UpdateBlocks:
		b = appendString(b, o.Path)
		b = appendBlocks(b, o.Blocks)
	case *op.SetGenstamp:
		b = binary.AppendVarint(b, o.GenStamp)
	case *op.AllocateBlockID:
		b = binary.AppendVarint(b, o.BlockID)
	case *op.AddBlock:
		b = appendString(b, o.Path)
		b = appendOptBlock(b, o.Penultimate)
		b = appendBlock(b, o.Last)
	case *op.Close:
		b = appendString(b, o.Path)
		b = binary.AppendVarint(b, o.Mtime)
		b = binary.AppendVarint(b, o.Atime)
		b = appendBlocks(b, o.Blocks)
	case *op.Append:
		b = appendString(b, o.Path)
		b = appendString(b, o.ClientName)
		b = appendString(b, o.ClientMachine)
		b = appendBool(b, o.NewBlock)
	case *op.Truncate:
		b = appendString(b, o.Path)
		b = appendString(b, o.ClientName)
		b = appendString(b, o.ClientMachine)
		b = binary.AppendVarint(b, o.NewLength)
		b = binary.AppendVarint(b, o.Mtime)
		b = appendOptBlock(b, o.TruncateBlock)
	case *op.SetXAttr:
		b = appendString(b, o.Path)
		b = appendXAttrs(b, o.XAttrs)
	case *op.RemoveXAttr:
		b = appendString(b, o.Path)
		b = appendXAttrs(b, o.XAttrs)
	case *op.SetStoragePolicy:
		b = appendString(b, o.Path)
		b = binary.AppendUvarint(b, uint64(o.PolicyID))
	case *op.SetQuotaByStorageType:
		b = appendString(b, o.Path)
		b = binary.AppendUvarint(b, uint64(o.StorageType))
		b = binary.AppendVarint(b, o.DsQuota)
	case *op.AllowSnapshot:
		b = appendString(b, o.Path)
	case *op.DisallowSnapshot:
		b = appendString(b, o.Path)
	case *op.CreateSnapshot:
		b = appendString(b, o.Root)
		b = appendString(b, o.Name)
		b = binary.AppendVarint(b, o.Mtime)
	case *op.DeleteSnapshot:
		b = appendString(b, o.Root)
		b = appendString(b, o.Name)
		b = binary.AppendVarint(b, o.Mtime)
	case *op.RenameSnapshot:
		b = appendString(b, o.Root)
		b = appendString(b, o.OldName)
		b = appendString(b, o.NewName)
		b = binary.AppendVarint(b, o.Mtime)
	case *op.SetACL:
		b = appendString(b, o.Path)
		b = binary.AppendUvarint(b, uint64(len(o.Entries)))
		for _, e := range o.Entries {
			b = binary.AppendUvarint(b, uint64(e.Scope))
			b = binary.AppendUvarint(b, uint64(e.Type))
			b = binary.AppendUvarint(b, uint64(e.Perm))
			b = appendString(b, e.Name)
		}
	default:
		panic(fmt.Sprintf("editlog: cannot encode op type %T", o))
	}
	if w, ok := o.(op.WithRPC); ok {
		rpc := w.RPCIDPtr()
		b = binary.AppendUvarint(b, uint64(len(rpc.ClientID)))
		b = append(b, rpc.ClientID...)
		b = binary.AppendVarint(b, int64(rpc.CallID))
	}
	return b
}

// bodyReader decodes fields from a body; the first failure sticks in err.
type bodyReader struct {
	b   []byte
	err error
}

var errShortBody = errors.New("body too short")

func (r *bodyReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

func (r *bodyReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || (n > 1 && r.b[n-1] == 0) {
		r.fail(errors.New("bad or non-minimal unsigned varint"))
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *bodyReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 || (n > 1 && r.b[n-1] == 0) {
		r.fail(errors.New("bad or non-minimal varint"))
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *bodyReader) u16() uint16 {
	v := r.uvarint()
	if v > 0xFFFF {
		r.fail(fmt.Errorf("value %d does not fit 16 bits", v))
		return 0
	}
	return uint16(v)
}

func (r *bodyReader) str() string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)) {
		r.fail(errShortBody)
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *bodyReader) boolean() bool {
	if len(r.b) < 1 {
		r.fail(errShortBody)
		return false
	}
	v := r.b[0]
	r.b = r.b[1:]
	if v > 1 {
		r.fail(fmt.Errorf("bad bool byte %d", v))
	}
	return v == 1
}

func (r *bodyReader) block() op.Block {
	return op.Block{ID: r.varint(), NumBytes: r.varint(), GenStamp: r.varint()}
}

// count reads an element count; every element takes at least minSize bytes,
// so a count the remaining body cannot hold is rejected before allocating.
func (r *bodyReader) count(minSize int) int {
	n := r.uvarint()
	if r.err != nil {
		return 0
	}
	if n > uint64(len(r.b)/minSize) {
		r.fail(fmt.Errorf("count %d exceeds the body", n))
		return 0
	}
	return int(n)
}

func (r *bodyReader) blocks() []op.Block {
	n := r.count(3)
	if n == 0 {
		return nil
	}
	blks := make([]op.Block, n)
	for i := range blks {
		blks[i] = r.block()
	}
	return blks
}

// small reads an unsigned varint no larger than max.
func (r *bodyReader) small(max uint8, what string) uint8 {
	v := r.uvarint()
	if v > uint64(max) {
		r.fail(fmt.Errorf("%s %d out of range", what, v))
		return 0
	}
	return uint8(v)
}

func (r *bodyReader) xattrs() []op.XAttr {
	n := r.count(3)
	if n == 0 {
		return nil
	}
	xs := make([]op.XAttr, n)
	for i := range xs {
		xs[i] = op.XAttr{NS: r.small(op.XAttrRaw, "xattr namespace"), Name: r.str()}
		if r.boolean() {
			v := r.str()
			xs[i].Value = []byte(v)
		}
	}
	return xs
}

func (r *bodyReader) aclEntries() []op.ACLEntry {
	n := r.count(4)
	if n == 0 {
		return nil
	}
	es := make([]op.ACLEntry, n)
	for i := range es {
		es[i] = op.ACLEntry{Scope: r.small(op.ACLDefault, "acl scope"), Type: r.small(op.ACLOther, "acl type"),
			Perm: r.small(7, "acl permission"), Name: r.str()}
	}
	return es
}

func (r *bodyReader) optBlock() *op.Block {
	if !r.boolean() {
		return nil
	}
	b := r.block()
	return &b
}

func (r *bodyReader) i32() int32 {
	v := r.varint()
	if v < -1<<31 || v >= 1<<31 {
		r.fail(fmt.Errorf("%d does not fit 32 bits", v))
	}
	return int32(v)
}

func (r *bodyReader) dtid() op.DelegationTokenID {
	return op.DelegationTokenID{Owner: r.str(), Renewer: r.str(), RealUser: r.str(),
		IssueDate: r.varint(), MaxDate: r.varint(), SequenceNumber: r.i32(), MasterKeyID: r.i32()}
}

func (r *bodyReader) perm() op.Perm {
	return op.Perm{User: r.str(), Group: r.str(), Mode: r.u16()}
}

// decodeBody decodes the body of an op with the given code, written in
// segment layout version. The whole body must be consumed.
func decodeBody(code op.Code, body []byte, version int32) (op.Op, error) {
	r := &bodyReader{b: body}
	var o op.Op
	switch code {
	case op.CodeAdd:
		o = &op.Add{InodeID: r.uvarint(), Path: r.str(), Replication: r.u16(), Mtime: r.varint(),
			Atime: r.varint(), BlockSize: r.varint(), Perm: r.perm(), ClientName: r.str(),
			ClientMachine: r.str(), Overwrite: r.boolean()}
	case op.CodeMkdir:
		o = &op.Mkdir{InodeID: r.uvarint(), Path: r.str(), Mtime: r.varint(), Perm: r.perm()}
	case op.CodeDelete:
		o = &op.Delete{Path: r.str(), Mtime: r.varint()}
	case op.CodeRenameOld:
		o = &op.RenameOld{Src: r.str(), Dst: r.str(), Mtime: r.varint()}
	case op.CodeRename:
		o = &op.Rename{Src: r.str(), Dst: r.str(), Mtime: r.varint(), Overwrite: r.boolean()}
	case op.CodeSetReplication:
		o = &op.SetReplication{Path: r.str(), Replication: r.u16()}
	case op.CodeSetPermissions:
		o = &op.SetPermissions{Path: r.str(), Mode: r.u16()}
	case op.CodeSetOwner:
		o = &op.SetOwner{Path: r.str(), User: r.str(), Group: r.str()}
	case op.CodeGetDelegationToken, op.CodeRenewDelegationToken, op.CodeCancelDelegationToken, op.CodeUpdateMasterKey:
		if version < 4 {
			return nil, fmt.Errorf("%v in a layout version %d segment (it needs 4)", code, version)
		}
		switch code {
		case op.CodeGetDelegationToken:
			o = &op.GetDelegationToken{ID: r.dtid(), Expiry: r.varint()}
		case op.CodeRenewDelegationToken:
			o = &op.RenewDelegationToken{ID: r.dtid(), Expiry: r.varint()}
		case op.CodeCancelDelegationToken:
			o = &op.CancelDelegationToken{ID: r.dtid()}
		default:
			o = &op.UpdateMasterKey{KeyID: r.i32(), Expiry: r.varint(), Secret: []byte(r.str())}
		}
	case op.CodeTimes:
		o = &op.Times{Path: r.str(), Mtime: r.varint(), Atime: r.varint()}
	case op.CodeSetQuota:
		o = &op.SetQuota{Path: r.str(), NsQuota: r.varint(), DsQuota: r.varint()}
	case op.CodeConcat:
		c := &op.Concat{Target: r.str()}
		if n := r.count(1); n > 0 {
			c.Srcs = make([]string, n)
			for i := range c.Srcs {
				c.Srcs[i] = r.str()
			}
		}
		c.Mtime = r.varint()
		o = c
	case op.CodeReassignLease:
		o = &op.ReassignLease{Holder: r.str(), Path: r.str(), NewHolder: r.str()}
	case op.CodeStartLogSegment:
		o = &op.StartLogSegment{}
	case op.CodeEndLogSegment:
		o = &op.EndLogSegment{}
	case op.CodeUpdateBlocks:
		o = &op.UpdateBlocks{Path: r.str(), Blocks: r.blocks()}
	case op.CodeSetGenstamp:
		o = &op.SetGenstamp{GenStamp: r.varint()}
	case op.CodeAllocateBlockID:
		o = &op.AllocateBlockID{BlockID: r.varint()}
	case op.CodeAddBlock:
		o = &op.AddBlock{Path: r.str(), Penultimate: r.optBlock(), Last: r.block()}
	case op.CodeClose:
		o = &op.Close{Path: r.str(), Mtime: r.varint(), Atime: r.varint(), Blocks: r.blocks()}
	case op.CodeAppend:
		o = &op.Append{Path: r.str(), ClientName: r.str(), ClientMachine: r.str(), NewBlock: r.boolean()}
	case op.CodeTruncate:
		o = &op.Truncate{Path: r.str(), ClientName: r.str(), ClientMachine: r.str(),
			NewLength: r.varint(), Mtime: r.varint(), TruncateBlock: r.optBlock()}
	case op.CodeSetXAttr:
		o = &op.SetXAttr{Path: r.str(), XAttrs: r.xattrs()}
	case op.CodeRemoveXAttr:
		o = &op.RemoveXAttr{Path: r.str(), XAttrs: r.xattrs()}
	case op.CodeSetStoragePolicy:
		o = &op.SetStoragePolicy{Path: r.str(), PolicyID: r.small(0xff, "storage policy")}
	case op.CodeSetQuotaByStorageType:
		o = &op.SetQuotaByStorageType{Path: r.str(), StorageType: r.small(0xff, "storage type"), DsQuota: r.varint()}
	case op.CodeSetACL:
		o = &op.SetACL{Path: r.str(), Entries: r.aclEntries()}
	case op.CodeAllowSnapshot:
		o = &op.AllowSnapshot{Path: r.str()}
	case op.CodeDisallowSnapshot:
		o = &op.DisallowSnapshot{Path: r.str()}
	case op.CodeCreateSnapshot:
		o = &op.CreateSnapshot{Root: r.str(), Name: r.str(), Mtime: r.varint()}
	case op.CodeDeleteSnapshot:
		o = &op.DeleteSnapshot{Root: r.str(), Name: r.str(), Mtime: r.varint()}
	case op.CodeRenameSnapshot:
		o = &op.RenameSnapshot{Root: r.str(), OldName: r.str(), NewName: r.str(), Mtime: r.varint()}
	default:
		return nil, fmt.Errorf("unknown opcode %d", code)
	}
	if version < code.Since() {
		return nil, fmt.Errorf("%v in a layout version %d segment (it needs version %d)", code, version, code.Since())
	}
	if w, ok := o.(op.WithRPC); ok && version >= 2 {
		rpc := w.RPCIDPtr()
		if id := r.str(); id != "" {
			rpc.ClientID = []byte(id)
		}
		cid := r.varint()
		if cid < math.MinInt32 || cid > math.MaxInt32 {
			r.fail(fmt.Errorf("call id %d does not fit 32 bits", cid))
		}
		rpc.CallID = int32(cid)
	}
	if r.err != nil {
		return nil, fmt.Errorf("%v body: %w", code, r.err)
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%v body: %d trailing bytes", code, len(r.b))
	}
	return o, nil
}

// knownCode reports whether c is an opcode this build decodes.
func knownCode(c op.Code) bool {
	switch c {
	case op.CodeAdd, op.CodeRenameOld, op.CodeDelete, op.CodeMkdir, op.CodeSetReplication,
		op.CodeSetPermissions, op.CodeSetOwner, op.CodeClose, op.CodeTimes, op.CodeSetQuota,
		op.CodeRename, op.CodeConcat, op.CodeReassignLease, op.CodeEndLogSegment,
		op.CodeStartLogSegment, op.CodeUpdateBlocks, op.CodeSetGenstamp, op.CodeAllocateBlockID,
		op.CodeAddBlock, op.CodeTruncate, op.CodeAppend,
		op.CodeSetACL, op.CodeSetXAttr, op.CodeRemoveXAttr, op.CodeSetStoragePolicy,
		op.CodeAllowSnapshot, op.CodeDisallowSnapshot,
		op.CodeCreateSnapshot, op.CodeDeleteSnapshot, op.CodeRenameSnapshot,
		op.CodeGetDelegationToken, op.CodeRenewDelegationToken, op.CodeCancelDelegationToken, op.CodeUpdateMasterKey,
		op.CodeSetQuotaByStorageType:
		return true
	}
	return false
}

// checkHeader validates a record header; "" means it is acceptable.
func checkHeader(h []byte) (length int, reason string) {
	code := op.Code(int8(h[0]))
	txid := int64(binary.BigEndian.Uint64(h[1:9]))
	n := binary.BigEndian.Uint32(h[9:13])
	switch {
	case !knownCode(code):
		return 0, fmt.Sprintf("unknown opcode %d", h[0])
	case txid < 1:
		return 0, fmt.Sprintf("invalid txid %d", txid)
	case n > MaxRecordBody:
		return 0, fmt.Sprintf("record length %d exceeds the maximum %d", n, MaxRecordBody)
	}
	return int(n), ""
}

// decodeChecked verifies the checksum of rec (header, body, trailer) and
// decodes it. reason is "" on success.
func decodeChecked(rec []byte, version int32) (txid int64, o op.Op, crcBad bool, reason string) {
	end := len(rec) - RecordTrailerSize
	want := binary.BigEndian.Uint32(rec[end:])
	if got := crc32.Checksum(rec[:end], castagnoli); got != want {
		return 0, nil, true, fmt.Sprintf("checksum mismatch (stored %08x, computed %08x)", want, got)
	}
	o, err := decodeBody(op.Code(int8(rec[0])), rec[RecordHeaderSize:end], version)
	if err != nil {
		return 0, nil, false, err.Error()
	}
	return int64(binary.BigEndian.Uint64(rec[1:9])), o, false, ""
}

// DecodeRecord reads exactly one record of the current layout version from
// r (no read-ahead). At a record
// boundary with nothing left it returns io.EOF; a record cut short by the end
// of r is a *TornRecordError; a bad opcode, txid, length, checksum or body is
// a *CorruptionError. Offsets in errors count from where r started. Segment
// readers use Decoder instead, which also recognises a torn tail whose last
// write left a bad checksum or zero fill.
func DecodeRecord(r io.Reader) (txid int64, o op.Op, err error) {
	var h [RecordHeaderSize]byte
	n, err := io.ReadFull(r, h[:])
	if err != nil {
		if n == 0 && err == io.EOF {
			return 0, nil, io.EOF
		}
		if err == io.ErrUnexpectedEOF {
			return 0, nil, &TornRecordError{Offset: 0}
		}
		return 0, nil, err
	}
	length, reason := checkHeader(h[:])
	if reason != "" {
		return 0, nil, &CorruptionError{Offset: 0, Reason: reason}
	}
	rec := make([]byte, RecordHeaderSize+length+RecordTrailerSize)
	copy(rec, h[:])
	if _, err := io.ReadFull(r, rec[RecordHeaderSize:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return 0, nil, &TornRecordError{Offset: 0}
		}
		return 0, nil, err
	}
	txid, o, _, reason = decodeChecked(rec, LayoutVersion)
	if reason != "" {
		return 0, nil, &CorruptionError{Offset: 0, Reason: reason}
	}
	return txid, o, nil
}

// Decoder reads the records of one segment, after its header.
//
// It tells a torn tail from corruption: a record is torn when the data ends
// inside it, when it is the last thing in the file and its checksum fails (the
// final write reached the disk only in part), or when it and everything after
// it are zero bytes (space the file system extended but never filled, or a
// writer's preallocated fill), or when its checksum or header fails and
// everything after the bytes read for it is zero (a write cut short inside
// preallocated fill). Damage with intact data after it is corruption.
//
// A Decoder is not safe for concurrent use.
type Decoder struct {
	r       *bufio.Reader
	file    string
	off     int64
	buf     []byte
	version int32
}

// NewDecoder reads records of segment layout version (what
// ReadSegmentHeader returned) from r; file and offset (r's position in the
// file) are used in errors.
func NewDecoder(r io.Reader, file string, offset int64, version int32) *Decoder {
	return &Decoder{r: bufio.NewReaderSize(r, 64<<10), file: file, off: offset, version: version}
}

// Offset is the file offset just past the last record returned: where a torn
// tail would be cut.
func (d *Decoder) Offset() int64 { return d.off }

// Next returns the next record, io.EOF at a clean end, *TornRecordError or
// *CorruptionError.
func (d *Decoder) Next() (txid int64, o op.Op, err error) {
	if _, err := d.r.Peek(1); err != nil {
		if err == io.EOF {
			return 0, nil, io.EOF
		}
		return 0, nil, err
	}
	if cap(d.buf) < RecordHeaderSize {
		d.buf = make([]byte, 0, 4096)
	}
	h := d.buf[:RecordHeaderSize]
	if _, err := io.ReadFull(d.r, h); err != nil {
		return 0, nil, d.short(err)
	}
	length, reason := checkHeader(h)
	if reason != "" {
		return 0, nil, d.damaged(h, false, true, reason)
	}
	total := RecordHeaderSize + length + RecordTrailerSize
	if cap(d.buf) < total {
		nb := make([]byte, total)
		copy(nb, h)
		d.buf = nb
	}
	rec := d.buf[:total]
	if n, err := io.ReadFull(d.r, rec[RecordHeaderSize:]); err != nil {
		if (err == io.EOF || err == io.ErrUnexpectedEOF) && containsRecord(rec[1:RecordHeaderSize+n]) {
			// A whole record sits inside what this header claims: the length
			// is damaged, and cutting here would drop good records.
			return 0, nil, &CorruptionError{File: d.file, Offset: d.off,
				Reason: fmt.Sprintf("record length %d runs past the end of the file over intact records", length)}
		}
		return 0, nil, d.short(err)
	}
	txid, o, crcBad, reason := decodeChecked(rec, d.version)
	if reason != "" {
		return 0, nil, d.damaged(rec, crcBad, false, reason)
	}
	d.off += int64(total)
	return txid, o, nil
}

func (d *Decoder) short(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &TornRecordError{File: d.file, Offset: d.off}
	}
	return err
}

// damaged classifies a bad record at d.off whose bytes read so far are rec:
// crcBad when its checksum failed, header when its header did not check.
func (d *Decoder) damaged(rec []byte, crcBad, header bool, reason string) error {
	atEOF := false
	if _, err := d.r.Peek(1); err == io.EOF {
		atEOF = true
	} else if err != nil {
		return err
	}
	if crcBad && atEOF {
		return &TornRecordError{File: d.file, Offset: d.off}
	}
	if allZero(rec) {
		zero, err := d.restZero()
		if err != nil {
			return err
		}
		if zero {
			return &TornRecordError{File: d.file, Offset: d.off, ZeroFill: true}
		}
	} else if (crcBad || header) && !atEOF {
		// The last write of a segment with zero fill after its records
		// (FileJournal preallocates) reached the disk in part: the record's
		// first bytes, then zeros to the end of the file. A length that
		// swallowed a whole record is damage, not a torn write.
		zero, err := d.restZero()
		if err != nil {
			return err
		}
		if zero && !containsRecord(rec[1:]) {
			return &TornRecordError{File: d.file, Offset: d.off}
		}
	}
	return &CorruptionError{File: d.file, Offset: d.off, Reason: reason}
}

// restZero consumes the rest of the input and reports whether it is all zero.
func (d *Decoder) restZero() (bool, error) {
	var chunk [4096]byte
	for {
		n, err := d.r.Read(chunk[:])
		if !allZero(chunk[:n]) {
			return false, nil
		}
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// containsRecord reports whether a complete, checksummed record starts at
// any offset of b.
func containsRecord(b []byte) bool {
	for i := 0; i+RecordHeaderSize+RecordTrailerSize <= len(b); i++ {
		length, reason := checkHeader(b[i : i+RecordHeaderSize])
		if reason != "" {
			continue
		}
		end := i + RecordHeaderSize + length + RecordTrailerSize
		if end > len(b) {
			continue
		}
		if crc32.Checksum(b[i:end-RecordTrailerSize], castagnoli) == binary.BigEndian.Uint32(b[end-RecordTrailerSize:end]) {
			return true
		}
	}
	return false
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func crcOf(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
