package namespace

import (
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// FuzzPlans feeds client-supplied paths to the plans: none may panic or change
// the tree, and whatever a plan returns must apply.
func FuzzPlans(f *testing.F) {
	for _, s := range []struct {
		sel  uint8
		p, q string
	}{
		{0, "/_test/u1/x/y", ""}, {1, "/_test/u1/file", ""}, {2, "/_test/u1/dir", "/_test/u1/empty"},
		{3, "/_test/u1/dir/", "/_test/u1/empty/"}, {4, "//a//", "/b"}, {5, "/_test/u1/../x", "."},
		{6, "/_test/u1/dir", ""}, {7, "/", "/"}, {8, "/_test/u1/file", "/_test/u1/open"},
	} {
		f.Add(s.sel, s.p, s.q, true)
	}
	f.Fuzz(func(t *testing.T, sel uint8, p, q string, flag bool) {
		tr := fixture(t)
		before := dump(t, tr)
		c := []Caller{super, u1, u2}[sel%3]
		var ops []op.Op
		var err error
		switch (sel / 3) % 10 {
		case 0:
			ops, err = tr.PlanMkdirs(c, p, 0o755, flag, 1)
		case 1:
			ops, err = tr.PlanCreate(c, p, 0o644, "c", "m", CreateFlags{Create: true, Overwrite: flag}, flag, 3, 1024, 1)
		case 2:
			_, ops, err = tr.PlanRename(c, p, q, 1)
		case 3:
			ops, err = tr.PlanRename2(c, p, q, flag, 1)
		case 4:
			_, ops, err = tr.PlanDelete(c, p, flag, 1)
		case 5:
			ops, err = tr.PlanSetOwner(c, p, q, "")
		case 6:
			_, _, err = tr.List(c, p, []byte(q), 2)
		case 7:
			ops, err = tr.PlanConcat(c, p, []string{q}, 1)
		case 8:
			_, err = tr.ContentSummary(c, p)
		case 9:
			ops, err = tr.PlanSetTimes(c, p, 5, -1)
		}
		if dump(t, tr) != before {
			t.Fatal("plan changed the tree")
		}
		if err != nil {
			return
		}
		for _, o := range ops {
			if err := tr.Apply(o); err != nil {
				t.Fatalf("planned op %+v does not apply: %v", o, err)
			}
		}
	})
}
