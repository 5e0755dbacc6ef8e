package namenode_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// TestLoadsImageOfFormat3: testdata/main-image-v3 is a name directory that
// the NameNode of the main branch wrote before snapshots could be taken
// (image format 3 with a snapshottable directory, an xattr and an ACL,
// then an edit segment of layout 4). This build loads it, takes a
// snapshot on it, and after a saveNamespace (image format 4) and a
// restart has the same namespace and the snapshot.
func TestLoadsImageOfFormat3(t *testing.T) {
	h := newHarness(t)
	h.stop()
	h.fsys = vfs.NewMem()
	src := filepath.Join("testdata", "main-image-v3", "current")
	names, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"/nn/name1/current", "/nn/name2/current"} {
		if err := h.fsys.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, e := range names {
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			f, err := h.fsys.Create(dir + "/" + e.Name())
			if err != nil {
				t.Fatal(err)
			}
			f.Write(b)
			f.Sync()
			f.Close()
		}
	}
	h.start()
	before := h.dumpFull()
	for _, want := range []string{"/d dir", " snapshottable", "/d/f file", `xattr=user.k:"v"`, "/e/sub dir", "/e/g file", "acl="} {
		if !strings.Contains(before, want) {
			t.Fatalf("loaded namespace lacks %q:\n%s", want, before)
		}
	}
	// Its blocks have no DataNode here: leave safe mode by hand.
	if err := h.call("setSafeMode", &hdfs.SetSafeModeRequestProto{Action: hdfs.SafeModeActionProto_SAFEMODE_LEAVE.Enum()}, &hdfs.SetSafeModeResponseProto{}); err != nil {
		t.Fatal(err)
	}
	var resp hdfs.CreateSnapshotResponseProto
	if err := h.call("createSnapshot", &hdfs.CreateSnapshotRequestProto{SnapshotRoot: proto.String("/d"), SnapshotName: proto.String("s1")}, &resp); err != nil {
		t.Fatal(err)
	}
	if err := h.call("delete", &hdfs.DeleteRequestProto{Src: proto.String("/d/f"), Recursive: proto.Bool(false)}, &hdfs.DeleteResponseProto{}); err != nil {
		t.Fatal(err)
	}
	before = h.dumpFull()
	h.restartAfterSave()
	if after := h.dumpFull(); after != before {
		t.Fatalf("namespace changed across saveNamespace and a restart\nbefore:\n%s\nafter:\n%s", before, after)
	}
	var fi hdfs.GetFileInfoResponseProto
	if err := h.call("getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/d/.snapshot/s1/f")}, &fi); err != nil || fi.GetFs() == nil || fi.GetFs().GetLength() != 5 {
		t.Fatalf("getFileInfo through the snapshot: %v, %v", fi.GetFs(), err)
	}
}
