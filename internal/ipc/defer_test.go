package ipc

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// heldCalls is a handler that holds every reply and hands the release to
// the test, with a response it changes after returning.
type heldCalls struct {
	releases chan func(error)
}

func (h *heldCalls) handle(ctx context.Context, req *hdfs.GetLinkTargetRequestProto) (*hdfs.GetLinkTargetResponseProto, error) {
	release, ok := DeferReply(ctx)
	if !ok {
		return nil, errors.New("DeferReply refused inside a handler")
	}
	resp := &hdfs.GetLinkTargetResponseProto{TargetPath: proto.String(req.GetPath())}
	h.releases <- func(err error) {
		resp.TargetPath = proto.String("changed after the handler returned")
		release(err)
	}
	if req.GetPath() == "/fail" {
		return nil, remoteerr.New(remoteerr.ClassFileNotFound, "no such file: %s", req.GetPath())
	}
	return resp, nil
}

func isClass(err error, class string) bool {
	var re *remoteerr.Error
	return errors.As(err, &re) && re.Class == class
}

func waitHeld(t *testing.T, srv *Server, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for srv.Stats().Held != n {
		if time.Now().After(deadline) {
			t.Fatalf("held calls = %d, want %d", srv.Stats().Held, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestDeferReply: a held reply goes out only on release, from another
// goroutine, with the contents fixed when the handler returned; the handler
// goroutine is free meanwhile (one handler serves the next call); release
// with an error replaces the reply; a handler error is kept as it was.
func TestDeferReply(t *testing.T) {
	srv, svc, addr := newTestServer(t, ServerConfig{Handlers: 1})
	h := &heldCalls{releases: make(chan func(error), 10)}
	Handle(svc, "getLinkTarget", h.handle)
	c := newTestClient(t, addr)
	call := func(src string) <-chan error {
		done := make(chan error, 1)
		go func() {
			var r hdfs.GetLinkTargetResponseProto
			err := c.Call(t.Context(), "getLinkTarget", &hdfs.GetLinkTargetRequestProto{Path: proto.String(src)}, &r)
			if err == nil && r.GetTargetPath() != src {
				err = errors.New("reply changed after the handler returned: " + r.GetTargetPath())
			}
			done <- err
		}()
		return done
	}
	a, b, f, x := call("/a"), call("/b"), call("/fail"), call("/x")
	rel := map[int]func(error){}
	for i := range 4 {
		rel[i] = <-h.releases // one handler took all four: none waits in it
	}
	waitHeld(t, srv, 4)
	select {
	case err := <-a:
		t.Fatalf("answered before release: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	// Released from other goroutines; each call keeps its own answer.
	for i := range 4 {
		go rel[i](nil)
	}
	for name, ch := range map[string]<-chan error{"/a": a, "/b": b, "/x": x} {
		if err := <-ch; err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := <-f; !isClass(err, remoteerr.ClassFileNotFound) {
		t.Errorf("/fail: %v, want the handler's FileNotFoundException", err)
	}
	waitHeld(t, srv, 0)

	// release(err) replaces the reply.
	e := call("/e")
	releaseE := <-h.releases
	waitHeld(t, srv, 1)
	releaseE(remoteerr.New(remoteerr.ClassIOException, "the edit log failed"))
	if err := <-e; err == nil || !isClass(err, remoteerr.ClassIOException) {
		t.Errorf("/e: %v, want the release's IOException", err)
	}
	// The release queues the reply before it ends the call, so the client
	// may read the reply a moment before the count drops.
	deadline := time.Now().Add(10 * time.Second)
	for srv.Stats().InFlight != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if st := srv.Stats(); st.InFlight != 0 {
		t.Errorf("in flight after every release: %d", st.InFlight)
	}

	// Outside a handler nothing is held.
	if _, ok := DeferReply(t.Context()); ok {
		t.Error("DeferReply outside a handler reported ok")
	}
}

// TestDeferReplyConnectionDies: a connection closed while a reply is held
// stays counted until the release, which then drops the reply; Shutdown
// waits for held calls and sends their replies.
func TestDeferReplyConnectionDies(t *testing.T) {
	srv, svc, addr := newTestServer(t, ServerConfig{Handlers: 2})
	h := &heldCalls{releases: make(chan func(error), 10)}
	Handle(svc, "getLinkTarget", h.handle)
	c := NewClient(ClientConfig{Addresses: []string{addr}, User: "u", Protocol: clientProtocol, MaxRetries: -1})
	done := make(chan error, 1)
	go func() {
		var r hdfs.GetLinkTargetResponseProto
		done <- c.Call(t.Context(), "getLinkTarget", &hdfs.GetLinkTargetRequestProto{Path: proto.String("/gone")}, &r)
	}()
	release := <-h.releases
	waitHeld(t, srv, 1)
	c.Close()
	<-done
	time.Sleep(10 * time.Millisecond)
	if st := srv.Stats(); st.InFlight != 1 || st.Open != 1 {
		t.Errorf("after the client left: in flight %d, open %d; want 1 and 1 until the release", st.InFlight, st.Open)
	}
	release(nil)
	deadline := time.Now().Add(10 * time.Second)
	for srv.Stats().Open != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if st := srv.Stats(); st.InFlight != 0 || st.Open != 0 || st.Held != 0 {
		t.Errorf("after the release: in flight %d, open %d, held %d", st.InFlight, st.Open, st.Held)
	}

	// Shutdown with a held call: its reply goes out first.
	c2 := newTestClient(t, addr)
	answered := make(chan error, 1)
	go func() {
		var r hdfs.GetLinkTargetResponseProto
		answered <- c2.Call(t.Context(), "getLinkTarget", &hdfs.GetLinkTargetRequestProto{Path: proto.String("/s")}, &r)
	}()
	release = <-h.releases
	waitHeld(t, srv, 1)
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned with a reply held: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	release(nil)
	if err := <-answered; err != nil {
		t.Errorf("held call during Shutdown: %v", err)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}
