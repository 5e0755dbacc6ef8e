package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
)

func TestRecoveryOfRBW(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	data := randBytes(21, 1500)
	b := Block{ID: 90, GenStamp: 5}
	w, err := c.bp.CreateRBW(b, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	writePackets(t, w, ck, 0, data, []int{1000, 500})
	if _, err := c.bp.InitReplicaRecovery(b, 5); !errors.Is(err, ErrGenStamp) {
		t.Fatalf("recovery id not newer: %v", err)
	}
	info, err := c.bp.InitReplicaRecovery(b, 10)
	if err != nil {
		t.Fatal(err)
	}
	if info.OriginalState != RBW || info.NumBytes != 1500 || info.GenStamp != 5 {
		t.Fatalf("recovery info %+v", info)
	}
	if err := w.WritePacket(1500, []byte{1}, ck.Compute(nil, []byte{1})); !errors.Is(err, ErrWriterStopped) {
		t.Fatalf("writer after recovery start: %v", err)
	}
	if _, err := c.bp.InitReplicaRecovery(b, 10); !errors.Is(err, ErrRecoveryInProgress) {
		t.Fatalf("same recovery id again: %v", err)
	}
	if _, err := c.bp.InitReplicaRecovery(b, 11); err != nil {
		t.Fatal(err)
	}
	if r, _ := c.bp.Get(b.ID); r.State != RUR || r.RecoveryID != 11 || r.OriginalState != RBW {
		t.Fatalf("replica %+v", r)
	}
	old := Block{ID: 90, GenStamp: 5, NumBytes: 1500}
	if _, err := c.bp.UpdateReplicaUnderRecovery(old, 10, 1100); !errors.Is(err, ErrRecoveryInProgress) {
		t.Fatalf("stale recovery id: %v", err)
	}
	if _, err := c.bp.UpdateReplicaUnderRecovery(old, 11, 1600); !errors.Is(err, ErrLength) {
		t.Fatalf("longer new length: %v", err)
	}
	rep, err := c.bp.UpdateReplicaUnderRecovery(old, 11, 1100)
	if err != nil {
		t.Fatal(err)
	}
	if rep.State != Finalized || rep.GenStamp != 11 || rep.NumBytes != 1100 || filepath.Base(rep.MetaPath) != MetaFileName(90, 11) {
		t.Fatalf("recovered %+v", rep)
	}
	if got := checkFiles(t, rep); !bytes.Equal(got, data[:1100]) {
		t.Fatal("recovered data differs")
	}
	rbw, _ := os.ReadDir(filepath.Join(c.dirs[0], "current", testPool, "current", "rbw"))
	if len(rbw) != 0 {
		t.Fatalf("rbw/ holds %d files", len(rbw))
	}
	c.restart()
	if r, _ := c.bp.Get(90); r.State != Finalized || r.GenStamp != 11 || r.NumBytes != 1100 {
		t.Fatalf("after restart %+v", r)
	}
}

func TestRecoveryOfFinalizedKeepsLength(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	data := randBytes(22, 800)
	b := Block{ID: 91, GenStamp: 5}
	w, err := c.bp.CreateRBW(b, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	writePackets(t, w, ck, 0, data, []int{800})
	if _, err := w.Finalize(800); err != nil {
		t.Fatal(err)
	}
	info, err := c.bp.InitReplicaRecovery(b, 6)
	if err != nil || info.OriginalState != Finalized {
		t.Fatalf("%+v %v", info, err)
	}
	if _, err := c.bp.OpenReader(Block{ID: 91, GenStamp: 5}); !errors.Is(err, ErrWrongState) {
		t.Fatalf("read RUR: %v", err)
	}
	rep, err := c.bp.UpdateReplicaUnderRecovery(Block{ID: 91, GenStamp: 5, NumBytes: 800}, 6, 800)
	if err != nil {
		t.Fatal(err)
	}
	if got := checkFiles(t, rep); !bytes.Equal(got, data) || rep.GenStamp != 6 {
		t.Fatalf("recovered %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(rep.MetaPath), MetaFileName(91, 5))); !os.IsNotExist(err) {
		t.Fatalf("old meta file: %v", err)
	}
}

func TestRecoveryFileAtStartup(t *testing.T) {
	data := randBytes(23, 1300)
	tests := []struct {
		name     string
		truncate bool // the crash came after the block file was cut
		wantGS   int64
		wantLen  int64
	}{
		{"crash before truncating the block", false, 5, 1300},
		{"crash after truncating the block", true, 9, 1100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, 1, nil)
			c.close()
			blockPath, metaPath := plant(t, c.dirs[0], 92, 5, data)
			rec := filepath.Join(filepath.Dir(metaPath), MetaFileName(92, 9)+RecoverySuffix)
			if err := writeTruncatedMeta(blockPath, metaPath, rec, 1100); err != nil {
				t.Fatal(err)
			}
			if tt.truncate {
				truncate(t, blockPath, 1100)
			}
			c.open(false)
			r, ok := c.bp.Get(92)
			if !ok || r.GenStamp != tt.wantGS || r.NumBytes != tt.wantLen {
				t.Fatalf("after restart %+v", r)
			}
			if got := checkFiles(t, r); !bytes.Equal(got, data[:tt.wantLen]) {
				t.Fatal("data differs")
			}
			left, _ := os.ReadDir(filepath.Dir(metaPath))
			if len(left) != 2 {
				t.Fatalf("%d files left in the block dir", len(left))
			}
		})
	}
}

// TestCopyReplica: a copy-on-truncate writes the prefix of a finalized
// replica as a new finalized replica (checksums recomputed for the partial
// last chunk), leaves the source readable and unchanged, is idempotent,
// and survives a restart.
func TestCopyReplica(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	data := randBytes(24, 1500)
	src := Block{ID: 95, GenStamp: 5}
	w, err := c.bp.CreateRBW(src, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	writePackets(t, w, ck, 0, data, []int{1500})
	if _, err := w.Finalize(1500); err != nil {
		t.Fatal(err)
	}
	src.NumBytes = 1500
	if _, err := c.bp.InspectCopySource(src, 5); !errors.Is(err, ErrGenStamp) {
		t.Fatalf("recovery id not newer: %v", err)
	}
	info, err := c.bp.InspectCopySource(src, 9)
	if err != nil || info.NumBytes != 1500 || info.OriginalState != Finalized {
		t.Fatalf("inspect: %+v %v", info, err)
	}
	if r, _ := c.bp.Get(src.ID); r.State != Finalized {
		t.Fatalf("inspecting changed the source: %+v", r)
	}
	if _, err := c.bp.CopyReplica(src, 96, 9, 1600); !errors.Is(err, ErrLength) {
		t.Fatalf("copy beyond the source: %v", err)
	}
	if _, err := c.bp.CopyReplica(Block{ID: 95, GenStamp: 4, NumBytes: 1500}, 96, 9, 700); !errors.Is(err, ErrGenStamp) {
		t.Fatalf("copy from a stale stamp: %v", err)
	}
	rep, err := c.bp.CopyReplica(src, 96, 9, 1100) // 1100 ends inside a 512-byte chunk
	if err != nil {
		t.Fatal(err)
	}
	if rep.ID != 96 || rep.GenStamp != 9 || rep.NumBytes != 1100 || rep.State != Finalized || filepath.Base(rep.MetaPath) != MetaFileName(96, 9) {
		t.Fatalf("copy %+v", rep)
	}
	if got := checkFiles(t, rep); !bytes.Equal(got, data[:1100]) {
		t.Fatal("copied data differs")
	}
	old, _ := c.bp.Get(src.ID)
	if old.State != Finalized || old.GenStamp != 5 || old.NumBytes != 1500 {
		t.Fatalf("source after the copy: %+v", old)
	}
	if got := checkFiles(t, old); !bytes.Equal(got, data) {
		t.Fatal("source data changed")
	}
	if again, err := c.bp.CopyReplica(src, 96, 9, 1100); err != nil || again.BlockPath != rep.BlockPath {
		t.Fatalf("repeated copy: %+v %v", again, err)
	}
	if _, err := c.bp.CopyReplica(src, 96, 9, 1000); !errors.Is(err, ErrReplicaExists) {
		t.Fatalf("another copy under the same stamp: %v", err)
	}
	tmp, _ := os.ReadDir(filepath.Join(c.dirs[0], "current", testPool, "tmp"))
	if len(tmp) != 0 {
		t.Fatalf("tmp/ holds %d files", len(tmp))
	}
	c.restart()
	if r, _ := c.bp.Get(96); r.State != Finalized || r.GenStamp != 9 || r.NumBytes != 1100 {
		t.Fatalf("copy after restart %+v", r)
	}
	if r, _ := c.bp.Get(95); r.State != Finalized || r.GenStamp != 5 || r.NumBytes != 1500 {
		t.Fatalf("source after restart %+v", r)
	}
}
