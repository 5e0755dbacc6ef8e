package fsimage

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// Reader decodes an image, one frame in memory at a time. Not safe for
// concurrent use.
type Reader struct {
	br      *bufio.Reader
	off     int64 // file offset of the next byte br will return
	h       Header
	version uint32 // the file's format version

	payload    []byte // current inode frame's payload
	payloadOff int64  // file offset of payload[0]
	pos        int    // next record in payload
	left       uint64 // records left in the current frame

	total   uint64 // inodes returned
	frames  uint64 // inode frames read
	strings []string
	done    bool
	err     error // sticky

	in Inode
	uc UnderConstruction

	prev struct {
		id, parent   uint64
		mtime, atime int64
		blockSize    int64
		blockID      int64
		genStamp     int64
	}
}

// NewReader reads the file magic, version and header from r. It reads r
// through its own buffer and never past the end of the image.
func NewReader(r io.Reader) (*Reader, Header, error) {
	ir := &Reader{br: bufio.NewReaderSize(r, 256<<10)}
	var pre [12]byte
	if _, err := io.ReadFull(ir.br, pre[:]); err != nil {
		return nil, Header{}, ir.readErr(0, err, "file shorter than its 12-byte preamble")
	}
	ir.off = 12
	if string(pre[:8]) != Magic {
		return nil, Header{}, ir.corrupt(0, "bad magic %q, want %q", pre[:8], Magic)
	}
	v := binary.BigEndian.Uint32(pre[8:])
	if v < 1 || v > FormatVersion {
		return nil, Header{}, ir.corrupt(8, "unknown format version %d (this build reads 1 to %d)", v, FormatVersion)
	}
	ir.version = v
	kind, p, poff, err := ir.readFrame()
	if err != nil {
		return nil, Header{}, err
	}
	if kind != frameHeader {
		return nil, Header{}, ir.corrupt(poff-1, "first frame is %q, want the header", kind)
	}
	d := decoder{b: p}
	h := Header{
		LayoutVersion: int32(d.varint()),
		NamespaceID:   int32(d.varint()),
		TxID:          d.varint(),
		LastInodeID:   d.uvarint(),
		GenStamp:      d.varint(),
		LastBlockID:   d.varint(),
		NumInodes:     d.uvarint(),
	}
	if d.err != nil || d.pos != len(p) {
		return nil, Header{}, ir.corrupt(poff+int64(d.pos), "malformed header frame")
	}
	if v >= 3 {
		kind, p, poff, err := ir.readFrame()
		if err != nil {
			return nil, Header{}, err
		}
		if kind != frameDelegation {
			return nil, Header{}, ir.corrupt(poff-1, "second frame is %q, want the delegation frame", kind)
		}
		if len(p) > 0 {
			h.Delegation = append([]byte(nil), p...)
		}
	}
	if v >= 4 {
		for {
			kind, p, poff, err := ir.readFrame()
			if err != nil {
				return nil, Header{}, err
			}
			if kind != frameSnapshots || len(p) == 0 || p[0] > 1 {
				return nil, Header{}, ir.corrupt(poff-1, "malformed snapshot frame (kind %q, %d bytes)", kind, len(p))
			}
			h.Snapshots = append(h.Snapshots, p[1:]...)
			if p[0] == 0 {
				break
			}
		}
		if len(h.Snapshots) == 0 {
			h.Snapshots = nil
		}
	}
	ir.h = h
	return ir, h, nil
}

func (r *Reader) corrupt(off int64, format string, args ...any) error {
	r.err = &CorruptError{Offset: off, Reason: fmt.Sprintf(format, args...)}
	return r.err
}

// readErr turns a failed read at off into a CorruptError when the file
// ended early (why says what was cut), and into a plain read error otherwise.
func (r *Reader) readErr(off int64, err error, why string) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return r.corrupt(off, "%s", why)
	}
	r.err = fmt.Errorf("fsimage: read at offset %d: %w", off, err)
	return r.err
}

// readFrame reads one whole frame, checks its CRC and returns its kind,
// payload and the payload's file offset. The payload aliases r.payload.
func (r *Reader) readFrame() (kind byte, payload []byte, payloadOff int64, err error) {
	start := r.off
	var hdr [frameReserve]byte
	k, err := r.br.ReadByte()
	if err != nil {
		return 0, nil, 0, r.readErr(start, err, "truncated: no frame where one must follow")
	}
	hdr[0] = k
	hl := 1
	var n uint64
	for shift := uint(0); ; shift += 7 {
		c, err := r.br.ReadByte()
		if err != nil {
			return 0, nil, 0, r.readErr(start, err, "truncated frame length")
		}
		if hl >= frameReserve {
			return 0, nil, 0, r.corrupt(start, "frame length varint too long")
		}
		hdr[hl] = c
		hl++
		n |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	if k != frameHeader && k != frameDelegation && k != frameSnapshots && k != frameInodes && k != frameTrailer {
		return 0, nil, 0, r.corrupt(start, "unknown frame kind 0x%02x", k)
	}
	if n > MaxFrameSize {
		return 0, nil, 0, r.corrupt(start, "frame length %d over the limit %d", n, MaxFrameSize)
	}
	if cap(r.payload) < int(n)+4 {
		r.payload = make([]byte, int(n)+4)
	}
	buf := r.payload[:int(n)+4]
	if _, err := io.ReadFull(r.br, buf); err != nil {
		return 0, nil, 0, r.readErr(start, err, fmt.Sprintf("truncated frame of %d bytes", n))
	}
	crc := crc32.Update(crc32.Checksum(hdr[:hl], castagnoli), castagnoli, buf[:n])
	if got := binary.BigEndian.Uint32(buf[n:]); got != crc {
		return 0, nil, 0, r.corrupt(start, "frame checksum mismatch (stored %08x, computed %08x)", got, crc)
	}
	payloadOff = start + int64(hl)
	r.off = payloadOff + int64(n) + 4
	return k, buf[:n], payloadOff, nil
}

// Next returns the next inode, or io.EOF after the last one once the trailer
// has been checked and the end of the file reached.
//
// The returned *Inode is reused by the following call, and its Name, Blocks
// and UC point into the Reader's buffers: copy whatever you keep. Its string
// fields (Perm.User, Perm.Group, UC.ClientName, UC.ClientMachine) are
// ordinary immutable strings, shared between inodes, and may be kept.
func (r *Reader) Next() (*Inode, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.done {
		return nil, io.EOF
	}
	for r.left == 0 {
		if err := r.nextFrame(); err != nil {
			return nil, err
		}
		if r.done {
			return nil, io.EOF
		}
	}
	return r.decodeInode()
}

func (r *Reader) nextFrame() error {
	if r.pos != len(r.payload) && r.frames > 0 {
		return r.corrupt(r.payloadOff+int64(r.pos), "%d stray bytes after the last record of a frame", len(r.payload)-r.pos)
	}
	kind, p, poff, err := r.readFrame()
	if err != nil {
		return err
	}
	d := decoder{b: p}
	switch kind {
	case frameInodes:
		cnt := d.uvarint()
		if d.err != nil || cnt == 0 {
			return r.corrupt(poff, "bad record count in inode frame")
		}
		// Every record takes at least 9 bytes: no more records than that.
		if cnt > uint64(len(p))/9 {
			return r.corrupt(poff, "record count %d cannot fit in %d bytes", cnt, len(p))
		}
		if r.total+cnt > r.h.NumInodes {
			return r.corrupt(poff, "more inodes than the %d of the header", r.h.NumInodes)
		}
		r.payload, r.payloadOff, r.pos, r.left = p, poff, d.pos, cnt
		r.frames++
		return nil
	case frameTrailer:
		num, frames, nstr := d.uvarint(), d.uvarint(), d.uvarint()
		if d.err != nil || d.pos != len(p) {
			return r.corrupt(poff+int64(d.pos), "malformed trailer frame")
		}
		if num != r.total || num != r.h.NumInodes || frames != r.frames || nstr != uint64(len(r.strings)) {
			return r.corrupt(poff, "trailer counts (%d inodes, %d frames, %d strings) do not match the file (%d of %d inodes, %d frames, %d strings)",
				num, frames, nstr, r.total, r.h.NumInodes, r.frames, len(r.strings))
		}
		if _, err := r.br.ReadByte(); err != io.EOF {
			if err != nil {
				return r.readErr(r.off, err, "")
			}
			return r.corrupt(r.off, "data after the trailer")
		}
		r.done = true
		r.payload, r.pos = nil, 0
		return nil
	default:
		return r.corrupt(poff-1, "unexpected frame kind %q", kind)
	}
}

func (r *Reader) decodeInode() (*Inode, error) {
	d := decoder{b: r.payload, pos: r.pos}
	recOff := r.payloadOff + int64(r.pos)
	fail := func(why string) (*Inode, error) {
		return nil, r.corrupt(r.payloadOff+int64(d.pos), "inode %d (record at offset %d): %s", r.total, recOff, why)
	}
	in := &r.in
	pr := &r.prev
	flags := d.byte()
	if flags&^flagsMask != 0 || (flags&(flagFeat|flagSnap) != 0 && r.version < 2) {
		return fail(fmt.Sprintf("unknown flags 0x%02x", flags))
	}
	if flags&flagSnap != 0 && flags&flagDir == 0 {
		return fail("a file marked snapshottable")
	}
	if flags&flagTypeQ != 0 && (r.version < 5 || flags&flagDir == 0) {
		return fail(fmt.Sprintf("quotas by storage type (flags 0x%02x) on a file or in a version %d image", flags, r.version))
	}
	in.Snapshottable = flags&flagSnap != 0
	in.IsDir = flags&flagDir != 0
	if in.IsDir && flags&flagUC != 0 {
		return fail("directory marked under construction")
	}
	pr.id += uint64(d.varint())
	pr.parent += uint64(d.varint())
	in.ID, in.ParentID = pr.id, pr.parent
	nl := d.uvarint()
	if nl > MaxNameLen {
		return fail(fmt.Sprintf("name length %d over the limit", nl))
	}
	in.Name = d.bytes(int(nl))
	if d.err != nil {
		return fail("truncated record")
	}
	if r.total == 0 {
		if !in.IsDir || nl != 0 || in.ParentID != 0 {
			return fail("first inode is not the root directory")
		}
	} else if nl == 0 {
		return fail("empty name")
	}
	var ok bool
	if in.Perm.User, ok = r.str(&d); !ok {
		return fail("bad user string")
	}
	if in.Perm.Group, ok = r.str(&d); !ok {
		return fail("bad group string")
	}
	mode := d.uvarint()
	if mode > 0xffff {
		return fail(fmt.Sprintf("mode %#o out of range", mode))
	}
	in.Perm.Mode = uint16(mode)
	pr.mtime += d.varint()
	pr.atime += d.varint()
	in.Mtime, in.Atime = pr.mtime, pr.atime
	in.NsQuota, in.DsQuota = -1, -1
	if flags&flagQuota != 0 {
		in.NsQuota = d.varint()
		in.DsQuota = d.varint()
	}
	in.TypeQuotas = in.TypeQuotas[:0]
	if flags&flagTypeQ != 0 {
		n := d.uvarint()
		if n == 0 || n > MaxTypeQuotas || n > uint64(len(d.b)-d.pos)/2 {
			return fail(fmt.Sprintf("%d quotas by storage type", n))
		}
		for range n {
			t := d.uvarint()
			if t > 0xff {
				return fail(fmt.Sprintf("storage type %d out of range", t))
			}
			in.TypeQuotas = append(in.TypeQuotas, TypeQuota{Type: uint8(t), Quota: d.varint()})
		}
		if d.err != nil {
			return fail("truncated quotas by storage type")
		}
	}
	in.Replication, in.BlockSize, in.Blocks, in.UC = 0, 0, in.Blocks[:0], nil
	if !in.IsDir {
		repl := d.uvarint()
		if repl > 0xffff {
			return fail(fmt.Sprintf("replication %d out of range", repl))
		}
		in.Replication = uint16(repl)
		pr.blockSize += d.varint()
		in.BlockSize = pr.blockSize
		nb := d.uvarint()
		if nb > MaxBlocksPerFile {
			return fail(fmt.Sprintf("%d blocks over the limit", nb))
		}
		if nb > uint64(len(d.b)-d.pos)/3 { // a block takes at least 3 bytes
			return fail(fmt.Sprintf("%d blocks cannot fit in the frame", nb))
		}
		for i := uint64(0); i < nb; i++ {
			pr.blockID += d.varint()
			nbytes := d.varint()
			pr.genStamp += d.varint()
			in.Blocks = append(in.Blocks, op.Block{ID: pr.blockID, NumBytes: nbytes, GenStamp: pr.genStamp})
		}
		if flags&flagUC != 0 {
			r.uc = UnderConstruction{}
			if r.uc.ClientName, ok = r.str(&d); !ok {
				return fail("bad client name string")
			}
			if r.uc.ClientMachine, ok = r.str(&d); !ok {
				return fail("bad client machine string")
			}
			if r.version >= 8 {
				r.uc.TruncateSource = d.varint()
				if d.err != nil {
					return fail("truncated copy-on-truncate source")
				}
			}
			in.UC = &r.uc
		}
	}
	in.StoragePolicy, in.XAttrs, in.ACL = 0, in.XAttrs[:0], in.ACL[:0]
	if flags&flagFeat != 0 {
		sp := d.uvarint()
		if sp > 0xff {
			return fail(fmt.Sprintf("storage policy %d out of range", sp))
		}
		in.StoragePolicy = uint8(sp)
		nx := d.uvarint()
		if nx > MaxXAttrs || nx > uint64(len(d.b)-d.pos)/3 {
			return fail(fmt.Sprintf("%d xattrs over the limit or the frame", nx))
		}
		for i := uint64(0); i < nx; i++ {
			ns := d.uvarint()
			if ns > uint64(op.XAttrRaw) {
				return fail(fmt.Sprintf("xattr namespace %d out of range", ns))
			}
			x := op.XAttr{NS: uint8(ns)}
			if x.Name, ok = r.str(&d); !ok {
				return fail("bad xattr name string")
			}
			switch d.byte() {
			case 0:
			case 1:
				vl := d.uvarint()
				if vl > MaxXAttrValue {
					return fail(fmt.Sprintf("xattr value of %d bytes over the limit", vl))
				}
				x.Value = append([]byte{}, d.bytes(int(vl))...)
			default:
				return fail("bad xattr value marker")
			}
			in.XAttrs = append(in.XAttrs, x)
		}
		na := d.uvarint()
		if na > MaxACLEntries || na > uint64(len(d.b)-d.pos)/2 {
			return fail(fmt.Sprintf("%d ACL entries over the limit or the frame", na))
		}
		for i := uint64(0); i < na; i++ {
			b := d.byte()
			e := op.ACLEntry{Scope: b >> 5, Type: b >> 3 & 3, Perm: b & 7}
			if e.Scope > op.ACLDefault {
				return fail(fmt.Sprintf("ACL entry byte 0x%02x out of range", b))
			}
			if e.Name, ok = r.str(&d); !ok {
				return fail("bad ACL entry name string")
			}
			in.ACL = append(in.ACL, e)
		}
		if d.err == nil && !in.HasFeatures() {
			return fail("features flag with no features")
		}
	}
	if d.err != nil {
		return fail("truncated record")
	}
	r.pos = d.pos
	r.left--
	r.total++
	return in, nil
}

// str decodes a string reference.
func (r *Reader) str(d *decoder) (string, bool) {
	ref := d.uvarint()
	if d.err != nil {
		return "", false
	}
	if ref == 0 {
		n := d.uvarint()
		if n > MaxStringLen {
			return "", false
		}
		b := d.bytes(int(n))
		if d.err != nil {
			return "", false
		}
		s := string(b)
		r.strings = append(r.strings, s)
		return s, true
	}
	if ref > uint64(len(r.strings)) {
		return "", false
	}
	return r.strings[ref-1], true
}

// Header returns the image's header.
func (r *Reader) Header() Header { return r.h }

// decoder reads varints from a byte slice; the first error sticks and makes
// every later read return zero.
type decoder struct {
	b   []byte
	pos int
	err error
}

func (d *decoder) byte() byte {
	if d.pos >= len(d.b) {
		d.err = errShort
		return 0
	}
	c := d.b[d.pos]
	d.pos++
	return c
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	// Fast path: one byte.
	if d.pos < len(d.b) && d.b[d.pos] < 0x80 {
		v := uint64(d.b[d.pos])
		d.pos++
		return v
	}
	v, n := binary.Uvarint(d.b[d.pos:])
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.pos += n
	return v
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.pos {
		d.err = errShort
		return nil
	}
	b := d.b[d.pos : d.pos+n : d.pos+n]
	d.pos += n
	return b
}
