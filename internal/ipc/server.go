package ipc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc/wire"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
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
	// Logger receives connection-level events; nil discards them.
	Logger *slog.Logger
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
	return nil
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
	}
}

// Name returns the service's Java protocol name.
func (s *Service) Name() string { return s.name }

func (s *Service) method(name string) methodFunc {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.mu.methods[name]
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
	User       string // effective user from the connection context
	RealUser   string // real user when the connection is proxied, else ""
	Protocol   string // protocol named in the connection context
	ClientID   []byte // the client's 16-byte id (shared, do not modify)
	CallID     int32
	RetryCount int32 // -1 when the client did not send one
	Remote     net.Addr
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
		Protocol:   c.conn.protocol,
		ClientID:   c.header.GetClientId(),
		CallID:     c.header.GetCallId(),
		RetryCount: c.header.GetRetryCount(),
		Remote:     c.conn.nc.RemoteAddr(),
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
}

type stats struct {
	accepted, open, calls, errors, fatal, panics, inFlight atomic.Int64
}

// Server serves Hadoop RPC v9 to any number of connections.
type Server struct {
	cfg      ServerConfig
	log      *slog.Logger
	queue    chan *call
	handlers sync.WaitGroup // handler pool
	conns    sync.WaitGroup // per-connection goroutines and accept loops
	stats    stats

	// hardCtx is cancelled by Close (and by Shutdown when its ctx expires);
	// every connection's ctx derives from it.
	hardCtx    context.Context
	hardCancel context.CancelFunc

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
	s := &Server{cfg: cfg, log: cfg.Logger, queue: make(chan *call, cfg.Handlers*cfg.QueueSizePerHandler)}
	s.hardCtx, s.hardCancel = context.WithCancel(context.Background())
	s.mu.services = make(map[string]*Service)
	s.mu.listeners = make(map[net.Listener]struct{})
	s.mu.conns = make(map[*serverConn]struct{})
	s.handlers.Add(cfg.Handlers)
	for range cfg.Handlers {
		go s.handlerLoop()
	}
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
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			s.mu.Lock()
			delete(s.mu.listeners, l)
			s.mu.Unlock()
			return err
		}
		delay = 0
		if !s.startConn(nc) {
			nc.Close()
			return ErrServerClosed
		}
	}
}

func (s *Server) startConn(nc net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closing {
		return false
	}
	c := newServerConn(s, nc)
	s.mu.conns[c] = struct{}{}
	s.stats.accepted.Add(1)
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
}

// call is one request waiting for or running in a handler.
type call struct {
	conn   *serverConn
	header *common.RpcRequestHeaderProto
	fn     methodFunc
	body   []byte
}

func (s *Server) handlerLoop() {
	defer s.handlers.Done()
	for c := range s.queue {
		s.runCall(c)
	}
}

func (s *Server) runCall(c *call) {
	conn := c.conn
	defer conn.callDone()
	if conn.ctx.Err() != nil {
		return // the connection died while the call waited; nobody listens
	}
	ctx := context.WithValue(conn.ctx, callerKey{}, c)
	resp, err := s.invoke(ctx, c)
	if err != nil {
		var de *decodeError
		if errors.As(err, &de) {
			conn.sendError(c.header, common.RpcResponseHeaderProto_ERROR, common.RpcResponseHeaderProto_ERROR_RPC_SERVER, classRPCServer, de.Error())
			return
		}
		class, msg := remoteerr.ClassOf(err)
		conn.sendError(c.header, common.RpcResponseHeaderProto_ERROR, common.RpcResponseHeaderProto_ERROR_APPLICATION, class, msg)
		return
	}
	conn.sendSuccess(c.header, resp)
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

	inFlight sync.WaitGroup // calls read and not yet answered
	wake     chan struct{}  // cap 1: responses are pending
	stopRead atomic.Bool    // set by Shutdown

	out struct {
		sync.Mutex
		buf        []byte // encoded response frames not yet written
		finished   bool   // the reader is done and every call answered
		closeAfter bool   // close the connection once buf is written (FATAL)
	}
}

func newServerConn(s *Server, nc net.Conn) *serverConn {
	c := &serverConn{srv: s, nc: nc, br: bufio.NewReaderSize(nc, 64<<10), wake: make(chan struct{}, 1)}
	c.ctx, c.cancel = context.WithCancel(s.hardCtx)
	return c
}

func (c *serverConn) callDone() {
	c.srv.stats.inFlight.Add(-1)
	c.inFlight.Done()
}

// stopReading makes the reader stop at the next frame boundary it reaches
// (or at once if it is blocked waiting for bytes). Calls already read run
// to completion.
func (c *serverConn) stopReading() {
	c.stopRead.Store(true)
	c.nc.SetReadDeadline(time.Now())
}

func (c *serverConn) readLoop() {
	defer c.srv.conns.Done()
	err := c.serveReads()
	if err != nil && c.ctx.Err() == nil && !c.stopRead.Load() && !errors.Is(err, io.EOF) {
		c.srv.log.Debug("ipc: connection ended", "remote", c.nc.RemoteAddr().String(), "err", err)
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
		buf := c.out.buf
		c.out.buf = spare[:0]
		finished, closeAfter := c.out.finished, c.out.closeAfter
		c.out.Unlock()
		if len(buf) > 0 {
			if _, err := c.nc.Write(buf); err != nil {
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
// the reader has finished (so no handler still needs this connection).
func (c *serverConn) drainAfterCancel() {
	c.nc.Close() // unblock the reader
	for {
		c.out.Lock()
		finished := c.out.finished
		c.out.buf = c.out.buf[:0]
		c.out.Unlock()
		if finished {
			return
		}
		<-c.wake
	}
}

// enqueue appends one response frame to the output buffer.
func (c *serverConn) enqueue(h *common.RpcResponseHeaderProto, body proto.Message, closeAfter bool) error {
	c.out.Lock()
	var err error
	if c.out.closeAfter {
		c.out.Unlock()
		return nil
	}
	n := len(c.out.buf)
	c.out.buf, err = wire.AppendResponse(c.out.buf, h, body)
	if err != nil {
		c.out.buf = c.out.buf[:n]
	}
	if err == nil && closeAfter {
		c.out.closeAfter = true
	}
	c.out.Unlock()
	if err == nil {
		c.signal()
	}
	return err
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
	h := c.responseHeader(req, common.RpcResponseHeaderProto_SUCCESS)
	if err := c.enqueue(h, body, false); err != nil {
		class, msg := remoteerr.ClassIOException, "cannot encode response: "+err.Error()
		c.sendError(req, common.RpcResponseHeaderProto_ERROR, common.RpcResponseHeaderProto_ERROR_SERIALIZING_RESPONSE, class, msg)
		return
	}
	c.srv.stats.calls.Add(1)
}

func (c *serverConn) sendError(req *common.RpcRequestHeaderProto, status common.RpcResponseHeaderProto_RpcStatusProto,
	detail common.RpcResponseHeaderProto_RpcErrorCodeProto, class, msg string) {
	h := c.responseHeader(req, status)
	h.ExceptionClassName = proto.String(class)
	h.ErrorMsg = proto.String(msg)
	h.ErrorDetail = detail.Enum()
	fatal := status == common.RpcResponseHeaderProto_FATAL
	if err := c.enqueue(h, nil, fatal); err != nil {
		c.srv.log.Error("ipc: cannot encode error response", "err", err)
		return
	}
	if fatal {
		c.srv.stats.fatal.Add(1)
	} else {
		c.srv.stats.calls.Add(1)
		c.srv.stats.errors.Add(1)
	}
}

// fatal answers a protocol violation and makes the connection close once
// the answer is written. It returns an error for the reader to stop with.
func (c *serverConn) fatal(req *common.RpcRequestHeaderProto, detail common.RpcResponseHeaderProto_RpcErrorCodeProto, class, msg string) error {
	c.srv.log.Info("ipc: closing connection after fatal error", "remote", c.nc.RemoteAddr().String(),
		"detail", detail.String(), "error", msg)
	c.sendError(req, common.RpcResponseHeaderProto_FATAL, detail, class, msg)
	return fmt.Errorf("%w: %s", ErrProtocol, msg)
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
		return err
	}
	sasl := p.AuthProtocol == wire.AuthSASL
	haveContext := false
	maxLen := c.srv.cfg.MaxDataLength
	for {
		if c.stopRead.Load() {
			return nil
		}
		frame, err := wire.ReadFrame(c.br, maxLen, nil)
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
			if !sasl {
				return c.fatal(h, common.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, remoteerr.ClassAccessControl,
					"SASL protocol not requested by client")
			}
			var m common.RpcSaslProto
			if err := proto.Unmarshal(req.Body, &m); err != nil {
				return c.fatal(h, common.RpcResponseHeaderProto_FATAL_DESERIALIZING_REQUEST, classFatal, "bad SASL message: "+err.Error())
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
			haveContext = true
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
			if err := c.dispatch(req); err != nil {
				return err
			}
		}
	}
}

// dispatch finds the call's method and queues it, blocking while the call
// queue is full. Unknown protocols and methods are answered at once.
func (c *serverConn) dispatch(req *wire.Request) error {
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
	cl := &call{conn: c, header: h, fn: fn, body: req.Body}
	c.inFlight.Add(1)
	c.srv.stats.inFlight.Add(1)
	select {
	case c.srv.queue <- cl:
		return nil
	case <-c.ctx.Done():
		c.callDone()
		return c.ctx.Err()
	}
}
