// Package client is the NameNode's side of the quorum journal: Manager,
// HDFS's QuorumJournalManager, the editlog.Journal behind a
// dfs.namenode.shared.edits.dir of qjournal://jn1:8485;jn2:8485;jn3:8485/JID.
// It is a shared part: the NameNode imports it, it imports no role (never
// the JournalNode's package; the two meet only over RPC and HTTP).
//
// Callers: the NameNode's edit log (package editlog drives Write, Flush,
// StartSegment, FinalizeSegment and RecoverInProgress as for any required
// journal, and reads with Segments and OpenForRead), `hdfs namenode
// -format` and -initializeSharedEdits (HasSomeData, Format). A Manager is
// safe for concurrent use.
//
//	m, err := client.New("qjournal://jn1:8485;jn2:8485;jn3:8485/ns1", cfg, version, client.Deps{Logger: log})
//	defer m.Close()
//	_, err = m.RecoverInProgress(ctx) // take a new epoch: fences any older writer
//	err = m.StartSegment(ctx, 101)
//	err = m.Write(ctx, records, 101, 150) // queued to every JournalNode, no wait
//	err = m.Flush(ctx)                     // a quorum made 101..150 durable
//
// # Loggers and quorum calls
//
// One logger per JournalNode (Hadoop's IPCLoggerChannel) owns an RPC
// connection and a goroutine that makes the writer's calls to that node in
// order, each carrying the epoch, a serial number that grows with every
// call, and the committed txid as it was when the call was queued (unlike
// Hadoop, which takes it when the call is made: a lagging node's recovery
// calls for an old segment would then carry a txid committed in the
// segment after it, and acceptRecovery would refuse to cut the old
// segment's uncommitted tail). Reads (manifests, cached edits) run beside
// it. A call to all nodes is collected by a quorum call: it succeeds once a
// majority (n/2+1) succeeded, fails once a majority can no longer succeed,
// or at its timeout (the dfs.qjournal.*.timeout.ms keys).
//
// # Writing
//
// Write queues a copy of the batch to every logger without waiting, so
// batches are pipelined; Flush waits for a quorum of every batch written
// since the last Flush, within dfs.qjournal.write-txns.timeout.ms, and
// then records the batch's last txid as committed. A logger more than
// dfs.qjournal.queued-edits.limit.mb behind, or one whose write failed, is
// out of sync: its writes fail at once (a heartbeat a second keeps it
// informed) until the next segment starts on it. A Flush that cannot reach
// a quorum returns an error: the edit log fails and the NameNode stops
// without acknowledging.
//
// # Becoming the writer
//
// RecoverInProgress asks every node its promise, proposes max+1 with
// newEpoch (a majority must accept: the old writer is fenced from then on),
// and recovers the newest segment: prepareRecovery on all, the choice of
// quorum.ChooseRecovery, acceptRecovery with the chosen copy's /getJournal
// URL (nodes holding another length fetch it), finalizeLogSegment.
//
// # Reading
//
// Segments is the union of a quorum's manifests (quorum.Union). A
// finalized segment is streamed over HTTP from a node holding it and, when
// that node fails mid-stream, from the next one, skipping what was already
// returned. The segment being written is read, with
// dfs.ha.tail-edits.in-progress, from the nodes' edit caches
// (getJournaledEdits) up to what a majority holds; otherwise, or when that
// fails, it is streamed up to the highest committed txid a node reported.
//
// # Goroutines
//
// One per logger, and one per read call in flight; Close cancels the
// manager's lifetime and waits for all of them.
package client
