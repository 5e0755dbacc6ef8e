package fsimage

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// TestGoldenBytes pins the encoding: a change to these bytes is a format
// change and needs a new FormatVersion.
func TestGoldenBytes(t *testing.T) {
	inodes := []Inode{
		{ID: 16385, IsDir: true, Perm: op.Perm{User: "hdfs", Group: "sg", Mode: 0o755}, Mtime: 1000, NsQuota: 1 << 62, DsQuota: -1},
		{ID: 16386, ParentID: 16385, Name: []byte("f"), Perm: op.Perm{User: "hdfs", Group: "sg", Mode: 0o644},
			Mtime: 1001, Atime: 1002, NsQuota: -1, DsQuota: -1, Replication: 3, BlockSize: 1 << 27,
			Blocks: []op.Block{{ID: 1 << 30, NumBytes: 5, GenStamp: 1001}},
			UC:     &UnderConstruction{ClientName: "c", ClientMachine: "m"}},
	}
	h := Header{LayoutVersion: -1001, NamespaceID: 7, TxID: 42, LastInodeID: 16386, GenStamp: 1001, LastBlockID: 1 << 30, NumInodes: 2}
	data, _ := encodeImage(t, h, inodes)
	// The image as format version 5 (main before copy-on-truncate) wrote
	// it; the older versions below are derived from it.
	v5 := "" +
		"48444653494d4731" + "00000005" + // magic, format version 5
		// 'H', 15 bytes: lv -1001, ns 7, txid 42, last inode 16386, gs 1001,
		// last block 2^30, 2 inodes; crc
		"48" + "0f" + "d10f" + "0e" + "54" + "828001" + "d20f" + "8080808008" + "02" + "17f7d1e5" +
		"44" + "00" + "40fcd00a" + // 'D', no delegation state; crc
		"53" + "01" + "00" + "2e2f062d" + // 'S', 1 byte: the last snapshot frame, no state; crc
		"49" + "44" + "02" + // 'I', 68 bytes, 2 records
		// root: flags dir|quota, id 16385, parent 0, no name, "hdfs" and "sg"
		// as new strings, mode 0755, mtime 1000, atime 0, ns 2^62, ds -1
		"05" + "828002" + "00" + "00" + "000468646673" + "00027367" + "ed03" + "d00f" + "00" + "80808080808080808001" + "01" +
		// file: flags uc, id +1, parent +16385, "f", strings #1 #2, mode 0644,
		// mtime +1, atime +1002
		"02" + "02" + "828002" + "0166" + "01" + "02" + "a403" + "02" + "d40f" +
		// replication 3, block size 2^27, 1 block: id 2^30, 5 bytes, gs 1001;
		// client "c" and machine "m" as new strings; crc
		"03" + "8080808001" + "01" + "8080808008" + "0a" + "d20f" + "000163" + "00016d" + "cd853344" +
		"54" + "03" + "02" + "01" + "04" + "e43117a4" // 'T': 2 inodes, 1 inode frame, 4 strings; crc
	// Version 8: the under-construction part ends with the truncate
	// source (0); the inode frame grows by that byte.
	v8 := strings.Replace(strings.Replace(strings.Replace(v5, "00000005", "00000008", 1),
		"494402", "494502", 1), "000163"+"00016d"+"cd853344", "000163"+"00016d"+"00"+"dacb20bb", 1)
	// Version 9 changes only what the snapshot state may hold, which this
	// package does not read: the records are version 8's.
	want := strings.Replace(v8, "00000008", "00000009", 1)
	got := hex.EncodeToString(data)
	if got != want {
		t.Errorf("encoding changed:\n got %s\nwant %s", got, want)
	}
	r8, _, err := NewReader(bytes.NewReader(mustHex(t, v8)))
	if err != nil {
		t.Fatalf("version 8 image: %v", err)
	}
	if got8, err := readAll(r8); err != nil || len(got8) != 2 {
		t.Fatalf("version 8 image: %+v, %v", got8, err)
	}
	// The same image in format version 3 (no snapshot frame) still reads.
	r5, _, err := NewReader(bytes.NewReader(mustHex(t, v5)))
	if err != nil {
		t.Fatalf("version 5 image: %v", err)
	}
	if got5, err := readAll(r5); err != nil || len(got5) != 2 || got5[1].UC == nil || got5[1].UC.TruncateSource != 0 {
		t.Fatalf("version 5 image: %+v, %v", got5, err)
	}
	v3 := strings.Replace(strings.Replace(v5, "00000005", "00000003", 1), "5301002e2f062d", "", 1)
	old3, _ := hex.DecodeString(v3)
	r3, h3, err := NewReader(bytes.NewReader(old3))
	if err != nil || h3.TxID != 42 || h3.Snapshots != nil {
		t.Fatalf("version 3 image: %+v %v", h3, err)
	}
	if got, err := readAll(r3); err != nil || len(got) != 2 {
		t.Fatalf("version 3 image: %d inodes, %v", len(got), err)
	}
	// The same image in format version 1 (no delegation frame) still reads.
	v1 := strings.Replace(strings.Replace(v3, "00000003", "00000001", 1), "440040fcd00a", "", 1)
	old, _ := hex.DecodeString(v1)
	r1, h1, err := NewReader(bytes.NewReader(old))
	if err != nil || h1.TxID != 42 || h1.Delegation != nil {
		t.Fatalf("version 1 image: %+v %v", h1, err)
	}
	if got, err := readAll(r1); err != nil || len(got) != 2 {
		t.Fatalf("version 1 image: %d inodes, %v", len(got), err)
	}
	r, _, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(r); err != nil {
		t.Fatal(err)
	}
	// An image of format version 2 (features, no delegation frame) still
	// loads.
	v2, _ := hex.DecodeString(strings.Replace(strings.Replace(v3, "00000003", "00000002", 1), "440040fcd00a", "", 1))
	r, _, err = NewReader(bytes.NewReader(v2))
	if err != nil {
		t.Fatalf("version 2 image: %v", err)
	}
	got2, err := readAll(r)
	if err != nil || len(got2) != 2 || got2[1].Name == nil {
		t.Fatalf("version 2 image: %d inodes, %v", len(got2), err)
	}
	// And one of format version 4 (main's snapshot frames, no quotas by
	// storage type).
	v4, _ := hex.DecodeString(strings.Replace(v5, "00000005", "00000004", 1))
	r, _, err = NewReader(bytes.NewReader(v4))
	if err != nil {
		t.Fatalf("version 4 image: %v", err)
	}
	if got4, err := readAll(r); err != nil || len(got4) != 2 {
		t.Fatalf("version 4 image: %d inodes, %v", len(got4), err)
	}
}

// TestGoldenTypeQuotas pins the encoding of a directory's quotas by
// storage type (format version 5) and checks that an older reader refuses
// the flag.
func TestGoldenTypeQuotas(t *testing.T) {
	inodes := []Inode{
		{ID: 16385, IsDir: true, Perm: op.Perm{User: "u", Group: "g", Mode: 0o755}, NsQuota: -1, DsQuota: -1,
			TypeQuotas: []TypeQuota{{Type: 2, Quota: 1024}, {Type: 3, Quota: 1 << 40}}},
	}
	h := Header{LayoutVersion: -1, TxID: 1, LastInodeID: 16385, NumInodes: 1}
	data, _ := encodeImage(t, h, inodes)
	// flags dir|typeQuota, id, parent, no name, "u", "g", mode, times;
	// 2 type quotas: SSD 1024, ARCHIVE 2^40.
	rec := "81" + "828002" + "00" + "00" + "000175" + "000167" + "ed03" + "00" + "00" + "02" + "02" + "8010" + "03" + "808080808040"
	if !strings.Contains(hex.EncodeToString(data), rec) {
		t.Fatalf("type-quota record %s not in %x", rec, data)
	}
	r, _, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(r)
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0].TypeQuotas, inodes[0].TypeQuotas) {
		t.Fatalf("read back %+v, %v", got, err)
	}
	old := bytes.Clone(data)
	old[11] = 3 // format version 3
	r, _, err = NewReader(bytes.NewReader(old))
	if err == nil {
		_, err = readAll(r)
	}
	if err == nil {
		t.Fatal("a version 3 image with quotas by storage type was read")
	}
}

// TestGoldenFeatures pins the encoding of an inode's features (format
// version 2) and checks that a version 1 reader refuses the flag.
func TestGoldenFeatures(t *testing.T) {
	inodes := []Inode{
		{ID: 16385, IsDir: true, Perm: op.Perm{User: "u", Group: "g", Mode: 0o755}, NsQuota: -1, DsQuota: -1,
			StoragePolicy: 12,
			XAttrs:        []op.XAttr{{NS: op.XAttrUser, Name: "a", Value: []byte("v")}, {NS: op.XAttrTrusted, Name: "b"}},
			ACL:           []op.ACLEntry{{Type: op.ACLUser, Name: "u", Perm: 5}, {Scope: op.ACLDefault, Type: op.ACLOther, Perm: 4}}},
	}
	h := Header{TxID: 1, LastInodeID: 16385, NumInodes: 1}
	data, _ := encodeImage(t, h, inodes)
	const rec = "09" + "828002" + "00" + "00" + "000175" + "000167" + "ed03" + "00" + "00" + // flags dir|features, id, parent, name, u, g, mode, times
		"0c" + "02" + // policy 12, 2 xattrs
		"00" + "000161" + "01" + "01" + "76" + // user.a = "v"
		"01" + "000162" + "00" + // trusted.b, no value
		"02" + "05" + "01" + "3c" + "0000" // 2 ACL entries: access user u r-x (string #1), default other r-- (new string "")
	got := hex.EncodeToString(data)
	if !strings.Contains(got, rec) {
		t.Fatalf("features encoding changed:\n got %s\nwant a record %s", got, rec)
	}
	r, _, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	back, err := readAll(r)
	if err != nil || !reflect.DeepEqual(back[0].XAttrs, inodes[0].XAttrs) || !reflect.DeepEqual(back[0].ACL, inodes[0].ACL) || back[0].StoragePolicy != 12 {
		t.Fatalf("read back %+v, %v", back, err)
	}
	old := bytes.Clone(data)
	old[11] = 1
	r, _, err = NewReader(bytes.NewReader(old))
	if err == nil {
		_, err = readAll(r)
	}
	if err == nil {
		t.Fatal("a version 1 image with the features flag was read")
	}
}

// FuzzReadTypeQuotaFrame feeds arbitrary record bytes inside a well-formed
// inode frame of a current-version image, seeded with a directory that has
// quotas by storage type, so the fuzzer reaches that decoder.
func FuzzReadTypeQuotaFrame(f *testing.F) {
	f.Add(mustHex(f, "01"+"81"+"828002"+"00"+"00"+"000175"+"000167"+"ed03"+"00"+"00"+"02"+"02"+"8010"+"03"+"808080808040"))
	f.Add(mustHex(f, "01"+"81"+"828002"+"00"+"00"+"000175"+"000167"+"ed03"+"00"+"00"+"ffffffff0f"))
	f.Fuzz(func(t *testing.T, payload []byte) {
		img := binary.BigEndian.AppendUint32([]byte(Magic), FormatVersion)
		var h []byte
		for _, v := range []uint64{1, 1, 1, 1, 1, 1} {
			h = binary.AppendUvarint(h, v)
		}
		h = binary.AppendUvarint(h, 1<<20) // NumInodes
		img = append(img, frameBytes(frameHeader, h)...)
		img = append(img, frameBytes(frameDelegation, nil)...)
		img = append(img, frameBytes(frameSnapshots, []byte{0})...) // no snapshots
		img = append(img, frameBytes(frameInodes, payload)...)
		err := readImage(img)
		if err == nil || !errors.Is(err, ErrCorrupt) {
			// The trailer is missing, so a clean read is impossible.
			t.Fatalf("err = %v, want ErrCorrupt", err)
		}
	})
}

// TestTypeQuotaFrameSeedsReachDecoder: the fuzz target's image frame
// reaches the quotas-by-storage-type decoder (a bad count is its error).
func TestTypeQuotaFrameSeedsReachDecoder(t *testing.T) {
	payload := mustHex(t, "01"+"81"+"828002"+"00"+"00"+"000175"+"000167"+"ed03"+"00"+"00"+"ffffffff0f")
	img := binary.BigEndian.AppendUint32([]byte(Magic), FormatVersion)
	var h []byte
	for _, v := range []uint64{1, 1, 1, 1, 1, 1} {
		h = binary.AppendUvarint(h, v)
	}
	h = binary.AppendUvarint(h, 1<<20)
	img = append(img, frameBytes(frameHeader, h)...)
	img = append(img, frameBytes(frameDelegation, nil)...)
	img = append(img, frameBytes(frameSnapshots, []byte{0})...)
	img = append(img, frameBytes(frameInodes, payload)...)
	if err := readImage(img); err == nil || !strings.Contains(err.Error(), "quotas by storage type") {
		t.Fatalf("err = %v, want the type-quota count refused", err)
	}
}

func mustHex(tb testing.TB, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestTruncateSourceRoundTrip checks that a file under construction keeps
// its copy-on-truncate source through the image (format version 8).
func TestTruncateSourceRoundTrip(t *testing.T) {
	inodes := []Inode{
		{ID: 16385, IsDir: true, Perm: op.Perm{User: "u", Group: "g", Mode: 0o755}, NsQuota: -1, DsQuota: -1},
		{ID: 16386, ParentID: 16385, Name: []byte("f"), Perm: op.Perm{User: "u", Group: "g", Mode: 0o644},
			NsQuota: -1, DsQuota: -1, Replication: 1, BlockSize: 1024,
			Blocks: []op.Block{{ID: 1<<30 + 7, NumBytes: 5, GenStamp: 1009}},
			UC:     &UnderConstruction{ClientName: "c", ClientMachine: "m", TruncateSource: 1<<30 + 2}},
	}
	h := Header{LayoutVersion: -1, TxID: 1, LastInodeID: 16386, LastBlockID: 1<<30 + 7, NumInodes: 2}
	data, _ := encodeImage(t, h, inodes)
	r, _, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(r)
	if err != nil || len(got) != 2 || got[1].UC == nil || got[1].UC.TruncateSource != 1<<30+2 {
		t.Fatalf("read back %+v, %v", got, err)
	}
}

// FuzzReadInodeFrameCurrent is FuzzReadInodeFrame for an image of the
// current format version (delegation and snapshot frames before the inode
// frame), so that the fields of later versions (the truncate source of a
// file under construction) are decoded too.
func FuzzReadInodeFrameCurrent(f *testing.F) {
	inodes := []Inode{
		{ID: 16385, IsDir: true, Perm: op.Perm{User: "u", Group: "g", Mode: 0o755}, NsQuota: -1, DsQuota: -1},
		{ID: 16386, ParentID: 16385, Name: []byte("f"), Perm: op.Perm{User: "u", Group: "g", Mode: 0o644},
			NsQuota: -1, DsQuota: -1, Replication: 1, BlockSize: 1024,
			Blocks: []op.Block{{ID: 1<<30 + 7, NumBytes: 5, GenStamp: 1009}},
			UC:     &UnderConstruction{ClientName: "c", ClientMachine: "m", TruncateSource: 1<<30 + 2}},
	}
	data, _ := encodeImage(f, Header{LayoutVersion: -1, TxID: 1, LastInodeID: 16386, NumInodes: 2}, inodes)
	i := bytes.LastIndexByte(data[:len(data)-10], frameInodes)
	for ; i > 0; i = bytes.LastIndexByte(data[:i], frameInodes) {
		n, k := binary.Uvarint(data[i+1:])
		if k > 0 && i+1+k+int(n)+4+1 < len(data) && data[i+1+k+int(n)+4] == frameTrailer {
			f.Add(bytes.Clone(data[i+1+k : i+1+k+int(n)]))
			break
		}
	}
	f.Add([]byte{1, 2, 2, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, payload []byte) {
		img := binary.BigEndian.AppendUint32([]byte(Magic), FormatVersion)
		var h []byte
		for _, v := range []uint64{1, 1, 1, 1, 1, 1} {
			h = binary.AppendUvarint(h, v)
		}
		h = binary.AppendUvarint(h, 1<<20) // NumInodes
		img = append(img, frameBytes(frameHeader, h)...)
		img = append(img, frameBytes(frameDelegation, nil)...)
		img = append(img, frameBytes(frameSnapshots, []byte{0})...)
		img = append(img, frameBytes(frameInodes, payload)...)
		if err := readImage(img); err == nil || !errors.Is(err, ErrCorrupt) {
			// The trailer is missing, so a clean read is impossible.
			t.Fatalf("err = %v, want ErrCorrupt", err)
		}
	})
}
