// Package editlog owns the NameNode's edit log: the record codec, segment
// files, the Journal abstraction with its file implementation, the
// group-commit writer (Log) over a set of journals, and replay (ReadOps).
// The op types themselves live in the op subpackage.
//
// Callers: the NameNode writes through a Log (Append under its namesystem
// write lock, Sync after releasing it) and replays at startup with ReadOps;
// the standby's tailer, the checkpointer and the backup node read with
// ReadOps; the JournalNode stores segments in the same format. Log, FileJournal
// and ReadOps are safe for concurrent use; a Decoder is not.
//
//	l, _ := editlog.New(editlog.Config{MinJournals: 1}, []editlog.Journal{
//		editlog.NewFileJournal(vfs.Default, "/data/name/current")})
//	_ = l.InitForWrite()                          // cut torn tails, finalize leftovers
//	last, _ := l.ReadOps(imageTxID, tree.Apply)   // replay after the image
//	_ = l.StartSegment(last + 1)
//	txid := l.Append(&op.Mkdir{...})              // under the namesystem lock
//	err := l.Sync(ctx, txid)                      // outside it; reply only if nil
//	_ = l.Close()                                 // finalizes the segment
//
// # Segment files
//
// A journal directory holds segments named as in HDFS:
// edits_inprogress_<first:019d> while being written, renamed to
// edits_<first:019d>-<last:019d> when finalized (then the directory is
// synced). Every segment's first record is OP_START_LOG_SEGMENT with txid
// first; a segment finalized by the writer ends with OP_END_LOG_SEGMENT, which
// takes a txid like any other record. A segment finalized by recovery after a
// crash ends at its last whole record. An in-progress segment with no record
// is renamed with the suffix .empty at recovery.
//
// A segment file is a header followed by records:
//
//	+------+------+------+------+------+------+------+------+
//	| 'H'  | 'D'  | 'E'  | 'L'  |  layout version (int32 BE) |   8 bytes
//	+------+------+------+------+------+------+------+------+
//	| record | record | ...
//
// The layout version is 6 (LayoutVersion); readers accept 1 to 6, reject a
// version they do not know, and it only grows when the record or body
// layout changes. Version 2 added the rpc field below; a version 1 segment
// reads as if every rpc field were empty. Version 3 added OP_SET_ACL,
// OP_SET_XATTR, OP_REMOVE_XATTR, OP_SET_STORAGE_POLICY, OP_ALLOW_SNAPSHOT
// and OP_DISALLOW_SNAPSHOT; version 4 the delegation-token ops (opcodes 18
// to 21, bodies below); version 5 the snapshot ops (opcodes 26 to 28);
// version 6 OP_SET_QUOTA_BY_STORAGETYPE (48). Such an op in an older
// segment is corruption.
//
// # Records
//
//	 0        1                                 9                 13
//	+--------+---------------------------------+-----------------+
//	| opcode |          txid (int64 BE)        | body len (u32 BE)|
//	+--------+---------------------------------+-----------------+
//	| body (body len bytes, at most MaxRecordBody = 1 MiB)        |
//	+-------------------------------------------------------------+
//	| CRC32C (Castagnoli, u32 BE) of opcode, txid, len and body   |
//	+-------------------------------------------------------------+
//
// The opcode is op.Code (Hadoop's FSEditLogOpCodes numbering). txids are >= 1.
// A length above MaxRecordBody is rejected before any allocation.
//
// Body fields are written in the order listed, with these encodings:
// uv = unsigned varint (encoding/binary Uvarint), v = zig-zag varint
// (Varint), str = uv length then the bytes, bool = one byte 0 or 1,
// u16 = uv no larger than 65535, perm = str user, str group, u16 mode,
// block = v id, v numBytes, v genStamp, blocks = uv count then blocks,
// opt-block = bool present then (if 1) block, rpc = uv client-id length,
// the client id's bytes (0 or 16 of them), v callId. An empty slice decodes
// as nil.
// Varints must be minimal, so every op has exactly one encoding. A body with
// bytes left over after its last field is corrupt.
//
//	OP_ADD (0)               uv inodeID, str path, u16 replication, v mtime, v atime,
//	                         v blockSize, perm, str clientName, str clientMachine, bool overwrite
//	OP_RENAME_OLD (1)        str src, str dst, v mtime
//	OP_DELETE (2)            str path, v mtime
//	OP_MKDIR (3)             uv inodeID, str path, v mtime, perm
//	OP_SET_REPLICATION (4)   str path, u16 replication
//	OP_SET_PERMISSIONS (7)   str path, u16 mode
//	OP_SET_OWNER (8)         str path, str user, str group
//	OP_CLOSE (9)             str path, v mtime, v atime, blocks
//	OP_TIMES (13)            str path, v mtime, v atime
//	OP_SET_QUOTA (14)        str path, v nsQuota, v dsQuota
//	OP_RENAME (15)           str src, str dst, v mtime, bool overwrite
//	OP_CONCAT_DELETE (16)    str target, uv count, count × str src, v mtime
//	OP_GET_DELEGATION_TOKEN (18)    dtid, v expiry          (version 4)
//	OP_RENEW_DELEGATION_TOKEN (19)  dtid, v expiry          (version 4)
//	OP_CANCEL_DELEGATION_TOKEN (20) dtid                    (version 4)
//	OP_UPDATE_MASTER_KEY (21)       v keyID, v expiry, str secret (version 4)
//	OP_REASSIGN_LEASE (22)   str holder, str path, str newHolder
//	OP_END_LOG_SEGMENT (23)  (empty)
//	OP_START_LOG_SEGMENT(24) (empty)
//	OP_UPDATE_BLOCKS (25)    str path, blocks
//	OP_CREATE_SNAPSHOT (26)  str root, str name, v mtime        (version 5)
//	OP_DELETE_SNAPSHOT (27)  str root, str name, v mtime        (version 5)
//	OP_RENAME_SNAPSHOT (28)  str root, str old, str new, v mtime (version 5)
//	OP_ALLOW_SNAPSHOT (29)   str path
//	OP_DISALLOW_SNAPSHOT(30) str path
//	OP_SET_GENSTAMP_V2 (31)  v genStamp
//	OP_ALLOCATE_BLOCK_ID(32) v blockID
//	OP_ADD_BLOCK (33)        str path, opt-block penultimate, block last
//	OP_TRUNCATE (46)         str path, str clientName, str clientMachine, v newLength,
//	                         v mtime, opt-block truncateBlock
//	OP_SET_ACL (40)          str path, uv count, count × (uv scope, uv type, uv perm, str name)
//	OP_SET_XATTR (43)        str path, xattrs
//	OP_REMOVE_XATTR (44)     str path, xattrs
//	OP_SET_STORAGE_POLICY(45) str path, uv policyID (≤ 255)
//	OP_APPEND (47)           str path, str clientName, str clientMachine, bool newBlock
//	OP_SET_QUOTA_BY_STORAGETYPE (48) str path, uv storageType (StorageTypeProto
//	                         number, ≤ 255), v dsQuota (-1: cleared)
//
// xattrs = uv count, count × (uv namespace (≤ 4), str name, bool hasValue,
// then (if 1) str value). ACL scope ≤ 1, type ≤ 3, perm ≤ 7 (op.ACLEntry).
//
// dtid is a delegation token's identifier (op.DelegationTokenID): str
// owner, str renewer, str realUser, v issueDate, v maxDate, v
// sequenceNumber, v masterKeyID.
//
// In version 2 the bodies of OP_ADD, OP_DELETE, OP_RENAME_OLD, OP_RENAME,
// OP_CONCAT_DELETE, OP_UPDATE_BLOCKS, OP_APPEND, OP_TRUNCATE, OP_SET_XATTR
// and OP_REMOVE_XATTR (and from version 5 the three snapshot ops) end with an
// rpc field: the call that caused the op (op.RPCID), from which a standby
// or a restarted NameNode rebuilds its retry cache.
//
// # Torn tails and corruption
//
// A crash can leave the last write of an in-progress segment incomplete. The
// Decoder calls a record torn (*TornRecordError) when the file ends inside
// it, when it is the last record and its checksum fails, when it and all
// bytes after it are zero, or when its checksum or header fails and only
// zero bytes follow what was read of it; recovery truncates the file at its
// offset. Any other damage (bad opcode, txid or length followed by data, a
// bad checksum with records after it, a body that does not decode, a length
// that would swallow intact records) is a *CorruptionError naming the file
// and offset, and stops the start.
//
// A FileJournal preallocates its in-progress segment in zero-filled chunks
// of PreallocateBytes ahead of the records, as Hadoop does, so that the
// fsync after a batch flushes data alone and not the file's growing size;
// the zero fill after the last record reads as a torn tail, and finalizing
// a segment cuts it off.
//
// # Log states
//
//	           New
//	            |
//	            v
//	     UNINITIALIZED --InitForRead--> OPEN_FOR_READING (standby; ReadOps only)
//	            |
//	       InitForWrite  (recover in-progress segments)
//	            v
//	   BETWEEN_LOG_SEGMENTS  (ReadOps allowed)
//	      |          ^
//	StartSegment   EndSegment        RollSegment = EndSegment + StartSegment
//	      v          |
//	       IN_SEGMENT  (Append, Sync)
//	            |
//	          Close  (finalizes an open segment; from any state)
//	            v
//	         CLOSED
//
// # Group commit
//
// Append assigns the next txid and encodes the record into the current
// buffer under the Log's mutex; it never does I/O and, once the buffers have
// grown to the working size, never allocates. Sync(ctx, txid) returns at once
// if txid is durable. Otherwise, if no flush has taken txid and none is in
// its first stage, the caller becomes the flusher: it takes the buffer
// (appenders continue into another one), releases the mutex, writes the
// batch to every required journal in parallel and flushes (fdatasync) each
// — the first stage — then, once the previous batch has left it, to every
// optional journal — the second stage — and then publishes the new durable
// txid and wakes every waiter. A waiter whose txid was not in that batch
// becomes the next flusher. So one fsync per journal covers every txid
// appended while the previous flush ran.
//
// With required journals (HA's shared edits) the stages overlap: batch
// N+1's first stage may run while batch N is in its second, so the quorum
// journal takes the next batch while the local dirs sync the previous one
// (at most two batches in flight; each journal still gets batches in txid
// order, and an optional journal never gets a batch before every required
// one made it durable). Without required journals a batch starts only
// after the previous one ended, gathering what is appended meanwhile.
//
// SyncAsync(txid, done) is the same wait without a waiting goroutine of the
// caller's (asynchronous edit logging): done is registered and the Log's
// syncer goroutine, started at the first SyncAsync and stopped by Close,
// runs Sync for the highest registered txid no flush has taken yet,
// gathering every record appended while the previous flush ran into one
// batch. With required journals there are two syncers, so that batches
// overlap in the two stages as above. Whenever a flush ends (whoever ran
// it), a syncer calls done, outside the mutex and in txid order, for every
// registered txid now durable, with nil; when the log failed or was
// closed first, for every txid not durable, with the failure. done is
// called exactly once, on the caller's goroutine at once when the txid is
// already durable or the log has failed, and must not block.
//
// Journals added at run time (Log.AddJournal: the active's stream to a
// Backup Node) join at the next segment start, get each batch only after
// the configured journals made it durable, never count toward MinJournals,
// and are dropped when they fail; their Write and Flush must not block.
// The same batch bytes travel to the Backup Node, which decodes them with
// DecodeBatch; Manifest picks the finalized segments a checkpointer may
// download.
//
// A journal whose write, flush, start or finalize fails is dropped from the
// set (logged with slog) and the log goes on while at least
// Config.MinJournals remain. Below that the log fails: Sync returns an error
// wrapping ErrNoJournals for every txid not yet durable, forever; the
// NameNode must stop, since it may never acknowledge an op that is not logged.
package editlog
