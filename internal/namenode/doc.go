// Package namenode is the NameNode's composition root: it owns the name and edits
// directories, wires the namespace core (package namespace) to the edit log
// (package editlog) and the image (package fsimage), and serves
// ClientNamenodeProtocol over Hadoop RPC (package ipc).
//
// # The write path
//
// Every namespace mutation runs the same steps (namesystem.mutate):
//
//  1. take the namesystem write lock;
//  2. refuse in safe mode (SafeModeException);
//  3. plan: the namespace validates the request and checks permissions, and
//     returns the ops that carry it out (with inode ids allocated), or an error;
//  4. append each op to the edit log's buffer (which assigns its txid) and apply it
//     to the tree with namespace.Tree.Apply, the one mutation path that replay
//     uses too;
//  5. release the lock;
//  6. wait until the last txid is durable in every edits dir (group commit: one
//     fsync covers every caller waiting at that moment);
//  7. answer.
//
// A call that was answered is in the log, always. When the log can no longer make
// edits durable (fewer than dfs.namenode.edits.dir.minimum dirs left), mutate
// returns an error for every later call and the NameNode stops: it never answers as
// if an unlogged op had happened.
//
// Reads take the read lock and never touch the log, except getBlockLocations' access
// time update, which is a mutation.
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
//	lock every dir ─► read VERSION (all dirs must agree) ─► remove leftover
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
// # Web server (dfs.namenode.http-address)
//
// The overview page (/, /dfshealth.html), /isActive (always 200 "I am Active!"
// until HA exists) and /jmx with Hadoop's beans: NameNodeInfo (capacity, the
// live and dead DataNodes as JSON strings, name dirs), FSNamesystem and
// FSNamesystemState (block and file counts, replication queues, safe mode as
// FSState), NameNodeStatus and RpcActivityForPort<port>. Every request reads
// one snapshot under the namesystem's read lock (web.go). /conf and /stacks
// come from internal/web; WebHDFS answers 501.
//
// # Goroutines
//
// The RPC server's readers and handler pool (package ipc), the edit log's flusher
// (package editlog), the web server (package web). NameNode.Close stops the RPC
// server (finishing calls in flight), the web server, closes the edit log
// (finalizing its segment) and unlocks the dirs.
package namenode
