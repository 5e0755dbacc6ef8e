package oiv

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
)

var testHeader = fsimage.Header{LayoutVersion: 1, NamespaceID: 4242, TxID: 77, LastInodeID: 16391, GenStamp: 1005, LastBlockID: 1073741830, NumInodes: 7}

func testInodes() []*fsimage.Inode {
	return []*fsimage.Inode{
		{ID: 16385, IsDir: true, Perm: op.Perm{User: "hdfs", Group: "supergroup", Mode: 0o755}, Mtime: 1700000000000, NsQuota: -1, DsQuota: -1},
		{ID: 16386, ParentID: 16385, Name: []byte("user"), IsDir: true, Perm: op.Perm{User: "hdfs", Group: "supergroup", Mode: 0o1777}, Mtime: 1700000000100, NsQuota: 1000, DsQuota: 1 << 30,
			Snapshottable: true, ACL: []op.ACLEntry{{Scope: op.ACLAccess, Type: op.ACLUser, Name: "bob", Perm: 5}, {Scope: op.ACLDefault, Type: op.ACLGroup, Perm: 6}}},
		{ID: 16387, ParentID: 16386, Name: []byte("data.csv"), Perm: op.Perm{User: "alice", Group: "staff", Mode: 0o644},
			Mtime: 1700000000200, Atime: 1700000000300, NsQuota: -1, DsQuota: -1, Replication: 3, BlockSize: 134217728,
			Blocks:        []op.Block{{ID: 1073741825, NumBytes: 134217728, GenStamp: 1001}, {ID: 1073741826, NumBytes: 5, GenStamp: 1002}},
			StoragePolicy: 2, XAttrs: []op.XAttr{{NS: op.XAttrUser, Name: "a1", Value: []byte("123")}, {NS: op.XAttrTrusted, Name: "bin", Value: []byte{0, 1, 2}}, {NS: op.XAttrUser, Name: "novalue"}}},
		{ID: 16388, ParentID: 16386, Name: []byte("open"), Perm: op.Perm{User: "bob", Group: "staff", Mode: 0o600},
			Mtime: 1700000000400, Atime: 1700000000400, NsQuota: -1, DsQuota: -1, Replication: 1, BlockSize: 1048576,
			Blocks: []op.Block{{ID: 1073741827, NumBytes: 0, GenStamp: 1003}}, UC: &fsimage.UnderConstruction{ClientName: "DFSClient_7", ClientMachine: "10.0.0.9"}},
		{ID: 16389, ParentID: 16385, Name: []byte("a&b<c>\\d"), IsDir: true, Perm: op.Perm{User: "x:y", Group: "g", Mode: 0o700}, Mtime: 1, Atime: 2, NsQuota: -1, DsQuota: -1},
		{ID: 16390, ParentID: 16389, Name: []byte("empty"), Perm: op.Perm{User: "hdfs", Group: "supergroup", Mode: 0o644}, Mtime: 3, Atime: 4, NsQuota: -1, DsQuota: -1, Replication: 2, BlockSize: 1048576},
		{ID: 16391, ParentID: 16385, Name: []byte("tmp"), IsDir: true, Perm: op.Perm{User: "hdfs", Group: "supergroup", Mode: 0o777}, Mtime: 5, NsQuota: -1, DsQuota: -1},
	}
}

func testImage(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := fsimage.NewWriter(&b, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range testInodes() {
		if err := w.Write(in); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// node is an XML element read with encoding/xml alone.
type node struct {
	XMLName xml.Name
	Text    string `xml:",chardata"`
	Kids    []node `xml:",any"`
}

func (n node) kid(name string) node {
	for _, k := range n.Kids {
		if k.XMLName.Local == name {
			return k
		}
	}
	return node{}
}

func (n node) all(name string) []node {
	var out []node
	for _, k := range n.Kids {
		if k.XMLName.Local == name {
			out = append(out, k)
		}
	}
	return out
}

// fields lists an element's leaf children as name=text, in order.
func (n node) fields() string {
	var f []string
	for _, k := range n.Kids {
		if len(k.Kids) == 0 {
			f = append(f, k.XMLName.Local+"="+k.Text)
		} else {
			f = append(f, k.XMLName.Local+"{"+k.fields()+"}")
		}
	}
	return strings.Join(f, " ")
}

// The XML of an image, checked field by field against the inodes and the
// header that made it; ReverseXML turns it back into the same bytes.
func TestXMLFieldByField(t *testing.T) {
	img := testImage(t)
	var x bytes.Buffer
	if err := XML(bytes.NewReader(img), &x); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(x.String(), "<?xml version=\"1.0\"?>\n<fsimage><version><layoutVersion>1</layoutVersion><onDiskVersion>") {
		t.Fatalf("XML starts:\n%.200s", x.String())
	}
	var root node
	if err := xml.Unmarshal(x.Bytes(), &root); err != nil {
		t.Fatalf("not XML: %v\n%s", err, x.String())
	}
	if root.XMLName.Local != "fsimage" {
		t.Fatalf("root <%s>", root.XMLName.Local)
	}
	if got, want := root.kid("NameSection").fields(), "namespaceId=4242 genstampV2=1005 lastAllocatedBlockId=1073741830 txid=77"; got != want {
		t.Errorf("NameSection %s, want %s", got, want)
	}
	sec := root.kid("INodeSection")
	if sec.kid("lastInodeId").Text != "16391" || sec.kid("numInodes").Text != "7" {
		t.Errorf("INodeSection header %s", sec.fields())
	}
	want := []string{
		"id=16385 type=DIRECTORY name= mtime=1700000000000 permission=hdfs:supergroup:0755 nsquota=-1 dsquota=-1",
		"id=16386 type=DIRECTORY name=user mtime=1700000000100 permission=hdfs:supergroup:1777 nsquota=1000 dsquota=1073741824 acls{acl=user:bob:r-x acl=default:group::rw-}",
		"id=16387 type=FILE name=data.csv replication=3 mtime=1700000000200 atime=1700000000300 preferredBlockSize=134217728 permission=alice:staff:0644 " +
			"blocks{block{id=1073741825 genstamp=1001 numBytes=134217728} block{id=1073741826 genstamp=1002 numBytes=5}} storagePolicyId=2 " +
			"xattrs{xattr{ns=USER name=a1 val=123} xattr{ns=TRUSTED name=bin valHex=000102} xattr{ns=USER name=novalue}}",
		"id=16388 type=FILE name=open replication=1 mtime=1700000000400 atime=1700000000400 preferredBlockSize=1048576 permission=bob:staff:0600 " +
			"blocks{block{id=1073741827 genstamp=1003 numBytes=0}} file-under-construction{clientName=DFSClient_7 clientMachine=10.0.0.9}",
		`id=16389 type=DIRECTORY name=a&b<c>\005c;d mtime=1 atime=2 permission=x\003a;y:g:0700 nsquota=-1 dsquota=-1`,
		"id=16390 type=FILE name=empty replication=2 mtime=3 atime=4 preferredBlockSize=1048576 permission=hdfs:supergroup:0644",
		"id=16391 type=DIRECTORY name=tmp mtime=5 permission=hdfs:supergroup:0777 nsquota=-1 dsquota=-1",
	}
	inodes := sec.all("inode")
	if len(inodes) != len(want) {
		t.Fatalf("%d inodes, want %d", len(inodes), len(want))
	}
	for i, w := range want {
		if got := inodes[i].fields(); got != w {
			t.Errorf("inode %d:\n got %s\nwant %s", i, got, w)
		}
	}
	var dirs []string
	for _, d := range root.kid("INodeDirectorySection").all("directory") {
		dirs = append(dirs, d.fields())
	}
	if got, w := strings.Join(dirs, "; "), "parent=16385 child=16386 child=16389 child=16391; parent=16386 child=16387 child=16388; parent=16389 child=16390"; got != w {
		t.Errorf("directories:\n got %s\nwant %s", got, w)
	}
	if got := root.kid("SnapshotSection").kid("snapshottableDir").fields(); got != "dir=16386" {
		t.Errorf("snapshottable directories: %s", got)
	}
	if got := root.kid("FileUnderConstructionSection").kid("inode").fields(); got != "id=16388 path=/user/open" {
		t.Errorf("files under construction: %s", got)
	}

	var back bytes.Buffer
	sum, err := ReverseXML(bytes.NewReader(x.Bytes()), &back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), img) {
		t.Fatalf("ReverseXML gave a different image (%d bytes, want %d)", back.Len(), len(img))
	}
	if sum == ([16]byte{}) {
		t.Fatal("no MD5")
	}
}

func TestDelimited(t *testing.T) {
	var out bytes.Buffer
	if err := Delimited(bytes.NewReader(testImage(t)), &out, "\t", time.UTC); err != nil {
		t.Fatal(err)
	}
	want := "Path\tReplication\tModificationTime\tAccessTime\tPreferredBlockSize\tBlocksCount\tFileSize\tNSQUOTA\tDSQUOTA\tPermission\tUserName\tGroupName\n" +
		"/\t0\t2023-11-14 22:13\t1970-01-01 00:00\t0\t0\t0\t-1\t-1\tdrwxr-xr-x\thdfs\tsupergroup\n" +
		"/user\t0\t2023-11-14 22:13\t1970-01-01 00:00\t0\t0\t0\t1000\t1073741824\tdrwxrwxrwt\thdfs\tsupergroup\n" +
		"/user/data.csv\t3\t2023-11-14 22:13\t2023-11-14 22:13\t134217728\t2\t134217733\t0\t0\t-rw-r--r--\talice\tstaff\n" +
		"/user/open\t1\t2023-11-14 22:13\t2023-11-14 22:13\t1048576\t1\t0\t0\t0\t-rw-------\tbob\tstaff\n" +
		"/a&b<c>\\d\t0\t1970-01-01 00:00\t1970-01-01 00:00\t0\t0\t0\t-1\t-1\tdrwx------\tx:y\tg\n" +
		"/a&b<c>\\d/empty\t2\t1970-01-01 00:00\t1970-01-01 00:00\t1048576\t0\t0\t0\t0\t-rw-r--r--\thdfs\tsupergroup\n" +
		"/tmp\t0\t1970-01-01 00:00\t1970-01-01 00:00\t0\t0\t0\t-1\t-1\tdrwxrwxrwx\thdfs\tsupergroup\n"
	if out.String() != want {
		t.Fatalf("Delimited:\n%s\nwant\n%s", out.String(), want)
	}
}

func TestFileDistribution(t *testing.T) {
	var out bytes.Buffer
	if err := FileDistribution(bytes.NewReader(testImage(t)), &out, 256<<20, 64<<20, false); err != nil {
		t.Fatal(err)
	}
	// Sizes 134217733 (bucket ceil(/64 MiB) = 3), 0, 0 (bucket 0).
	want := "Processed 0 inodes.\nSize\tNumFiles\n0\t2\n201326592\t1\ntotalFiles = 3\ntotalDirectories = 4\ntotalBlocks = 3\ntotalSpace = 402653199\nmaxFileSize = 134217733\n"
	if out.String() != want {
		t.Fatalf("FileDistribution:\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	if err := FileDistribution(bytes.NewReader(testImage(t)), &out, 64<<20, 64<<20, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\n67108864\t1\n") {
		t.Fatalf("a file over -maxSize is not in the last bucket:\n%s", out.String())
	}
	out.Reset()
	if err := FileDistribution(bytes.NewReader(testImage(t)), &out, 256<<20, 64<<20, true); err != nil {
		t.Fatal(err)
	}
	if want := "Processed 0 inodes.\nSize Range\tNumFiles\n[0 B, 0 B]\t2\n(128 MB, 192 MB]\t1\n"; !strings.HasPrefix(out.String(), want) {
		t.Fatalf("-format:\n%s\nwant it to start\n%s", out.String(), want)
	}
}

func TestByteDesc(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1 KB"}, {1536, "1.50 KB"}, {2 << 20, "2 MB"}, {128 << 30, "128 GB"},
		{1<<20 - 1, "1.00 MB"}, {134217733, "128.00 MB"}} {
		if got := byteDesc(c.n); got != c.want {
			t.Errorf("byteDesc(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestReverseXMLErrors(t *testing.T) {
	var x bytes.Buffer
	if err := XML(bytes.NewReader(testImage(t)), &x); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{"<type>FILE</type>", "<type>SYMLINK</type>", "SYMLINK"},
		{"<numInodes>7</numInodes>", "<numInodes>8</numInodes>", "numInodes is 8"},
		{"<child>16390</child>", "", "in no directory"},
		{"<mtime>5</mtime>", "<mtime>five</mtime>", `"five" is not a number`},
		{"permission>hdfs:supergroup:0777<", "permission>hdfs:supergroup:0999<", "not octal"},
	} {
		doc := strings.Replace(x.String(), c.from, c.to, 1)
		_, err := ReverseXML(strings.NewReader(doc), io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s -> %s: %v, want an error with %q", c.from, c.to, err, c.want)
		}
	}
}

// ReverseXML takes any input: an error, or an image that reads back.
func FuzzReverseXML(f *testing.F) {
	var x bytes.Buffer
	if err := XML(bytes.NewReader(testImage(f)), &x); err != nil {
		f.Fatal(err)
	}
	f.Add(x.Bytes())
	f.Add([]byte("<fsimage><INodeSection><inode><id>1</id><type>DIRECTORY</type><permission>a:b:0</permission></inode></INodeSection></fsimage>"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		var img bytes.Buffer
		if _, err := ReverseXML(bytes.NewReader(doc), &img); err != nil {
			return
		}
		if err := XML(bytes.NewReader(img.Bytes()), io.Discard); err != nil {
			t.Fatalf("ReverseXML wrote an image that does not read: %v", err)
		}
	})
}

// TestXMLSnapshots: the SnapshotSection lists the snapshots of an image,
// and ReverseXML refuses an image with snapshots instead of dropping them.
func TestXMLSnapshots(t *testing.T) {
	tr := namespace.New(namespace.DefaultConfig("hdfs"))
	super := namespace.Caller{User: "hdfs"}
	apply := func(ops []op.Op, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range ops {
			if err := tr.Apply(o); err != nil {
				t.Fatal(err)
			}
		}
	}
	apply(tr.PlanMkdirs(super, "/d", 0o755, true, 1))
	apply(tr.PlanAllowSnapshot(super, "/d"))
	for i, name := range []string{"s1", "s2"} {
		_, ops, err := tr.PlanCreateSnapshot(super, "/d", name, 0, int64(100+i))
		apply(ops, err)
	}
	var img bytes.Buffer
	w, err := fsimage.NewWriter(&img, tr.ImageHeader(7))
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Export(w.Write); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var x bytes.Buffer
	if err := XML(bytes.NewReader(img.Bytes()), &x); err != nil {
		t.Fatal(err)
	}
	want := "<SnapshotSection><snapshotCounter>2</snapshotCounter><numSnapshots>2</numSnapshots><snapshottableDir><dir>16386</dir></snapshottableDir>" +
		"<snapshot><id>1</id><root><id>16386</id><type>DIRECTORY</type><name>s1</name><mtime>100</mtime></root></snapshot>" +
		"<snapshot><id>2</id><root><id>16386</id><type>DIRECTORY</type><name>s2</name><mtime>101</mtime></root></snapshot></SnapshotSection>\n"
	if !strings.Contains(x.String(), want) {
		t.Fatalf("XML lacks\n%s\nin\n%s", want, x.String())
	}
	if _, err := ReverseXML(bytes.NewReader(x.Bytes()), io.Discard); err == nil || !strings.Contains(err.Error(), "cannot rebuild snapshots") {
		t.Fatalf("ReverseXML of an image with snapshots: %v", err)
	}
}
