package storage

import (
	"os"
	"syscall"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
)

// allocated returns the bytes the file system holds for the file at p.
func allocated(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skip("no block counts on this platform")
	}
	return st.Blocks * 512
}

// The space allocated ahead of the data is given back however the writer
// ends, and never shows in the file's length.
func TestPreallocatedSpaceReturned(t *testing.T) {
	ck := datatransfer.DefaultChecksum()
	data := randBytes(11, 300<<10+123)
	tests := []struct {
		name string
		end  func(t *testing.T, w *ReplicaWriter) Replica
	}{
		{"finalize", func(t *testing.T, w *ReplicaWriter) Replica {
			r, err := w.Finalize(int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			return r
		}},
		{"close RBW", func(t *testing.T, w *ReplicaWriter) Replica {
			r := w.Replica()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			return r
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, 1, nil)
			w, err := c.bp.CreateRBW(Block{ID: int64(100 + i), GenStamp: 1}, ck, 128<<20)
			if err != nil {
				t.Fatal(err)
			}
			writePackets(t, w, ck, 0, data, []int{64 << 10, 100, 64<<10 - 100, len(data) - 128<<10})
			open := w.Replica()
			if fi, err := os.Stat(open.BlockPath); err != nil || fi.Size() != int64(len(data)) {
				t.Fatalf("open block file: %v, %v; want %d bytes", fi, err, len(data))
			}
			r := tt.end(t, w)
			if r.BlockPath == "" {
				t.Fatal("no block path")
			}
			p := r.BlockPath
			if tt.name == "finalize" {
				checkFiles(t, r)
			}
			// At most the data rounded up to a generous file system block.
			if got, limit := allocated(t, p), int64(len(data))+64<<10; got > limit {
				t.Fatalf("%s holds %d bytes for %d bytes of data", p, got, len(data))
			}
		})
	}
}
