package client

import (
	"context"
	"fmt"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/qjournal/quorum"
)

// qcall collects the answers of one call made to every JournalNode
// (Hadoop's QuorumCall). Answers arrive on a buffered channel, one per
// node, so an answer never waits for the collector; the collector that
// waits owns the tally.
type qcall struct {
	op      string
	answers chan answer
	tally   *quorum.Tally
	vals    []any
	errs    []error
	last    int64 // for a write: the batch's last txid
}

type answer struct {
	i   int
	v   any
	err error
}

func newQcall(op string, n int) *qcall {
	return &qcall{op: op, answers: make(chan answer, n), tally: quorum.NewTally(n), vals: make([]any, n), errs: make([]error, n)}
}

// answer records node i's outcome (called once per node).
func (q *qcall) answer(i int, v any, err error) { q.answers <- answer{i, v, err} }

func (q *qcall) record(a answer) {
	if a.err != nil {
		q.tally.Failure(a.i, a.err)
		q.errs[a.i] = a.err
		return
	}
	q.vals[a.i] = a.v
	q.tally.Success(a.i)
}

// waitQuorum waits until a majority succeeded (nil), until a majority can
// no longer succeed (a *quorum.QuorumError), or until timeout (an error
// wrapping ErrTimeout).
func (m *Manager) waitQuorum(ctx context.Context, q *qcall, timeout time.Duration) error {
	return m.wait(ctx, q, timeout, timeout, q.tally.Done)
}

// waitQuorumLeft is waitQuorum with left of a timeout of total remaining.
func (m *Manager) waitQuorumLeft(ctx context.Context, q *qcall, left, total time.Duration) error {
	return m.wait(ctx, q, left, total, q.tally.Done)
}

// waitAll waits for every node's answer; any failure fails the call.
func (m *Manager) waitAll(ctx context.Context, q *qcall, timeout time.Duration) error {
	all := func() bool { return q.tally.Successes()+q.tally.Failures() == q.tally.Size() }
	if err := m.wait(ctx, q, timeout, timeout, all); err != nil && !all() {
		return err
	}
	if q.tally.Failures() > 0 {
		var parts []string
		for i, e := range q.errs {
			if e != nil {
				parts = append(parts, fmt.Sprintf("%s: %v", m.loggers[i].addr, e))
			}
		}
		return fmt.Errorf("qjournal: %s failed on %d of %d JournalNodes: %v", q.op, q.tally.Failures(), q.tally.Size(), parts)
	}
	return nil
}

func (m *Manager) wait(ctx context.Context, q *qcall, timeout, total time.Duration, done func() bool) error {
	t := m.clock.NewTimer(timeout)
	defer t.Stop()
	for !done() {
		select {
		case a := <-q.answers:
			q.record(a)
		case <-t.C():
			// Take what already arrived before deciding.
			for drained := false; !drained && !done(); {
				select {
				case a := <-q.answers:
					q.record(a)
				default:
					drained = true
				}
			}
			if done() {
				continue
			}
			return fmt.Errorf("%w: %s: Timed out waiting %dms for a quorum of nodes to respond (%d of %d answered, %d succeeded)",
				ErrTimeout, q.op, total.Milliseconds(), q.tally.Successes()+q.tally.Failures(), q.tally.Size(), q.tally.Successes())
		case <-ctx.Done():
			return ctx.Err()
		case <-m.life.Done():
			return ErrClosed
		}
	}
	return q.tally.Err(q.op, m.names())
}
