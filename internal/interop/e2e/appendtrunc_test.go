package e2e

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	stock "github.com/colinmarc/hdfs/v2"
)

// TestStockAppendAndTruncate: what the stock client's own suite expects of
// HDFS: 20 appends in a row, each closing on the first complete; truncate to a
// block boundary, inside a block, and to zero.
func TestStockAppendAndTruncate(t *testing.T) {
	parallel(t)
	c := startCluster(t, 3, fastFailure) // 1 MiB blocks
	cl := c.stockClient(t)

	w, err := cl.Create("/app")
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("start\n")
	w.Write(want)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		a, err := cl.Append("/app")
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		chunk := bytes.Repeat([]byte{byte('a' + i)}, 1000*(i+1))
		if _, err := a.Write(chunk); err != nil {
			t.Fatalf("append %d write: %v", i, err)
		}
		// The stock client does not retry complete: it must succeed first time.
		if err := a.Close(); err != nil {
			t.Fatalf("append %d close: %v", i, err)
		}
		want = append(want, chunk...)
	}
	if got := readStock(t, cl, "/app"); !bytes.Equal(got, want) {
		t.Fatalf("after 20 appends: %d bytes, want %d", len(got), len(want))
	}

	// A file of two and a half blocks.
	data := make([]byte, 2<<20+(1<<19))
	for i := range data {
		data[i] = byte(i * 7)
	}
	w, err = cl.Create("/tr")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{2 << 20, 1<<20 + 12345, 0} {
		done, err := cl.Truncate("/tr", n)
		if err != nil {
			t.Fatalf("truncate to %d: %v", n, err)
		}
		if !done {
			// Inside a block: block recovery cuts the replicas; the stock
			// suite polls for up to 5 s.
			deadline := time.Now().Add(10 * time.Second)
			for !c.isFileClosed(t, "/tr") {
				if time.Now().After(deadline) {
					t.Fatalf("truncate to %d did not finish", n)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		fi, err := cl.Stat("/tr")
		if err != nil || fi.Size() != n {
			t.Fatalf("after truncate to %d: size %v, %v", n, fi.Size(), err)
		}
		if got := readStock(t, cl, "/tr"); !bytes.Equal(got, data[:n]) {
			t.Fatalf("after truncate to %d: content differs", n)
		}
		if got := c.readAll(t, "/tr"); !bytes.Equal(got, data[:n]) {
			t.Fatalf("our read after truncate to %d differs", n)
		}
	}
	if _, err := cl.Truncate("/tr", 10); err == nil {
		t.Fatal("truncate beyond the end succeeded")
	}
	if _, err := cl.Truncate("/nope", 0); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("truncate of a missing file: %v", err)
	}
}

func readStock(t *testing.T, cl *stock.Client, path string) []byte {
	t.Helper()
	f, err := cl.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return b
}
