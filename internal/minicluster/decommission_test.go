package minicluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// fastAdmin are test-sized periods for the admin paths: heartbeats,
// redundancy work and the admin monitor every 200 ms.
var fastAdmin = []conf.KeyValue{
	{Key: conf.DFSHeartbeatInterval, Value: "200ms"},
	{Key: conf.DFSNameNodeRedundancyInterval, Value: "200ms"},
	{Key: conf.DFSNameNodeDecommissionInterval, Value: "200ms"},
	{Key: conf.DFSBlockSize, Value: "1m"},
}

// writeFiles writes n files of size bytes with replication 3 and returns
// their contents by name.
func writeFiles(t *testing.T, fsys *client.FileSystem, n, size int) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	files := map[string][]byte{}
	rnd := rand.NewChaCha8([32]byte{7})
	for i := range n {
		name := fmt.Sprintf("/data/f%d", i)
		data := make([]byte, size)
		rnd.Read(data)
		w, err := fsys.CreateFile(ctx, name, client.CreateOptions{Replication: 3, CreateParent: true, Perm: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	return files
}

// nodeStates asks the NameNode for the admin state of every DataNode, by
// transfer address.
func nodeStates(t *testing.T, nn *ipc.Client, kind hdfs.DatanodeReportTypeProto) map[string]hdfs.DatanodeInfoProto_AdminState {
	t.Helper()
	var rep hdfs.GetDatanodeReportResponseProto
	if err := nn.Call(context.Background(), "getDatanodeReport", &hdfs.GetDatanodeReportRequestProto{Type: kind.Enum()}, &rep); err != nil {
		t.Fatal(err)
	}
	out := map[string]hdfs.DatanodeInfoProto_AdminState{}
	for _, d := range rep.GetDi() {
		out[fmt.Sprintf("%s:%d", d.GetId().GetIpAddr(), d.GetId().GetXferPort())] = d.GetAdminState()
	}
	return out
}

// TestDecommission takes one DataNode of four out of service through the
// exclude file and refreshNodes, as an operator does, while a reader reads
// every file over and over: every read succeeds, the node passes through
// DECOMMISSION_INPROGRESS (listed by the DECOMMISSIONING report) to
// DECOMMISSIONED, and once it is marked every block has three replicas on
// the three other nodes; /jmx counts it.
func TestDecommission(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	exclude := filepath.Join(dir, "dfs.exclude")
	if err := os.WriteFile(exclude, []byte("# nodes to take out of service\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Start(ctx, Options{Dir: filepath.Join(dir, "cluster"), DataNodes: 4,
		Conf: append([]conf.KeyValue{{Key: conf.DFSHostsExclude, Value: exclude}}, fastAdmin...)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fsys, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	files := writeFiles(t, fsys, 6, 1<<20+300_000) // two blocks each
	admin := ipc.NewClient(ipc.ClientConfig{Addresses: []string{c.NameNodeAddr()}, User: c.NameNode().SuperUser(),
		Protocol: "org.apache.hadoop.hdfs.protocol.ClientProtocol"})
	defer admin.Close()

	// The node holding the most replicas goes.
	holds := map[string]int{}
	for name, data := range files {
		locs, err := fsys.BlockLocations(ctx, name, 0, int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range locs {
			for _, h := range l.Hosts {
				holds[h]++
			}
		}
	}
	victim := ""
	for h, n := range holds {
		if victim == "" || n > holds[victim] {
			victim = h
		}
	}

	// A reader reads every file while the node is decommissioned.
	var reads, failures atomic.Int64
	var firstErr atomic.Pointer[error]
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			for name, want := range files {
				select {
				case <-stop:
					return
				default:
				}
				r, err := fsys.Open(ctx, name)
				var got []byte
				if err == nil {
					got, err = io.ReadAll(r)
					r.Close()
				}
				if err == nil && !bytes.Equal(got, want) {
					err = fmt.Errorf("%s: read %d bytes that differ from the %d written", name, len(got), len(want))
				}
				if err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, &err)
					continue
				}
				reads.Add(1)
			}
		}
	}()

	if err := os.WriteFile(exclude, []byte(victim+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := admin.Call(ctx, "refreshNodes", &hdfs.RefreshNodesRequestProto{}, &hdfs.RefreshNodesResponseProto{}); err != nil {
		t.Fatal(err)
	}
	sawInProgress := false
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, ok := nodeStates(t, admin, hdfs.DatanodeReportTypeProto_ALL)[victim]
		if !ok {
			t.Fatalf("%s missing from the report", victim)
		}
		if st == hdfs.DatanodeInfoProto_DECOMMISSIONED {
			break
		}
		if st == hdfs.DatanodeInfoProto_DECOMMISSION_INPROGRESS {
			if _, listed := nodeStates(t, admin, hdfs.DatanodeReportTypeProto_DECOMMISSIONING)[victim]; listed {
				sawInProgress = true
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still %v after a minute", victim, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Marked DECOMMISSIONED: every block already has three replicas on
	// the other nodes, and the victim's copy is still there to read.
	for name, data := range files {
		locs, err := fsys.BlockLocations(ctx, name, 0, int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range locs {
			others := 0
			for _, h := range l.Hosts {
				if h != victim {
					others++
				}
			}
			if others < 3 {
				t.Fatalf("%s block at %d: locations %v, fewer than 3 off %s once it is decommissioned", name, l.Offset, l.Hosts, victim)
			}
		}
	}
	close(stop)
	wg.Wait()
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d reads failed during decommissioning, first: %v", n, *firstErr.Load())
	}
	if reads.Load() == 0 {
		t.Fatal("no read completed during decommissioning")
	}
	if !sawInProgress {
		t.Log("the node went to DECOMMISSIONED before a report showed it in progress")
	}
	if n := nodeStates(t, admin, hdfs.DatanodeReportTypeProto_DECOMMISSIONING); len(n) != 0 {
		t.Fatalf("still decommissioning: %v", n)
	}
	// /jmx counts it among the decommissioned live nodes.
	resp, err := http.Get("http://" + c.NameNode().HTTPAddr().String() + "/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var beans struct{ Beans []map[string]any }
	if err := json.NewDecoder(resp.Body).Decode(&beans); err != nil || len(beans.Beans) != 1 {
		t.Fatalf("jmx: %v %v", err, beans)
	}
	if got := beans.Beans[0]["NumDecomLiveDataNodes"]; got != float64(1) {
		t.Fatalf("NumDecomLiveDataNodes = %v, want 1 (%v)", got, beans.Beans[0])
	}
	t.Logf("%d reads during decommissioning; %s decommissioned", reads.Load(), victim)
}
