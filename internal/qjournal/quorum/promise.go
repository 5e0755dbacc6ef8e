package quorum

import "fmt"

// Kind is the Java exception Hadoop's JournalNode throws for a refusal;
// the RPC edge maps it to the class name.
type Kind int

// Refusal kinds.
const (
	// KindIO is java.io.IOException (epoch refusals: the fence).
	KindIO Kind = iota + 1
	// KindOutOfSync is JournalOutOfSyncException (serial numbers, txids,
	// segments that do not follow).
	KindOutOfSync
	// KindIllegalArgument is java.lang.IllegalArgumentException.
	KindIllegalArgument
	// KindIllegalState is java.lang.IllegalStateException.
	KindIllegalState
	// KindAssertion is java.lang.AssertionError: an invariant of the
	// protocol would break.
	KindAssertion
)

func (k Kind) String() string {
	switch k {
	case KindIO:
		return "IOException"
	case KindOutOfSync:
		return "JournalOutOfSyncException"
	case KindIllegalArgument:
		return "IllegalArgumentException"
	case KindIllegalState:
		return "IllegalStateException"
	case KindAssertion:
		return "AssertionError"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Refusal is a request a JournalNode refuses, with Hadoop's text.
type Refusal struct {
	Kind Kind
	Msg  string
}

func (r *Refusal) Error() string { return r.Msg }

func refuse(k Kind, format string, args ...any) *Refusal {
	return &Refusal{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// Promise is what a JournalNode has promised and seen for one journal.
// Promised and Writer survive restarts (last-promised-epoch,
// last-writer-epoch), as does Committed (committed-txid); Serial does not.
type Promise struct {
	// Promised is the highest epoch promised: lower ones are refused.
	Promised uint64
	// Writer is the epoch of the writer that started the newest segment.
	Writer uint64
	// Serial is the highest IPC serial number seen in the Promised epoch,
	// -1 when none.
	Serial int64
	// Committed is the highest txid a writer said a majority holds (0:
	// none known).
	Committed int64
}

// Request is the RequestInfo a writer sends with every call.
type Request struct {
	Epoch  uint64
	Serial uint64
	// Committed is the writer's committed txid, when HasCommitted.
	Committed    int64
	HasCommitted bool
}

// Changes says which persistent parts of a Promise a request changed; the
// JournalNode writes them durably before it answers.
type Changes struct {
	Promised, Committed bool
}

// NewEpoch is a writer's proposal of epoch: accepted only above the
// promise. The new promise must be persisted before the answer. The
// serial numbers restart with the new epoch.
func (p Promise) NewEpoch(epoch uint64, jid string) (Promise, error) {
	if epoch <= p.Promised {
		return p, refuse(KindIO, "Proposed epoch %d <= last promise %d ; journal id: %s", epoch, p.Promised, jid)
	}
	p.Promised, p.Serial = epoch, -1
	return p, nil
}

// Check applies a writer's request (any call but newEpoch): a lower epoch
// than the promise is refused, which fences an old writer; a higher one
// becomes the promise; the serial number must grow within the epoch; the
// committed txid may only grow. client names the caller in the refusal.
func (p Promise) Check(r Request, client, jid string) (Promise, Changes, error) {
	var ch Changes
	switch {
	case r.Epoch < p.Promised:
		return p, ch, refuse(KindIO, "IPC's epoch %d is less than the last promised epoch %d ; journal id: %s", r.Epoch, p.Promised, jid)
	case r.Epoch > p.Promised:
		p.Promised, p.Serial = r.Epoch, -1
		ch.Promised = true
	}
	if int64(r.Serial) <= p.Serial || r.Serial > 1<<62 {
		return p, ch, refuse(KindOutOfSync, "IPC serial %d from client %s was not higher than prior highest IPC serial %d ; journal id: %s",
			r.Serial, client, p.Serial, jid)
	}
	p.Serial = int64(r.Serial)
	if r.HasCommitted {
		if r.Committed < p.Committed {
			return p, ch, refuse(KindIllegalArgument, "Client trying to move committed txid backward from %d to %d ; journal id: %s",
				p.Committed, r.Committed, jid)
		}
		if r.Committed > p.Committed {
			p.Committed = r.Committed
			ch.Committed = true
		}
	}
	return p, ch, nil
}

// StartSegment records that the writer of epoch started a segment: it is
// the writer from now on (last-writer-epoch, persisted by the caller when
// it changed).
func (p Promise) StartSegment(epoch uint64) (Promise, bool) {
	changed := p.Writer != epoch
	p.Writer = epoch
	return p, changed
}

// CheckWriter is the extra check of a write (journal): only the writer of
// the open segment's epoch may write.
func (p Promise) CheckWriter(epoch uint64, jid string) error {
	if epoch != p.Writer {
		return refuse(KindIO, "IPC's epoch %d is not the current writer epoch  %d ; journal id: %s", epoch, p.Writer, jid)
	}
	return nil
}
