package storage

import (
	"bytes"
	"errors"
	"sync"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
)

// TestConcurrentWritersReadersInvalidate runs writers of distinct blocks
// next to readers and an invalidator; run with -race.
func TestConcurrentWritersReadersInvalidate(t *testing.T) {
	c := newCluster(t, 2, nil)
	ck := datatransfer.DefaultChecksum()
	const n = 8
	data := randBytes(31, 5000)
	var wg sync.WaitGroup
	errc := make(chan error, 3*n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(id int64) {
			defer wg.Done()
			w, err := c.bp.CreateRBW(Block{ID: id, GenStamp: 1}, ck, 1<<20)
			if err != nil {
				errc <- err
				return
			}
			for off := 0; off < len(data); off += 700 {
				end := min(off+700, len(data))
				p := data[off:end]
				if err := w.WritePacket(int64(off), p, ck.Compute(nil, p)); err != nil {
					if errors.Is(err, ErrWriterStopped) {
						return // invalidated under us
					}
					errc <- err
					return
				}
				w.SetBytesAcked(int64(end))
			}
			if _, err := w.Finalize(int64(len(data))); err != nil && !errors.Is(err, ErrWriterStopped) && !errors.Is(err, ErrReplicaNotFound) {
				errc <- err
			}
		}(int64(i))
		wg.Add(1)
		go func(id int64) {
			defer wg.Done()
			for k := 0; k < 20; k++ {
				rr, err := c.bp.OpenReader(Block{ID: id, GenStamp: 1})
				if err != nil {
					continue // not created yet, or invalidated
				}
				got, sums, err := rr.ReadChunks(0, len(data), nil, nil)
				if err == nil {
					err = ck.Verify(got, sums)
				}
				if err == nil && !bytes.Equal(got, data[:len(got)]) {
					err = errors.New("read data differs")
				}
				rr.Close()
				if err != nil {
					errc <- err
					return
				}
			}
		}(int64(i))
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for id := int64(0); id < n; id += 2 {
			_ = c.bp.Invalidate([]Block{{ID: id, GenStamp: 1}})
		}
	}()
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	for _, r := range c.bp.Replicas() {
		if r.State == Finalized {
			if got := checkFiles(t, r); !bytes.Equal(got, data) {
				t.Errorf("%v: data differs", r.Block)
			}
		}
	}
}

func TestCloseWithOpenWriter(t *testing.T) {
	c := newCluster(t, 1, nil)
	ck := datatransfer.DefaultChecksum()
	w, err := c.bp.CreateRBW(Block{ID: 1, GenStamp: 1}, ck, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	c.close()
	if err := w.WritePacket(0, []byte("a"), ck.Compute(nil, []byte("a"))); !errors.Is(err, ErrWriterStopped) {
		t.Fatalf("write after dataset close: %v", err)
	}
	c.open(false)
	if r, ok := c.bp.Get(1); !ok || r.State != RWR || r.NumBytes != 0 {
		t.Fatalf("after reopen %+v", r)
	}
}
