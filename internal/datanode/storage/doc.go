// Package storage is the DataNode's block storage: the volumes of
// dfs.datanode.data.dir, the block-pool directories on them, the block and
// meta files of every replica, the replica state machine, and the per-pool
// ReplicaMap that the DataNode's reports are made from. Its on-disk layout
// and file formats are byte for byte those of HDFS 3.x (layout version -57),
// so a Hadoop data directory can be adopted in place.
//
// Callers: the DataNode composition root opens the volumes (OpenVolume),
// formats new ones, builds a Dataset and adds each block pool when its
// NameNode is known (AddBlockPool, which rebuilds the ReplicaMap from disk);
// the xceiver writes replicas through ReplicaWriter and reads them through
// ReplicaReader; the block-pool actor takes block reports (Replicas), space
// reports (Reports) and carries out invalidations (Invalidate).
//
// The DataNode's background work goes through it too: the block scanner
// walks a volume with a BlockIterator (its position saved in the pool's
// scanner.cursor) and checks replicas with Verify; the directory scanner
// lists the disks (CompileReport), compares them with the map (Differences)
// and repairs the map (CheckAndUpdate); a failed or unconfigured volume
// leaves service with RemoveVolume, a new one enters with AddVolume. Every
// replica transition that takes a replica from its writer goes through
// lockStopped.
//
// Everything is safe for concurrent use except where a type says otherwise
// (a ReplicaWriter has one writing goroutine, a ReplicaReader one reader, a
// BlockIterator one user).
// Each Volume owns one goroutine, its deleter, started by OpenVolume and
// stopped by Close. Lock order: ReplicaWriter.mu, then ReplicaMap.mu, then
// Dataset.mu, then Volume.mu.
//
// # Layout of a volume
//
//	<vol>/in_use.lock
//	<vol>/current/VERSION                      storageID, clusterID, cTime, datanodeUuid, storageType=DATA_NODE, layoutVersion
//	<vol>/current/<bpid>/current/VERSION       namespaceID, cTime, blockpoolID, layoutVersion
//	<vol>/current/<bpid>/current/finalized/subdir<a>/subdir<b>/blk_<id>
//	<vol>/current/<bpid>/current/finalized/subdir<a>/subdir<b>/blk_<id>_<genstamp>.meta
//	<vol>/current/<bpid>/current/rbw/blk_<id>, blk_<id>_<genstamp>.meta
//	<vol>/current/<bpid>/tmp/                  TEMPORARY replicas; invalidated files awaiting deletion
//	<vol>/current/<bpid>/scanner.cursor        the block scanner's position (JSON, see Cursor)
//	<vol>/current/<bpid>/previous/             the pool's current/ before the last upgrade, until
//	                                           finalized (hard links to the same files)
//	<vol>/current/<bpid>/previous.tmp/, removed.tmp/, finalized.tmp/
//	                                           a transition under way (package storage)
//
// with a = (id>>16)&0x1F and b = (id>>8)&0x1F, the block id in signed
// decimal. tmp/ is emptied at every start, as Hadoop does.
//
// # Upgrade, rollback, finalize
//
// A block pool's storage on a volume is a storage directory of package
// storage, upgraded, rolled back and finalized by its steps (upgrade.go):
// when a pool is added, an interrupted transition is repaired, the pool is
// rolled back (Config.Rollback), and upgraded when it is older than the
// namespace (the NameNode's cTime) or of layout -55 or -56: every block and
// meta file is hard-linked into a new current/ at its -57 place, the old
// current/ kept as previous/. A replica file that previous/ still names is
// copied before any change in place (breakLinks: append, recovery, the cut
// of a torn RBW); a copy a crash interrupted (blk_….unlinked) is removed at
// start. FinalizeUpgrade and RemoveFinalized carry out DNA_FINALIZE.
//
// # Meta file
//
//	+----------------+-----------+------------------------+---------+---------+-----
//	| version u16 BE | type u8   | bytesPerChecksum u32 BE| crc 0   | crc 1   | ...
//	| 00 01          | 0/1/2     | 00 00 02 00 (512)      | 4 bytes | 4 bytes |
//	+----------------+-----------+------------------------+---------+---------+-----
//	type: 0 NULL (no crcs), 1 CRC32, 2 CRC32C; one big-endian crc per chunk of
//	the block file, chunks counted from the block start, the last one partial.
//	A complete meta file is 7 + ⌈length/bpc⌉ × 4 bytes (MetaFileLen).
//
// Packets may start and end inside a chunk (after an hflush, on append): the
// writer then recomputes the checksum of that chunk from the bytes on disk and
// the new ones, so the meta file always holds the checksums of the block's
// own chunks.
//
// The writer allocates the block file's space some megabytes ahead of the
// data (fallocate with FALLOC_FL_KEEP_SIZE, so the file's length is only what
// was written) and gives the excess back when it finishes, however it
// finishes: filling allocated space costs the kernel much less than delayed
// allocation page by page. Nothing is synced (files, or the directories of
// a finalized replica) unless the writer asks for it (hsync) or SyncOnClose
// is set.
//
// # Torn replicas at restart
//
// A replica being written when the DataNode stopped may have a block file and
// a meta file of inconsistent lengths. As Hadoop does, the scan only trusts
// the chunks both files cover, verifies the last of them, and cuts the
// replica to the end of that chunk if it matches, or to its start if not: the
// block file is truncated to that length (so is a meta file holding
// checksums beyond it) and the replica is loaded as RWR.
//
// # Recovery meta file
//
// UpdateReplicaUnderRecovery writes the replica's new meta file as
// blk_<id>_<newGS>.meta.recovery before it truncates the block file, and
// renames it afterwards. At startup such a file is renamed into place if it
// describes its block file exactly (MetaFileLen of the block's length, and
// the last chunk's checksum matches) and removed otherwise; either way the
// replica on disk is consistent: the old one or the recovered one.
//
// # Replica states
//
//	                CreateRBW (xceiver: client WRITE_BLOCK)   Finalize (xceiver: last packet)
//	  (none) ─────────────────────────────────────▶ RBW ─────────────────────────────▶ FINALIZED
//	    │                                          ▲  │                                 │  │
//	    │ CreateTemporary (xceiver: replication)   │  │ restart (startup scan)          │  │
//	    ▼                                          │  ▼                                 │  │
//	TEMPORARY ── Finalize ──▶ FINALIZED            │ RWR                                │  │
//	    │                                          │  │                                 │  │
//	    └─ Close/Abort: deleted                    └──┼── Append (xceiver: append) ─────┘  │
//	                                                  │                                    │
//	   RBW / RWR / FINALIZED ── InitReplicaRecovery (NameNode RECOVERBLOCK via the primary)│
//	                                                  ▼                                    │
//	                                                 RUR ── UpdateReplicaUnderRecovery ────┘
//	                                                        (new stamp, agreed length)
//
// Block recovery (lease recovery, driven by the NameNode through the primary
// DataNode) moves an RBW, RWR or FINALIZED replica to RUR
// (InitReplicaRecovery, which stops a writer still attached) and then to
// FINALIZED with the agreed length and the recovery id as its new
// generation stamp (UpdateReplicaUnderRecovery). A copy-on-truncate
// leaves its FINALIZED source alone (InspectCopySource) and creates a new
// FINALIZED replica of another block id from the source's prefix
// (CopyReplica: block and meta written in tmp/ and synced, then moved into
// finalized/ meta first, as Finalize does; a crash before the move leaves
// only tmp/ files, which start-up empties). Invalidate
// (NameNode command) removes a replica in any state; a replica with an older
// generation stamp than a new CreateRBW/CreateTemporary of the same block is
// invalidated by it. Duplicates found at startup keep the newer generation
// stamp, then the longer replica.
//
// # Write pipeline recovery
//
// When a pipeline loses a node, the client rebuilds it under a new
// generation stamp and each remaining node takes its replica over; a writer
// of the old pipeline still attached is stopped first (its later calls fail
// with ErrWriterStopped, its Close leaves the replica alone). A replica whose
// stamp is older than the client's, or newer than the new one, is refused
// before any writer is stopped; an RWR replica (restart mid-write) is
// refused by every recovery.
//
//	RBW ── RecoverRBW ──▶ RBW       cut to the acknowledged length (last chunk's
//	                                checksum recomputed), meta renamed to the
//	                                new stamp, writer continues from there
//	RBW / FINALIZED ── RecoverClose ──▶ FINALIZED   exact length, new stamp
//	RBW / FINALIZED ── RecoverAppend ─▶ RBW         exact length, new stamp
//	TEMPORARY ── ConvertToRBW ──▶ RBW   end of a TRANSFER_RBW copy: moved to
//	                                    rbw/, every byte acknowledged
//
// The files are cut (block file first, then the meta file) before the meta
// file is renamed and the directory synced; a crash in between leaves an RBW
// that the startup scan validates as any torn replica, under the old or the
// new stamp.
//
// # Volumes in and out of service
//
//	OpenVolume ──▶ NewDataset / AddVolume ──▶ in service ──▶ RemoveVolume ──▶ closed
//	                (prepare pools, scan)     (new replicas     (writers stopped, replicas
//	                                           by the policy)    returned as lost, lock released)
//
// New replicas go to a volume of the storage type the write asks for (any
// volume when the node has none of that type), chosen by the
// VolumeChoosingPolicy: RoundRobinPolicy, or AvailableSpacePolicy.
//
// # Directory scan
//
// Differences compares the FINALIZED replicas of the map with the files of
// finalized/ on every volume; CheckAndUpdate applies Hadoop's rules to each
// record (see there): a replica whose block file is gone leaves the map,
// files the map does not know enter it, a stamp follows the meta file found,
// a length follows the block file (and the replica is reported corrupt), and
// of two copies the newer stays. Replicas in other states are left alone.
//
// # Example
//
//	vol, err := storage.OpenVolume(storage.VolumeConfig{Dir: "/data/dn1"})
//	ds, err := storage.NewDataset(storage.Config{}, []*storage.Volume{vol})
//	bp, _, err := ds.AddBlockPool(bpVersion, time.Now())
//	w, err := bp.CreateRBW(storage.Block{ID: id, GenStamp: gs}, datatransfer.DefaultChecksum(), blockSize)
//	err = w.WritePacket(pkt.Header.OffsetInBlock, pkt.Data, pkt.Checksums)
//	w.SetBytesAcked(pkt.Header.OffsetInBlock + int64(len(pkt.Data)))
//	rep, err := w.Finalize(w.BytesOnDisk())
package storage
