package namenode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/storage"
)

// JournalProtocolName is JournalProtocol's Java interface name: what the
// active NameNode calls on its Backup Node.
const JournalProtocolName = "org.apache.hadoop.hdfs.server.protocol.JournalProtocol"

// maxStreamCall bounds the records one journal call carries when batches
// are coalesced (a single larger batch goes as it is).
const maxStreamCall = 1 << 20

// backupStream is the active NameNode's journal to its Backup Node (Hadoop's
// EditLogBackupOutputStream), an optional journal of the edit log added when
// the Backup Node registers (editlog.Log.AddJournal).
//
// It never makes the active wait. Write, Flush and StartSegment only queue
// (copies of) the records and the segment starts, in order, into the buffer
// being filled; the sender goroutine swaps that buffer for the empty one it
// holds (the double buffer) and sends what it took with JournalProtocol's
// startLogSegment and journal calls, each bounded by the write timeout.
// When a call fails or times out (the Backup Node died or hangs), or when
// more than StreamQueueBytes wait to be sent, the stream fails: the next
// Write returns the failure and the edit log drops the stream. The Backup
// Node finds out when it registers again (every checkpoint check period)
// and joins anew. The Backup Node gets a batch only after the active's own
// journals made it durable (the edit log writes journals added at run time
// last), so it never holds an edit the active could lose.
//
// FinalizeSegment sends nothing: the segment's end record is in the stream,
// and the Backup Node finalizes its copy when the next segment starts.
type backupStream struct {
	addr      string
	info      *hdfs.JournalInfoProto
	client    *ipc.Client
	timeout   time.Duration
	maxQueued int
	log       *slog.Logger

	ctx    context.Context // ends when the stream is closed
	cancel context.CancelFunc
	wake   chan struct{} // capacity 1: something was queued
	done   chan struct{} // closed when the sender has returned

	mu struct {
		sync.Mutex
		queue  []streamFrame // the buffer being filled
		queued int           // bytes in queue
		failed error
		closed bool
	}
}

// streamFrame is one call to make: a segment start (start > 0) or the
// records first..last.
type streamFrame struct {
	start       int64
	first, last int64
	records     []byte
}

func newBackupStream(nn *NameNode, addr string) *backupStream {
	k := nn.cfg.Checkpoint
	s := &backupStream{
		addr: addr,
		info: &hdfs.JournalInfoProto{
			ClusterID:     proto.String(nn.version.ClusterID),
			LayoutVersion: proto.Uint32(layoutVersionWire(storage.NameNodeLayoutVersion)),
			NamespaceID:   proto.Uint32(uint32(nn.version.NamespaceID)),
		},
		client: ipc.NewClient(nn.cfg.peerAuth(ipc.ClientConfig{Addresses: []string{addr}, User: nn.cfg.SuperUser,
			Protocol: JournalProtocolName, MaxRetries: -1, DialTimeout: min(k.Timeout, 20*time.Second), Logger: nn.deps.Logger})),
		timeout:   k.Timeout,
		maxQueued: k.StreamQueueBytes,
		log:       nn.deps.Logger.With("backupNode", addr),
		wake:      make(chan struct{}, 1),
		done:      make(chan struct{}),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	go s.run()
	return s
}

func (s *backupStream) String() string { return "backup:" + s.addr }

// alive reports whether the stream still works (not failed, not closed).
func (s *backupStream) alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.failed == nil && !s.mu.closed
}

// enqueue adds f (or, for records that follow the last queued ones, merges
// it into that frame) and wakes the sender.
func (s *backupStream) enqueue(f streamFrame) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.errLocked(); err != nil {
		return err
	}
	n := len(s.mu.queue)
	if f.start == 0 && n > 0 {
		if p := &s.mu.queue[n-1]; p.start == 0 && p.last+1 == f.first && len(p.records)+len(f.records) <= maxStreamCall {
			p.records = append(p.records, f.records...)
			p.last = f.last
			s.mu.queued += len(f.records)
			s.wakeSender()
			return s.checkQueuedLocked()
		}
	}
	if f.records != nil {
		f.records = append([]byte(nil), f.records...) // the Log reuses its buffer
	}
	s.mu.queue = append(s.mu.queue, f)
	s.mu.queued += len(f.records)
	s.wakeSender()
	return s.checkQueuedLocked()
}

func (s *backupStream) wakeSender() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *backupStream) errLocked() error {
	switch {
	case s.mu.failed != nil:
		return s.mu.failed
	case s.mu.closed:
		return fmt.Errorf("%w: stream to Backup Node %s is closed", editlog.ErrState, s.addr)
	}
	return nil
}

func (s *backupStream) checkQueuedLocked() error {
	if s.mu.queued > s.maxQueued {
		s.mu.failed = fmt.Errorf("namenode: Backup Node %s does not keep up: %d bytes of edits wait to be sent, the limit is %d", s.addr, s.mu.queued, s.maxQueued)
		s.log.Error("dropping the Backup Node's stream", "err", s.mu.failed)
		s.cancel()
	}
	return s.mu.failed
}

// StartSegment queues startLogSegment(txid).
func (s *backupStream) StartSegment(_ context.Context, txid int64) error {
	return s.enqueue(streamFrame{start: txid})
}

// Write queues the records firstTxID..lastTxID.
func (s *backupStream) Write(_ context.Context, batch []byte, firstTxID, lastTxID int64) error {
	return s.enqueue(streamFrame{first: firstTxID, last: lastTxID, records: batch})
}

// Flush reports a failure of what was sent before; it does not wait.
func (s *backupStream) Flush(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errLocked()
}

// FinalizeSegment sends nothing (see the type's doc).
func (s *backupStream) FinalizeSegment(context.Context, int64, int64) error { return nil }

// Segments: the stream holds nothing to read back.
func (s *backupStream) Segments(context.Context) ([]editlog.SegmentInfo, error) { return nil, nil }

// OpenForRead: never called (Segments lists nothing).
func (s *backupStream) OpenForRead(context.Context, editlog.SegmentInfo) (editlog.Reader, error) {
	return nil, editlog.ErrNotFound
}

// RecoverInProgress: nothing to recover on the active's side.
func (s *backupStream) RecoverInProgress(context.Context) ([]editlog.SegmentInfo, error) {
	return nil, nil
}

// PurgeBefore: the Backup Node keeps its own retention.
func (s *backupStream) PurgeBefore(context.Context, int64) error { return nil }

// Close stops the sender (without waiting for it: the edit log closes a
// dropped journal with its lock held) and drops what was queued.
func (s *backupStream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.mu.closed {
		s.mu.closed = true
		s.mu.queue = nil
		s.cancel()
	}
	return nil
}

// wait waits for the sender to return after Close.
func (s *backupStream) wait() { <-s.done }

// run is the sender: it takes everything queued and sends it, in order,
// until the stream is closed or a call fails.
func (s *backupStream) run() {
	defer close(s.done)
	defer s.client.Close()
	var spare []streamFrame
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.wake:
		}
		frames := s.take(spare)
		for _, f := range frames {
			if err := s.send(f); err != nil {
				s.sendFailed(err)
				return
			}
		}
		clear(frames)
		spare = frames
	}
}

// take swaps the buffer being filled for spare and returns it.
func (s *backupStream) take(spare []streamFrame) []streamFrame {
	s.mu.Lock()
	defer s.mu.Unlock()
	frames := s.mu.queue
	s.mu.queue, s.mu.queued = spare[:0], 0
	return frames
}

func (s *backupStream) sendFailed(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.failed == nil && !s.mu.closed {
		s.mu.failed = fmt.Errorf("namenode: stream to Backup Node %s failed: %w", s.addr, err)
		s.log.Error("dropping the Backup Node's stream", "err", err)
	}
}

// send makes one call, bounded by the write timeout.
func (s *backupStream) send(f streamFrame) error {
	ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
	defer cancel()
	var err error
	if f.start > 0 {
		err = s.client.Call(ctx, "startLogSegment", &hdfs.StartLogSegmentRequestProto{
			JournalInfo: s.info, Txid: proto.Uint64(uint64(f.start)), Epoch: proto.Uint64(0)}, &hdfs.StartLogSegmentResponseProto{})
	} else {
		err = s.client.Call(ctx, "journal", &hdfs.JournalRequestProto{
			JournalInfo: s.info, FirstTxnId: proto.Uint64(uint64(f.first)), NumTxns: proto.Uint32(uint32(f.last - f.first + 1)),
			Records: f.records, Epoch: proto.Uint64(0)}, &hdfs.JournalResponseProto{})
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %v: %w", s.timeout, err)
	}
	return err
}
