package oev

import (
	"bufio"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/xmltext"
)

// Limits on XML input: far above what a segment's XML holds, they only
// stop a hostile document from exhausting memory before it is rejected.
const (
	maxDepth = 8
	maxKids  = 1 << 20
)

// Record is one edit-log record.
type Record struct {
	TxID int64
	Op   op.Op
}

// readTree reads the document's root element.
func readTree(r io.Reader) (*elem, error) {
	d := xml.NewDecoder(r)
	d.Strict = true
	var stack []*elem
	var root *elem
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadXML, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(t.Attr) > 0 {
				return nil, fmt.Errorf("%w: <%s> has attributes", ErrBadXML, t.Name.Local)
			}
			e := &elem{name: t.Name.Local}
			if len(stack) == 0 {
				if root != nil {
					return nil, fmt.Errorf("%w: more than one root element", ErrBadXML)
				}
				root = e
			} else {
				p := stack[len(stack)-1]
				if strings.TrimSpace(p.text) != "" {
					return nil, fmt.Errorf("%w: <%s> mixes text and elements", ErrBadXML, p.name)
				}
				if len(p.kids) >= maxKids {
					return nil, fmt.Errorf("%w: <%s> has more than %d children", ErrBadXML, p.name, maxKids)
				}
				p.kids = append(p.kids, e)
			}
			if len(stack) >= maxDepth {
				return nil, fmt.Errorf("%w: elements nested deeper than %d", ErrBadXML, maxDepth)
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				if strings.TrimSpace(string(t)) != "" {
					return nil, fmt.Errorf("%w: text outside the root element", ErrBadXML)
				}
				continue
			}
			p := stack[len(stack)-1]
			if len(p.kids) > 0 {
				if strings.TrimSpace(string(t)) != "" {
					return nil, fmt.Errorf("%w: <%s> mixes text and elements", ErrBadXML, p.name)
				}
				continue
			}
			p.text += string(t)
		}
	}
	if root == nil {
		return nil, fmt.Errorf("%w: no root element", ErrBadXML)
	}
	return root, nil
}

// fields reads the children of one DATA element by name.
type fields struct {
	e   *elem
	err error
}

func (f *fields) fail(format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf(format, args...)
	}
}

func (f *fields) child(name string) *elem {
	for _, k := range f.e.kids {
		if k.name == name {
			return k
		}
	}
	f.fail("no <%s>", name)
	return nil
}

func (f *fields) str(name string) string {
	k := f.child(name)
	if k == nil {
		return ""
	}
	if k.kids != nil {
		f.fail("<%s> holds elements, not text", name)
		return ""
	}
	s, err := xmltext.Unescape(k.text)
	if err != nil {
		f.fail("<%s>: %v", name, err)
	}
	return s
}

func (f *fields) int(name string, lo, hi int64) int64 {
	s := f.str(name)
	if f.err != nil {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < lo || v > hi {
		f.fail("<%s>%s</%s> is not a number in [%d, %d]", name, s, name, lo, hi)
		return 0
	}
	return v
}

func (f *fields) u64(name string) uint64 {
	s := f.str(name)
	if f.err != nil {
		return 0
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		f.fail("<%s>%s</%s> is not an unsigned number", name, s, name)
	}
	return v
}

func (f *fields) i64(name string) int64 { return f.int(name, math.MinInt64, math.MaxInt64) }

func (f *fields) u16(name string) uint16 { return uint16(f.int(name, 0, math.MaxUint16)) }

func (f *fields) boolean(name string) bool {
	switch s := f.str(name); s {
	case "true":
		return true
	case "false":
		return false
	default:
		if f.err == nil {
			f.fail("<%s>%s</%s> is not true or false", name, s, name)
		}
	}
	return false
}

func (f *fields) sub(e *elem) *fields {
	g := &fields{e: e}
	return g
}

func (f *fields) perm() op.Perm {
	k := f.child("PERMISSION_STATUS")
	if k == nil {
		return op.Perm{}
	}
	g := f.sub(k)
	p := op.Perm{User: g.str("USERNAME"), Group: g.str("GROUPNAME"), Mode: g.u16("MODE")}
	if g.err != nil {
		f.fail("<PERMISSION_STATUS>: %v", g.err)
	}
	return p
}

func (f *fields) block(k *elem) op.Block {
	g := f.sub(k)
	b := op.Block{ID: g.i64("BLOCK_ID"), NumBytes: g.i64("NUM_BYTES"), GenStamp: g.i64("GENSTAMP")}
	if g.err != nil {
		f.fail("<BLOCK>: %v", g.err)
	}
	return b
}

func (f *fields) blocks() []op.Block {
	var out []op.Block
	for _, k := range f.e.kids {
		if k.name == "BLOCK" {
			out = append(out, f.block(k))
		}
	}
	return out
}

// enumIndex is the index of name in names (Hadoop's enum name), failing
// f if it is none of them.
func (f *fields) enumIndex(what, name string, names []string) uint8 {
	for i, n := range names {
		if n == name && n != "" {
			return uint8(i)
		}
	}
	f.fail("<%s>%s</%s> is not one of %v", what, name, what, names)
	return 0
}

// optional is the unescaped text of child name, "" when there is none.
func (f *fields) optional(name string) string {
	for _, k := range f.e.kids {
		if k.name == name {
			return f.str(name)
		}
	}
	return ""
}

func (f *fields) xattrs() []op.XAttr {
	var out []op.XAttr
	for _, k := range f.e.kids {
		if k.name != "XATTR" {
			continue
		}
		g := f.sub(k)
		x := op.XAttr{NS: g.enumIndex("NAMESPACE", g.str("NAMESPACE"), xattrNamespaces), Name: g.str("NAME")}
		if hasChild(k, "VALUE") {
			v := g.str("VALUE")
			b, err := hex.DecodeString(strings.TrimPrefix(v, "0x"))
			if err != nil || !strings.HasPrefix(v, "0x") {
				g.fail("<VALUE>%s</VALUE> is not 0x and hex digits", v)
			}
			x.Value = append([]byte{}, b...)
		}
		if g.err != nil {
			f.fail("<XATTR>: %v", g.err)
		}
		out = append(out, x)
	}
	return out
}

func (f *fields) aclEntries() []op.ACLEntry {
	var out []op.ACLEntry
	for _, k := range f.e.kids {
		if k.name != "ENTRY" {
			continue
		}
		g := f.sub(k)
		a := op.ACLEntry{Scope: g.enumIndex("SCOPE", g.str("SCOPE"), aclScopes), Type: g.enumIndex("TYPE", g.str("TYPE"), aclTypes),
			Name: g.optional("NAME")}
		perm := g.str("PERM")
		if len(perm) != 3 {
			g.fail("<PERM>%s</PERM> is not like rwx", perm)
		}
		for i := 0; i < len(perm) && i < 3; i++ {
			switch perm[i] {
			case "rwx"[i]:
				a.Perm |= 4 >> i
			case '-':
			default:
				g.fail("<PERM>%s</PERM> is not like rwx", perm)
			}
		}
		if g.err != nil {
			f.fail("<ENTRY>: %v", g.err)
		}
		out = append(out, a)
	}
	return out
}

func hasChild(e *elem, name string) bool {
	for _, k := range e.kids {
		if k.name == name {
			return true
		}
	}
	return false
}

// dtid reads a <DELEGATION_TOKEN_IDENTIFIER>.
func (f *fields) dtid() op.DelegationTokenID {
	c := f.child("DELEGATION_TOKEN_IDENTIFIER")
	if c == nil {
		return op.DelegationTokenID{}
	}
	k := f.sub(c)
	id := op.DelegationTokenID{SequenceNumber: int32(k.int("SEQUENCE_NUMBER", math.MinInt32, math.MaxInt32)),
		Owner: k.str("OWNER"), Renewer: k.str("RENEWER"), RealUser: k.str("REALUSER"), IssueDate: k.i64("ISSUE_DATE"),
		MaxDate: k.i64("MAX_DATE"), MasterKeyID: int32(k.int("MASTER_KEY_ID", math.MinInt32, math.MaxInt32))}
	if k.err != nil {
		f.fail("%v", k.err)
	}
	return id
}

func (f *fields) rpc() op.RPCID {
	id, err := parseClientID(f.str("RPC_CLIENTID"))
	if err != nil {
		f.fail("<RPC_CLIENTID>: %v", err)
	}
	return op.RPCID{ClientID: id, CallID: int32(f.int("RPC_CALLID", math.MinInt32, math.MaxInt32))}
}

// opcodes maps Hadoop's opcode names to the op types this viewer reads.
var opcodes = map[string]func(f *fields) op.Op{
	"OP_ADD": func(f *fields) op.Op {
		return &op.Add{InodeID: f.u64("INODEID"), Path: f.str("PATH"), Replication: f.u16("REPLICATION"),
			Mtime: f.i64("MTIME"), Atime: f.i64("ATIME"), BlockSize: f.i64("BLOCKSIZE"), ClientName: f.str("CLIENT_NAME"),
			ClientMachine: f.str("CLIENT_MACHINE"), Overwrite: f.boolean("OVERWRITE"), Perm: f.perm(), RPC: f.rpc()}
	},
	"OP_CLOSE": func(f *fields) op.Op {
		return &op.Close{Path: f.str("PATH"), Mtime: f.i64("MTIME"), Atime: f.i64("ATIME"), Blocks: f.blocks()}
	},
	"OP_RENAME_OLD": func(f *fields) op.Op {
		return &op.RenameOld{Src: f.str("SRC"), Dst: f.str("DST"), Mtime: f.i64("TIMESTAMP"), RPC: f.rpc()}
	},
	"OP_DELETE": func(f *fields) op.Op {
		return &op.Delete{Path: f.str("PATH"), Mtime: f.i64("TIMESTAMP"), RPC: f.rpc()}
	},
	"OP_MKDIR": func(f *fields) op.Op {
		return &op.Mkdir{InodeID: f.u64("INODEID"), Path: f.str("PATH"), Mtime: f.i64("TIMESTAMP"), Perm: f.perm()}
	},
	"OP_SET_REPLICATION": func(f *fields) op.Op {
		return &op.SetReplication{Path: f.str("PATH"), Replication: f.u16("REPLICATION")}
	},
	"OP_SET_PERMISSIONS": func(f *fields) op.Op {
		return &op.SetPermissions{Path: f.str("SRC"), Mode: f.u16("MODE")}
	},
	"OP_SET_OWNER": func(f *fields) op.Op {
		return &op.SetOwner{Path: f.str("SRC"), User: f.str("USERNAME"), Group: f.str("GROUPNAME")}
	},
	"OP_TIMES": func(f *fields) op.Op {
		return &op.Times{Path: f.str("PATH"), Mtime: f.i64("MTIME"), Atime: f.i64("ATIME")}
	},
	"OP_SET_QUOTA": func(f *fields) op.Op {
		return &op.SetQuota{Path: f.str("SRC"), NsQuota: f.i64("NSQUOTA"), DsQuota: f.i64("DSQUOTA")}
	},
	"OP_RENAME": func(f *fields) op.Op {
		o := &op.Rename{Src: f.str("SRC"), Dst: f.str("DST"), Mtime: f.i64("TIMESTAMP")}
		switch opts := f.str("OPTIONS"); opts {
		case "NONE":
		case "OVERWRITE":
			o.Overwrite = true
		default:
			if f.err == nil {
				f.fail("<OPTIONS>%s</OPTIONS> is not NONE or OVERWRITE", opts)
			}
		}
		o.RPC = f.rpc()
		return o
	},
	"OP_CONCAT_DELETE": func(f *fields) op.Op {
		o := &op.Concat{Target: f.str("TRG"), Mtime: f.i64("TIMESTAMP")}
		if k := f.child("SOURCES"); k != nil {
			g := f.sub(k)
			for i := range k.kids {
				o.Srcs = append(o.Srcs, g.str("SOURCE"+strconv.Itoa(i+1)))
			}
			if g.err != nil {
				f.fail("<SOURCES>: %v", g.err)
			}
		}
		o.RPC = f.rpc()
		return o
	},
	"OP_REASSIGN_LEASE": func(f *fields) op.Op {
		return &op.ReassignLease{Holder: f.str("LEASEHOLDER"), Path: f.str("PATH"), NewHolder: f.str("NEWHOLDER")}
	},
	"OP_START_LOG_SEGMENT": func(*fields) op.Op { return &op.StartLogSegment{} },
	"OP_END_LOG_SEGMENT":   func(*fields) op.Op { return &op.EndLogSegment{} },
	"OP_UPDATE_BLOCKS": func(f *fields) op.Op {
		return &op.UpdateBlocks{Path: f.str("PATH"), Blocks: f.blocks(), RPC: f.rpc()}
	},
	"OP_SET_GENSTAMP_V2":   func(f *fields) op.Op { return &op.SetGenstamp{GenStamp: f.i64("GENSTAMPV2")} },
	"OP_ALLOCATE_BLOCK_ID": func(f *fields) op.Op { return &op.AllocateBlockID{BlockID: f.i64("BLOCK_ID")} },
	"OP_ADD_BLOCK": func(f *fields) op.Op {
		o := &op.AddBlock{Path: f.str("PATH")}
		switch bs := f.blocks(); len(bs) {
		case 1:
			o.Last = bs[0]
		case 2:
			o.Penultimate, o.Last = &bs[0], bs[1]
		default:
			f.fail("%d <BLOCK> elements, want 1 or 2", len(bs))
		}
		return o
	},
	"OP_TRUNCATE": func(f *fields) op.Op {
		o := &op.Truncate{Path: f.str("SRC"), ClientName: f.str("CLIENTNAME"), ClientMachine: f.str("CLIENTMACHINE"),
			NewLength: f.i64("NEWLENGTH"), Mtime: f.i64("TIMESTAMP")}
		switch bs := f.blocks(); len(bs) {
		case 0:
		case 1:
			o.TruncateBlock = &bs[0]
		default:
			f.fail("%d <BLOCK> elements, want at most 1", len(bs))
		}
		o.RPC = f.rpc()
		return o
	},
	"OP_SET_XATTR": func(f *fields) op.Op {
		return &op.SetXAttr{Path: f.str("SRC"), XAttrs: f.xattrs(), RPC: f.rpc()}
	},
	"OP_REMOVE_XATTR": func(f *fields) op.Op {
		return &op.RemoveXAttr{Path: f.str("SRC"), XAttrs: f.xattrs(), RPC: f.rpc()}
	},
	"OP_ALLOW_SNAPSHOT":    func(f *fields) op.Op { return &op.AllowSnapshot{Path: f.str("SNAPSHOTROOT")} },
	"OP_DISALLOW_SNAPSHOT": func(f *fields) op.Op { return &op.DisallowSnapshot{Path: f.str("SNAPSHOTROOT")} },
	"OP_CREATE_SNAPSHOT": func(f *fields) op.Op {
		return &op.CreateSnapshot{Root: f.str("SNAPSHOTROOT"), Name: f.str("SNAPSHOTNAME"), Mtime: f.i64("MTIME"), RPC: f.rpc()}
	},
	"OP_DELETE_SNAPSHOT": func(f *fields) op.Op {
		return &op.DeleteSnapshot{Root: f.str("SNAPSHOTROOT"), Name: f.str("SNAPSHOTNAME"), Mtime: f.i64("MTIME"), RPC: f.rpc()}
	},
	"OP_RENAME_SNAPSHOT": func(f *fields) op.Op {
		return &op.RenameSnapshot{Root: f.str("SNAPSHOTROOT"), OldName: f.str("SNAPSHOTOLDNAME"), NewName: f.str("SNAPSHOTNEWNAME"),
			Mtime: f.i64("MTIME"), RPC: f.rpc()}
	},
	"OP_SET_STORAGE_POLICY": func(f *fields) op.Op {
		return &op.SetStoragePolicy{Path: f.str("PATH"), PolicyID: uint8(f.int("POLICYID", 0, math.MaxUint8))}
	},
	"OP_SET_ACL": func(f *fields) op.Op { return &op.SetACL{Path: f.str("SRC"), Entries: f.aclEntries()} },
	"OP_GET_DELEGATION_TOKEN": func(f *fields) op.Op {
		return &op.GetDelegationToken{ID: f.dtid(), Expiry: f.i64("EXPIRY_TIME")}
	},
	"OP_RENEW_DELEGATION_TOKEN": func(f *fields) op.Op {
		return &op.RenewDelegationToken{ID: f.dtid(), Expiry: f.i64("EXPIRY_TIME")}
	},
	"OP_CANCEL_DELEGATION_TOKEN": func(f *fields) op.Op { return &op.CancelDelegationToken{ID: f.dtid()} },
	"OP_UPDATE_MASTER_KEY": func(f *fields) op.Op {
		c := f.child("DELEGATION_KEY")
		if c == nil {
			return &op.UpdateMasterKey{}
		}
		k := f.sub(c)
		o := &op.UpdateMasterKey{KeyID: int32(k.int("KEY_ID", math.MinInt32, math.MaxInt32)), Expiry: k.i64("EXPIRY_DATE")}
		secret, err := hex.DecodeString(k.str("KEY"))
		if err != nil {
			f.fail("<KEY>: %v", err)
		}
		o.Secret = secret
		if k.err != nil {
			f.fail("%v", k.err)
		}
		return o
	},
	"OP_APPEND": func(f *fields) op.Op {
		return &op.Append{Path: f.str("PATH"), ClientName: f.str("CLIENT_NAME"), ClientMachine: f.str("CLIENT_MACHINE"),
			NewBlock: f.boolean("NEWBLOCK"), RPC: f.rpc()}
	},
}

// ParseXML reads an edits XML document: the layout version and the
// records, in document order.
func ParseXML(r io.Reader) (version int32, recs []Record, err error) {
	root, err := readTree(bufio.NewReaderSize(r, 64<<10))
	if err != nil {
		return 0, nil, err
	}
	if root.name != "EDITS" {
		return 0, nil, fmt.Errorf("%w: the root element is <%s>, not <EDITS>", ErrBadXML, root.name)
	}
	top := &fields{e: root}
	v := top.int("EDITS_VERSION", 1, math.MaxInt32)
	if top.err != nil {
		return 0, nil, fmt.Errorf("%w: %v", ErrBadXML, top.err)
	}
	for i, k := range root.kids {
		switch k.name {
		case "EDITS_VERSION":
			continue
		case "RECORD":
		default:
			return 0, nil, fmt.Errorf("%w: unexpected <%s> in <EDITS>", ErrBadXML, k.name)
		}
		rf := &fields{e: k}
		code := rf.str("OPCODE")
		data := rf.child("DATA")
		if rf.err != nil {
			return 0, nil, fmt.Errorf("%w: record %d: %v", ErrBadXML, i, rf.err)
		}
		mk, ok := opcodes[code]
		if !ok {
			return 0, nil, fmt.Errorf("%w: record %d: opcode %q is not one this build writes", ErrBadXML, i, code)
		}
		f := &fields{e: data}
		txid := f.int("TXID", 1, math.MaxInt64)
		o := mk(f)
		if f.err != nil {
			return 0, nil, fmt.Errorf("%w: record %d (%s, txid %d): %v", ErrBadXML, i, code, txid, f.err)
		}
		recs = append(recs, Record{TxID: txid, Op: o})
	}
	return int32(v), recs, nil
}

// WriteSegment writes recs as a segment of the current layout version
// (editlog.LayoutVersion); version is what the XML said, and any other
// version is an error, since this build writes only its own.
func WriteSegment(w io.Writer, version int32, recs []Record) error {
	if version != editlog.LayoutVersion {
		return fmt.Errorf("oev: the XML is of layout version %d; this build writes only version %d", version, editlog.LayoutVersion)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	buf := editlog.AppendSegmentHeader(nil)
	for _, r := range recs {
		var err error
		buf, err = editlog.EncodeRecord(buf, r.TxID, r.Op)
		if err != nil {
			return fmt.Errorf("oev: txid %d: %w", r.TxID, err)
		}
		if len(buf) > 64<<10 {
			if _, err := bw.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	return bw.Flush()
}

// FixTxIDs renumbers recs from the first one's txid up, one by one.
func FixTxIDs(recs []Record) {
	for i := range recs {
		if i > 0 {
			recs[i].TxID = recs[i-1].TxID + 1
		}
	}
}

// XMLToSegment is ParseXML then WriteSegment.
func XMLToSegment(r io.Reader, w io.Writer) error {
	v, recs, err := ParseXML(r)
	if err != nil {
		return err
	}
	return WriteSegment(w, v, recs)
}
