package namespace

import (
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

func TestStoragePolicies(t *testing.T) {
	tr := fixture(t)
	set := func(c Caller, p, name string) error {
		ops, err := tr.PlanSetStoragePolicy(c, p, name)
		if err == nil {
			applyAll(t, tr, ops)
		}
		return err
	}
	policyOf := func(p string) string {
		t.Helper()
		sp, err := tr.GetStoragePolicy(u1, p)
		if err != nil {
			t.Fatal(err)
		}
		return sp.Name
	}
	if got := policyOf("/_test/u1/file"); got != "HOT" {
		t.Fatalf("default policy %s", got)
	}
	checkErr(t, set(u1, "/_test/u1", "cold"), nil, "")
	if got := policyOf("/_test/u1/dir/sub/f"); got != "COLD" {
		t.Fatalf("inherited policy %s", got)
	}
	fi, _ := tr.Stat(u1, "/_test/u1/dir/sub/f")
	if fi.StoragePolicy != 2 {
		t.Fatalf("file status policy %d", fi.StoragePolicy)
	}
	list, _, _ := tr.List(u1, "/_test/u1", nil, 0)
	for _, e := range list {
		if e.StoragePolicy != 2 {
			t.Fatalf("listing policy of %s: %d", e.Name, e.StoragePolicy)
		}
	}
	checkErr(t, set(u1, "/_test/u1/file", "ALL_SSD"), nil, "")
	if got := policyOf("/_test/u1/file"); got != "ALL_SSD" {
		t.Fatalf("own policy %s", got)
	}
	checkErr(t, set(u1, "/_test/u1/file", "LAZY_PERSIST"), ErrIllegalArgument,
		"Policy BlockStoragePolicy{LAZY_PERSIST:15, storageTypes=[RAM_DISK, DISK], creationFallbacks=[DISK], replicationFallbacks=[DISK]} cannot be set after file creation.")
	checkErr(t, set(u1, "/_test/u1", "NOPE"), ErrIllegalArgument, "Cannot find a block policy with the name NOPE")
	checkErr(t, set(u2, "/_test/u1", "HOT"), ErrPermission, "")
	checkErr(t, set(u1, "/_test/none", "HOT"), ErrNotFound, "File/Directory does not exist: /_test/none")
	if a, b := dump(t, tr), dump(t, roundTrip(t, tr)); a != b {
		t.Fatalf("image round trip differs:\n%s\n---\n%s", a, b)
	}
	ops, err := tr.PlanUnsetStoragePolicy(u1, "/_test/u1")
	must(t, tr, ops, err)
	if got := policyOf("/_test/u1/dir"); got != "HOT" {
		t.Fatalf("after unset %s", got)
	}
	cfg := testCfg()
	cfg.StoragePolicyEnabled = false
	_, err = New(cfg).PlanSetStoragePolicy(super, "/", "HOT")
	checkErr(t, err, ErrIO, "Failed to set storage policy since dfs.storage.policy.enabled is set to false.")
	if p, ok := StoragePolicyByID(op.StoragePolicyUnspecified); !ok || p.String() != "BlockStoragePolicy{HOT:7, storageTypes=[DISK], creationFallbacks=[], replicationFallbacks=[ARCHIVE]}" {
		t.Fatalf("default %v", p)
	}
}
