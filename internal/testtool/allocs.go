package testtool

import (
	"runtime"
	"testing"
)

// AllocBound runs f, which decodes received bytes of outside input, and fails
// the test when f allocated more than perByte×received + fixed bytes of heap.
// Decoders of outside input must allocate in proportion to what the peer
// sent, never to a count or length the peer only claims; fuzz targets call
// this around every decode to make that a checked property.
//
// The figure is the process's total heap allocation while f runs, so f
// should not share the process with unrelated busy goroutines. It is exact
// enough for bounds of the size used here (a few times the input plus a few
// hundred KiB); a claimed-count allocation is gigabytes.
func AllocBound(t testing.TB, received int, perByte, fixed uint64, f func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	got := after.TotalAlloc - before.TotalAlloc
	limit := perByte*uint64(received) + fixed
	if got > limit {
		t.Fatalf("decoding %d bytes of input allocated %d bytes, over the bound of %d (%d per byte + %d)",
			received, got, limit, perByte, fixed)
	}
}
