package client

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// leaseState is the lease renewer of a FileSystem: one goroutine that
// calls renewLease every leaseRenewInterval while at least one Writer is
// open. Guarded by FileSystem.lease's mutex.
type leaseState struct {
	open int
	stop context.CancelFunc // cancels the running renewer, nil if none
	done chan struct{}      // closed when the renewer has returned
}

// beginLease counts an open Writer and starts the renewer if needed.
func (f *FileSystem) beginLease() {
	f.lease.Lock()
	defer f.lease.Unlock()
	f.lease.s.open++
	if f.lease.s.stop != nil || f.closed.Load() {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	f.lease.s.stop, f.lease.s.done = cancel, done
	go f.renewLeases(ctx, done)
}

// endLease uncounts a Writer and stops the renewer after the last one.
func (f *FileSystem) endLease() {
	f.lease.Lock()
	f.lease.s.open--
	if f.lease.s.open > 0 {
		f.lease.Unlock()
		return
	}
	stop, done := f.lease.s.stop, f.lease.s.done
	f.lease.s.stop, f.lease.s.done = nil, nil
	f.lease.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// stopLeases stops the renewer whatever the count (FileSystem.Close).
func (f *FileSystem) stopLeases() {
	f.lease.Lock()
	stop, done := f.lease.s.stop, f.lease.s.done
	f.lease.s.stop, f.lease.s.done = nil, nil
	f.lease.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

func (f *FileSystem) renewLeases(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(f.renewEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, leaseRenewInterval)
		// A failed renewal is retried at the next tick; the writers see
		// their own errors if the lease is really lost.
		_ = f.call(cctx, "renewLease", &hdfs.RenewLeaseRequestProto{ClientName: proto.String(f.clientName)}, &hdfs.RenewLeaseResponseProto{})
		cancel()
	}
}
