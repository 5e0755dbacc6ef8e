// Package storage holds the storage-directory rules shared by the NameNode, the
// JournalNode and the DataNode: the VERSION file, the in_use.lock file, atomic
// file replacement, the identifiers a format hands out, and the layout of a
// NameNode name directory. It owns no goroutines and keeps no state between
// calls; all I/O goes through a vfs.FS, so every function is safe for
// concurrent use as far as the file system is (two writers of the same file
// are the caller's problem: hold the directory lock).
//
// Callers: the NameNode (name dirs, via NameDir), the JournalNode (journal dirs,
// via Dir), the DataNode (volume and block-pool VERSION files), and package
// fsimage (image file names).
//
// # Directory layout
//
//	<root>/in_use.lock         holder's "pid@hostname" while a process owns the dir
//	<root>/current/VERSION     Java-properties text, see below
//	<root>/current/seen_txid   NameNode only: decimal txid + "\n"
//	<root>/current/fsimage_<txid:019d>, ….md5, fsimage.ckpt_<txid:019d>   package fsimage
//	<root>/current/edits_…     package editlog
//
// # VERSION file
//
// The text Hadoop's java.util.Properties.store writes: one comment line with
// the date in java.util.Date's format, then key=value lines. Keys are written
// in the order Hadoop's files show them; keys this package does not know are
// kept (Version.Extra) and written back after the known ones.
//
//	#Tue Dec 01 20:50:25 UTC 2026
//	namespaceID=1472413353
//	clusterID=CID-4e2a6ebd-0c8c-4b8e-9f3a-1b2c3d4e5f60
//	cTime=0
//	storageType=NAME_NODE
//	blockpoolID=BP-1010101010-127.0.0.1-1764622225000
//	layoutVersion=-1001
//
// Which keys a file carries depends on its storage type:
//
//	NAME_NODE     namespaceID clusterID cTime storageType blockpoolID layoutVersion
//	JOURNAL_NODE  namespaceID clusterID cTime storageType layoutVersion
//	DATA_NODE     storageID clusterID cTime datanodeUuid storageType layoutVersion
//	(block pool)  namespaceID cTime blockpoolID layoutVersion     (StorageType "")
//
// # Layout versions
//
// Layout versions are negative and only move down (newer is more negative), as
// in Hadoop; a directory of a newer layout than the software's is refused, an
// older one is upgraded (never in place: see Transitions).
//
// DataNode directories are byte-for-byte those of HDFS 3.x and carry Hadoop's
// DataNode layout versions:
//
//	-55  DataNodeLayoutFirst      finalized replicas anywhere in subdir trees under finalized/
//	-56  DataNodeLayoutBlockID    finalized/subdir<(id>>16)&0xFF>/subdir<(id>>8)&0xFF>/
//	-57  DataNodeLayoutBlockID32  finalized/subdir<(id>>16)&0x1F>/subdir<(id>>8)&0x1F>/  (written)
//
// A DataNode runs only on -57 block pools; it upgrades -55 and -56 pools (and
// pools of an older cTime than the NameNode's) by hard-linking every replica
// into its -57 place in a new current/ (package datanode/storage).
//
// The NameNode image and edit formats are our own, so NameNodeLayoutVersion
// lives in a range Hadoop never uses (-1000 - N): a stock Hadoop NameNode
// refuses such a directory instead of misreading it, and a converter can tell
// the two families apart by the number alone. -1001 is the only one so far:
// the image and edit formats of packages fsimage and editlog as their docs
// draw them. A NameNode upgrade (hdfs namenode -upgrade) writes a new image in
// the current layout and a new cTime, the upgrade's time in milliseconds,
// which the DataNodes see in the namespace info and follow.
//
// # Transitions: upgrade, rollback, finalize
//
// An upgrade keeps the state before it until the operator finalizes it or
// rolls back to it, in Hadoop's directories beside current/:
//
//	<root>/current/        the state in use
//	<root>/previous/       the state before the upgrade (its own VERSION)
//	<root>/previous.tmp/   the old current/ while an upgrade builds the new one
//	<root>/removed.tmp/    the upgraded current/ while a rollback restores previous/
//	<root>/finalized.tmp/  previous/ while a finalize deletes it
//
// Each step of a transition is one rename or one deletion, synced before
// the next (StartUpgrade, CompleteUpgrade, StartRollback, RestorePrevious,
// RemoveRemoved, StartFinalize, RemoveFinalized); the new current/ of an
// upgrade gets its VERSION last. So after a crash the directories that exist
// say which step was interrupted, and Recover repairs it at the next start:
// Decide is that rule as a pure function (Hadoop's analyzeStorage), and
// Repair names the outcomes:
//
//	found                                    repair
//	previous.tmp, current without VERSION    remove current, previous.tmp → current (upgrade undone)
//	previous.tmp, current/VERSION            previous.tmp → previous (upgrade completed)
//	removed.tmp, previous, no current        removed.tmp → current (rollback undone)
//	removed.tmp, current/VERSION             remove removed.tmp (rollback completed)
//	finalized.tmp                            remove it (finalize completed)
//	anything else with a temporary dir       ErrInconsistentState, for the operator
//
// # Example
//
//	d := storage.NewNameDir("/data/nn1")
//	lk, err := d.Lock(fsys)
//	if err != nil {
//		return err // "storage: directory /data/nn1 is already locked by 4711@host"
//	}
//	defer lk.Close()
//	v, err := d.ReadVersion(fsys)
package storage
