// Package blockmgmt is the NameNode's block manager: a pure core that owns the
// "second relation" of HDFS, block → DataNodes, together with the DataNode
// descriptors, replica placement and every replication decision.
//
// The namespace (package namespace) owns the "first relation", file → ordered
// block list, and persists it. This package never persists anything: the block
// locations are rebuilt at every start from the DataNodes' block reports.
//
// # Who calls it
//
// The NameNode's composition root converts DatanodeProtocol and ClientProtocol
// messages into calls on a *Manager and converts the results back:
//
//   - registerDatanode, sendHeartbeat      → RegisterDatanode, Heartbeat (the
//     returned Commands go out as DNA_TRANSFER, DNA_INVALIDATE, DNA_REGISTER);
//   - blockReport (decoded by package blocklist, either encoding) →
//     StartFullReport, ReportSlice, SweepSlice per storage, one slice per
//     hold of the lock (ProcessFullBlockReport does it all in one call);
//   - blockReceivedAndDeleted               → ProcessIncremental;
//   - reportBadBlocks (client and DataNode) → ReportBadBlocks;
//   - addBlock                              → ChoosePipeline while planning, then
//     AddBlock when the op is applied (replay does the same) and SetPipeline;
//   - complete / addBlock of the next block  → CommitBlock, IsComplete;
//   - delete, setReplication, getBlockLocations, getDatanodeReport, getFsStats,
//     setSafeMode                           → RemoveBlocks, SetReplication,
//     GetBlockLocations, DatanodeReport, Stats, EnterSafeMode/LeaveSafeMode;
//   - refreshNodes (and the host files read at start-up)  → SetHostPolicy;
//     getBlocks (NamenodeProtocol, the balancer)          → GetBlocks;
//   - four periodic drivers, each a goroutine of the caller: CheckHeartbeats
//     (every few seconds; a node is dead once silent for longer than
//     Config.DeadInterval, however often it is called), ComputeWork (every
//     dfs.namenode.redundancy.interval.seconds), Tick (safe mode, every second)
//     and CheckAdmin (decommissioning and maintenance, every
//     dfs.namenode.decommission.interval; see admin.go).
//
// # Purity and concurrency
//
// A Manager does no I/O, starts no goroutine and never reads the clock: every
// method that needs the time takes `now`, and every random choice comes from the
// *rand.Rand given to New. A Manager is NOT safe for concurrent use: the caller
// serializes all calls (the NameNode holds its block-manager lock around each).
//
// # Block states (on the NameNode)
//
//	          AddBlock(UNDER_CONSTRUCTION)
//	                   │
//	                   ▼        UpdatePipeline (new GS)
//	         ┌── UNDER_CONSTRUCTION ◄──┐
//	         │         │  └────────────┘
//	(lease / │         │ CommitBlock: client's final length + GS
//	recovery)│         ▼
//	         │     COMMITTED ──── ≥ MinReplication FINALIZED replicas with the
//	         ▼         │          committed GS and length reported
//	  UNDER_RECOVERY   ▼
//	         └──────► COMPLETE   (also: AddBlock(COMPLETE) when the image or the
//	                              edit log loads a closed file; ForceComplete)
//
// Only COMPLETE blocks count for safe mode and are queued for re-replication;
// a COMMITTED block becomes COMPLETE by itself when enough replicas arrive, so
// the client's complete() succeeds on its first call when the DataNode reports
// the finalized replica before acknowledging the last packet. UNDER_RECOVERY is
// entered by the lease-recovery path (block recovery with DNA_RECOVERBLOCK),
// which is an extension of this package not yet written: see Command.
//
// # Replica states (as reported by DataNodes)
//
//	FINALIZED  complete on disk; counts as a live replica when its generation
//	           stamp (and, for COMMITTED/COMPLETE blocks, its length) matches.
//	RBW        being written; recorded for blocks under construction, ignored for
//	           COMPLETE blocks with the same GS, corrupt with an older GS.
//	RWR        an RBW found at DataNode restart, waiting for recovery; corrupt
//	           for a COMMITTED/COMPLETE block.
//
// A replica with an older generation stamp than the NameNode's, or the wrong
// length for a COMMITTED/COMPLETE block, is corrupt. A corrupt replica stays in
// the block's list (so it can be returned when nothing else exists) until
// enough good replicas exist; it is then removed and queued for deletion on its
// DataNode. A reported replica of a block the NameNode does not know is
// deleted (DNA_INVALIDATE), unless its generation stamp is in the future
// while in safe mode (bytes in future; see LeaveSafeMode).
//
// # DataNode states
//
//	  RegisterDatanode            no heartbeat for StaleInterval
//	──────────────────► live ────────────────────────────────► stale
//	                     ▲  ◄──────────── Heartbeat ────────────┘ │
//	                     │                                        │ no heartbeat for
//	 RegisterDatanode    │                                        │ 2×recheck+10×heartbeat
//	 (Heartbeat answers  │                                        ▼ (CheckHeartbeats)
//	 ErrUnregistered) ───┴──────────────────────────────────── dead
//
// A dead node loses all its replicas from the blocks map (the blocks that fall
// below their replication are queued) but keeps its descriptor so that it shows
// in the DEAD report; a node in maintenance keeps its replicas while its
// maintenance lasts. Admin states (NORMAL, DECOMMISSION_INPROGRESS,
// DECOMMISSIONED, ENTERING_MAINTENANCE, IN_MAINTENANCE) are drawn in
// admin.go: replicas on nodes leaving service are readable but not live. Its heartbeat is refused with ErrUnregistered, which the
// caller answers with DNA_REGISTER. A new UUID registering with the transfer
// address of an existing descriptor replaces that descriptor.
//
// # Re-replication
//
// Blocks with fewer live replicas than expected wait in five priority queues
// (0 highest: one replica left; 1: live×3 < expected; 2: the rest; 3: enough
// replicas but all on one rack; 4: no live replica, only corrupt ones — the
// missing blocks). ComputeWork takes ReplicationWorkMultiplier × live-nodes
// blocks per call, cycling through each queue, picks a source holding a good
// replica that is below its stream limit and targets by the placement policy,
// queues a Transfer on the source (sent with its next heartbeat reply) and
// records the work as pending until the targets report the replica or
// PendingReconstructionTimeout passes (then the block is queued again). A
// pending copy whose source or target dies, or registers again (a restart:
// the copy went with the old process), is forgotten at once and the block
// queued again, instead of waiting out the timeout as Hadoop does.
// Excess replicas are removed from the rack holding the most replicas, then
// from the node with the least remaining space. Nothing is replicated or
// deleted while in safe mode.
//
// # Safe mode
//
// A new Manager is in start-up safe mode while the caller loads the namespace
// (AddBlock for every block). Activate ends loading: with the thresholds
// already met (an empty namespace) safe mode ends at once; otherwise it ends
// SafeModeExtension after the share of COMPLETE blocks with MinReplication
// live replicas reaches SafeModeThresholdPct (in Hadoop's single-precision
// arithmetic: 5 blocks × 0.999 → 4 needed) and at least SafeModeMinDataNodes
// nodes are live. Reports and Tick advance it. On leaving, every block is
// examined once and the redundancy queues are built. Manual safe mode
// (EnterSafeMode) lasts until LeaveSafeMode, which also ends start-up safe mode.
//
// # Full block reports in slices
//
// A storage's full report of a million replicas must not hold the
// namesystem lock for its whole processing. It runs in three phases, each
// in slices between which the caller releases the lock:
//
//	StartFullReport ─► ReportSlice × k ─► SweepSlice × s (sweep, then clear) ─► done
//	                   record each listed  drop the storage's replicas
//	                   replica, mark it    left unmarked; then unmark all
//
// ReportFor and SweepFor are ReportSlice and SweepSlice ended by the
// caller's Over, asked every 64 replicas (the NameNode's ends a slice once
// its time budget has passed), so a slice's hold of the lock is bounded by
// time whatever a replica costs.
//
// One full report is processed at a time (a second StartFullReport fails
// with ErrReportInProgress; the NameNode serializes them, as Hadoop's single
// processing thread does). What other calls may do between slices, and why
// the result is still right:
//
//   - An incremental report (or a standby's postponed one) for the same
//     storage records or drops a replica that changed after the full report
//     was taken. The block is noted as touched: later slices skip it, so the
//     older full report never undoes the newer change, and a replica it adds
//     is marked, so the sweep keeps it. The result is the full report
//     followed by the incremental one, which is the order the DataNode
//     produced them in.
//   - A block deleted (RemoveBlocks) loses its replicas everywhere; a later
//     slice listing it finds no block and queues the replica for deletion,
//     as an atomic report processed after the delete would. A block marked
//     deleted (MarkDeleted, its removal queued) is judged the same way. A block added
//     has no replica on the storage until a report says so.
//   - A block's state or stamp changed (commit, complete, pipeline update,
//     append) is judged by each slice against the block as it is then:
//     every replica is judged alone (its block and its own storage), so
//     a slice gives each replica the verdict an atomic report processed at
//     that moment would.
//   - A removal anywhere in the storage's list during the sweep moves the
//     list's last entry into the hole; the sweep walks down from the end, so
//     that entry was already walked (still marked, it stays): nothing
//     unwalked is skipped. Entries appended during the sweep were marked.
//   - The node dying or being replaced between slices ends the report with
//     ErrUnregistered (the caller aborts it: AbortFullReport clears the
//     marks and drops nothing); the node reports again after registering.
//
// # Memory
//
// A block with three replicas costs about 80 bytes (BenchmarkMemoryPerBlock):
// a 56-byte blockInfo, a 4-byte slot of the blocks map's table (at most 3/4
// full) and a 4-byte entry per replica in its storage's list, which is what
// makes a dead node's or a full report's removals proportional to that
// storage's replicas. The entries live in a slab (blockmap.go): chunks of
// 8,192 blockInfo values without pointers (the collector does not scan
// them), each named by a 4-byte index that the table slots and the
// storage lists hold. A blockInfo keeps up to three 8-byte replicas in
// place (more go to a slice of their own, by block id) and packs the file
// id, replication, state, counters, replica count and storage policy in
// one word; a replica names its storage by a 22-bit index into
// Manager.stors. A *blockInfo is valid until its block is removed: its
// slab index is then reused, so code that keeps blocks across calls keeps
// their ids (the admin monitor's list of blocks short of replicas does).
//
// # Example
//
//	m := blockmgmt.New(blockmgmt.DefaultConfig(), rand.New(rand.NewPCG(1, 2)))
//	// load the namespace: m.AddBlock(fileID, blk, repl, blockmgmt.Complete, nil) ...
//	m.Activate(now)
//	err := m.RegisterDatanode(dn, now)
//	cmds, err := m.Heartbeat(dn.UUID, reports, xceivers, xmits, now)
//	targets, err := m.ChoosePipeline(3, clientIP, nil, nil, blockSize, policyID, now)
//	err = m.AddBlock(fileID, blk, 3, blockmgmt.UnderConstruction, nil) // applying the op
//	m.SetPipeline(blk.ID, blockmgmt.TargetIDs(targets))
//	res, err := m.ProcessIncremental(dn.UUID, storageID,
//		[]blockmgmt.ReceivedDeleted{{Block: final, Status: blockmgmt.Received}}, now)
//	state, err := m.CommitBlock(final) // COMPLETE when a finalized replica is in
//	work := m.ComputeWork(now)           // every 3 s; commands go out in heartbeats
package blockmgmt
