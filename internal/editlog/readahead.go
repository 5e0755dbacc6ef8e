package editlog

import (
	"io"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// readAheadBatch is how many records the read-ahead decodes before handing
// them over; readAheadDepth is how many such batches may wait.
const (
	readAheadBatch = 512
	readAheadDepth = 4
)

// readAhead decodes a segment file's records in its own goroutine, a few
// batches ahead of the caller, so that decoding (checksums, varints, the
// ops' allocations) overlaps applying on another core during start-up
// replay. It hands the records over in order, each with the error Next
// returned; the batch holding the first error is the last. It is used only
// on local segment files, whose Next never waits on anything but the disk.
// Created and closed by readSegment: close stops the goroutine and waits
// for it before the file is closed.
type readAhead struct {
	ch   chan []decoded
	stop chan struct{}
	done chan struct{}
	cur  []decoded
	pos  int
}

type decoded struct {
	txid int64
	o    op.Op
	err  error
}

func newReadAhead(r Reader) *readAhead {
	ra := &readAhead{ch: make(chan []decoded, readAheadDepth), stop: make(chan struct{}), done: make(chan struct{})}
	go ra.run(r)
	return ra
}

func (ra *readAhead) run(r Reader) {
	defer close(ra.done)
	for {
		batch := make([]decoded, 0, readAheadBatch)
		var err error
		for len(batch) < readAheadBatch && err == nil {
			var d decoded
			d.txid, d.o, d.err = r.Next()
			batch = append(batch, d)
			err = d.err
		}
		select {
		case ra.ch <- batch:
		case <-ra.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// Next returns the next record as the Reader's Next did.
func (ra *readAhead) Next() (int64, op.Op, error) {
	for ra.pos >= len(ra.cur) {
		select {
		case b := <-ra.ch:
			ra.cur, ra.pos = b, 0
		case <-ra.done:
			// The goroutine only ends early after handing over an error.
			select {
			case b := <-ra.ch:
				ra.cur, ra.pos = b, 0
			default:
				return 0, nil, io.ErrUnexpectedEOF
			}
		}
	}
	d := ra.cur[ra.pos]
	ra.cur[ra.pos] = decoded{}
	ra.pos++
	return d.txid, d.o, d.err
}

// close stops the goroutine and waits for it.
func (ra *readAhead) close() {
	close(ra.stop)
	<-ra.done
}
