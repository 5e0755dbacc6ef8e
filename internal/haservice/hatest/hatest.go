// Package hatest has a scriptable haservice.Service for tests of the
// callers of HAServiceProtocol (haadmin, failover controllers), and a
// helper that serves one on a real ipc.Server on 127.0.0.1. A Fake is safe
// for concurrent use.
package hatest

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/haservice"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
)

// Call is one call a Fake received.
type Call struct {
	Method string
	Source haservice.RequestSource // for the transitions
}

// Fake is a service whose answers a test sets. Transitions change State
// unless their error is set; Hook, when set, runs first on every call.
type Fake struct {
	mu struct {
		sync.Mutex
		status     haservice.Status
		health     error
		toActive   error
		toStandby  error
		toObserver error
		calls      []Call
	}
	// Hook runs before every call with the method name; an error it
	// returns is the call's answer.
	Hook func(ctx context.Context, method string) error
}

// NewFake returns a healthy service in state st, ready to become active.
func NewFake(st haservice.State) *Fake {
	f := &Fake{}
	f.mu.status = haservice.Status{State: st, ReadyToBecomeActive: true}
	return f
}

// SetStatus sets what GetServiceStatus answers (and the state).
func (f *Fake) SetStatus(s haservice.Status) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.status = s
}

// SetHealth sets MonitorHealth's answer.
func (f *Fake) SetHealth(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.health = err
}

// FailTransitions makes the transitions answer these errors (nil: succeed).
func (f *Fake) FailTransitions(toActive, toStandby, toObserver error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.toActive, f.mu.toStandby, f.mu.toObserver = toActive, toStandby, toObserver
}

// State is the current state.
func (f *Fake) State() haservice.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.status.State
}

// Calls returns the calls received so far, in order.
func (f *Fake) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.mu.calls...)
}

// Methods returns the names of the calls received so far, in order.
func (f *Fake) Methods() []string {
	var out []string
	for _, c := range f.Calls() {
		out = append(out, c.Method)
	}
	return out
}

func (f *Fake) record(ctx context.Context, method string, src haservice.RequestSource) error {
	f.mu.Lock()
	f.mu.calls = append(f.mu.calls, Call{Method: method, Source: src})
	f.mu.Unlock()
	if f.Hook != nil {
		return f.Hook(ctx, method)
	}
	return nil
}

// MonitorHealth implements haservice.Service.
func (f *Fake) MonitorHealth(ctx context.Context) error {
	if err := f.record(ctx, "monitorHealth", 0); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.health
}

func (f *Fake) transition(ctx context.Context, method string, src haservice.RequestSource, to haservice.State, fail *error) error {
	if err := f.record(ctx, method, src); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if *fail != nil {
		return *fail
	}
	f.mu.status.State = to
	return nil
}

// TransitionToActive implements haservice.Service.
func (f *Fake) TransitionToActive(ctx context.Context, src haservice.RequestSource) error {
	return f.transition(ctx, "transitionToActive", src, haservice.Active, &f.mu.toActive)
}

// TransitionToStandby implements haservice.Service.
func (f *Fake) TransitionToStandby(ctx context.Context, src haservice.RequestSource) error {
	return f.transition(ctx, "transitionToStandby", src, haservice.Standby, &f.mu.toStandby)
}

// TransitionToObserver implements haservice.Service.
func (f *Fake) TransitionToObserver(ctx context.Context, src haservice.RequestSource) error {
	return f.transition(ctx, "transitionToObserver", src, haservice.Observer, &f.mu.toObserver)
}

// GetServiceStatus implements haservice.Service.
func (f *Fake) GetServiceStatus(ctx context.Context) (haservice.Status, error) {
	if err := f.record(ctx, "getServiceStatus", 0); err != nil {
		return haservice.Status{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.status, nil
}

// Serve serves svc with haservice.Register on a new ipc.Server listening
// on 127.0.0.1:0 and returns its address. The server is closed when the
// test ends.
func Serve(t testing.TB, svc haservice.Service) string {
	t.Helper()
	srv := ipc.NewServer(ipc.ServerConfig{Handlers: 2})
	haservice.Register(srv, svc)
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
