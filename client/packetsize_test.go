package client

import (
	"context"
	"testing"
)

// TestWritePacketSize: the client's own packet size (Hadoop's client key)
// wins over the server default, which applies when it is unset; packets
// hold whole chunks after room for the header.
func TestWritePacketSize(t *testing.T) {
	d := ServerDefaults{WritePacketSize: 65536, BytesPerChecksum: 512, ChecksumType: "CRC32C"}
	for _, tc := range []struct {
		opt, want int
	}{
		{0, 126 * 512},        // (65536 - 33) / 516 whole chunks
		{1 << 20, 2032 * 512}, // (1048576 - 33) / 516
		{600, 512},            // at least one chunk
	} {
		f, err := newFileSystem(Options{Addresses: []string{"nn:8020"}, WritePacketSize: tc.opt}, nil)
		if err != nil {
			t.Fatal(err)
		}
		w := f.newWriter(context.Background(), "/f", "/f", 1, 128<<20, d)
		if w.packetSize != tc.want {
			t.Errorf("WritePacketSize %d: packets of %d data bytes, want %d", tc.opt, w.packetSize, tc.want)
		}
	}
	if _, err := newFileSystem(Options{Addresses: []string{"nn:8020"}, WritePacketSize: 64 << 20}, nil); err == nil {
		t.Error("a 64 MiB packet size was accepted")
	}
}
