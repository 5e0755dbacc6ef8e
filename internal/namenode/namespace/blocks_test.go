package namespace

import (
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

func TestPlanAddBlock(t *testing.T) {
	tr := fixture(t)
	fi, _ := tr.Stat(u1, "/_test/u1/open")
	cl := "client-gohdfs1"
	_, _, err := tr.PlanAddBlock(u1, "/_test/u1/open", "other", fi.ID, nil)
	checkErr(t, err, ErrLeaseMismatch, "")
	_, _, err = tr.PlanAddBlock(u1, "/_test/u1/file", cl, 0, nil)
	checkErr(t, err, ErrNotUnderConstruction, "")
	_, _, err = tr.PlanAddBlock(u1, "/_test/u1/open", cl, fi.ID, &op.Block{ID: 5})
	checkErr(t, err, ErrBlockMismatch, "")

	b1, ops, err := tr.PlanAddBlock(u1, "/_test/u1/open", cl, fi.ID, nil)
	must(t, tr, ops, err)
	if b1.ID != FirstBlockID+3 || tr.LastBlockID() != b1.ID || tr.GenStamp() != b1.GenStamp {
		t.Fatalf("%+v counters %d %d", b1, tr.LastBlockID(), tr.GenStamp())
	}
	// Retry of the same allocation.
	again, ops, err := tr.PlanAddBlock(u1, "/_test/u1/open", cl, fi.ID, nil)
	if err != nil || ops != nil || again != b1 {
		t.Fatalf("retry: %+v %v %v", again, ops, err)
	}
	prev := b1
	prev.NumBytes = 1024
	b2, ops, err := tr.PlanAddBlock(u1, "/_test/u1/open", cl, fi.ID, &prev)
	must(t, tr, ops, err)
	again, ops, _ = tr.PlanAddBlock(u1, "/_test/u1/open", cl, fi.ID, &prev)
	if ops != nil || again != b2 {
		t.Fatalf("retry 2: %+v", again)
	}
	bad := b2
	bad.GenStamp = 1
	_, _, err = tr.PlanAddBlock(u1, "/_test/u1/open", cl, fi.ID, &bad)
	checkErr(t, err, ErrBlockMismatch, "")
	// Space: the block being written counts at the preferred size.
	u, _ := tr.QuotaUsage(super, "/")
	if want := int64(3 * (200 + 1024 + 1024)); u.SpaceConsumed != want {
		t.Fatalf("space %d, want %d", u.SpaceConsumed, want)
	}
	last := b2
	last.NumBytes = 10
	ok, ops, err := tr.PlanComplete(u1, "/_test/u1/open", cl, fi.ID, &last, 99)
	if !ok {
		t.Fatal(err)
	}
	must(t, tr, ops, err)
	u, _ = tr.QuotaUsage(super, "/")
	if want := int64(3 * (200 + 1024 + 10)); u.SpaceConsumed != want {
		t.Fatalf("space %d, want %d", u.SpaceConsumed, want)
	}
	// Quota stops an allocation.
	ops, err = tr.PlanSetQuota(super, "/_test/u1", op.QuotaDontSet, 4000)
	must(t, tr, ops, err)
	create(t, tr, u1, "/_test/u1/q", 0, true)
	_, _, err = tr.PlanAddBlock(u1, "/_test/u1/q", cl, 0, nil)
	checkErr(t, err, ErrDSQuotaExceeded, "")
}

func TestPlanTruncate(t *testing.T) {
	tests := []struct {
		name     string
		c        Caller
		path     string
		length   int64
		wantOK   bool
		wantOps  int
		wantErr  error
		wantLen  int64
		wantOpen bool
	}{
		{name: "same length", c: u1, path: "/_test/u1/file", length: 200, wantOK: true, wantLen: 200},
		{name: "boundary", c: u1, path: "/_test/u1/file", length: 100, wantOK: true, wantOps: 1, wantLen: 100},
		{name: "zero", c: u1, path: "/_test/u1/file", length: 0, wantOK: true, wantOps: 1, wantLen: 0},
		{name: "inside block", c: u1, path: "/_test/u1/file", length: 150, wantOK: false, wantOps: 2, wantLen: 150, wantOpen: true},
		{name: "larger", c: u1, path: "/_test/u1/file", length: 201, wantErr: ErrIllegalArgument},
		{name: "negative", c: u1, path: "/_test/u1/file", length: -1, wantErr: ErrIllegalArgument},
		{name: "dir", c: u1, path: "/_test/u1/dir", length: 0, wantErr: ErrNotFound},
		{name: "missing", c: u1, path: "/_test/u1/nope", length: 0, wantErr: ErrNotFound},
		{name: "open", c: u1, path: "/_test/u1/open", length: 0, wantErr: ErrAlreadyBeingCreated},
		{name: "no write", c: u2, path: "/_test/u1/file", length: 0, wantErr: ErrPermission},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := fixture(t)
			ok, ops, err := tr.PlanTruncate(tc.c, tc.path, tc.length, "tc", "m", 500)
			checkErr(t, err, tc.wantErr, "")
			if err != nil {
				return
			}
			if ok != tc.wantOK || len(ops) != tc.wantOps {
				t.Fatalf("ok=%v ops=%+v", ok, ops)
			}
			applyAll(t, tr, ops)
			fi, _ := tr.Stat(u1, tc.path)
			if fi.Length != tc.wantLen || fi.UnderConstruction != tc.wantOpen {
				t.Fatalf("%+v", fi)
			}
		})
	}
}
