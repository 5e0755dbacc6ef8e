// Package namespace is the NameNode's directory tree: inodes (files and
// directories), their owners, modes and times, the block list of every file,
// files under construction, quotas, and the id counters (last inode id,
// generation stamp, last block id). It is a pure core: no I/O, no clock, no
// goroutines. The namesystem owns one Tree and calls it under its write lock.
//
// # Plan, log, apply
//
// Every change is an op of package op, and Tree.Apply is the only function that
// changes the tree. A client request goes through three steps, all under one
// namesystem write lock:
//
//	ops, err := tree.PlanMkdirs(caller, "/a/b", 0o755, true, nowMillis) // validate, check permissions
//	if err != nil { return err }                                          // nothing happened
//	for _, o := range ops { editLog.Append(o) }                           // assigns txids
//	for _, o := range ops { if err := tree.Apply(o); err != nil { fail-stop } }
//
// Plans never mutate. They take the time as an argument and allocate inode ids
// from NextInodeID upwards in the ops they return; applying the ops advances the
// counters. Startup replay, the standby's tailer and checkpoint merges call the
// same Apply, so image + edits rebuild exactly the tree clients saw. Apply trusts
// the permission decisions recorded in the ops but checks structure (the parent
// exists and is a directory, the file is under construction, ...); when an op
// does not fit it returns an error wrapping ErrCorrupt and leaves the tree as it
// was. ApplyEffects additionally reports the blocks and open files an op removed.
//
// Errors of plans and reads wrap the sentinels of errors.go; their Error() text
// is the message HDFS puts in its RemoteException, and each sentinel names the
// Java exception class to report.
//
// # Permissions
//
// POSIX-like, as HDFS: EXECUTE on every ancestor to traverse, WRITE on the
// parent (or the nearest existing ancestor for creations) to add or remove a
// name, the sticky bit limiting removal and rename to the owners of the entry or
// the directory, ALL on every non-empty directory of a subtree being deleted.
// Superusers (Config.SuperUser, members of Config.SuperGroup, or Caller.Super)
// bypass every check, as does Config.PermissionsEnabled=false, except the
// ownership rules of setOwner.
//
// # Memory layout
//
// One inode is one 64-byte struct (on 64-bit; TestInodeSize): id, local
// name (a string of its own, never a slice of a longer path), mtime, atime,
// one pointer, a word packing a file's preferred block size and replication
// with two flags, an index into an interned (owner, group) table, mode and a
// block count. The pointer (inode.go, the package's one use of unsafe) is a
// directory's part (parent, sorted children, optional quota record, and the
// usage of its subtree: inodes, directories and space, kept by every op
// that changes them, so that quota checks, renames and deletes of big trees
// do not walk them) for a directory; for a closed file, its block array, counted by the block count;
// for a file open for write or with more blocks than the count holds, a
// small extension holding its block slice and under-construction part. No
// full paths are stored: a path is resolved by binary search in each
// directory's children, kept sorted by name: one slice up to 512 entries,
// past that a list of sorted chunks of 256 to 512 (children.go), so that an
// insertion or a removal in a directory of a million entries moves at most
// a chunk and getListing's page costs the page, not the directory. Only files under construction are indexed
// by inode id (FileByID). Extended attributes, ACLs and storage policies
// live in a side table (features.go).
// BenchmarkMemoryPerFile measures the heap per empty file.
//
// # Deleting big trees
//
// A recursive delete changes at once only what does not grow with the
// subtree (detach.go): its name, the usage above it, the counters and the
// open files below it. The subtree itself is detached and released later in
// bounded slices (Tree.ReleaseDetached), which hand its blocks to the block
// map, so a delete of a million files holds the namesystem lock for
// microseconds, not a walk of a million inodes.
//
// # Images
//
// Export streams the inodes pre-order (parent first, children by name) as
// fsimage.Inode records; NewFromImage (or a Builder) rebuilds a tree from such a
// stream without holding more than the tree itself, recomputing every
// directory's usage.
//
// # Snapshots
//
// A snapshottable directory D (allowSnapshot) may have snapshots: read-only
// views of the subtree below D as it was when each was taken, read through
// D/.snapshot/NAME/... . Snapshot ids come from one counter for the whole
// namespace and only grow; a snapshot records its id, name, creation time
// and the last inode id handed out then (an inode with a larger id is in
// no older snapshot). Taking one is O(1): it copies nothing. All snapshot
// state lives in Tree.snap (snapstate.go), beside the tree; inodes carry
// nothing for it.
//
// What a snapshot holds. Every inode object has an optional history: a
// list of versions, each a copy of the inode's fields (name, owner, mode,
// times, replication, block size, block list, and its extended attributes
// and ACL, as HDFS's snapshot copy keeps its XAttrFeature and AclFeature)
// tagged with the snapshot counter when it was saved. The attribute list
// and the ACL are shared with the live inode, not copied: setXAttr and
// removeXAttr build a new list, and ACLs are shared immutable objects (the
// version holds a reference). getXAttrs, listXAttrs and getAclStatus on a
// snapshot path answer from the version, and reads in a snapshot check
// permissions against the version's bits and ACL. A version with tag T, after one with tag P
// (0 for the first), is the state that every snapshot with id in (P, T]
// sees; a snapshot newer than the last tag sees the live inode. A
// directory's version also carries a children diff: the child objects
// added and removed after it was saved, until the next version (an add
// and a remove of the same object in one span cancel out, so a rename
// within a directory leaves no trace there). A snapshot's view of a
// directory is its live children with the diffs of the versions from the
// newest down to the selected one undone, each child shown with its own
// version; the view of D itself is named after the snapshot and has its
// creation time as mtime.
//
// Copy on write. Before Apply changes an inode (attributes, block list,
// name, children, or removes it), it computes the newest snapshot L that
// may see the inode: the newest snapshot of a snapshottable directory on
// its path, or of an exile mark on its path (below). If L exists, the
// inode existed when L was taken, and its newest version is older than L,
// it saves a version (tag = the counter now). So each inode costs one copy
// per snapshot after which it changed, and nothing when unchanged:
//
//	unchanged ──change, L newer than last version──▶ version saved ──change──▶ (no copy until the next snapshot)
//
// What the ops do to an inode a snapshot references:
//
//	delete     every inode of the removed subtree that a snapshot sees is
//	           saved and becomes an orphan: out of the live tree, reachable
//	           only through its old parent's diff; the rest are dropped
//	rename     source and destination parents are saved and record the
//	           move in their diffs; the moved inode is saved (its name
//	           changes) and gets an exile mark with L, so that changes
//	           below it keep being saved for the snapshots that saw it at
//	           its old place
//	append     the file is saved with its old block list; the shared last
//	           block grows in place (a snapshot reads only its old length)
//	truncate   on a block boundary the dropped blocks stay in the saved
//	           version; a cut inside a block that a snapshot holds is a
//	           copy-on-truncate (below)
//	concat     refused when a snapshot sees a source file
//	disallowSnapshot, or deleting/overwriting a directory that has
//	           snapshots below it: refused, as HDFS does
//
// Copy-on-truncate. A truncate whose new end falls inside a block B
// (id b, stamp g, length n) that a snapshot holds cannot cut B's replicas:
// the snapshot still reads all n bytes. As HDFS does, the plan allocates a
// new block id c (OP_ALLOCATE_BLOCK_ID) and a new stamp h
// (OP_SET_GENSTAMP_V2), and OP_TRUNCATE carries the truncate block
// (c, h, the new length m of the last block). Applying it saves the file's
// version (with B), replaces B by C in the live list, and opens the file
// for the truncating client; B stays whole, owned by the version:
//
//	live:     [.. B(b,g,n)]  closed
//	   │ OP_ALLOCATE_BLOCK_ID c, OP_SET_GENSTAMP_V2 h, OP_TRUNCATE (c,h,m)
//	   ▼
//	live:     [.. C(c,h,m)]  under construction, lease of the client
//	version:  [.. B(b,g,n)]  (the snapshot's view, B unchanged)
//	   │ block recovery: each holder of B copies its first m bytes into a
//	   │ new finalized replica C; commitBlockSynchronization(B, h, m)
//	   ▼ (OP_CLOSE with C at its committed stamp and length)
//	live:     [.. C]  closed          version: [.. B]
//	   │ deleteSnapshot (the last snapshot selecting the version)
//	   ▼
//	live:     [.. C]                  B freed, its replicas invalidated
//
// The file's under-construction part records B's id (TruncateSource; in
// the image too), so the recovery knows what to copy after a restart or a
// lease expiry. A snapshot deleted while the copy runs does not free B: a
// version holding it is kept (no view selects it) until the file is
// closed or deleted, which drops that version and frees B, as HDFS keeps
// the truncate block of a recovery under way.
//
// In-place truncate. When no snapshot holds B, OP_TRUNCATE's truncate
// block keeps B's id (with a new stamp h and the cut length m); B in the
// live list takes the length m but keeps its stamp g, the one its replicas
// have, until the recovery commits (h is the first recovery's id), so that
// a NameNode started from an image still finds the replicas. The file is
// opened with a flag of its own (truncInPlace,
// TruncatingInPlace), distinct from truncSrc so that nothing keeps B alive
// as a copy source. In the image the flag is written as a TruncateSource
// equal to the last block's id, as Hadoop's truncate block names the block
// itself for an in-place cut; loading tells the two cases apart by that.
// Every block recovery of the file, the truncate's own and any retry (lease
// expiry, recoverLease, after a restart or a takeover), asks the holders to
// cut to m, so the DataNodes never agree on the old, longer length. The flag
// goes with the rest of the under-construction part when the recovery's
// commit closes the file or the file is deleted.
//
// When blocks are freed. A block belongs to one inode object, in its live
// block list and in any of its versions. A change frees a block that
// leaves the live list only when no version of that inode holds it;
// deleting a snapshot drops every version that no remaining snapshot
// selects (no snapshot id in its (P, T] span; a dropped directory
// version's diff merges into the previous version) and frees the blocks
// of the dropped versions that neither the live inode nor a remaining
// version holds. Orphans and exile marks that nothing needs are dropped
// with them. EachFileWithBlocks reports the blocks only versions hold, so
// the block map keeps them across restarts.
//
// Snapshot state is persisted in the image as its own record
// (snapimage.go) and changed only by OP_CREATE_SNAPSHOT, OP_DELETE_SNAPSHOT,
// OP_RENAME_SNAPSHOT and the copy-on-write steps of the other ops.
// ContentSummary adds what only snapshots keep (the orphans the diffs hold
// and the blocks only versions hold), as HDFS's getContentSummary does; the
// quota checks and getQuotaUsage count them too (snapquota.go): usage
// derived from the snapshot state, never logged, recomputed after a
// restart. A version keeps the inode's xattrs and ACL (shared, not
// copied); storage policies and quotas are not kept per snapshot (reading
// them through a .snapshot path is refused as not supported).
//
// A Tree is not safe for concurrent use.
package namespace
