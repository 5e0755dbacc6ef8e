// Package client is the public Go client of hdfsgo: it speaks HDFS's
// ClientProtocol (Hadoop RPC v9, protobuf) to a NameNode, so it works
// against hdfsgo and Apache HDFS alike.
//
// Namespace (metadata) operations: Stat, ReadDir / ListDir, Mkdir /
// MkdirAll, Remove / RemoveAll, Rename / RenameOverwrite, Chmod, Chown,
// Chtimes / SetTimes, SetReplication, ContentSummary, QuotaUsage,
// SetQuota, StatFs, ServerDefaults, Access, CreateEmptyFile, Truncate,
// RecoverLease, BlockLocations.
//
// Data operations talk to the DataNodes with DataTransferProtocol
// (internal/datatransfer): Create / CreateFile / Append return a *Writer
// (io.Writer, io.ReaderFrom, io.Closer, Flush = hflush, Sync = hsync);
// Open returns a *Reader (io.Reader, io.ReaderAt, io.Seeker, io.WriterTo);
// ReadFile and WriteFile are shorthands; Checksum is the MD5-of-MD5-of-CRC
// file checksum of `hdfs dfs -checksum`. FS adapts the file system to
// io/fs (fs.ReadDirFS, fs.ReadFileFS, fs.StatFS). Package clienttest runs
// an in-memory NameNode and DataNodes for tests.
//
// Callers: programs using HDFS from Go, and hdfsgo's own `hdfs dfs`
// (internal/cli/fsshell). The package imports no server package and
// exposes no protobuf type.
//
// Concurrency: a *FileSystem is safe for concurrent use; calls are
// multiplexed over the RPC client's connection. New does no I/O; the first
// call connects (New from Options, NewFromURI from hdfs://host:port).
// Close releases the connection and stops the lease renewer. A Writer's
// methods are serialized; a Reader's ReadAt may run concurrently with
// anything, its Read / Seek / WriteTo share one offset.
//
// Goroutines: while at least one Writer is open, one goroutine per
// FileSystem calls renewLease every 30 s (half the NameNode's soft lease
// limit); every open block pipeline has one goroutine reading its acks.
// Close of the Writer (or of the FileSystem) stops them.
//
// # Paths
//
// Every method accepts absolute paths, paths relative to WorkingDir
// (default /user/<user>, as in Hadoop), and hdfs:// URIs whose authority
// is this file system's (one of Options.Addresses or Options.Authority):
//
//	"/data/x/"                  -> /data/x
//	"x/y"                       -> /user/alice/x/y
//	"hdfs://nn:8020/data/x"     -> /data/x
//	"hdfs://other:8020/data/x"  -> error matching ErrWrongFS
//
// # Errors
//
// Every error of a path operation is an *fs.PathError whose Op names the
// operation ("stat", "mkdir", "remove", "rename", "chmod", "chown",
// "chtimes", "readdir", "content summary", ...) and whose Err is the
// NameNode's exception (*remoteerr.Error) or a package sentinel, so that
// errors.Is works with fs.ErrNotExist, fs.ErrExist, fs.ErrPermission,
// fs.ErrInvalid and syscall.ENOTEMPTY.
//
// # Wire behaviour
//
// Calls are made the way Hadoop's Java client makes them: getFileInfo
// answers a missing path with no status (not with an exception);
// getListing is paged with startAfter = the last local name until
// remainingEntries is 0; mkdirs sends masked = perm &^ umask with nothing
// above the sticky bit; rename2 is sent with overwriteDest false unless
// RenameOverwrite is used; setOwner leaves out an empty owner or group;
// the lease holder is named DFSClient_NONMAPREDUCE_<random>_<n>.
//
// Writing follows Hadoop's DFSOutputStream: getServerDefaults gives the
// checksum (CRC32C per 512 bytes by default) and the packet size (64 KiB:
// whole chunks that fit after the largest header, 64512 data bytes); the
// first byte of every block is preceded by addBlock(previous = the
// finished block with its length) and a WRITE_BLOCK to the first location
// with the others as targets (stage PIPELINE_SETUP_CREATE, or
// PIPELINE_SETUP_APPEND after updateBlockForPipeline for an append, then
// updatePipeline). Packets carry seqnos from 1 and offsetInBlock; after a
// Flush the next packet ends at the next chunk boundary:
//
//	block offset  0          512        1024       1536
//	              |----------|----------|----------|
//	Write 700 B, Flush       [ pkt 1: 0..700      ]
//	Write 1000 B               [pkt 2: 700..1024][pkt 3: 1024..1700 ...
//
// At most 80 packets wait for acks; more block the writer. A full block
// ends with an empty lastPacketInBlock packet whose ack is awaited. Close
// completes the file, retrying complete while it answers false (10 tries,
// waits doubling from 100 ms). A DataNode failure (error ack, broken
// connection) is recovered as Hadoop does: the failed node is dropped, the
// block gets a new generation stamp, the remaining nodes are set up with
// PIPELINE_SETUP_STREAMING_RECOVERY (PIPELINE_CLOSE_RECOVERY once the last
// packet was sent), updatePipeline records them and every unacked packet
// is sent again. When Hadoop's DEFAULT replace-datanode-on-failure policy
// asks for it (replication >= 3 and half the nodes gone, or the block was
// hflushed or appended to), getAdditionalDatanode names a new node and
// TRANSFER_BLOCK copies the acknowledged bytes to it first; unlike
// Hadoop's default this is best effort: without a new node the write goes
// on with the nodes left. An idle pipeline gets a heartbeat packet
// (seqno -1) after 30 s without a packet. When reopening a block for
// append fails on a node, the others are set up again with
// PIPELINE_SETUP_APPEND_RECOVERY. A pipeline that cannot be
// set up for a new block is abandoned (abandonBlock) and addBlock retried
// without the failing node, up to 3 times.
//
// Reading asks getBlockLocations for ten blocks' worth at a time, sends
// READ_BLOCK to the first location the NameNode lists for each block,
// verifies every chunk, reads the final empty packet and answers
// CHECKSUM_OK when a whole range was read. A replica that fails (connect
// error, error status, checksum mismatch, short data) is skipped for the
// rest of that Reader and the read resumes at the same offset on the next
// location; checksum mismatches are reported with reportBadBlocks. When
// every location failed, the reader waits (3 s times the round, plus a
// random part), forgets the failures, asks for the locations again and
// tries once more, three rounds in all. The length of a block still being
// written is asked from its DataNodes (getReplicaVisibleLength on their
// IPC port), falling back to what the writer last told the NameNode
// (fsync: on the first Flush of each block and on every Sync).
//
// Example:
//
//	fsys, err := client.New(client.Options{Addresses: []string{"nn:8020"}, User: "alice"})
//	if err != nil {
//		return err
//	}
//	defer fsys.Close()
//	if err := fsys.MkdirAll(ctx, "/data/in", 0o755); err != nil {
//		return err
//	}
//	entries, err := fsys.ReadDir(ctx, "/data")
//	if err != nil {
//		return err
//	}
//	for _, fi := range entries {
//		fmt.Println(fi.Mode(), fi.Size(), fi.Name())
//	}
//	if _, err := fsys.Stat(ctx, "/nope"); errors.Is(err, fs.ErrNotExist) {
//		fmt.Println("no /nope")
//	}
//	w, err := fsys.Create(ctx, "/data/in/log")
//	if err != nil {
//		return err
//	}
//	if _, err := io.Copy(w, src); err != nil {
//		w.Close()
//		return err
//	}
//	if err := w.Close(); err != nil { // completes the file
//		return err
//	}
//	r, err := fsys.Open(ctx, "/data/in/log")
//	if err != nil {
//		return err
//	}
//	defer r.Close()
//	_, err = r.WriteTo(os.Stdout)
package client
