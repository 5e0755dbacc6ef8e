package oiv

import (
	"bufio"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/xmltext"
)

// ErrBadXML: the XML is not an image document this package writes.
var ErrBadXML = errors.New("oiv: bad image XML")

// maxXMLDepth bounds element nesting; our XML is 5 deep.
const maxXMLDepth = 8

// ReverseXML reads image XML (as XML writes it) from r and writes the
// image to w with fsimage's Writer, returning the image's MD5. Inodes are
// written in the XML's order, which must put every parent before its
// children; each inode's parent comes from the INodeDirectorySection.
func ReverseXML(r io.Reader, w io.Writer) ([16]byte, error) {
	var h fsimage.Header
	var inodes []*fsimage.Inode
	parent := map[uint64]uint64{}
	var cur *fsimage.Inode
	var blk *op.Block
	var dirParent uint64
	var haveNumInodes bool
	var numInodes uint64
	seen := map[string]bool{}
	var xa *op.XAttr // the xattr being read
	snapshottable := map[uint64]bool{}

	d := xml.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	d.Strict = true
	var stack []string
	var text strings.Builder
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: <%s>: %s", ErrBadXML, strings.Join(stack, "/"), fmt.Sprintf(format, args...))
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return [16]byte{}, fmt.Errorf("%w: %v", ErrBadXML, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) >= maxXMLDepth {
				return [16]byte{}, bad("nested deeper than %d", maxXMLDepth)
			}
			stack = append(stack, t.Name.Local)
			text.Reset()
			switch strings.Join(stack, "/") {
			case "fsimage/INodeSection/inode":
				cur = &fsimage.Inode{NsQuota: -1, DsQuota: -1}
				seen = map[string]bool{}
			case "fsimage/INodeSection/inode/blocks/block":
				if cur == nil {
					return [16]byte{}, bad("outside an inode")
				}
				cur.Blocks = append(cur.Blocks, op.Block{})
				blk = &cur.Blocks[len(cur.Blocks)-1]
			case "fsimage/INodeSection/inode/file-under-construction":
				cur.UC = &fsimage.UnderConstruction{}
			case "fsimage/INodeSection/inode/xattrs/xattr":
				if cur == nil {
					return [16]byte{}, bad("outside an inode")
				}
				cur.XAttrs = append(cur.XAttrs, op.XAttr{})
				xa = &cur.XAttrs[len(cur.XAttrs)-1]
			case "fsimage/INodeDirectorySection/directory":
				dirParent = 0
			}
		case xml.CharData:
			if text.Len()+len(t) > 1<<20 {
				return [16]byte{}, bad("text longer than 1 MiB")
			}
			text.Write(t)
		case xml.EndElement:
			path := strings.Join(stack, "/")
			s := text.String()
			text.Reset()
			i64 := func() (int64, error) {
				v, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return 0, bad("%q is not a number", s)
				}
				return v, nil
			}
			u64 := func() (uint64, error) {
				v, err := strconv.ParseUint(s, 10, 64)
				if err != nil {
					return 0, bad("%q is not an unsigned number", s)
				}
				return v, nil
			}
			var err error
			var v int64
			var u uint64
			switch path {
			case "fsimage/version/layoutVersion":
				v, err = i64()
				if err == nil && (v < math.MinInt32 || v > math.MaxInt32) {
					err = bad("%d does not fit 32 bits", v)
				}
				h.LayoutVersion = int32(v)
			case "fsimage/NameSection/namespaceId":
				v, err = i64()
				if err == nil && (v < math.MinInt32 || v > math.MaxInt32) {
					err = bad("%d does not fit 32 bits", v)
				}
				h.NamespaceID = int32(v)
			case "fsimage/NameSection/genstampV2":
				h.GenStamp, err = i64()
			case "fsimage/NameSection/lastAllocatedBlockId":
				h.LastBlockID, err = i64()
			case "fsimage/NameSection/txid":
				h.TxID, err = i64()
			case "fsimage/INodeSection/lastInodeId":
				h.LastInodeID, err = u64()
			case "fsimage/INodeSection/numInodes":
				numInodes, err = u64()
				haveNumInodes = true
			case "fsimage/INodeSection/inode":
				if !seen["id"] || !seen["type"] || !seen["permission"] {
					err = bad("an inode needs id, type and permission")
				}
				inodes = append(inodes, cur)
				cur = nil
			case "fsimage/INodeSection/inode/id":
				cur.ID, err = u64()
			case "fsimage/INodeSection/inode/storagePolicyId":
				v, err = i64()
				if err == nil && (v <= 0 || v > 255) {
					err = bad("storage policy id %d out of range", v)
				}
				cur.StoragePolicy = uint8(v)
			case "fsimage/INodeSection/inode/acls/acl":
				var u string
				if u, err = xmltext.Unescape(s); err == nil {
					var e op.ACLEntry
					if e, err = parseACL(u); err == nil {
						cur.ACL = append(cur.ACL, e)
					} else {
						err = bad("%v", err)
					}
				}
			case "fsimage/INodeSection/inode/xattrs/xattr/ns":
				if xa.NS, err = xattrNamespace(s); err != nil {
					err = bad("%v", err)
				}
			case "fsimage/INodeSection/inode/xattrs/xattr/name":
				xa.Name, err = xmltext.Unescape(s)
			case "fsimage/INodeSection/inode/xattrs/xattr/val":
				var u string
				u, err = xmltext.Unescape(s)
				xa.Value = append([]byte{}, u...)
			case "fsimage/INodeSection/inode/xattrs/xattr/valHex":
				var b []byte
				if b, err = hex.DecodeString(s); err != nil {
					err = bad("%q is not hex", s)
				}
				xa.Value = append([]byte{}, b...)
			case "fsimage/SnapshotSection/numSnapshots":
				// The XML lists the snapshots but not the inode versions
				// they keep: an image rebuilt from it would lose them.
				if u, err = u64(); err == nil && u > 0 {
					err = bad("the image has %d snapshots; ReverseXML cannot rebuild snapshots (delete them, or keep the binary image)", u)
				}
			case "fsimage/SnapshotSection/snapshottableDir/dir":
				var id uint64
				if id, err = u64(); err == nil {
					snapshottable[id] = true
				}
			case "fsimage/INodeSection/inode/type":
				switch s {
				case "DIRECTORY":
					cur.IsDir = true
				case "FILE":
				default:
					err = bad("type %q is not DIRECTORY or FILE", s)
				}
			case "fsimage/INodeSection/inode/name":
				var n string
				n, err = xmltext.Unescape(s)
				cur.Name = []byte(n)
			case "fsimage/INodeSection/inode/mtime":
				cur.Mtime, err = i64()
			case "fsimage/INodeSection/inode/atime":
				cur.Atime, err = i64()
			case "fsimage/INodeSection/inode/permission":
				cur.Perm, err = parsePerm(s)
				if err != nil {
					err = bad("%v", err)
				}
			case "fsimage/INodeSection/inode/nsquota":
				cur.NsQuota, err = i64()
			case "fsimage/INodeSection/inode/dsquota":
				cur.DsQuota, err = i64()
			case "fsimage/INodeSection/inode/replication":
				v, err = i64()
				if err == nil && (v < 0 || v > math.MaxUint16) {
					err = bad("replication %d out of range", v)
				}
				cur.Replication = uint16(v)
			case "fsimage/INodeSection/inode/preferredBlockSize":
				cur.BlockSize, err = i64()
			case "fsimage/INodeSection/inode/blocks/block/id":
				blk.ID, err = i64()
			case "fsimage/INodeSection/inode/blocks/block/genstamp":
				blk.GenStamp, err = i64()
			case "fsimage/INodeSection/inode/blocks/block/numBytes":
				blk.NumBytes, err = i64()
			case "fsimage/INodeSection/inode/file-under-construction/clientName":
				cur.UC.ClientName, err = xmltext.Unescape(s)
			case "fsimage/INodeSection/inode/file-under-construction/clientMachine":
				cur.UC.ClientMachine, err = xmltext.Unescape(s)
			case "fsimage/INodeDirectorySection/directory/parent":
				dirParent, err = u64()
			case "fsimage/INodeDirectorySection/directory/child":
				u, err = u64()
				if err == nil {
					if dirParent == 0 {
						err = bad("a child before its directory's parent")
					} else if _, dup := parent[u]; dup {
						err = bad("inode %d has two parents", u)
					}
					parent[u] = dirParent
				}
			}
			if err != nil {
				return [16]byte{}, err
			}
			if cur != nil && len(stack) == 4 {
				seen[stack[3]] = true
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(inodes) == 0 {
		return [16]byte{}, fmt.Errorf("%w: no inodes", ErrBadXML)
	}
	if haveNumInodes && numInodes != uint64(len(inodes)) {
		return [16]byte{}, fmt.Errorf("%w: numInodes is %d but %d inodes follow", ErrBadXML, numInodes, len(inodes))
	}
	h.NumInodes = uint64(len(inodes))
	for _, in := range inodes {
		if snapshottable[in.ID] {
			if !in.IsDir {
				return [16]byte{}, fmt.Errorf("%w: snapshottable inode %d is not a directory", ErrBadXML, in.ID)
			}
			in.Snapshottable = true
			delete(snapshottable, in.ID)
		}
	}
	for id := range snapshottable {
		return [16]byte{}, fmt.Errorf("%w: snapshottable directory %d is not an inode", ErrBadXML, id)
	}
	placed := make(map[uint64]bool, len(inodes))
	for i, in := range inodes {
		if i > 0 {
			p, ok := parent[in.ID]
			if !ok {
				return [16]byte{}, fmt.Errorf("%w: inode %d is in no directory", ErrBadXML, in.ID)
			}
			if !placed[p] {
				return [16]byte{}, fmt.Errorf("%w: inode %d comes before its parent %d", ErrBadXML, in.ID, p)
			}
			in.ParentID = p
		}
		if placed[in.ID] {
			return [16]byte{}, fmt.Errorf("%w: inode %d appears twice", ErrBadXML, in.ID)
		}
		if in.IsDir {
			placed[in.ID] = true
		} else {
			placed[in.ID] = false
		}
	}
	iw, err := fsimage.NewWriter(w, h)
	if err != nil {
		return [16]byte{}, err
	}
	for _, in := range inodes {
		if err := iw.Write(in); err != nil {
			return [16]byte{}, err
		}
	}
	return iw.Close()
}

// parsePerm reads "user:group:0755".
func parsePerm(s string) (op.Perm, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return op.Perm{}, fmt.Errorf("permission %q is not user:group:mode", s)
	}
	j := strings.LastIndexByte(s[:i], ':')
	if j < 0 {
		return op.Perm{}, fmt.Errorf("permission %q is not user:group:mode", s)
	}
	m, err := strconv.ParseUint(s[i+1:], 8, 16)
	if err != nil {
		return op.Perm{}, fmt.Errorf("permission %q: mode %q is not octal", s, s[i+1:])
	}
	u, err := xmltext.Unescape(s[:j])
	if err != nil {
		return op.Perm{}, err
	}
	g, err := xmltext.Unescape(s[j+1 : i])
	if err != nil {
		return op.Perm{}, err
	}
	return op.Perm{User: u, Group: g, Mode: uint16(m)}, nil
}
