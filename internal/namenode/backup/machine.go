package backup

import (
	"errors"
	"fmt"
)

// State is the Backup Node's journal state (Hadoop's BNState).
type State int

// States, in Hadoop's names.
const (
	DropUntilNextRoll State = iota
	JournalOnly
	InSync
)

func (s State) String() string {
	switch s {
	case DropUntilNextRoll:
		return "DROP_UNTIL_NEXT_ROLL"
	case JournalOnly:
		return "JOURNAL_ONLY"
	case InSync:
		return "IN_SYNC"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Errors of the machine.
var (
	// ErrOutOfSequence: a journal batch does not follow the last txid
	// written (or, in sync, applied). The active drops the stream when its
	// call fails, and the node re-registers.
	ErrOutOfSequence = errors.New("backup: journal batch out of sequence")
	// ErrNotJournaling: converging needs a journal spool, which only
	// JOURNAL_ONLY has.
	ErrNotJournaling = errors.New("backup: not journaling")
	// ErrSpoolGap: the local spool starts after the namespace's last txid;
	// a checkpoint must bring the namespace up to it first.
	ErrSpoolGap = errors.New("backup: the journal spool does not reach back to the namespace")
	// ErrBadTxID: a txid below 1, or a roll that goes backwards.
	ErrBadTxID = errors.New("backup: invalid txid")
)

// Transition is a state change, for the log.
type Transition struct {
	From, To State
	TxID     int64  // the txid of the call that caused it
	Why      string // "roll", "frozen for a checkpoint", "gap", "converged"
}

func (t Transition) String() string {
	return fmt.Sprintf("%v -> %v at txid %d (%s)", t.From, t.To, t.TxID, t.Why)
}

// Batch is what to do with a journal batch.
type Batch struct {
	Log   bool // write it to the local segment
	Apply bool // apply it to the namespace (after writing it)
}

// Roll is what to do with the local journal on the active's
// startLogSegment.
type Roll struct {
	// Finalize: the open local segment First..Last is complete; finalize
	// it. Abandon: the open local segment First holds no record; close
	// and drop it.
	Finalize, Abandon bool
	First, Last       int64
	// Start is the txid to start the new local segment at.
	Start int64
	// Gap: the stream skipped transactions (Start is not the txid after
	// the last one written).
	Gap bool
	// Frozen: this roll froze the namespace for a checkpoint that asked
	// for it (FreezeAtNextRoll); wake whoever waits for it.
	Frozen bool
}

// Step is one step of converging: apply the local journal's edits
// From..To. Final steps must run under the journal lock (no batch may
// arrive meanwhile) and be followed by Converged.
type Step struct {
	From, To int64
	Final    bool
}

// Machine is the state machine. Not safe for concurrent use.
type Machine struct {
	state State
	// freeze: the next roll moves IN_SYNC to JOURNAL_ONLY (Hadoop's
	// stopApplyingEditsOnNextRoll).
	freeze bool
	// applied is the last txid applied to the namespace.
	applied int64
	// segment is the first txid of the open local segment (0: none);
	// written the last txid written to the local journal; spool the first
	// txid from which the local journal is complete.
	segment, written, spool int64
	trans                   []Transition
}

// New returns a machine in DROP_UNTIL_NEXT_ROLL for a namespace (and local
// journal) that ends at applied.
func New(applied int64) *Machine {
	return &Machine{state: DropUntilNextRoll, applied: applied, written: applied}
}

// State is the current state.
func (m *Machine) State() State { return m.state }

// AppliedTxID is the last txid applied to the namespace.
func (m *Machine) AppliedTxID() int64 { return m.applied }

// WrittenTxID is the last txid written to the local journal; Segment the
// first txid of the open local segment (0: none).
func (m *Machine) WrittenTxID() int64 { return m.written }

// Segment is the first txid of the open local segment (0: none).
func (m *Machine) Segment() int64 { return m.segment }

// Transitions returns the state changes since the last call.
func (m *Machine) Transitions() []Transition {
	t := m.trans
	m.trans = nil
	return t
}

func (m *Machine) moveTo(s State, txid int64, why string) {
	if s != m.state {
		m.trans = append(m.trans, Transition{From: m.state, To: s, TxID: txid, Why: why})
		m.state = s
	}
}

// Journal decides a batch of n transactions starting at first. In
// JOURNAL_ONLY and IN_SYNC the machine counts the batch as written (and, in
// sync, applied) once it returns: if the driver then cannot write or apply
// it, the node has failed.
func (m *Machine) Journal(first, n int64) (Batch, error) {
	if first < 1 || n < 1 {
		return Batch{}, fmt.Errorf("%w: batch of %d at txid %d", ErrBadTxID, n, first)
	}
	switch m.state {
	case DropUntilNextRoll:
		return Batch{}, nil
	case JournalOnly:
		if m.segment == 0 || first != m.written+1 {
			return Batch{}, fmt.Errorf("%w: batch %d-%d, the local journal ends at %d", ErrOutOfSequence, first, first+n-1, m.written)
		}
		m.written = first + n - 1
		return Batch{Log: true}, nil
	}
	if first != m.written+1 || first != m.applied+1 {
		return Batch{}, fmt.Errorf("%w: batch %d-%d, the namespace ends at %d and the local journal at %d",
			ErrOutOfSequence, first, first+n-1, m.applied, m.written)
	}
	m.written = first + n - 1
	m.applied = m.written
	return Batch{Log: true, Apply: true}, nil
}

// StartLogSegment decides the active's roll to a segment starting at txid.
func (m *Machine) StartLogSegment(txid int64) (Roll, error) {
	if txid < 1 || (m.segment != 0 && txid <= m.written) {
		return Roll{}, fmt.Errorf("%w: segment start %d after txid %d was written", ErrBadTxID, txid, m.written)
	}
	r := Roll{Start: txid, Gap: txid != m.written+1}
	if m.segment != 0 {
		r.First = m.segment
		if m.written >= m.segment {
			r.Finalize, r.Last = true, m.written
		} else {
			r.Abandon = true
		}
	}
	if r.Gap || m.segment == 0 {
		m.spool = txid
	}
	switch {
	case m.state == DropUntilNextRoll:
		m.moveTo(JournalOnly, txid, "roll")
	case m.state == InSync && r.Gap:
		m.moveTo(JournalOnly, txid, "gap")
	case m.state == InSync && m.freeze:
		m.moveTo(JournalOnly, txid, "frozen for a checkpoint")
	}
	if m.freeze {
		m.freeze = false
		r.Frozen = true
	}
	m.segment, m.written = txid, txid-1
	return r, nil
}

// FreezeAtNextRoll asks the next roll to stop applying edits (the start of
// a checkpoint; the active's startCheckpoint rolls).
func (m *Machine) FreezeAtNextRoll() { m.freeze = true }

// Frozen reports whether the namespace no longer follows the stream, so a
// checkpoint may load edits into it.
func (m *Machine) Frozen() bool { return m.state != InSync }

// Applied records that the driver applied the namespace up to txid (a
// checkpoint's roll forward, a step of converging, or an image loaded in
// place of the namespace); it never goes back.
func (m *Machine) Applied(txid int64) {
	m.applied = max(m.applied, txid)
	if m.segment == 0 {
		m.written = max(m.written, txid)
	}
}

// Reloaded records that the namespace was replaced by an image of txid (a
// checkpoint's gap path, or a retry after a failed merge), which may be
// older than what was applied. It is refused while the namespace follows
// the stream (IN_SYNC).
func (m *Machine) Reloaded(txid int64) error {
	if m.state == InSync {
		return fmt.Errorf("%w: the namespace cannot be reloaded while %v", ErrNotJournaling, m.state)
	}
	m.applied = txid
	if m.segment == 0 {
		m.written = txid
	}
	return nil
}

// Converge returns the next step of bringing the namespace up to the local
// journal after a checkpoint.
func (m *Machine) Converge() (Step, error) {
	if m.state != JournalOnly || m.segment == 0 {
		return Step{}, fmt.Errorf("%w: state %v", ErrNotJournaling, m.state)
	}
	if m.applied+1 < m.spool {
		return Step{}, fmt.Errorf("%w: the namespace ends at %d, the spool starts at %d", ErrSpoolGap, m.applied, m.spool)
	}
	if m.applied < m.segment-1 {
		return Step{From: m.applied + 1, To: m.segment - 1}, nil
	}
	return Step{From: m.applied + 1, To: m.written, Final: true}, nil
}

// Converged ends converging once a final step applied everything written:
// the node is IN_SYNC.
func (m *Machine) Converged() error {
	if m.state != JournalOnly || m.applied != m.written {
		return fmt.Errorf("%w: state %v, applied %d, written %d", ErrNotJournaling, m.state, m.applied, m.written)
	}
	m.moveTo(InSync, m.written, "converged")
	return nil
}
