package conf

// Keys of HDFS snapshots.
const (
	// DFSNameNodeSnapshotMaxLimit bounds the snapshots of one snapshottable
	// directory (dfs.namenode.snapshot.max.limit, 65536).
	DFSNameNodeSnapshotMaxLimit = "dfs.namenode.snapshot.max.limit" // 65536
)
