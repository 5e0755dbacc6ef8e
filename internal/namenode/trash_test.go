package namenode

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
)

// TestTrashEmptier: with fs.trash.interval 60 on the NameNode, the
// emptier (driven by a manual clock) turns every user's .Trash/Current
// into a checkpoint at the next multiple of the interval, and deletes a
// checkpoint once it is older than the interval.
func TestTrashEmptier(t *testing.T) {
	cfg, err := ConfigFrom(conf.Defaults().With(
		conf.KeyValue{Key: conf.DFSNameNodeNameDir, Value: filepath.Join(t.TempDir(), "name")},
		conf.KeyValue{Key: conf.DFSNameNodeRPCAddress, Value: "127.0.0.1:0"},
		conf.KeyValue{Key: conf.DFSNameNodeHTTPAddress, Value: "127.0.0.1:0"},
		conf.KeyValue{Key: conf.FSTrashInterval, Value: "60"},
	))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := Format(ctx, cfg, Deps{}, FormatOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 10, 30, 0, 0, time.Local)
	clk := clock.NewManual(start)
	nn, err := Start(ctx, cfg, Deps{Listener: l, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nn.Close() })
	perm := op.Perm{User: "alice", Group: "g", Mode: 0o700}
	for _, p := range []string{"/user", "/user/alice", "/user/alice/.Trash", "/user/alice/.Trash/Current", "/user/alice/.Trash/Current/d", "/user/bob"} {
		if err := nn.ns.mutate(ctx, func(tr *namespace.Tree, now int64) ([]op.Op, error) {
			return []op.Op{&op.Mkdir{InodeID: tr.NextInodeID(), Path: p, Mtime: now, Perm: perm}}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	trash := func() string {
		var names []string
		nn.ns.read(func(tr *namespace.Tree) {
			kids, _, _ := tr.List(namespace.Caller{Super: true}, "/user/alice/.Trash", nil, 0)
			for _, k := range kids {
				names = append(names, string(k.Name))
			}
		})
		return strings.Join(names, " ")
	}
	// waitFor advances the clock a minute at a time until the trash
	// reads want (bounded in steps and in time).
	waitFor := func(want string, steps int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for i := 0; i < steps && time.Now().Before(deadline); i++ {
			if trash() == want {
				return
			}
			clk.Advance(time.Minute)
			time.Sleep(5 * time.Millisecond)
		}
		for time.Now().Before(deadline) && trash() != want {
			time.Sleep(5 * time.Millisecond)
		}
		if got := trash(); got != want {
			t.Fatalf("trash of alice = %q, want %q", got, want)
		}
	}
	waitFor("261201110000", 40)
	// The checkpoint is an hour old at 12:00; it goes at the first pass after.
	waitFor("", 140)
	if !strings.HasPrefix(clk.Now().Format("15"), "13") {
		t.Fatalf("the checkpoint went at %v", clk.Now())
	}
}
