package dnconn

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Dialer connects to DataNodes' streaming servers. With a domain socket
// pattern (dfs.domain.socket.path; "_PORT" becomes the DataNode's TCP
// streaming port) it connects to a DataNode on this host through its UNIX
// domain socket, and to the others over TCP. A domain socket that cannot be
// reached is left alone for DomainRetryAfter and TCP used meanwhile. A nil
// *Dialer dials TCP only. Safe for concurrent use.
type Dialer struct {
	pattern string
	timeout time.Duration
	now     func() time.Time

	mu struct {
		sync.Mutex
		local  map[string]bool      // IP → is an address of this host
		failed map[string]time.Time // socket path → when connecting failed
	}
}

// DomainRetryAfter is how long a domain socket that failed is not tried
// (Hadoop's dfs.client.domain.socket.disable.interval.seconds default).
const DomainRetryAfter = 10 * time.Minute

// domainSocketBuffer is the send buffer asked for on domain socket
// connections: the default (208 KiB) keeps less than a batch of packets in
// flight. The kernel caps it at net.core.wmem_max.
const domainSocketBuffer = 4 << 20

// NewDialer returns a Dialer for the domain socket pattern, or nil (TCP
// only) when pattern is empty. timeout bounds each connect.
func NewDialer(pattern string, timeout time.Duration) *Dialer {
	if pattern == "" {
		return nil
	}
	d := &Dialer{pattern: pattern, timeout: timeout, now: time.Now}
	d.mu.local = map[string]bool{}
	d.mu.failed = map[string]time.Time{}
	return d
}

// SetClock replaces the Dialer's clock (tests).
func (d *Dialer) SetClock(now func() time.Time) { d.now = now }

// DomainSocketPath returns pattern with "_PORT" replaced by port.
func DomainSocketPath(pattern string, port int) string {
	return strings.ReplaceAll(pattern, "_PORT", strconv.Itoa(port))
}

// Dial connects to the DataNode whose streaming address is addr
// (host:port), within timeout (nil Dialer: TCP with no timeout of its own)
// and ctx. ctx's deadline, if any, becomes the connection's.
func (d *Dialer) Dial(ctx context.Context, addr string) (net.Conn, error) {
	var timeout time.Duration
	if d != nil {
		timeout = d.timeout
	}
	var c net.Conn
	if path := d.LocalPath(addr); path != "" {
		nd := net.Dialer{Timeout: timeout}
		uc, err := nd.DialContext(ctx, "unix", path)
		if err == nil {
			_ = uc.(*net.UnixConn).SetWriteBuffer(domainSocketBuffer)
			c = uc
		} else {
			d.mu.Lock()
			d.mu.failed[path] = d.now()
			d.mu.Unlock()
		}
	}
	if c == nil {
		nd := net.Dialer{Timeout: timeout}
		tc, err := nd.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		c = tc
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	return c, nil
}

// LocalPath is the domain socket Dial would try for addr, "" for TCP.
func (d *Dialer) LocalPath(addr string) string {
	if d == nil {
		return ""
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return ""
	}
	path := DomainSocketPath(d.pattern, p)
	d.mu.Lock()
	defer d.mu.Unlock()
	if at, ok := d.mu.failed[path]; ok {
		if d.now().Sub(at) < DomainRetryAfter {
			return ""
		}
		delete(d.mu.failed, path)
	}
	local, ok := d.mu.local[host]
	if !ok {
		local = isLocalIP(host)
		d.mu.local[host] = local
	}
	if !local {
		return ""
	}
	return path
}

// isLocalIP reports whether host is a loopback address or an address of one
// of this host's interfaces (Hadoop's test for a node-local DataNode).
func isLocalIP(host string) bool {
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}
