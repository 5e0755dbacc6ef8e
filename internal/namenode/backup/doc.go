// Package backup is the Backup Node's pure core: the state machine that
// decides, for every call of the active NameNode's journal stream
// (JournalProtocol's journal and startLogSegment) and for every step of a
// checkpoint, whether edits are dropped, written to the local journal only,
// or written and applied to the namespace, and how the namespace catches up
// with the local journal after a checkpoint. It does no I/O, starts no
// goroutines and reads no clock; package namenode's Backup Node calls it
// under its journal lock (a Machine is not safe for concurrent use), does
// what each Decision says, and logs the Transitions.
//
// # States (Hadoop's BNState, seed 000 §2.4)
//
//	                 startLogSegment (any txid)
//	DROP_UNTIL_NEXT_ROLL ─────────────────────────► JOURNAL_ONLY
//	  (start, before the stream     ▲                  │   │
//	   joins at a segment start)    │                  │   │ Converge steps apply the local
//	                                │ startLogSegment  │   │ journal up to its last txid,
//	                                │ while frozen, or │   │ then Converged
//	                                │ after a gap      │   ▼
//	                                └────────────── IN_SYNC
//
//	DROP_UNTIL_NEXT_ROLL  journal batches are dropped: the stream started in
//	                      the middle of a segment the Backup Node does not have.
//	JOURNAL_ONLY          batches are written to the local journal (the
//	                      journal spool, seed 003's JSPOOL) but not applied:
//	                      a checkpoint is loading edits into the namespace.
//	IN_SYNC               batches are written and applied: the namespace is
//	                      the active's.
//
// A checkpoint freezes the namespace first: FreezeAtNextRoll, then the
// active's startCheckpoint rolls its log, and that startLogSegment moves
// IN_SYNC to JOURNAL_ONLY (Frozen). The checkpointer rolls the namespace
// forward to the end of the segment before the roll with edits downloaded
// from the active, saves the image, and converges: Converge hands out the
// local journal's finalized segments to apply, then the in-progress one
// under the journal lock, and Converged moves to IN_SYNC.
//
// A startLogSegment whose txid does not follow the last one written (the
// active dropped the stream and took it back after a re-registration) is a
// gap: the local spool restarts there and an IN_SYNC node goes back to
// JOURNAL_ONLY, since its namespace can no longer follow the stream; its next
// checkpoint downloads what it missed.
//
// # Use
//
//	m := backup.New(lastApplied)              // after loading image + local edits
//	d, err := m.Journal(first, n)             // JournalProtocol.journal
//	if d.Log { /* write the batch to the local segment */ }
//	if d.Apply { /* apply the ops */ }
//	r, err := m.StartLogSegment(txid)         // JournalProtocol.startLogSegment
//	for _, t := range m.Transitions() { log(t) }
package backup
