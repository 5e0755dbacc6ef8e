package haservice_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/haservice"
	"github.com/hdfsgo/hdfsgo/internal/haservice/hatest"
)

// fakeConn is a Fake reached without RPC; Close does nothing.
type fakeConn struct{ *hatest.Fake }

func (fakeConn) Close() error { return nil }

// rig is two fake services, nn1 active and nn2 standby, with targets and
// a controller whose shell fencing is recorded.
type rig struct {
	nn1, nn2 *hatest.Fake
	t1, t2   *haservice.Target
	fc       *haservice.FailoverController
	fenced   []string // shell commands run, as "cmd@host"
	fenceOK  bool
	dials    []time.Duration
	logs     bytes.Buffer
}

func newRig(t *testing.T, fencing string) *rig {
	r := &rig{nn1: hatest.NewFake(haservice.Active), nn2: hatest.NewFake(haservice.Standby), fenceOK: true}
	mk := func(host, ip, nn string) *haservice.Target {
		tgt := &haservice.Target{Kind: "NameNode", Addr: host + ":8020", Host: host, IP: ip, Port: 8020,
			Nameservice: "ns1", NameNodeID: nn, FencingConfigured: fencing != ""}
		var err error
		if tgt.Fencing, err = haservice.ParseFenceMethods(fencing); err != nil {
			t.Fatal(err)
		}
		return tgt
	}
	r.t1, r.t2 = mk("nn1.example", "10.0.0.1", "nn1"), mk("nn2.example", "10.0.0.2", "nn2")
	logger := slog.New(slog.NewTextHandler(&r.logs, nil))
	r.fc = &haservice.FailoverController{
		Config: haservice.DefaultConfig(),
		Source: haservice.RequestByUser,
		Dial: func(tgt *haservice.Target, timeout time.Duration, _ int) haservice.Conn {
			r.dials = append(r.dials, timeout)
			if tgt == r.t1 {
				return fakeConn{r.nn1}
			}
			return fakeConn{r.nn2}
		},
		Fencer: &haservice.Fencer{
			Shell: func(_ context.Context, cmd string, env []string) bool {
				host := ""
				for _, kv := range env {
					if v, ok := strings.CutPrefix(kv, "target_host="); ok {
						host = v
					}
				}
				r.fenced = append(r.fenced, cmd+"@"+host)
				return r.fenceOK
			},
			Environ: func() []string { return nil },
			Logger:  logger,
		},
		Logger: logger,
	}
	return r
}

func (r *rig) failover(forceFence, forceActive bool) error {
	return r.fc.Failover(context.Background(), r.t1, r.t2, forceFence, forceActive)
}

func wantFailover(t *testing.T, err error, msg string) {
	t.Helper()
	var fe *haservice.FailoverError
	if !errors.As(err, &fe) || fe.Msg != msg || !errors.Is(err, haservice.ErrFailoverFailed) {
		t.Fatalf("error %v, want failover failure %q", err, msg)
	}
}

func TestFailoverGraceful(t *testing.T) {
	r := newRig(t, "shell(fence-it)")
	if err := r.failover(false, false); err != nil {
		t.Fatal(err)
	}
	if r.nn1.State() != haservice.Standby || r.nn2.State() != haservice.Active {
		t.Fatalf("states after failover: nn1 %v, nn2 %v", r.nn1.State(), r.nn2.State())
	}
	if len(r.fenced) != 0 {
		t.Errorf("fenced %v although the graceful fence worked", r.fenced)
	}
	if got := strings.Join(r.nn2.Methods(), ","); got != "getServiceStatus,monitorHealth,transitionToActive" {
		t.Errorf("nn2 calls %s", got)
	}
	if got := strings.Join(r.nn1.Methods(), ","); got != "transitionToStandby" {
		t.Errorf("nn1 calls %s", got)
	}
	// The new active is reached with its timeout, the old one with the
	// graceful fence's.
	cfg := haservice.DefaultConfig()
	if len(r.dials) != 3 || r.dials[0] != cfg.NewActiveTimeout || r.dials[1] != cfg.GracefulFenceTimeout || r.dials[2] != cfg.NewActiveTimeout {
		t.Errorf("timeouts %v", r.dials)
	}
	if cfg.NewActiveTimeout != 60*time.Second || cfg.GracefulFenceTimeout != 5*time.Second || cfg.CLICheckTimeout != 20*time.Second {
		t.Errorf("defaults %+v", cfg)
	}
}

func TestFailoverFencesWhenGracefulFails(t *testing.T) {
	r := newRig(t, "shell(fence-it)")
	r.nn1.FailTransitions(nil, haservice.ServiceFailed("stuck"), nil)
	if err := r.failover(false, false); err != nil {
		t.Fatal(err)
	}
	if strings.Join(r.fenced, ",") != "fence-it@nn1.example" {
		t.Errorf("fenced %v, want the old active", r.fenced)
	}
	if r.nn2.State() != haservice.Active {
		t.Errorf("nn2 %v", r.nn2.State())
	}
	if !strings.Contains(r.logs.String(), "Unable to gracefully make NameNode at nn1.example/10.0.0.1:8020 standby (stuck)") {
		t.Errorf("log:\n%s", r.logs.String())
	}
}

func TestFailoverForceFence(t *testing.T) {
	r := newRig(t, "shell(fence-it)")
	if err := r.failover(true, false); err != nil {
		t.Fatal(err)
	}
	if len(r.fenced) != 1 {
		t.Errorf("--forcefence fenced %v", r.fenced)
	}
}

func TestFailoverStopsWhenFencingFails(t *testing.T) {
	r := newRig(t, "shell(fence-it)")
	r.nn1.FailTransitions(nil, errors.New("connection refused"), nil)
	r.fenceOK = false
	wantFailover(t, r.failover(false, false), "Unable to fence NameNode at nn1.example/10.0.0.1:8020. Fencing failed.")
	if r.nn2.State() != haservice.Standby {
		t.Fatalf("nn2 became %v although the old active was not fenced", r.nn2.State())
	}
	for _, m := range r.nn2.Methods() {
		if m == "transitionToActive" {
			t.Fatal("transitionToActive was sent to nn2 without fencing nn1")
		}
	}
}

func TestFailoverPreChecks(t *testing.T) {
	for _, tc := range []struct {
		name        string
		setup       func(r *rig)
		forceActive bool
		msg         string
	}{
		{"target active", func(r *rig) { r.nn2.SetStatus(haservice.Status{State: haservice.Active, ReadyToBecomeActive: true}) },
			false, "Can't failover to an active service"},
		{"target observer", func(r *rig) { r.nn2.SetStatus(haservice.Status{State: haservice.Observer}) },
			false, "Can't failover to an observer service"},
		{"not ready", func(r *rig) {
			r.nn2.SetStatus(haservice.Status{State: haservice.Standby, NotReadyReason: "The NameNode is in safemode."})
		}, false, "NameNode at nn2.example/10.0.0.2:8020 is not ready to become active: The NameNode is in safemode."},
		{"unhealthy", func(r *rig) { r.nn2.SetHealth(haservice.HealthCheckFailed("no resources")) },
			false, "Can't failover to an unhealthy service"},
		{"health check breaks", func(r *rig) { r.nn2.SetHealth(errors.New("broken pipe")) },
			false, "Got an IO exception"},
		{"unreachable", func(r *rig) {
			r.nn2.Hook = func(context.Context, string) error { return errors.New("connection refused") }
		}, false, "Unable to get service state for NameNode at nn2.example/10.0.0.2:8020"},
		{"itself", func(r *rig) { r.t2 = r.t1 }, false, "Can't failover a service to itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "shell(fence-it)")
			tc.setup(r)
			wantFailover(t, r.failover(false, tc.forceActive), tc.msg)
			if r.nn1.State() != haservice.Active || len(r.nn1.Methods()) != 0 {
				t.Errorf("the old active was touched: %v, %v", r.nn1.State(), r.nn1.Methods())
			}
		})
	}
}

func TestFailoverForceActiveIgnoresNotReady(t *testing.T) {
	r := newRig(t, "shell(fence-it)")
	r.nn2.SetStatus(haservice.Status{State: haservice.Standby, NotReadyReason: "in safemode"})
	if err := r.failover(false, true); err != nil {
		t.Fatal(err)
	}
	if r.nn2.State() != haservice.Active {
		t.Errorf("nn2 %v", r.nn2.State())
	}
	if !strings.Contains(r.logs.String(), "Service is not ready to become active, but forcing: in safemode") {
		t.Errorf("log:\n%s", r.logs.String())
	}
}

func TestFailoverFailsBack(t *testing.T) {
	r := newRig(t, "shell(fence-it)")
	r.nn2.FailTransitions(haservice.ServiceFailed("cannot catch up"), nil, nil)
	err := r.failover(false, false)
	wantFailover(t, err, "Unable to failover to NameNode at nn2.example/10.0.0.2:8020")
	if !errors.Is(err, haservice.ErrServiceFailed) {
		t.Errorf("the cause is lost: %v", err)
	}
	// Failback: nn2 gracefully fenced and, forced, fenced too; nn1 active
	// again.
	if r.nn1.State() != haservice.Active {
		t.Fatalf("nn1 %v after failback", r.nn1.State())
	}
	if strings.Join(r.fenced, ",") != "fence-it@nn2.example" {
		t.Errorf("fenced %v, want the failed new active", r.fenced)
	}
	if !strings.Contains(r.logs.String(), "Unable to make NameNode at nn2.example/10.0.0.2:8020 active (cannot catch up). Failing back.") {
		t.Errorf("log:\n%s", r.logs.String())
	}
}

func TestFailoverFailbackFails(t *testing.T) {
	r := newRig(t, "shell(fence-it)")
	r.nn2.FailTransitions(errors.New("timed out"), nil, nil)
	r.nn1.FailTransitions(haservice.ServiceFailed("no"), nil, nil)
	wantFailover(t, r.failover(false, false),
		"Unable to failover to NameNode at nn2.example/10.0.0.2:8020. Failback to NameNode at nn1.example/10.0.0.1:8020 failed "+
			"(Unable to failover to NameNode at nn1.example/10.0.0.1:8020)")
}

func TestFailoverNoFailbackAfterFencing(t *testing.T) {
	r := newRig(t, "shell(fence-it)")
	r.nn2.FailTransitions(haservice.ServiceFailed("no"), nil, nil)
	wantFailover(t, r.failover(true, false), "Unable to failover to NameNode at nn2.example/10.0.0.2:8020")
	for _, m := range r.nn1.Methods() {
		if m == "transitionToActive" {
			t.Fatal("a fenced old active was made active again")
		}
	}
}

func TestFailoverRequiresAFencer(t *testing.T) {
	r := newRig(t, "")
	if err := r.failover(false, false); !errors.Is(err, haservice.ErrNoFencer) || err.Error() != "haservice: failover requires a fencer" {
		t.Fatalf("error %v", err)
	}
	if len(r.nn1.Methods())+len(r.nn2.Methods()) != 0 {
		t.Error("a failover without a fencer called the services")
	}
}

// TestFailoverOverRPC runs the whole sequence against real servers.
func TestFailoverOverRPC(t *testing.T) {
	nn1, nn2 := hatest.NewFake(haservice.Active), hatest.NewFake(haservice.Standby)
	nn1.FailTransitions(nil, haservice.ServiceFailed("stuck"), nil)
	var fenced []string
	targets := map[string]*haservice.Target{}
	for name, fake := range map[string]*hatest.Fake{"nn1": nn1, "nn2": nn2} {
		addr := hatest.Serve(t, fake)
		tgt := &haservice.Target{Kind: "NameNode", Addr: addr, Host: "127.0.0.1", IP: "127.0.0.1", NameNodeID: name,
			Fencing: []haservice.FenceMethod{{Kind: haservice.FenceShell, Name: "shell", Arg: "fence", HasArg: true}}, FencingConfigured: true}
		_, port, _ := net.SplitHostPort(addr)
		tgt.Port, _ = strconv.Atoi(port)
		targets[name] = tgt
	}
	cfg := haservice.DefaultConfig()
	cfg.ConnectRetryInterval = time.Millisecond
	fc := &haservice.FailoverController{Config: cfg, Source: haservice.RequestByUser, Dial: haservice.ClientDialer("hdfs", cfg, nil),
		Fencer: &haservice.Fencer{Shell: func(_ context.Context, cmd string, _ []string) bool { fenced = append(fenced, cmd); return true }}}
	if err := fc.Failover(context.Background(), targets["nn1"], targets["nn2"], false, false); err != nil {
		t.Fatal(err)
	}
	if nn2.State() != haservice.Active || len(fenced) != 1 {
		t.Fatalf("nn2 %v, fenced %v", nn2.State(), fenced)
	}
}
