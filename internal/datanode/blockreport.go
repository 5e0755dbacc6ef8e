package datanode

import (
	"github.com/hdfsgo/hdfsgo/internal/blocklist"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
)

// reportable converts the replicas a full report lists: TEMPORARY replicas
// are not reported; a replica under recovery is reported with the state it
// had before.
func reportable(reps []storage.Replica) []blocklist.Replica {
	out := make([]blocklist.Replica, 0, len(reps))
	for _, r := range reps {
		st := r.State
		switch st {
		case storage.Temporary:
			continue
		case storage.RUR:
			st = r.OriginalState
		}
		out = append(out, blocklist.Replica{ID: r.ID, NumBytes: r.NumBytes, GenStamp: r.GenStamp, State: uint8(st)})
	}
	return out
}

// EncodeBlockReport encodes replicas in the legacy long-list form of a
// StorageBlockReportProto's blocks field (package blocklist draws it) and
// returns the list and the number of replicas in it.
func EncodeBlockReport(reps []storage.Replica) ([]uint64, int) {
	r := reportable(reps)
	return blocklist.EncodeLongs(r), len(r)
}

// EncodeBlockReportBuffers encodes replicas in the buffers form
// (blocksBuffers and numberOfBlocks).
func EncodeBlockReportBuffers(reps []storage.Replica) ([][]byte, uint64) {
	return blocklist.EncodeBuffers(reportable(reps))
}
