package fsimage

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// Format constants. Part of the on-disk format.
const (
	// Magic opens every image file.
	Magic = "HDFSIMG1"
	// FormatVersion is the version of the encoding described in the package
	// doc. A new encoding takes the next number; readers refuse unknown ones
	// and read every older one. Version 2 added the features of an inode
	// (flag bit 3), version 3 the delegation frame, version 4 the snapshot
	// frames, version 5 the quotas by storage type of a directory (flag
	// bit 7), version 8 the copy-on-truncate source of a file under
	// construction (versions 6 and 7 are left to other record changes),
	// version 9 the xattrs and ACLs of snapshot versions inside the 'S'
	// frames' payload (format 2 of the snapshot state).
	FormatVersion uint32 = 9

	frameHeader     byte = 'H'
	frameDelegation byte = 'D'
	frameSnapshots  byte = 'S'
	frameInodes     byte = 'I'
	frameTrailer    byte = 'T'

	flagDir   = 1 << 0
	flagUC    = 1 << 1
	flagQuota = 1 << 2
	flagFeat  = 1 << 3 // format version 2
	flagSnap  = 1 << 4 // format version 2: a snapshottable directory
	flagTypeQ = 1 << 7 // format version 5: quotas by storage type
	flagsMask = flagDir | flagUC | flagQuota | flagFeat | flagSnap | flagTypeQ
)

// Limits the Reader enforces before allocating, and the Writer before
// writing (so that whatever is written can be read).
const (
	MaxFrameSize     = 16 << 20 // bytes of one frame's payload
	MaxNameLen       = 1 << 16  // bytes of one inode name
	MaxStringLen     = 1 << 16  // bytes of one user, group or client string
	MaxBlocksPerFile = 1 << 17  // blocks of one file (Hadoop's default limit is 10,000)
	MaxXAttrs        = 1 << 12  // extended attributes of one inode
	MaxXAttrValue    = 1 << 16  // bytes of one extended attribute's value
	MaxACLEntries    = 1 << 12  // ACL entries of one inode
	MaxTypeQuotas    = 16       // quotas by storage type of one directory
)

// targetFrame is the payload size after which the Writer ends a frame.
const targetFrame = 64 << 10

// frameReserve is room kept in front of a frame's payload for kind and length.
const frameReserve = 1 + binary.MaxVarintLen64

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Writer encodes an image to an io.Writer, computing the MD5 of every byte it
// writes. It buffers about 64 KiB and writes whole frames; it never closes or
// syncs the underlying writer. Not safe for concurrent use.
type Writer struct {
	w      io.Writer
	md5    hash.Hash
	h      Header
	buf    []byte // frameReserve bytes of room, then the payload being built
	n      uint64 // inodes in the current frame
	total  uint64 // inodes written
	frames uint64 // inode frames written
	err    error  // sticky

	strings map[string]uint64 // interned string -> index

	prev struct {
		id, parent   uint64
		mtime, atime int64
		blockSize    int64
		blockID      int64
		genStamp     int64
	}
}

// NewWriter writes the file magic, version and h to w and returns a Writer
// for the h.NumInodes inodes that must follow.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	iw := &Writer{
		w:       w,
		md5:     md5.New(),
		h:       h,
		buf:     make([]byte, frameReserve, frameReserve+targetFrame+4096),
		strings: make(map[string]uint64),
	}
	var pre [12]byte
	copy(pre[:], Magic)
	binary.BigEndian.PutUint32(pre[8:], FormatVersion)
	if err := iw.write(pre[:]); err != nil {
		return nil, err
	}
	p := iw.buf
	p = binary.AppendVarint(p, int64(h.LayoutVersion))
	p = binary.AppendVarint(p, int64(h.NamespaceID))
	p = binary.AppendVarint(p, h.TxID)
	p = binary.AppendUvarint(p, h.LastInodeID)
	p = binary.AppendVarint(p, h.GenStamp)
	p = binary.AppendVarint(p, h.LastBlockID)
	p = binary.AppendUvarint(p, h.NumInodes)
	iw.buf = p
	if err := iw.flushFrame(frameHeader); err != nil {
		return nil, err
	}
	if len(h.Delegation) > MaxFrameSize {
		iw.err = fmt.Errorf("fsimage: delegation state of %d bytes over the frame limit %d", len(h.Delegation), MaxFrameSize)
		return nil, iw.err
	}
	iw.buf = append(iw.buf, h.Delegation...)
	if err := iw.flushFrame(frameDelegation); err != nil {
		return nil, err
	}
	// The snapshot state, in as many frames as it needs; the first byte of
	// each says whether another follows.
	rest := h.Snapshots
	for {
		chunk := rest
		if len(chunk) > MaxFrameSize-1 {
			chunk = chunk[:MaxFrameSize-1]
		}
		rest = rest[len(chunk):]
		more := byte(0)
		if len(rest) > 0 {
			more = 1
		}
		iw.buf = append(append(iw.buf, more), chunk...)
		if err := iw.flushFrame(frameSnapshots); err != nil {
			return nil, err
		}
		if more == 0 {
			break
		}
	}
	return iw, nil
}

func (w *Writer) write(p []byte) error {
	w.md5.Write(p)
	if _, err := w.w.Write(p); err != nil {
		w.err = fmt.Errorf("fsimage: write: %w", err)
		return w.err
	}
	return nil
}

// flushFrame writes the payload in w.buf as one frame of the given kind.
func (w *Writer) flushFrame(kind byte) error {
	payload := w.buf[frameReserve:]
	var hdr [frameReserve]byte
	hdr[0] = kind
	hl := 1 + binary.PutUvarint(hdr[1:], uint64(len(payload)))
	start := frameReserve - hl
	copy(w.buf[start:], hdr[:hl])
	w.buf = binary.BigEndian.AppendUint32(w.buf, crc32.Checksum(w.buf[start:], castagnoli))
	err := w.write(w.buf[start:])
	w.buf = w.buf[:frameReserve]
	return err
}

func appendString(p []byte, s string, w *Writer) []byte {
	if idx, ok := w.strings[s]; ok {
		return binary.AppendUvarint(p, idx+1)
	}
	w.strings[s] = uint64(len(w.strings))
	p = append(p, 0)
	p = binary.AppendUvarint(p, uint64(len(s)))
	return append(p, s...)
}

func (w *Writer) check(in *Inode) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: inode %d (%q): %s", ErrInvalidInode, in.ID, in.Name, why)
	}
	if w.total == 0 {
		if !in.IsDir || len(in.Name) != 0 || in.ParentID != 0 {
			return bad("the first inode must be the root: a directory with no name and parent 0")
		}
	} else if len(in.Name) == 0 {
		return bad("empty name")
	}
	if len(in.Name) > MaxNameLen {
		return bad(fmt.Sprintf("name of %d bytes is over %d", len(in.Name), MaxNameLen))
	}
	for _, s := range [...]string{in.Perm.User, in.Perm.Group} {
		if len(s) > MaxStringLen {
			return bad(fmt.Sprintf("owner string of %d bytes is over %d", len(s), MaxStringLen))
		}
	}
	if len(in.XAttrs) > MaxXAttrs || len(in.ACL) > MaxACLEntries {
		return bad(fmt.Sprintf("%d xattrs and %d ACL entries: over %d or %d", len(in.XAttrs), len(in.ACL), MaxXAttrs, MaxACLEntries))
	}
	for _, x := range in.XAttrs {
		if x.NS > op.XAttrRaw || len(x.Name) > MaxStringLen || len(x.Value) > MaxXAttrValue {
			return bad(fmt.Sprintf("xattr %q: namespace %d, or name or value over the limits", x.Name, x.NS))
		}
	}
	for _, e := range in.ACL {
		if e.Scope > op.ACLDefault || e.Type > op.ACLOther || e.Perm > 7 || len(e.Name) > MaxStringLen {
			return bad(fmt.Sprintf("ACL entry %+v out of range", e))
		}
	}
	if in.Snapshottable && !in.IsDir {
		return bad("only a directory may be snapshottable")
	}
	if len(in.TypeQuotas) > 0 && !in.IsDir {
		return bad("only a directory may have quotas by storage type")
	}
	if len(in.TypeQuotas) > MaxTypeQuotas {
		return bad(fmt.Sprintf("%d quotas by storage type: over %d", len(in.TypeQuotas), MaxTypeQuotas))
	}
	if in.IsDir {
		if len(in.Blocks) != 0 || in.UC != nil || in.Replication != 0 || in.BlockSize != 0 {
			return bad("a directory has no blocks, lease, replication or block size")
		}
		return nil
	}
	if len(in.Blocks) > MaxBlocksPerFile {
		return bad(fmt.Sprintf("%d blocks is over %d", len(in.Blocks), MaxBlocksPerFile))
	}
	if in.UC != nil && (len(in.UC.ClientName) > MaxStringLen || len(in.UC.ClientMachine) > MaxStringLen) {
		return bad("client string over the limit")
	}
	return nil
}

// Write appends one inode. Inodes must come parent before child, the root
// first; Write checks only what the format itself needs (see ErrInvalidInode).
// After an error the Writer is unusable.
func (w *Writer) Write(in *Inode) error {
	if w.err != nil {
		return w.err
	}
	if w.total >= w.h.NumInodes {
		w.err = fmt.Errorf("%w: more than the %d inodes of the header", ErrCountMismatch, w.h.NumInodes)
		return w.err
	}
	if err := w.check(in); err != nil {
		return err // the Writer stays usable: nothing was written
	}
	p := w.buf
	flags := byte(0)
	if in.IsDir {
		flags |= flagDir
	}
	if in.UC != nil {
		flags |= flagUC
	}
	if in.NsQuota != -1 || in.DsQuota != -1 {
		flags |= flagQuota
	}
	if in.HasFeatures() {
		flags |= flagFeat
	}
	if in.Snapshottable {
		flags |= flagSnap
	}
	if len(in.TypeQuotas) > 0 {
		flags |= flagTypeQ
	}
	pr := &w.prev
	p = append(p, flags)
	p = binary.AppendVarint(p, int64(in.ID-pr.id))
	p = binary.AppendVarint(p, int64(in.ParentID-pr.parent))
	pr.id, pr.parent = in.ID, in.ParentID
	p = binary.AppendUvarint(p, uint64(len(in.Name)))
	p = append(p, in.Name...)
	p = appendString(p, in.Perm.User, w)
	p = appendString(p, in.Perm.Group, w)
	p = binary.AppendUvarint(p, uint64(in.Perm.Mode))
	p = binary.AppendVarint(p, in.Mtime-pr.mtime)
	p = binary.AppendVarint(p, in.Atime-pr.atime)
	pr.mtime, pr.atime = in.Mtime, in.Atime
	if flags&flagQuota != 0 {
		p = binary.AppendVarint(p, in.NsQuota)
		p = binary.AppendVarint(p, in.DsQuota)
	}
	if flags&flagTypeQ != 0 {
		p = binary.AppendUvarint(p, uint64(len(in.TypeQuotas)))
		for _, q := range in.TypeQuotas {
			p = binary.AppendUvarint(p, uint64(q.Type))
			p = binary.AppendVarint(p, q.Quota)
		}
	}
	if !in.IsDir {
		p = binary.AppendUvarint(p, uint64(in.Replication))
		p = binary.AppendVarint(p, in.BlockSize-pr.blockSize)
		pr.blockSize = in.BlockSize
		p = binary.AppendUvarint(p, uint64(len(in.Blocks)))
		for i := range in.Blocks {
			b := &in.Blocks[i]
			p = binary.AppendVarint(p, b.ID-pr.blockID)
			p = binary.AppendVarint(p, b.NumBytes)
			p = binary.AppendVarint(p, b.GenStamp-pr.genStamp)
			pr.blockID, pr.genStamp = b.ID, b.GenStamp
		}
		if in.UC != nil {
			p = appendString(p, in.UC.ClientName, w)
			p = appendString(p, in.UC.ClientMachine, w)
			p = binary.AppendVarint(p, in.UC.TruncateSource)
		}
	}
	if flags&flagFeat != 0 {
		p = binary.AppendUvarint(p, uint64(in.StoragePolicy))
		p = binary.AppendUvarint(p, uint64(len(in.XAttrs)))
		for _, x := range in.XAttrs {
			p = binary.AppendUvarint(p, uint64(x.NS))
			p = appendString(p, x.Name, w)
			if x.Value == nil {
				p = append(p, 0)
			} else {
				p = append(p, 1)
				p = binary.AppendUvarint(p, uint64(len(x.Value)))
				p = append(p, x.Value...)
			}
		}
		p = binary.AppendUvarint(p, uint64(len(in.ACL)))
		for _, e := range in.ACL {
			p = append(p, e.Scope<<5|e.Type<<3|e.Perm)
			p = appendString(p, e.Name, w)
		}
	}
	w.buf = p
	w.n++
	w.total++
	if len(w.buf)-frameReserve >= targetFrame {
		return w.flushInodes()
	}
	return nil
}

// flushInodes ends the current inode frame. The payload starts with the
// record count, which is known only now: records are encoded after a
// reserved gap and the count is put in front of them.
func (w *Writer) flushInodes() error {
	if w.n == 0 {
		return nil
	}
	var cnt [binary.MaxVarintLen64]byte
	cl := binary.PutUvarint(cnt[:], w.n)
	w.buf = append(w.buf, cnt[:cl]...) // grow by cl bytes
	copy(w.buf[frameReserve+cl:], w.buf[frameReserve:len(w.buf)-cl])
	copy(w.buf[frameReserve:], cnt[:cl])
	w.n = 0
	w.frames++
	return w.flushFrame(frameInodes)
}

// Close writes the last inode frame and the trailer and returns the MD5 of
// everything written. It fails with ErrCountMismatch unless exactly
// Header.NumInodes inodes were written. It does not close the underlying
// writer.
func (w *Writer) Close() (sum [16]byte, err error) {
	if w.err != nil {
		return sum, w.err
	}
	if w.total != w.h.NumInodes {
		w.err = fmt.Errorf("%w: wrote %d inodes, header says %d", ErrCountMismatch, w.total, w.h.NumInodes)
		return sum, w.err
	}
	if err := w.flushInodes(); err != nil {
		return sum, err
	}
	p := w.buf
	p = binary.AppendUvarint(p, w.total)
	p = binary.AppendUvarint(p, w.frames)
	p = binary.AppendUvarint(p, uint64(len(w.strings)))
	w.buf = p
	if err := w.flushFrame(frameTrailer); err != nil {
		return sum, err
	}
	w.err = ErrClosed
	copy(sum[:], w.md5.Sum(nil))
	return sum, nil
}
