// Package namenode is the NameNode's composition root: it owns the name and edits
// directories, wires the namespace core (package namespace) to the edit log
// (package editlog) and the image (package fsimage), and serves
// ClientNamenodeProtocol over Hadoop RPC (package ipc).
//
// # The write path
//
// Every namespace mutation runs the same steps (namesystem.run):
//
//  1. take the namesystem write lock;
//  2. refuse unless active (StandbyException) and in safe mode
//     (SafeModeException);
//  3. plan: the namespace validates the request and checks permissions, and
//     the block map (read through blockmgmt.View) is consulted; the plan
//     returns the ops that carry it out (with ids allocated), or an error,
//     and changes nothing;
//  4. append the ops to the edit log's buffer as one batch (which assigns
//     their txids; an op too large to be a record refuses the whole batch)
//     and apply each through applyLocked (apply.go), the one apply path that
//     start-up replay and a standby's tailer use too: tree, block map,
//     leases, retry cache;
//  5. run the plan's follow-up: soft state not in the edits (a new block's
//     pipeline, a block recovery started, a commit that closes nothing);
//  6. release the lock; when the ops freed more blocks than
//     dfs.namenode.block.deletion.increment (a recursive delete of a big
//     tree), they are first marked deleted in the block map and then
//     removed, in slices of at most an increment that each end once
//     hdfsgo.namenode.lock.slice-budget.ms (2 ms) has passed, a slice per
//     hold of the lock, other calls running in between (incremental block
//     deletion, apply.go);
//  7. wait until the last txid is durable in every journal (group commit:
//     one fsync covers every caller waiting at that moment) — also when a
//     later step of the same call failed after earlier steps logged ops;
//  8. answer.
//
// With asynchronous edit logging (dfs.namenode.edits.asynclogging, true by
// default, as in Hadoop 3) steps 7 and 8 leave the handler: a call that
// came over RPC asks its server to hold its reply (ipc.DeferReply) and hands
// the wait to the edit log's syncer (editlog.Log.SyncAsync), and the handler
// goes back to the pool to plan the next call while the flush runs. Each
// logged call goes through these states:
//
//	RUNNING   handler: plan, append, apply; the retry-cache entry is ended
//	   |      and the reply (or the call's own error) is built here
//	   v
//	HELD      the handler returned; the reply's bytes are encoded and
//	   |      kept by the RPC server; the call still counts as in flight
//	   |      on its connection (limits, graceful shutdown)
//	   +--> the syncer made a flush covering the call's last txid durable
//	   |    in every required journal (local dirs, a shared file:// dir,
//	   |    the quorum of JournalNodes) --> SENT: the held reply is queued
//	   |    on the connection
//	   +--> the log failed (or closed) before that --> FAILED: the reply is
//	        replaced by the error, the NameNode stops
//
// The syncer releases replies in txid order, so one client's pipelined
// calls are answered in the order their ops were logged. A connection that
// dies while calls are HELD loses their replies (the server drops them), but
// its reader waits for the release before the connection is gone. A retry
// of a held call found in the retry cache is held the same way until
// everything appended so far is durable, so no retry is answered before
// the first call's ops are on disk. Calls that did not come over RPC
// (the lease monitor's recoveries) and every call with the key set to false
// wait in the handler as in step 7.
//
// A call that was answered is in the log, always. When the log can no longer make
// edits durable (fewer than dfs.namenode.edits.dir.minimum dirs left), mutate
// returns an error for every later call and the NameNode stops: it never answers as
// if an unlogged op had happened.
//
// Reads take the read lock and never touch the log, except getBlockLocations' access
// time update, which is a mutation: getBlockLocations checks under its read lock
// whether the access time is older than dfs.namenode.accesstime.precision and only
// then takes the write path (which plans again). A fresh access time keeps an open a
// pure reader, so opens neither wait for the write lock nor, queued for it, hold
// back the readers behind them (sync.RWMutex lets no reader in while a writer
// waits).
//
// Non-idempotent calls (create, append, delete, rename, rename2, concat, ...) go
// through the retry cache: a retry with the same (clientId, callId) is answered with
// the first call's outcome and never applied twice.
//
// # Name directories
//
// Each dir in dfs.namenode.name.dir (and dfs.namenode.edits.dir, default the same)
// holds current/VERSION, current/seen_txid, images fsimage_<txid> with .md5, and
// edit segments edits_<first>-<last> / edits_inprogress_<first>; the dir itself is
// locked with in_use.lock while the NameNode runs.
//
// # Start-up
//
//	lock every dir ─► repair an interrupted upgrade, rollback or finalize
//	─► read VERSION (all dirs must agree) ─► remove leftover
//	fsimage.ckpt_* ─► load the newest image whose MD5 matches (older on mismatch)
//	─► replay every edit after it, in txid order, merged across edits dirs (a gap
//	is fatal and named) ─► cut a torn final record of the in-progress segment
//	(corruption anywhere else stops the start; `hdfs namenode -recover` offers to
//	truncate there) ─► finalize the recovered segment ─► open a new segment
//	─► serve.
//
// # Checkpoints
//
// saveNamespace (which, as in Hadoop, needs safe mode) rolls the edit log, writes
// fsimage_<txid> for the state at the end of the rolled segment in all name dirs in
// parallel, updates seen_txid, and purges images beyond
// dfs.namenode.num.checkpoints.retained and the edits no image needs any more
// (keeping dfs.namenode.num.extra.edits.retained extra transactions).
//
// # Upgrade, rollback, finalize
//
// `hdfs namenode -upgrade` (Upgrade, before Start) keeps every name, edits
// and file:// shared edits dir's current/ as previous/ and writes the loaded
// namespace as a new image with a new cTime; `hdfs namenode -rollback`
// (Rollback) puts previous/ back; ClientProtocol finalizeUpgrade drops it.
// Each step is synced and followed by a failpoint (Deps.Failpoint), and
// every start repairs what a crash interrupted (upgrade.go has the steps).
// DataNodes follow the cTime of the namespace info; one registering with
// another cTime is refused; once finalized, each is sent DNA_FINALIZE.
//
// # High availability
//
// Two NameNodes of a nameservice (dfs.nameservices, dfs.ha.namenodes.NS)
// share the edit log (dfs.namenode.shared.edits.dir): the active writes
// it — the shared journal first, its local edits dirs after — and the
// standby tails it (tailer.go) and keeps its block map from the same
// DataNode reports, queuing those the edits have not explained yet
// (blockmgmt's standby mode), so that a failover needs no block reports.
// Both start as standbys; hastate.go has the transitions. The standby
// checkpoints and uploads images to the active (checkpoint.go); every
// NameNode serves the image servlet (package imagetransfer) for that,
// for -bootstrapStandby (bootstrap.go) and for checkpoint nodes.
//
// # Checkpoint Node, Backup Node, Secondary NameNode
//
// Without HA, helpers keep a copy of the namespace and take the checkpoints
// (helper.go, checkpointer.go, backupnode.go; seed 000 §2, seed 003). They
// are NameNodes in another Role, with the same namesystem and apply path,
// and save images with the standby's code; their storage is
// dfs.namenode.checkpoint.dir and .edits.dir. On the active,
// checkpointrpc.go serves NamenodeProtocol's registerSubordinateNamenode,
// startCheckpoint (checks, roll, CheckpointCommand; ACT_SHUTDOWN for a
// node of another namespace), endCheckpoint, getEditLogManifest and
// errorReport; a registered Backup Node's stream (backupstream.go) joins
// the edit log as an optional journal (editlog.Log.AddJournal) that never
// makes the active wait and is dropped when it fails or falls behind. One
// Backup Node at a time, and no Checkpoint Node beside one. In an HA
// nameservice every helper refuses to start.
//
//	hdfs namenode -checkpoint   registers; every check period, when the
//	                            period or the txns threshold is reached:
//	                            startCheckpoint, manifest, image download on
//	                            the gap path, edits download, roll forward,
//	                            save, PUT upload, endCheckpoint
//	hdfs namenode -backup       the same, plus the JournalProtocol stream:
//	                            DROP_UNTIL_NEXT_ROLL → JOURNAL_ONLY → IN_SYNC
//	                            (package backup); serves namespace reads
//	hdfs secondarynamenode      rollEditLog instead of startCheckpoint, no
//	                            registration, no RPC server
//
// # Decommissioning and maintenance (admin.go)
//
// The host files — dfs.hosts and dfs.hosts.exclude, or the JSON file of
// CombinedHostFileManager (dfs.namenode.hosts.provider.classname) — are
// read at start-up (a file that cannot be read stops the start) and by
// refreshNodes, parsed by package hosts and handed to the block manager as
// its host policy: a DataNode the include list leaves out is refused at
// registration and at its next heartbeat with DisallowedDatanodeException;
// an excluded one is decommissioned; one IN_MAINTENANCE enters maintenance
// until its expiry. The liveness monitor runs the admin monitor
// (blockmgmt.CheckAdmin) every dfs.namenode.decommission.interval. Nothing
// of this is logged in the edits: it is configuration and soft state, and
// each NameNode of an HA pair reads its own files (dfsadmin asks both).
// getDatanodeReport and getDatanodeStorageReport answer every report type;
// for ALL and DEAD the include list's hosts that never registered are
// listed as dead, as Hadoop does.
//
// # The balancer's calls
//
// NamenodeProtocol getBlocks (superusers, not in safe mode) lists a
// DataNode's complete blocks with their locations (blockmgmt.GetBlocks);
// getBlockKeys answers that block tokens are off. ClientProtocol
// setBalancerBandwidth queues DNA_BALANCERBANDWIDTHUPDATE for every live
// DataNode.
//
// # Web server (dfs.namenode.http-address)
//
// The overview page (/, /dfshealth.html), /isActive (200 "I am Active!" on
// the active, 405 "I am not Active!" otherwise), /imagetransfer, and /jmx
// with Hadoop's beans: NameNodeInfo (capacity, the
// live and dead DataNodes as JSON strings, name dirs), FSNamesystem and
// FSNamesystemState (block and file counts, replication queues, safe mode as
// FSState, the nodes by admin state), NameNodeStatus and
// RpcActivityForPort<port> (with RpcQueueTime and RpcProcessingTime),
// NameNodeActivity (activity.go: client calls over RPC and WebHDFS, edit
// log appends and syncs); NameNodeInfo's DecomNodes and
// EnteringMaintenanceNodes give each leaving node's progress. Every
// request reads one snapshot under the namesystem's read lock (web.go).
// /conf and /stacks come from internal/web. /webhdfs/v1 (webhdfs.go)
// serves WebHDFS's namespace operations by calling the ClientProtocol
// handlers with the HTTP caller in ctx (same checks and edit-log path as
// RPC, no retry cache), and redirects CREATE, APPEND, OPEN and
// GETFILECHECKSUM to a DataNode's web port.
//
// /fsck (fsck.go) is what hdfs fsck asks, with Hadoop's FsckServlet
// parameters (ugi, path, files, blocks, locations, racks, replicadetails,
// openforwrite, listcorruptfileblocks with startblockafter, move, delete,
// blockId): a text report streamed as the walk goes. The walk lists a
// directory fsckSlice entries at a time, each slice (with the blocks of its
// files, from the block map's Fsck view) under one hold of the read lock;
// -move and -delete change the namespace through the one apply path.
//
// # Goroutines
//
// The RPC server's readers and handler pool (package ipc), the edit log's
// flusher (package editlog), the web server (package web), the liveness
// monitor (every state; it also runs the admin monitor), and the services
// of the current HA state: the active monitor (safe mode, redundancy work,
// leases, auto roll) on an active; the tailer and the checkpointer on a
// standby; the sender of a Backup Node's stream on an active that has one;
// the checkpointer on a helper (no liveness monitor: no DataNode reports to
// it). NameNode.Close
// stops the services, the RPC server (finishing calls in flight) and the
// web server, closes the edit log (finalizing its segment) and unlocks the
// dirs.
package namenode
