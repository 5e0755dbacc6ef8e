package namespace

import (
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

func blockList(n int) []op.Block {
	bs := make([]op.Block, n)
	for i := range bs {
		bs[i] = op.Block{ID: int64(i + 1), NumBytes: int64(i), GenStamp: 1001}
	}
	return bs
}

// TestInodeUnion walks a file's inode through every form its pointer takes:
// no blocks, blocks counted in the inode, open for write, and more blocks
// than the inode counts, checking the blocks, lease data and packed
// attributes read back the same each time.
func TestInodeUnion(t *testing.T) {
	n := &inode{id: 17000}
	n.setPref(128 << 20)
	n.setRepl(3)
	check := func(step string, want []op.Block, uc bool) {
		t.Helper()
		got := n.blocks()
		if len(got) != len(want) {
			t.Fatalf("%s: %d blocks, want %d", step, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: block %d = %+v, want %+v", step, i, got[i], want[i])
			}
		}
		if (n.ucd() != nil) != uc {
			t.Fatalf("%s: open for write = %v, want %v", step, n.ucd() != nil, uc)
		}
		if n.isDir() || n.dir() != nil {
			t.Fatalf("%s: a file reads as a directory", step)
		}
		if n.pref() != 128<<20 || n.repl() != 3 {
			t.Fatalf("%s: pref %d repl %d, want %d and 3", step, n.pref(), n.repl(), 128<<20)
		}
	}
	check("new", nil, false)
	u := &ucData{client: "c1"}
	n.setUC(u)
	check("open", nil, true)
	one := blockList(1)
	n.setBlocks(one)
	check("open, one block", one, true)
	n.setUC(nil)
	check("closed, one block", one, false)
	if n.attr&attrExt != 0 || n.nblk != 1 {
		t.Fatalf("a closed file of one block is not held in the inode (attr %x, nblk %d)", n.attr, n.nblk)
	}
	many := blockList(maxInline + 2)
	n.setBlocks(many)
	check("closed, many blocks", many, false)
	n.setUC(u)
	check("reopened, many blocks", many, true)
	n.setUC(nil)
	n.setBlocks(many[:maxInline])
	check("closed, as many blocks as the inode counts", many[:maxInline], false)
	if n.attr&attrExt != 0 {
		t.Fatal("the file kept its extension after it shrank")
	}
	n.setBlocks(nil)
	check("no blocks", nil, false)
	n.setRepl(32767)
	n.setPref(MaxBlockSize)
	if n.repl() != 32767 || n.pref() != MaxBlockSize {
		t.Fatalf("pref %d repl %d after setting the largest values", n.pref(), n.repl())
	}

	d := &inode{id: 17001}
	dd := &dirData{}
	d.setDir(dd)
	if !d.isDir() || d.dir() != dd || d.blocks() != nil || d.ucd() != nil {
		t.Fatal("a directory does not read back as one")
	}
	d.setUC(u)
	if d.ucd() != nil || d.dir() != dd {
		t.Fatal("setUC changed a directory")
	}
}

// TestCreateBlockSizeLimit: a block size the inode cannot hold is refused
// when planned, and an op or image record carrying one is refused too.
func TestCreateBlockSizeLimit(t *testing.T) {
	tr := New(DefaultConfig("hdfs"))
	su := Caller{User: "hdfs", Super: true}
	if _, err := tr.PlanCreate(su, "/f", 0o644, "c", "m", CreateFlags{Create: true}, false, 3, MaxBlockSize+1, 1); err == nil {
		t.Fatal("PlanCreate took a block size above MaxBlockSize")
	}
	if err := tr.Apply(&op.Add{InodeID: tr.NextInodeID(), Path: "/f", Replication: 3, BlockSize: -1,
		Perm: op.Perm{User: "hdfs", Group: "g", Mode: 0o644}, ClientName: "c"}); err == nil {
		t.Fatal("Apply took an OP_ADD with a negative block size")
	}
	if _, err := tr.PlanCreate(su, "/f", 0o644, "c", "m", CreateFlags{Create: true}, false, 3, MaxBlockSize, 1); err != nil {
		t.Fatalf("PlanCreate refused the largest block size: %v", err)
	}
}
