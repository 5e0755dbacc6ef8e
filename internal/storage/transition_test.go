package storage

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

func TestDecide(t *testing.T) {
	cur := DirState{Current: true, Version: true}
	with := func(s DirState, f func(*DirState)) DirState { f(&s); return s }
	tests := []struct {
		name string
		s    DirState
		want Repair
		bad  bool
	}{
		{"normal", cur, RepairNone, false},
		{"normal with previous (upgrade not finalized)", with(cur, func(s *DirState) { s.Previous = true }), RepairNone, false},
		{"empty", DirState{}, RepairNotFormatted, false},
		{"current without VERSION", DirState{Current: true}, RepairNotFormatted, false},
		{"previous without VERSION", DirState{Current: true, Previous: true}, 0, true},
		{"previous alone", DirState{Previous: true}, 0, true},

		// Upgrade: current → previous.tmp; new current filled, VERSION last;
		// previous.tmp → previous.
		{"upgrade: renamed, no new current yet", DirState{PreviousTmp: true}, RepairRecoverUpgrade, false},
		{"upgrade: new current being filled", DirState{Current: true, PreviousTmp: true}, RepairRecoverUpgrade, false},
		{"upgrade: new VERSION written", DirState{Current: true, Version: true, PreviousTmp: true}, RepairCompleteUpgrade, false},
		{"upgrade: previous.tmp beside previous", DirState{Current: true, Version: true, PreviousTmp: true, Previous: true}, 0, true},

		// Rollback: current → removed.tmp; previous → current; delete removed.tmp.
		{"rollback: current moved aside", DirState{RemovedTmp: true, Previous: true}, RepairRecoverRollback, false},
		{"rollback: previous restored", DirState{Current: true, Version: true, RemovedTmp: true}, RepairCompleteRollback, false},
		{"rollback: both current and previous", DirState{Current: true, Version: true, RemovedTmp: true, Previous: true}, 0, true},
		{"rollback: neither", DirState{RemovedTmp: true}, 0, true},
		{"rollback: stray current without VERSION", DirState{Current: true, RemovedTmp: true, Previous: true}, 0, true},

		// Finalize: previous → finalized.tmp; delete it.
		{"finalize: renamed", with(cur, func(s *DirState) { s.FinalizedTmp = true }), RepairCompleteFinalize, false},
		{"finalize: beside previous", with(cur, func(s *DirState) { s.FinalizedTmp, s.Previous = true, true }), 0, true},

		{"two temporary dirs", with(cur, func(s *DirState) { s.FinalizedTmp, s.RemovedTmp = true, true }), 0, true},
		{"Hadoop checkpoint import", with(cur, func(s *DirState) { s.LastCheckpointTmp = true }), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decide(tt.s)
			if tt.bad {
				if !errors.Is(err, ErrInconsistentState) {
					t.Fatalf("Decide(%s) = %v, %v; want ErrInconsistentState", tt.s, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Decide(%s) = %v, %v; want %v", tt.s, got, err, tt.want)
			}
		})
	}
}

// transitionFixture is a storage dir on a MemFS with current/VERSION (cTime
// says which state it is) and a data file.
type transitionFixture struct {
	t   *testing.T
	fs  *vfs.MemFS
	dir Dir
}

func newTransitionFixture(t *testing.T) *transitionFixture {
	f := &transitionFixture{t: t, fs: vfs.NewMem(), dir: Dir{Root: "/sd"}}
	if err := f.dir.Format(f.fs, f.version(1), testNow, false); err != nil {
		t.Fatal(err)
	}
	f.writeData(f.dir.Current(), "state 1")
	return f
}

func (f *transitionFixture) version(ctime int64) *Version {
	return &Version{LayoutVersion: NameNodeLayoutVersion, NamespaceID: 7, ClusterID: "CID-x", CTime: ctime,
		StorageType: StorageTypeNameNode, BlockPoolID: "BP-1"}
}

func (f *transitionFixture) writeData(dir, s string) {
	f.t.Helper()
	if err := AtomicWriteFile(f.fs, filepath.Join(dir, "data"), []byte(s)); err != nil {
		f.t.Fatal(err)
	}
}

// state reads the cTime of current/VERSION, whether previous/ exists and
// its cTime, and checks that the data file matches the cTime.
func state(t *testing.T, fsys vfs.FS, d Dir) (cur, prev int64) {
	t.Helper()
	s, err := d.Inspect(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := Decide(s); err != nil || r != RepairNone {
		t.Fatalf("after recovery the dir holds %s (%v, %v)", s, r, err)
	}
	read := func(dir string, wantV *Version) int64 {
		data, err := ReadFile(fsys, filepath.Join(dir, "data"))
		if err != nil {
			t.Fatal(err)
		}
		if want := "state " + string(rune('0'+wantV.CTime)); string(data) != want {
			t.Fatalf("%s holds %q with VERSION cTime %d", dir, data, wantV.CTime)
		}
		return wantV.CTime
	}
	v, err := d.ReadVersion(fsys)
	if err != nil {
		t.Fatal(err)
	}
	cur = read(d.Current(), v)
	if s.Previous {
		pv, err := d.ReadPreviousVersion(fsys)
		if err != nil {
			t.Fatal(err)
		}
		prev = read(d.Previous(), pv)
	}
	return cur, prev
}

// TestTransitionCrashAtEveryStep runs each transition on a MemFS, makes a
// crash image (only what was synced) after every step, recovers it and
// checks that the dir is in the state before or after the transition, with
// nothing in between.
func TestTransitionCrashAtEveryStep(t *testing.T) {
	type step struct {
		name string
		do   func(f *transitionFixture) error
	}
	upgrade := []step{
		{"start", func(f *transitionFixture) error { return f.dir.StartUpgrade(f.fs) }},
		{"fill", func(f *transitionFixture) error { f.writeData(f.dir.Current(), "state 2"); return nil }},
		{"version", func(f *transitionFixture) error { return f.dir.WriteVersion(f.fs, f.version(2), testNow) }},
		{"complete", func(f *transitionFixture) error { return f.dir.CompleteUpgrade(f.fs) }},
	}
	rollback := []step{
		{"start", func(f *transitionFixture) error { return f.dir.StartRollback(f.fs) }},
		{"restore", func(f *transitionFixture) error { return f.dir.RestorePrevious(f.fs) }},
		{"remove", func(f *transitionFixture) error { return f.dir.RemoveRemoved(f.fs) }},
	}
	finalize := []step{
		{"start", func(f *transitionFixture) error { _, err := f.dir.StartFinalize(f.fs); return err }},
		{"remove", func(f *transitionFixture) error { return f.dir.RemoveFinalized(f.fs) }},
	}
	run := func(f *transitionFixture, steps []step) {
		t.Helper()
		for _, s := range steps {
			if err := s.do(f); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		}
	}
	type want struct{ cur, prev int64 }
	cases := []struct {
		name          string
		setup         []step
		steps         []step
		before, after want
	}{
		{"upgrade", nil, upgrade, want{1, 0}, want{2, 1}},
		{"rollback", upgrade, rollback, want{2, 1}, want{1, 0}},
		{"finalize", upgrade, finalize, want{2, 1}, want{2, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k := 0; k <= len(c.steps); k++ {
				f := newTransitionFixture(t)
				run(f, c.setup)
				run(f, c.steps[:k])
				crashed := f.fs.CrashClone()
				r, err := f.dir.Recover(crashed)
				if err != nil {
					t.Fatalf("crash after %d steps: recover: %v", k, err)
				}
				cur, prev := state(t, crashed, f.dir)
				got := want{cur, prev}
				if got != c.before && got != c.after {
					t.Fatalf("crash after %d steps (repair: %v): state %+v, want %+v or %+v", k, r, got, c.before, c.after)
				}
				if k == 0 && got != c.before || k == len(c.steps) && got != c.after {
					t.Fatalf("crash after %d of %d steps: state %+v", k, len(c.steps), got)
				}
				t.Logf("crash after %d steps: %v → %+v", k, r, got)
			}
		})
	}
}

func TestTransitionsRefuseWrongStart(t *testing.T) {
	f := newTransitionFixture(t)
	if err := f.dir.StartRollback(f.fs); !errors.Is(err, ErrInconsistentState) {
		t.Fatalf("rollback without previous: %v", err)
	}
	if ok, err := f.dir.StartFinalize(f.fs); ok || err != nil {
		t.Fatalf("finalize without previous: %v, %v", ok, err)
	}
	if err := f.dir.StartUpgrade(f.fs); err != nil {
		t.Fatal(err)
	}
	if err := f.dir.StartUpgrade(f.fs); !errors.Is(err, ErrInconsistentState) {
		t.Fatalf("second upgrade over previous.tmp: %v", err)
	}
}
