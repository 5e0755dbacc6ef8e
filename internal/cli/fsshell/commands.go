package fsshell

// commands returns the command table. Usage strings follow Hadoop's
// FsShell syntax; descriptions are ours.
func commands() []*command {
	t := []*command{
		{name: "ls", usage: "[-C] [-d] [-h] [-q] [-R] [-t] [-S] [-r] [-u] [-e] [<path> ...]", run: runLs,
			desc: "List the entries matching each path; a directory lists its children.\n" +
				"Without a path, /user/<current user> is listed.\n" +
				"Each line shows: permissions, replication (- for directories), owner, group,\n" +
				"size in bytes, modification date (yyyy-MM-dd HH:mm) and the path.\n" +
				"  -C  Print the paths only.\n" +
				"  -d  List directories themselves, not their contents.\n" +
				"  -h  Print sizes with binary prefixes (K, M, G, ...).\n" +
				"  -q  Print ? for each character that cannot be printed.\n" +
				"  -R  Descend into subdirectories.\n" +
				"  -t  Newest modification first.\n" +
				"  -S  Largest first.\n" +
				"  -r  Reverse the order.\n" +
				"  -u  Show and sort by access time instead of modification time.\n" +
				"  -e  Show the erasure coding policy after the replication: Replicated\n" +
				"      for files (hdfsgo has no erasure coding), nothing for directories."},
		{name: "lsr", run: runLsr, replacement: "ls -R"},
		{name: "mkdir", usage: "[-p] <path> ...", run: runMkdir,
			desc: "Create each directory.\n" +
				"-p: Create missing parents and accept directories that already exist."},
		{name: "rm", usage: "[-f] [-r|-R] [-skipTrash] [-safely] <src> ...", run: runRm,
			desc: "Delete the files matching each pattern.\n" +
				"-f: Say nothing and keep the exit status when a path does not exist.\n" +
				"-[rR]: Delete directories and everything below them.\n" +
				"-skipTrash: Delete immediately instead of moving to the trash. When the\n" +
				"NameNode's fs.trash.interval, or else the client's, is above zero, -rm moves\n" +
				"each path to /user/<user>/.Trash/Current instead of deleting it.\n" +
				"-safely: Ask before deleting a directory that holds more files than\n" +
				"hadoop.shell.safely.delete.limit.num.files (100)."},
		{name: "expunge", usage: "[-immediate]", run: runExpunge,
			desc: "Delete the user's trash checkpoints older than the trash interval and\n" +
				"make a new checkpoint of the current trash.\n" +
				"-immediate: Delete everything in the user's trash now."},
		{name: "rmr", run: runRmr, replacement: "-rm -r"},
		{name: "rmdir", usage: "[--ignore-fail-on-non-empty] <dir> ...", run: runRmdir,
			desc: "Delete each directory if it is empty.\n" +
				"--ignore-fail-on-non-empty: Skip non-empty directories silently."},
		{name: "mv", usage: "<src> ... <dst>", run: runMv,
			desc: "Move (rename) the sources matching each pattern to <dst>.\n" +
				"With several sources, <dst> must be an existing directory."},
		{name: "stat", usage: "[format] <path> ...", run: runStat,
			desc: "Print facts about each path in the given format (default %y):\n" +
				"%a permissions in octal, %A permissions symbolically, %b size in bytes,\n" +
				"%F type, %g group, %n name, %o block size, %r replication, %u owner,\n" +
				"%x %X access time, %y %Y modification time (%x %y as UTC\n" +
				"yyyy-MM-dd HH:mm:ss, %X %Y as milliseconds since the epoch)."},
		{name: "chmod", usage: "[-R] <MODE[,MODE]... | OCTALMODE> PATH...", run: runChmod,
			desc: "Change the permissions of each path.\n" +
				"-R: Also change everything below directories.\n" +
				"MODE is symbolic as for the shell's chmod, with the letters rwxXt\n" +
				"(e.g. u+x,g-w,o=r,+t); without u, g, o or a, a is meant; no umask applies.\n" +
				"OCTALMODE is 3 digits, or 4 when the first (0 or 1) sets the sticky bit."},
		{name: "chown", usage: "[-R] [OWNER][:[GROUP]] PATH...", run: runChown,
			desc: "Change the owner and/or group of each path.\n" +
				"-R: Also change everything below directories.\n" +
				"Only what is given is changed. Names may use letters, digits and -_./@."},
		{name: "chgrp", usage: "[-R] GROUP PATH...", run: runChgrp,
			desc: "Change the group of each path; the same as -chown :GROUP."},
		{name: "touchz", usage: "<path> ...", run: runTouchz,
			desc: "Create an empty file at each path. An existing empty file gets the current\n" +
				"time; an existing file with data is an error."},
		{name: "touch", usage: "[-a] [-m] [-t TIMESTAMP (yyyyMMdd:HHmmss) ] [-c] <path> ...", run: runTouch,
			desc: "Set the access and modification times of each path to now, creating an\n" +
				"empty file where none exists.\n" +
				"-a Change the access time only.\n" +
				"-m Change the modification time only.\n" +
				"-t TIMESTAMP Use this time (yyyyMMdd:HHmmss) instead of now.\n" +
				"-c Do not create files."},
		{name: "count", usage: "[-q] [-h] [-v] [-t [<storage type>]] [-u] [-x] [-e] [-s] <path> ...", run: runCount,
			desc: "Count the directories, files and bytes below each path. Columns:\n" +
				"DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME\n" +
				"-q: Show the quotas first: QUOTA REM_QUOTA SPACE_QUOTA REM_SPACE_QUOTA.\n" +
				"-u: Show the quotas and their use only.\n" +
				"-h: Print sizes with binary prefixes.\n" +
				"-v: Print a header line.\n" +
				"-t: With -q or -u, show the quota of each storage type and what is left\n" +
				"of it instead: of the comma-separated types given (RAM_DISK, NVDIMM,\n" +
				"SSD, DISK, ARCHIVE), or of all of them.\n" +
				"-x: Leave snapshots out of the counts (ignored with -q or -u).\n" +
				"-e: Show the erasure coding policy: Replicated for files, EC: and the\n" +
				"policy name otherwise.\n" +
				"-s: Show what only snapshots keep below each path: SNAPSHOT_LENGTH\n" +
				"SNAPSHOT_FILE_COUNT SNAPSHOT_DIR_COUNT SNAPSHOT_SPACE_CONSUMED."},
		{name: "du", usage: "[-s] [-h] [-v] [-x] <path> ...", run: runDu,
			desc: "Show the bytes used below each path: for a directory, one line per entry.\n" +
				"-s: One total line per path instead.\n" +
				"-h: Print sizes with binary prefixes.\n" +
				"-v: Print a header line.\n" +
				"-x: Leave snapshots out of the sizes.\n" +
				"Columns: size, disk space consumed with all replicas, path."},
		{name: "dus", run: runDus, replacement: "du -s"},
		{name: "df", usage: "[-h] [<path> ...]", run: runDf,
			desc: "Show the capacity, used and free space of the file system.\n" +
				"-h: Print sizes with binary prefixes."},
		{name: "test", usage: "-[defswrz] <path>", run: runTest,
			desc: "Answer a question about <path> through the exit status (0 yes, 1 no):\n" +
				"  -d  is a directory\n" +
				"  -e  exists\n" +
				"  -f  is a file\n" +
				"  -s  is larger than zero bytes\n" +
				"  -w  exists and the user may write it\n" +
				"  -r  exists and the user may read it\n" +
				"  -z  is zero bytes long"},
		{name: "setfattr", usage: "{-n name [-v value] | -x name} <path>", run: runSetfattr,
			desc: "Set or remove an extended attribute of a file or directory.\n" +
				"-n name       The attribute's name, with its namespace (user., trusted., ...).\n" +
				"-v value      Its value: \"text\" in quotes, 0x followed by hex digits,\n" +
				"              0s followed by base64, or plain text. Without -v the value is empty.\n" +
				"-x name       Remove the attribute.\n" +
				"<path>        The file or directory."},
		{name: "getfattr", usage: "[-R] {-n name | -d} [-e en] <path>", run: runGetfattr,
			desc: "Print the extended attributes of a file or directory.\n" +
				"-R            Also every file and directory below it.\n" +
				"-n name       Print the named attribute.\n" +
				"-d            Print every attribute the user may see.\n" +
				"-e <encoding> Show values as \"text\" (the default), hex (0x...) or base64 (0s...).\n" +
				"<path>        The file or directory."},
		{name: "setfacl", usage: "[-R] [{-b|-k} {-m|-x <acl_spec>} <path>]|[--set <acl_spec> <path>]", run: runSetfacl,
			desc: "Set the Access Control Lists (ACLs) of files and directories.\n" +
				"-b :Remove all but the base ACL entries. The entries for user, group and\n" +
				"  others are retained for compatibility with permission bits.\n" +
				"-k :Remove the default ACL.\n" +
				"-R :Apply operations to all files and directories recursively.\n" +
				"-m :Modify ACL. New entries are added to the ACL, and existing entries\n" +
				"  are retained.\n" +
				"-x :Remove specified ACL entries. Other ACL entries are retained.\n" +
				"--set :Fully replace the ACL, discarding all existing entries. The\n" +
				"  <acl_spec> must include entries for user, group, and others for\n" +
				"  compatibility with permission bits. If the ACL spec contains only\n" +
				"  access entries, then the existing default entries are retained. If the\n" +
				"  ACL spec contains only default entries, then the existing access\n" +
				"  entries are retained.\n" +
				"<acl_spec>: Comma separated list of ACL entries.\n" +
				"<path>: File or directory to modify."},
		{name: "getfacl", usage: "[-R] <path>", run: runGetfacl,
			desc: "Display the Access Control Lists (ACLs) of files and directories. If a\n" +
				"directory has a default ACL, then getfacl also displays the default ACL.\n" +
				"-R: List the ACLs of all files and directories recursively.\n" +
				"<path>: File or directory to list."},
		{name: "setrep", usage: "[-R] [-w] <rep> <path> ...", run: runSetrep,
			desc: "Set the replication of each file; a directory means every file below it.\n" +
				"-w: Wait until every block has the new number of replicas; this may\n" +
				"take a long time.\n" +
				"-R: Accepted for compatibility; has no effect."},
		{name: "put", usage: "[-f] [-p] [-l] [-d] [-t <thread count>] [-q <threadPool queue size>] <localsrc> ... <dst>", run: runPut,
			desc: "Copy local files to the file system; \"-\" as the only source reads stdin.\n" +
				"With several sources, <dst> must be a directory.\n" +
				"  -p  Keep access and modification times and permissions.\n" +
				"  -f  Overwrite an existing destination.\n" +
				"  -l  Lazy persist: write one replica (hdfsgo's DataNodes have no RAM_DISK\n" +
				"      tier, so it is written to disk at once).\n" +
				"  -d  Write the destination directly, without a temporary ._COPYING_ file.\n" +
				"  -t <thread count>  Copy up to this many sources at once (default 1).\n" +
				"  -q <threadPool queue size>  Accepted for compatibility (default 1024)."},
		{name: "copyFromLocal", usage: "[-f] [-p] [-l] [-d] [-t <thread count>] [-q <threadPool queue size>] <localsrc> ... <dst>", run: runPut,
			desc: "The same as -put."},
		{name: "moveFromLocal", usage: "[-f] [-p] [-l] [-d] <localsrc> ... <dst>", run: runMoveFromLocal,
			desc: "The same as -put, then deletes each local source once it is copied."},
		{name: "get", usage: "[-f] [-p] [-ignoreCrc] [-crc] <src> ... <localdst>", run: runGet,
			desc: "Copy files from the file system to the local one. With several sources\n" +
				"<localdst> must be a directory.\n" +
				"  -p  Keep access and modification times and permissions.\n" +
				"  -f  Overwrite an existing destination.\n" +
				"  -ignoreCrc, -crc  Accepted for compatibility; every chunk is verified\n" +
				"      and no .crc file is written."},
		{name: "copyToLocal", usage: "[-f] [-p] [-ignoreCrc] [-crc] <src> ... <localdst>", run: runGet,
			desc: "The same as -get."},
		{name: "getmerge", usage: "[-nl] [-skip-empty-file] <src> <localdst>", run: runGetmerge,
			desc: "Concatenate the files of each source directory (or the source files)\n" +
				"into one local file.\n" +
				"-nl: Add a newline after each file.\n" +
				"-skip-empty-file: Add nothing for empty files."},
		{name: "cat", usage: "[-ignoreCrc] <src> ...", run: runCat,
			desc: "Write the content of each file to stdout."},
		{name: "text", usage: "[-ignoreCrc] <src> ...", run: runText,
			desc: "Write each file to stdout as text; gzip-compressed files are\n" +
				"decompressed."},
		{name: "head", usage: "<file>", run: runHead,
			desc: "Show the first kilobyte of the file."},
		{name: "tail", usage: "[-f] <file>", run: runTail,
			desc: "Show the last kilobyte of the file.\n" +
				"-f: Keep showing data as it is appended, checking once a second,\n" +
				"until interrupted."},
		{name: "appendToFile", usage: "<localsrc> ... <dst>", run: runAppendToFile,
			desc: "Append the local files to <dst>, creating it if needed;\n" +
				"\"-\" reads stdin."},
		{name: "checksum", usage: "[-v] <src> ...", run: runChecksum,
			desc: "Print the MD5-of-MD5-of-CRC checksum of each file: path, algorithm and\n" +
				"the checksum bytes in hex.\n" +
				"-v: Add the file's block size (BlockSize=N)."},
		{name: "cp", usage: "[-f] [-p] [-d] <src> ... <dst>", run: runCp,
			desc: "Copy the files matching each pattern to <dst>; directories are copied\n" +
				"with everything below them. With several sources <dst> must be a\n" +
				"directory.\n" +
				"  -f  Overwrite an existing destination.\n" +
				"  -p  Keep modification and access times and permissions.\n" +
				"  -d  Accepted for compatibility; no effect."},
		{name: "truncate", usage: "[-w] <length> <path> ...", run: runTruncate,
			desc: "Cut each file to <length> bytes.\n" +
				"-w: Wait for the block recovery to complete, if one is needed."},
		{name: "find", usage: "<path> ... <expression> ...", run: runFind,
			desc: "Find every file and directory at or below each path that matches the\n" +
				"expression, and apply the expression's actions to it. Without a path,\n" +
				"the working directory is searched; without an action, -print is meant.\n" +
				"Primaries:\n" +
				"  -name pattern\n" +
				"  -iname pattern\n" +
				"    True when the last component of the path matches the glob pattern;\n" +
				"    -iname ignores case.\n" +
				"  -print\n" +
				"  -print0\n" +
				"    Always true; write the path to stdout followed by a newline, or\n" +
				"    by a NUL character with -print0.\n" +
				"Operator:\n" +
				"  expression -a expression\n" +
				"  expression -and expression\n" +
				"  expression expression\n" +
				"    True when both are true; the second is not evaluated otherwise."},
		{name: "concat", usage: "<target path> <src path> <src path> ...", run: runConcat,
			desc: "Append the blocks of the source files, in order, to the target file and\n" +
				"remove the sources. Every file must be in the same directory."},
		{name: "createSnapshot", usage: "<snapshotDir> [<snapshotName>]", run: runCreateSnapshot,
			desc: "Take a snapshot of a snapshottable directory and print its path.\n" +
				"Without a name, the NameNode names it s<yyyyMMdd-HHmmss.SSS>."},
		{name: "deleteSnapshot", usage: "<snapshotDir> <snapshotName>", run: runDeleteSnapshot,
			desc: "Delete a snapshot of a snapshottable directory."},
		{name: "renameSnapshot", usage: "<snapshotDir> <oldName> <newName>", run: runRenameSnapshot,
			desc: "Rename a snapshot of a snapshottable directory."},
		{name: "help", usage: "[cmd ...]",
			desc: "Show the help of the given commands, or of all."},
		{name: "usage", usage: "[cmd ...]",
			desc: "Show the usage line of the given commands, or of all."},
	}
	for _, n := range []string{
		"moveToLocal",
	} {
		t = append(t, &command{name: n, unsupported: true})
	}
	return t
}
