package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/web/webtest"
)

// TestWebUIAndJMX: NameNode and DataNode processes serve their web ports;
// the NameNode's beans list the DataNodes with the web addresses they
// registered, and the DataNodes' activity beans count the bytes a put
// wrote through the pipeline.
func TestWebUIAndJMX(t *testing.T) {
	parallel(t)
	port := freePort(t, "127.0.0.1")
	nnWeb := fmt.Sprintf("http://127.0.0.1:%d", port)
	c := startCluster(t, 2, map[string]string{
		"dfs.namenode.http-address": fmt.Sprintf("127.0.0.1:%d", port),
		"dfs.replication":           "2",
	})
	const size = 3<<20 + 5
	local, _ := randomFile(t, size, 4)
	c.dfs(t, "-put", local, "/f")

	if code, body := webtest.Get(t, nnWeb+"/isActive"); code != http.StatusOK || body != "I am Active!" {
		t.Fatalf("/isActive: %d %q", code, body)
	}
	st := webtest.Bean(t, nnWeb, "Hadoop:service=NameNode,name=FSNamesystemState")
	if st["NumLiveDataNodes"] != float64(2) || st["FilesTotal"] != float64(2) {
		t.Fatalf("FSNamesystemState %v", st)
	}
	info := webtest.Bean(t, nnWeb, "Hadoop:service=NameNode,name=NameNodeInfo")
	var live map[string]struct {
		InfoAddr string `json:"infoAddr"`
	}
	if err := json.Unmarshal([]byte(info["LiveNodes"].(string)), &live); err != nil || len(live) != 2 {
		t.Fatalf("LiveNodes %v (%v)", info["LiveNodes"], err)
	}
	// The DataNodes count what they stored; the last one's counter may
	// trail its final ack by a moment.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var written float64
		for _, n := range live {
			act := webtest.Bean(t, "http://"+n.InfoAddr, "Hadoop:service=DataNode,name=DataNodeActivity-*")
			w, _ := act["BytesWritten"].(float64)
			written += w
		}
		if written == 2*size {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the DataNodes' BytesWritten add up to %v, want %d", written, 2*size)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, body := webtest.Get(t, nnWeb+"/dfshealth.html"); !strings.Contains(body, "2 files and directories") {
		t.Errorf("overview page:\n%s", body)
	}
}
