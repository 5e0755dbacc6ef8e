package imagetransfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
)

// exactReader passes through exactly n bytes of r: it fails with ErrLength
// when r ends early or holds more.
type exactReader struct {
	r        io.Reader
	declared int64
	left     int64
	what     string // "upload of fsimage_…", for the error
}

func newExactReader(r io.Reader, n int64, what string) *exactReader {
	return &exactReader{r: r, declared: n, left: n, what: what}
}

func (e *exactReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if e.left == 0 {
		var one [1]byte
		n, err := io.ReadFull(e.r, one[:])
		if n > 0 {
			return 0, fmt.Errorf("%w: %s is longer than the declared %d bytes", ErrLength, e.what, e.declared)
		}
		if err == io.EOF {
			return 0, io.EOF
		}
		return 0, e.cut(err)
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	switch {
	case err == nil:
	case err == io.EOF && e.left == 0:
		err = nil // the probe above returns the EOF
	default:
		err = e.cut(err)
	}
	return n, err
}

// cut describes a body that stopped before its end.
func (e *exactReader) cut(err error) error {
	got := e.declared - e.left
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %s ended after %d of %d bytes", ErrLength, e.what, got, e.declared)
	}
	return fmt.Errorf("imagetransfer: %s: after %d of %d bytes: %w", e.what, got, e.declared, err)
}

// chunkReader hands out at most chunk bytes per Read and, around each read,
// refreshes a progress timeout and pays the throttle for what was read.
type chunkReader struct {
	ctx   context.Context
	r     io.Reader
	chunk int
	kick  func() // called before each read; nil for none
	pace  pacer
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(p) > c.chunk {
		p = p[:c.chunk]
	}
	if c.kick != nil {
		c.kick()
	}
	n, err := c.r.Read(p)
	if perr := c.pace.wait(c.ctx, n); perr != nil && err == nil {
		err = perr
	}
	return n, err
}

// watchdog cancels a request when nothing moved for d. Every kick restarts
// the wait. The timer it arms runs its function in its own goroutine only
// when it fires; stop disarms it.
type watchdog struct {
	d     time.Duration
	t     clock.Timer // nil when d is 0 (no timeout)
	fired atomic.Bool
}

func startWatchdog(clk clock.Clock, d time.Duration, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{d: d}
	if d > 0 {
		w.t = clk.AfterFunc(d, func() {
			w.fired.Store(true)
			cancel(fmt.Errorf("%w (%v)", ErrTimeout, d))
		})
	}
	return w
}

func (w *watchdog) kick() {
	if w.t != nil && !w.fired.Load() {
		w.t.Reset(w.d)
	}
}

func (w *watchdog) stop() {
	if w.t != nil {
		w.t.Stop()
	}
}

// deadlines refreshes a server connection's read or write deadline before
// each transfer step, so a peer that stops sending or reading is cut off
// after the timeout instead of holding the handler forever. Deadlines are
// wall-clock times of the socket, so they come from time.Now. A response
// writer that cannot take deadlines (a wrapper without Unwrap) is reported
// once through unsupported, and the transfer goes on without them.
type deadlines struct {
	rc          *http.ResponseController
	d           time.Duration
	unsupported func(error)
	warned      bool
}

func newDeadlines(w http.ResponseWriter, d time.Duration, unsupported func(error)) *deadlines {
	return &deadlines{rc: http.NewResponseController(w), d: d, unsupported: unsupported}
}

func (dl *deadlines) check(err error) {
	if err != nil && !dl.warned {
		dl.warned = true
		dl.unsupported(err)
	}
}

func (dl *deadlines) read() {
	if dl.d > 0 {
		dl.check(dl.rc.SetReadDeadline(time.Now().Add(dl.d)))
	}
}

func (dl *deadlines) write() {
	if dl.d > 0 {
		dl.check(dl.rc.SetWriteDeadline(time.Now().Add(dl.d)))
	}
}

// clear removes both deadlines, so that they do not outlive the request on a
// kept-alive connection.
func (dl *deadlines) clear() {
	if dl.d > 0 && !dl.warned {
		_ = dl.rc.SetReadDeadline(time.Time{})
		_ = dl.rc.SetWriteDeadline(time.Time{})
	}
}

// headerPeek is how much of an image is read to decode its header: the
// 12-byte preamble and the header frame (a few dozen bytes).
const headerPeek = 512

// peekHeader decodes the header at the start of an image of size bytes read
// from r, and returns a reader that yields the whole image again.
func peekHeader(r io.Reader, size int64) (fsimage.Header, io.Reader, error) {
	n := int64(headerPeek)
	if size < n {
		n = size
	}
	prefix := make([]byte, n)
	if _, err := io.ReadFull(r, prefix); err != nil {
		return fsimage.Header{}, nil, err
	}
	_, h, err := fsimage.NewReader(bytes.NewReader(prefix))
	if err != nil {
		return fsimage.Header{}, nil, err
	}
	return h, io.MultiReader(bytes.NewReader(prefix), r), nil
}
