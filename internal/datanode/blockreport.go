package datanode

import (
	"github.com/hdfsgo/hdfsgo/internal/blocklist"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
)

// BlockReportDelimiter is the value of the three longs between the finalized
// and the other replicas of a legacy block report.
const BlockReportDelimiter = ^uint64(0) // -1 as a Java long

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

// ReportedReplica is one replica of a decoded block report.
type ReportedReplica struct {
	storage.Block
	State storage.ReplicaState
}

// DecodeBlockReport decodes the legacy long list (EncodeBlockReport's form).
// It reports false when the list is malformed; the delimiter is required.
func DecodeBlockReport(longs []uint64) ([]ReportedReplica, bool) {
	if len(longs) < 5 || longs[0] > uint64(len(longs)) || longs[1] > uint64(len(longs)) || uint64(len(longs)) != 2+3*longs[0]+3+4*longs[1] {
		return nil, false
	}
	if d := longs[2+3*longs[0]:]; d[0] != BlockReportDelimiter || d[1] != BlockReportDelimiter || d[2] != BlockReportDelimiter {
		return nil, false
	}
	it, err := blocklist.NewLongs(longs)
	if err != nil {
		return nil, false
	}
	out := make([]ReportedReplica, 0, it.Len())
	for r, ok := it.Next(); ok; r, ok = it.Next() {
		out = append(out, ReportedReplica{Block: storage.Block{ID: r.ID, NumBytes: r.NumBytes, GenStamp: r.GenStamp}, State: storage.ReplicaState(r.State)})
	}
	return out, true
}
