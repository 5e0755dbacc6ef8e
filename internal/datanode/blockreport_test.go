package datanode

import (
	"reflect"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/blocklist"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
)

func TestEncodeBlockReport(t *testing.T) {
	reps := []storage.Replica{
		{Block: storage.Block{ID: 1, GenStamp: 1001, NumBytes: 10}, State: storage.Finalized},
		{Block: storage.Block{ID: 2, GenStamp: 1002, NumBytes: 20}, State: storage.RBW},
		{Block: storage.Block{ID: 3, GenStamp: 1003, NumBytes: 30}, State: storage.Temporary},
		{Block: storage.Block{ID: -4, GenStamp: 1004, NumBytes: 40}, State: storage.RUR, OriginalState: storage.RWR},
		{Block: storage.Block{ID: 5, GenStamp: 1005, NumBytes: 50}, State: storage.Finalized},
	}
	longs, n := EncodeBlockReport(reps)
	m1 := ^uint64(0)
	want := []uint64{2, 2, 1, 10, 1001, 5, 50, 1005, m1, m1, m1, 2, 20, 1002, 1, uint64(1<<64 - 4), 40, 1004, 2}
	if n != 4 || !reflect.DeepEqual(longs, want) {
		t.Fatalf("EncodeBlockReport = %v, %d\nwant %v, 4", longs, n, want)
	}
	got, ok := DecodeBlockReport(longs)
	if !ok || len(got) != 4 || got[3].ID != -4 || got[3].State != storage.RWR || got[1].State != storage.Finalized {
		t.Fatalf("DecodeBlockReport = %+v %v", got, ok)
	}
	for _, bad := range [][]uint64{nil, {1}, {1, 0, 1, 2, 3}, {0, 0, 1, 2, 3}, {0, 1, m1, m1, m1}} {
		if _, ok := DecodeBlockReport(bad); ok {
			t.Fatalf("DecodeBlockReport(%v) accepted", bad)
		}
	}
}

// blockReportDelimiter is the value of the three longs between the
// finalized and the other replicas of a legacy block report.
const blockReportDelimiter = ^uint64(0) // -1 as a Java long

// ReportedReplica is one replica of a decoded block report.
type ReportedReplica struct {
	storage.Block
	State storage.ReplicaState
}

// DecodeBlockReport decodes the legacy long list (EncodeBlockReport's form),
// for the tests to read what a DataNode reports (the NameNode decodes reports
// with package blocklist).
// It reports false when the list is malformed; the delimiter is required.
func DecodeBlockReport(longs []uint64) ([]ReportedReplica, bool) {
	if len(longs) < 5 || longs[0] > uint64(len(longs)) || longs[1] > uint64(len(longs)) || uint64(len(longs)) != 2+3*longs[0]+3+4*longs[1] {
		return nil, false
	}
	if d := longs[2+3*longs[0]:]; d[0] != blockReportDelimiter || d[1] != blockReportDelimiter || d[2] != blockReportDelimiter {
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
