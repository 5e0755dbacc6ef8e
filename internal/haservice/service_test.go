package haservice_test

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hdfsgo/hdfsgo/internal/haservice"
	"github.com/hdfsgo/hdfsgo/internal/haservice/hatest"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newClient(t *testing.T, addr string, timeout time.Duration) *haservice.Client {
	c := haservice.NewClient(haservice.ClientConfig{Address: addr, User: "hdfs", Timeout: timeout, RetryInterval: time.Millisecond})
	t.Cleanup(func() { c.Close() })
	return c
}

func TestClientAndRegisterRoundTrip(t *testing.T) {
	fake := hatest.NewFake(haservice.Standby)
	c := newClient(t, hatest.Serve(t, fake), 5*time.Second)
	ctx := context.Background()

	st, err := c.GetServiceStatus(ctx)
	if err != nil || st != (haservice.Status{State: haservice.Standby, ReadyToBecomeActive: true}) {
		t.Fatalf("status %+v, %v", st, err)
	}
	if err := c.MonitorHealth(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.TransitionToActive(ctx, haservice.RequestByUserForced); err != nil {
		t.Fatal(err)
	}
	if err := c.TransitionToStandby(ctx, haservice.RequestByZKFC); err != nil {
		t.Fatal(err)
	}
	if err := c.TransitionToObserver(ctx, haservice.RequestByUser); err != nil {
		t.Fatal(err)
	}
	if fake.State() != haservice.Observer {
		t.Errorf("state %v after the transitions", fake.State())
	}
	calls := fake.Calls()
	want := []hatest.Call{
		{Method: "getServiceStatus"}, {Method: "monitorHealth"},
		{Method: "transitionToActive", Source: haservice.RequestByUserForced},
		{Method: "transitionToStandby", Source: haservice.RequestByZKFC},
		{Method: "transitionToObserver", Source: haservice.RequestByUser},
	}
	if len(calls) != len(want) {
		t.Fatalf("calls %+v", calls)
	}
	for i := range want {
		if calls[i] != want[i] {
			t.Errorf("call %d: %+v, want %+v", i, calls[i], want[i])
		}
	}

	// Not ready: the reason crosses; STOPPING goes out as INITIALIZING.
	fake.SetStatus(haservice.Status{State: haservice.Stopping, NotReadyReason: "State is stopping"})
	st, err = c.GetServiceStatus(ctx)
	if err != nil || st != (haservice.Status{State: haservice.Initializing, NotReadyReason: "State is stopping"}) {
		t.Fatalf("status %+v, %v", st, err)
	}
	// A ready service's reason is not sent.
	fake.SetStatus(haservice.Status{State: haservice.Active, ReadyToBecomeActive: true, NotReadyReason: "ignored"})
	if st, _ = c.GetServiceStatus(ctx); st.NotReadyReason != "" {
		t.Errorf("a ready service's reason was sent: %+v", st)
	}
}

func TestErrorsCrossWithHadoopClasses(t *testing.T) {
	fake := hatest.NewFake(haservice.Standby)
	c := newClient(t, hatest.Serve(t, fake), 5*time.Second)
	ctx := context.Background()

	fake.SetHealth(haservice.HealthCheckFailed("The NameNode has no resources available"))
	err := c.MonitorHealth(ctx)
	var re *remoteerr.Error
	if !errors.As(err, &re) || re.Class != "org.apache.hadoop.ha.HealthCheckFailedException" ||
		re.Message != "The NameNode has no resources available" || !errors.Is(err, haservice.ErrHealthCheckFailed) {
		t.Errorf("monitorHealth error %v", err)
	}

	fake.FailTransitions(haservice.ServiceFailed("HA for namenode is not enabled"),
		remoteerr.AccessControl("Manual HA control for this NameNode is disallowed, because automatic HA is enabled."),
		errors.New("disk on fire"))
	err = c.TransitionToActive(ctx, haservice.RequestByUser)
	if !errors.As(err, &re) || re.Class != "org.apache.hadoop.ha.ServiceFailedException" || !errors.Is(err, haservice.ErrServiceFailed) {
		t.Errorf("transitionToActive error %v", err)
	}
	err = c.TransitionToStandby(ctx, haservice.RequestByUser)
	if !errors.As(err, &re) || re.Class != remoteerr.ClassAccessControl || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("transitionToStandby error %v", err)
	}
	err = c.TransitionToObserver(ctx, haservice.RequestByUser)
	if !errors.As(err, &re) || re.Class != remoteerr.ClassIOException || re.Message != "disk on fire" {
		t.Errorf("transitionToObserver error %v", err)
	}
}

func TestClientTimeout(t *testing.T) {
	fake := hatest.NewFake(haservice.Standby)
	fake.Hook = func(ctx context.Context, _ string) error {
		<-ctx.Done() // hangs until the client gives up and the server closes
		return ctx.Err()
	}
	c := newClient(t, hatest.Serve(t, fake), 100*time.Millisecond)
	start := time.Now()
	_, err := c.GetServiceStatus(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want a deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the call took %v with a 100 ms timeout", d)
	}
}

func TestCheckStateChange(t *testing.T) {
	remote := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 9), Port: 40000}
	for _, tc := range []struct {
		src    haservice.RequestSource
		auto   bool
		forced bool
		err    string
	}{
		{haservice.RequestByUser, false, false, ""},
		{haservice.RequestByUser, true, false, "Manual HA control for this NameNode is disallowed, because automatic HA is enabled."},
		{haservice.RequestByUserForced, false, false, ""},
		{haservice.RequestByUserForced, true, true, ""},
		{haservice.RequestByZKFC, true, false, ""},
		{haservice.RequestByZKFC, false, false, "Request from ZK failover controller at 10.0.0.9 denied since automatic HA is not enabled"},
	} {
		forced, err := haservice.CheckStateChange(tc.src, tc.auto, remote)
		msg := ""
		if err != nil {
			msg = haservice.Message(err)
			if !errors.Is(err, fs.ErrPermission) {
				t.Errorf("%v auto=%v: %v is not an AccessControlException", tc.src, tc.auto, err)
			}
		}
		if forced != tc.forced || msg != tc.err {
			t.Errorf("%v auto=%v: (%v, %q), want (%v, %q)", tc.src, tc.auto, forced, msg, tc.forced, tc.err)
		}
	}
}

func TestStateStrings(t *testing.T) {
	for s, want := range map[haservice.State]string{
		haservice.Initializing: "initializing", haservice.Active: "active", haservice.Standby: "standby",
		haservice.Observer: "observer", haservice.Stopping: "stopping",
	} {
		if s.String() != want {
			t.Errorf("%d: %q, want %q", int(s), s.String(), want)
		}
	}
}
