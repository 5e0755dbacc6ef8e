// Package blocklist is the codec of a storage's full block report, HDFS's
// BlockListAsLongs: the two encodings a StorageBlockReportProto carries.
// The DataNode encodes with it and the NameNode decodes with it; it is pure
// (no I/O) and safe for concurrent use (it has no state).
//
// # The long list (StorageBlockReportProto.blocks, field 2)
//
// Every Hadoop NameNode reads it; a DataNode sends it when the NameNode's
// NamespaceInfo does not advertise CapabilityBlockReportBuffers.
//
//	[0] F: finalized replicas   [1] U: other replicas
//	F × | blockId | numBytes | genStamp |
//	    |   -1    |    -1    |    -1    |      delimiter
//	U × | blockId | numBytes | genStamp | replicaState |
//
// # The buffers (blocksBuffers, field 4, with numberOfBlocks, field 3)
//
// One stream of varints, four per replica, in any order of states:
//
//	| zig-zag varint blockId | varint numBytes | varint genStamp | varint state |
//
// cut into buffers of at most BufferSize bytes; a replica, and even one
// varint, may straddle two buffers: the decoder reads the concatenation.
// Only the low 48 bits of numBytes and the low 4 bits of the state are
// meaning (the rest is reserved and masked off, as Hadoop does).
//
// # Decoding
//
// NewLongs and NewBuffers check a report's shape in one pass that
// allocates nothing, and return an Iter that yields the replicas one at a
// time, so the memory a report costs is what was received, whatever count
// it claims.
//
//	it, err := blocklist.NewBuffers(r.GetBlocksBuffers(), r.GetNumberOfBlocks())
//	for rep, ok := it.Next(); ok; rep, ok = it.Next() { ... }
package blocklist
