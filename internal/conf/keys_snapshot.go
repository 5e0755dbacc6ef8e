package conf

// Keys of HDFS snapshots.
const (
	// DFSNameNodeSnapshotMaxLimit bounds the snapshots of one snapshottable
	// directory (dfs.namenode.snapshot.max.limit, 65536).
	DFSNameNodeSnapshotMaxLimit = "dfs.namenode.snapshot.max.limit" // 65536
)

// Keys of snapshot diff listings.
const (
	// DFSNameNodeSnapshotDiffListingLimit bounds the entries of one reply
	// of getSnapshotDiffReportListing (dfs.namenode.snapshotdiff.listing.limit, 1000).
	DFSNameNodeSnapshotDiffListingLimit = "dfs.namenode.snapshotdiff.listing.limit" // 1000
)
