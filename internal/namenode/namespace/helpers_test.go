package namespace

import (
	"bytes"
	"errors"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

var (
	super = Caller{User: "root"}
	u1    = Caller{User: "gohdfs1", Groups: []string{"g1"}}
	u2    = Caller{User: "gohdfs2", Groups: []string{"g2"}}
)

func testCfg() Config {
	c := DefaultConfig("root")
	return c
}

func applyAll(t *testing.T, tr *Tree, ops []op.Op) {
	t.Helper()
	for _, o := range ops {
		if err := tr.Apply(o); err != nil {
			t.Fatalf("apply %T %+v: %v", o, o, err)
		}
	}
}

func must(t *testing.T, tr *Tree, ops []op.Op, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	applyAll(t, tr, ops)
}

func dump(t *testing.T, tr *Tree) string {
	t.Helper()
	var b bytes.Buffer
	if err := tr.Dump(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func mkdir(t *testing.T, tr *Tree, c Caller, p string, mode uint16) {
	t.Helper()
	ops, err := tr.PlanMkdirs(c, p, mode, true, 10)
	must(t, tr, ops, err)
}

func chmod(t *testing.T, tr *Tree, c Caller, p string, mode uint16) {
	t.Helper()
	ops, err := tr.PlanSetPermission(c, p, mode)
	must(t, tr, ops, err)
}

// create makes a file; with nBlocks > 0 it gets blocks of 100 bytes; closed unless open.
func create(t *testing.T, tr *Tree, c Caller, p string, nBlocks int, open bool) {
	t.Helper()
	ops, err := tr.PlanCreate(c, p, 0o644, "client-"+c.User, "host", CreateFlags{Create: true}, false, 3, 1024, 20)
	must(t, tr, ops, err)
	var last *op.Block
	for i := 0; i < nBlocks; i++ {
		id := tr.NextBlockID()
		gs := tr.NextGenStamp()
		applyAll(t, tr, []op.Op{&op.AllocateBlockID{BlockID: id}, &op.SetGenstamp{GenStamp: gs}})
		ab := &op.AddBlock{Path: p, Last: op.Block{ID: id, GenStamp: gs}}
		if last != nil {
			pen := *last
			pen.NumBytes = 100
			ab.Penultimate = &pen
		}
		applyAll(t, tr, []op.Op{ab})
		last = &op.Block{ID: id, GenStamp: gs}
	}
	if open {
		return
	}
	if last != nil {
		last.NumBytes = 100
	}
	ok, ops, err := tr.PlanComplete(c, p, "client-"+c.User, 0, last, 30)
	if !ok {
		t.Fatalf("complete %s: not ok: %v", p, err)
	}
	must(t, tr, ops, err)
}

// fixture builds:
//
//	/_test            root 0777
//	/_test/u1         gohdfs1 0755, group supergroup
//	/_test/u1/file    closed, 2 blocks
//	/_test/u1/open    open by client-gohdfs1
//	/_test/u1/dir/sub/f
//	/_test/u1/empty   empty dir
//	/_test/private    gohdfs1 0700, with file f
//	/_test/sticky     root 01777, with f1 (gohdfs1)
func fixture(t *testing.T) *Tree {
	t.Helper()
	tr := New(testCfg())
	mkdir(t, tr, super, "/_test", 0o777)
	mkdir(t, tr, u1, "/_test/u1", 0o755)
	create(t, tr, u1, "/_test/u1/file", 2, false)
	create(t, tr, u1, "/_test/u1/open", 0, true)
	mkdir(t, tr, u1, "/_test/u1/dir/sub", 0o755)
	create(t, tr, u1, "/_test/u1/dir/sub/f", 0, false)
	mkdir(t, tr, u1, "/_test/u1/empty", 0o755)
	mkdir(t, tr, u1, "/_test/private", 0o700)
	create(t, tr, u1, "/_test/private/f", 0, false)
	mkdir(t, tr, super, "/_test/sticky", 0o777)
	chmod(t, tr, super, "/_test/sticky", 0o1777)
	create(t, tr, u1, "/_test/sticky/f1", 0, false)
	return tr
}

func checkErr(t *testing.T, err error, want error, wantMsg string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
	if wantMsg != "" && err.Error() != wantMsg {
		t.Fatalf("message %q, want %q", err.Error(), wantMsg)
	}
}
