package dtsasl

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/hdfsgo/hdfsgo/internal/security"
)

// Frame limits of the integrity and privacy layers: frames sent carry at
// most maxSend bytes of data (DIGEST-MD5's default maxbuf); a frame read
// may be up to MaxFrame bytes, its buffer growing as its bytes arrive.
const (
	maxSend  = 64 << 10
	MaxFrame = 16 << 20
	readStep = 64 << 10
)

// layerConn carries a connection's bytes in DIGEST-MD5 frames.
type layerConn struct {
	net.Conn
	r     io.Reader
	layer *security.DigestLayer

	// Read side (one reader).
	frame   []byte
	pending []byte
	hdr     [4]byte

	wmu  sync.Mutex
	wbuf []byte
}

func newLayerConn(c net.Conn, r io.Reader, l *security.DigestLayer) *layerConn {
	return &layerConn{Conn: c, r: r, layer: l}
}

func (c *layerConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for len(c.pending) == 0 {
		if err := c.readFrame(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// readFrame reads and unwraps one frame into pending.
func (c *layerConn) readFrame() error {
	if _, err := io.ReadFull(c.r, c.hdr[:]); err != nil {
		return err
	}
	n := int(binary.BigEndian.Uint32(c.hdr[:]))
	if n < c.layer.Overhead() || n > MaxFrame {
		return fmt.Errorf("dtsasl: protected frame of %d bytes (between %d and %d allowed)", n, c.layer.Overhead(), MaxFrame)
	}
	b, err := readFull(c.r, c.frame[:0], n)
	if err != nil {
		return err
	}
	c.frame = b
	msg, err := c.layer.Unwrap(b)
	if err != nil {
		return fmt.Errorf("dtsasl: %w", err)
	}
	c.pending = msg
	return nil
}

// readFull reads exactly n bytes into buf, growing it step by step as the
// bytes arrive, so that a peer announcing a large frame and sending
// little costs what it sent.
func readFull(r io.Reader, buf []byte, n int) ([]byte, error) {
	for len(buf) < n {
		step := min(n-len(buf), readStep)
		if cap(buf)-len(buf) < step {
			grown := make([]byte, len(buf), min(n, max(2*cap(buf), len(buf)+step)))
			copy(grown, buf)
			buf = grown
		}
		m, err := io.ReadFull(r, buf[len(buf):len(buf)+step])
		buf = buf[:len(buf)+m]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return buf, err
		}
	}
	return buf, nil
}

func (c *layerConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	written := 0
	for len(p) > 0 {
		chunk := p[:min(len(p), maxSend)]
		c.wbuf = append(c.wbuf[:0], 0, 0, 0, 0)
		c.wbuf = c.layer.AppendWrap(c.wbuf, chunk)
		binary.BigEndian.PutUint32(c.wbuf, uint32(len(c.wbuf)-4))
		if _, err := c.Conn.Write(c.wbuf); err != nil {
			return written, err
		}
		written += len(chunk)
		p = p[len(chunk):]
	}
	return written, nil
}

// aesConn XORs a connection's bytes with AES/CTR streams.
type aesConn struct {
	net.Conn
	r   io.Reader
	dec cipher.Stream

	wmu  sync.Mutex
	enc  cipher.Stream
	wbuf []byte
}

// newAESConn makes the stream pair of a negotiated cipher option: the
// connection reads with (rKey, rIV) and writes with (wKey, wIV).
func newAESConn(c net.Conn, r io.Reader, rKey, rIV, wKey, wIV []byte) (*aesConn, error) {
	if len(rIV) != aes.BlockSize || len(wIV) != aes.BlockSize {
		return nil, fmt.Errorf("dtsasl: AES/CTR IVs of %d and %d bytes, want %d", len(rIV), len(wIV), aes.BlockSize)
	}
	rb, err := aes.NewCipher(rKey)
	if err != nil {
		return nil, fmt.Errorf("dtsasl: AES key: %w", err)
	}
	wb, err := aes.NewCipher(wKey)
	if err != nil {
		return nil, fmt.Errorf("dtsasl: AES key: %w", err)
	}
	return &aesConn{Conn: c, r: r, dec: cipher.NewCTR(rb, rIV), enc: cipher.NewCTR(wb, wIV)}, nil
}

func (c *aesConn) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.dec.XORKeyStream(p[:n], p[:n])
	return n, err
}

func (c *aesConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	written := 0
	for len(p) > 0 {
		chunk := p[:min(len(p), maxSend)]
		if cap(c.wbuf) < len(chunk) {
			c.wbuf = make([]byte, maxSend)
		}
		b := c.wbuf[:len(chunk)]
		c.enc.XORKeyStream(b, chunk)
		if _, err := c.Conn.Write(b); err != nil {
			return written, err
		}
		written += len(chunk)
		p = p[len(chunk):]
	}
	return written, nil
}

// plainConn reads through the reader that buffered the handshake.
type plainConn struct {
	net.Conn
	r io.Reader
}

func (c *plainConn) Read(p []byte) (int, error) { return c.r.Read(p) }
