package testtool

import (
	"bytes"
	"context"
	"net"
	"sync"
)

// Capture is a recording TCP proxy on loopback, the test's stand-in for a
// packet capture: each connection opened through Dial goes to a listener
// of its own, which forwards it to the real address and keeps every byte
// of both directions. Safe for concurrent use.
type Capture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *Capture) record(p []byte) {
	c.mu.Lock()
	c.buf.Write(p)
	c.mu.Unlock()
}

// Contains reports whether b appears in the bytes recorded so far.
func (c *Capture) Contains(b []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Contains(c.buf.Bytes(), b)
}

// Len is the number of bytes recorded so far.
func (c *Capture) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Len()
}

// Dial is a DialContext that reaches addr through a new proxy listener on
// 127.0.0.1. The proxy's goroutines end when either side closes.
func (c *Capture) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	up, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		l.Close()
		return nil, err
	}
	go func() {
		defer l.Close()
		down, err := l.Accept()
		if err != nil {
			up.Close()
			return
		}
		pipe := func(dst, src net.Conn) {
			buf := make([]byte, 32<<10)
			for {
				n, err := src.Read(buf)
				if n > 0 {
					c.record(buf[:n])
					if _, werr := dst.Write(buf[:n]); werr != nil {
						break
					}
				}
				if err != nil {
					break
				}
			}
			dst.Close()
			src.Close()
		}
		go pipe(up, down)
		pipe(down, up)
	}()
	return (&net.Dialer{}).DialContext(ctx, "tcp", l.Addr().String())
}
