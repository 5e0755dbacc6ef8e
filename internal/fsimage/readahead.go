package fsimage

import (
	"crypto/md5"
	"io"
)

// Read-ahead of an image file being loaded.
const (
	aheadChunk = 1 << 20 // bytes read and hashed at a time
	aheadDepth = 4       // chunks that may wait for the decoder
)

// hashAhead reads a file in its own goroutine, chunk by chunk, and computes
// its MD5 there, so that the goroutine decoding the image and building the
// namespace does neither (the MD5 of a 10-million-inode image alone is half
// a second of one core). Created and closed by loadOne; close stops the
// goroutine and waits for it.
type hashAhead struct {
	ch   chan []byte
	free chan []byte
	stop chan struct{}
	done chan struct{}
	cur  []byte
	last []byte // chunk handed out before cur, to reuse

	// Set by the goroutine before done is closed.
	err error // io.EOF after the whole file was read
	sum [16]byte
}

func newHashAhead(r io.Reader) *hashAhead {
	a := &hashAhead{ch: make(chan []byte, aheadDepth), free: make(chan []byte, aheadDepth+2),
		stop: make(chan struct{}), done: make(chan struct{})}
	go a.run(r)
	return a
}

func (a *hashAhead) run(r io.Reader) {
	defer close(a.done)
	defer close(a.ch)
	h := md5.New()
	for {
		var buf []byte
		select {
		case buf = <-a.free:
		default:
			buf = make([]byte, aheadChunk)
		}
		n, err := io.ReadFull(r, buf[:aheadChunk])
		if n > 0 {
			h.Write(buf[:n])
			select {
			case a.ch <- buf[:n]:
			case <-a.stop:
				a.err = io.ErrClosedPipe
				return
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			copy(a.sum[:], h.Sum(nil))
			a.err = io.EOF
			return
		}
		if err != nil {
			a.err = err
			return
		}
	}
}

// Read implements io.Reader over the chunks in file order.
func (a *hashAhead) Read(p []byte) (int, error) {
	for len(a.cur) == 0 {
		b, ok := <-a.ch
		if !ok {
			return 0, a.err // the channel is closed after err is set
		}
		if a.last != nil {
			select {
			case a.free <- a.last[:cap(a.last)]:
			default:
			}
		}
		a.cur, a.last = b, b
	}
	n := copy(p, a.cur)
	a.cur = a.cur[n:]
	return n, nil
}

// finish reads the rest of the file (bytes after what the decoder took
// count too) and returns its MD5.
func (a *hashAhead) finish() ([16]byte, error) {
	for range a.ch {
	}
	<-a.done
	if a.err != io.EOF {
		return [16]byte{}, a.err
	}
	return a.sum, nil
}

// close stops the goroutine and waits for it.
func (a *hashAhead) close() {
	select {
	case <-a.stop:
	default:
		close(a.stop)
	}
	<-a.done
}
