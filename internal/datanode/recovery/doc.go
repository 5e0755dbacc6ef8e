// Package recovery holds the DataNode's pure decisions of block recovery: on
// the primary DataNode, which replicas survive and at what length (Hadoop's
// BlockRecoveryWorker.recover and syncBlock); on every participant, whether an
// initReplicaRecovery or updateReplicaUnderRecovery call may be applied to
// the replica it has (the rules FsDatasetImpl checks).
//
// It does no I/O and keeps no state; everything is safe for concurrent use.
// The DataNode's recovery worker (one goroutine per DNA_RECOVERBLOCK command)
// calls initReplicaRecovery on every location the NameNode named, feeds the
// answers to Decide, calls updateReplicaUnderRecovery on the plan's
// participants, and hands the ones that succeeded to Plan.Commit to build the
// commitBlockSynchronization call. internal/datanode/storage applies the
// per-replica rules to its replica map; CheckInit and CheckUpdate state them
// for a replica described by value.
//
// # Recovery of one block, on the primary
//
//	NameNode ── DNA_RECOVERBLOCK(block b, GS g, recovery id r, locations, [truncate to n]) ──▶ primary
//	primary ── initReplicaRecovery(b, r) ──▶ each location: writer stopped, replica → RUR
//	        ◀── (state before RUR, length, GS) | no replica | failure | recovery in progress
//	Decide ─▶ Plan{length, participants}
//	primary ── updateReplicaUnderRecovery(r, length) ──▶ each participant: cut, GS r, FINALIZED
//	primary ── commitBlockSynchronization(b, r, length, close, nodes that succeeded) ──▶ NameNode
//
// A copy-on-truncate (the truncate block has another id c than b: a
// snapshot keeps b) runs the same steps, except that initReplicaRecovery
// only inspects each replica of b (it must be FINALIZED and stays so, for
// the snapshot's readers) and updateReplicaUnderRecovery(r, c, n) writes the
// first n bytes of b as a new FINALIZED replica c with stamp r; the commit
// names b, as Hadoop's does, and the NameNode closes the file with c.
//
// # Which answers count (Decide, first step)
//
//	answer                                            effect
//	recovery in progress (a newer or equal id runs)   abort this recovery quietly: PlanAbort
//	call failed                                       not counted; all failed → ErrAllFailed
//	no replica                                        not counted
//	GS < g, GS ≥ r, or length 0                       not a candidate
//	candidate whose state before RUR is RUR/TEMPORARY not usable; candidates but none usable
//	                                                  → ErrNoUsableReplica
//	candidate FINALIZED / RBW / RWR                   usable
//	no usable replica at all                          PlanDelete: commit length 0, delete block
//
// # Length and participants (Decide, second step)
//
// The best state among the usable replicas decides (FINALIZED better than RBW
// better than RWR):
//
//	best       new length                       participants
//	FINALIZED  the finalized length; finalized  FINALIZED replicas, and RBW replicas
//	           replicas that disagree →         of exactly that length
//	           ErrFinalizedMismatch
//	RBW        minimum RBW length               RBW replicas (RWR ones are left out)
//	RWR        minimum RWR length               RWR replicas
//	truncate   n, whatever the best state       as above, less those shorter than n
//
// The minimum is the length every participant has, so it never asks a replica
// to grow; bytes beyond it were never acknowledged to the writer by all of
// the pipeline. Replicas left out keep their old generation stamp and are
// deleted by the NameNode once they report it. Hadoop would also send a
// truncate update to a replica shorter than n and have it fail there; Decide
// leaves such replicas out at once (ErrTruncateTooShort if none is left).
//
// # Per-replica rules
//
// CheckInit (initReplicaRecovery): the replica's GS must be at least the
// block's g and below the recovery id r; a replica already RUR under a
// recovery id ≥ r is ErrRecoveryInProgress (the primary aborts). CheckUpdate
// (updateReplicaUnderRecovery): the replica must be RUR under exactly this
// recovery id, may not be asked to grow (except for copy-on-truncate, which
// writes a new block), and the update may not move it back in time: a new GS
// older than its GS, or its own GS with another length, is refused. The same
// GS with the same length is the update already applied (a retried call) and
// is accepted.
//
// Example (the primary's worker):
//
//	answers := make([]recovery.Answer, len(locations))
//	for i, loc := range locations {
//		answers[i] = askInit(ctx, loc, b, r) // initReplicaRecovery over InterDatanodeProtocol
//	}
//	plan, err := recovery.Decide(blk, answers)
//	if err != nil || plan.Action == recovery.PlanAbort {
//		return err
//	}
//	var ok []int
//	for _, n := range plan.Participants {
//		if updateReplica(ctx, locations[n], r, plan.NewLength) == nil {
//			ok = append(ok, n)
//		}
//	}
//	c, err := plan.Commit(ok)
//	if err != nil {
//		return err
//	}
//	return nn.CommitBlockSynchronization(ctx, c)
package recovery
