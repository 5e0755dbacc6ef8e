package lease

import (
	"container/list"
	"time"
)

// RecoveryTimeoutMultiplier times dfs.heartbeat.interval is how long a block
// recovery may run before it is tried again (Hadoop's
// BlockManager.BLOCK_RECOVERY_TIMEOUT_MULTIPLIER; no configuration key).
const RecoveryTimeoutMultiplier = 30

// DefaultRecoveryTimeout is RecoveryTimeout of the default 3 s heartbeat.
const DefaultRecoveryTimeout = RecoveryTimeoutMultiplier * 3 * time.Second

// RecoveryTimeout is the block-recovery timeout for a heartbeat interval.
func RecoveryTimeout(heartbeat time.Duration) time.Duration {
	return RecoveryTimeoutMultiplier * heartbeat
}

// Attempt is one block recovery started.
type Attempt struct {
	BlockID    int64
	RecoveryID int64 // the new generation stamp
	Primary    int   // index into the block's expected holders
	Started    time.Time
}

// RecoveryTracker records the block recoveries in flight (Hadoop's
// PendingRecoveryBlocks, plus active retry). It is not safe for concurrent
// use; the namesystem calls it under its write lock.
type RecoveryTracker struct {
	byBlock map[int64]*list.Element
	order   *list.List // of Attempt, oldest start first
}

// NewRecoveryTracker returns an empty tracker.
func NewRecoveryTracker() *RecoveryTracker {
	return &RecoveryTracker{byBlock: make(map[int64]*list.Element), order: list.New()}
}

// Start records that a recovery of blockID with recoveryID and primary began
// at now, replacing an earlier attempt of the same block. A now older than the
// newest start is taken as equal to it (the list stays in start order).
func (t *RecoveryTracker) Start(blockID, recoveryID int64, primary int, now time.Time) {
	if b := t.order.Back(); b != nil {
		if newest := b.Value.(Attempt).Started; now.Before(newest) {
			now = newest
		}
	}
	t.Done(blockID)
	a := Attempt{BlockID: blockID, RecoveryID: recoveryID, Primary: primary, Started: now}
	t.byBlock[blockID] = t.order.PushBack(a)
}

// Done forgets the recovery of blockID (commitBlockSynchronization arrived,
// the file was deleted or closed). It reports whether one was recorded.
func (t *RecoveryTracker) Done(blockID int64) bool {
	e := t.byBlock[blockID]
	if e == nil {
		return false
	}
	t.order.Remove(e)
	delete(t.byBlock, blockID)
	return true
}

// Lookup returns the recorded recovery of blockID (commitBlockSynchronization
// checks that its recovery id is the current one).
func (t *RecoveryTracker) Lookup(blockID int64) (Attempt, bool) {
	e := t.byBlock[blockID]
	if e == nil {
		return Attempt{}, false
	}
	return e.Value.(Attempt), true
}

// Pending reports whether a recovery of blockID is recorded and started no
// more than timeout before now: if so no new one should start
// (FileState.RecoveryPending).
func (t *RecoveryTracker) Pending(blockID int64, now time.Time, timeout time.Duration) bool {
	e := t.byBlock[blockID]
	return e != nil && now.Sub(e.Value.(Attempt).Started) <= timeout
}

// Len is the number of recoveries recorded.
func (t *RecoveryTracker) Len() int { return len(t.byBlock) }

// Due removes and returns, oldest first, the recoveries started more than
// timeout before now. For each, the caller runs DecideRelease again with
// FileState.PrevPrimary = Attempt.Primary, which picks the next holder, and
// calls Start with the new recovery id if it starts one.
func (t *RecoveryTracker) Due(now time.Time, timeout time.Duration) []Attempt {
	var out []Attempt
	for e := t.order.Front(); e != nil; e = t.order.Front() {
		a := e.Value.(Attempt)
		if now.Sub(a.Started) <= timeout {
			break
		}
		out = append(out, a)
		t.order.Remove(e)
		delete(t.byBlock, a.BlockID)
	}
	return out
}
