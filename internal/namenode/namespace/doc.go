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
// directory's part (parent, sorted children, optional quota record) for a
// directory; for a closed file, its block array, counted by the block count;
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
// # Images
//
// Export streams the inodes pre-order (parent first, children by name) as
// fsimage.Inode records; NewFromImage (or a Builder) rebuilds a tree from such a
// stream without holding more than the tree itself, recomputing quota usage.
//
// A Tree is not safe for concurrent use.
package namespace
