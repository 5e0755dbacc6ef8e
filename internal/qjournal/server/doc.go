// Package server is the JournalNode (`hdfs journalnode`): one replica of
// the shared edit log of HA NameNodes. It serves QJournalProtocol to the
// NameNodes (package qjournal/client), InterQJournalProtocol to the other
// JournalNodes, and over HTTP the segment files (/getJournal), a status
// page and /jmx. A quorum of JournalNodes makes an edit durable; the epoch
// each one promises fences old writers (package qjournal/quorum holds the
// rules, this package the I/O around them).
//
// Callers: internal/cli (hdfs journalnode) and internal/minicluster start
// a JournalNode with Start and stop it with Close. A JournalNode and its
// Journals are safe for concurrent use.
//
//	jn, err := server.Start(ctx, cfg, server.Deps{Logger: logger})
//	defer jn.Close()
//	fmt.Println(jn.RPCAddr(), jn.HTTPAddr())
//
// # On disk
//
// dfs.journalnode.edits.dir holds one directory per journal id, HDFS's
// layout:
//
//	<edits dir>/<jid>/in_use.lock                 held while the JournalNode runs
//	<jid>/current/VERSION                         namespaceID, clusterID, cTime,
//	                                              storageType=JOURNAL_NODE, layoutVersion
//	<jid>/current/last-promised-epoch             decimal + "\n": no writer below it is served
//	<jid>/current/last-writer-epoch               epoch of the writer of the newest segment
//	<jid>/current/committed-txid                  highest txid a writer said a quorum holds
//	                                              (decimal, space-padded to 20, "\n")
//	<jid>/current/paxos/<txid>                    an accepted recovery of segment <txid>:
//	                                              length-delimited PersistedRecoveryPaxosData,
//	                                              then a readable line
//	<jid>/current/edits_<a:019d>-<b:019d>          finalized segment
//	<jid>/current/edits_inprogress_<a:019d>        the segment being written
//	<jid>/current/edits_inprogress_<a>.epoch=<e>   a copy fetched by acceptRecovery before
//	                                              its decision was persisted
//	<jid>/current/edits_inprogress_<a>.empty|.stale  set aside (no record; replaced by sync)
//	<jid>/edits.sync/edits_<a>-<b>                a segment fetched by JournalNode sync,
//	                                              before it is checked and moved in
//
// Segments are the NameNode's edit-log segments (package editlog's format,
// byte for byte): the JournalNode checks each journal() batch with the
// edit-log decoder (whole records, checksums, txids first..first+n-1)
// before appending it, and serves the files unchanged over /getJournal.
//
// # Durability
//
// Every promise is made durable before the answer that makes it: the
// promised epoch (newEpoch, or a request with a higher epoch), the writer
// epoch (startLogSegment) and an accepted recovery (acceptRecovery) are
// each written tmp, fsync, rename, fsync dir; a journal() batch is
// appended and fdatasynced. The committed txid a request carries is made
// durable before the answer too, but rewritten in place in committed-txid
// (a fixed-width number inside the first sector, fdatasynced beside the
// batch): it changes with every batch, and a value older than the last
// one written is still a true lower bound, so a torn or lost rewrite can
// only make it lower; a tmp file and two renames per batch cost two more
// journal commits (docs/PERFORMANCE.md). HDFS's JournalNode does not sync
// it at all. A segment fetched by acceptRecovery is fsynced under a
// temporary name, the decision persisted, and only then moved in place; a
// crash in between is rolled forward by the next prepareRecovery.
//
// # Refusals
//
// A request with an epoch below the promise is refused with Hadoop's
// IOException text ("IPC's epoch 3 is less than the last promised epoch
// 4 ; journal id: ns1"): that refusal fences a writer that lost its
// quorum. Serial numbers out of order, batches that do not follow the open
// segment and finalizes that do not match what is written are
// JournalOutOfSyncException; an unformatted journal is
// JournalNotFormattedException; the upgrade calls (doPreUpgrade, doUpgrade,
// doFinalize, canRollBack, doRollback) are UnsupportedOperationException.
//
// # Goroutines
//
// The RPC server's (package ipc), the web server's (package web), one
// sync loop (when dfs.journalnode.enable.sync) and one watcher that stops
// the node if its RPC server dies. Close stops and waits for all of them.
package server
