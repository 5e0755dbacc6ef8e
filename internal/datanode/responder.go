package datanode

import (
	"bufio"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// ackItem is a packet written locally, waiting for its ack to go upstream.
type ackItem struct {
	seqno  int64
	end    int64 // block offset after the packet (0 for heartbeats)
	status hdfs.Status
	last   bool // the last packet, or a failed one: nothing follows
}

// responder is the ack side of one pipeline stage (Hadoop's
// PacketResponder): for each packet, in order, it waits for the downstream
// ack (if there is a downstream) and sends upstream this node's status
// followed by the downstream's replies. It owns writes to the upstream
// connection and reads from the downstream one.
//
// With a downstream it runs as its own goroutine (run), fed through q. At the
// pipeline's tail there is nothing to wait for, and the receiving goroutine
// calls handle itself right after storing each batch of packets (inline):
// the acks go out as promptly and in the same order, without a goroutine
// hand-off per packet.
//
// handle only encodes an ack; flushAcks sends the acks encoded so far in one
// write. The inline responder is flushed at the end of each batch; run
// flushes whenever it would otherwise wait: for the next item, or for a
// downstream ack not yet received.
type responder struct {
	up           net.Conn
	mirror       *bufio.Reader // nil at the pipeline's tail
	mirrorFailed atomic.Bool
	w            replicaSink
	inline       bool
	q            chan ackItem  // nil when inline
	done         chan struct{} // nil when inline
	err          error         // set before done is closed (or handle returns false)

	// Owned by whoever calls handle (run's goroutine, or the receiver inline).
	finished bool // handle returned false: nothing more is sent
	down     datatransfer.PipelineAck
	ack      datatransfer.PipelineAck
	buf      []byte // acks encoded, not yet sent
	sendErr  error  // the upstream write failed: nothing more is sent
	mirrorOK bool
}

func newResponder(up net.Conn, mirror *bufio.Reader, w replicaSink) *responder {
	r := &responder{up: up, mirror: mirror, w: w, mirrorOK: mirror != nil,
		ack: datatransfer.PipelineAck{Replies: make([]hdfs.Status, 0, 8)}, buf: make([]byte, 0, maxPendingAcks+64)}
	if mirror == nil {
		r.inline = true
	} else {
		r.q = make(chan ackItem, ackQueueLen)
		r.done = make(chan struct{})
	}
	return r
}

func (r *responder) run() {
	defer close(r.done)
	for {
		var it ackItem
		var ok bool
		select {
		case it, ok = <-r.q:
		default:
			if r.flushAcks() != nil {
				return
			}
			it, ok = <-r.q
		}
		if !ok {
			_ = r.flushAcks()
			return
		}
		if !r.handle(it) {
			return
		}
	}
}

// maxPendingAcks is how many encoded bytes of acks wait at most for a
// flush.
const maxPendingAcks = 4 << 10

// flushAcks sends the acks handled since the last flush. After a failure
// nothing more is sent and the error is kept in r.err.
func (r *responder) flushAcks() error {
	if len(r.buf) == 0 {
		return r.sendErr
	}
	if r.sendErr == nil {
		_ = r.up.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := r.up.Write(r.buf); err != nil {
			r.sendErr = fmt.Errorf("datanode: sending ack upstream: %w", err)
			if r.err == nil {
				r.err = r.sendErr
			}
		}
	}
	r.buf = r.buf[:0]
	return r.sendErr
}

// handle answers one packet upstream. It returns false once nothing more may
// be sent: after the last packet, a failed one, or an error (left in r.err);
// the acks encoded so far have then been sent.
func (r *responder) handle(it ackItem) bool {
	if r.finished {
		return false
	}
	if !r.handleOnce(it) || len(r.buf) >= maxPendingAcks && r.flushAcks() != nil {
		r.finished = true
		_ = r.flushAcks()
		return false
	}
	return true
}

func (r *responder) handleOnce(it ackItem) bool {
	ack := &r.ack
	ack.Seqno = it.seqno
	ack.Replies = append(ack.Replies[:0], it.status)
	if it.status == hdfs.Status_SUCCESS && r.mirror != nil {
		if r.mirrorOK && !r.mirrorFailed.Load() {
			if r.mirror.Buffered() == 0 && r.flushAcks() != nil {
				return false
			}
			down := &r.down
			err := datatransfer.ReadAck(r.mirror, datatransfer.DefaultMaxMessageSize, down)
			switch {
			case err != nil:
				r.mirrorOK = false
				ack.Replies = append(ack.Replies, hdfs.Status_ERROR)
			case down.Seqno != it.seqno:
				r.mirrorOK = false
				err = fmt.Errorf("datanode: downstream acked seqno %d, expected %d", down.Seqno, it.seqno)
				ack.Replies = append(ack.Replies, hdfs.Status_ERROR)
			default:
				ack.Replies = append(ack.Replies, down.Replies...)
			}
			if err != nil && r.err == nil {
				r.err = err
			}
		} else {
			ack.Replies = append(ack.Replies, hdfs.Status_ERROR)
		}
	}
	ok := ack.Success()
	if ok && it.end > 0 {
		// Readers may see the bytes once every node has them, before the
		// writer hears so (an hflush returns with the ack).
		r.w.SetBytesAcked(it.end)
	}
	ack.Flags = nil
	var err error
	if r.buf, err = datatransfer.AppendAck(r.buf, ack); err != nil {
		if r.err == nil {
			r.err = fmt.Errorf("datanode: encoding ack: %w", err)
		}
		return false
	}
	if !ok {
		if r.err == nil {
			r.err = fmt.Errorf("datanode: packet %d failed: %v", it.seqno, ack.Replies)
		}
		return false
	}
	return !it.last
}
