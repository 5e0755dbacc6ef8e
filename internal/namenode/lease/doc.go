// Package lease is the NameNode's pure core for write leases and for the
// lease-recovery decisions that follow their expiry. It owns three things:
//
//   - Manager: the lease table. One lease per holder (the client name), covering
//     every file that holder has open for writing, with the time it was last
//     renewed. It answers "who holds file F", "has holder H passed the soft limit"
//     and, for the lease monitor, "which files passed the hard limit".
//   - DecideRelease: what to do with one file whose lease must be released (the
//     decision Hadoop's FSNamesystem.internalReleaseLease makes).
//   - RecoveryTracker: the block recoveries in flight, so a recovery is not
//     started twice and a recovery whose primary went quiet is retried on
//     another replica holder.
//
// Nothing here does I/O, starts goroutines or reads the clock: every call that
// depends on time takes now. The namesystem owns the values, calls them under
// its write lock (they are not safe for concurrent use), logs the edits
// (OP_REASSIGN_LEASE, OP_CLOSE, OP_UPDATE_BLOCKS) and sends DNA_RECOVERBLOCK;
// the lease monitor goroutine around Manager.ExpiredHardLimit runs every
// dfs.namenode.lease-recheck-interval-ms (2000 ms).
//
// # Lease life cycle
//
//	             AddLease(h, f)                RemoveLease(h, f) / RemoveFile(f)
//	(no lease) ─────────────────► held by h ─────────────────────────────► (no lease)
//	                               │   ▲   │
//	               RenewLease(h)   └───┘   │ soft limit (60 s) passed: another client's
//	              (moves h to the          │ create/append/recoverLease may take the file
//	               newest end)             │ (the namesystem asks SoftLimitExpired)
//	                                       │
//	                                       │ hard limit (dfs.namenode.lease-hard-limit-sec,
//	                                       ▼ 1200 s) passed: ExpiredHardLimit returns it
//	                               DecideRelease(file)
//	         CloseFile / CompleteLastAndClose /        StartBlockRecovery / RecoveryInProgress /
//	         RemoveEmptyLastBlockAndClose              Fail: ReassignLease(f, h, RecoveryHolder(now))
//	                 │                                         │  (OP_REASSIGN_LEASE)
//	                 ▼                                         ▼
//	            (no lease)                        held by HDFS_NameNode-<time>; closed by
//	                                              commitBlockSynchronization, or retried when
//	                                              that lease passes the hard limit in turn
//
// Wait and Invalid leave the file with its holder; it is looked at again on a
// later pass.
//
// Leases are kept in a list ordered by last renewal, oldest first, so renewing
// is O(1) (unlink, append) and a monitor pass costs O(files returned). The
// order relies on now never going backwards (use a monotonic reading); a now
// older than the newest renewal is treated as equal to it.
//
// # Bounded monitor passes
//
// Hadoop bounds each monitor pass by time (dfs.namenode.max-lock-hold-to-release-lease-ms,
// 25 ms) so the namesystem lock is held only briefly. We bound by count: each
// ExpiredHardLimit call returns at most max files, walking leases oldest first.
// A file the monitor cannot release (Wait, Invalid) stays in its expired lease;
// so that such files cannot starve the ones behind them, a call resumes just after
// the last file the previous call returned while that lease is still expired,
// and starts from the oldest lease again once the walk comes back empty.
//
// # The NameNode as holder
//
// While a file is under recovery its lease belongs to the NameNode. Like Hadoop,
// the holder name is "HDFS_NameNode-<start time>" and RecoveryHolder changes it
// once it is older than the hard limit: reassigning a file renews its holder's
// lease, so a single fixed name would be renewed by every new recovery and never
// expire, and files whose recovery failed would never be looked at again.
//
// # Release decision (DecideRelease)
//
// Input: the file's block states (the last two blocks may be incomplete; the
// penultimate only COMMITTED), the FINALIZED replica count of the last block, its
// length as the NameNode knows it, its expected replica holders and whether a
// recovery of it is already running. Rows are tried top to bottom:
//
//	 # blocks / last block          other conditions                               decision
//	 1 no blocks                    -                                              CloseFile
//	 2 any                          a block before the penultimate is incomplete,  Invalid
//	                                or the penultimate is UNDER_CONSTRUCTION /
//	                                UNDER_RECOVERY
//	 3 COMPLETE                     penultimate COMPLETE (or none)                 CloseFile
//	 4 COMPLETE                     penultimate COMMITTED                          Invalid
//	 5 COMMITTED                    penultimate ok¹ and finalized ≥ min repl.      CompleteLastAndClose
//	 6 COMMITTED                    otherwise                                      Wait
//	 7 UNDER_CONSTRUCTION /         no expected holders and length 0               RemoveEmptyLastBlockAndClose
//	   UNDER_RECOVERY
//	 8   "                          a recovery is running and not timed out        RecoveryInProgress
//	 9   "                          no expected holders, or all of them dead       Fail
//	10   "                          otherwise                                      StartBlockRecovery
//
//	¹ no penultimate block, a COMPLETE one, or a COMMITTED one with min. replication.
//
// Row 6 is Hadoop's "Failed to release lease ... Committed blocks are waiting to
// be minimally replicated" (AlreadyBeingCreatedException): the lease stays with
// the client and the file is tried again on the next pass. Row 9: no replica can
// be asked for the data, so no generation stamp is spent; the lease goes to the
// NameNode and the file stays open until a holder reports and the NameNode's
// lease expires in turn (or a client calls recoverLease). As in Hadoop, rows 7–10
// do not look at the penultimate block's replication; commitBlockSynchronization
// checks it when it closes the file.
//
// StartBlockRecovery needs a new generation stamp (the recovery id) and names a
// primary, an index into the expected holders: starting after the previous
// primary (rotation, so each retry asks another node), the first holder that is
// neither dead nor stale, else the first that is not dead. Hadoop instead takes
// the not-yet-tried live holder with the most recent heartbeat; rotation gives the
// same "every live holder gets a turn" without needing heartbeat times here. The
// participants sent to the primary are the live non-stale holders when there
// are at least two of them, else every live holder (the primary copes with the
// ones that fail); Hadoop also sends dead ones in the second case, which can only
// time out.
//
// # Recovery retries (RecoveryTracker)
//
// Start records a recovery (block id, recovery id, primary, start time). It stays
// pending until Done (commitBlockSynchronization arrived, or the file went away)
// or until Due hands it back because it is older than the recovery timeout. The
// timeout is Hadoop's: 30 × dfs.heartbeat.interval (90 s with the 3 s default;
// Hadoop has no key of its own for it, see RecoveryTimeout). Hadoop only checks
// that timeout when the file is looked at again; we also retry actively: the
// caller runs DecideRelease again with PrevPrimary set to the timed-out attempt's
// primary, which moves the recovery to the next holder under a new recovery id.
//
// Example (the lease monitor, under the namesystem write lock):
//
//	for _, e := range leases.ExpiredHardLimit(now, 1000) {
//		for _, f := range e.FileIDs {
//			st := fileState(f) // from the namespace and block manager
//			st.RecoveryPending = recoveries.Pending(lastBlockID, now, timeout)
//			switch d := lease.DecideRelease(st); d.Kind {
//			case lease.CloseFile, lease.CompleteLastAndClose, lease.RemoveEmptyLastBlockAndClose:
//				// log OP_CLOSE (after OP_UPDATE_BLOCKS for the removal), then
//				leases.RemoveFile(f)
//			case lease.StartBlockRecovery:
//				// new genstamp, block UNDER_RECOVERY, DNA_RECOVERBLOCK to d.Primary
//				recoveries.Start(lastBlockID, gs, d.Primary, now)
//				fallthrough
//			case lease.RecoveryInProgress, lease.Fail:
//				leases.ReassignLease(f, e.Holder, leases.RecoveryHolder(now), now)
//			}
//		}
//	}
package lease
