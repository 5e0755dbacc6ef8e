package fsimage

import (
	"bytes"
	"encoding/hex"
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
	want := "" +
		"48444653494d4731" + "00000004" + // magic, format version 4
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
	got := hex.EncodeToString(data)
	if got != want {
		t.Errorf("encoding changed:\n got %s\nwant %s", got, want)
	}
	// The same image in format version 3 (no snapshot frame) still reads.
	v3 := strings.Replace(strings.Replace(want, "00000004", "00000003", 1), "5301002e2f062d", "", 1)
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
