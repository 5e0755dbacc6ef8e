package client_test

import (
	"bytes"
	"io"
	"testing"

	gohdfs "github.com/colinmarc/hdfs/v2"

	"github.com/hdfsgo/hdfsgo/client/clienttest"
)

// TestStockClientInterop checks that what this client writes reads back
// with the stock Go client (which verifies every chunk checksum itself),
// and the other way round.
func TestStockClientInterop(t *testing.T) {
	c, fsys := startCluster(t, clienttest.Config{Replication: 1, BlockSize: 1 << 20})
	ctx := ctxT(t)
	stock, err := gohdfs.NewClient(gohdfs.ClientOptions{Addresses: []string{c.Addr()}, User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	defer stock.Close()

	ours := pattern(2<<20+777, 21)
	w, err := fsys.Create(ctx, "/ours")
	if err != nil {
		t.Fatal(err)
	}
	// Unaligned flushes make packets that end mid-chunk.
	for off := 0; off < len(ours); off += 100000 {
		if _, err := w.Write(ours[off:min(off+100000, len(ours))]); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := stock.ReadFile("/ours")
	if err != nil || !bytes.Equal(got, ours) {
		t.Fatalf("stock client read %d bytes, %v", len(got), err)
	}

	theirs := pattern(1<<20+5, 22)
	sw, err := stock.Create("/theirs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(sw, bytes.NewReader(theirs)); err != nil {
		t.Fatal(err)
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	got, err = fsys.ReadFile(ctx, "/theirs")
	if err != nil || !bytes.Equal(got, theirs) {
		t.Fatalf("read of the stock client's file: %d bytes, %v", len(got), err)
	}
	ourSum, err := fsys.Checksum(ctx, "/theirs")
	if err != nil {
		t.Fatal(err)
	}
	fr, err := stock.Open("/theirs")
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	stockSum, err := fr.Checksum()
	if err != nil {
		t.Fatal(err)
	}
	// Two blocks: the same file MD5, and crcPerBlock is reported.
	if !bytes.Equal(stockSum, ourSum.MD5()) || ourSum.Algorithm != "MD5-of-2048MD5-of-512CRC32C" {
		t.Fatalf("checksum %s, stock client's MD5 %x", ourSum, stockSum)
	}
}
