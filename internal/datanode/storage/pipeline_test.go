package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
)

// rbwWithTail creates an RBW replica of id at stamp gs holding data, of
// which the first acked bytes are acknowledged, and returns its writer.
func rbwWithTail(t *testing.T, c *cluster, id, gs int64, data []byte, acked int) *ReplicaWriter {
	t.Helper()
	ck := datatransfer.DefaultChecksum()
	w, err := c.bp.CreateRBW(Block{ID: id, GenStamp: gs}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	writePackets(t, w, ck, 0, data[:acked], []int{acked})
	if tail := data[acked:]; len(tail) > 0 {
		if err := w.WritePacket(int64(acked), tail, ck.Compute(nil, tail)); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func TestRecoverRBW(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	data := randBytes(40, 5000)
	old := rbwWithTail(t, c, 30, 5, data[:3000], 1700)
	oldMeta := old.Replica().MetaPath

	stops := 0
	old.OnStop(func() { stops++ })
	w, err := c.bp.RecoverRBW(Block{ID: 30, GenStamp: 5, NumBytes: 1700}, 6, 1700, 3000, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if stops != 1 {
		t.Fatalf("the old writer's OnStop ran %d times, want once", stops)
	}
	w.OnStop(func() { stops++ }) // not called when the owner finalizes
	// The old pipeline's writer can no longer touch the replica.
	if err := old.WritePacket(3000, data[3000:3100], ck.Compute(nil, data[3000:3100])); !errors.Is(err, ErrWriterStopped) {
		t.Fatalf("old writer after recovery: %v", err)
	}
	old.SetBytesAcked(3000)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	r, _ := c.bp.Get(30)
	if r.State != RBW || r.GenStamp != 6 || r.NumBytes != 1700 || r.BytesAcked != 1700 {
		t.Fatalf("recovered replica %+v", r)
	}
	if _, err := os.Stat(oldMeta); !os.IsNotExist(err) {
		t.Fatalf("old meta file still there: %v", err)
	}
	if filepath.Base(r.MetaPath) != MetaFileName(30, 6) {
		t.Fatalf("meta file %s", r.MetaPath)
	}
	// The unacknowledged tail is gone and the partial last chunk's checksum
	// describes what is left.
	if got := checkFiles(t, r); !bytes.Equal(got, data[:1700]) {
		t.Fatal("data after cut differs")
	}
	// The client resends from its last acknowledged packet.
	writePackets(t, w, ck, 1500, data[1500:], []int{1000, 2500})
	rep, err := w.Finalize(5000)
	if err != nil {
		t.Fatal(err)
	}
	if rep.GenStamp != 6 || !bytes.Equal(checkFiles(t, rep), data) {
		t.Fatalf("finalized %+v", rep)
	}
	if stops != 1 {
		t.Fatalf("OnStop ran on the owner's Finalize")
	}
}

func TestRecoverRBWSurvivesRestart(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	data := randBytes(41, 2500)
	old := rbwWithTail(t, c, 31, 5, data, 1025)
	if _, err := c.bp.RecoverRBW(Block{ID: 31, GenStamp: 5}, 9, 1000, 2500, ck, 1<<20); err != nil {
		t.Fatal(err)
	}
	_ = old.Close()
	c.restart()
	r, ok := c.bp.Get(31)
	if !ok || r.State != RWR || r.GenStamp != 9 || r.NumBytes != 1025 {
		t.Fatalf("after restart %+v", r)
	}
	if !bytes.Equal(checkFiles(t, r), data[:1025]) {
		t.Fatal("data after restart differs")
	}
}

func TestRecoverRefused(t *testing.T) {
	ck := datatransfer.DefaultChecksum()
	data := randBytes(42, 3000)
	type call func(bp *BlockPool) error
	rbw := func(b Block, newGS, lo, hi int64) call {
		return func(bp *BlockPool) error { _, err := bp.RecoverRBW(b, newGS, lo, hi, ck, 1<<20); return err }
	}
	closeRec := func(b Block, newGS, n int64) call {
		return func(bp *BlockPool) error { _, err := bp.RecoverClose(b, newGS, n); return err }
	}
	appendRec := func(b Block, newGS, n int64) call {
		return func(bp *BlockPool) error { _, err := bp.RecoverAppend(b, newGS, n, ck, 1<<20); return err }
	}
	tests := []struct {
		name      string
		finalized bool // the replica (blk_50_5, 3000 bytes, 2000 acked) is FINALIZED
		do        call
		want      error
	}{
		{"stale replica", false, rbw(Block{ID: 50, GenStamp: 6}, 7, 2000, 3000), ErrGenStamp},
		{"new stamp older than replica", false, rbw(Block{ID: 50, GenStamp: 4}, 4, 2000, 3000), ErrGenStamp},
		{"acked below min", false, rbw(Block{ID: 50, GenStamp: 5}, 6, 2001, 3000), ErrLength},
		{"received above max", false, rbw(Block{ID: 50, GenStamp: 5}, 6, 2000, 2999), ErrLength},
		{"streaming on finalized", true, rbw(Block{ID: 50, GenStamp: 5}, 6, 3000, 3000), ErrWrongState},
		{"missing", false, rbw(Block{ID: 51, GenStamp: 5}, 6, 0, 0), ErrReplicaNotFound},
		{"close wrong length", false, closeRec(Block{ID: 50, GenStamp: 5}, 6, 2000), ErrLength},
		{"close finalized wrong length", true, closeRec(Block{ID: 50, GenStamp: 5}, 6, 2999), ErrLength},
		{"close stale", true, closeRec(Block{ID: 50, GenStamp: 6}, 7, 3000), ErrGenStamp},
		{"append wrong length", true, appendRec(Block{ID: 50, GenStamp: 5}, 6, 2000), ErrLength},
		{"append stale", false, appendRec(Block{ID: 50, GenStamp: 6}, 7, 3000), ErrGenStamp},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, 1, nil)
			w := rbwWithTail(t, c, 50, 5, data, 2000)
			if tc.finalized {
				if _, err := w.Finalize(3000); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := c.bp.Get(50)
			if err := tc.do(c.bp); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			after, _ := c.bp.Get(50)
			if after.GenStamp != before.GenStamp || after.NumBytes != before.NumBytes || after.State != before.State {
				t.Fatalf("refused recovery changed the replica: %+v -> %+v", before, after)
			}
			if !tc.finalized && errors.Is(tc.want, ErrGenStamp) {
				// A stale request leaves the live writer alone.
				more := randBytes(47, 10)
				if err := w.WritePacket(3000, more, ck.Compute(nil, more)); err != nil {
					t.Fatalf("writer after a stale request: %v", err)
				}
			}
			_ = w.Close()
		})
	}
}

func TestRecoverRWRRefused(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	w := rbwWithTail(t, c, 52, 5, randBytes(43, 1000), 1000)
	_ = w.Close()
	c.restart()
	if _, err := c.bp.RecoverRBW(Block{ID: 52, GenStamp: 5}, 6, 1000, 1000, ck, 1<<20); !errors.Is(err, ErrWrongState) {
		t.Fatalf("streaming recovery of RWR: %v", err)
	}
	if _, err := c.bp.RecoverClose(Block{ID: 52, GenStamp: 5}, 6, 1000); !errors.Is(err, ErrWrongState) {
		t.Fatalf("close recovery of RWR: %v", err)
	}
}

func TestRecoverClose(t *testing.T) {
	data := randBytes(44, 2100)
	for _, finalized := range []bool{false, true} {
		c := newCluster(t, 1, nil)
		w := rbwWithTail(t, c, 60, 5, data, 1500)
		if finalized {
			if _, err := w.Finalize(2100); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := c.bp.RecoverClose(Block{ID: 60, GenStamp: 5, NumBytes: 2100}, 8, 2100)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WritePacket(2100, []byte("x"), datatransfer.DefaultChecksum().Compute(nil, []byte("x"))); !errors.Is(err, ErrWriterStopped) {
			t.Fatalf("old writer: %v", err)
		}
		_ = w.Close()
		got, _ := c.bp.Get(60)
		if rep.State != Finalized || got.State != Finalized || got.GenStamp != 8 || got.NumBytes != 2100 {
			t.Fatalf("finalized=%v: recovered %+v, map %+v", finalized, rep, got)
		}
		if !bytes.Equal(checkFiles(t, got), data) || !bytes.Equal(readAll(t, c.bp, Block{ID: 60, GenStamp: 8}, 512), data) {
			t.Fatal("data differs")
		}
		c.restart()
		if r, _ := c.bp.Get(60); r.State != Finalized || r.GenStamp != 8 {
			t.Fatalf("after restart %+v", r)
		}
	}
}

func TestRecoverAppend(t *testing.T) {
	ck := datatransfer.DefaultChecksum()
	data := randBytes(45, 3000)
	c := newCluster(t, 1, nil)
	w := rbwWithTail(t, c, 70, 5, data[:1000], 1000)
	if _, err := w.Finalize(1000); err != nil {
		t.Fatal(err)
	}
	// A FINALIZED replica is reopened as by Append.
	w1, err := c.bp.RecoverAppend(Block{ID: 70, GenStamp: 5, NumBytes: 1000}, 6, 1000, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := c.bp.Get(70); r.State != RBW || r.GenStamp != 6 {
		t.Fatalf("after first recovery %+v", r)
	}
	// The RBW left by that attempt is taken over by the next one.
	w2, err := c.bp.RecoverAppend(Block{ID: 70, GenStamp: 5, NumBytes: 1000}, 7, 1000, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := w1.WritePacket(1000, data[1000:1001], ck.Compute(nil, data[1000:1001])); !errors.Is(err, ErrWriterStopped) {
		t.Fatalf("old writer: %v", err)
	}
	_ = w1.Close()
	writePackets(t, w2, ck, 1000, data[1000:], []int{700, 1300})
	rep, err := w2.Finalize(3000)
	if err != nil {
		t.Fatal(err)
	}
	if rep.GenStamp != 7 || !bytes.Equal(checkFiles(t, rep), data) {
		t.Fatalf("appended %+v", rep)
	}
}

func TestConvertToRBW(t *testing.T) {
	ck := datatransfer.DefaultChecksum()
	data := randBytes(46, 4000)
	c := newCluster(t, 1, nil)
	w, err := c.bp.CreateTemporary(Block{ID: 80, GenStamp: 5}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	writePackets(t, w, ck, 0, data[:2500], []int{2048, 452})
	rep, err := w.ConvertToRBW(2500)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil { // the xceiver's deferred cleanup
		t.Fatal(err)
	}
	rbwDir := filepath.Join(c.dirs[0], "current", testPool, "current", "rbw")
	got, _ := c.bp.Get(80)
	if rep.State != RBW || got.State != RBW || got.BytesAcked != 2500 || filepath.Dir(got.BlockPath) != rbwDir {
		t.Fatalf("converted %+v, map %+v", rep, got)
	}
	if !bytes.Equal(readAll(t, c.bp, Block{ID: 80, GenStamp: 5}, 1024), data[:2500]) {
		t.Fatal("data differs")
	}
	// The recovered pipeline continues it.
	w2, err := c.bp.RecoverRBW(Block{ID: 80, GenStamp: 5}, 6, 2500, 2500, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	writePackets(t, w2, ck, 2500, data[2500:], []int{1500})
	fin, err := w2.Finalize(4000)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(checkFiles(t, fin), data) {
		t.Fatal("data after recovery differs")
	}
	// Only a TEMPORARY replica converts.
	w3, err := c.bp.CreateRBW(Block{ID: 81, GenStamp: 1}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w3.ConvertToRBW(0); !errors.Is(err, ErrWrongState) {
		t.Fatalf("convert RBW: %v", err)
	}
	_ = w3.Close()
}
