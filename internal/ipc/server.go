package ipc

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/ipc/wire"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/ratelog"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// Errors of the ipc package.
var (
	// ErrServerClosed is returned by Serve after Shutdown or Close.
	ErrServerClosed = errors.New("ipc: server closed")
	// ErrClientClosed is returned by calls on a closed Client.
	ErrClientClosed = errors.New("ipc: client closed")
	// ErrConnBroken: the connection failed before the call's response
	// arrived.
	ErrConnBroken = errors.New("ipc: connection broken")
	// ErrNoAddresses: a Client was configured without addresses.
	ErrNoAddresses = errors.New("ipc: no server addresses")
	// ErrProtocol: the peer broke the RPC protocol.
	ErrProtocol = errors.New("ipc: protocol violation")
	// ErrRetriesExhausted wraps the last error once MaxRetries is used up.
	ErrRetriesExhausted = errors.New("ipc: retries exhausted")

	// errStopReading ends a reader that Shutdown stopped while it waited
	// for room; it never leaves the package.
	errStopReading = errors.New("ipc: reading stopped")
)

// Classes sent for RPC-level failures that remoteerr does not own.
const (
	classRPCServer = "org.apache.hadoop.ipc.RpcServerException"
	classFatal     = "org.apache.hadoop.ipc.IpcException"
)

// ServerConfig configures a Server. Zero fields take Hadoop's defaults.
type ServerConfig struct {
	// Handlers is the size of the handler pool (dfs.namenode.handler.count,
	// default 10).
	Handlers int
	// QueueSizePerHandler bounds the call queue at Handlers ×
	// QueueSizePerHandler calls (ipc.server.handler.queue.size, default 100).
	// A full queue stops reading from connections until there is room.
	QueueSizePerHandler int
	// MaxDataLength is the largest request frame accepted
	// (ipc.maximum.data.length, default 128 MiB). A longer frame is
	// answered FATAL and the connection closed, without allocating it.
	MaxDataLength int
	// Limits protect the server from clients that do not read their
	// replies, pipeline without bound, stay idle or never finish their
	// handshake (see Limits; zero fields take the defaults).
	Limits Limits
	// Logger receives connection-level events; nil discards them. Events
	// caused by a peer (bad preambles and frames, refused and closed
	// connections) are rate-limited.
	Logger *slog.Logger
	// Clock drives the connection scan (idleness, handshake timeout,
	// purge); nil is the wall clock. Socket deadlines always use the wall
	// clock.
	Clock clock.Clock
	// Kerberos, when set, makes the server require Kerberos
	// authentication (hadoop.security.authentication=kerberos): SIMPLE
	// clients are refused and every connection authenticates with SASL
	// GSSAPI, protected as Kerberos.Protection allows. nil: SIMPLE.
	Kerberos *security.Acceptor
	// Authorize, when set, decides whether a connection may go on once
	// its connection context has arrived: proxy users (a context naming
	// an effective user other than the authenticated one) and
	// service-level authorization (the protocol it names). An error
	// refuses the connection: a FATAL_UNAUTHORIZED answer with Hadoop's
	// AuthorizationException and the error's text, then the connection
	// closed. Without it a Kerberos server refuses every proxy request
	// and a SIMPLE one takes the context's word.
	Authorize func(ConnAuth) error
	// TokenPassword, when set on a SIMPLE server (Kerberos nil), offers
	// the TOKEN method (SASL DIGEST-MD5) beside SIMPLE, as a Hadoop server
	// with a secret manager does (a DataNode with block tokens): it
	// returns the password and owner of a token's identifier. Clients
	// without a token go on with SIMPLE.
	TokenPassword func(identifier []byte) (password []byte, owner string, err error)
}

// ConnAuth is who a connection is, as Authorize sees it.
type ConnAuth struct {
	User      string // the effective user (a short name)
	RealUser  string // the authenticated user a proxy connection acts for; "" when not proxied
	Principal string // Kerberos: the authenticated principal (a token's owner); "" for SIMPLE
	TokenAuth bool   // authenticated with a delegation token
	Protocol  string // the protocol the context names
	Remote    net.Addr
}

// Validate rejects negative settings, naming the Hadoop key.
func (c ServerConfig) Validate() error {
	switch {
	case c.Handlers < 0:
		return fmt.Errorf("ipc: dfs.namenode.handler.count must be positive, got %d", c.Handlers)
	case c.QueueSizePerHandler < 0:
		return fmt.Errorf("ipc: ipc.server.handler.queue.size must be positive, got %d", c.QueueSizePerHandler)
	case c.MaxDataLength < 0:
		return fmt.Errorf("ipc: ipc.maximum.data.length must be positive, got %d", c.MaxDataLength)
	}
	return c.Limits.Validate()
}

// withDefaults fills zero (and, for a config that skipped Validate,
// negative) fields with Hadoop's defaults.
func (c ServerConfig) withDefaults() ServerConfig {
	if c.Handlers <= 0 {
		c.Handlers = 10
	}
	if c.QueueSizePerHandler <= 0 {
		c.QueueSizePerHandler = 100
	}
	if c.MaxDataLength <= 0 {
		c.MaxDataLength = wire.DefaultMaxDataLength
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	c.Limits = c.Limits.withDefaults()
	return c
}

// methodFunc decodes a request body, runs the handler and returns the
// response message.
type methodFunc func(ctx context.Context, body []byte) (proto.Message, error)

// Service is one protocol served by a Server, identified by its Java name.
type Service struct {
	name string
	mu   struct {
		sync.RWMutex
		methods map[string]methodFunc
		// described is the protocol's .proto service: a method it lists
		// that has no handler answers UnsupportedOperationException
		// instead of RpcNoSuchMethodException (see Describe).
		described protoreflect.ServiceDescriptor
	}
}

// Name returns the service's Java protocol name.
func (s *Service) Name() string { return s.name }

func (s *Service) method(name string) methodFunc {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if f := s.mu.methods[name]; f != nil {
		return f
	}
	if d := s.mu.described; d != nil && d.Methods().ByName(protoreflect.Name(name)) != nil {
		return s.unsupported(name)
	}
	return nil
}

// Describe declares sd as the .proto service of the protocol: every method
// sd lists and no Handle registered (before or after this call) is answered
// with java.lang.UnsupportedOperationException naming the method, so that a
// client learns that the server knows the call and does not carry it out,
// rather than RpcNoSuchMethodException, which only a method outside the
// protocol gets.
func (s *Service) Describe(sd protoreflect.ServiceDescriptor) {
	s.mu.Lock()
	s.mu.described = sd
	s.mu.Unlock()
}

// Implemented reports whether method has a handler (not only a
// description).
func (s *Service) Implemented(method string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.mu.methods[method] != nil
}

// unsupported is the handler of a described method without a Handle.
func (s *Service) unsupported(method string) methodFunc {
	short := s.name[strings.LastIndexByte(s.name, '.')+1:]
	return func(context.Context, []byte) (proto.Message, error) {
		return nil, remoteerr.New(remoteerr.ClassUnsupported, "%s.%s is not supported by this server", short, method)
	}
}

// Handle registers h as method of svc. The request message is allocated
// per call and decoded from the frame; the response is encoded into the
// reply. A nil response is sent as an empty message of type Resp. Registering
// a method twice replaces the first handler.
func Handle[Req, Resp proto.Message](svc *Service, method string, h func(ctx context.Context, req Req) (Resp, error)) {
	var zero Req
	mt := zero.ProtoReflect().Type()
	var zeroResp Resp
	respType := zeroResp.ProtoReflect().Type()
	f := func(ctx context.Context, body []byte) (proto.Message, error) {
		req := mt.New().Interface().(Req)
		if err := proto.Unmarshal(body, req); err != nil {
			return nil, &decodeError{err: err, typ: mt.Descriptor().FullName()}
		}
		resp, err := h(ctx, req)
		if err != nil {
			return nil, err
		}
		m := proto.Message(resp)
		if !resp.ProtoReflect().IsValid() {
			m = respType.New().Interface()
		}
		return m, nil
	}
	svc.mu.Lock()
	svc.mu.methods[method] = f
	svc.mu.Unlock()
}

// decodeError reports a request body that did not decode.
type decodeError struct {
	err error
	typ any
}

func (e *decodeError) Error() string {
	return fmt.Sprintf("cannot decode request as %v: %v", e.typ, e.err)
}

// Caller identifies the peer of a call. Handlers get it from their ctx.
type Caller struct {
	User       string       // effective user from the connection context (Kerberos: the authenticated user's short name)
	RealUser   string       // real user when the connection is proxied, else ""
	Principal  string       // the Kerberos principal the connection authenticated as (a token's owner); "" for SIMPLE
	TokenAuth  bool         // the connection authenticated with a delegation token (TOKEN), not Kerberos
	Token      []byte       // with TokenAuth, the identifier of that token (shared, do not modify)
	QOP        security.QOP // the connection's protection (Kerberos); 0 for SIMPLE
	Protocol   string       // protocol named in the connection context
	ClientID   []byte       // the client's 16-byte id (shared, do not modify)
	CallID     int32
	RetryCount int32 // -1 when the client did not send one
	Remote     net.Addr
	// CallerContext and CallerSignature are the call's caller context
	// (RpcRequestHeaderProto.callerContext), empty when it sent none.
	CallerContext   string
	CallerSignature []byte
}

type callerKey struct{}

// CallerFromContext returns the caller of the call whose handler received
// ctx.
func CallerFromContext(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(*call)
	if !ok {
		return Caller{}, false
	}
	return Caller{
		User:       c.conn.user,
		RealUser:   c.conn.realUser,
		Principal:  c.conn.principal,
		TokenAuth:  c.conn.tokenAuth,
		Token:      c.conn.tokenID,
		QOP:        c.conn.qop,
		Protocol:   c.conn.protocol,
		ClientID:   c.header.GetClientId(),
		CallID:     c.header.GetCallId(),
		RetryCount: c.header.GetRetryCount(),
		Remote:     c.conn.nc.RemoteAddr(),

		CallerContext:   c.header.GetCallerContext().GetContext(),
		CallerSignature: c.header.GetCallerContext().GetSignature(),
	}, true
}

// Stats are counters of a Server, for tests and metrics.
type Stats struct {
	Accepted      int64 // connections accepted
	Open          int64 // connections open now
	Calls         int64 // calls answered (success or error)
	Errors        int64 // calls answered with status ERROR
	Fatal         int64 // connections closed with a FATAL response
	Panics        int64 // handler panics recovered
	Queued        int   // calls waiting for a handler now
	InFlight      int64 // calls read but not yet answered
	QueueCapacity int

	ReplyBytes   int64 // reply bytes queued and not yet written, all connections
	RequestBytes int64 // request bytes of calls read and not yet answered
	Refused      int64 // connections closed at accept: MaxConnections reached
	IdleClosed   int64 // idle connections closed by the scan
	Unfinished   int64 // connections closed for not finishing the handshake in time
	Purged       int64 // connections closed because their replies waited too long
	Throttled    int64 // connections not read now because of their replies or calls
	Held         int64 // calls whose handler returned and whose reply is held (DeferReply)
	Scans        int64 // connection scans done

	// Timed calls: how many calls ran a handler, their total time waiting
	// in the call queue (read to handler start) and in the handler
	// (Hadoop's RpcQueueTime and RpcProcessingTime).
	TimedCalls          int64
	QueueTimeTotal      time.Duration
	ProcessingTimeTotal time.Duration
}

type stats struct {
	accepted, open, calls, errors, fatal, panics, inFlight atomic.Int64
	replyBytes, refused, idleClosed, unfinished, purged    atomic.Int64
	throttled, scans, held                                 atomic.Int64
	timed, queueNanos, procNanos                           atomic.Int64
}

// Server serves Hadoop RPC v9 to any number of connections.
type Server struct {
	cfg      ServerConfig
	lim      Limits
	log      *slog.Logger
	peerLog  *ratelog.Logger // events caused by peers
	clk      clock.Clock
	queue    chan *call
	requests budget         // request bytes of calls read and not answered
	handlers sync.WaitGroup // handler pool
	conns    sync.WaitGroup // per-connection goroutines and accept loops
	stats    stats

	// hardCtx is cancelled by Close (and by Shutdown when its ctx expires);
	// every connection's ctx derives from it.
	hardCtx    context.Context
	hardCancel context.CancelFunc

	// closing is closed when Shutdown or Close begins; it stops the scan
	// and the accept loops' back-off. scanDone is closed when the scan
	// goroutine has returned.
	closing  chan struct{}
	scanDone chan struct{}

	mu struct {
		sync.Mutex
		services    map[string]*Service
		listeners   map[net.Listener]struct{}
		conns       map[*serverConn]struct{}
		closing     bool // Shutdown or Close began; nothing new starts
		queueClosed bool
		firstAddr   net.Addr
	}
}

// NewServer returns a server with its handler pool running. Register
// services, then call Serve; stop it with Shutdown or Close.
func NewServer(cfg ServerConfig) *Server {
	cfg = cfg.withDefaults()
	s := &Server{cfg: cfg, lim: cfg.Limits, log: cfg.Logger, clk: cfg.Clock,
		peerLog: ratelog.New(cfg.Logger, cfg.Clock, ratelog.DefaultWindow, ratelog.DefaultBurst),
		queue:   make(chan *call, cfg.Handlers*cfg.QueueSizePerHandler),
		closing: make(chan struct{}), scanDone: make(chan struct{})}
	s.requests.limit = cfg.Limits.MaxRequestBytes
	s.hardCtx, s.hardCancel = context.WithCancel(context.Background())
	s.mu.services = make(map[string]*Service)
	s.mu.listeners = make(map[net.Listener]struct{})
	s.mu.conns = make(map[*serverConn]struct{})
	s.handlers.Add(cfg.Handlers)
	for range cfg.Handlers {
		go s.handlerLoop()
	}
	// The ticker is made here, not in the goroutine, so that a test's
	// manual clock cannot be advanced before the scan listens to it.
	go s.scanLoop(s.clk.NewTicker(cfg.Limits.IdleScanInterval))
	return s
}

// Service returns the service registered under the Java protocol name,
// creating it on first use.
func (s *Server) Service(protocol string) *Service {
	s.mu.Lock()
	defer s.mu.Unlock()
	svc := s.mu.services[protocol]
	if svc == nil {
		svc = &Service{name: protocol}
		svc.mu.methods = make(map[string]methodFunc)
		s.mu.services[protocol] = svc
	}
	return svc
}

func (s *Server) service(protocol string) *Service {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.services[protocol]
}

// InFlight returns how many calls have been read and not yet answered.
func (s *Server) InFlight() int64 { return s.stats.inFlight.Load() }

// Stats returns a snapshot of the server's counters.
func (s *Server) Stats() Stats {
	return Stats{
		Accepted:      s.stats.accepted.Load(),
		Open:          s.stats.open.Load(),
		Calls:         s.stats.calls.Load(),
		Errors:        s.stats.errors.Load(),
		Fatal:         s.stats.fatal.Load(),
		Panics:        s.stats.panics.Load(),
		InFlight:      s.stats.inFlight.Load(),
		Queued:        len(s.queue),
		QueueCapacity: cap(s.queue),
		ReplyBytes:    s.stats.replyBytes.Load(),
		RequestBytes:  s.requests.used(),
		Refused:       s.stats.refused.Load(),
		IdleClosed:    s.stats.idleClosed.Load(),
		Unfinished:    s.stats.unfinished.Load(),
		Purged:        s.stats.purged.Load(),
		Throttled:     s.stats.throttled.Load(),
		Held:          s.stats.held.Load(),
		Scans:         s.stats.scans.Load(),

		TimedCalls:          s.stats.timed.Load(),
		QueueTimeTotal:      time.Duration(s.stats.queueNanos.Load()),
		ProcessingTimeTotal: time.Duration(s.stats.procNanos.Load()),
	}
}

// Addr returns the address of the first listener passed to Serve, or nil.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.firstAddr
}

// Serve accepts connections on l until Shutdown or Close, and then returns
// ErrServerClosed. Serve may be called for several listeners.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.mu.closing {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.mu.listeners[l] = struct{}{}
	if s.mu.firstAddr == nil {
		s.mu.firstAddr = l.Addr()
	}
	s.conns.Add(1)
	s.mu.Unlock()
	defer s.conns.Done()

	var delay time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.mu.closing
			s.mu.Unlock()
			if closing {
				return ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				s.mu.Lock()
				delete(s.mu.listeners, l)
				s.mu.Unlock()
				return err
			}
			// Out of file descriptors, a connection reset before it was
			// accepted and the like: the listener still works, so wait a
			// little and go on. Returning would stop the daemon.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.peerLog.Warn("ipc: accept failed; retrying", "addr", l.Addr().String(), "err", err, "retryIn", delay)
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-s.closing:
				t.Stop()
			}
			continue
		}
		delay = 0
		if !s.startConn(nc) {
			nc.Close()
			return ErrServerClosed
		}
	}
}

// startConn starts serving nc. It returns false only when the server is
// closing; a connection over MaxConnections is closed here and logged.
func (s *Server) startConn(nc net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closing {
		return false
	}
	s.stats.accepted.Add(1)
	if max := s.lim.MaxConnections; max != NoLimit && len(s.mu.conns) >= max {
		s.stats.refused.Add(1)
		s.peerLog.Warn("ipc: connection refused: too many connections", "remote", nc.RemoteAddr().String(),
			"open", len(s.mu.conns), "limit", max, "key", "ipc.server.max.connections")
		nc.Close()
		return true
	}
	c := newServerConn(s, nc)
	s.mu.conns[c] = struct{}{}
	s.stats.open.Add(1)
	s.conns.Add(2)
	go c.readLoop()
	go c.writeLoop()
	return true
}

func (s *Server) removeConn(c *serverConn) {
	s.mu.Lock()
	delete(s.mu.conns, c)
	s.mu.Unlock()
	s.stats.open.Add(-1)
}

// beginClose marks the server closing, closes the listeners and returns
// the connections open at that moment.
func (s *Server) beginClose() []*serverConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.mu.closing {
		close(s.closing)
	}
	s.mu.closing = true
	for l := range s.mu.listeners {
		l.Close()
		delete(s.mu.listeners, l)
	}
	conns := make([]*serverConn, 0, len(s.mu.conns))
	for c := range s.mu.conns {
		conns = append(conns, c)
	}
	return conns
}

// Shutdown stops the server gracefully: it stops accepting connections
// and reading new calls, lets the calls already read finish and sends their
// responses, then closes every connection and stops the handlers. If ctx
// ends first, Shutdown closes everything as Close does and returns
// ctx.Err().
func (s *Server) Shutdown(ctx context.Context) error {
	for _, c := range s.beginClose() {
		c.stopReading()
	}
	done := make(chan struct{})
	go func() {
		s.conns.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.stopHandlers()
		return nil
	case <-ctx.Done():
		s.Close()
		<-done
		return ctx.Err()
	}
}

// Close stops the server at once: listeners and connections are closed,
// handler contexts cancelled, and Close waits for every goroutine of the
// server (including running handlers) to return.
func (s *Server) Close() error {
	conns := s.beginClose()
	s.hardCancel()
	for _, c := range conns {
		c.nc.Close()
	}
	s.conns.Wait()
	s.stopHandlers()
	return nil
}

func (s *Server) stopHandlers() {
	s.mu.Lock()
	if !s.mu.queueClosed {
		s.mu.queueClosed = true
		// Every reader has returned, so nothing sends on queue any more.
		close(s.queue)
	}
	s.mu.Unlock()
	s.handlers.Wait()
	<-s.scanDone
}

// call is one request waiting for or running in a handler, or held
// (DeferReply) after its handler returned.
type call struct {
	conn   *serverConn
	header *common.RpcRequestHeaderProto
	fn     methodFunc
	body   []byte
	size   int64     // request bytes held in the server's budget
	queued time.Time // when the reader queued it

	hold struct {
		sync.Mutex
		pending  int    // DeferReply releases still to come
		returned bool   // the handler returned
		err      error  // the first error a release gave
		answer   func() // sends the reply fixed when the handler returned
	}
}

// DeferReply holds the reply of the call whose handler received ctx until
// release is called: the handler may return (its goroutine goes back to the
// pool) and its reply — response or error — is encoded at that moment,
// but it goes out only once every release of the call was called, from
// whatever goroutine. release(nil) lets the fixed reply go; release(err)
// replaces it by err's error answer (the first such err wins). The call
// counts as in flight on its connection until then (MaxConnCalls, graceful
// Shutdown, the reader's wait at connection close), so release must come
// eventually; a reply released after its connection died is dropped.
// ok is false, and nothing is held, when ctx is not a handler's or its
// handler has returned already. release may be called more than once;
// calls after the first do nothing.
func DeferReply(ctx context.Context) (release func(error), ok bool) {
	c, ok := ctx.Value(callerKey{}).(*call)
	if !ok {
		return nil, false
	}
	c.hold.Lock()
	if c.hold.returned {
		c.hold.Unlock()
		return nil, false
	}
	c.hold.pending++
	c.hold.Unlock()
	var once sync.Once
	return func(err error) { once.Do(func() { c.release(err) }) }, true
}

// release is one DeferReply release: the last one, once the handler has
// returned, sends the reply and ends the call.
func (c *call) release(err error) {
	c.hold.Lock()
	c.hold.pending--
	if err != nil && c.hold.err == nil {
		c.hold.err = err
	}
	if c.hold.pending > 0 || !c.hold.returned {
		c.hold.Unlock()
		return
	}
	answer, herr := c.hold.answer, c.hold.err
	c.hold.answer = nil
	c.hold.Unlock()
	c.conn.srv.stats.held.Add(-1)
	if herr != nil {
		c.conn.sendHandlerError(c.header, herr)
	} else {
		answer()
	}
	c.conn.callDone(c)
}

func (s *Server) handlerLoop() {
	defer s.handlers.Done()
	for c := range s.queue {
		s.runCall(c)
	}
}

func (s *Server) runCall(c *call) {
	conn := c.conn
	if conn.ctx.Err() != nil {
		conn.callDone(c)
		return // the connection died while the call waited; nobody listens
	}
	start := s.clk.Now()
	resp, err := s.invoke(c, c)
	s.stats.queueNanos.Add(int64(start.Sub(c.queued)))
	s.stats.procNanos.Add(int64(s.clk.Now().Sub(start)))
	s.stats.timed.Add(1)
	c.hold.Lock()
	c.hold.returned = true
	if c.hold.pending > 0 {
		// Held (DeferReply): fix the reply now, send it on release.
		c.hold.answer = conn.fixedReply(c.header, resp, err)
		c.hold.Unlock()
		s.stats.held.Add(1)
		return
	}
	herr := c.hold.err
	c.hold.Unlock()
	switch {
	case herr != nil:
		conn.sendHandlerError(c.header, herr)
	case err != nil:
		conn.sendHandlerError(c.header, err)
	default:
		conn.sendSuccess(c.header, resp)
	}
	conn.callDone(c)
}

// sendHandlerError answers a call whose handler failed with err.
func (c *serverConn) sendHandlerError(req *common.RpcRequestHeaderProto, err error) {
	var de *decodeError
	if errors.As(err, &de) {
		c.sendError(req, common.RpcResponseHeaderProto_ERROR, common.RpcResponseHeaderProto_ERROR_RPC_SERVER, classRPCServer, de.Error())
		return
	}
	class, msg := remoteerr.ClassOf(err)
	c.sendError(req, common.RpcResponseHeaderProto_ERROR, common.RpcResponseHeaderProto_ERROR_APPLICATION, class, msg)
}

// fixedReply returns what sends the reply of a held call: a response is
// encoded now, so that nothing the handler shares can change it before it
// goes out; an error is translated now.
func (c *serverConn) fixedReply(req *common.RpcRequestHeaderProto, resp proto.Message, err error) func() {
	if err != nil {
		var de *decodeError
		if errors.As(err, &de) {
			msg := de.Error()
			return func() {
				c.sendError(req, common.RpcResponseHeaderProto_ERROR, common.RpcResponseHeaderProto_ERROR_RPC_SERVER, classRPCServer, msg)
			}
		}
		class, msg := remoteerr.ClassOf(err)
		return func() {
			c.sendError(req, common.RpcResponseHeaderProto_ERROR, common.RpcResponseHeaderProto_ERROR_APPLICATION, class, msg)
		}
	}
	frame, ferr := wire.AppendSuccess(nil, req.GetCallId(), req.GetClientId(), req.GetRetryCount(), resp)
	if ferr != nil {
		msg := "cannot encode response: " + ferr.Error()
		return func() {
			c.sendError(req, common.RpcResponseHeaderProto_ERROR, common.RpcResponseHeaderProto_ERROR_SERIALIZING_RESPONSE, remoteerr.ClassIOException, msg)
		}
	}
	return func() {
		c.srv.stats.calls.Add(1)
		c.enqueueFrame(frame)
	}
}

// A call is its handler's ctx: its connection's, with the call itself as
// the value of callerKey. It saves the allocation of a context.WithValue
// per call; context.WithCancel and the like on top of it find the
// connection's cancelCtx through Value and start no goroutine.
func (c *call) Deadline() (time.Time, bool) { return c.conn.ctx.Deadline() }
func (c *call) Done() <-chan struct{}       { return c.conn.ctx.Done() }
func (c *call) Err() error                  { return c.conn.ctx.Err() }
func (c *call) Value(key any) any {
	if _, ok := key.(callerKey); ok {
		return c
	}
	return c.conn.ctx.Value(key)
}

func (s *Server) invoke(ctx context.Context, c *call) (resp proto.Message, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.stats.panics.Add(1)
			s.log.Error("ipc: handler panic", "remote", c.conn.nc.RemoteAddr().String(),
				"callId", c.header.GetCallId(), "panic", r, "stack", string(debug.Stack()))
			resp, err = nil, fmt.Errorf("handler panic: %v", r)
		}
	}()
	return c.fn(ctx, c.body)
}

// connReadBuffer is the read buffer of a connection. Calls are small, and
// a larger frame is read straight into its own buffer, so a small buffer
// costs no extra system calls while it keeps an idle connection cheap.
const connReadBuffer = 2 << 10

// serverConn is one client connection: a reader goroutine that decodes
// frames and queues calls, and a writer goroutine that sends responses.
type serverConn struct {
	srv *Server
	nc  net.Conn
	br  *bufio.Reader

	// ctx is cancelled when the connection dies or the server closes hard.
	ctx    context.Context
	cancel context.CancelFunc

	// Set by the reader before the first call is queued; read-only after.
	user, realUser, protocol string
	principal                string       // Kerberos: the authenticated principal
	qop                      security.QOP // Kerberos: the protection chosen
	tokenAuth                bool         // authenticated with a delegation token
	tokenID                  []byte       // that token's identifier

	// SASL state, the reader's only.
	sasl struct {
		state    int // saslStart, saslInitiated (challenge sent), saslDone
		accepted *security.Accepted
		offer    security.QOP
		digest   *security.DigestChallenge // the TOKEN challenge sent with NEGOTIATE
		inbuf    []byte                    // unwrapped request bytes not yet taken as frames
		// simple: a SIMPLE server offered SIMPLE beside TOKEN; the client
		// may go on without SASL.
		simple bool
	}

	accepted    time.Time    // server clock, read-only
	lastContact atomic.Int64 // server clock (UnixNano) of the last bytes received
	handshaken  atomic.Bool  // the connection context has arrived
	calls       atomic.Int64 // calls read and not yet answered

	inFlight sync.WaitGroup // calls read and not yet answered
	wake     chan struct{}  // cap 1: responses are pending
	room     chan struct{}  // cap 1: replies were written or a call finished
	stopRead atomic.Bool    // set by Shutdown
	stopCh   chan struct{}  // closed by Shutdown (stopReading)
	stopOnce sync.Once
	killOnce sync.Once
	killed   atomic.Bool // kill was called; the connection is going away

	out struct {
		sync.Mutex
		buf          []byte    // encoded response frames not yet written
		since        time.Time // when the oldest frame in buf was queued (zero: buf empty)
		writing      int       // bytes the writer took and has not finished writing
		writingSince time.Time // when the oldest of those was queued
		dropping     bool      // the connection is dead: responses are thrown away
		finished     bool      // the reader is done and every call answered
		closeAfter   bool      // close the connection once buf is written (FATAL)
		// wrap, when set, protects every response frame queued from now on
		// (SASL integrity or privacy); seal encrypts.
		wrap *security.Session
		seal bool
		// saslHeader is the encoded header of the WRAP frames; scratch
		// holds a response frame while it is wrapped.
		saslHeader, scratch []byte
	}
}

func newServerConn(s *Server, nc net.Conn) *serverConn {
	c := &serverConn{srv: s, nc: nc, wake: make(chan struct{}, 1), room: make(chan struct{}, 1),
		stopCh: make(chan struct{}), accepted: s.clk.Now()}
	c.br = bufio.NewReaderSize(contactReader{c}, connReadBuffer)
	c.lastContact.Store(c.accepted.UnixNano())
	c.ctx, c.cancel = context.WithCancel(s.hardCtx)
	return c
}

// contactReader reads from the connection and notes when bytes arrived.
type contactReader struct{ c *serverConn }

func (r contactReader) Read(p []byte) (int, error) {
	n, err := r.c.nc.Read(p)
	if n > 0 {
		r.c.lastContact.Store(r.c.srv.clk.Now().UnixNano())
	}
	return n, err
}

func (c *serverConn) remote() string { return c.nc.RemoteAddr().String() }

func (c *serverConn) callDone(cl *call) {
	c.srv.requests.release(cl.size)
	c.srv.stats.inFlight.Add(-1)
	c.calls.Add(-1)
	c.inFlight.Done()
	c.signalRoom()
}

func (c *serverConn) signalRoom() {
	select {
	case c.room <- struct{}{}:
	default:
	}
}

// stopReading makes the reader stop at the next frame boundary it reaches
// (or at once if it is blocked waiting for bytes or for room). Calls
// already read run to completion.
func (c *serverConn) stopReading() {
	c.stopRead.Store(true)
	c.stopOnce.Do(func() { close(c.stopCh) })
	c.nc.SetReadDeadline(time.Now())
}

// kill closes the connection for the reason given (the scan's decisions);
// the reader and writer then end as they do when the peer goes away.
func (c *serverConn) kill() {
	c.killOnce.Do(func() {
		c.killed.Store(true)
		c.cancel()
		c.nc.Close()
	})
}

func (c *serverConn) readLoop() {
	defer c.srv.conns.Done()
	err := c.serveReads()
	if err != nil && c.ctx.Err() == nil && !c.stopRead.Load() && !errors.Is(err, io.EOF) {
		c.srv.log.Debug("ipc: connection ended", "remote", c.remote(), "err", err)
	}
	if !c.stopRead.Load() {
		// The peer went away or broke the protocol: nobody will read the
		// answers of calls still running.
		if fatal := c.isClosingAfterWrite(); !fatal {
			c.cancel()
		}
	}
	c.inFlight.Wait()
	c.out.Lock()
	c.out.finished = true
	c.out.Unlock()
	c.signal()
}

func (c *serverConn) isClosingAfterWrite() bool {
	c.out.Lock()
	defer c.out.Unlock()
	return c.out.closeAfter
}

func (c *serverConn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// queuedLocked is the connection's reply bytes not yet written.
func (c *serverConn) queuedLocked() int64 { return int64(len(c.out.buf) + c.out.writing) }

// oldestReply returns when the oldest reply not yet written was queued, or
// the zero time when there is none.
func (c *serverConn) oldestReply() time.Time {
	c.out.Lock()
	defer c.out.Unlock()
	if c.out.writing > 0 {
		return c.out.writingSince
	}
	return c.out.since
}

// idle reports whether the connection has finished its handshake and has
// no call in flight and no reply to write.
func (c *serverConn) idle() bool {
	if !c.handshaken.Load() || c.calls.Load() > 0 {
		return false
	}
	c.out.Lock()
	defer c.out.Unlock()
	return c.queuedLocked() == 0
}

// hasRoom reports whether the reader may read another call: the
// connection is within its own limits on calls and queued replies, and,
// when all connections together hold too many reply bytes, it has none of
// its own waiting.
func (c *serverConn) hasRoom() bool {
	lim := &c.srv.lim
	if c.calls.Load() >= int64(lim.MaxConnCalls) {
		return false
	}
	c.out.Lock()
	queued := c.queuedLocked()
	c.out.Unlock()
	if queued > lim.MaxConnReplyBytes {
		return false
	}
	return queued == 0 || c.srv.stats.replyBytes.Load() <= lim.MaxReplyBytes
}

// waitForRoom blocks the reader until hasRoom, the connection dies or
// reading stops. The client's further calls stay in the socket meanwhile,
// which is what slows it down.
func (c *serverConn) waitForRoom() error {
	if c.hasRoom() {
		return nil
	}
	c.srv.stats.throttled.Add(1)
	defer c.srv.stats.throttled.Add(-1)
	for !c.hasRoom() {
		select {
		case <-c.room:
		case <-c.ctx.Done():
			return c.ctx.Err()
		case <-c.stopCh:
			return errStopReading
		}
	}
	return nil
}

// writeLoop writes every pending response, flushing once per batch, until
// the reader has finished and all responses are out (or writing fails).
func (c *serverConn) writeLoop() {
	defer c.srv.conns.Done()
	defer c.srv.removeConn(c)
	defer c.nc.Close()
	defer c.cancel()
	var spare []byte
	for {
		select {
		case <-c.wake:
		case <-c.ctx.Done():
			// Hard close, or the reader gave up on the peer.
			c.drainAfterCancel()
			return
		}
		c.out.Lock()
		buf, since := c.out.buf, c.out.since
		c.out.buf, c.out.since = spare[:0], time.Time{}
		c.out.writing, c.out.writingSince = len(buf), since
		finished, closeAfter := c.out.finished, c.out.closeAfter
		c.out.Unlock()
		if len(buf) > 0 {
			// A client that takes none of its replies for PurgeInterval
			// loses its connection; the scan checks the same age.
			c.nc.SetWriteDeadline(time.Now().Add(c.srv.lim.PurgeInterval))
			_, err := c.nc.Write(buf)
			c.out.Lock()
			c.out.writing, c.out.writingSince = 0, time.Time{}
			c.out.Unlock()
			c.srv.stats.replyBytes.Add(-int64(len(buf)))
			c.signalRoom()
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					c.srv.stats.purged.Add(1)
					c.srv.peerLog.Warn("ipc: closing connection: its client took no replies",
						"remote", c.remote(), "for", c.srv.lim.PurgeInterval, "key", "ipc.server.purge.interval")
				}
				c.cancel()
				c.drainAfterCancel()
				return
			}
		}
		spare = buf
		if cap(spare) > 1<<20 {
			spare = nil // do not keep a huge buffer for an idle connection
		}
		if closeAfter {
			c.cancel()
			c.drainAfterCancel()
			return
		}
		if finished {
			// finished is set after the last call was answered, so the
			// batch just written was the last one.
			return
		}
	}
}

// drainAfterCancel waits, after the connection's ctx was cancelled, until
// the reader has finished (so no handler still needs this connection),
// throwing away the responses still queued.
func (c *serverConn) drainAfterCancel() {
	c.nc.Close() // unblock the reader
	for {
		c.out.Lock()
		c.out.dropping = true
		finished := c.out.finished
		dropped := len(c.out.buf)
		c.out.buf, c.out.since = nil, time.Time{}
		c.out.Unlock()
		c.srv.stats.replyBytes.Add(-int64(dropped))
		c.signalRoom()
		if finished {
			return
		}
		<-c.wake
	}
}

// enqueue appends one response frame to the output buffer.
func (c *serverConn) enqueue(h *common.RpcResponseHeaderProto, body proto.Message, closeAfter bool) error {
	return c.enqueueReply(nil, h, body, closeAfter)
}

// enqueueReply is enqueue; with h nil it appends the success reply of
// req, whose header wire.AppendSuccess encodes without building it.
func (c *serverConn) enqueueReply(req *common.RpcRequestHeaderProto, h *common.RpcResponseHeaderProto, body proto.Message, closeAfter bool) error {
	c.out.Lock()
	var err error
	if c.out.closeAfter || c.out.dropping {
		c.out.Unlock()
		return nil
	}
	n := len(c.out.buf)
	switch {
	case c.out.wrap != nil:
		if h == nil {
			h = c.responseHeader(req, common.RpcResponseHeaderProto_SUCCESS)
		}
		c.out.buf, err = c.appendWrapped(c.out.buf, h, body)
	case h == nil:
		c.out.buf, err = wire.AppendSuccess(c.out.buf, req.GetCallId(), req.GetClientId(), req.GetRetryCount(), body)
	default:
		c.out.buf, err = wire.AppendResponse(c.out.buf, h, body)
	}
	if err != nil {
		c.out.buf = c.out.buf[:n]
	} else {
		if n == 0 {
			c.out.since = c.srv.clk.Now()
		}
		c.srv.stats.replyBytes.Add(int64(len(c.out.buf) - n))
		if closeAfter {
			c.out.closeAfter = true
		}
	}
	c.out.Unlock()
	if err == nil {
		c.signal()
	}
	return err
}

// appendWrapped appends the response as a SASL WRAP message holding the
// protected frame, as Hadoop's server does for integrity and privacy.
// The caller holds c.out's lock.
func (c *serverConn) appendWrapped(dst []byte, h *common.RpcResponseHeaderProto, body proto.Message) ([]byte, error) {
	frame, err := wire.AppendResponse(c.out.scratch[:0], h, body)
	if err != nil {
		return dst, err
	}
	if cap(frame) <= 1<<20 {
		c.out.scratch = frame
	}
	return c.appendWrapFrameLocked(dst, frame)
}

// appendWrapFrameLocked wraps frame and appends it as a SASL WRAP message.
// The caller holds c.out's lock.
func (c *serverConn) appendWrapFrameLocked(dst, frame []byte) ([]byte, error) {
	tok, err := c.out.wrap.Wrap(frame, c.out.seal)
	if err != nil {
		return dst, err
	}
	if c.out.saslHeader == nil {
		if c.out.saslHeader, err = proto.Marshal(c.saslResponseHeader(common.RpcResponseHeaderProto_SUCCESS)); err != nil {
			return dst, err
		}
	}
	return wire.AppendSASLWrapFrame(dst, c.out.saslHeader, tok), nil
}

// saslResponseHeader is the header of an answer to a SASL message.
func (c *serverConn) saslResponseHeader(status common.RpcResponseHeaderProto_RpcStatusProto) *common.RpcResponseHeaderProto {
	return &common.RpcResponseHeaderProto{
		CallId:              proto.Uint32(wire.ResponseCallID(wire.CallIDSASL)),
		Status:              status.Enum(),
		ServerIpcVersionNum: proto.Uint32(uint32(wire.Version)),
	}
}

// enqueueFrame appends an encoded response frame to the output buffer.
func (c *serverConn) enqueueFrame(frame []byte) {
	c.out.Lock()
	if c.out.closeAfter || c.out.dropping {
		c.out.Unlock()
		return
	}
	n := len(c.out.buf)
	if c.out.wrap != nil {
		var err error
		c.out.buf, err = c.appendWrapFrameLocked(c.out.buf, frame)
		if err != nil {
			c.out.buf = c.out.buf[:n]
			c.out.Unlock()
			c.srv.log.Error("ipc: cannot wrap response", "err", err)
			return
		}
	} else {
		c.out.buf = append(c.out.buf, frame...)
	}
	if n == 0 {
		c.out.since = c.srv.clk.Now()
	}
	c.srv.stats.replyBytes.Add(int64(len(c.out.buf) - n))
	c.out.Unlock()
	c.signal()
}

func (c *serverConn) responseHeader(req *common.RpcRequestHeaderProto, status common.RpcResponseHeaderProto_RpcStatusProto) *common.RpcResponseHeaderProto {
	h := &common.RpcResponseHeaderProto{
		CallId:              proto.Uint32(wire.ResponseCallID(wire.CallIDInvalid)),
		Status:              status.Enum(),
		ServerIpcVersionNum: proto.Uint32(uint32(wire.Version)),
	}
	if req != nil {
		h.CallId = proto.Uint32(wire.ResponseCallID(req.GetCallId()))
		h.ClientId = req.GetClientId()
		h.RetryCount = proto.Int32(req.GetRetryCount())
	}
	return h
}

func (c *serverConn) sendSuccess(req *common.RpcRequestHeaderProto, body proto.Message) {
	// Counted before the reply is queued: a client that has its answer
	// sees it counted.
	c.srv.stats.calls.Add(1)
	if err := c.enqueueReply(req, nil, body, false); err != nil {
		c.srv.stats.calls.Add(-1)
		class, msg := remoteerr.ClassIOException, "cannot encode response: "+err.Error()
		c.sendError(req, common.RpcResponseHeaderProto_ERROR, common.RpcResponseHeaderProto_ERROR_SERIALIZING_RESPONSE, class, msg)
		return
	}
}

func (c *serverConn) sendError(req *common.RpcRequestHeaderProto, status common.RpcResponseHeaderProto_RpcStatusProto,
	detail common.RpcResponseHeaderProto_RpcErrorCodeProto, class, msg string) {
	h := c.responseHeader(req, status)
	h.ExceptionClassName = proto.String(class)
	h.ErrorMsg = proto.String(msg)
	h.ErrorDetail = detail.Enum()
	fatal := status == common.RpcResponseHeaderProto_FATAL
	count := func(n int64) {
		if fatal {
			c.srv.stats.fatal.Add(n)
		} else {
			c.srv.stats.calls.Add(n)
			c.srv.stats.errors.Add(n)
		}
	}
	count(1) // before the reply is queued, as in sendSuccess
	if err := c.enqueue(h, nil, fatal); err != nil {
		count(-1)
		c.srv.log.Error("ipc: cannot encode error response", "err", err)
	}
}

// fatal answers a protocol violation and makes the connection close once
// the answer is written. It returns an error for the reader to stop with.
func (c *serverConn) fatal(req *common.RpcRequestHeaderProto, detail common.RpcResponseHeaderProto_RpcErrorCodeProto, class, msg string) error {
	c.srv.peerLog.Warn("ipc: closing connection after fatal error", "remote", c.remote(),
		"detail", detail.String(), "error", msg)
	c.sendError(req, common.RpcResponseHeaderProto_FATAL, detail, class, msg)
	return fmt.Errorf("%w: %s", ErrProtocol, msg)
}

// SASL states of a connection (serverConn.sasl.state).
const (
	saslStart     = iota // nothing, or only NEGOTIATE, received
	saslInitiated        // Kerberos: the challenge was sent, RESPONSE awaited
	saslDone             // authenticated
)

// Hadoop's classes for authentication failures.
const (
	classSasl          = "javax.security.sasl.SaslException"
	classAuthorization = "org.apache.hadoop.security.authorize.AuthorizationException"
)

// maxSaslBuf is the largest wrapped message the server takes, announced
// in the GSSAPI security-layer message.
const maxSaslBuf = 0xFFFFFF

// nextFrame returns the next request frame: from the bytes of SASL WRAP
// messages already unwrapped when they hold a whole frame, else from the
// socket.
func (c *serverConn) nextFrame(maxLen int) ([]byte, error) {
	if in := c.sasl.inbuf; len(in) >= 4 {
		n := int(uint32(in[0])<<24 | uint32(in[1])<<16 | uint32(in[2])<<8 | uint32(in[3]))
		if n > maxLen {
			return nil, &wire.FrameTooLargeError{Length: uint32(n), Max: maxLen}
		}
		if len(in) >= 4+n {
			frame := in[4 : 4+n : 4+n]
			c.sasl.inbuf = in[4+n:]
			if len(c.sasl.inbuf) == 0 {
				c.sasl.inbuf = nil
			}
			return frame, nil
		}
	}
	return wire.ReadFrame(c.br, maxLen, nil)
}

// serveReads runs the connection's read side: preamble, optional SASL,
// connection context, then calls until EOF, error or stop.
func (c *serverConn) serveReads() error {
	p, err := wire.ReadPreamble(c.br)
	if err != nil {
		var ve *wire.VersionError
		if errors.As(err, &ve) {
			msg := fmt.Sprintf("Server IPC version %d cannot communicate with client version %d", wire.Version, ve.Got)
			return c.fatal(nil, common.RpcResponseHeaderProto_FATAL_VERSION_MISMATCH, remoteerr.ClassVersionMismatch, msg)
		}
		if errors.Is(err, wire.ErrBadMagic) || errors.Is(err, wire.ErrBadAuthProtocol) {
			// Hadoop answers nothing either; it logs the peer.
			c.srv.peerLog.Warn("ipc: closing connection: bad preamble (not a Hadoop RPC client?)",
				"remote", c.remote(), "err", err)
		}
		return err
	}
	sasl := p.AuthProtocol == wire.AuthSASL
	krb := c.srv.cfg.Kerberos
	saslHeader := &common.RpcRequestHeaderProto{CallId: proto.Int32(wire.CallIDSASL)}
	if krb != nil && !sasl {
		return c.fatal(saslHeader, common.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, remoteerr.ClassAccessControl,
			"SIMPLE authentication is not enabled.  Available:[TOKEN, KERBEROS]")
	}
	haveContext := false
	maxLen := c.srv.cfg.MaxDataLength
	for {
		if c.stopRead.Load() {
			return nil
		}
		if err := c.waitForRoom(); err != nil {
			if errors.Is(err, errStopReading) {
				return nil
			}
			return err
		}
		frame, err := c.nextFrame(maxLen)
		if err != nil {
			var fe *wire.FrameTooLargeError
			if errors.As(err, &fe) {
				return c.fatal(nil, common.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, remoteerr.ClassIOException, fe.Error())
			}
			return err
		}
		req, err := wire.DecodeRequest(frame)
		if err != nil {
			return c.fatal(nil, common.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, classFatal, err.Error())
		}
		h := req.Header
		if h.GetRpcKind() != common.RpcKindProto_RPC_PROTOCOL_BUFFER {
			return c.fatal(h, common.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, classFatal,
				fmt.Sprintf("unsupported rpc kind %v", h.GetRpcKind()))
		}
		id := h.GetCallId()
		switch {
		case id == wire.CallIDSASL:
			if !sasl && c.sasl.state != saslDone {
				return c.fatal(h, common.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, remoteerr.ClassAccessControl,
					"SASL protocol not requested by client")
			}
			var m common.RpcSaslProto
			if err := proto.Unmarshal(req.Body, &m); err != nil {
				return c.fatal(h, common.RpcResponseHeaderProto_FATAL_DESERIALIZING_REQUEST, classFatal, "bad SASL message: "+err.Error())
			}
			if krb != nil {
				done, err := c.kerberosSASL(h, &m)
				if err != nil {
					return err
				}
				if done {
					sasl = false
				}
				continue
			}
			if c.srv.cfg.TokenPassword != nil {
				done, err := c.simpleTokenSASL(h, &m)
				if err != nil {
					return err
				}
				if done {
					sasl = false
				}
				continue
			}
			if m.GetState() != common.RpcSaslProto_NEGOTIATE {
				return c.fatal(h, common.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, remoteerr.ClassAccessControl,
					fmt.Sprintf("SASL %v not supported: server uses SIMPLE authentication", m.GetState()))
			}
			// A SIMPLE-only server answers NEGOTIATE with SUCCESS; the client
			// continues as on a SIMPLE connection.
			if err := c.enqueue(c.responseHeader(h, common.RpcResponseHeaderProto_SUCCESS),
				&common.RpcSaslProto{State: common.RpcSaslProto_SUCCESS.Enum()}, false); err != nil {
				return err
			}
			sasl = false
		case id == wire.CallIDConnectionContext:
			if sasl && c.sasl.simple && c.sasl.state == saslStart {
				// Offered SIMPLE beside TOKEN, the client chose SIMPLE.
				sasl = false
			}
			if sasl {
				return c.fatal(h, common.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, remoteerr.ClassAccessControl,
					"connection context sent during SASL negotiation")
			}
			if haveContext {
				return c.fatal(h, common.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, classFatal, "connection context already processed")
			}
			var cc common.IpcConnectionContextProto
			if err := proto.Unmarshal(req.Body, &cc); err != nil {
				return c.fatal(h, common.RpcResponseHeaderProto_FATAL_DESERIALIZING_REQUEST, classFatal, "bad connection context: "+err.Error())
			}
			c.user = cc.GetUserInfo().GetEffectiveUser()
			c.realUser = cc.GetUserInfo().GetRealUser()
			c.protocol = cc.GetProtocol()
			if krb == nil && c.tokenAuth {
				// A token on a SIMPLE server: the user is its owner.
				c.user, c.realUser = c.sasl.accepted.User, ""
			}
			if krb != nil {
				// The user is who Kerberos says; naming someone else is a
				// proxy (doAs) request, which Authorize decides.
				acc := c.sasl.accepted
				c.principal = acc.Principal
				switch eff := c.user; {
				case eff == "" || eff == acc.Principal || eff == acc.User:
					c.user, c.realUser = acc.User, ""
				case c.tokenAuth || c.srv.cfg.Authorize == nil:
					return c.fatal(h, common.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, classAuthorization,
						fmt.Sprintf("User: %s is not allowed to impersonate %s", acc.Principal, eff))
				default:
					if strings.ContainsAny(eff, "@/") {
						short, err := krb.Rules.ShortName(eff, krb.DefaultRealm)
						if err != nil {
							return c.fatal(h, common.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, classAuthorization,
								fmt.Sprintf("User: %s is not allowed to impersonate %s: %v", acc.Principal, eff, err))
						}
						eff = short
					}
					c.user, c.realUser = eff, acc.User
				}
			}
			if auth := c.srv.cfg.Authorize; auth != nil {
				if err := auth(ConnAuth{User: c.user, RealUser: c.realUser, Principal: c.principal, TokenAuth: c.tokenAuth,
					Protocol: c.protocol, Remote: c.nc.RemoteAddr()}); err != nil {
					c.srv.peerLog.Warn("ipc: connection unauthorized", "remote", c.remote(), "protocol", c.protocol,
						"user", c.user, "realUser", c.realUser, "err", err)
					return c.fatal(h, common.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, classAuthorization, err.Error())
				}
			}
			haveContext = true
			c.handshaken.Store(true)
		case id == wire.CallIDPing:
			// Nothing to answer.
		case id < 0:
			return c.fatal(h, common.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, classFatal,
				fmt.Sprintf("unknown out-of-band call #%d", id))
		case sasl:
			return c.fatal(h, common.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, remoteerr.ClassAccessControl, "call before SASL negotiation")
		case !haveContext:
			return c.fatal(h, common.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, classFatal, "connection context not established")
		default:
			if h.GetRpcOp() == common.RpcRequestHeaderProto_RPC_CLOSE_CONNECTION {
				return nil
			}
			if err := c.dispatch(req, len(frame)); err != nil {
				return err
			}
		}
	}
}

// simpleTokenSASL runs one step of the SASL exchange of a SIMPLE server
// that takes tokens (ServerConfig.TokenPassword): NEGOTIATE is answered
// with TOKEN (and its DIGEST-MD5 challenge) and SIMPLE; INITIATE with
// TOKEN is checked as on a Kerberos server. A client that chooses SIMPLE
// sends its connection context next. done reports that authentication
// has completed.
func (c *serverConn) simpleTokenSASL(h *common.RpcRequestHeaderProto, m *common.RpcSaslProto) (done bool, err error) {
	unauthorized := func(class, msg string) error {
		c.srv.peerLog.Warn("ipc: authentication failed", "remote", c.remote(), "err", msg)
		return c.fatal(h, common.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, class, msg)
	}
	reply := func(msg *common.RpcSaslProto) error {
		return c.enqueue(c.saslResponseHeader(common.RpcResponseHeaderProto_SUCCESS), msg, false)
	}
	switch st := m.GetState(); {
	case c.sasl.state != saslStart:
		return false, unauthorized(remoteerr.ClassAccessControl, fmt.Sprintf("SASL %v after authentication", st))
	case st == common.RpcSaslProto_NEGOTIATE && c.sasl.digest == nil:
		c.sasl.digest = security.NewDigestChallenge(security.QOPAuthentication)
		c.sasl.simple = true
		return false, reply(&common.RpcSaslProto{State: common.RpcSaslProto_NEGOTIATE.Enum(), Auths: []*common.RpcSaslProto_SaslAuth{
			{Method: proto.String("TOKEN"), Mechanism: proto.String("DIGEST-MD5"), Protocol: proto.String(""),
				ServerId: proto.String("default"), Challenge: c.sasl.digest.Bytes()},
			{Method: proto.String("SIMPLE"), Mechanism: proto.String("")},
		}})
	case st == common.RpcSaslProto_INITIATE && len(m.GetAuths()) > 0 && m.GetAuths()[0].GetMethod() == "TOKEN":
		return c.tokenSASL(h, m, unauthorized, reply)
	}
	return false, unauthorized(remoteerr.ClassAccessControl, fmt.Sprintf("SASL %v not supported: this server takes TOKEN or SIMPLE", m.GetState()))
}

// kerberosSASL runs one step of the SASL exchange of a Kerberos server:
// NEGOTIATE is answered with the methods offered, INITIATE (GSSAPI, the
// client's AP-REQ) with the security-layer challenge, RESPONSE (the
// client's choice of layer) with SUCCESS; after that, WRAP messages carry
// protected calls. done reports that authentication has completed.
func (c *serverConn) kerberosSASL(h *common.RpcRequestHeaderProto, m *common.RpcSaslProto) (done bool, err error) {
	krb := c.srv.cfg.Kerberos
	unauthorized := func(class, msg string) error {
		c.srv.peerLog.Warn("ipc: authentication failed", "remote", c.remote(), "err", msg)
		return c.fatal(h, common.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, class, msg)
	}
	reply := func(msg *common.RpcSaslProto) error {
		return c.enqueue(c.saslResponseHeader(common.RpcResponseHeaderProto_SUCCESS), msg, false)
	}
	switch st := m.GetState(); {
	case st == common.RpcSaslProto_WRAP:
		if c.sasl.state != saslDone || c.qop == security.QOPAuthentication {
			return false, unauthorized(classSasl, "Server is not wrapping data")
		}
		msg, _, err := c.sasl.accepted.Session.Unwrap(m.GetToken())
		if err != nil {
			return false, unauthorized(classSasl, err.Error())
		}
		if len(c.sasl.inbuf)+len(msg) > c.srv.cfg.MaxDataLength+4 {
			return false, c.fatal(h, common.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, remoteerr.ClassIOException,
				fmt.Sprintf("wrapped data of %d bytes exceeds maximum data length of %d", len(c.sasl.inbuf)+len(msg), c.srv.cfg.MaxDataLength))
		}
		c.sasl.inbuf = append(c.sasl.inbuf, msg...)
		return false, nil
	case c.sasl.state == saslDone:
		return false, unauthorized(remoteerr.ClassAccessControl, fmt.Sprintf("SASL %v after authentication", st))
	case st == common.RpcSaslProto_NEGOTIATE && c.sasl.state == saslStart:
		host, _, _ := net.SplitHostPort(c.nc.LocalAddr().String())
		pr, _ := security.ParsePrincipal(security.ReplaceHost(krb.Principal, host))
		c.sasl.digest = security.NewDigestChallenge(krb.Protection)
		challenge := c.sasl.digest.Bytes()
		return false, reply(&common.RpcSaslProto{State: common.RpcSaslProto_NEGOTIATE.Enum(), Auths: []*common.RpcSaslProto_SaslAuth{
			{Method: proto.String("TOKEN"), Mechanism: proto.String("DIGEST-MD5"), Protocol: proto.String(""),
				ServerId: proto.String("default"), Challenge: challenge},
			{Method: proto.String("KERBEROS"), Mechanism: proto.String("GSSAPI"), Protocol: proto.String(pr.Primary),
				ServerId: proto.String(pr.Instance)},
		}})
	case st == common.RpcSaslProto_INITIATE && c.sasl.state == saslStart:
		if len(m.GetAuths()) == 0 {
			return false, unauthorized(remoteerr.ClassAccessControl, "SASL INITIATE names no authentication method")
		}
		switch method := m.GetAuths()[0].GetMethod(); method {
		case "KERBEROS":
		case "SIMPLE":
			return false, unauthorized(remoteerr.ClassAccessControl, "SIMPLE authentication is not enabled.  Available:[TOKEN, KERBEROS]")
		case "TOKEN":
			return c.tokenSASL(h, m, unauthorized, reply)
		default:
			return false, unauthorized(remoteerr.ClassAccessControl, fmt.Sprintf("unknown authentication method %q", method))
		}
		acc, err := krb.Accept(m.GetToken())
		if err != nil {
			return false, unauthorized(classSasl, "GSS initiate failed: "+err.Error())
		}
		c.sasl.accepted = acc
		c.sasl.offer = krb.Protection
		tok, err := acc.Session.Wrap(security.SecurityLayer(krb.Protection, maxSaslBuf), false)
		if err != nil {
			return false, unauthorized(classSasl, "GSS initiate failed: "+err.Error())
		}
		c.sasl.state = saslInitiated
		return false, reply(&common.RpcSaslProto{State: common.RpcSaslProto_CHALLENGE.Enum(), Token: tok})
	case st == common.RpcSaslProto_RESPONSE && c.sasl.state == saslInitiated:
		msg, _, err := c.sasl.accepted.Session.Unwrap(m.GetToken())
		if err != nil || len(msg) < 4 {
			return false, unauthorized(classSasl, fmt.Sprintf("bad GSSAPI security-layer answer: %v", err))
		}
		q := (security.QOP(msg[0]) & c.sasl.offer).Highest()
		if q == 0 {
			return false, unauthorized(classSasl, "No common protection layer between client and server")
		}
		c.principal, c.qop = c.sasl.accepted.Principal, q
		c.sasl.state = saslDone
		if err := reply(&common.RpcSaslProto{State: common.RpcSaslProto_SUCCESS.Enum()}); err != nil {
			return false, err
		}
		if q != security.QOPAuthentication {
			c.out.Lock()
			c.out.wrap, c.out.seal = c.sasl.accepted.Session, q == security.QOPPrivacy
			c.out.Unlock()
		}
		return true, nil
	default:
		return false, unauthorized(remoteerr.ClassAccessControl, fmt.Sprintf("SASL %v out of order", st))
	}
}

// tokenSASL authenticates a connection with a delegation token: the
// client's DIGEST-MD5 response to the challenge sent with NEGOTIATE,
// whose user name is the base64 of the token's identifier and password
// the base64 of its password. Only qop=auth is offered with tokens.
func (c *serverConn) tokenSASL(h *common.RpcRequestHeaderProto, m *common.RpcSaslProto,
	unauthorized func(class, msg string) error, reply func(*common.RpcSaslProto) error) (bool, error) {
	krb := c.srv.cfg.Kerberos
	tokenPassword := c.srv.cfg.TokenPassword
	shortName := func(owner string) (string, error) { return owner, nil }
	if krb != nil {
		tokenPassword = krb.TokenPassword
		shortName = func(owner string) (string, error) { return krb.Rules.ShortName(owner, krb.DefaultRealm) }
	}
	if tokenPassword == nil {
		return false, unauthorized(remoteerr.ClassAccessControl, "TOKEN authentication (delegation tokens) is not supported by this server")
	}
	if c.sasl.digest == nil {
		return false, unauthorized(classSasl, "DIGEST-MD5: INITIATE with TOKEN before NEGOTIATE")
	}
	var owner string
	var tokenID []byte
	final, _, err := c.sasl.digest.VerifyDigest(m.GetToken(), func(user string) (string, error) {
		ident, err := base64.StdEncoding.DecodeString(user)
		if err != nil {
			return "", fmt.Errorf("DIGEST-MD5: user name is not a base64 token identifier: %v", err)
		}
		pw, o, err := tokenPassword(ident)
		if err != nil {
			return "", err
		}
		owner, tokenID = o, ident
		return base64.StdEncoding.EncodeToString(pw), nil
	})
	c.sasl.digest = nil // one answer per challenge
	if err != nil {
		return false, unauthorized(classSasl, "DIGEST-MD5: "+err.Error())
	}
	user, err := shortName(owner)
	if err != nil {
		return false, unauthorized(classSasl, fmt.Sprintf("token owner %s: %v", owner, err))
	}
	c.sasl.accepted = &security.Accepted{Principal: owner, User: user}
	c.principal, c.qop, c.tokenAuth, c.tokenID = owner, security.QOPAuthentication, true, tokenID
	c.sasl.state = saslDone
	if err := reply(&common.RpcSaslProto{State: common.RpcSaslProto_SUCCESS.Enum(), Token: final}); err != nil {
		return false, err
	}
	return true, nil
}

// dispatch finds the call's method and queues it, blocking while the
// server holds too many request bytes or the call queue is full. Unknown
// protocols and methods are answered at once. size is the frame's length.
func (c *serverConn) dispatch(req *wire.Request, size int) error {
	h := req.Header
	protocol := req.Method.GetDeclaringClassProtocolName()
	svc := c.srv.service(protocol)
	if svc == nil {
		c.sendError(h, common.RpcResponseHeaderProto_ERROR, common.RpcResponseHeaderProto_ERROR_NO_SUCH_PROTOCOL,
			remoteerr.ClassNoSuchProtocol, "Unknown protocol: "+protocol)
		return nil
	}
	method := req.Method.GetMethodName()
	fn := svc.method(method)
	if fn == nil {
		c.sendError(h, common.RpcResponseHeaderProto_ERROR, common.RpcResponseHeaderProto_ERROR_NO_SUCH_METHOD,
			remoteerr.ClassNoSuchMethod, fmt.Sprintf("Unknown method %s called on %s protocol.", method, protocol))
		return nil
	}
	cl := &call{conn: c, header: h, fn: fn, body: req.Body, size: int64(size), queued: c.srv.clk.Now()}
	if !c.srv.requests.acquire(cl.size, c.ctx.Done(), c.stopCh) {
		if c.ctx.Err() != nil {
			return c.ctx.Err()
		}
		return nil // Shutdown: the call was read but is not run (see doc)
	}
	c.inFlight.Add(1)
	c.calls.Add(1)
	c.srv.stats.inFlight.Add(1)
	select {
	case c.srv.queue <- cl:
		return nil
	case <-c.ctx.Done():
		c.callDone(cl)
		return c.ctx.Err()
	}
}

// budget bounds a quantity (request bytes) shared by every connection.
// acquire waits while taking n would pass the limit, except that a single
// holder may always take any amount, so one large call is never stuck.
type budget struct {
	limit int64
	mu    struct {
		sync.Mutex
		used    int64
		waiters int
		changed chan struct{} // closed and replaced on release when waiters > 0
	}
}

func (b *budget) acquire(n int64, done1, done2 <-chan struct{}) bool {
	b.mu.Lock()
	for b.mu.used > 0 && b.mu.used+n > b.limit {
		if b.mu.changed == nil {
			b.mu.changed = make(chan struct{})
		}
		ch := b.mu.changed
		b.mu.waiters++
		b.mu.Unlock()
		select {
		case <-ch:
		case <-done1:
			b.leave()
			return false
		case <-done2:
			b.leave()
			return false
		}
		b.mu.Lock()
		b.mu.waiters--
	}
	b.mu.used += n
	b.mu.Unlock()
	return true
}

func (b *budget) leave() {
	b.mu.Lock()
	b.mu.waiters--
	b.mu.Unlock()
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.mu.used -= n
	if b.mu.waiters > 0 && b.mu.changed != nil {
		close(b.mu.changed)
		b.mu.changed = nil
	}
	b.mu.Unlock()
}

func (b *budget) used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.used
}
