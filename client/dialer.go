package client

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// dataDialer connects to DataNodes' streaming servers. With a domain socket
// path configured (Options.DomainSocketPath) it connects to a DataNode on
// this host through its UNIX domain socket, and to the others over TCP. A
// domain socket that cannot be reached is left alone for
// domainRetryAfter (Hadoop's dfs.client.domain.socket.disable.interval.seconds
// default) and TCP used meanwhile. A nil *dataDialer dials TCP only.
type dataDialer struct {
	socketPath string // the pattern: "_PORT" becomes the DataNode's TCP port
	now        func() time.Time

	mu struct {
		sync.Mutex
		local  map[string]bool      // IP → is an address of this host
		failed map[string]time.Time // socket path → when connecting failed
	}
}

// socketBuffer is the send buffer asked for on domain socket connections.
const socketBuffer = 4 << 20

// domainRetryAfter is how long a domain socket that failed is not tried.
const domainRetryAfter = 10 * time.Minute

func newDataDialer(socketPath string) *dataDialer {
	if socketPath == "" {
		return nil
	}
	d := &dataDialer{socketPath: socketPath, now: time.Now}
	d.mu.local = map[string]bool{}
	d.mu.failed = map[string]time.Time{}
	return d
}

// dial connects to the DataNode whose streaming address is addr
// (host:port). ctx's deadline, if any, becomes the connection's.
func (d *dataDialer) dial(ctx context.Context, addr string) (net.Conn, error) {
	var c net.Conn
	if path := d.localPath(addr); path != "" {
		var nd net.Dialer
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		uc, err := nd.DialContext(dctx, "unix", path)
		cancel()
		if err == nil {
			// The default send buffer of a UNIX socket (208 KiB) keeps
			// less than a packet batch in flight; the kernel caps this at
			// net.core.wmem_max.
			_ = uc.(*net.UnixConn).SetWriteBuffer(socketBuffer)
			c = uc
		} else {
			d.mu.Lock()
			d.mu.failed[path] = d.now()
			d.mu.Unlock()
		}
	}
	if c == nil {
		nd := net.Dialer{Timeout: dialTimeout}
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

// localPath is the domain socket to reach addr by, "" for TCP.
func (d *dataDialer) localPath(addr string) string {
	if d == nil {
		return ""
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if _, err := strconv.Atoi(port); err != nil {
		return ""
	}
	path := strings.ReplaceAll(d.socketPath, "_PORT", port)
	d.mu.Lock()
	defer d.mu.Unlock()
	if at, ok := d.mu.failed[path]; ok {
		if d.now().Sub(at) < domainRetryAfter {
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
