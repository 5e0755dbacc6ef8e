package datanode

import "github.com/hdfsgo/hdfsgo/internal/datanode/storage"

// BlockReportDelimiter is the value of the three longs between the finalized
// and the other replicas of a legacy block report.
const BlockReportDelimiter = ^uint64(0) // -1 as a Java long

// EncodeBlockReport encodes replicas in the legacy long-list form of a
// StorageBlockReportProto's blocks field (Hadoop's BlockListAsLongs before
// buffers; every NameNode since 2.x still decodes it) and returns the list
// and the number of replicas in it. TEMPORARY replicas are not reported; a
// replica under recovery is reported with the state it had before.
//
//	[0] number of finalized replicas F      [1] number of other replicas U
//	F × (blockId, numBytes, genStamp)
//	-1, -1, -1
//	U × (blockId, numBytes, genStamp, replicaState)
func EncodeBlockReport(reps []storage.Replica) ([]uint64, int) {
	var fin, uc []storage.Replica
	for _, r := range reps {
		switch r.State {
		case storage.Finalized:
			fin = append(fin, r)
		case storage.Temporary:
		default:
			uc = append(uc, r)
		}
	}
	out := make([]uint64, 0, 5+3*len(fin)+4*len(uc))
	out = append(out, uint64(len(fin)), uint64(len(uc)))
	for _, r := range fin {
		out = append(out, uint64(r.ID), uint64(r.NumBytes), uint64(r.GenStamp))
	}
	out = append(out, BlockReportDelimiter, BlockReportDelimiter, BlockReportDelimiter)
	for _, r := range uc {
		st := r.State
		if st == storage.RUR {
			st = r.OriginalState
		}
		out = append(out, uint64(r.ID), uint64(r.NumBytes), uint64(r.GenStamp), uint64(st))
	}
	return out, len(fin) + len(uc)
}

// ReportedReplica is one replica of a decoded block report.
type ReportedReplica struct {
	storage.Block
	State storage.ReplicaState
}

// DecodeBlockReport decodes the legacy long list (EncodeBlockReport's form).
// It reports false when the list is malformed.
func DecodeBlockReport(longs []uint64) ([]ReportedReplica, bool) {
	if len(longs) < 2 {
		return nil, false
	}
	f, u := longs[0], longs[1]
	if f > uint64(len(longs)) || u > uint64(len(longs)) || uint64(len(longs)) != 2+3*f+3+4*u {
		return nil, false
	}
	out := make([]ReportedReplica, 0, f+u)
	p := longs[2:]
	for i := uint64(0); i < f; i++ {
		out = append(out, ReportedReplica{Block: storage.Block{ID: int64(p[0]), NumBytes: int64(p[1]), GenStamp: int64(p[2])}, State: storage.Finalized})
		p = p[3:]
	}
	if p[0] != BlockReportDelimiter || p[1] != BlockReportDelimiter || p[2] != BlockReportDelimiter {
		return nil, false
	}
	p = p[3:]
	for i := uint64(0); i < u; i++ {
		out = append(out, ReportedReplica{Block: storage.Block{ID: int64(p[0]), NumBytes: int64(p[1]), GenStamp: int64(p[2])}, State: storage.ReplicaState(p[3])})
		p = p[4:]
	}
	return out, true
}
