package datanode

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/datanode/scanner"
	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"google.golang.org/protobuf/proto"
)

// startDNWith starts a DataNode with the given config and deps changes and
// waits until it is registered.
func startDNWith(t testing.TB, nn *fakeNN, cfgMod func(*Config), depsMod func(*Deps)) *DataNode {
	t.Helper()
	cfg := testConfig(nn.addr, t.TempDir())
	if cfgMod != nil {
		cfgMod(&cfg)
	}
	deps := Deps{Logger: testLogger(t)}
	if depsMod != nil {
		depsMod(&deps)
	}
	dn, err := Start(context.Background(), cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := dn.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return dn
}

// advanceUntil moves the manual clock by step, each time it has timers
// armed (the background work waits on it), until cond holds.
func advanceUntil(t *testing.T, clk *clock.Manual, step time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		if clk.Pending() > 0 {
			clk.Advance(step)
		}
		time.Sleep(time.Millisecond) // let the DataNode's goroutines run
	}
}

func (nn *fakeNN) badNow() []*hdfs.LocatedBlockProto {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	return append([]*hdfs.LocatedBlockProto(nil), nn.mu.badBlocks...)
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := []byte{0}
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// A byte flipped in a replica no client reads is found by the block
// scanner on the scanner's clock and reported to the NameNode with
// reportBadBlocks, naming this DataNode and the volume's storage.
func TestScannerReportsCorruptReplica(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	sclk := clock.NewManual(time.Unix(1_800_000_000, 0))
	dn := startDNWith(t, nn, func(c *Config) {
		c.Scanner = scanner.Config{BytesPerSecond: 256 << 10, Period: time.Hour, CursorSaveInterval: time.Minute}
	}, func(d *Deps) { d.ScannerClock = sclk })
	data := randomData(300<<10, 11)
	dial(t, dn).writeBlock(51, 1001, nil, data, []int{len(data)}, nil)
	dial(t, dn).writeBlock(52, 1001, nil, data[:1000], []int{1000}, nil)
	bp, _ := dn.BlockPool(testPool)
	r, _ := bp.Get(51)
	passDone := func() bool {
		st := dn.blockScan.Stats()
		return len(st) == 1 && st[0].BlocksScannedSinceStart >= 2 && st[0].AtEnd
	}
	// The first pass ran over the empty pool at start; the next one,
	// a period later, verifies the two replicas.
	advanceUntil(t, sclk, time.Minute, "the first pass over the replicas", passDone)
	if len(nn.badNow()) != 0 {
		t.Fatalf("clean replicas reported: %v", nn.badNow())
	}
	flipByte(t, r.BlockPath, 200<<10+3)
	advanceUntil(t, sclk, time.Minute, "the report", func() bool { return len(nn.badNow()) > 0 })
	lb := nn.badNow()[0]
	if lb.GetB().GetBlockId() != 51 || len(lb.GetLocs()) != 1 || lb.GetLocs()[0].GetId().GetDatanodeUuid() != dn.DatanodeUUID() ||
		len(lb.GetStorageIDs()) != 1 || lb.GetStorageIDs()[0] != r.StorageID {
		t.Fatalf("reported %v", lb)
	}
	resp, err := http.Get("http://" + dn.HTTPAddr().String() + "/blockScannerReport?listblocks")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"Block scanner information for volume " + r.StorageID, "Block scan errors since restart", "blk_51_1001"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/blockScannerReport lacks %q:\n%s", want, body)
		}
	}
}

// A client that reads a whole replica and answers CHECKSUM_OK has done the
// scanner's work for this pass.
func TestClientReadCountsAsScan(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	sclk := clock.NewManual(time.Unix(1_800_000_000, 0))
	dn := startDNWith(t, nn, func(c *Config) {
		c.Scanner = scanner.Config{BytesPerSecond: 64 << 10, Period: time.Hour}
	}, func(d *Deps) { d.ScannerClock = sclk })
	data := randomData(200<<10, 12)
	for id := int64(61); id <= 63; id++ {
		dial(t, dn).writeBlock(id, 1001, nil, data, []int{len(data)}, nil)
	}
	// The pass at start found the pool empty; a period later the next one
	// starts, and waits on its throttle in blk_61.
	stats := func() scanner.VolumeStats {
		st := dn.blockScan.Stats()
		if len(st) != 1 {
			return scanner.VolumeStats{}
		}
		return st[0]
	}
	advanceUntil(t, sclk, time.Minute, "the second pass", func() bool { return stats().ScansSinceStart == 2 })
	c := dial(t, dn)
	if got := c.readBlock(63, 1001, 0, int64(len(data))); !bytes.Equal(got, data) {
		t.Fatal("read back other data")
	}
	if err := datatransfer.WriteDelimited(c.conn, &hdfs.ClientReadStatusProto{Status: hdfs.Status_CHECKSUM_OK.Enum()}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitFor)
	for dn.act.blocksVerified.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the client's CHECKSUM_OK was not taken")
		}
		time.Sleep(time.Millisecond)
	}
	advanceUntil(t, sclk, 200*time.Millisecond, "the pass", func() bool {
		st := stats()
		return st.AtEnd && st.BlocksScannedSinceStart+st.SkippedVerifiedByReaders >= 3
	})
	st := stats()
	if st.SkippedVerifiedByReaders != 1 || st.BlocksScannedSinceStart != 2 {
		t.Fatalf("stats %+v: want blk_63 skipped, the other two verified", st)
	}
}

// A volume whose directories vanish is found by the disk checker, leaves
// service, and its replicas are reported DELETED; the storage is reported
// failed; the DataNode keeps serving and writing on its other volume; when
// the last one fails too, it stops and says why.
func TestVolumeFailure(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	sclk := clock.NewManual(time.Unix(1_800_000_000, 0))
	root := t.TempDir()
	vol0, vol1 := filepath.Join(root, "vol0"), filepath.Join(root, "vol1")
	dn := startDNWith(t, nn, func(c *Config) {
		c.DataDirs = []string{vol0, vol1}
		c.FailedVolumesTolerated = 1
		c.DiskCheckMinGap = time.Minute
	}, func(d *Deps) { d.ScannerClock = sclk })
	data := randomData(10_000, 13)
	for id := int64(71); id <= 74; id++ { // round robin: 71, 73 on vol0; 72, 74 on vol1
		dial(t, dn).writeBlock(id, 1001, nil, data, []int{len(data)}, nil)
	}
	bp, _ := dn.BlockPool(testPool)
	r72, _ := bp.Get(72)
	if r72.VolumeDir != vol1 {
		t.Fatalf("blk_72 on %s", r72.VolumeDir)
	}
	if err := os.RemoveAll(filepath.Join(vol1, "current")); err != nil {
		t.Fatal(err)
	}
	// A write that lands on vol1 fails; the I/O error asks for a check.
	resp := dial(t, dn).sendWriteOp(writeReq(75, 1001, nil, datatransfer.DefaultChecksum()))
	if resp.GetStatus() == hdfs.Status_SUCCESS {
		// Round robin chose vol0 this time: the periodic check finds it.
		advanceUntil(t, sclk, time.Minute, "the periodic check", func() bool { return len(dn.failedVolumes()) == 1 })
	}
	for _, id := range []int64{72, 74} {
		nn.waitIBR(t, "DELETED of a lost replica", func(e ibrSeen) bool {
			return e.block == id && e.status == dnpb.ReceivedDeletedBlockInfoProto_DELETED && e.storage == r72.StorageID
		})
	}
	if f := dn.failedVolumes(); len(f) != 1 || f[0].Dir != vol1 {
		t.Fatalf("failed volumes %+v", f)
	}
	// Heartbeats carry the failed storage.
	deadline := time.After(waitFor)
	for found := false; !found; {
		select {
		case hb := <-nn.heartbeats:
			for _, r := range hb.GetReports() {
				if r.GetStorageUuid() == r72.StorageID && r.GetFailed() && hb.GetFailedVolumes() == 1 &&
					len(hb.GetVolumeFailureSummary().GetFailedStorageLocations()) == 1 {
					found = true
				}
			}
		case <-deadline:
			t.Fatal("no heartbeat reports the failed storage")
		}
	}
	// vol0 still serves and takes the new writes.
	if got := dial(t, dn).readBlock(71, 1001, 0, int64(len(data))); !bytes.Equal(got, data) {
		t.Fatal("blk_71 on the good volume does not read back")
	}
	dial(t, dn).writeBlock(76, 1001, nil, data, []int{len(data)}, nil)
	if r, _ := bp.Get(76); r.VolumeDir != vol0 {
		t.Fatalf("new replica on %s", r.VolumeDir)
	}
	// The second failure is more than tolerated: the DataNode stops.
	if err := os.RemoveAll(filepath.Join(vol0, "current")); err != nil {
		t.Fatal(err)
	}
	advanceUntil(t, sclk, time.Minute, "the DataNode to stop", func() bool {
		select {
		case <-dn.Done():
			return true
		default:
			return false
		}
	})
	if err := dn.Err(); err == nil || !strings.Contains(err.Error(), "dfs.datanode.failed.volumes.tolerated") ||
		!strings.Contains(err.Error(), vol0) || !strings.Contains(err.Error(), vol1) {
		t.Fatalf("stopped with %v", err)
	}
}

// dfsadmin -reconfig's RPCs add a volume and remove one while the DataNode
// runs; the replicas of the removed one are reported DELETED.
func TestReconfigureDataDirs(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	root := t.TempDir()
	vol0, vol1 := filepath.Join(root, "vol0"), filepath.Join(root, "vol1")
	var mu sync.Mutex
	dirs := vol0
	dn := startDNWith(t, nn, func(c *Config) { c.DataDirs = []string{vol0} }, func(d *Deps) {
		d.ReloadConf = func() (*conf.Conf, error) {
			mu.Lock()
			defer mu.Unlock()
			return conf.Defaults().With(conf.KeyValue{Key: conf.DFSDataNodeDataDir, Value: dirs}), nil
		}
	})
	data := randomData(5000, 14)
	dial(t, dn).writeBlock(81, 1001, nil, data, []int{len(data)}, nil)
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{dn.IPCAddr().String()}, User: "hdfs", Protocol: ClientDatanodeProtocol})
	defer c.Close()
	ctx := context.Background()
	var props hdfs.ListReconfigurablePropertiesResponseProto
	if err := c.Call(ctx, "listReconfigurableProperties", &hdfs.ListReconfigurablePropertiesRequestProto{}, &props); err != nil {
		t.Fatal(err)
	}
	if len(props.GetName()) != 1 || props.GetName()[0] != conf.DFSDataNodeDataDir {
		t.Fatalf("reconfigurable %v", props.GetName())
	}
	reconf := func(value string) *hdfs.GetReconfigurationStatusResponseProto {
		t.Helper()
		mu.Lock()
		dirs = value
		mu.Unlock()
		if err := c.Call(ctx, "startReconfiguration", &hdfs.StartReconfigurationRequestProto{}, &hdfs.StartReconfigurationResponseProto{}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(waitFor)
		for {
			var st hdfs.GetReconfigurationStatusResponseProto
			if err := c.Call(ctx, "getReconfigurationStatus", &hdfs.GetReconfigurationStatusRequestProto{}, &st); err != nil {
				t.Fatal(err)
			}
			if st.EndTime != nil {
				return &st
			}
			if time.Now().After(deadline) {
				t.Fatal("reconfiguration did not finish")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	st := reconf(vol0 + "," + "[SSD]" + vol1)
	if len(st.GetChanges()) != 1 || st.GetChanges()[0].ErrorMessage != nil || st.GetChanges()[0].GetNewValue() != vol0+",[SSD]"+vol1 {
		t.Fatalf("status %v", st)
	}
	if v := dn.volumeByDir(vol1); v == nil || v.StorageType().String() != "SSD" || v.StorageID() == "" {
		t.Fatalf("vol1 not in service as SSD: %v", v)
	}
	// The new storage shows up in heartbeats with its type.
	deadline := time.After(waitFor)
	for found := false; !found; {
		select {
		case hb := <-nn.heartbeats:
			for _, r := range hb.GetReports() {
				if r.GetStorage().GetStorageType() == hdfs.StorageTypeProto_SSD {
					found = true
				}
			}
		case <-deadline:
			t.Fatal("no heartbeat reports the SSD storage")
		}
	}
	bp, _ := dn.BlockPool(testPool)
	r81, _ := bp.Get(81)
	st = reconf("[SSD]" + vol1)
	if st.GetChanges()[0].ErrorMessage != nil {
		t.Fatalf("status %v", st)
	}
	nn.waitIBR(t, "DELETED 81", func(e ibrSeen) bool {
		return e.block == 81 && e.status == dnpb.ReceivedDeletedBlockInfoProto_DELETED && e.storage == r81.StorageID
	})
	dial(t, dn).writeBlock(82, 1001, nil, data, []int{len(data)}, nil)
	if r, _ := bp.Get(82); r.VolumeDir != vol1 {
		t.Fatalf("new replica on %s", r.VolumeDir)
	}
	// Without a configuration to read again, reconfiguration is refused.
	dn2 := startDN(t, nn)
	c2 := ipc.NewClient(ipc.ClientConfig{Addresses: []string{dn2.IPCAddr().String()}, User: "hdfs", Protocol: ClientDatanodeProtocol})
	defer c2.Close()
	err := c2.Call(ctx, "startReconfiguration", &hdfs.StartReconfigurationRequestProto{}, &hdfs.StartReconfigurationResponseProto{})
	if err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Fatalf("reconfiguration without a configuration: %v", err)
	}
}

// DNA_BALANCERBANDWIDTHUPDATE changes the throttle of balancer moves and
// re-replication; getBalancerBandwidth reads it.
func TestBalancerBandwidthCommand(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dn := startDN(t, nn)
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{dn.IPCAddr().String()}, User: "hdfs", Protocol: ClientDatanodeProtocol})
	defer c.Close()
	get := func() uint64 {
		var resp hdfs.GetBalancerBandwidthResponseProto
		if err := c.Call(context.Background(), "getBalancerBandwidth", &hdfs.GetBalancerBandwidthRequestProto{}, &resp); err != nil {
			t.Fatal(err)
		}
		return resp.GetBandwidth()
	}
	if bw := get(); bw != DefaultBalanceBandwidth {
		t.Fatalf("bandwidth %d, want the default %d", bw, DefaultBalanceBandwidth)
	}
	nn.queue(dn.DatanodeUUID(), &dnpb.DatanodeCommandProto{CmdType: dnpb.DatanodeCommandProto_BalancerBandwidthCommand.Enum(),
		BalancerCmd: &dnpb.BalancerBandwidthCommandProto{Bandwidth: proto.Uint64(12 << 20)}})
	deadline := time.Now().Add(waitFor)
	for get() != 12<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("bandwidth still %d", get())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The directory scanner finds a block file deleted behind the DataNode's
// back and reports the replica DELETED.
func TestDirectoryScanReportsMissingReplica(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	sclk := clock.NewManual(time.Unix(1_800_000_000, 0))
	var logs bytes.Buffer
	var lmu sync.Mutex
	dn := startDNWith(t, nn, func(c *Config) {
		c.DirScan = scanner.DirConfig{Interval: time.Hour}
	}, func(d *Deps) {
		d.ScannerClock = sclk
		d.Logger = slog.New(slog.NewTextHandler(lockedW{&lmu, &logs}, nil))
	})
	data := randomData(3000, 15)
	dial(t, dn).writeBlock(91, 1001, nil, data, []int{len(data)}, nil)
	bp, _ := dn.BlockPool(testPool)
	r, _ := bp.Get(91)
	if err := os.Remove(r.BlockPath); err != nil {
		t.Fatal(err)
	}
	done := make(chan ibrSeen, 1)
	go func() {
		done <- nn.waitIBR(t, "DELETED 91", func(e ibrSeen) bool {
			return e.block == 91 && e.status == dnpb.ReceivedDeletedBlockInfoProto_DELETED
		})
	}()
	defer func() {
		if t.Failed() {
			lmu.Lock()
			t.Logf("log:\n%s", logs.String())
			lmu.Unlock()
		}
	}()
	advanceUntil(t, sclk, 10*time.Minute, "the directory scan", func() bool { return len(done) > 0 })
	lmu.Lock()
	defer lmu.Unlock()
	if !strings.Contains(logs.String(), "missing block files: 1") {
		t.Fatalf("no scan statistics in the log:\n%s", logs.String())
	}
}

type lockedW struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedW) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A DataNode stopped in the middle of a scan resumes it from the saved
// cursor when it starts again, and logs that it does.
func TestScannerResumesAfterRestart(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	sclk := clock.NewManual(time.Unix(1_800_000_000, 0))
	dir := t.TempDir()
	scan := scanner.Config{BytesPerSecond: 128 << 10, Period: time.Hour, CursorSaveInterval: time.Second}
	cfgMod := func(c *Config) { c.DataDirs = []string{dir}; c.Scanner = scan }
	dn := startDNWith(t, nn, cfgMod, func(d *Deps) { d.ScannerClock = sclk })
	data := randomData(128<<10, 16)
	for id := int64(101); id <= 106; id++ {
		dial(t, dn).writeBlock(id, 1001, nil, data, []int{len(data)}, nil)
	}
	stats := func(dn *DataNode) scanner.VolumeStats {
		if st := dn.blockScan.Stats(); len(st) == 1 {
			return st[0]
		}
		return scanner.VolumeStats{}
	}
	advanceUntil(t, sclk, time.Minute, "the second pass", func() bool { return stats(dn).ScansSinceStart == 2 })
	advanceUntil(t, sclk, 200*time.Millisecond, "two replicas verified", func() bool { return stats(dn).BlocksScannedSinceStart >= 2 })
	first := stats(dn).BlocksScannedSinceStart
	if err := dn.Close(); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var lmu sync.Mutex
	dn2 := startDNWith(t, nn, cfgMod, func(d *Deps) {
		d.ScannerClock = sclk
		d.Logger = slog.New(slog.NewTextHandler(lockedW{&lmu, &logs}, nil))
	})
	advanceUntil(t, sclk, 200*time.Millisecond, "the rest of the pass", func() bool {
		st := stats(dn2)
		return st.AtEnd && st.BlocksScannedSinceStart > 0
	})
	if got := stats(dn2).BlocksScannedSinceStart; first+got != 6 {
		t.Fatalf("verified %d before the restart and %d after, want 6 in all", first, got)
	}
	lmu.Lock()
	defer lmu.Unlock()
	if !strings.Contains(logs.String(), "block scanner resuming from cursor") || strings.Contains(logs.String(), "position=end") {
		t.Fatalf("the restart did not resume mid-pass:\n%s", logs.String())
	}
}
