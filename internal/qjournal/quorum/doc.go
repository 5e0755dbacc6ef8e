// Package quorum holds the rules of the quorum journal, without I/O: the
// accounting of one call made to every JournalNode (Tally), the epoch and
// serial-number rules a JournalNode applies to each writer's request
// (Promise), the choice of how to recover the last segment after a writer
// died (ChooseRecovery, with HDFS's SegmentRecoveryComparator order), what a
// JournalNode answers to prepareRecovery and does on acceptRecovery
// (PrepareAnswer, PlanAccept), the union of the JournalNodes' segment
// manifests a reader sees (Union), and how many in-progress transactions a
// majority holds (DurableCount).
//
// Callers: internal/qjournal/client (the NameNode's QuorumJournalManager)
// and internal/qjournal/server (the JournalNode). The package reads no
// clock, opens no file or socket and starts no goroutine; its functions are
// pure and its types are values, safe to copy. A Tally is not safe for
// concurrent use: the caller that collects the answers owns it.
//
// Refusals are *Refusal values carrying the kind of Java exception Hadoop
// throws in that case and Hadoop's text; the JournalNode's RPC edge turns
// the kind into the exception class.
//
//	t := quorum.NewTally(3)
//	t.Success(0)
//	t.Failure(1, err)
//	t.Success(2)
//	t.Reached() // true: 2 of 3
//
// # The rules in short
//
// Majority of n is n/2+1. A call is decided when a majority succeeded,
// when so many failed that a majority cannot succeed any more, or when
// every node answered; the caller also gives up at its timeout.
//
// A writer becomes the writer by asking every node for its promise
// (getJournalState), proposing max(promises)+1 (newEpoch) and getting a
// majority to accept it; a node accepts only an epoch strictly above its
// promise and persists it before answering. Every later request carries
// the epoch and a serial number that grows with each request: a node
// refuses a lower epoch (the fence), takes a higher one as a new promise,
// refuses a serial number not above the last one of the epoch, and, for
// writes, an epoch other than the one that started the open segment.
package quorum
