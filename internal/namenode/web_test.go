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
	for _, s := range []string{nn.ClusterID(), nn.BlockPoolID(), "4 files and directories", "No live DataNodes"} {
		if !strings.Contains(page, s) {
			t.Errorf("overview page lacks %q", s)
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
