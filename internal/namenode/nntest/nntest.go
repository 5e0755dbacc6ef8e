// Package nntest starts real NameNodes for tests: formatted temp dirs, RPC on
// 127.0.0.1 port 0, stopped at the end of the test. It is a test-support
// package; production code never imports it.
package nntest

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
)

// NameNode is a running NameNode and where it keeps its state.
type NameNode struct {
	*namenode.NameNode
	Config namenode.Config
	Addr   string
}

// Config returns a NameNode configuration over fresh dirs under t.TempDir():
// nameDirs name dirs (also the edits dirs) and Hadoop's defaults otherwise.
func Config(t testing.TB, nameDirs int, overrides ...conf.KeyValue) namenode.Config {
	t.Helper()
	root := t.TempDir()
	var dirs string
	for i := 0; i < nameDirs; i++ {
		if i > 0 {
			dirs += ","
		}
		dirs += filepath.Join(root, "name"+string(rune('1'+i)))
	}
	kvs := append([]conf.KeyValue{
		{Key: conf.DFSNameNodeNameDir, Value: dirs},
		{Key: conf.DFSNameNodeRPCAddress, Value: "127.0.0.1:0"},
		{Key: conf.DFSNameNodeHTTPAddress, Value: "127.0.0.1:0"},
	}, overrides...)
	cfg, err := namenode.ConfigFrom(conf.Defaults().With(kvs...))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Format formats cfg's dirs.
func Format(t testing.TB, cfg namenode.Config) {
	t.Helper()
	if err := namenode.Format(context.Background(), cfg, namenode.Deps{}, namenode.FormatOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
}

// Start starts a NameNode on cfg's (formatted) dirs, listening on a fresh
// loopback port, and stops it when the test ends.
func Start(t testing.TB, cfg namenode.Config) *NameNode {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nn, err := namenode.Start(context.Background(), cfg, namenode.Deps{Listener: l})
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { nn.Close() })
	return &NameNode{NameNode: nn, Config: cfg, Addr: nn.RPCAddr().String()}
}

// New formats fresh dirs and starts a NameNode on them.
func New(t testing.TB, overrides ...conf.KeyValue) *NameNode {
	t.Helper()
	cfg := Config(t, 1, overrides...)
	Format(t, cfg)
	return Start(t, cfg)
}
