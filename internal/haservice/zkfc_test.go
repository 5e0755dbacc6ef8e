package haservice_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/haservice"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// recordingZKFC remembers the cede requests and answers gracefulFailover
// with err.
type recordingZKFC struct {
	mu    sync.Mutex
	cedes []int32
	err   error
}

func (z *recordingZKFC) CedeActive(_ context.Context, millis int32) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.cedes = append(z.cedes, millis)
	return nil
}

func (z *recordingZKFC) GracefulFailover(context.Context) error { return z.err }

func serveZKFC(t *testing.T, z haservice.ZKFC) string {
	t.Helper()
	srv := ipc.NewServer(ipc.ServerConfig{Handlers: 2})
	haservice.RegisterZKFC(srv, z)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-served; !errors.Is(err, ipc.ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
	return l.Addr().String()
}

// TestZKFCProtocolRoundTrip: cedeActive carries the period (and -1, which
// Java sends as the unsigned 4294967295, arrives as -1); a gracefulFailover
// refused with ServiceFailedException reaches the caller with its class
// and message.
func TestZKFCProtocolRoundTrip(t *testing.T) {
	z := &recordingZKFC{}
	c := haservice.NewZKFCClient(haservice.ClientConfig{Address: serveZKFC(t, z), User: "hdfs", Timeout: 5 * time.Second})
	defer c.Close()
	ctx := context.Background()
	if err := c.CedeActive(ctx, 10000); err != nil {
		t.Fatal(err)
	}
	if err := c.CedeActive(ctx, -1); err != nil {
		t.Fatal(err)
	}
	if err := c.GracefulFailover(ctx); err != nil {
		t.Fatal(err)
	}
	z.mu.Lock()
	cedes := append([]int32(nil), z.cedes...)
	z.mu.Unlock()
	if len(cedes) != 2 || cedes[0] != 10000 || cedes[1] != -1 {
		t.Fatalf("cedes %v", cedes)
	}
	z.err = haservice.ServiceFailed("No other node is currently active.")
	err := c.GracefulFailover(ctx)
	var re *remoteerr.Error
	if !errors.As(err, &re) || re.Class != remoteerr.ClassServiceFailed || re.Message != "No other node is currently active." {
		t.Fatalf("gracefulFailover: %v", err)
	}
}

// TestTargetZKFCAddress: the controller of a NameNode listens on its host
// at dfs.ha.zkfc.port, which may be set per NameNode; Matches compares an
// address written by another process with the target's.
func TestTargetZKFCAddress(t *testing.T) {
	c := conf.Defaults().With(
		conf.KeyValue{Key: "dfs.nameservices", Value: "ns1"},
		conf.KeyValue{Key: "dfs.ha.namenodes.ns1", Value: "nn1,nn2"},
		conf.KeyValue{Key: "dfs.namenode.rpc-address.ns1.nn1", Value: "127.0.0.1:8020"},
		conf.KeyValue{Key: "dfs.namenode.rpc-address.ns1.nn2", Value: "127.0.0.1:8021"},
		conf.KeyValue{Key: "dfs.ha.zkfc.port.ns1.nn2", Value: "8119"},
	)
	ctx := context.Background()
	t1, err := haservice.ResolveNameNode(ctx, c, "ns1", "nn1", nil)
	if err != nil {
		t.Fatal(err)
	}
	t2, err := haservice.ResolveNameNode(ctx, c, "ns1", "nn2", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := t1.ZKFCAddress(); got != "127.0.0.1:8019" {
		t.Errorf("nn1's controller at %s, want Hadoop's default port 8019", got)
	}
	if got := t2.ZKFCAddress(); got != "127.0.0.1:8119" {
		t.Errorf("nn2's controller at %s", got)
	}
	if !t1.Matches(ctx, nil, "127.0.0.1", 8020) || !t1.Matches(ctx, nil, t1.Host, 8020) {
		t.Errorf("nn1 does not match its own address (host %q)", t1.Host)
	}
	if t1.Matches(ctx, nil, "127.0.0.1", 8021) || t1.Matches(ctx, nil, "127.0.0.2", 8020) {
		t.Error("nn1 matches another address")
	}
	bad := c.With(conf.KeyValue{Key: "dfs.ha.zkfc.port", Value: "70000"})
	if _, err := haservice.ResolveNameNode(ctx, bad, "ns1", "nn1", nil); !errors.Is(err, haservice.ErrInvalidConfig) {
		t.Errorf("dfs.ha.zkfc.port=70000: %v", err)
	}
}
