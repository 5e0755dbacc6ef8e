package oev

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/xmltext"
)

// Errors of this package.
var (
	// ErrBadXML: the XML is not an edits document this package writes.
	ErrBadXML = errors.New("oev: bad edits XML")
	// ErrUnsupportedOp: an op type this viewer has no XML form for.
	ErrUnsupportedOp = errors.New("oev: op not supported")
)

// elem is one XML element: text or children, never both.
type elem struct {
	name string
	text string
	kids []*elem
}

func leaf(name, text string) *elem { return &elem{name: name, text: text} }

func num(name string, v int64) *elem { return leaf(name, strconv.FormatInt(v, 10)) }

// dtidElem is a delegation token's identifier as Hadoop's XML has it.
func dtidElem(id op.DelegationTokenID) *elem {
	return &elem{name: "DELEGATION_TOKEN_IDENTIFIER", kids: []*elem{leaf("KIND", "HDFS_DELEGATION_TOKEN"),
		num("SEQUENCE_NUMBER", int64(id.SequenceNumber)), leaf("OWNER", id.Owner), leaf("RENEWER", id.Renewer),
		leaf("REALUSER", id.RealUser), num("ISSUE_DATE", id.IssueDate), num("MAX_DATE", id.MaxDate),
		num("MASTER_KEY_ID", int64(id.MasterKeyID))}}
}

func boolean(name string, v bool) *elem { return leaf(name, strconv.FormatBool(v)) }

func permElem(p op.Perm) *elem {
	return &elem{name: "PERMISSION_STATUS", kids: []*elem{
		leaf("USERNAME", p.User), leaf("GROUPNAME", p.Group), num("MODE", int64(p.Mode))}}
}

func blockElem(b op.Block) *elem {
	return &elem{name: "BLOCK", kids: []*elem{num("BLOCK_ID", b.ID), num("NUM_BYTES", b.NumBytes), num("GENSTAMP", b.GenStamp)}}
}

// Names of the xattr namespaces, ACL scopes and ACL types as Hadoop's
// enums print them, indexed by the op package's numbers.
var (
	xattrNamespaces = []string{op.XAttrUser: "USER", op.XAttrTrusted: "TRUSTED", op.XAttrSecurity: "SECURITY",
		op.XAttrSystem: "SYSTEM", op.XAttrRaw: "RAW"}
	aclScopes = []string{op.ACLAccess: "ACCESS", op.ACLDefault: "DEFAULT"}
	aclTypes  = []string{op.ACLUser: "USER", op.ACLGroup: "GROUP", op.ACLMask: "MASK", op.ACLOther: "OTHER"}
)

// xattrElems writes each attribute as Hadoop does: <XATTR> with its
// namespace, name and, if it has one, its value in hex ("0x…").
func xattrElems(xs []op.XAttr) []*elem {
	var out []*elem
	for _, x := range xs {
		ns := strconv.Itoa(int(x.NS))
		if int(x.NS) < len(xattrNamespaces) {
			ns = xattrNamespaces[x.NS]
		}
		k := []*elem{leaf("NAMESPACE", ns), leaf("NAME", x.Name)}
		if x.Value != nil {
			k = append(k, leaf("VALUE", "0x"+hex.EncodeToString(x.Value)))
		}
		out = append(out, &elem{name: "XATTR", kids: k})
	}
	return out
}

// aclPerm is an entry's permission as Hadoop's FsAction symbol ("r-x").
func aclPerm(p uint8) string {
	b := []byte("---")
	for i, c := range "rwx" {
		if p&(4>>i) != 0 {
			b[i] = byte(c)
		}
	}
	return string(b)
}

func rpcElems(r op.RPCID) []*elem {
	return []*elem{leaf("RPC_CLIENTID", clientIDString(r.ClientID)), num("RPC_CALLID", int64(r.CallID))}
}

// clientIDString writes a client id as Hadoop's ClientId.toString: a UUID
// for 16 bytes, empty for none; other lengths (not written by this
// project) as 0x and hex so that they survive.
func clientIDString(id []byte) string {
	switch len(id) {
	case 0:
		return ""
	case 16:
		h := hex.EncodeToString(id)
		return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	}
	return "0x" + hex.EncodeToString(id)
}

func parseClientID(s string) ([]byte, error) {
	switch {
	case s == "":
		return nil, nil
	case strings.HasPrefix(s, "0x"):
		b, err := hex.DecodeString(s[2:])
		if err != nil || len(b) == 0 || len(b) == 16 {
			return nil, fmt.Errorf("bad client id %q", s)
		}
		return b, nil
	}
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return nil, fmt.Errorf("client id %q is not a UUID", s)
	}
	b, err := hex.DecodeString(s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36])
	if err != nil || strings.ToLower(s) != s {
		return nil, fmt.Errorf("client id %q is not a lower-case UUID", s)
	}
	return b, nil
}

// opElems returns the DATA children of o after TXID, in Hadoop's order.
func opElems(o op.Op) ([]*elem, error) {
	var e []*elem
	switch o := o.(type) {
	case *op.Add:
		e = []*elem{leaf("INODEID", strconv.FormatUint(o.InodeID, 10)), leaf("PATH", o.Path), num("REPLICATION", int64(o.Replication)),
			num("MTIME", o.Mtime), num("ATIME", o.Atime), num("BLOCKSIZE", o.BlockSize),
			leaf("CLIENT_NAME", o.ClientName), leaf("CLIENT_MACHINE", o.ClientMachine), boolean("OVERWRITE", o.Overwrite),
			permElem(o.Perm)}
	case *op.Close:
		e = []*elem{leaf("PATH", o.Path), num("MTIME", o.Mtime), num("ATIME", o.Atime)}
		for _, b := range o.Blocks {
			e = append(e, blockElem(b))
		}
	case *op.RenameOld:
		e = []*elem{leaf("SRC", o.Src), leaf("DST", o.Dst), num("TIMESTAMP", o.Mtime)}
	case *op.Delete:
		e = []*elem{leaf("PATH", o.Path), num("TIMESTAMP", o.Mtime)}
	case *op.Mkdir:
		e = []*elem{leaf("INODEID", strconv.FormatUint(o.InodeID, 10)), leaf("PATH", o.Path), num("TIMESTAMP", o.Mtime), permElem(o.Perm)}
	case *op.SetReplication:
		e = []*elem{leaf("PATH", o.Path), num("REPLICATION", int64(o.Replication))}
	case *op.SetPermissions:
		e = []*elem{leaf("SRC", o.Path), num("MODE", int64(o.Mode))}
	case *op.SetOwner:
		e = []*elem{leaf("SRC", o.Path), leaf("USERNAME", o.User), leaf("GROUPNAME", o.Group)}
	case *op.Times:
		e = []*elem{leaf("PATH", o.Path), num("MTIME", o.Mtime), num("ATIME", o.Atime)}
	case *op.SetQuota:
		e = []*elem{leaf("SRC", o.Path), num("NSQUOTA", o.NsQuota), num("DSQUOTA", o.DsQuota)}
	case *op.Rename:
		opts := "NONE"
		if o.Overwrite {
			opts = "OVERWRITE"
		}
		e = []*elem{leaf("SRC", o.Src), leaf("DST", o.Dst), num("TIMESTAMP", o.Mtime), leaf("OPTIONS", opts)}
	case *op.Concat:
		srcs := &elem{name: "SOURCES"}
		for i, s := range o.Srcs {
			srcs.kids = append(srcs.kids, leaf("SOURCE"+strconv.Itoa(i+1), s))
		}
		e = []*elem{leaf("TRG", o.Target), num("TIMESTAMP", o.Mtime), srcs}
	case *op.ReassignLease:
		e = []*elem{leaf("LEASEHOLDER", o.Holder), leaf("PATH", o.Path), leaf("NEWHOLDER", o.NewHolder)}
	case *op.StartLogSegment, *op.EndLogSegment:
	case *op.UpdateBlocks:
		e = []*elem{leaf("PATH", o.Path)}
		for _, b := range o.Blocks {
			e = append(e, blockElem(b))
		}
	case *op.SetGenstamp:
		e = []*elem{num("GENSTAMPV2", o.GenStamp)}
	case *op.AllocateBlockID:
		e = []*elem{num("BLOCK_ID", o.BlockID)}
	case *op.AddBlock:
		e = []*elem{leaf("PATH", o.Path)}
		if o.Penultimate != nil {
			e = append(e, blockElem(*o.Penultimate))
		}
		e = append(e, blockElem(o.Last))
	case *op.Truncate:
		e = []*elem{leaf("SRC", o.Path), leaf("CLIENTNAME", o.ClientName), leaf("CLIENTMACHINE", o.ClientMachine),
			num("NEWLENGTH", o.NewLength), num("TIMESTAMP", o.Mtime)}
		if o.TruncateBlock != nil {
			e = append(e, blockElem(*o.TruncateBlock))
		}
	case *op.Append:
		e = []*elem{leaf("PATH", o.Path), leaf("CLIENT_NAME", o.ClientName), leaf("CLIENT_MACHINE", o.ClientMachine),
			boolean("NEWBLOCK", o.NewBlock)}
	case *op.SetXAttr:
		e = append([]*elem{leaf("SRC", o.Path)}, xattrElems(o.XAttrs)...)
	case *op.RemoveXAttr:
		e = append([]*elem{leaf("SRC", o.Path)}, xattrElems(o.XAttrs)...)
	case *op.AllowSnapshot:
		e = []*elem{leaf("SNAPSHOTROOT", o.Path)}
	case *op.DisallowSnapshot:
		e = []*elem{leaf("SNAPSHOTROOT", o.Path)}
	case *op.CreateSnapshot:
		e = []*elem{leaf("SNAPSHOTROOT", o.Root), leaf("SNAPSHOTNAME", o.Name), num("MTIME", o.Mtime)}
	case *op.DeleteSnapshot:
		e = []*elem{leaf("SNAPSHOTROOT", o.Root), leaf("SNAPSHOTNAME", o.Name), num("MTIME", o.Mtime)}
	case *op.RenameSnapshot:
		e = []*elem{leaf("SNAPSHOTROOT", o.Root), leaf("SNAPSHOTOLDNAME", o.OldName), leaf("SNAPSHOTNEWNAME", o.NewName), num("MTIME", o.Mtime)}
	case *op.SetStoragePolicy:
		e = []*elem{leaf("PATH", o.Path), num("POLICYID", int64(o.PolicyID))}
	case *op.GetDelegationToken:
		e = []*elem{dtidElem(o.ID), num("EXPIRY_TIME", o.Expiry)}
	case *op.RenewDelegationToken:
		e = []*elem{dtidElem(o.ID), num("EXPIRY_TIME", o.Expiry)}
	case *op.CancelDelegationToken:
		e = []*elem{dtidElem(o.ID)}
	case *op.UpdateMasterKey:
		e = []*elem{{name: "DELEGATION_KEY", kids: []*elem{num("KEY_ID", int64(o.KeyID)), num("EXPIRY_DATE", o.Expiry),
			leaf("KEY", hex.EncodeToString(o.Secret))}}}
	case *op.SetACL:
		e = []*elem{leaf("SRC", o.Path)}
		for _, a := range o.Entries {
			k := []*elem{leaf("SCOPE", aclScopes[a.Scope&1]), leaf("TYPE", aclTypes[a.Type&3])}
			if a.Name != "" {
				k = append(k, leaf("NAME", a.Name))
			}
			e = append(e, &elem{name: "ENTRY", kids: append(k, leaf("PERM", aclPerm(a.Perm)))})
		}
	default:
		return nil, fmt.Errorf("%w: %v (%T) has no XML form", ErrUnsupportedOp, o.Code(), o)
	}
	if w, ok := o.(op.WithRPC); ok {
		e = append(e, rpcElems(*w.RPCIDPtr())...)
	}
	return e, nil
}

func writeElem(w *bufio.Writer, e *elem, depth int) {
	ind := strings.Repeat("  ", depth)
	if e.kids == nil {
		fmt.Fprintf(w, "%s<%s>%s</%s>\n", ind, e.name, xmltext.Escape(e.text), e.name)
		return
	}
	fmt.Fprintf(w, "%s<%s>\n", ind, e.name)
	for _, k := range e.kids {
		writeElem(w, k, depth+1)
	}
	fmt.Fprintf(w, "%s</%s>\n", ind, e.name)
}

// SegmentToXML reads one edit-log segment from r (name is used in errors)
// and writes its XML to w, record by record. A torn last record (the end
// of an in-progress segment whose writer stopped mid-write) ends the
// document after the last whole record, and SegmentToXML returns the
// *editlog.TornRecordError so that the caller can say so; damage anywhere
// else is an error naming the offset, after the XML of every whole record
// before it.
func SegmentToXML(r io.Reader, name string, w io.Writer) error {
	return SegmentToXMLWith(r, name, w, Options{})
}

// Options change what the viewer writes.
type Options struct {
	// FixTxIDs renumbers the records from the first one's txid up, one by
	// one, so that the output has no gaps (hdfs oev -f).
	FixTxIDs bool
	// Recover skips damaged records instead of stopping at the first one
	// (hdfs oev -r), for segments of the current layout version; the
	// skipped ranges are returned in a *RecoveredError.
	Recover bool
}

// Skipped is a damaged range a recovery-mode read skipped.
type Skipped struct {
	Offset, Length int64
	Reason         string
}

// RecoveredError reports the ranges a recovery-mode read skipped; the XML
// holds every record found around them.
type RecoveredError struct {
	File    string
	Skipped []Skipped
}

func (e *RecoveredError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "oev: %s: recovery skipped %d damaged range(s):", e.File, len(e.Skipped))
	for _, s := range e.Skipped {
		fmt.Fprintf(&b, " %d bytes at offset %d (%s);", s.Length, s.Offset, s.Reason)
	}
	return strings.TrimSuffix(b.String(), ";")
}

// SegmentToXMLWith is SegmentToXML with options.
func SegmentToXMLWith(r io.Reader, name string, w io.Writer, opts Options) error {
	version, err := editlog.ReadSegmentHeader(r, name)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<EDITS>\n  <EDITS_VERSION>%d</EDITS_VERSION>\n", version)
	var next int64
	emit := func(txid int64, o op.Op) error {
		if opts.FixTxIDs {
			if next == 0 {
				next = txid
			}
			txid, next = next, next+1
		}
		kids, err := opElems(o)
		if err != nil {
			return fmt.Errorf("txid %d: %w", txid, err)
		}
		rec := &elem{name: "RECORD", kids: []*elem{leaf("OPCODE", o.Code().String()),
			{name: "DATA", kids: append([]*elem{num("TXID", txid)}, kids...)}}}
		writeElem(bw, rec, 1)
		return nil
	}
	var end error
	if opts.Recover && version == editlog.LayoutVersion {
		end = recoverRecords(r, name, emit)
	} else {
		end = decodeRecords(r, name, version, emit)
	}
	var te *editlog.TornRecordError
	var re *RecoveredError
	if end != nil && !errors.As(end, &te) && !errors.As(end, &re) {
		bw.Flush()
		return end
	}
	bw.WriteString("</EDITS>\n")
	if err := bw.Flush(); err != nil {
		return err
	}
	return end
}

// decodeRecords passes every record of the segment body in r to emit; a
// torn tail ends it with its *editlog.TornRecordError.
func decodeRecords(r io.Reader, name string, version int32, emit func(int64, op.Op) error) error {
	d := editlog.NewDecoder(r, name, editlog.SegmentHeaderSize, version)
	for {
		txid, o, err := d.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := emit(txid, o); err != nil {
			return err
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r *bytes.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// recoverRecords is decodeRecords in recovery mode (oev -r): a damaged
// record is skipped byte by byte until a whole record with a checksum that
// holds and a txid above the last one starts; the skipped ranges come back
// in a *RecoveredError.
func recoverRecords(r io.Reader, name string, emit func(int64, op.Op) error) error {
	body, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	var skipped []Skipped
	var last int64
	off := int64(0)
	var skipFrom int64 = -1
	var skipWhy string
	for off < int64(len(body)) {
		rest := body[off:]
		if len(rest) < editlog.RecordHeaderSize+editlog.RecordTrailerSize ||
			int64(binary.BigEndian.Uint32(rest[9:13])) > int64(len(rest)-editlog.RecordHeaderSize-editlog.RecordTrailerSize) {
			// No whole record can start here: its length runs past the end.
			if skipFrom < 0 {
				skipFrom, skipWhy = off, "a record cut short by the end of the file"
			}
			off++
			continue
		}
		cr := &countingReader{r: bytes.NewReader(rest)}
		txid, o, err := editlog.DecodeRecord(cr)
		if err == nil && txid > last {
			if skipFrom >= 0 {
				skipped = append(skipped, Skipped{Offset: skipFrom + editlog.SegmentHeaderSize, Length: off - skipFrom, Reason: skipWhy})
				skipFrom = -1
			}
			if err := emit(txid, o); err != nil {
				return err
			}
			last = txid
			off += cr.n
			continue
		}
		if skipFrom < 0 {
			skipFrom = off
			skipWhy = "txid not above the last one"
			if err != nil {
				skipWhy = err.Error()
			}
		}
		off++
	}
	if skipFrom >= 0 {
		skipped = append(skipped, Skipped{Offset: skipFrom + editlog.SegmentHeaderSize, Length: off - skipFrom, Reason: skipWhy})
	}
	if len(skipped) > 0 {
		return &RecoveredError{File: name, Skipped: skipped}
	}
	return nil
}
