// Package client is the public Go client of hdfsgo: it speaks HDFS's
// ClientProtocol (Hadoop RPC v9, protobuf) to a NameNode, so it works
// against hdfsgo and Apache HDFS alike.
//
// This part covers the namespace (metadata) operations: Stat, ReadDir /
// ListDir, Mkdir / MkdirAll, Remove / RemoveAll, Rename /
// RenameOverwrite, Chmod, Chown, Chtimes / SetTimes, SetReplication,
// ContentSummary, QuotaUsage, SetQuota, StatFs, ServerDefaults, Access and
// CreateEmptyFile. Reading and writing file data (the DataNode path) is
// not part of the package yet.
//
// Callers: programs using HDFS from Go, and hdfsgo's own `hdfs dfs`
// (internal/cli/fsshell). The package imports no server package and
// exposes no protobuf type.
//
// Concurrency: a *FileSystem is safe for concurrent use; calls are
// multiplexed over the RPC client's connection. New does no I/O; the first
// call connects (New from Options, NewFromURI from hdfs://host:port).
// Close releases the connection.
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
package client
