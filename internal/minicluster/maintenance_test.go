package minicluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/hosts"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// TestMaintenanceJSONHosts drives the JSON hosts file
// (CombinedHostFileManager): a node put IN_MAINTENANCE for an hour enters
// it, goes down without any block being re-replicated (its replicas are
// kept, and the files still read), and a DataNode the file does not list is
// refused at registration with DisallowedDatanodeException.
func TestMaintenanceJSONHosts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	hostsFile := filepath.Join(dir, "dfs.hosts.json")
	// Every node of the cluster is listed by address, with any port.
	listed := `[{"hostName": "127.0.0.11"}, {"hostName": "127.0.0.12"}, {"hostName": "127.0.0.13"}, {"hostName": "127.0.0.14"}]`
	if err := os.WriteFile(hostsFile, []byte(listed), 0o644); err != nil {
		t.Fatal(err)
	}
	kv := append(append([]conf.KeyValue{}, fastAdmin...),
		conf.KeyValue{Key: conf.DFSHosts, Value: hostsFile},
		conf.KeyValue{Key: conf.DFSNameNodeHostsProviderClassname, Value: hosts.CombinedHostFileManager},
		// Dead after 2 × 200 ms + 10 × 100 ms.
		conf.KeyValue{Key: conf.DFSHeartbeatInterval, Value: "100ms"},
		conf.KeyValue{Key: conf.DFSNameNodeHeartbeatRecheckInterval, Value: "200"},
	)
	c, err := Start(ctx, Options{Dir: filepath.Join(dir, "cluster"), DataNodes: 4, Conf: kv})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if dnHost(0) != "127.0.0.11" {
		t.Skip("the DataNodes cannot have addresses of their own here")
	}
	fsys, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	files := writeFiles(t, fsys, 4, 1<<20+1000)
	admin := ipc.NewClient(ipc.ClientConfig{Addresses: []string{c.NameNodeAddr()}, User: c.NameNode().SuperUser(),
		Protocol: "org.apache.hadoop.hdfs.protocol.ClientProtocol"})
	defer admin.Close()

	victim := c.DataNodes()[1]
	expiry := time.Now().Add(time.Hour).UnixMilli()
	json := strings.Replace(listed, `{"hostName": "127.0.0.12"}`,
		fmt.Sprintf(`{"hostName": "127.0.0.12", "adminState": "IN_MAINTENANCE", "maintenanceExpireTimeInMS": %d}`, expiry), 1)
	if err := os.WriteFile(hostsFile, []byte(json), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := admin.Call(ctx, "refreshNodes", &hdfs.RefreshNodesRequestProto{}, &hdfs.RefreshNodesResponseProto{}); err != nil {
		t.Fatal(err)
	}
	addr := victim.XferAddr().String()
	waitFor(t, 30*time.Second, "the node in maintenance", func() bool {
		_, ok := nodeStates(t, admin, hdfs.DatanodeReportTypeProto_IN_MAINTENANCE)[addr]
		return ok
	})
	// It goes down for its maintenance.
	if err := c.StopDataNode(1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the node declared dead", func() bool {
		_, dead := nodeStates(t, admin, hdfs.DatanodeReportTypeProto_DEAD)[addr]
		return dead
	})
	// Three redundancy passes later nothing is low in redundancy: its
	// replicas count against the replication, not as live ones. (Nothing
	// happening has no event to wait for: the test watches the passes.)
	time.Sleep(600 * time.Millisecond)
	var st hdfs.GetFsStatsResponseProto
	if err := admin.Call(ctx, "getFsStats", &hdfs.GetFsStatusRequestProto{}, &st); err != nil {
		t.Fatal(err)
	}
	if st.GetUnderReplicated() != 0 || st.GetMissingBlocks() != 0 {
		t.Fatalf("under-replicated %d, missing %d while a node is down for maintenance", st.GetUnderReplicated(), st.GetMissingBlocks())
	}
	if s := nodeStates(t, admin, hdfs.DatanodeReportTypeProto_IN_MAINTENANCE)[addr]; s != hdfs.DatanodeInfoProto_IN_MAINTENANCE {
		t.Fatalf("dead node in maintenance reported %v", s)
	}
	for name, want := range files {
		r, err := fsys.Open(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s during maintenance: %v", name, err)
		}
	}

	// A DataNode the hosts file does not list may not register.
	if err := c.StartDataNode(ctx, 4); err != nil {
		t.Fatal(err)
	}
	stranger := c.DataNodes()[4]
	select {
	case <-stranger.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("an unlisted DataNode is still running")
	}
	if err := stranger.Err(); err == nil || !strings.Contains(err.Error(), "DisallowedDatanodeException") ||
		!strings.Contains(err.Error(), "not in the include-list") {
		t.Fatalf("unlisted DataNode stopped with %v", err)
	}
}
