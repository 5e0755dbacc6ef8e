package ipc

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/hdfsgo/hdfsgo/internal/ipc/wire"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// ClientConfig configures a Client.
type ClientConfig struct {
	// Addresses of the servers, in failover order ("host:port").
	Addresses []string
	// User is the effective user sent in the connection context.
	User string
	// RealUser, when set, is sent as the real user (proxy connections:
	// the connection acts as User for RealUser). With Kerberos the
	// ticket's principal is the real user; setting RealUser then makes
	// the context name User as the effective user.
	RealUser string
	// Protocol is the Java protocol name, e.g.
	// "org.apache.hadoop.hdfs.protocol.ClientProtocol".
	Protocol string
	// ClientID is the 16-byte id sent with every call; the default is 16
	// random characters from [A-Za-z0-9], like the stock clients.
	ClientID []byte
	// DialTimeout bounds each connection attempt
	// (ipc.client.connect.timeout, default 20 s).
	DialTimeout time.Duration
	// MaxRetries bounds how many times one call is retried after
	// connection failures, StandbyException and RetriableException
	// (default 10; negative means none).
	MaxRetries int
	// RetryBase is the first backoff; it doubles per retry up to 30×
	// RetryBase (default 100 ms).
	RetryBase time.Duration
	// Idempotent reports whether method may be resent after its request
	// may already have reached the server (see the package doc). nil
	// means no method is.
	Idempotent func(method string) bool
	// ConnectRetry, when its Interval is set and there is one address,
	// replaces the backoff for connection failures by Hadoop's policy
	// for them (see ConnectRetry).
	ConnectRetry ConnectRetry
	// OnFailover, if set, is called when the client moves from one address
	// to the next.
	OnFailover func(from, to string)
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
	// Kerberos, when set, authenticates every connection with SASL
	// GSSAPI (hadoop.security.authentication=kerberos); the connection
	// context then names the ticket's principal and User is not sent.
	Kerberos *security.Initiator
	// Token, when set (and Kerberos is not), authenticates every
	// connection with this delegation token (SASL DIGEST-MD5, Hadoop's
	// TOKEN method, qop=auth); TokenUser is the token's owner, sent in the
	// connection context.
	Token     *common.TokenProto
	TokenUser string
	// Protection is the set of levels the client accepts
	// (hadoop.rpc.protection); the strongest one the server also offers
	// is used. Zero accepts any.
	Protection security.QOP
}

// ConnectRetry is Hadoop's retry policy for failed connection attempts
// (RetryUpToMaximumCountWithFixedSleep): a refused or timed-out dial is
// tried again MaxRetries times (ipc.client.connect.max.retries), Interval
// apart (ipc.client.connect.retry.interval), and Notify hears Hadoop's
// "Retrying connect to server: ..." line before each retry. An address
// whose host does not resolve fails at once. The call then fails with a
// *ConnectError.
type ConnectRetry struct {
	MaxRetries int
	Interval   time.Duration
	Notify     func(msg string)
}

// ConnectError is the failure of a call that never reached its server:
// its text is Hadoop's (an UnknownHostException, or a ConnectException
// with the address), and it matches ErrRetriesExhausted and the network
// error with errors.Is.
type ConnectError struct {
	Addr    string // the address as configured, host:port
	Unknown bool   // the host did not resolve
	Err     error  // the last dial error
}

func (e *ConnectError) Error() string {
	host, _, _ := net.SplitHostPort(e.Addr)
	if e.Unknown {
		return "java.net.UnknownHostException: " + host
	}
	var sys *os.SyscallError
	cause := e.Err.Error()
	if errors.As(e.Err, &sys) && errors.Is(sys.Err, syscall.ECONNREFUSED) {
		return fmt.Sprintf("Call From %s to %s failed on connection exception: java.net.ConnectException: Connection refused; For more details see:  http://wiki.apache.org/hadoop/ConnectionRefused", localHostName(), e.Addr)
	}
	return fmt.Sprintf("Call From %s to %s failed on socket exception: %s", localHostName(), e.Addr, cause)
}

func (e *ConnectError) Unwrap() []error { return []error{ErrRetriesExhausted, e.Err} }

// localHostName is this host as Hadoop names it in connection errors:
// hostname/address.
func localHostName() string {
	h, err := os.Hostname()
	if err != nil {
		return "localhost/127.0.0.1"
	}
	ip := "127.0.0.1"
	if addrs, err := net.LookupHost(h); err == nil && len(addrs) > 0 {
		ip = addrs[0]
	}
	return h + "/" + ip
}

// serverName is addr as Hadoop prints a server's address: host/ip:port.
func serverName(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	ip := host
	if net.ParseIP(host) == nil {
		if addrs, err := net.LookupHost(host); err == nil && len(addrs) > 0 {
			ip = addrs[0]
		}
	}
	return host + "/" + net.JoinHostPort(ip, port)
}

// isUnknownHost reports whether err is a name that does not resolve.
func isUnknownHost(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns) && dns.IsNotFound
}

const clientIDChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// NewClientID returns 16 random characters from [A-Za-z0-9].
func NewClientID() []byte {
	id := make([]byte, 16)
	rand.Read(id)
	for i, b := range id {
		id[i] = clientIDChars[int(b)%len(clientIDChars)]
	}
	return id
}

// Client calls one protocol on a list of servers. It keeps one connection
// (to the current address) shared by all concurrent callers; calls are
// multiplexed by call id. It is safe for concurrent use.
type Client struct {
	cfg     ClientConfig
	log     *slog.Logger
	nextID  atomic.Int32
	readers sync.WaitGroup
	// methodHeaders caches encoded RequestHeaderProtos by method name.
	methodHeaders sync.Map

	mu struct {
		sync.Mutex
		conn    *clientConn // nil until dialled or after a failure
		dialing chan struct{}
		current int // index into cfg.Addresses
		closed  bool
	}
}

// NewClient returns a client; it dials lazily on the first call.
func NewClient(cfg ClientConfig) *Client {
	if len(cfg.ClientID) == 0 {
		cfg.ClientID = NewClientID()
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 20 * time.Second
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 10
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = 100 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Client{cfg: cfg, log: cfg.Logger}
}

// ClientID returns the id sent with every call.
func (c *Client) ClientID() []byte { return c.cfg.ClientID }

// Current returns the address calls go to now.
func (c *Client) Current() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.cfg.Addresses) == 0 {
		return ""
	}
	return c.cfg.Addresses[c.mu.current]
}

// Close closes the connection and fails the calls in flight with
// ErrClientClosed; it waits for the connection's reader goroutine.
func (c *Client) Close() error {
	c.mu.Lock()
	c.mu.closed = true
	cc := c.mu.conn
	c.mu.conn = nil
	c.mu.Unlock()
	if cc != nil {
		cc.fail(ErrClientClosed)
	}
	c.readers.Wait()
	return nil
}

// failover drops cc (if it is still the current connection) and moves to
// the next address.
func (c *Client) failover(cc *clientConn, cause error) {
	c.mu.Lock()
	if cc != nil && c.mu.conn != cc {
		c.mu.Unlock()
		return // someone else already moved on
	}
	c.mu.conn = nil
	from := c.cfg.Addresses[c.mu.current]
	c.mu.current = (c.mu.current + 1) % len(c.cfg.Addresses)
	to := c.cfg.Addresses[c.mu.current]
	c.mu.Unlock()
	if cc != nil {
		cc.fail(fmt.Errorf("%w: %v", ErrConnBroken, cause))
	}
	c.log.Info("ipc: failover", "from", from, "to", to, "cause", cause)
	if c.cfg.OnFailover != nil && from != to {
		c.cfg.OnFailover(from, to)
	}
}

// dropConn forgets cc (if still current) without moving to another
// address; the next call redials.
func (c *Client) dropConn(cc *clientConn, cause error) {
	c.mu.Lock()
	if c.mu.conn == cc {
		c.mu.conn = nil
	}
	c.mu.Unlock()
	cc.fail(fmt.Errorf("%w: %v", ErrConnBroken, cause))
}

// failoverFrom moves to the next address if addr is still the current one
// (concurrent callers that failed to dial the same address move once).
func (c *Client) failoverFrom(addr string, cause error) {
	c.mu.Lock()
	if c.mu.conn != nil || c.cfg.Addresses[c.mu.current] != addr {
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.failover(nil, cause)
}

// conn returns the current connection, dialling it if needed. Concurrent
// callers share one dial.
func (c *Client) conn(ctx context.Context) (*clientConn, error) {
	for {
		c.mu.Lock()
		if c.mu.closed {
			c.mu.Unlock()
			return nil, ErrClientClosed
		}
		if len(c.cfg.Addresses) == 0 {
			c.mu.Unlock()
			return nil, ErrNoAddresses
		}
		if cc := c.mu.conn; cc != nil {
			if cc.failure() == nil {
				c.mu.Unlock()
				return cc, nil
			}
			// The connection died while idle (e.g. the server restarted):
			// redial the same address; only a failed dial moves on.
			c.mu.conn = nil
		}
		if wait := c.mu.dialing; wait != nil {
			c.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		c.mu.dialing = done
		addr := c.cfg.Addresses[c.mu.current]
		c.mu.Unlock()

		cc, err := c.dial(ctx, addr)

		c.mu.Lock()
		c.mu.dialing = nil
		close(done)
		if err == nil {
			if c.mu.closed {
				c.mu.Unlock()
				cc.fail(ErrClientClosed)
				return nil, ErrClientClosed
			}
			c.mu.conn = cc
			c.readers.Add(1)
			go cc.readLoop(&c.readers)
		}
		c.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return cc, nil
	}
}

// dialError marks a failure to establish a connection: nothing was sent.
type dialError struct {
	addr string
	err  error
}

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

func (c *Client) dial(ctx context.Context, addr string) (*clientConn, error) {
	d := net.Dialer{Timeout: c.cfg.DialTimeout, KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, &dialError{addr, err}
	}
	cc := &clientConn{addr: addr, nc: nc, done: make(chan struct{}), br: bufio.NewReaderSize(nc, 64<<10)}
	cc.mu.pending = make(map[int32]chan callResult)
	user, realUser := c.cfg.User, c.cfg.RealUser
	var hello []byte
	if c.cfg.Kerberos != nil {
		if err := c.kerberosHandshake(ctx, cc); err != nil {
			nc.Close()
			return nil, err
		}
		user, realUser = c.cfg.Kerberos.UserPrincipal(), ""
		if c.cfg.RealUser != "" {
			user = c.cfg.User // a proxy: the server authorizes the ticket's owner to act as User
		}
	} else if c.cfg.Token != nil {
		if err := c.tokenHandshake(ctx, cc); err != nil {
			nc.Close()
			return nil, err
		}
		user, realUser = c.cfg.TokenUser, ""
	} else {
		hello = wire.ClientPreamble().Append(make([]byte, 0, 128))
	}
	hello, err = wire.AppendRequest(hello, wire.RequestHeader(wire.CallIDConnectionContext, c.cfg.ClientID, -1), nil,
		wire.ConnectionContext(user, realUser, c.cfg.Protocol))
	if err != nil {
		nc.Close()
		return nil, err
	}
	if cc.wrap != nil {
		if hello, err = cc.wrapFrames(hello, c.cfg.ClientID); err != nil {
			nc.Close()
			return nil, err
		}
	}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetWriteDeadline(dl)
	}
	if _, err := nc.Write(hello); err != nil {
		nc.Close()
		return nil, &dialError{addr, err}
	}
	nc.SetWriteDeadline(time.Time{})
	return cc, nil
}

// decoders are the hand-written response decoders, by message name
// (RegisterDecoder).
var decoders = map[protoreflect.FullName]func(body []byte, m proto.Message) bool{}

// RegisterDecoder makes Call decode responses of the message type called
// name with dec, which decodes body into m as proto.Unmarshal would and
// reports true, or reports false, leaving m as it was, for proto.Unmarshal
// to decode it. For messages whose decoding shows in profiles (a file's
// status takes a dozen allocations through the generated code). Call it
// from an init function only.
func RegisterDecoder(name protoreflect.FullName, dec func(body []byte, m proto.Message) bool) {
	decoders[name] = dec
}

// Call invokes method with req and decodes the answer into resp. Errors
// from the server are *remoteerr.Error values (errors.Is works with the
// io/fs errors and remoteerr's sentinels); a ctx that ends returns
// ctx.Err() at once and the late answer is discarded.
func (c *Client) Call(ctx context.Context, method string, req, resp proto.Message) error {
	body, err := proto.Marshal(req)
	if err != nil {
		return fmt.Errorf("ipc: encode %s request: %w", method, err)
	}
	callID := c.nextID.Add(1)
	retryCount := int32(-1)
	var lastErr error
	connectRetries := 0
	policy := c.cfg.ConnectRetry
	usePolicy := policy.Interval > 0 && len(c.cfg.Addresses) == 1
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if c.cfg.MaxRetries < 0 || attempt > c.cfg.MaxRetries {
				return fmt.Errorf("%w after %d attempts: %w", ErrRetriesExhausted, attempt, lastErr)
			}
			if err := c.backoff(ctx, attempt); err != nil {
				return err
			}
			retryCount = int32(attempt)
		}
		cc, err := c.conn(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var de *dialError
			if !errors.As(err, &de) {
				return err
			}
			lastErr = err
			if usePolicy {
				if isUnknownHost(err) {
					return &ConnectError{Addr: de.addr, Unknown: true, Err: de.err}
				}
				if connectRetries >= policy.MaxRetries {
					return &ConnectError{Addr: de.addr, Err: de.err}
				}
				if policy.Notify != nil {
					policy.Notify(fmt.Sprintf("Retrying connect to server: %s. Already tried %d time(s); retry policy is RetryUpToMaximumCountWithFixedSleep(maxRetries=%d, sleepTime=%d MILLISECONDS)",
						serverName(de.addr), connectRetries, policy.MaxRetries, policy.Interval.Milliseconds()))
				}
				connectRetries++
				attempt-- // a connection retry is not a call retry
				t := time.NewTimer(policy.Interval)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return ctx.Err()
				}
				continue
			}
			c.failoverFrom(de.addr, err)
			continue
		}
		mh, err := c.methodHeader(method)
		if err != nil {
			return err
		}
		res, sent, err := cc.roundTrip(ctx, callID, retryCount, mh, c.cfg.ClientID, body)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, ErrClientClosed) {
				return err
			}
			var re *remoteerr.Error
			if errors.As(err, &re) {
				// The server refused the connection with a FATAL answer
				// (an authorization or authentication failure): the same
				// request would be refused again.
				c.dropConn(cc, err)
				return re
			}
			lastErr = err
			if !sent {
				// The connection died before this request was queued:
				// redial the same address.
				c.dropConn(cc, err)
				continue
			}
			c.failover(cc, err)
			if c.cfg.Idempotent == nil || !c.cfg.Idempotent(method) {
				return fmt.Errorf("ipc: %s: %w", method, err)
			}
			continue
		}
		h := res.resp.Header
		switch h.GetStatus() {
		case common.RpcResponseHeaderProto_SUCCESS:
			if !res.resp.HasBody {
				return fmt.Errorf("%w: %s: success without a response message", ErrProtocol, method)
			}
			if dec := decoders[resp.ProtoReflect().Descriptor().FullName()]; dec != nil && dec(res.resp.Body, resp) {
				return nil
			}
			if err := proto.Unmarshal(res.resp.Body, resp); err != nil {
				return fmt.Errorf("ipc: decode %s response: %w", method, err)
			}
			return nil
		case common.RpcResponseHeaderProto_FATAL:
			// The server closes the connection after a FATAL answer.
			c.dropConn(cc, fmt.Errorf("fatal response: %s", h.GetErrorMsg()))
			return remoteerr.FromRemote(h.GetExceptionClassName(), h.GetErrorMsg())
		}
		rerr := remoteerr.FromRemote(h.GetExceptionClassName(), h.GetErrorMsg())
		switch {
		case remoteerr.IsStandby(rerr):
			lastErr = rerr
			c.failover(cc, rerr)
			continue
		case remoteerr.IsRetriable(rerr):
			lastErr = rerr
			continue
		}
		return rerr
	}
}

// methodHeader returns the encoded RequestHeaderProto of method, which
// is the same for every call of it.
func (c *Client) methodHeader(method string) ([]byte, error) {
	if b, ok := c.methodHeaders.Load(method); ok {
		return b.([]byte), nil
	}
	b, err := proto.Marshal(wire.MethodHeader(method, c.cfg.Protocol))
	if err != nil {
		return nil, fmt.Errorf("ipc: encode method header: %w", err)
	}
	c.methodHeaders.Store(method, b)
	return b, nil
}

func (c *Client) backoff(ctx context.Context, attempt int) error {
	d := c.cfg.RetryBase << min(attempt-1, 16)
	d = min(d, 30*c.cfg.RetryBase)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type callResult struct {
	resp *wire.Response
}

// clientConn is one connection: callers write their frames under wmu; one
// reader goroutine routes responses to the waiting callers by call id.
type clientConn struct {
	addr string
	nc   net.Conn
	br   *bufio.Reader
	done chan struct{} // closed by fail

	// wrap, when set, protects every frame both ways (SASL integrity or
	// privacy, seal for privacy); set before the connection is shared.
	wrap     *security.Session
	seal     bool
	clientID []byte
	// saslHeader is the encoded request header of the WRAP frames, made
	// by the first wrapFrames.
	saslHeader []byte

	wmu sync.Mutex // guards w
	w   struct {
		buf      []byte // frames queued, not yet written
		spare    []byte // the previous buffer, reused
		flushing bool   // a caller is writing; others only queue
	}

	mu struct {
		sync.Mutex
		pending map[int32]chan callResult
		err     error // set once the connection failed
	}
}

// fail marks the connection dead with err, closes it and wakes every
// waiting caller.
func (cc *clientConn) fail(err error) {
	cc.mu.Lock()
	if cc.mu.err != nil {
		cc.mu.Unlock()
		return
	}
	cc.mu.err = err
	cc.mu.Unlock()
	close(cc.done)
	cc.nc.Close()
}

func (cc *clientConn) failure() error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.mu.err
}

// roundTrip sends one call and waits for its answer. sent reports whether
// any byte of the request may have reached the server.
func (cc *clientConn) roundTrip(ctx context.Context, callID, retryCount int32, methodHeader, clientID, body []byte) (res callResult, sent bool, err error) {
	ch := make(chan callResult, 1)
	cc.mu.Lock()
	if cc.mu.err != nil {
		err := cc.mu.err
		cc.mu.Unlock()
		return res, false, err
	}
	cc.mu.pending[callID] = ch
	cc.mu.Unlock()
	defer func() {
		cc.mu.Lock()
		delete(cc.mu.pending, callID)
		cc.mu.Unlock()
	}()

	sent, err = cc.write(ctx, callID, retryCount, methodHeader, clientID, body)
	if err != nil {
		return res, sent, err
	}
	select {
	case res = <-ch:
		return res, true, nil
	case <-cc.done:
		// A response may have arrived just before the failure.
		select {
		case res = <-ch:
			return res, true, nil
		default:
		}
		return res, true, cc.failure()
	case <-ctx.Done():
		return res, true, ctx.Err()
	}
}

// write queues the call's frame and, unless another caller is already
// writing, writes every queued frame until none is left: concurrent callers
// share write calls. sent reports whether the frame may have reached the
// server (true as soon as it was queued, since a failure of the caller
// that writes it cannot tell which frames got out).
func (cc *clientConn) write(ctx context.Context, callID, retryCount int32, methodHeader, clientID, body []byte) (sent bool, err error) {
	cc.wmu.Lock()
	if err := cc.failure(); err != nil {
		cc.wmu.Unlock()
		return false, err
	}
	start := len(cc.w.buf)
	cc.w.buf = append(cc.w.buf, 0, 0, 0, 0) // the frame length, fixed below
	cc.w.buf = wire.AppendRequestHeader(cc.w.buf, callID, clientID, retryCount)
	// Splice the encoded method header and request in as the second and
	// third messages.
	cc.w.buf = wire.AppendDelimited(cc.w.buf, methodHeader)
	cc.w.buf = wire.AppendDelimited(cc.w.buf, body)
	wire.FixFrameLength(cc.w.buf[start:])
	if cc.w.flushing {
		cc.wmu.Unlock()
		return true, nil
	}
	cc.w.flushing = true
	for len(cc.w.buf) > 0 {
		buf := cc.w.buf
		cc.w.buf = cc.w.spare[:0]
		cc.wmu.Unlock()
		out := buf
		if cc.wrap != nil {
			// One flusher at a time: wrap tokens go out in the order of
			// their sequence numbers.
			var werr error
			if out, werr = cc.wrapFrames(buf, cc.clientID); werr != nil {
				cc.fail(fmt.Errorf("%w: wrap: %v", ErrConnBroken, werr))
				return true, cc.failure()
			}
		}
		if dl, ok := ctx.Deadline(); ok {
			cc.nc.SetWriteDeadline(dl)
		} else {
			cc.nc.SetWriteDeadline(time.Time{})
		}
		_, err := cc.nc.Write(out)
		cc.wmu.Lock()
		if cap(buf) <= 1<<20 {
			cc.w.spare = buf
		}
		if err != nil {
			cc.w.flushing = false
			cc.w.buf = nil
			cc.wmu.Unlock()
			// A partly written frame corrupts the stream for everyone.
			cc.fail(fmt.Errorf("%w: write: %v", ErrConnBroken, err))
			return true, cc.failure()
		}
	}
	cc.w.flushing = false
	cc.wmu.Unlock()
	return true, nil
}

// readLoop routes responses until the connection fails.
// splitFrame takes one whole length-prefixed frame off b.
func splitFrame(b []byte) (frame, rest []byte, ok bool) {
	if len(b) < 4 {
		return nil, b, false
	}
	n := int(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]))
	if n > wire.DefaultMaxDataLength || len(b) < 4+n {
		return nil, b, false
	}
	return b[4 : 4+n : 4+n], b[4+n:], true
}

func (cc *clientConn) readLoop(wg *sync.WaitGroup) {
	defer wg.Done()
	br := cc.br
	var unwrapped []byte // frames unwrapped from SASL WRAP messages
	for {
		var frame []byte
		var err error
		if f, rest, ok := splitFrame(unwrapped); ok {
			frame, unwrapped = f, rest
		} else {
			frame, err = wire.ReadFrame(br, wire.DefaultMaxDataLength, nil)
		}
		if err != nil {
			cc.fail(fmt.Errorf("%w: read: %v", ErrConnBroken, err))
			return
		}
		if cc.wrap != nil {
			msg, wrapped, err := cc.unwrapFrame(frame)
			if err != nil {
				cc.fail(fmt.Errorf("%w: %v", ErrProtocol, err))
				return
			}
			if wrapped {
				unwrapped = append(unwrapped, msg...)
				continue
			}
		}
		resp, err := wire.DecodeResponse(frame)
		if err != nil {
			cc.fail(fmt.Errorf("%w: %v", ErrProtocol, err))
			return
		}
		id := int32(resp.Header.GetCallId())
		cc.mu.Lock()
		ch := cc.mu.pending[id]
		delete(cc.mu.pending, id)
		cc.mu.Unlock()
		if ch != nil {
			ch <- callResult{resp: resp}
			continue
		}
		if resp.Header.GetStatus() == common.RpcResponseHeaderProto_FATAL {
			// A connection-level failure (callId -1): fail every caller.
			err := remoteerr.FromRemote(resp.Header.GetExceptionClassName(), resp.Header.GetErrorMsg())
			cc.fail(fmt.Errorf("%w: %w", ErrConnBroken, err))
			return
		}
		// A late answer to a call whose caller gave up: discard.
	}
}
