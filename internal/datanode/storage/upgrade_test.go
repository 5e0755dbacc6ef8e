package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/failpoint"
	hstorage "github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// upgradeFixture is two volumes holding a block pool with finalized
// replicas and one RBW replica, written at namespace cTime 0; open starts
// the pool as a DataNode start would, for a given namespace cTime and
// options.
type upgradeFixture struct {
	t    *testing.T
	dirs []string
	data map[int64][]byte // finalized replicas written before the upgrade
	rbw  []byte           // replica 50, RBW (RWR after a restart)
	ds   *Dataset
	bp   *BlockPool
	res  ScanResult
}

const rbwID = 50

func poolVersion(ctime int64) *hstorage.Version {
	v := bpVersion()
	v.CTime = ctime
	return v
}

func newUpgradeFixture(t *testing.T) *upgradeFixture {
	t.Helper()
	c := newCluster(t, 2, nil)
	f := &upgradeFixture{t: t, dirs: c.dirs, data: map[int64][]byte{}}
	for id := int64(1); id <= 4; id++ {
		f.data[id] = randBytes(id, 700*int(id))
		finalize(t, c.bp, id, 1000+id, f.data[id])
	}
	ck := datatransfer.DefaultChecksum()
	f.rbw = randBytes(50, 1500)
	w, err := c.bp.CreateRBW(Block{ID: rbwID, GenStamp: 1050}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	writePackets(t, w, ck, 0, f.rbw, []int{1000, 500})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c.close()
	return f
}

// open opens the volumes and adds the pool at namespace cTime ctime.
func (f *upgradeFixture) open(cfg Config, ctime int64) error {
	f.t.Helper()
	var vols []*Volume
	for _, d := range f.dirs {
		v, err := OpenVolume(VolumeConfig{Dir: d, Testing: VolumeTesting{LockHolder: "test"}})
		if err != nil {
			for _, o := range vols {
				o.Close()
			}
			return err
		}
		vols = append(vols, v)
	}
	ds, err := NewDataset(cfg, vols)
	if err != nil {
		f.t.Fatal(err)
	}
	bp, res, err := ds.AddBlockPool(poolVersion(ctime), testNow)
	f.res = res
	if err != nil {
		ds.Close()
		return err
	}
	f.ds, f.bp = ds, bp
	f.t.Cleanup(f.close)
	return nil
}

func (f *upgradeFixture) mustOpen(cfg Config, ctime int64) {
	f.t.Helper()
	if err := f.open(cfg, ctime); err != nil {
		f.t.Fatal(err)
	}
}

func (f *upgradeFixture) close() {
	if f.ds != nil {
		f.ds.Close()
		f.ds, f.bp = nil, nil
	}
}

// poolDirs are the block pool's storage dirs, one per volume.
func (f *upgradeFixture) poolDirs() []hstorage.Dir {
	var out []hstorage.Dir
	for _, d := range f.dirs {
		out = append(out, hstorage.Dir{Root: filepath.Join(d, "current", testPool)})
	}
	return out
}

// check asserts the pool's storage: every dir in a state Decide calls
// clean, current/VERSION at cTime cur, previous/ at cTime prev (-1: none),
// and the replicas want (finalized data by id) plus the RWR replica of
// rbwLen bytes.
func (f *upgradeFixture) check(cur, prev int64, want map[int64][]byte, rbwLen int64) {
	f.t.Helper()
	for _, d := range f.poolDirs() {
		s, err := d.Inspect(vfs.Default)
		if err != nil {
			f.t.Fatal(err)
		}
		if r, err := hstorage.Decide(s); r != hstorage.RepairNone || err != nil {
			f.t.Fatalf("%s holds %s", d.Root, s)
		}
		v, err := d.ReadVersion(vfs.Default)
		if err != nil || v.CTime != cur || v.LayoutVersion != hstorage.DataNodeLayoutVersion {
			f.t.Fatalf("%s VERSION %+v, %v; want cTime %d", d.Root, v, err, cur)
		}
		if (prev >= 0) != s.Previous {
			f.t.Fatalf("%s: previous/ present = %v, want cTime %d", d.Root, s.Previous, prev)
		}
		if s.Previous {
			if pv, err := d.ReadPreviousVersion(vfs.Default); err != nil || pv.CTime != prev {
				f.t.Fatalf("%s previous VERSION %+v, %v", d.Root, pv, err)
			}
		}
	}
	got := f.bp.Replicas()
	if _, fin := want[rbwID]; fin && len(got) != len(want) || !fin && len(got) != len(want)+1 {
		f.t.Fatalf("replicas %v, want %d finalized and the RWR", got, len(want))
	}
	for _, r := range got {
		if _, fin := want[rbwID]; r.ID == rbwID && !fin {
			if r.State != RWR || r.NumBytes != rbwLen {
				f.t.Fatalf("RBW replica after restart %+v, want RWR of %d bytes", r, rbwLen)
			}
			if d := checkFiles(f.t, r); !bytes.Equal(d, f.rbw[:rbwLen]) {
				f.t.Fatal("RWR data differs")
			}
			continue
		}
		data, ok := want[r.ID]
		if !ok || r.State != Finalized {
			f.t.Fatalf("unexpected replica %+v", r)
		}
		if got := readAll(f.t, f.bp, r.Block, 1024); !bytes.Equal(got, data) {
			f.t.Fatalf("replica %d: data differs (%d bytes, want %d)", r.ID, len(got), len(data))
		}
		if !strings.HasSuffix(filepath.Dir(r.BlockPath), IDToBlockDir("finalized", r.ID)) {
			f.t.Fatalf("replica %d at %s, not at its -57 place", r.ID, r.BlockPath)
		}
	}
}

// upgraded opens the fixture at cTime 100: the pool upgrades.
func (f *upgradeFixture) upgraded() {
	f.t.Helper()
	f.mustOpen(Config{}, 100)
	f.check(100, 0, f.data, int64(len(f.rbw)))
}

// writeAfterUpgrade changes the upgraded pool the ways a rollback must
// undo: a new replica, an append to a finalized replica, a recovery that
// cuts the RWR replica. It returns the data the pool then holds.
func (f *upgradeFixture) writeAfterUpgrade() map[int64][]byte {
	f.t.Helper()
	now := map[int64][]byte{}
	for id, d := range f.data {
		now[id] = d
	}
	now[7] = randBytes(7, 3000)
	finalize(f.t, f.bp, 7, 1007, now[7])
	ck := datatransfer.DefaultChecksum()
	old := f.data[1]
	w, err := f.bp.Append(Block{ID: 1, GenStamp: 1001, NumBytes: int64(len(old))}, 1101, ck, 1<<20)
	if err != nil {
		f.t.Fatal(err)
	}
	more := randBytes(99, 600)
	writePackets(f.t, w, ck, int64(len(old)), more, []int{600})
	if _, err := w.Finalize(int64(len(old) + len(more))); err != nil {
		f.t.Fatal(err)
	}
	now[1] = append(append([]byte(nil), old...), more...)
	if _, err := f.bp.InitReplicaRecovery(Block{ID: rbwID, GenStamp: 1050, NumBytes: int64(len(f.rbw))}, 1150); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.bp.UpdateReplicaUnderRecovery(Block{ID: rbwID, GenStamp: 1050, NumBytes: int64(len(f.rbw))}, 1150, 700); err != nil {
		f.t.Fatal(err)
	}
	now[rbwID] = f.rbw[:700]
	return now
}

func TestUpgradeLinksEveryReplica(t *testing.T) {
	f := newUpgradeFixture(t)
	f.upgraded()
	if len(f.res.Transitions) != 2 || !strings.Contains(f.res.Transitions[0].What, "upgraded from LV = -57 CTime = 0 to LV = -57 CTime = 100") {
		t.Fatalf("transitions %v", f.res.Transitions)
	}
	for _, r := range f.bp.Replicas() {
		for _, p := range []string{r.BlockPath, r.MetaPath} {
			if n, err := linkCount(p); err != nil || n != 2 {
				t.Fatalf("%s has %d names (%v), want 2: current and previous", p, n, err)
			}
		}
	}
	// A restart at the same cTime changes nothing.
	f.close()
	f.mustOpen(Config{}, 100)
	if len(f.res.Transitions) != 0 {
		t.Fatalf("second start: %v", f.res.Transitions)
	}
	f.check(100, 0, f.data, int64(len(f.rbw)))
}

// TestUpgradeCrashAtEveryStep stops the upgrade after each step (as a
// crash would: every step before it is synced and nothing is cleaned up),
// then starts again: the repair at start plus the upgrade redone end with
// every replica in place.
func TestUpgradeCrashAtEveryStep(t *testing.T) {
	for _, fp := range []failpoint.Name{failpoint.DNUpgradeAfterRename, failpoint.DNUpgradeMidLink,
		failpoint.DNUpgradeAfterLink, failpoint.DNUpgradeAfterVersion} {
		t.Run(string(fp), func(t *testing.T) {
			f := newUpgradeFixture(t)
			if err := f.open(Config{Failpoint: failpoint.Error(fp)}, 100); !errors.Is(err, failpoint.ErrInjected) {
				t.Fatalf("upgrade with %s: %v", fp, err)
			}
			f.upgraded()
			t.Logf("start after the crash: %v", f.res.Transitions)
		})
	}
}

func TestRollbackCrashAtEveryStep(t *testing.T) {
	for _, fp := range []failpoint.Name{"", failpoint.DNRollbackAfterRemove, failpoint.DNRollbackAfterRestore} {
		t.Run("at "+string(fp), func(t *testing.T) {
			f := newUpgradeFixture(t)
			f.upgraded()
			after := f.writeAfterUpgrade()
			f.close()
			f.mustOpen(Config{}, 100)
			f.check(100, 0, after, 0)
			f.close()
			if fp != "" {
				err := f.open(Config{Rollback: true, Failpoint: failpoint.Error(fp)}, 0)
				if !errors.Is(err, failpoint.ErrInjected) {
					t.Fatalf("rollback with %s: %v", fp, err)
				}
				// Without -rollback the pool refuses the rolled-back
				// NameNode, whatever step the crash hit.
				if err := f.open(Config{}, 0); err == nil || !strings.Contains(err.Error(), "-rollback") && fp != failpoint.DNRollbackAfterRestore {
					t.Fatalf("start without -rollback after a crashed rollback: %v", err)
				}
				f.close()
			}
			f.mustOpen(Config{Rollback: true}, 0)
			t.Logf("rollback start: %v", f.res.Transitions)
			// Data written before the upgrade is back, what came after is gone.
			f.check(0, -1, f.data, int64(len(f.rbw)))
		})
	}
}

func TestFinalizeCrashAtEveryStep(t *testing.T) {
	for _, fp := range []failpoint.Name{"", failpoint.DNFinalizeAfterRename, failpoint.DNFinalizeMidDelete} {
		t.Run("at "+string(fp), func(t *testing.T) {
			f := newUpgradeFixture(t)
			f.upgraded()
			f.close()
			f.mustOpen(Config{Failpoint: failpoint.Error(fp)}, 100)
			dirs, err := f.ds.FinalizeUpgrade(testPool)
			if fp == failpoint.DNFinalizeAfterRename {
				if !errors.Is(err, failpoint.ErrInjected) {
					t.Fatalf("finalize: %v", err)
				}
			} else {
				if err != nil || len(dirs) != 2 {
					t.Fatalf("finalize: %v, %v", dirs, err)
				}
				for _, d := range dirs {
					err := f.ds.RemoveFinalized(context.Background(), d)
					if fp == failpoint.DNFinalizeMidDelete {
						if !errors.Is(err, failpoint.ErrInjected) {
							t.Fatalf("remove: %v", err)
						}
						break
					}
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			f.close()
			f.mustOpen(Config{}, 100)
			t.Logf("start after: %v", f.res.Transitions)
			// The crash hit the first volume; the NameNode sends
			// DNA_FINALIZE again after the restart.
			dirs, err = f.ds.FinalizeUpgrade(testPool)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range dirs {
				if err := f.ds.RemoveFinalized(context.Background(), d); err != nil {
					t.Fatal(err)
				}
			}
			f.check(100, -1, f.data, int64(len(f.rbw)))
			for _, r := range f.bp.Replicas() {
				if n, err := linkCount(r.BlockPath); err != nil || n != 1 {
					t.Fatalf("%s has %d names after finalize (%v)", r.BlockPath, n, err)
				}
			}
		})
	}
}

// TestUpgradeFromOlderLayouts plants block pools in Hadoop's -56 (256×256
// directories) and -55 (any subdir tree) layouts: the start upgrades them
// to -57, every replica found at its new place, the old tree kept in
// previous/.
func TestUpgradeFromOlderLayouts(t *testing.T) {
	for _, lv := range []int32{hstorage.DataNodeLayoutBlockID, hstorage.DataNodeLayoutFirst} {
		t.Run(fmt.Sprint(lv), func(t *testing.T) {
			dir := t.TempDir()
			vol := filepath.Join(dir, "vol0")
			pool := hstorage.Dir{Root: filepath.Join(vol, "current", testPool)}
			vv := testVolumeVersion(0)
			vv.LayoutVersion = lv
			if err := (hstorage.Dir{Root: vol}).Format(vfs.Default, vv, testNow, false); err != nil {
				t.Fatal(err)
			}
			pv := poolVersion(0)
			pv.LayoutVersion = lv
			if err := os.MkdirAll(pool.Current(), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := pool.WriteVersion(vfs.Default, pv, testNow); err != nil {
				t.Fatal(err)
			}
			data := map[int64][]byte{}
			for i, id := range []int64{1073741825, 1073741826 + 300<<8, 5 << 16, -77} {
				data[id] = randBytes(id, 300+i)
				var sub string
				if lv == hstorage.DataNodeLayoutBlockID {
					sub = filepath.Join(fmt.Sprintf("subdir%d", (id>>16)&0xff), fmt.Sprintf("subdir%d", (id>>8)&0xff))
				} else {
					sub = filepath.Join("subdir0", fmt.Sprintf("subdir%d", i))
				}
				d := filepath.Join(pool.Current(), "finalized", sub)
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
				h := EncodeMetaHeader(datatransfer.DefaultChecksum())
				if err := os.WriteFile(filepath.Join(d, BlockFileName(id)), data[id], 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(d, MetaFileName(id, 7)), datatransfer.DefaultChecksum().Compute(h[:], data[id]), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			v, err := OpenVolume(VolumeConfig{Dir: vol, Testing: VolumeTesting{LockHolder: "test"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := v.Version().LayoutVersion; got != hstorage.DataNodeLayoutVersion {
				t.Fatalf("volume VERSION layout %d after open", got)
			}
			ds, err := NewDataset(Config{}, []*Volume{v})
			if err != nil {
				t.Fatal(err)
			}
			defer ds.Close()
			bp, res, err := ds.AddBlockPool(poolVersion(0), testNow)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Transitions) != 1 || !strings.Contains(res.Transitions[0].What, fmt.Sprintf("from LV = %d", lv)) {
				t.Fatalf("transitions %v", res.Transitions)
			}
			if len(bp.Replicas()) != len(data) {
				t.Fatalf("replicas %v", bp.Replicas())
			}
			for _, r := range bp.Replicas() {
				if want := IDToBlockDir(filepath.Join(pool.Current(), "finalized"), r.ID); filepath.Dir(r.BlockPath) != want {
					t.Fatalf("replica %d at %s, want %s", r.ID, r.BlockPath, want)
				}
				if got := readAll(t, bp, r.Block, 512); !bytes.Equal(got, data[r.ID]) {
					t.Fatalf("replica %d differs", r.ID)
				}
			}
			prev, err := pool.ReadPreviousVersion(vfs.Default)
			if err != nil || prev.LayoutVersion != lv {
				t.Fatalf("previous VERSION %+v, %v", prev, err)
			}
		})
	}
}

func TestPoolVersionRefused(t *testing.T) {
	tests := []struct {
		name   string
		lv     int32
		ctime  int64
		nsTime int64
		want   string
	}{
		{"newer layout", -58, 0, 0, "newer than this DataNode's -57"},
		{"too old a layout", -54, 0, 0, "upgrades from -55 and later only"},
		{"newer than the namespace", -57, 200, 100, "is newer than the namespace state"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newUpgradeFixture(t)
			for _, d := range f.poolDirs() {
				v := poolVersion(tt.ctime)
				v.LayoutVersion = tt.lv
				if err := d.WriteVersion(vfs.Default, v, testNow); err != nil {
					t.Fatal(err)
				}
			}
			err := f.open(Config{}, tt.nsTime)
			if !errors.Is(err, ErrBadVolume) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want ErrBadVolume saying %q", err, tt.want)
			}
		})
	}
}

func TestBreakLinksLeftoverRemoved(t *testing.T) {
	f := newUpgradeFixture(t)
	f.upgraded()
	r, _ := f.bp.Get(2)
	f.close()
	junk := r.BlockPath + UnlinkSuffix
	if err := os.WriteFile(junk, []byte("half a copy"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.mustOpen(Config{}, 100)
	if _, err := os.Stat(junk); !os.IsNotExist(err) {
		t.Fatalf("%s survived the start: %v", junk, err)
	}
	f.check(100, 0, f.data, int64(len(f.rbw)))
}
