package bench

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestRunScannerSmall runs `hdfs bench scanner` at a toy size: the rate
// table has one line per rate with the measured figure near the configured
// one, and the write table one line per setting and round.
func TestRunScannerSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	var out bytes.Buffer
	err := RunScanner(context.Background(), ScannerOptions{
		Rates: []int64{32 << 20}, Data: 8 << 20, ReplicaSize: 1 << 20, MinWindow: 200 * time.Millisecond,
		WriteSize: 2 << 20, WriteRates: []int64{0}, Rounds: 1, TempDir: t.TempDir(),
	}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	m := regexp.MustCompile(`32 MiB/s\s+([0-9.]+) MiB/s`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no rate line:\n%s", out.String())
	}
	// A sanity bound, not a timed assertion: a scanner at 32 MiB/s that
	// verified at ten times that rate would not be throttled at all.
	if got, _ := strconv.ParseFloat(m[1], 64); got <= 0 || got > 320 {
		t.Fatalf("measured %s MiB/s at 32 MiB/s:\n%s", m[1], out.String())
	}
	for _, want := range []string{"round 1  no scanner", "round 1  scanner at unlimited", "median"} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Fatalf("no %q in:\n%s", want, out.String())
		}
	}
}
