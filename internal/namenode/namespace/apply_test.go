package namespace

import (
	"errors"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

func TestNewTree(t *testing.T) {
	tr := New(testCfg())
	if tr.LastInodeID() != 16385 || tr.NextInodeID() != 16386 || tr.GenStamp() != 1000 || tr.LastBlockID() != 1<<30 || tr.NumInodes() != 1 {
		t.Fatalf("counters %d %d %d %d", tr.LastInodeID(), tr.GenStamp(), tr.LastBlockID(), tr.NumInodes())
	}
	// Accessors do not allocate.
	if tr.NextInodeID() != 16386 || tr.NextBlockID() != 1<<30+1 || tr.NextGenStamp() != 1001 {
		t.Fatal("next moved")
	}
	fi, err := tr.Stat(u1, "/")
	if err != nil || !fi.IsDir || fi.Mtime != 0 || fi.Perm.Mode != 0o755 || fi.Perm.User != "root" {
		t.Fatalf("%+v %v", fi, err)
	}
}

// TestApplyRejects checks that ops that do not fit the tree fail with
// ErrCorrupt and change nothing.
func TestApplyRejects(t *testing.T) {
	p := op.Perm{User: "u", Group: "g", Mode: 0o755}
	bad := []op.Op{
		&op.Mkdir{InodeID: 1 << 40, Path: "/nope/x", Perm: p},
		&op.Mkdir{InodeID: 1 << 40, Path: "/_test/u1/file/x", Perm: p},
		&op.Mkdir{InodeID: 1 << 40, Path: "/_test/u1", Perm: p},
		&op.Mkdir{InodeID: 1 << 40, Path: "/", Perm: p},
		&op.Mkdir{InodeID: 1 << 40, Path: "relative", Perm: p},
		&op.Add{InodeID: 1 << 40, Path: "/_test/u1/file", Perm: p},
		&op.Add{InodeID: 1 << 40, Path: "/_test/u1/dir", Perm: p, Overwrite: true},
		&op.Add{InodeID: 16389, Path: "/_test/u1/new", Perm: p}, // the id of /_test/u1/open
		&op.Add{InodeID: 1 << 40, Path: "/_test/u1/new/x", Perm: p},
		&op.Delete{Path: "/nope"},
		&op.Delete{Path: "/"},
		&op.RenameOld{Src: "/nope", Dst: "/x"},
		&op.RenameOld{Src: "/_test/u1/file", Dst: "/_test/u1/open"},
		&op.RenameOld{Src: "/_test/u1/dir", Dst: "/_test/u1/dir/sub/x"},
		&op.RenameOld{Src: "/_test/u1/file", Dst: "/nope/x"},
		&op.Rename{Src: "/_test/u1/file", Dst: "/_test/u1/empty", Overwrite: true},
		&op.Rename{Src: "/_test/u1/empty", Dst: "/_test/u1/dir", Overwrite: true},
		&op.Rename{Src: "/", Dst: "/x"},
		&op.SetReplication{Path: "/_test/u1/dir", Replication: 1},
		&op.SetPermissions{Path: "/nope", Mode: 1},
		&op.SetOwner{Path: "/nope", User: "x"},
		&op.Times{Path: "/nope", Mtime: 1},
		&op.SetQuota{Path: "/_test/u1/file", NsQuota: 1},
		&op.SetQuota{Path: "/_test/u1", NsQuota: -7, DsQuota: op.QuotaDontSet},
		&op.Concat{Target: "/_test/u1/open", Srcs: []string{"/_test/u1/file"}},
		&op.Concat{Target: "/_test/u1/file", Srcs: []string{"/_test/u1/open"}},
		&op.Concat{Target: "/_test/u1/file", Srcs: []string{"/_test/u1/dir/sub/f"}},
		&op.Concat{Target: "/_test/u1/file", Srcs: []string{"/_test/u1/file"}},
		&op.ReassignLease{Path: "/_test/u1/file", Holder: "a", NewHolder: "b"},
		&op.ReassignLease{Path: "/_test/u1/open", Holder: "wrong", NewHolder: "b"},
		&op.UpdateBlocks{Path: "/_test/u1/file"},
		&op.AddBlock{Path: "/_test/u1/file", Last: op.Block{ID: 9}},
		&op.AddBlock{Path: "/_test/u1/open", Penultimate: &op.Block{ID: 9}, Last: op.Block{ID: 10}},
		&op.Close{Path: "/_test/u1/file"},
		&op.Close{Path: "/_test/u1/dir"},
		&op.Append{Path: "/_test/u1/open"},
		&op.Append{Path: "/nope"},
		&op.Truncate{Path: "/_test/u1/file", NewLength: 1000},
		&op.Truncate{Path: "/_test/u1/file", NewLength: 50},
		&op.Truncate{Path: "/_test/u1/open", NewLength: 0},
		nil,
	}
	if fi, _ := fixture(t).Stat(super, "/_test/u1/open"); fi.ID != 16389 {
		t.Fatalf("fixture ids moved: open is %d", fi.ID)
	}
	for _, o := range bad {
		tr := fixture(t)
		before := dump(t, tr)
		err := tr.Apply(o)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%T %+v: err %v", o, o, err)
		}
		if dump(t, tr) != before {
			t.Errorf("%T %+v changed the tree", o, o)
		}
	}
}

func TestApplyBlocks(t *testing.T) {
	tr := fixture(t)
	var eff Effects
	// Truncate on a block boundary: the second block is freed, the file stays closed.
	if err := tr.ApplyEffects(&op.Truncate{Path: "/_test/u1/file", NewLength: 100, Mtime: 5}, &eff); err != nil {
		t.Fatal(err)
	}
	fi, _ := tr.Stat(u1, "/_test/u1/file")
	if fi.Length != 100 || fi.UnderConstruction || len(eff.FreedBlocks) != 1 || fi.Mtime != 5 {
		t.Fatalf("%+v %+v", fi, eff)
	}
	// Truncate inside a block: under recovery for the client.
	b, _ := tr.Blocks("/_test/u1/file")
	tb := op.Block{ID: b[0].ID, NumBytes: 40, GenStamp: b[0].GenStamp + 1}
	if err := tr.Apply(&op.Truncate{Path: "/_test/u1/file", NewLength: 40, ClientName: "c", ClientMachine: "m", Mtime: 6, TruncateBlock: &tb}); err != nil {
		t.Fatal(err)
	}
	fi, _ = tr.Stat(u1, "/_test/u1/file")
	if fi.Length != 40 || !fi.UnderConstruction || fi.ClientName != "c" {
		t.Fatalf("%+v", fi)
	}
	if err := tr.Apply(&op.ReassignLease{Path: "/_test/u1/file", Holder: "c", NewHolder: "HDFS_NameNode"}); err != nil {
		t.Fatal(err)
	}
	eff = Effects{}
	if err := tr.ApplyEffects(&op.UpdateBlocks{Path: "/_test/u1/file", Blocks: nil}, &eff); err != nil || len(eff.FreedBlocks) != 1 {
		t.Fatalf("%v %+v", err, eff)
	}
	if _, fi, ok := tr.FileByID(fi.ID); !ok || fi.ClientName != "HDFS_NameNode" {
		t.Fatalf("%+v", fi)
	}
	// Overwriting an open file drops it from the index.
	open, _ := tr.Stat(u1, "/_test/u1/open")
	eff = Effects{}
	add := &op.Add{InodeID: tr.NextInodeID(), Path: "/_test/u1/open", Perm: op.Perm{User: "gohdfs1", Group: "g", Mode: 0o644}, ClientName: "n", Overwrite: true, Replication: 1, BlockSize: 10}
	if err := tr.ApplyEffects(add, &eff); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := tr.FileByID(open.ID); ok || len(eff.RemovedUC) != 1 || eff.RemovedUC[0] != open.ID {
		t.Fatalf("%+v", eff)
	}
	if tr.LastInodeID() != add.InodeID {
		t.Fatal("inode id not advanced")
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig("root").Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Config{{}, {SuperUser: "r", MaxComponentLength: -1}, {SuperUser: "r", MaxDirItems: 7000000}, {SuperUser: "r", AccessTimePrecision: -1}} {
		if err := c.Validate(); !errors.Is(err, ErrIllegalArgument) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}
