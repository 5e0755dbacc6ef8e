package datanode

import (
	"bufio"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
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

// responder is the ack goroutine of one pipeline stage (Hadoop's
// PacketResponder): for each packet, in order, it waits for the downstream
// ack (if there is a downstream) and sends upstream this node's status
// followed by the downstream's replies. It owns writes to the upstream
// connection and reads from the downstream one.
type responder struct {
	up           net.Conn
	mirror       *bufio.Reader // nil at the pipeline's tail
	mirrorFailed atomic.Bool
	w            *storage.ReplicaWriter
	q            chan ackItem
	done         chan struct{}
	err          error // set before done is closed
}

func (r *responder) run() {
	defer close(r.done)
	var down datatransfer.PipelineAck
	ack := datatransfer.PipelineAck{Replies: make([]hdfs.Status, 0, 8)}
	buf := make([]byte, 0, 64)
	mirrorOK := r.mirror != nil
	for it := range r.q {
		ack.Seqno = it.seqno
		ack.Replies = append(ack.Replies[:0], it.status)
		if it.status == hdfs.Status_SUCCESS && r.mirror != nil {
			if mirrorOK && !r.mirrorFailed.Load() {
				err := datatransfer.ReadAck(r.mirror, datatransfer.DefaultMaxMessageSize, &down)
				switch {
				case err != nil:
					mirrorOK = false
					ack.Replies = append(ack.Replies, hdfs.Status_ERROR)
				case down.Seqno != it.seqno:
					mirrorOK = false
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
		buf, err = datatransfer.AppendAck(buf[:0], &ack)
		if err == nil {
			_ = r.up.SetWriteDeadline(time.Now().Add(writeTimeout))
			_, err = r.up.Write(buf)
		}
		if err != nil {
			if r.err == nil {
				r.err = fmt.Errorf("datanode: sending ack upstream: %w", err)
			}
			return
		}
		if !ok {
			if r.err == nil {
				r.err = fmt.Errorf("datanode: packet %d failed: %v", it.seqno, ack.Replies)
			}
			return
		}
		if it.last {
			return
		}
	}
}
