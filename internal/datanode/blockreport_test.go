package datanode

import (
	"encoding/binary"
	"reflect"
	"testing"

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

// FuzzDecodeBlockReport feeds arbitrary long lists (a block report comes from
// the network) and checks that decoding never panics and yields what the header announces.
func FuzzDecodeBlockReport(f *testing.F) {
	f.Add([]byte{})
	f.Add(binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, 0), 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		var longs []uint64
		for len(b) >= 8 {
			longs = append(longs, binary.BigEndian.Uint64(b))
			b = b[8:]
		}
		if len(longs) >= 2 { // make small counts likely
			longs[0] %= 4
			longs[1] %= 4
		}
		reps, ok := DecodeBlockReport(longs)
		if !ok {
			return
		}
		if uint64(len(reps)) != longs[0]+longs[1] {
			t.Fatalf("%d replicas from a report announcing %d + %d", len(reps), longs[0], longs[1])
		}
		for i, r := range reps[:longs[0]] {
			if r.State != storage.Finalized {
				t.Fatalf("replica %d of the finalized section has state %v", i, r.State)
			}
		}
	})
}
