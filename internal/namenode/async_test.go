package namenode_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// TestAsyncEditLogging holds every fsync of the edits dir at a gate while
// more writers than handlers write. With asynchronous logging the handlers
// are not held by the fsync: a read is answered meanwhile although every
// handler has taken a write; no write is answered before the gate opens
// (none is durable); once it opens, every write is answered and fewer
// fsyncs than writes covered them.
func TestAsyncEditLogging(t *testing.T) {
	const handlers, writers = 2, 12
	cfg := nntest.Config(t, 1, conf.KeyValue{Key: conf.DFSNameNodeHandlerCount, Value: fmt.Sprint(handlers)})
	if !cfg.AsyncEditLogging {
		t.Fatalf("%s is not on by default", conf.DFSNameNodeEditsAsyncLogging)
	}
	nntest.Format(t, cfg)
	nn, g := startWithSyncGate(t, cfg)
	addr := nn.RPCAddr().String()
	reader := rpcClient(t, addr, cfg.SuperUser, namenode.ClientProtocolName)
	if err := mkdir(t, reader, "/w", 0o755); err != nil {
		t.Fatal(err)
	}
	before := nn.EditLogStats()

	g.held.Store(true)
	var answered atomic.Int64
	done := make(chan error, writers)
	for i := range writers {
		c := rpcClient(t, addr, cfg.SuperUser, namenode.ClientProtocolName)
		go func() {
			err := mkdir(t, c, fmt.Sprintf("/w/d%d", i), 0o755)
			answered.Add(1)
			done <- err
		}()
	}
	// Every write is applied (visible) while its fsync is held, and the
	// read that sees it is answered: no handler waits for the disk.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var resp hdfs.GetListingResponseProto
		if err := call(t, reader, "getListing", &hdfs.GetListingRequestProto{Src: proto.String("/w"), StartAfter: []byte{}, NeedLocation: proto.Bool(false)}, &resp); err != nil {
			t.Fatal(err)
		}
		if len(resp.GetDirList().GetPartialListing()) == writers {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d writes applied with %d handlers while the fsync is held", len(resp.GetDirList().GetPartialListing()), writers, handlers)
		}
		time.Sleep(time.Millisecond)
	}
	if g.syncs.Load() == 0 {
		t.Fatal("no fsync of the edits was held: the gate is not on the log's path")
	}
	if n := answered.Load(); n != 0 {
		t.Fatalf("%d writes answered before their fsync", n)
	}
	g.open()
	for range writers {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	after := nn.EditLogStats()
	if flushes, txns := after.Flushes-before.Flushes, after.SyncedTxID-before.SyncedTxID; flushes >= txns {
		t.Errorf("%d flushes for %d transactions: the held writes were not batched", flushes, txns)
	}
}

// syncGate holds every fsync of a NameNode's in-progress edits segment,
// once held is set, until the gate opens.
type syncGate struct {
	held   atomic.Bool
	gate   chan struct{}
	syncs  atomic.Int64 // fsyncs that were held
	opened bool
}

// startWithSyncGate starts a NameNode of cfg (formatted) whose edits go
// through a syncGate; the gate opens, if the test did not open it, and the
// NameNode stops when the test ends.
func startWithSyncGate(t *testing.T, cfg namenode.Config) (*namenode.NameNode, *syncGate) {
	t.Helper()
	g := &syncGate{gate: make(chan struct{})}
	fsys := vfs.WithErrors(vfs.Default, func(o vfs.Op, path string) error {
		if o == vfs.OpSync && g.held.Load() && strings.HasPrefix(path, cfg.EditsDirs[0]) && strings.Contains(path, "edits_inprogress_") {
			g.syncs.Add(1)
			<-g.gate
		}
		return nil
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nn, err := namenode.Start(context.Background(), cfg, namenode.Deps{FS: fsys, Listener: l, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.open()
		nn.Close()
	})
	return nn, g
}

// open lets the held fsyncs, and every later one, go.
func (g *syncGate) open() {
	if !g.opened {
		g.opened = true
		close(g.gate)
	}
}
