package editlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// sampleOps holds one op of every type, with non-trivial field values.
func sampleOps() []op.Op {
	perm := op.Perm{User: "alice", Group: "supergroup", Mode: 0o755}
	blk := op.Block{ID: 1073741825, NumBytes: 134217728, GenStamp: 1001}
	return []op.Op{
		&op.Add{InodeID: 16386, Path: "/user/alice/f", Replication: 3, Mtime: 1700000000000,
			Atime: 1700000000001, BlockSize: 128 << 20, Perm: perm, ClientName: "DFSClient_1",
			ClientMachine: "10.0.0.1", Overwrite: true, RPC: op.RPCID{ClientID: []byte("0123456789abcdef"), CallID: 7}},
		&op.Mkdir{InodeID: 16385 + 1, Path: "/user", Mtime: -5, Perm: perm},
		&op.Delete{Path: "/tmp/x", Mtime: 42, RPC: op.RPCID{CallID: -2}},
		&op.RenameOld{Src: "/a", Dst: "/b/a", Mtime: 7},
		&op.Rename{Src: "/a", Dst: "/c", Mtime: 8, Overwrite: true},
		&op.SetReplication{Path: "/f", Replication: math.MaxUint16},
		&op.SetPermissions{Path: "/f", Mode: 0o1777},
		&op.SetOwner{Path: "/f", User: "bob", Group: ""},
		&op.Times{Path: "/f", Mtime: -1, Atime: 99},
		&op.SetQuota{Path: "/q", NsQuota: op.QuotaDontSet, DsQuota: op.QuotaReset},
		&op.Concat{Target: "/t", Srcs: []string{"/s1", "/s2", "ü"}, Mtime: 3},
		&op.ReassignLease{Holder: "h1", Path: "/f", NewHolder: "HDFS_NameNode"},
		&op.StartLogSegment{},
		&op.EndLogSegment{},
		&op.UpdateBlocks{Path: "/f", Blocks: []op.Block{blk, {ID: -2, NumBytes: 0, GenStamp: math.MaxInt64}}},
		&op.SetGenstamp{GenStamp: 1002},
		&op.AllocateBlockID{BlockID: 1073741826},
		&op.AddBlock{Path: "/f", Penultimate: &blk, Last: op.Block{ID: 5, GenStamp: 6}},
		&op.AddBlock{Path: "/g", Last: op.Block{ID: 5, GenStamp: 6}},
		&op.Close{Path: "/f", Mtime: 10, Atime: 11, Blocks: []op.Block{blk}},
		&op.Close{Path: "/empty", Mtime: 10, Atime: 11},
		&op.Append{Path: "/f", ClientName: "c", ClientMachine: "m", NewBlock: true},
		&op.Truncate{Path: "/f", ClientName: "c", ClientMachine: "m", NewLength: 100, Mtime: 1, TruncateBlock: &blk},
		&op.Truncate{Path: "/f", NewLength: 0, Mtime: 1},
		&op.SetXAttr{Path: "/f", XAttrs: []op.XAttr{{NS: op.XAttrUser, Name: "a", Value: []byte{0, 1}}, {NS: op.XAttrRaw, Name: "b", Value: []byte{}}, {NS: op.XAttrTrusted, Name: "c"}},
			RPC: op.RPCID{ClientID: []byte("0123456789abcdef"), CallID: 9}},
		&op.RemoveXAttr{Path: "/f", XAttrs: []op.XAttr{{NS: op.XAttrSystem, Name: "x"}}},
		&op.SetStoragePolicy{Path: "/d", PolicyID: 12},
		&op.SetQuotaByStorageType{Path: "/d", StorageType: 2, DsQuota: 1 << 30},
		&op.SetQuotaByStorageType{Path: "/d", StorageType: 3, DsQuota: op.QuotaReset},
		&op.SetACL{Path: "/d", Entries: []op.ACLEntry{{Type: op.ACLUser, Perm: 7}, {Type: op.ACLUser, Name: "bob", Perm: 5},
			{Scope: op.ACLDefault, Type: op.ACLMask, Perm: 4}}},
		&op.SetACL{Path: "/e"},
		&op.AllowSnapshot{Path: "/s"},
		&op.DisallowSnapshot{Path: "/s"},
		&op.GetDelegationToken{ID: dtid, Expiry: 1700086400000},
		&op.RenewDelegationToken{ID: dtid, Expiry: 1700172800000},
		&op.CancelDelegationToken{ID: dtid},
		&op.UpdateMasterKey{KeyID: -7, Expiry: 1700700000000, Secret: []byte{0, 1, 2, 0xff}},
		&op.CreateSnapshot{Root: "/s", Name: "s1", Mtime: 1700000000001, RPC: op.RPCID{ClientID: []byte("0123456789abcdef"), CallID: 3}},
		&op.DeleteSnapshot{Root: "/s", Name: "s1", Mtime: 1700000000002},
		&op.RenameSnapshot{Root: "/s", OldName: "s1", NewName: "s2", Mtime: 1700000000003},
	}
}

// TestSnapshotOpsNeedVersion5: the snapshot ops are refused in segments
// older than layout version 5.
func TestSnapshotOpsNeedVersion5(t *testing.T) {
	rec := mustEncode(nil, 1, &op.RenameSnapshot{Root: "/d", OldName: "a", NewName: "b", Mtime: 1})
	body := rec[RecordHeaderSize : len(rec)-RecordTrailerSize]
	if _, err := decodeBody(op.CodeRenameSnapshot, body, 4); err == nil {
		t.Fatal("OP_RENAME_SNAPSHOT decoded in a version 4 segment")
	}
	o, err := decodeBody(op.CodeRenameSnapshot, body, 5)
	if err != nil || !reflect.DeepEqual(o, &op.RenameSnapshot{Root: "/d", OldName: "a", NewName: "b", Mtime: 1}) {
		t.Fatalf("version 5 body = %#v, %v", o, err)
	}
}

var dtid = op.DelegationTokenID{Owner: "alice", Renewer: "yarn", RealUser: "", IssueDate: 1700000000000,
	MaxDate: 1700604800000, SequenceNumber: 12, MasterKeyID: -7}

// TestDelegationOpsNeedVersion4: the delegation-token ops are refused in
// segments older than layout version 4.
func TestDelegationOpsNeedVersion4(t *testing.T) {
	rec := mustEncode(nil, 1, &op.CancelDelegationToken{ID: dtid})
	body := rec[RecordHeaderSize : len(rec)-RecordTrailerSize]
	for v := int32(1); v < 4; v++ {
		if _, err := decodeBody(op.CodeCancelDelegationToken, body, v); err == nil {
			t.Errorf("OP_CANCEL_DELEGATION_TOKEN decoded in a version %d segment", v)
		}
	}
	if _, err := decodeBody(op.CodeCancelDelegationToken, body, 4); err != nil {
		t.Fatal(err)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	covered := map[op.Code]bool{}
	for i, o := range sampleOps() {
		txid := int64(i + 1)
		rec := mustEncode(nil, txid, o)
		gotTx, got, err := DecodeRecord(bytes.NewReader(rec))
		if err != nil {
			t.Fatalf("%v: decode: %v", o.Code(), err)
		}
		if gotTx != txid || !reflect.DeepEqual(got, o) {
			t.Errorf("%v: round trip = %d %#v, want %d %#v", o.Code(), gotTx, got, txid, o)
		}
		covered[o.Code()] = true
	}
	// Every opcode the op package names must be in the table above.
	for c := op.Code(0); c < math.MaxInt8; c++ {
		if c.String() != "OP_INVALID" && !covered[c] {
			t.Errorf("opcode %v has no round-trip case", c)
		}
	}
}

// TestRecordLayout pins the framing bytes of one record.
func TestRecordLayout(t *testing.T) {
	rec := mustEncode(nil, 0x0102030405060708, &op.Delete{Path: "/x", Mtime: 1, RPC: op.RPCID{ClientID: []byte{0xAB}, CallID: -2}})
	// opcode, txid, length 7; path, mtime; rpc: client id, call id.
	want := []byte{2, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 7, 2, '/', 'x', 2, 1, 0xAB, 3}
	if !bytes.Equal(rec[:len(want)], want) || len(rec) != len(want)+4 {
		t.Fatalf("record = % x, want % x + crc", rec, want)
	}
	if hdr := AppendSegmentHeader(nil); !bytes.Equal(hdr, []byte{'H', 'D', 'E', 'L', 0, 0, 0, 6}) {
		t.Fatalf("segment header = % x", hdr)
	}
}

// TestLayoutVersion3Ops: the ops layout version 3 added are refused in an
// older segment and read in a version 3 one.
func TestLayoutVersion3Ops(t *testing.T) {
	body := []byte{2, '/', 'x', 0}
	for v := int32(1); v <= 2; v++ {
		if _, err := decodeBody(op.CodeSetStoragePolicy, body, v); err == nil {
			t.Fatalf("OP_SET_STORAGE_POLICY decoded in a version %d segment", v)
		}
	}
	o, err := decodeBody(op.CodeSetStoragePolicy, body, 3)
	if err != nil || !reflect.DeepEqual(o, &op.SetStoragePolicy{Path: "/x"}) {
		t.Fatalf("version 3 body = %#v, %v", o, err)
	}
}

// TestQuotaByStorageTypeNeedsVersion6: OP_SET_QUOTA_BY_STORAGETYPE is
// refused in segments older than layout version 6.
func TestQuotaByStorageTypeNeedsVersion6(t *testing.T) {
	rec := mustEncode(nil, 1, &op.SetQuotaByStorageType{Path: "/q", StorageType: 2, DsQuota: 4096})
	body := rec[RecordHeaderSize : len(rec)-RecordTrailerSize]
	for v := int32(1); v < 6; v++ {
		if _, err := decodeBody(op.CodeSetQuotaByStorageType, body, v); err == nil {
			t.Errorf("OP_SET_QUOTA_BY_STORAGETYPE decoded in a version %d segment", v)
		}
	}
	o, err := decodeBody(op.CodeSetQuotaByStorageType, body, 6)
	if err != nil || !reflect.DeepEqual(o, &op.SetQuotaByStorageType{Path: "/q", StorageType: 2, DsQuota: 4096}) {
		t.Fatalf("version 6 body = %#v, %v", o, err)
	}
}

// TestLayoutVersion1: segments of layout version 1 have no rpc field; they
// decode with an empty RPCID, and a version 2 body read as version 1 has
// trailing bytes.
func TestLayoutVersion1(t *testing.T) {
	v1 := []byte{2, '/', 'x', 2}
	o, err := decodeBody(op.CodeDelete, v1, 1)
	if err != nil || !reflect.DeepEqual(o, &op.Delete{Path: "/x", Mtime: 1}) {
		t.Fatalf("version 1 body = %#v, %v", o, err)
	}
	if _, err := decodeBody(op.CodeDelete, append(v1, 0, 0), 1); err == nil {
		t.Fatal("a version 2 body decoded as version 1")
	}
	if _, err := decodeBody(op.CodeDelete, v1, 2); err == nil {
		t.Fatal("a version 1 body decoded as version 2")
	}
}

func randString(r *rand.Rand) string {
	b := make([]byte, r.IntN(20))
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return string(b)
}

func randBlock(r *rand.Rand) op.Block {
	return op.Block{ID: int64(r.Uint64()), NumBytes: r.Int64(), GenStamp: int64(r.Uint64())}
}

func randBlocks(r *rand.Rand) []op.Block {
	n := r.IntN(4)
	if n == 0 {
		return nil
	}
	b := make([]op.Block, n)
	for i := range b {
		b[i] = randBlock(r)
	}
	return b
}

func randOptBlock(r *rand.Rand) *op.Block {
	if r.IntN(2) == 0 {
		return nil
	}
	b := randBlock(r)
	return &b
}

// randOp fills a random op of a random type with random field values.
func randOp(r *rand.Rand) op.Op {
	s := func() string { return randString(r) }
	i64 := func() int64 { return int64(r.Uint64()) }
	u16 := func() uint16 { return uint16(r.Uint32()) }
	bl := func() bool { return r.IntN(2) == 1 }
	perm := func() op.Perm { return op.Perm{User: s(), Group: s(), Mode: u16()} }
	xattrs := func() []op.XAttr {
		var xs []op.XAttr
		for range r.IntN(3) {
			x := op.XAttr{NS: uint8(r.IntN(5)), Name: s()}
			if bl() {
				x.Value = []byte(s())
			}
			xs = append(xs, x)
		}
		return xs
	}
	switch r.IntN(30) {
	case 27:
		return &op.CreateSnapshot{Root: s(), Name: s(), Mtime: r.Int64()}
	case 28:
		return &op.DeleteSnapshot{Root: s(), Name: s(), Mtime: r.Int64()}
	case 29:
		return &op.RenameSnapshot{Root: s(), OldName: s(), NewName: s(), Mtime: r.Int64()}
	case 25:
		return &op.AllowSnapshot{Path: s()}
	case 26:
		return &op.DisallowSnapshot{Path: s()}
	case 21:
		return &op.SetXAttr{Path: s(), XAttrs: xattrs()}
	case 22:
		return &op.RemoveXAttr{Path: s(), XAttrs: xattrs()}
	case 23:
		return &op.SetStoragePolicy{Path: s(), PolicyID: uint8(r.Uint32())}
	case 24:
		a := &op.SetACL{Path: s()}
		for range r.IntN(4) {
			a.Entries = append(a.Entries, op.ACLEntry{Scope: uint8(r.IntN(2)), Type: uint8(r.IntN(4)), Perm: uint8(r.IntN(8)), Name: s()})
		}
		return a
	case 0:
		return &op.Add{InodeID: r.Uint64(), Path: s(), Replication: u16(), Mtime: i64(), Atime: i64(),
			BlockSize: i64(), Perm: perm(), ClientName: s(), ClientMachine: s(), Overwrite: bl()}
	case 1:
		return &op.Mkdir{InodeID: r.Uint64(), Path: s(), Mtime: i64(), Perm: perm()}
	case 2:
		return &op.Delete{Path: s(), Mtime: i64()}
	case 3:
		return &op.RenameOld{Src: s(), Dst: s(), Mtime: i64()}
	case 4:
		return &op.Rename{Src: s(), Dst: s(), Mtime: i64(), Overwrite: bl()}
	case 5:
		return &op.SetReplication{Path: s(), Replication: u16()}
	case 6:
		return &op.SetPermissions{Path: s(), Mode: u16()}
	case 7:
		return &op.SetOwner{Path: s(), User: s(), Group: s()}
	case 8:
		return &op.Times{Path: s(), Mtime: i64(), Atime: i64()}
	case 9:
		return &op.SetQuota{Path: s(), NsQuota: i64(), DsQuota: i64()}
	case 10:
		c := &op.Concat{Target: s(), Mtime: i64()}
		for range r.IntN(4) {
			c.Srcs = append(c.Srcs, s())
		}
		return c
	case 11:
		return &op.ReassignLease{Holder: s(), Path: s(), NewHolder: s()}
	case 12:
		return &op.StartLogSegment{}
	case 13:
		return &op.EndLogSegment{}
	case 14:
		return &op.UpdateBlocks{Path: s(), Blocks: randBlocks(r)}
	case 15:
		return &op.SetGenstamp{GenStamp: i64()}
	case 16:
		return &op.AllocateBlockID{BlockID: i64()}
	case 17:
		return &op.AddBlock{Path: s(), Penultimate: randOptBlock(r), Last: randBlock(r)}
	case 18:
		return &op.Close{Path: s(), Mtime: i64(), Atime: i64(), Blocks: randBlocks(r)}
	case 19:
		return &op.Append{Path: s(), ClientName: s(), ClientMachine: s(), NewBlock: bl()}
	default:
		return &op.Truncate{Path: s(), ClientName: s(), ClientMachine: s(), NewLength: i64(),
			Mtime: i64(), TruncateBlock: randOptBlock(r)}
	}
}

func TestRecordRandomRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var buf []byte
	var want []op.Op
	for i := range 2000 {
		o := randOp(r)
		want = append(want, o)
		buf = mustEncode(buf, int64(i+1), o)
	}
	dec := NewDecoder(bytes.NewReader(buf), "mem", 0, LayoutVersion)
	for i, w := range want {
		txid, got, err := dec.Next()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if txid != int64(i+1) || !reflect.DeepEqual(got, w) {
			t.Fatalf("record %d = %d %#v, want %#v", i, txid, got, w)
		}
	}
	if _, _, err := dec.Next(); err != io.EOF {
		t.Fatalf("after last record: %v, want io.EOF", err)
	}
	if dec.Offset() != int64(len(buf)) {
		t.Fatalf("Offset = %d, want %d", dec.Offset(), len(buf))
	}
}

func TestEncodeNoAlloc(t *testing.T) {
	o := &op.Mkdir{InodeID: 1, Path: "/a/b", Mtime: 1, Perm: op.Perm{User: "u", Group: "g", Mode: 0o755}}
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { buf = mustEncode(buf[:0], 7, o) }); n != 0 {
		t.Fatalf("EncodeRecord allocates %v times per call", n)
	}
}

// TestDecoderDamage checks how the Decoder classifies damaged input.
func TestDecoderDamage(t *testing.T) {
	r1 := mustEncode(nil, 1, &op.Delete{Path: "/a", Mtime: 1})
	r2 := mustEncode(nil, 2, &op.Delete{Path: "/b", Mtime: 2})
	r3 := mustEncode(nil, 3, &op.Delete{Path: "/c", Mtime: 3})
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	flip := func(b []byte, i int) []byte {
		c := bytes.Clone(b)
		c[i] ^= 0x40
		return c
	}
	badLen := bytes.Clone(r2)
	binary.BigEndian.PutUint32(badLen[9:], MaxRecordBody+1)
	longLen := bytes.Clone(r2)
	binary.BigEndian.PutUint32(longLen[9:], 200)
	n1 := int64(len(r1))
	for _, tc := range []struct {
		name    string
		data    []byte
		good    int   // records decoded before the error
		torn    bool  // want *TornRecordError, else *CorruptionError
		wantOff int64 // offset in the error
	}{
		{"cut in header", cat(r1, r2[:5]), 1, true, n1},
		{"cut in body", cat(r1, r2[:len(r2)-1]), 1, true, n1},
		{"bad crc at end", cat(r1, flip(r2, 14)), 1, true, n1},
		{"zero tail", cat(r1, make([]byte, 100)), 1, true, n1},
		{"bad crc in middle", cat(r1, flip(r2, 14), r3), 1, false, n1},
		{"bad opcode", cat(r1, flip(r2, 0), r3), 1, false, n1},
		{"length over max", cat(r1, badLen, r3), 1, false, n1},
		{"length swallows records", cat(r1, longLen, r3, r3), 1, false, n1},
		{"zeros then data", cat(r1, make([]byte, 20), r3), 1, false, n1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dec := NewDecoder(bytes.NewReader(tc.data), "seg", 0, LayoutVersion)
			for i := range tc.good {
				if _, _, err := dec.Next(); err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
			}
			_, _, err := dec.Next()
			var torn *TornRecordError
			var corrupt *CorruptionError
			switch {
			case tc.torn && errors.As(err, &torn):
				if torn.Offset != tc.wantOff || torn.File != "seg" {
					t.Errorf("torn at %s:%d, want seg:%d", torn.File, torn.Offset, tc.wantOff)
				}
			case !tc.torn && errors.As(err, &corrupt):
				if corrupt.Offset != tc.wantOff || corrupt.File != "seg" {
					t.Errorf("corrupt at %s:%d, want seg:%d", corrupt.File, corrupt.Offset, tc.wantOff)
				}
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("%v does not match ErrCorrupt", err)
				}
			default:
				t.Fatalf("err = %v (%T), want torn=%v", err, err, tc.torn)
			}
		})
	}
}

func TestDecodeRecordErrors(t *testing.T) {
	rec := mustEncode(nil, 9, &op.SetGenstamp{GenStamp: 5})
	if _, _, err := DecodeRecord(bytes.NewReader(nil)); err != io.EOF {
		t.Errorf("empty: %v, want io.EOF", err)
	}
	if _, _, err := DecodeRecord(bytes.NewReader(rec[:len(rec)-2])); !errors.Is(err, ErrTornRecord) {
		t.Errorf("short: %v, want ErrTornRecord", err)
	}
	bad := bytes.Clone(rec)
	bad[len(bad)-1] ^= 1
	if _, _, err := DecodeRecord(bytes.NewReader(bad)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("bad crc: %v, want ErrCorrupt", err)
	}
	// A valid checksum over a body that does not parse is corruption too.
	body := []byte{0x80} // unterminated varint
	r := []byte{byte(op.CodeSetGenstamp), 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1}
	r = append(r, body...)
	r = binary.BigEndian.AppendUint32(r, crcOf(r))
	if _, _, err := DecodeRecord(bytes.NewReader(r)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("bad body: %v, want ErrCorrupt", err)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	for i, o := range sampleOps() {
		f.Add(mustEncode(nil, int64(i+1), o))
	}
	f.Add(bytes.Join([][]byte{mustEncode(nil, 1, &op.Delete{Path: "/a"}), make([]byte, 9)}, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		txid, o, err := DecodeRecord(bytes.NewReader(data))
		if err == nil {
			// Whatever decodes must encode back to the same bytes.
			again := mustEncode(nil, txid, o)
			if !bytes.Equal(again, data[:len(again)]) {
				t.Fatalf("re-encoding differs:\n% x\n% x", again, data[:len(again)])
			}
		}
		if _, err := ReadSegmentHeader(bytes.NewReader(data), "fuzz"); err == nil && !bytes.Equal(data[:SegmentHeaderSize], AppendSegmentHeader(nil)) {
			t.Fatalf("accepted segment header % x", data[:SegmentHeaderSize])
		}
		n1, off1, err1 := decodeAll(data)
		// A preallocated segment's zero fill after the same bytes changes
		// nothing before the end: the same records, then a stop (a torn
		// tail, or damage a whole record inside the last one shows) at the
		// same offset.
		n2, off2, err2 := decodeAll(append(data[:len(data):len(data)], make([]byte, 4096)...))
		var torn *TornRecordError
		if err1 == io.EOF || errors.As(err1, &torn) {
			if n2 != n1 || off2 != off1 || !(errors.As(err2, &torn) || errors.Is(err2, ErrCorrupt)) {
				t.Fatalf("without fill: %d records, %v at %d; with fill: %d records, %v at %d", n1, err1, off1, n2, err2, off2)
			}
		}
	})
}

// decodeAll runs a Decoder over data and returns how many records it gave,
// its offset when it stopped and the error that stopped it.
func decodeAll(data []byte) (int, int64, error) {
	dec := NewDecoder(bytes.NewReader(data), "fuzz", 0, LayoutVersion)
	for n := 0; ; n++ {
		if _, _, err := dec.Next(); err != nil {
			return n, dec.Offset(), err
		}
	}
}
