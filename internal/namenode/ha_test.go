package namenode_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// haPair is two NameNodes of nameservice ns1 over a shared edits dir, in
// one process.
type haPair struct {
	t      *testing.T
	root   string
	addrs  [2]string
	lns    [2]net.Listener
	cfgs   [2]namenode.Config
	nns    [2]*namenode.NameNode
	shared string
	// fs is each NameNode's file system (vfs.Default unless a test
	// injects faults).
	fs [2]vfs.FS
	// extra is configuration on top of config's, for both.
	extra []conf.KeyValue
}

func newHAPair(t *testing.T, extra ...conf.KeyValue) *haPair {
	t.Helper()
	p := &haPair{t: t, root: t.TempDir(), fs: [2]vfs.FS{vfs.Default, vfs.Default}, extra: extra}
	for i := range p.lns {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p.lns[i], p.addrs[i] = l, l.Addr().String()
	}
	p.shared = filepath.Join(p.root, "shared")
	for i := range p.cfgs {
		p.cfgs[i] = p.config(i)
	}
	if err := namenode.Format(context.Background(), p.cfgs[0], namenode.Deps{Logger: quietLogger()}, namenode.FormatOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	// The second NameNode starts from a copy of the first one's image, as
	// -bootstrapStandby gives it.
	if out, err := exec.Command("cp", "-a", p.cfgs[0].NameDirs[0], p.cfgs[1].NameDirs[0]).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	os.Remove(filepath.Join(p.cfgs[1].NameDirs[0], "in_use.lock"))
	for i := range p.nns {
		p.start(i)
	}
	return p
}

func (p *haPair) config(i int) namenode.Config {
	p.t.Helper()
	kv := []conf.KeyValue{
		{Key: conf.DFSNameservices, Value: "ns1"},
		{Key: "dfs.ha.namenodes.ns1", Value: "nn1,nn2"},
		{Key: "dfs.namenode.rpc-address.ns1.nn1", Value: p.addrs[0]},
		{Key: "dfs.namenode.rpc-address.ns1.nn2", Value: p.addrs[1]},
		{Key: "dfs.namenode.http-address.ns1.nn1", Value: "127.0.0.1:0"},
		{Key: "dfs.namenode.http-address.ns1.nn2", Value: "127.0.0.1:0"},
		{Key: conf.DFSHANameNodeID, Value: fmt.Sprintf("nn%d", i+1)},
		{Key: conf.DFSNameNodeSharedEditsDir, Value: "file://" + p.shared},
		{Key: conf.DFSNameNodeNameDir, Value: filepath.Join(p.root, fmt.Sprintf("name%d", i+1))},
		{Key: conf.DFSHATailEditsPeriod, Value: "50ms"},
		{Key: conf.DFSHALogRollPeriod, Value: "200ms"},
		{Key: conf.FSDefaultFS, Value: "hdfs://ns1"},
	}
	cfg, err := namenode.ConfigFrom(conf.Defaults().With(append(kv, p.extra...)...))
	if err != nil {
		p.t.Fatal(err)
	}
	return cfg
}

func (p *haPair) start(i int) {
	p.t.Helper()
	if p.lns[i] == nil {
		l, err := net.Listen("tcp", p.addrs[i])
		if err != nil {
			p.t.Fatal(err)
		}
		p.lns[i] = l
	}
	nn, err := namenode.Start(context.Background(), p.cfgs[i], namenode.Deps{FS: p.fs[i], Listener: p.lns[i], Logger: quietLogger()})
	if err != nil {
		p.t.Fatalf("starting nn%d: %v", i+1, err)
	}
	p.lns[i] = nil
	p.nns[i] = nn
	p.t.Cleanup(func() { nn.Close() })
}

func (p *haPair) client(i int) *ipc.Client {
	return rpcClient(p.t, p.addrs[i], p.cfgs[i].SuperUser, namenode.ClientProtocolName)
}

func (p *haPair) dump(i int) string {
	var b bytes.Buffer
	if err := p.nns[i].DumpNamespace(&b); err != nil {
		p.t.Fatal(err)
	}
	return b.String()
}

// waitSame waits until the standby has tailed everything the active wrote
// (the active rolls its log when asked, so finalized-only tailing catches
// up within a few log-roll periods).
func (p *haPair) waitSame(active, standby int) {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		a, s := p.dump(active), p.dump(standby)
		if a == s {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the standby's state differs from the active's:\nactive:\n%s\nstandby:\n%s", a, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHATransitions: both NameNodes start as standbys and refuse writes
// with StandbyException; the one made active serves them; the standby
// tails its edits until its state (namespace, block map, leases) equals
// the active's; after a failover the new active has everything and the
// old one, now standby, refuses writes.
func TestHATransitions(t *testing.T) {
	p := newHAPair(t)
	ctx := context.Background()
	for i := range p.nns {
		if s := p.nns[i].HAState(); s != ha.Standby {
			t.Fatalf("nn%d started in state %v, want standby", i+1, s)
		}
		err := mkdir(t, p.client(i), "/x", 0o755)
		var re *remoteerr.Error
		if !errors.As(err, &re) || re.Class != remoteerr.ClassStandby || !strings.Contains(re.Message, "Operation category WRITE is not supported in state standby") {
			t.Fatalf("mkdirs on standby nn%d: %v", i+1, err)
		}
		var resp hdfs.GetFileInfoResponseProto
		if err := call(t, p.client(i), "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/")}, &resp); !remoteerr.IsStandby(err) {
			t.Fatalf("a read on standby nn%d (stale reads off): %v", i+1, err)
		}
	}
	if err := p.nns[0].TransitionToActive(ctx); err != nil {
		t.Fatal(err)
	}
	c := p.client(0)
	for i := range 20 {
		if err := mkdir(t, c, fmt.Sprintf("/d/%d", i), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var cr hdfs.CreateResponseProto
	if err := call(t, c, "create", createReq("/d/open", "DFSClient_writer"), &cr); err != nil {
		t.Fatal(err)
	}
	p.waitSame(0, 1)

	if err := p.nns[0].TransitionToStandby(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.nns[1].TransitionToActive(ctx); err != nil {
		t.Fatal(err)
	}
	c2 := p.client(1)
	var resp hdfs.GetFileInfoResponseProto
	if err := call(t, c2, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/d/19")}, &resp); err != nil || resp.Fs == nil {
		t.Fatalf("the new active lacks /d/19: %v %v", resp.Fs, err)
	}
	if err := mkdir(t, c2, "/after", 0o755); err != nil {
		t.Fatalf("mkdirs on the new active: %v", err)
	}
	if err := mkdir(t, c, "/refused", 0o755); !remoteerr.IsStandby(err) {
		t.Fatalf("mkdirs on the old active, now standby: %v", err)
	}
	p.waitSame(1, 0)
	if !strings.Contains(p.dump(1), `lease "DFSClient_writer"`) {
		t.Errorf("the new active lost the open file's lease:\n%s", p.dump(1))
	}
}

// TestStandbyTailsInProgressFileEdits: with dfs.ha.tail-edits.in-progress
// and no log rolls, the standby catches up by reading the shared dir's
// in-progress segment, round after round (each read going on from where
// the last stopped: editlog's TestTailingResumesInProgress).
func TestStandbyTailsInProgressFileEdits(t *testing.T) {
	p := newHAPair(t, conf.KeyValue{Key: conf.DFSHATailEditsInProgress, Value: "true"},
		conf.KeyValue{Key: conf.DFSHALogRollPeriod, Value: "1h"})
	if err := p.nns[0].TransitionToActive(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := p.client(0)
	for round := range 3 {
		for i := range 10 {
			if err := mkdir(t, c, fmt.Sprintf("/r%d/%d", round, i), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		p.waitSame(0, 1)
	}
}

// TestSharedEditsFailureStopsTheActive: when the shared edits can no longer
// be written, the active answers the write that could not be made durable
// with an error, acknowledges nothing more, and stops; the write is in no
// journal (the shared one is written first), so a restart does not show it.
func TestSharedEditsFailureStopsTheActive(t *testing.T) {
	p := newHAPair(t)
	var broken atomic.Bool
	p.fs[0] = vfs.WithErrors(vfs.Default, func(op vfs.Op, path string) error {
		if broken.Load() && strings.HasPrefix(path, p.shared) && (op == vfs.OpWrite || op == vfs.OpSync) {
			return errors.New("planted: the shared edits are unwritable")
		}
		return nil
	})
	p.nns[0].Close()
	p.start(0)
	ctx := context.Background()
	if err := p.nns[0].TransitionToActive(ctx); err != nil {
		t.Fatal(err)
	}
	c := p.client(0)
	if err := mkdir(t, c, "/before", 0o755); err != nil {
		t.Fatal(err)
	}
	broken.Store(true)
	if err := mkdir(t, c, "/lost", 0o755); err == nil {
		t.Fatal("a write was acknowledged while the shared edits were unwritable")
	}
	select {
	case <-p.nns[0].Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the active did not stop after its shared edits failed")
	}
	broken.Store(false)
	p.start(0)
	if err := p.nns[0].TransitionToActive(ctx); err != nil {
		t.Fatal(err)
	}
	c2 := p.client(0)
	for path, want := range map[string]bool{"/before": true, "/lost": false} {
		var resp hdfs.GetFileInfoResponseProto
		if err := call(t, c2, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(path)}, &resp); err != nil {
			t.Fatal(err)
		}
		if (resp.Fs != nil) != want {
			t.Errorf("after restart, %s exists = %v, want %v", path, resp.Fs != nil, want)
		}
	}
}
