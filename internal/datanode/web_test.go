package datanode

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/web/webtest"
)

// getJMX fetches one bean from dn's /jmx and returns its attributes.
func getJMX(t *testing.T, dn *DataNode, qry string) map[string]any {
	t.Helper()
	return webtest.Bean(t, "http://"+dn.HTTPAddr().String(), qry)
}

func TestWebActivityAndStatusPage(t *testing.T) {
	nn := newFakeNN(t, "CID-web")
	dn := startDN(t, nn)
	data := randomData(200_000, 7)
	const id, gs = 1073741900, 1001
	c := dial(t, dn)
	for _, a := range c.writeBlock(id, gs, nil, data, []int{200_000}, nil) {
		if !a.Success() {
			t.Fatalf("ack %+v", a)
		}
	}
	r := dial(t, dn)
	if got := r.readBlock(id, gs, 0, int64(len(data))); len(got) != len(data) {
		t.Fatalf("read %d bytes", len(got))
	}
	if err := datatransfer.WriteDelimited(r.conn, &hdfs.ClientReadStatusProto{Status: hdfs.Status_CHECKSUM_OK.Enum()}); err != nil {
		t.Fatal(err)
	}

	// The counters are updated by the xceivers after their replies went
	// out: poll until they show both ops (bounded).
	var act map[string]any
	deadline := time.Now().Add(waitFor)
	for {
		act = getJMX(t, dn, "Hadoop:service=DataNode,name=DataNodeActivity-*")
		if act["BlocksVerified"] == float64(1) && act["ReadBlockOpNumOps"] == float64(1) && act["WriteBlockOpNumOps"] == float64(1) ||
			time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	want := map[string]float64{
		"BytesWritten": float64(len(data)), "BlocksWritten": 1, "BytesRead": float64(len(data)), "BlocksRead": 1,
		"BlocksVerified": 1, "WritesFromLocalClient": 1, "ReadsFromLocalClient": 1, "WritesFromRemoteClient": 0,
		"WriteBlockOpNumOps": 1, "ReadBlockOpNumOps": 1, "BlockVerificationFailures": 0,
	}
	for k, v := range want {
		if act[k] != v {
			t.Errorf("DataNodeActivity %s = %v, want %v", k, act[k], v)
		}
	}
	if hb, _ := act["HeartbeatsNumOps"].(float64); hb < 1 {
		t.Errorf("HeartbeatsNumOps = %v", act["HeartbeatsNumOps"])
	}

	info := getJMX(t, dn, "Hadoop:service=DataNode,name=DataNodeInfo")
	if info["ClusterId"] != "CID-web" || info["DatanodeHostname"] != "localhost" {
		t.Errorf("DataNodeInfo %v", info)
	}
	var vols map[string]map[string]any
	if err := json.Unmarshal([]byte(info["VolumeInfo"].(string)), &vols); err != nil {
		t.Fatalf("VolumeInfo is not JSON: %v", err)
	}
	if len(vols) != 1 {
		t.Fatalf("VolumeInfo %v", vols)
	}
	for _, v := range vols {
		if v["numBlocks"] != float64(1) {
			t.Errorf("volume %v", v)
		}
	}
	var actors []map[string]string
	if err := json.Unmarshal([]byte(info["BPServiceActorInfo"].(string)), &actors); err != nil || len(actors) != 1 ||
		actors[0]["ActorState"] != "RUNNING" || actors[0]["BlockPoolID"] != testPool {
		t.Errorf("BPServiceActorInfo %v (%v)", actors, err)
	}
	ds := getJMX(t, dn, "Hadoop:service=DataNode,name=FSDatasetState")
	if c, _ := ds["Capacity"].(float64); c <= 0 {
		t.Errorf("FSDatasetState %v", ds)
	}

	code, page := webtest.Get(t, "http://"+dn.HTTPAddr().String()+"/datanode.html")
	if code != http.StatusOK {
		t.Fatalf("/datanode.html: status %d", code)
	}
	for _, s := range []string{dn.DatanodeUUID(), testPool, "RUNNING", dn.XferAddr().String()} {
		if !strings.Contains(page, s) {
			t.Errorf("status page lacks %q", s)
		}
	}
}

func TestRegistrationCarriesWebPort(t *testing.T) {
	nn := newFakeNN(t, "CID-web")
	dn := startDN(t, nn)
	if got := dn.infoPort(); got == 0 || got != tcpPort(dn.HTTPAddr()) {
		t.Fatalf("info port %d, web server on %v", got, dn.HTTPAddr())
	}
}

func TestWebPortInUse(t *testing.T) {
	nn := newFakeNN(t, "CID-web")
	dn := startDN(t, nn)
	cfg := testConfig(nn.addr, t.TempDir())
	cfg.HTTPAddress = dn.HTTPAddr().String()
	_, err := Start(context.Background(), cfg, Deps{Logger: testLogger(t)})
	if err == nil || !strings.Contains(err.Error(), "dfs.datanode.http.address") {
		t.Fatalf("second DataNode on the same web port: %v", err)
	}
}
