package web

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ratelog"
)

// Defaults of Limits. Those with a Hadoop key are Hadoop's (for
// hadoop.http.max.threads, the size of the Jetty pool Hadoop falls back
// to); the others are ours.
const (
	DefaultIdleTimeout         = 60 * time.Second
	DefaultMaxRequests         = 250
	DefaultMaxHeaderBytes      = 65536
	DefaultMaxConnections      = 4096
	DefaultHeaderTimeout       = 10 * time.Second
	DefaultMaxEndpointRequests = 64
	DefaultMaxStacks           = 2
	DefaultMaxStacksBytes      = 8 << 20
)

// Limits bound what HTTP clients can make a Server hold: connections,
// requests at once, and the time a connection may make no progress. Zero
// fields take the defaults.
type Limits struct {
	// IdleTimeout is hadoop.http.idle_timeout.ms (60 s), Jetty's idle
	// timeout: a keep-alive connection that sends no new request for this
	// long is closed, and so is a connection to which a response cannot be
	// written, or from which a request body does not arrive, for this long.
	// The built-in endpoints (/jmx, /conf, /stacks, WebHDFS), whose answers
	// are small, must be written completely within it.
	IdleTimeout time.Duration
	// MaxRequests is hadoop.http.max.threads: requests served at once
	// (Hadoop's -1 means Jetty's pool of 250, which is the default here).
	// A request over it is answered 503 at once.
	MaxRequests int
	// MaxHeaderBytes is hadoop.http.max.request.header.size (65536): a
	// request with larger headers is answered 431.
	MaxHeaderBytes int
	// MaxConnections (no Hadoop key; 4096): a connection accepted while
	// this many are open is answered 503 and closed at once.
	MaxConnections int
	// HeaderTimeout (no Hadoop key; 10 s): a request's line and headers
	// must arrive within it, or the connection is closed.
	HeaderTimeout time.Duration
	// MaxEndpointRequests (no Hadoop key; 64): requests served at once by
	// one endpoint (one registered pattern), so that one busy page cannot
	// take every request slot; over it, 503 at once.
	MaxEndpointRequests int
	// MaxStacks (no Hadoop key; 2): /stacks dumps produced at once. A dump
	// stops the world and grows with the goroutine count; over it, 503.
	MaxStacks int
	// MaxStacksBytes (no Hadoop key; 8 MiB): a /stacks dump longer than
	// this is cut there, with a last line saying so.
	MaxStacksBytes int
}

// LimitsFrom reads the Limits that have Hadoop keys from c; the others
// keep their defaults. Errors name the key.
func LimitsFrom(c *conf.Conf) (Limits, error) {
	var l Limits
	var errs []error
	idle, err := c.Duration(conf.HadoopHTTPIdleTimeout)
	if err != nil {
		errs = append(errs, err)
	}
	l.IdleTimeout = idle
	threads, err := c.Int32(conf.HadoopHTTPMaxThreads)
	if err != nil {
		errs = append(errs, err)
	}
	switch {
	case err != nil || threads == -1: // -1: Hadoop's "Jetty's default"
	case threads < 1:
		errs = append(errs, fmt.Errorf("web: %s: %d must be -1 (the default) or at least 1", conf.HadoopHTTPMaxThreads, threads))
	default:
		l.MaxRequests = int(threads)
	}
	hdr, err := c.Int32(conf.HadoopHTTPMaxRequestHeaderSize)
	if err != nil {
		errs = append(errs, err)
	}
	l.MaxHeaderBytes = int(hdr)
	if len(errs) > 0 {
		return Limits{}, errors.Join(errs...)
	}
	return l, l.Validate()
}

// Validate rejects limits the server cannot work with, naming the key
// where there is one.
func (l Limits) Validate() error {
	var errs []error
	bad := func(name string, v any, why string) {
		errs = append(errs, fmt.Errorf("web: %s: %v %s", name, v, why))
	}
	if l.IdleTimeout < 0 {
		bad(conf.HadoopHTTPIdleTimeout, l.IdleTimeout, "must not be negative")
	}
	if l.MaxRequests < 0 {
		bad(conf.HadoopHTTPMaxThreads, l.MaxRequests, "must be -1 (the default) or at least 1")
	}
	if l.MaxHeaderBytes < 0 {
		bad(conf.HadoopHTTPMaxRequestHeaderSize, l.MaxHeaderBytes, "must not be negative")
	}
	for name, v := range map[string]int{"connection limit": l.MaxConnections, "requests per endpoint": l.MaxEndpointRequests,
		"concurrent /stacks": l.MaxStacks, "/stacks size": l.MaxStacksBytes} {
		if v < 0 {
			bad(name, v, "must not be negative")
		}
	}
	if l.HeaderTimeout < 0 {
		bad("header timeout", l.HeaderTimeout, "must not be negative")
	}
	return errors.Join(errs...)
}

func (l Limits) withDefaults() Limits {
	setInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.HeaderTimeout <= 0 {
		l.HeaderTimeout = DefaultHeaderTimeout
	}
	setInt(&l.MaxRequests, DefaultMaxRequests)
	setInt(&l.MaxHeaderBytes, DefaultMaxHeaderBytes)
	setInt(&l.MaxConnections, DefaultMaxConnections)
	setInt(&l.MaxEndpointRequests, DefaultMaxEndpointRequests)
	setInt(&l.MaxStacks, DefaultMaxStacks)
	setInt(&l.MaxStacksBytes, DefaultMaxStacksBytes)
	return l
}

// gate bounds the requests served at once by what it guards.
type gate struct {
	what  string // named in the 503 answer: "requests", "/stacks"
	slots chan struct{}
}

func newGate(what string, n int) *gate { return &gate{what: what, slots: make(chan struct{}, n)} }

// enter takes a slot if one is free.
func (g *gate) enter() bool {
	select {
	case g.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

func (g *gate) leave() { <-g.slots }

// busy answers a request over a gate's bound: 503 with a one-line reason,
// and the connection closed, so that a client that does not read its
// answers does not keep the connection either.
func busy(w http.ResponseWriter, g *gate) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Retry-After", "1")
	h.Set("Connection", "close")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintf(w, "web: too many concurrent %s (limit %d); try again later\n", g.what, cap(g.slots))
}

// guard wraps an endpoint's handler: the server-wide and the endpoint's
// bound on concurrent requests, then write (and request body) deadlines.
// fixed: the answer is small and must be written within IdleTimeout of the
// start; otherwise every write may take IdleTimeout (a long download).
func (s *Server) guard(ep *gate, fixed bool, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.requests.enter() {
			busy(w, s.requests)
			return
		}
		defer s.requests.leave()
		if !ep.enter() {
			busy(w, ep)
			return
		}
		defer ep.leave()
		rc := http.NewResponseController(w)
		dw := &deadlineWriter{ResponseWriter: w, rc: rc, timeout: s.lim.IdleTimeout}
		if fixed {
			rc.SetWriteDeadline(time.Now().Add(s.lim.IdleTimeout))
			dw.timeout = 0
		} else {
			dw.extend()
		}
		if r.Body != nil && r.Body != http.NoBody {
			rc.SetReadDeadline(time.Now().Add(s.lim.IdleTimeout))
			// The handler gets a copy of the request with the body
			// wrapped: the server keeps looking at its own request's
			// body to see whether a refused "Expect: 100-continue"
			// upload was read, and closes the connection after the
			// answer instead of first waiting for the unwanted body.
			r2 := *r
			r2.Body = &deadlineBody{ReadCloser: r.Body, rc: rc, timeout: s.lim.IdleTimeout}
			r = &r2
		}
		h.ServeHTTP(dw, r)
	})
}

// deadlineWriter moves the connection's write deadline IdleTimeout ahead
// before every write (timeout > 0), so a response may take as long as it
// needs while the client keeps reading, and a client that stops reading is
// dropped after IdleTimeout.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration // 0: the deadline was set once, at the start
}

func (d *deadlineWriter) extend() {
	if d.timeout > 0 {
		d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
	}
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	d.extend()
	return d.ResponseWriter.Write(p)
}

func (d *deadlineWriter) WriteHeader(code int) {
	d.extend()
	d.ResponseWriter.WriteHeader(code)
}

// Flush makes the wrapper an http.Flusher, as the writer it wraps is.
func (d *deadlineWriter) Flush() {
	d.extend()
	d.rc.Flush()
}

// Unwrap lets http.ResponseController reach the server's writer.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// deadlineBody moves the read deadline IdleTimeout ahead before every read
// of the request body and clears it at the body's end (after which the
// server waits for the next request under its own timeouts; a deadline
// left behind would cancel the request's context).
type deadlineBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	b.rc.SetReadDeadline(time.Now().Add(b.timeout))
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// limitListener refuses connections over a bound: they get a 503 and are
// closed at once, without a goroutine of their own.
type limitListener struct {
	net.Listener
	max     int
	open    atomic.Int64
	refused atomic.Int64
	log     *ratelog.Logger
	answer  []byte
}

func newLimitListener(l net.Listener, max int, log *ratelog.Logger) *limitListener {
	body := fmt.Sprintf("web: too many connections (limit %d); try again later\n", max)
	answer := "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n" +
		"Retry-After: 1\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	return &limitListener{Listener: l, max: max, log: log, answer: []byte(answer)}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= int64(l.max) {
			return &countedConn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		l.refused.Add(1)
		l.log.Warn("web: connection refused: too many connections", "remote", c.RemoteAddr().String(), "limit", l.max)
		// A new socket's send buffer is empty: this write does not wait
		// for the client.
		c.SetWriteDeadline(time.Now().Add(time.Second))
		c.Write(l.answer)
		c.Close()
	}
}

// countedConn gives its slot back when closed.
type countedConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}
