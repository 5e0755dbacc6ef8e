package oev

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

var cid = []byte{0xcb, 0x20, 0xa9, 0x2a, 0x2c, 0x2f, 0x43, 0x05, 0xa8, 0x38, 0x2a, 0x01, 0xc6, 0xe7, 0x3e, 0x18}

// everyOp is one op of every type the edit log has, each with the fields
// the XML must show, written out by hand as Hadoop's element names.
var oevDTID = op.DelegationTokenID{Owner: "alice@R", Renewer: "bob", IssueDate: 10, MaxDate: 20, SequenceNumber: 3, MasterKeyID: 2}

var everyOp = []struct {
	o    op.Op
	want string
}{
	{&op.StartLogSegment{}, "OPCODE=OP_START_LOG_SEGMENT"},
	{&op.Mkdir{InodeID: 16386, Path: "/dir", Mtime: 1700000000001, Perm: op.Perm{User: "alice", Group: "supergroup", Mode: 0o755}},
		"OPCODE=OP_MKDIR INODEID=16386 PATH=/dir TIMESTAMP=1700000000001 PERMISSION_STATUS/USERNAME=alice PERMISSION_STATUS/GROUPNAME=supergroup PERMISSION_STATUS/MODE=493"},
	{&op.Add{InodeID: 16387, Path: "/dir/f", Replication: 3, Mtime: 1700000000002, Atime: 1700000000003, BlockSize: 134217728,
		Perm: op.Perm{User: "alice", Group: "staff", Mode: 0o644}, ClientName: "DFSClient_1", ClientMachine: "127.0.0.1", Overwrite: true,
		RPC: op.RPCID{ClientID: cid, CallID: 9}},
		"OPCODE=OP_ADD INODEID=16387 PATH=/dir/f REPLICATION=3 MTIME=1700000000002 ATIME=1700000000003 BLOCKSIZE=134217728 CLIENT_NAME=DFSClient_1 CLIENT_MACHINE=127.0.0.1 OVERWRITE=true PERMISSION_STATUS/USERNAME=alice PERMISSION_STATUS/GROUPNAME=staff PERMISSION_STATUS/MODE=420 RPC_CLIENTID=cb20a92a-2c2f-4305-a838-2a01c6e73e18 RPC_CALLID=9"},
	{&op.AllocateBlockID{BlockID: 1073741825}, "OPCODE=OP_ALLOCATE_BLOCK_ID BLOCK_ID=1073741825"},
	{&op.SetGenstamp{GenStamp: 1001}, "OPCODE=OP_SET_GENSTAMP_V2 GENSTAMPV2=1001"},
	{&op.AddBlock{Path: "/dir/f", Last: op.Block{ID: 1073741825, GenStamp: 1001}},
		"OPCODE=OP_ADD_BLOCK PATH=/dir/f BLOCK/BLOCK_ID=1073741825 BLOCK/NUM_BYTES=0 BLOCK/GENSTAMP=1001"},
	{&op.AddBlock{Path: "/dir/f", Penultimate: &op.Block{ID: 1073741825, NumBytes: 512, GenStamp: 1001}, Last: op.Block{ID: 1073741826, GenStamp: 1002}},
		"OPCODE=OP_ADD_BLOCK PATH=/dir/f BLOCK/BLOCK_ID=1073741825 BLOCK/NUM_BYTES=512 BLOCK/GENSTAMP=1001 BLOCK/BLOCK_ID=1073741826 BLOCK/NUM_BYTES=0 BLOCK/GENSTAMP=1002"},
	{&op.UpdateBlocks{Path: "/dir/f", Blocks: []op.Block{{ID: 1073741825, NumBytes: 11, GenStamp: 1003}}, RPC: op.RPCID{CallID: -2}},
		"OPCODE=OP_UPDATE_BLOCKS PATH=/dir/f BLOCK/BLOCK_ID=1073741825 BLOCK/NUM_BYTES=11 BLOCK/GENSTAMP=1003 RPC_CLIENTID= RPC_CALLID=-2"},
	{&op.Close{Path: "/dir/f", Mtime: 1700000000004, Atime: 1700000000003, Blocks: []op.Block{{ID: 1073741825, NumBytes: 512, GenStamp: 1001}, {ID: 1073741826, NumBytes: 7, GenStamp: 1002}}},
		"OPCODE=OP_CLOSE PATH=/dir/f MTIME=1700000000004 ATIME=1700000000003 BLOCK/BLOCK_ID=1073741825 BLOCK/NUM_BYTES=512 BLOCK/GENSTAMP=1001 BLOCK/BLOCK_ID=1073741826 BLOCK/NUM_BYTES=7 BLOCK/GENSTAMP=1002"},
	{&op.SetReplication{Path: "/dir/f", Replication: 2}, "OPCODE=OP_SET_REPLICATION PATH=/dir/f REPLICATION=2"},
	{&op.SetPermissions{Path: "/dir/f", Mode: 0o1777}, "OPCODE=OP_SET_PERMISSIONS SRC=/dir/f MODE=1023"},
	{&op.SetOwner{Path: "/dir/f", User: "bob", Group: ""}, "OPCODE=OP_SET_OWNER SRC=/dir/f USERNAME=bob GROUPNAME="},
	{&op.Times{Path: "/dir/f", Mtime: -1, Atime: 1285195527000}, "OPCODE=OP_TIMES PATH=/dir/f MTIME=-1 ATIME=1285195527000"},
	{&op.SetQuota{Path: "/dir", NsQuota: 1000, DsQuota: op.QuotaReset}, "OPCODE=OP_SET_QUOTA SRC=/dir NSQUOTA=1000 DSQUOTA=-1"},
	{&op.RenameOld{Src: "/dir/f", Dst: "/dir/g", Mtime: 1700000000005, RPC: op.RPCID{ClientID: cid, CallID: 12}},
		"OPCODE=OP_RENAME_OLD SRC=/dir/f DST=/dir/g TIMESTAMP=1700000000005 RPC_CLIENTID=cb20a92a-2c2f-4305-a838-2a01c6e73e18 RPC_CALLID=12"},
	{&op.Rename{Src: "/dir/g", Dst: "/dir/h", Mtime: 1700000000006, Overwrite: true, RPC: op.RPCID{ClientID: cid, CallID: 13}},
		"OPCODE=OP_RENAME SRC=/dir/g DST=/dir/h TIMESTAMP=1700000000006 OPTIONS=OVERWRITE RPC_CLIENTID=cb20a92a-2c2f-4305-a838-2a01c6e73e18 RPC_CALLID=13"},
	{&op.Rename{Src: "/dir/h", Dst: "/dir/i", Mtime: 1700000000007},
		"OPCODE=OP_RENAME SRC=/dir/h DST=/dir/i TIMESTAMP=1700000000007 OPTIONS=NONE RPC_CLIENTID= RPC_CALLID=0"},
	{&op.Concat{Target: "/dir/i", Srcs: []string{"/dir/a", "/dir/b"}, Mtime: 1700000000008, RPC: op.RPCID{ClientID: cid, CallID: 14}},
		"OPCODE=OP_CONCAT_DELETE TRG=/dir/i TIMESTAMP=1700000000008 SOURCES/SOURCE1=/dir/a SOURCES/SOURCE2=/dir/b RPC_CLIENTID=cb20a92a-2c2f-4305-a838-2a01c6e73e18 RPC_CALLID=14"},
	{&op.ReassignLease{Holder: "DFSClient_1", Path: "/dir/i", NewHolder: "HDFS_NameNode"},
		"OPCODE=OP_REASSIGN_LEASE LEASEHOLDER=DFSClient_1 PATH=/dir/i NEWHOLDER=HDFS_NameNode"},
	{&op.Append{Path: "/dir/i", ClientName: "DFSClient_2", ClientMachine: "10.0.0.1", NewBlock: true, RPC: op.RPCID{ClientID: cid, CallID: 15}},
		"OPCODE=OP_APPEND PATH=/dir/i CLIENT_NAME=DFSClient_2 CLIENT_MACHINE=10.0.0.1 NEWBLOCK=true RPC_CLIENTID=cb20a92a-2c2f-4305-a838-2a01c6e73e18 RPC_CALLID=15"},
	{&op.Truncate{Path: "/dir/i", ClientName: "DFSClient_2", ClientMachine: "10.0.0.1", NewLength: 100, Mtime: 1700000000009,
		TruncateBlock: &op.Block{ID: 1073741826, NumBytes: 100, GenStamp: 1004}, RPC: op.RPCID{ClientID: cid, CallID: 16}},
		"OPCODE=OP_TRUNCATE SRC=/dir/i CLIENTNAME=DFSClient_2 CLIENTMACHINE=10.0.0.1 NEWLENGTH=100 TIMESTAMP=1700000000009 BLOCK/BLOCK_ID=1073741826 BLOCK/NUM_BYTES=100 BLOCK/GENSTAMP=1004 RPC_CLIENTID=cb20a92a-2c2f-4305-a838-2a01c6e73e18 RPC_CALLID=16"},
	{&op.Truncate{Path: "/dir/i", NewLength: 0, Mtime: 1700000000010},
		"OPCODE=OP_TRUNCATE SRC=/dir/i CLIENTNAME= CLIENTMACHINE= NEWLENGTH=0 TIMESTAMP=1700000000010 RPC_CLIENTID= RPC_CALLID=0"},
	// Names XML cannot carry as they are: escaped, and back byte for byte.
	{&op.Delete{Path: "/a&b<c>\\d\x01e\xffé", Mtime: 1700000000011, RPC: op.RPCID{ClientID: cid, CallID: 17}},
		"OPCODE=OP_DELETE PATH=/a&b<c>\\005c;d\\0001;e\\xff;é TIMESTAMP=1700000000011 RPC_CLIENTID=cb20a92a-2c2f-4305-a838-2a01c6e73e18 RPC_CALLID=17"},
	{&op.SetXAttr{Path: "/dir/i", XAttrs: []op.XAttr{{NS: op.XAttrUser, Name: "a1", Value: []byte("123")}, {NS: op.XAttrTrusted, Name: "t", Value: []byte{}}},
		RPC: op.RPCID{ClientID: cid, CallID: 18}},
		"OPCODE=OP_SET_XATTR SRC=/dir/i XATTR/NAMESPACE=USER XATTR/NAME=a1 XATTR/VALUE=0x313233 XATTR/NAMESPACE=TRUSTED XATTR/NAME=t XATTR/VALUE=0x RPC_CLIENTID=cb20a92a-2c2f-4305-a838-2a01c6e73e18 RPC_CALLID=18"},
	{&op.RemoveXAttr{Path: "/dir/i", XAttrs: []op.XAttr{{NS: op.XAttrUser, Name: "a1"}}, RPC: op.RPCID{ClientID: cid, CallID: 19}},
		"OPCODE=OP_REMOVE_XATTR SRC=/dir/i XATTR/NAMESPACE=USER XATTR/NAME=a1 RPC_CLIENTID=cb20a92a-2c2f-4305-a838-2a01c6e73e18 RPC_CALLID=19"},
	{&op.SetStoragePolicy{Path: "/dir", PolicyID: 2}, "OPCODE=OP_SET_STORAGE_POLICY PATH=/dir POLICYID=2"},
	{&op.SetACL{Path: "/dir", Entries: []op.ACLEntry{
		{Scope: op.ACLAccess, Type: op.ACLUser, Perm: 7}, {Scope: op.ACLAccess, Type: op.ACLUser, Name: "bob", Perm: 5},
		{Scope: op.ACLAccess, Type: op.ACLGroup, Perm: 5}, {Scope: op.ACLAccess, Type: op.ACLMask, Perm: 5},
		{Scope: op.ACLAccess, Type: op.ACLOther, Perm: 0}, {Scope: op.ACLDefault, Type: op.ACLGroup, Name: "staff", Perm: 6}}},
		"OPCODE=OP_SET_ACL SRC=/dir ENTRY/SCOPE=ACCESS ENTRY/TYPE=USER ENTRY/PERM=rwx ENTRY/SCOPE=ACCESS ENTRY/TYPE=USER ENTRY/NAME=bob ENTRY/PERM=r-x " +
			"ENTRY/SCOPE=ACCESS ENTRY/TYPE=GROUP ENTRY/PERM=r-x ENTRY/SCOPE=ACCESS ENTRY/TYPE=MASK ENTRY/PERM=r-x ENTRY/SCOPE=ACCESS ENTRY/TYPE=OTHER ENTRY/PERM=--- " +
			"ENTRY/SCOPE=DEFAULT ENTRY/TYPE=GROUP ENTRY/NAME=staff ENTRY/PERM=rw-"},
	{&op.AllowSnapshot{Path: "/dir"}, "OPCODE=OP_ALLOW_SNAPSHOT SNAPSHOTROOT=/dir"},
	{&op.UpdateMasterKey{KeyID: 2, Expiry: 30, Secret: []byte{0xab, 0x01}},
		"OPCODE=OP_UPDATE_MASTER_KEY DELEGATION_KEY/KEY_ID=2 DELEGATION_KEY/EXPIRY_DATE=30 DELEGATION_KEY/KEY=ab01"},
	{&op.GetDelegationToken{ID: oevDTID, Expiry: 15}, "OPCODE=OP_GET_DELEGATION_TOKEN DELEGATION_TOKEN_IDENTIFIER/KIND=HDFS_DELEGATION_TOKEN DELEGATION_TOKEN_IDENTIFIER/SEQUENCE_NUMBER=3 DELEGATION_TOKEN_IDENTIFIER/OWNER=alice@R DELEGATION_TOKEN_IDENTIFIER/RENEWER=bob DELEGATION_TOKEN_IDENTIFIER/REALUSER= DELEGATION_TOKEN_IDENTIFIER/ISSUE_DATE=10 DELEGATION_TOKEN_IDENTIFIER/MAX_DATE=20 DELEGATION_TOKEN_IDENTIFIER/MASTER_KEY_ID=2 EXPIRY_TIME=15"},
	{&op.RenewDelegationToken{ID: oevDTID, Expiry: 18}, "OPCODE=OP_RENEW_DELEGATION_TOKEN DELEGATION_TOKEN_IDENTIFIER/KIND=HDFS_DELEGATION_TOKEN DELEGATION_TOKEN_IDENTIFIER/SEQUENCE_NUMBER=3 DELEGATION_TOKEN_IDENTIFIER/OWNER=alice@R DELEGATION_TOKEN_IDENTIFIER/RENEWER=bob DELEGATION_TOKEN_IDENTIFIER/REALUSER= DELEGATION_TOKEN_IDENTIFIER/ISSUE_DATE=10 DELEGATION_TOKEN_IDENTIFIER/MAX_DATE=20 DELEGATION_TOKEN_IDENTIFIER/MASTER_KEY_ID=2 EXPIRY_TIME=18"},
	{&op.CancelDelegationToken{ID: oevDTID}, "OPCODE=OP_CANCEL_DELEGATION_TOKEN DELEGATION_TOKEN_IDENTIFIER/KIND=HDFS_DELEGATION_TOKEN DELEGATION_TOKEN_IDENTIFIER/SEQUENCE_NUMBER=3 DELEGATION_TOKEN_IDENTIFIER/OWNER=alice@R DELEGATION_TOKEN_IDENTIFIER/RENEWER=bob DELEGATION_TOKEN_IDENTIFIER/REALUSER= DELEGATION_TOKEN_IDENTIFIER/ISSUE_DATE=10 DELEGATION_TOKEN_IDENTIFIER/MAX_DATE=20 DELEGATION_TOKEN_IDENTIFIER/MASTER_KEY_ID=2"},
	{&op.CreateSnapshot{Root: "/dir", Name: "s1", Mtime: 40, RPC: op.RPCID{ClientID: cid, CallID: 20}},
		"OPCODE=OP_CREATE_SNAPSHOT SNAPSHOTROOT=/dir SNAPSHOTNAME=s1 MTIME=40 RPC_CLIENTID=cb20a92a-2c2f-4305-a838-2a01c6e73e18 RPC_CALLID=20"},
	{&op.RenameSnapshot{Root: "/dir", OldName: "s1", NewName: "s2", Mtime: 41, RPC: op.RPCID{ClientID: cid, CallID: 21}},
		"OPCODE=OP_RENAME_SNAPSHOT SNAPSHOTROOT=/dir SNAPSHOTOLDNAME=s1 SNAPSHOTNEWNAME=s2 MTIME=41 RPC_CLIENTID=cb20a92a-2c2f-4305-a838-2a01c6e73e18 RPC_CALLID=21"},
	{&op.DeleteSnapshot{Root: "/dir", Name: "s2", Mtime: 42, RPC: op.RPCID{ClientID: cid, CallID: 22}},
		"OPCODE=OP_DELETE_SNAPSHOT SNAPSHOTROOT=/dir SNAPSHOTNAME=s2 MTIME=42 RPC_CLIENTID=cb20a92a-2c2f-4305-a838-2a01c6e73e18 RPC_CALLID=22"},
	{&op.DisallowSnapshot{Path: "/dir"}, "OPCODE=OP_DISALLOW_SNAPSHOT SNAPSHOTROOT=/dir"},
	{&op.EndLogSegment{}, "OPCODE=OP_END_LOG_SEGMENT"},
}

func segment(t testing.TB) []byte {
	t.Helper()
	b := editlog.AppendSegmentHeader(nil)
	for i, c := range everyOp {
		var err error
		if b, err = editlog.EncodeRecord(b, int64(100+i), c.o); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// flatten reads XML with encoding/xml alone and lists each RECORD's
// leaves as NAME=value (nested ones as PARENT/NAME=value), in order.
func flatten(t *testing.T, doc []byte) (version string, records []string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var path []string
	var text strings.Builder
	var cur []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return version, records
		}
		if err != nil {
			t.Fatalf("the XML does not parse: %v\n%s", err, doc)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			path = append(path, x.Name.Local)
			text.Reset()
			if x.Name.Local == "RECORD" {
				cur = nil
			}
		case xml.CharData:
			text.Write(x)
		case xml.EndElement:
			switch {
			case x.Name.Local == "EDITS_VERSION":
				version = text.String()
			case x.Name.Local == "RECORD":
				records = append(records, strings.Join(cur, " "))
			case len(path) >= 3 && path[1] == "RECORD" && strings.TrimSpace(text.String()) == text.String():
				if x.Name.Local == "OPCODE" {
					cur = append(cur, "OPCODE="+text.String())
				} else if len(path) >= 4 && x.Name.Local != "DATA" {
					cur = append(cur, strings.Join(path[3:], "/")+"="+text.String())
				}
			}
			text.Reset()
			path = path[:len(path)-1]
		}
	}
}

// A segment with one op of every type: its XML names each op and shows
// each field under Hadoop's element name with the op's value, and the XML
// turns back into the very same bytes.
func TestSegmentXMLEveryOp(t *testing.T) {
	seg := segment(t)
	var x bytes.Buffer
	if err := SegmentToXML(bytes.NewReader(seg), "edits", &x); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(x.Bytes(), []byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<EDITS>\n  <EDITS_VERSION>")) {
		t.Fatalf("XML starts %q", x.Bytes()[:80])
	}
	version, recs := flatten(t, x.Bytes())
	if version != fmt.Sprint(editlog.LayoutVersion) {
		t.Fatalf("EDITS_VERSION %q, want %d", version, editlog.LayoutVersion)
	}
	if len(recs) != len(everyOp) {
		t.Fatalf("%d records, want %d:\n%s", len(recs), len(everyOp), x.String())
	}
	for i, c := range everyOp {
		// TXID leads every DATA.
		want := c.want
		opcode, rest, _ := strings.Cut(want, " ")
		want = strings.TrimSpace(fmt.Sprintf("%s TXID=%d %s", opcode, 100+i, rest))
		if recs[i] != want {
			t.Errorf("record %d (%T):\n got %s\nwant %s", i, c.o, recs[i], want)
		}
	}
	var back bytes.Buffer
	if err := XMLToSegment(bytes.NewReader(x.Bytes()), &back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), seg) {
		t.Fatalf("XML -> binary differs from the segment (%d bytes, want %d)", back.Len(), len(seg))
	}
}

// The stats table has Hadoop's layout and the counts of the segment.
func TestSegmentStats(t *testing.T) {
	st, err := SegmentStats(bytes.NewReader(segment(t)), "edits")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := st.Write(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		fmt.Sprintf("    VERSION                             : %d\n", editlog.LayoutVersion),
		"    OP_ADD                         (  0): 1\n",
		"    OP_ADD_BLOCK                   ( 33): 2\n",
		"    OP_RENAME                      ( 15): 2\n",
		"    OP_TRUNCATE                    ( 46): 2\n",
		"    OP_SYMLINK                     ( 17): 0\n",
		"    OP_INVALID                     ( -1): 0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lack %q:\n%s", want, out)
		}
	}
	x := &bytes.Buffer{}
	if err := SegmentToXML(bytes.NewReader(segment(t)), "edits", x); err != nil {
		t.Fatal(err)
	}
	v, recs, err := ParseXML(x)
	if err != nil {
		t.Fatal(err)
	}
	var b2 bytes.Buffer
	RecordStats(v, recs).Write(&b2)
	if b2.String() != out {
		t.Fatalf("stats from XML differ:\n%s\nvs\n%s", b2.String(), out)
	}
}

// Bad XML is refused with an error naming what is wrong.
func TestParseXMLErrors(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"", "no root element"},
		{"<FOO/>", "not <EDITS>"},
		{"<EDITS><EDITS_VERSION>x</EDITS_VERSION></EDITS>", "EDITS_VERSION"},
		{"<EDITS><EDITS_VERSION>2</EDITS_VERSION><RECORD><OPCODE>OP_NOPE</OPCODE><DATA/></RECORD></EDITS>", `opcode "OP_NOPE"`},
		{"<EDITS><EDITS_VERSION>2</EDITS_VERSION><RECORD><OPCODE>OP_DELETE</OPCODE><DATA><TXID>3</TXID></DATA></RECORD></EDITS>", "no <PATH>"},
		{"<EDITS><EDITS_VERSION>2</EDITS_VERSION><RECORD><OPCODE>OP_SET_REPLICATION</OPCODE><DATA><TXID>3</TXID><PATH>/a</PATH><REPLICATION>70000</REPLICATION></DATA></RECORD></EDITS>", "REPLICATION"},
		{"<EDITS><EDITS_VERSION>2</EDITS_VERSION><RECORD><OPCODE>OP_DELETE</OPCODE><DATA><TXID>3</TXID><PATH>/a\\zz;</PATH><TIMESTAMP>1</TIMESTAMP><RPC_CLIENTID/><RPC_CALLID>1</RPC_CALLID></DATA></RECORD></EDITS>", "bad escape"},
	} {
		_, _, err := ParseXML(strings.NewReader(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseXML(%q) = %v, want an error with %q", c.doc, err, c.want)
		}
	}
	var out bytes.Buffer
	err := XMLToSegment(strings.NewReader("<EDITS><EDITS_VERSION>1</EDITS_VERSION></EDITS>"), &out)
	if err == nil || !strings.Contains(err.Error(), "layout version 1") {
		t.Fatalf("an old version was written: %v", err)
	}
}

// The XML decoder takes any input: it returns records or an error, and
// records it returns always encode, then read back as the same XML.
func FuzzParseXML(f *testing.F) {
	var x bytes.Buffer
	if err := SegmentToXML(bytes.NewReader(segment(f)), "edits", &x); err != nil {
		f.Fatal(err)
	}
	f.Add(x.Bytes())
	f.Add([]byte("<EDITS><EDITS_VERSION>2</EDITS_VERSION></EDITS>"))
	f.Add([]byte("<EDITS><EDITS_VERSION>2</EDITS_VERSION><RECORD><OPCODE>OP_CONCAT_DELETE</OPCODE><DATA><TXID>1</TXID><TRG>/t</TRG><TIMESTAMP>1</TIMESTAMP><SOURCES></SOURCES><RPC_CLIENTID>0x01</RPC_CLIENTID><RPC_CALLID>1</RPC_CALLID></DATA></RECORD></EDITS>"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		v, recs, err := ParseXML(bytes.NewReader(doc))
		if err != nil || v != editlog.LayoutVersion {
			return
		}
		var seg bytes.Buffer
		if err := WriteSegment(&seg, v, recs); err != nil {
			if strings.Contains(err.Error(), "exceeds") {
				return // a record too large for the format
			}
			t.Fatalf("records parsed from XML do not encode: %v", err)
		}
		var x1, x2, seg2 bytes.Buffer
		if err := SegmentToXML(bytes.NewReader(seg.Bytes()), "fuzz", &x1); err != nil {
			t.Fatalf("an encoded segment does not read: %v", err)
		}
		if err := XMLToSegment(bytes.NewReader(x1.Bytes()), &seg2); err != nil {
			t.Fatalf("our own XML does not parse: %v\n%s", err, x1.String())
		}
		if !bytes.Equal(seg.Bytes(), seg2.Bytes()) {
			t.Fatalf("binary -> XML -> binary changed the bytes")
		}
		if err := SegmentToXML(bytes.NewReader(seg2.Bytes()), "fuzz", &x2); err != nil || x1.String() != x2.String() {
			t.Fatalf("XML not stable: %v", err)
		}
	})
}

// -f renumbers the records from the first txid up.
func TestFixTxIDs(t *testing.T) {
	b := editlog.AppendSegmentHeader(nil)
	for _, txid := range []int64{5, 9, 10} {
		var err error
		if b, err = editlog.EncodeRecord(b, txid, &op.SetGenstamp{GenStamp: txid}); err != nil {
			t.Fatal(err)
		}
	}
	var x bytes.Buffer
	if err := SegmentToXMLWith(bytes.NewReader(b), "e", &x, Options{FixTxIDs: true}); err != nil {
		t.Fatal(err)
	}
	_, recs, err := ParseXML(&x)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, r := range recs {
		got = append(got, r.TxID, r.Op.(*op.SetGenstamp).GenStamp)
	}
	if fmt.Sprint(got) != "[5 5 6 9 7 10]" {
		t.Fatalf("txid, genstamp pairs %v", got)
	}
	recs[1].TxID, recs[2].TxID = 100, 3
	FixTxIDs(recs)
	if recs[1].TxID != 6 || recs[2].TxID != 7 {
		t.Fatalf("FixTxIDs: %+v", recs)
	}
}

// Recovery mode skips a damaged record and shows the ones around it.
func TestRecover(t *testing.T) {
	seg := segment(t)
	// Damage the body of the third record (the first OP_ADD's path).
	var offs []int
	d := editlog.NewDecoder(bytes.NewReader(seg[editlog.SegmentHeaderSize:]), "e", editlog.SegmentHeaderSize, editlog.LayoutVersion)
	for range 3 {
		offs = append(offs, int(d.Offset()))
		if _, _, err := d.Next(); err != nil {
			t.Fatal(err)
		}
	}
	bad := append([]byte(nil), seg...)
	bad[offs[2]+editlog.RecordHeaderSize+3] ^= 0xff
	var x bytes.Buffer
	if err := SegmentToXML(bytes.NewReader(bad), "e", &x); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("without recovery: %v", err)
	}
	x.Reset()
	err := SegmentToXMLWith(bytes.NewReader(bad), "e", &x, Options{Recover: true})
	var re *RecoveredError
	if !errors.As(err, &re) || len(re.Skipped) != 1 || re.Skipped[0].Offset != int64(offs[2]) {
		t.Fatalf("recovery: %v (damage at %d)", err, offs[2])
	}
	_, recs, perr := ParseXML(&x)
	if perr != nil {
		t.Fatal(perr)
	}
	if len(recs) != len(everyOp)-1 || recs[1].TxID != 101 || recs[2].TxID != 103 {
		t.Fatalf("%d records recovered, want %d without txid 102", len(recs), len(everyOp)-1)
	}
}

// Recovery mode reads any bytes after a segment header: it never fails
// other than by reporting what it skipped, and its XML always parses.
func FuzzRecover(f *testing.F) {
	seg := segment(f)
	f.Add(seg[editlog.SegmentHeaderSize:])
	f.Add([]byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		in := append(editlog.AppendSegmentHeader(nil), body...)
		var x bytes.Buffer
		err := SegmentToXMLWith(bytes.NewReader(in), "fuzz", &x, Options{Recover: true})
		var re *RecoveredError
		if err != nil && !errors.As(err, &re) {
			t.Fatalf("recovery failed: %v", err)
		}
		if _, _, err := ParseXML(&x); err != nil {
			t.Fatalf("recovered XML does not parse: %v", err)
		}
	})
}
