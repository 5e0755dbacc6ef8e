package minicluster

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
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

// A replica whose bytes flipped on disk, found by the block scanner (no
// client reads it), makes the NameNode's /fsck report the file's only
// block CORRUPT.
func TestFsckSeesScannerReport(t *testing.T) {
	ctx := context.Background()
	sclk := clock.NewManual(time.Unix(1_800_000_000, 0))
	var logs testtool.Buffer
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: 1, ScannerClock: sclk,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Conf: []conf.KeyValue{
			{Key: conf.DFSHeartbeatInterval, Value: "1"},
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
	data := make([]byte, 64<<10)
	rand.NewChaCha8([32]byte{3}).Read(data)
	w, err := fsys.CreateFile(ctx, "/cold", client.CreateOptions{Replication: 1, Perm: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fsck := func() string {
		resp, err := http.Get("http://" + c.NameNode().HTTPAddr().String() + "/fsck?ugi=tester&path=%2F")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if out := fsck(); !strings.HasSuffix(out, "is HEALTHY") {
		t.Fatalf("before:\n%s", out)
	}
	bp, err := c.DataNodes()[0].BlockPool(c.NameNode().BlockPoolID())
	if err != nil {
		t.Fatal(err)
	}
	var path string
	for _, r := range bp.Replicas() {
		if r.State == storage.Finalized {
			path = r.BlockPath
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{data[1000] ^ 0xff}, 1000); err != nil {
		t.Fatal(err)
	}
	f.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := fsck()
		if strings.Contains(out, "/cold: CORRUPT blockpool ") && strings.HasSuffix(out, "The filesystem under path '/' is CORRUPT") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fsck never saw the scanner's report:\n%s\n%s", out, logs.String())
		}
		sclk.Advance(time.Minute)
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "block scanner: reporting bad replica") {
		t.Fatalf("CORRUPT, but not by the scanner:\n%s", logs.String())
	}
}
