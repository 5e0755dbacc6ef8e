package namespace

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

const (
	ssd  uint8 = 2
	disk uint8 = 1
)

func setPolicy(t *testing.T, tr *Tree, p, name string) {
	t.Helper()
	ops, err := tr.PlanSetStoragePolicy(super, p, name)
	must(t, tr, ops, err)
}

func setTypeQuota(t *testing.T, tr *Tree, p string, typ uint8, q int64) {
	t.Helper()
	ops, err := tr.PlanSetQuotaByStorageType(super, p, op.QuotaDontSet, q, typ)
	must(t, tr, ops, err)
}

// addBlockTo plans and applies one more block of the open file p.
func addBlockTo(tr *Tree, p string, prev *op.Block) (op.Block, error) {
	nb, ops, err := tr.PlanAddBlock(u1, p, "client-"+u1.User, 0, prev)
	if err != nil {
		return op.Block{}, err
	}
	for _, o := range ops {
		if err := tr.Apply(o); err != nil {
			return op.Block{}, err
		}
	}
	return nb, nil
}

func TestPlanSetQuotaByStorageType(t *testing.T) {
	tr := fixture(t)
	_, err := tr.PlanSetQuotaByStorageType(u1, "/_test/u1", op.QuotaDontSet, 10, ssd)
	checkErr(t, err, ErrPermission, "Access denied for user gohdfs1. Superuser privilege is required")
	_, err = tr.PlanSetQuotaByStorageType(super, "/_test/u1/file", op.QuotaDontSet, 10, ssd)
	checkErr(t, err, ErrNotDir, "`/_test/u1/file': Is not a directory")
	_, err = tr.PlanSetQuotaByStorageType(super, "/_test/nope", op.QuotaDontSet, 10, ssd)
	checkErr(t, err, ErrNotFound, "Directory does not exist: /_test/nope")
	_, err = tr.PlanSetQuotaByStorageType(super, "/_test/u1", op.QuotaDontSet, -5, ssd)
	checkErr(t, err, ErrIllegalArgument, "Illegal value for nsQuota or ssQuota : 9223372036854775807 and -5")
	_, err = tr.PlanSetQuotaByStorageType(super, "/_test/u1", 10, 10, ssd)
	checkErr(t, err, ErrUnsupportedAction, "Failed to set quota by storage type because eitherdfs.quota.by.storage.type.enabled is set to true or nsQuota value is illegal 10")
	_, err = tr.PlanSetQuotaByStorageType(super, "/_test/u1", op.QuotaDontSet, 10, 4)
	checkErr(t, err, ErrIllegalArgument, "Don't support Quota for storage type : RAM_DISK")

	setTypeQuota(t, tr, "/_test/u1", ssd, 1<<20)
	setTypeQuota(t, tr, "/_test/u1", disk, 1<<30)
	if d := dump(t, tr); !strings.Contains(d, "DISK=1073741824 SSD=1048576") {
		t.Fatalf("dump lacks the type quotas:\n%s", d)
	}
	if ops, err := tr.PlanSetQuotaByStorageType(super, "/_test/u1", op.QuotaDontSet, 1<<20, ssd); err != nil || ops != nil {
		t.Fatalf("unchanged quota: %v %v", ops, err)
	}
	// Survives an image.
	if got := dump(t, roundTrip(t, tr)); got != dump(t, tr) {
		t.Fatalf("image lost type quotas:\n%s\nwant\n%s", got, dump(t, tr))
	}
	// Clearing the ordinary quotas keeps the type quotas; clearing those
	// too drops the directory's quota.
	ops, err := tr.PlanSetQuota(super, "/_test/u1", op.QuotaReset, op.QuotaReset)
	must(t, tr, ops, err)
	if q, _ := tr.QuotaUsage(super, "/_test/u1"); !q.HasTypeQuotas || q.TypeQuotas[1].Quota != 1<<20 || q.TypeQuotas[2].Quota != 1<<30 {
		t.Fatalf("quota usage %+v", q)
	}
	setTypeQuota(t, tr, "/_test/u1", ssd, op.QuotaReset)
	setTypeQuota(t, tr, "/_test/u1", disk, op.QuotaReset)
	if d := dump(t, tr); strings.Contains(d, "/_test/u1 dir id=16388 gohdfs1:supergroup:0755 mtime=10 atime=10 quota") {
		t.Fatalf("quota kept:\n%s", d)
	}
	if q, _ := tr.QuotaUsage(super, "/_test/u1"); q.HasTypeQuotas {
		t.Fatalf("quota usage after clearing %+v", q)
	}
}

func TestTypeQuotaEnforced(t *testing.T) {
	tr := fixture(t)
	mkdir(t, tr, u1, "/_test/u1/q/ssd", 0o755)
	mkdir(t, tr, u1, "/_test/u1/q/one", 0o755)
	mkdir(t, tr, u1, "/_test/u1/q/none", 0o755)
	setPolicy(t, tr, "/_test/u1/q/ssd", "ALL_SSD")
	setPolicy(t, tr, "/_test/u1/q/one", "ONE_SSD")
	setTypeQuota(t, tr, "/_test/u1/q", ssd, 3000)
	setTypeQuota(t, tr, "/_test/u1/q", disk, 2200)

	// ALL_SSD, replication 3: a new block reserves 3 × 1024 bytes of SSD.
	create(t, tr, u1, "/_test/u1/q/ssd/f", 0, true)
	_, err := addBlockTo(tr, "/_test/u1/q/ssd/f", nil)
	checkErr(t, err, ErrTypeQuotaExceeded, "Quota by storage type : SSD on path : /_test/u1/q is exceeded. quota = 2.93 KB but space consumed = 3 KB")

	// ONE_SSD: one replica on SSD (1024), two on DISK (2048).
	create(t, tr, u1, "/_test/u1/q/one/f", 0, true)
	b, err := addBlockTo(tr, "/_test/u1/q/one/f", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The next block: 1124 per replica on DISK twice, over 2200.
	b.NumBytes = 100
	_, err = addBlockTo(tr, "/_test/u1/q/one/f", &b)
	checkErr(t, err, ErrTypeQuotaExceeded, "Quota by storage type : DISK on path : /_test/u1/q is exceeded. quota = 2.15 KB but space consumed = 2.20 KB")
	if err == nil || !strings.Contains(err.Error(), "DISK") {
		t.Fatal(err)
	}

	// A file with no policy set on it or above counts on no type.
	create(t, tr, u1, "/_test/u1/q/none/f", 3, false)

	s, err := tr.ContentSummary(super, "/_test/u1/q")
	if err != nil || !s.HasTypeQuotas {
		t.Fatalf("%+v %v", s, err)
	}
	want := map[uint8][2]int64{ssd: {3000, 1024}, disk: {2200, 2048}, 3: {-1, 0}}
	for _, ti := range s.TypeQuotas {
		if w, ok := want[ti.Type]; ok && (ti.Quota != w[0] || ti.Consumed != w[1]) {
			t.Errorf("%s: quota %d consumed %d, want %v", StorageTypeName(ti.Type), ti.Quota, ti.Consumed, w)
		}
	}
}

// Raising the replication or reopening a partial last block for append is
// checked against the quotas by storage type too.
func TestTypeQuotaReplicationAndAppend(t *testing.T) {
	tr := fixture(t)
	mkdir(t, tr, u1, "/_test/u1/q", 0o755)
	setPolicy(t, tr, "/_test/u1/q", "ALL_SSD")
	create(t, tr, u1, "/_test/u1/q/f", 2, false) // 200 bytes, replication 3: 600 on SSD
	setTypeQuota(t, tr, "/_test/u1/q", ssd, 1000)
	_, _, err := tr.PlanSetReplication(u1, "/_test/u1/q/f", 6)
	checkErr(t, err, ErrTypeQuotaExceeded, "Quota by storage type : SSD on path : /_test/u1/q is exceeded. quota = 1000 B but space consumed = 1.17 KB")
	ok, ops, err := tr.PlanSetReplication(u1, "/_test/u1/q/f", 4) // 800
	if !ok {
		t.Fatal(err)
	}
	must(t, tr, ops, err)
	// Append reserves the rest of the last block (1024 - 100) per replica.
	_, err = tr.PlanAppend(u1, "/_test/u1/q/f", "client-"+u1.User, "host", false)
	checkErr(t, err, ErrTypeQuotaExceeded, "Quota by storage type : SSD on path : /_test/u1/q is exceeded. quota = 1000 B but space consumed = 4.39 KB")
}

// BenchmarkAddBlockTypeQuota is the cost of planning addBlock for a file
// under a directory of files, with and without a quota by storage type on
// it (with one, the usage the quota directories above keep is read).
func BenchmarkAddBlockTypeQuota(b *testing.B) {
	for _, files := range []int{1000, 10000} {
		for _, quota := range []bool{false, true} {
			b.Run(fmt.Sprintf("files=%d/typeQuota=%v", files, quota), func(b *testing.B) {
				tr := buildFiles(b, 1, files)
				apply := func(ops []op.Op, err error) {
					if err != nil {
						b.Fatal(err)
					}
					for _, o := range ops {
						if err := tr.Apply(o); err != nil {
							b.Fatal(err)
						}
					}
				}
				apply(tr.PlanSetStoragePolicy(super, "/d0000", "ONE_SSD"))
				if quota {
					apply(tr.PlanSetQuotaByStorageType(super, "/d0000", op.QuotaDontSet, 1<<50, ssd))
				}
				apply(tr.PlanCreate(super, "/d0000/open", 0o644, "c", "h", CreateFlags{Create: true}, false, 3, 1024, 20))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, _, err := tr.PlanAddBlock(super, "/d0000/open", "c", 0, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// A rename into a directory with a quota by storage type is checked
// against it, under the policy the moved files inherit there.
func TestTypeQuotaRename(t *testing.T) {
	tr := fixture(t)
	mkdir(t, tr, u1, "/_test/u1/q", 0o755)
	setPolicy(t, tr, "/_test/u1/q", "ALL_SSD")
	setTypeQuota(t, tr, "/_test/u1/q", ssd, 500)
	// /_test/u1/file: 200 bytes, replication 3, no policy: 600 on SSD once
	// under /q.
	_, _, err := tr.PlanRename(u1, "/_test/u1/file", "/_test/u1/q/file", 40)
	checkErr(t, err, ErrTypeQuotaExceeded, "Quota by storage type : SSD on path : /_test/u1/q is exceeded. quota = 500 B but space consumed = 600 B")
	setTypeQuota(t, tr, "/_test/u1/q", ssd, 600)
	ok, ops, err := tr.PlanRename(u1, "/_test/u1/file", "/_test/u1/q/file", 40)
	if !ok {
		t.Fatal(err)
	}
	must(t, tr, ops, err)
	if q, _ := tr.QuotaUsage(super, "/_test/u1/q"); q.TypeQuotas[1].Consumed != 600 {
		t.Fatalf("after the move: %+v", q.TypeQuotas)
	}
}

// dfs.quota.by.storage.type.enabled=false refuses quotas by storage type.
func TestTypeQuotaDisabled(t *testing.T) {
	cfg := testCfg()
	cfg.QuotaByStorageTypeEnabled = false
	tr := New(cfg)
	mkdir(t, tr, super, "/d", 0o755)
	_, err := tr.PlanSetQuotaByStorageType(super, "/d", op.QuotaDontSet, 10, ssd)
	checkErr(t, err, ErrUnsupportedAction, "Failed to set quota by storage type because eitherdfs.quota.by.storage.type.enabled is set to false or nsQuota value is illegal 9223372036854775807")
}

// concat is checked against the quotas by storage type: the sources'
// blocks count at the target's replication once they join it.
func TestTypeQuotaConcat(t *testing.T) {
	tr := fixture(t)
	mkdir(t, tr, u1, "/_test/u1/q", 0o755)
	setPolicy(t, tr, "/_test/u1/q", "ALL_SSD")
	create(t, tr, u1, "/_test/u1/q/t", 2, false) // 200 bytes × 3 on SSD
	create(t, tr, u1, "/_test/u1/q/s", 2, false)
	_, ops, err := tr.PlanSetReplication(u1, "/_test/u1/q/s", 1) // 200 × 1
	must(t, tr, ops, err)
	setTypeQuota(t, tr, "/_test/u1/q", ssd, 1000)
	// 600 + 200 now; after, 400 × 3 = 1200.
	_, err = tr.PlanConcat(u1, "/_test/u1/q/t", []string{"/_test/u1/q/s"}, 50)
	checkErr(t, err, ErrTypeQuotaExceeded, "Quota by storage type : SSD on path : /_test/u1/q is exceeded. quota = 1000 B but space consumed = 1.17 KB")
	// The other way round the usage shrinks: 400 × 1.
	ops, err = tr.PlanConcat(u1, "/_test/u1/q/s", []string{"/_test/u1/q/t"}, 50)
	must(t, tr, ops, err)
	u, err := tr.QuotaUsage(super, "/_test/u1/q")
	if err != nil {
		t.Fatal(err)
	}
	if ti := u.TypeQuotas[slices.Index(QuotaStorageTypes, ssd)]; ti.Consumed != 400 {
		t.Fatalf("SSD used after concat: %+v", ti)
	}
	checkTypeUsage(t, tr)
}
