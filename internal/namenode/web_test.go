package namenode_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
	"github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/web/webtest"
)

// TestWebEndpoints: the NameNode's web server answers /isActive, the
// namesystem beans follow the namespace, and the overview page shows the
// cluster's identity.
func TestWebEndpoints(t *testing.T) {
	nn := nntest.New(t)
	base := "http://" + nn.HTTPAddr().String()
	if code, body := webtest.Get(t, base+"/isActive"); code != http.StatusOK || body != "I am Active!" {
		t.Fatalf("/isActive: %d %q", code, body)
	}
	before := webtest.Bean(t, base, "Hadoop:service=NameNode,name=FSNamesystem")
	if before["tag.HAState"] != "active" || before["FilesTotal"] != float64(1) || before["NumLiveDataNodes"] != float64(0) {
		t.Fatalf("FSNamesystem before: %v", before)
	}
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{nn.Addr}, User: nn.Config.SuperUser, Protocol: namenode.ClientProtocolName})
	defer c.Close()
	for _, p := range []string{"/a", "/a/b", "/c"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := c.Call(ctx, "mkdirs", &hdfs.MkdirsRequestProto{Src: proto.String(p),
			Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o755)}, CreateParent: proto.Bool(true)}, &hdfs.MkdirsResponseProto{})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Call(context.Background(), "allowSnapshot", &hdfs.AllowSnapshotRequestProto{SnapshotRoot: proto.String("/a/b")}, &hdfs.AllowSnapshotResponseProto{}); err != nil {
		t.Fatal(err)
	}
	after := webtest.Bean(t, base, "Hadoop:service=NameNode,name=FSNamesystem")
	if after["FilesTotal"] != float64(4) {
		t.Errorf("FilesTotal after three mkdirs: %v", after["FilesTotal"])
	}
	if tx, _ := after["LastWrittenTransactionId"].(float64); tx < before["LastWrittenTransactionId"].(float64)+3 {
		t.Errorf("LastWrittenTransactionId %v after %v", tx, before["LastWrittenTransactionId"])
	}
	state := webtest.Bean(t, base, "Hadoop:service=NameNode,name=FSNamesystemState")
	if s := state["FSState"]; s != "Operational" && s != "safeMode" {
		t.Errorf("FSState %v", s)
	}
	info := webtest.Bean(t, base, "Hadoop:service=NameNode,name=NameNodeInfo")
	if info["ClusterId"] != nn.ClusterID() || info["BlockPoolId"] != nn.BlockPoolID() {
		t.Errorf("NameNodeInfo ids %v %v", info["ClusterId"], info["BlockPoolId"])
	}
	var live map[string]any
	if err := json.Unmarshal([]byte(info["LiveNodes"].(string)), &live); err != nil || len(live) != 0 {
		t.Errorf("LiveNodes %q (%v)", info["LiveNodes"], err)
	}
	var dirs map[string]map[string]string
	if err := json.Unmarshal([]byte(info["NameDirStatuses"].(string)), &dirs); err != nil || len(dirs["active"]) != 1 {
		t.Errorf("NameDirStatuses %q (%v)", info["NameDirStatuses"], err)
	}
	rpc := webtest.Bean(t, base, "Hadoop:service=NameNode,name=RpcActivityForPort*")
	if n, _ := rpc["NumOpenConnections"].(float64); n < 1 {
		t.Errorf("RpcActivity with a client connected: %v", rpc)
	}
	code, page := webtest.Get(t, base+"/dfshealth.html")
	if code != http.StatusOK {
		t.Fatalf("/dfshealth.html: %d", code)
	}
	for _, s := range []string{nn.ClusterID(), nn.BlockPoolID(), "4 files and directories",
		`<a href="/datanodes.html">Datanodes</a>`, `<a href="/dfshealth.html" class="current">Overview</a>`} {
		if !strings.Contains(page, s) {
			t.Errorf("overview page lacks %q", s)
		}
	}
	tabs := map[string][]string{
		"/datanodes.html":      {"Live DataNodes", "No live DataNodes", "Dead DataNodes", "Decommissioning", "In maintenance"},
		"/volumefailures.html": {"There are no reported volume failures."},
		"/snapshots.html":      {"Snapshottable directories: 1", "<td>/a/b</td><td>0</td><td>65536</td>", "<td>drwxr-xr-x</td>"},
		"/startup.html":        {"Loading fsimage", "Loading edits", "Saving checkpoint", "Safe mode", "100% COMPLETE", "Percent Complete: "},
	}
	for path, want := range tabs {
		code, page := webtest.Get(t, base+path)
		if code != http.StatusOK {
			t.Errorf("%s: %d", path, code)
		}
		for _, s := range want {
			if !strings.Contains(page, s) {
				t.Errorf("%s lacks %q", path, s)
			}
		}
	}
	// Start-up progress: the loading phases are over; the image phase
	// counted the image's inodes (the root at least).
	code, body := webtest.Get(t, base+"/startupProgress")
	var prog struct {
		PercentComplete float64
		Phases          []struct {
			Name, Status string
			Steps        []struct{ Count, Total int64 }
		}
	}
	if err := json.Unmarshal([]byte(body), &prog); code != http.StatusOK || err != nil || len(prog.Phases) != 4 {
		t.Fatalf("/startupProgress: %d %v %s", code, err, body)
	}
	for i, name := range []string{"LoadingFsImage", "LoadingEdits", "SavingCheckpoint", "SafeMode"} {
		if prog.Phases[i].Name != name || i < 3 && prog.Phases[i].Status != "COMPLETE" {
			t.Errorf("phase %d: %+v", i, prog.Phases[i])
		}
	}
	if c := prog.Phases[0].Steps[0].Count; c < 1 {
		t.Errorf("image phase counted %d inodes", c)
	}
	sp := webtest.Bean(t, base, "Hadoop:service=NameNode,name=StartupProgress")
	for _, k := range []string{"ElapsedTime", "PercentComplete", "LoadingFsImageCount", "LoadingEditsElapsedTime", "SafeModeTotal", "SavingCheckpointPercentComplete"} {
		if _, ok := sp[k]; !ok {
			t.Errorf("StartupProgress bean lacks %s: %v", k, sp)
		}
	}
	if code, _ := webtest.Get(t, base+"/"); code != http.StatusOK {
		t.Errorf("/: %d", code)
	}
	if code, body := webtest.Get(t, base+"/webhdfs/v1/?op=LISTSTATUS"); code != http.StatusOK ||
		!strings.Contains(body, `{"FileStatuses":{"FileStatus":[`) {
		t.Errorf("WebHDFS: %d %s", code, body)
	}
}

// TestVolumeFailuresPage: a DataNode whose heartbeat reports failed volumes
// is listed on the Datanode Volume Failures tab until a heartbeat says none.
func TestVolumeFailuresPage(t *testing.T) {
	nn := nntest.New(t)
	base := "http://" + nn.HTTPAddr().String()
	d := newFakeDN(t, nn.NameNode)
	d.register()
	beat := func(failed ...string) {
		t.Helper()
		req := &datanode.HeartbeatRequestProto{Registration: d.reg(), XmitsInProgress: proto.Uint32(0), XceiverCount: proto.Uint32(0),
			FailedVolumes: proto.Uint32(uint32(len(failed)))}
		if len(failed) > 0 {
			req.VolumeFailureSummary = &datanode.VolumeFailureSummaryProto{FailedStorageLocations: failed,
				LastVolumeFailureDate:      proto.Uint64(uint64(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).UnixMilli())),
				EstimatedCapacityLostTotal: proto.Uint64(3 << 30)}
		}
		if err := d.c.c.Call(context.Background(), "sendHeartbeat", req, &datanode.HeartbeatResponseProto{}); err != nil {
			t.Fatal(err)
		}
	}
	beat("/data/2", "/data/3")
	_, page := webtest.Get(t, base+"/volumefailures.html")
	for _, s := range []string{"/data/2, /data/3", "<td>3 GB</td>", "Tue, 01 Dec 2026 10:00:00 UTC", `<a href="http://127.0.0.1:2/">127.0.0.1:2</a>`} {
		if !strings.Contains(page, s) {
			t.Errorf("volume failures page lacks %q:\n%s", s, page)
		}
	}
	beat()
	if _, page := webtest.Get(t, base+"/volumefailures.html"); !strings.Contains(page, "There are no reported volume failures.") {
		t.Errorf("after a heartbeat without failures:\n%s", page)
	}
}
