package minicluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	stock "github.com/colinmarc/hdfs/v2"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// startHACluster is an HA cluster over a shared edits directory: the HA
// logic these tests check does not depend on the medium, and the quorum
// journal's own tests (qjm_test.go, package qjournal/server) cover it.
func startHACluster(t *testing.T, extra ...conf.KeyValue) *Cluster {
	t.Helper()
	return startHAClusterOn(t, true, extra...)
}

// startHAClusterOn is startHACluster over a shared directory or, with
// sharedDir false, three JournalNodes.
func startHAClusterOn(t *testing.T, sharedDir bool, extra ...conf.KeyValue) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("writes data through a cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kv := append([]conf.KeyValue{
		{Key: conf.DFSBlockSize, Value: "1048576"},
		{Key: conf.DFSNameNodeMinBlockSize, Value: "1024"},
		{Key: conf.DFSHeartbeatInterval, Value: "1"},
		{Key: conf.DFSHATailEditsPeriod, Value: "100ms"},
		{Key: conf.DFSHALogRollPeriod, Value: "300ms"},
	}, extra...)
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: 3, HA: true, SharedEditsDir: sharedDir, Conf: kv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func dumpOf(t *testing.T, nn *namenode.NameNode) string {
	t.Helper()
	var b bytes.Buffer
	if err := nn.DumpNamespace(&b); err != nil {
		t.Fatal(err)
	}
	b.WriteString("-- locations\n")
	if err := nn.DumpBlockLocations(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// waitStandbyCaughtUp waits until the standby's state — namespace, block
// map, leases and every block's locations — equals the active's.
func waitStandbyCaughtUp(t *testing.T, active, standby *namenode.NameNode) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		a, s := dumpOf(t, active), dumpOf(t, standby)
		if a == s {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby did not catch up with the active:\n%s", diffLines(a, s))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHAFailoverKeepsBlocks: a standby that tails the JournalNodes and
// hears the DataNodes' reports has the active's whole state, locations
// included; after a failover the new active serves every file at once,
// with no new block report, and takes writes; the old active, now
// standby, refuses them.
func TestHAFailoverKeepsBlocks(t *testing.T) {
	c := startHAClusterOn(t, false)
	ctx := context.Background()
	nns := c.NameNodes()
	if nns[0].HAState() != ha.Active || nns[1].HAState() != ha.Standby {
		t.Fatalf("states %v %v, want active standby", nns[0].HAState(), nns[1].HAState())
	}
	fsys, err := client.New(client.Options{Addresses: c.NameNodeAddrs(), User: nns[0].SuperUser(), BlockSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	want := map[string][]byte{}
	for i := range 8 {
		name := fmt.Sprintf("/f%d", i)
		data := bytes.Repeat([]byte{byte(i)}, 100<<10*(i+1))
		if err := fsys.WriteFile(ctx, name, data, false); err != nil {
			t.Fatal(err)
		}
		want[name] = data
	}
	open, err := fsys.Create(ctx, "/open")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open.Write(bytes.Repeat([]byte("x"), 300<<10)); err != nil {
		t.Fatal(err)
	}
	if err := open.Flush(); err != nil {
		t.Fatal(err)
	}
	waitStandbyCaughtUp(t, nns[0], nns[1])

	if err := c.Failover(ctx, 0, 1); err != nil {
		t.Fatal(err)
	}
	for name, data := range want {
		got, err := fsys.ReadFile(ctx, name)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("after failover, %s: %d bytes, %v (want %d)", name, len(got), err, len(data))
		}
	}
	if _, err := open.Write([]byte("after failover")); err != nil {
		t.Fatalf("the writer went on after the failover: %v", err)
	}
	if err := open.Close(); err != nil {
		t.Fatalf("closing the file open across the failover: %v", err)
	}
	if err := fsys.WriteFile(ctx, "/new", []byte("written to nn2"), false); err != nil {
		t.Fatalf("writing to the new active: %v", err)
	}
	waitStandbyCaughtUp(t, nns[1], nns[0])
}

// TestStandbyCheckpoints: the standby saves an image at the transaction
// threshold and uploads it to the active, which stores it with retention
// applied; the active restarted loads it.
func TestStandbyCheckpoints(t *testing.T) {
	c := startHACluster(t,
		conf.KeyValue{Key: conf.DFSNameNodeCheckpointTxns, Value: "50"},
		conf.KeyValue{Key: conf.DFSNameNodeCheckpointCheck, Value: "100ms"},
		conf.KeyValue{Key: conf.DFSNameNodeNumCheckpointsRetained, Value: "2"},
	)
	ctx := context.Background()
	nns := c.NameNodes()
	fsys, err := client.New(client.Options{Addresses: c.NameNodeAddrs(), User: nns[0].SuperUser()})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	activeDir := filepath.Join(c.opts.Dir, "nn1", "name")
	images := func() []int64 {
		imgs, err := fsimage.List(vfs.Default, activeDir)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, im := range imgs {
			ids = append(ids, im.TxID)
		}
		return ids
	}
	deadline := time.Now().Add(60 * time.Second)
	for step := 0; ; step++ {
		if err := fsys.MkdirAll(ctx, fmt.Sprintf("/d/%d", step), 0o755); err != nil {
			t.Fatal(err)
		}
		if ids := images(); len(ids) >= 2 && ids[len(ids)-1] >= 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the active holds images %v after %d mkdirs: no checkpoint came from the standby", images(), step)
		}
	}
	// Retention: at most 2 images, and the oldest image's edits purged.
	// The active applies it right after it stores an upload, so a listing
	// may fall between the two.
	waitFor(t, 10*time.Second, "retention of the uploaded images", func() bool { return len(images()) <= 2 })
	newestBefore := images()[len(images())-1]
	before := dumpOf(t, nns[0])
	if err := c.RestartNameNode(ctx); err != nil {
		t.Fatal(err)
	}
	restarted := c.NameNodes()[0]
	if err := restarted.TransitionToActive(ctx); err != nil {
		t.Fatal(err)
	}
	// The standby may upload once more while the active restarts.
	if got := restarted.Loaded(); got.ImageTxID < newestBefore || got.Replayed > got.LastTxID-got.ImageTxID {
		t.Errorf("the restarted active loaded %+v; want an uploaded image (%d or newer) and only the edits after it", got, newestBefore)
	}
	after := dumpOf(t, restarted)
	// The restarted NameNode has not heard block reports yet; compare the
	// namespace, which the image gives it.
	cut := func(s string) string { return s[:strings.Index(s, "-- locations")] }
	if cut(before) != cut(after) {
		t.Fatalf("the active restarted from the uploaded image differs:\n%s", diffLines(cut(before), cut(after)))
	}
}

// TestStandbyAnswersAsStandby: the standby refuses the stock client's
// writes with StandbyException, and its web server says what it is:
// /isActive 405 "I am not Active!" (200 on the active) and NameNodeStatus
// State "standby" on /jmx.
func TestStandbyAnswersAsStandby(t *testing.T) {
	c := startHACluster(t)
	nns := c.NameNodes()
	cl, err := stock.NewClient(stock.ClientOptions{Addresses: []string{c.NameNodeAddrs()[1]}, User: nns[1].SuperUser()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	err = cl.Mkdir("/refused", 0o755)
	if err == nil || !strings.Contains(err.Error(), "StandbyException") && !strings.Contains(err.Error(), "not supported in state standby") {
		t.Fatalf("the stock client's mkdir on the standby: %v", err)
	}
	for i, want := range []struct {
		code  int
		body  string
		state string
	}{{200, "I am Active!", "active"}, {405, "I am not Active!", "standby"}} {
		base := "http://" + nns[i].HTTPAddr().String()
		resp, err := http.Get(base + "/isActive")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want.code || string(b) != want.body {
			t.Errorf("nn%d /isActive: %d %q, want %d %q", i+1, resp.StatusCode, b, want.code, want.body)
		}
		resp, err = http.Get(base + "/jmx?qry=Hadoop:service=NameNode,name=NameNodeStatus")
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), `"State" : "`+want.state+`"`) && !strings.Contains(string(b), `"State": "`+want.state+`"`) {
			t.Errorf("nn%d NameNodeStatus: %s, want State %s", i+1, b, want.state)
		}
	}
}

// TestStandbyStateEqualsActive: after a random workload of every mutating
// operation, the standby — which applied the shared edits through the one
// apply path and heard the same DataNode reports — holds exactly the
// active's state: namespace with its counters (inode id, generation stamp,
// block id), block map with lengths, stamps and states, leases, and every
// block's locations; made active, it reads every file without waiting for
// a block report.
func TestStandbyStateEqualsActive(t *testing.T) {
	c := startHACluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nns := c.NameNodes()
	super := nns[0].SuperUser()
	fsys, err := client.New(client.Options{Addresses: c.NameNodeAddrs(), User: super, BlockSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	abandoner, err := client.New(client.Options{Addresses: c.NameNodeAddrs(), User: super, BlockSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	randomWorkload(t, ctx, fsys, abandoner, seed, 20)
	waitStandbyCaughtUp(t, nns[0], nns[1])

	if err := c.Failover(ctx, 0, 1); err != nil {
		t.Fatal(err)
	}
	entries, err := fsys.ReadDir(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), "open") {
			continue
		}
		if _, err := fsys.ReadFile(ctx, "/w/"+e.Name()); err != nil {
			t.Errorf("after failover, reading %s: %v", e.Name(), err)
		}
	}
}
