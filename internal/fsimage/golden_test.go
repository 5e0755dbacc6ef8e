package fsimage

import (
	"bytes"
	"encoding/hex"
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
		"48444653494d4731" + "00000003" + // magic, format version 3
		// 'H', 15 bytes: lv -1001, ns 7, txid 42, last inode 16386, gs 1001,
		// last block 2^30, 2 inodes; crc
		"48" + "0f" + "d10f" + "0e" + "54" + "828001" + "d20f" + "8080808008" + "02" + "17f7d1e5" +
		"44" + "00" + "40fcd00a" + // 'D', no delegation state; crc
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
	// The same image in format version 1 (no delegation frame) still reads.
	v1 := strings.Replace(strings.Replace(want, "00000003", "00000001", 1), "440040fcd00a", "", 1)
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
}
