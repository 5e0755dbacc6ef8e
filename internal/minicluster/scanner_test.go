package minicluster

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// A byte flipped on disk in a replica no client reads is found by the
// block scanner (on a test-sized period of its own clock), reported, and
// healed by the real NameNode: it copies a good replica to the third
// DataNode and deletes the bad one. The data reads back intact.
func TestScannerHealsCorruptReplica(t *testing.T) {
	ctx := context.Background()
	sclk := clock.NewManual(time.Unix(1_800_000_000, 0))
	var logs testtool.Buffer
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: 3, ScannerClock: sclk,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Conf: []conf.KeyValue{
			{Key: conf.DFSHeartbeatInterval, Value: "1"},
			{Key: conf.DFSNameNodeHeartbeatRecheckInterval, Value: "1000"},
			{Key: "dfs.namenode.redundancy.interval.seconds", Value: "1"},
			{Key: conf.DFSBlockScannerBytesPerSecond, Value: "1m"},
			{Key: conf.DFSDataNodeScanPeriodHours, Value: "1h"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fsys, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	data := make([]byte, 300<<10)
	rand.NewChaCha8([32]byte{7}).Read(data)
	w, err := fsys.CreateFile(ctx, "/cold", client.CreateOptions{Replication: 2, Perm: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pool := c.NameNode().BlockPoolID()
	holders := func() map[int]storage.Replica {
		out := map[int]storage.Replica{}
		for i, dn := range c.DataNodes() {
			if dn == nil {
				continue
			}
			bp, err := dn.BlockPool(pool)
			if err != nil {
				continue
			}
			for _, r := range bp.Replicas() {
				if r.State == storage.Finalized {
					out[i] = r
				}
			}
		}
		return out
	}
	before := holders()
	if len(before) != 2 {
		t.Fatalf("replicas on %d DataNodes, want 2", len(before))
	}
	bad := -1
	for i, r := range before {
		bad = i
		f, err := os.OpenFile(r.BlockPath, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte{data[100<<10] ^ 0xff}, 100<<10); err != nil {
			t.Fatal(err)
		}
		f.Close()
		break
	}
	healed := func() bool {
		h := holders()
		if _, still := h[bad]; still || len(h) != 2 {
			return false
		}
		for _, r := range h {
			b, err := os.ReadFile(r.BlockPath)
			if err != nil || !bytes.Equal(b, data) {
				return false
			}
		}
		return true
	}
	// The scanners' clock moves a minute at a time: the pass a period
	// after the write finds the flipped byte.
	deadline := time.Now().Add(20 * time.Second)
	for !healed() {
		if time.Now().After(deadline) {
			t.Fatalf("not healed; replicas on %v\n%s", holders(), logs.String())
		}
		sclk.Advance(time.Minute)
		time.Sleep(2 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "block scanner: reporting bad replica") {
		t.Fatalf("healed, but not by the scanner:\n%s", logs.String())
	}
	r, err := fsys.Open(ctx, "/cold")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v)", len(got), err)
	}
}
