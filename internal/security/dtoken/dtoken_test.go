package dtoken

import (
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

func TestRoundTrip(t *testing.T) {
	id := op.DelegationTokenID{Owner: "alice@HDFSGO.TEST", Renewer: "alice", IssueDate: 1796279510586,
		MaxDate: 1796884310586, SequenceNumber: 300, MasterKeyID: -5}
	got, err := Unmarshal(Marshal(id))
	if err != nil || got != id {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := Unmarshal(append(Marshal(id), 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add(Marshal(op.DelegationTokenID{Owner: "a", Renewer: "b", IssueDate: 1, MaxDate: 2, SequenceNumber: 3, MasterKeyID: 4}))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := Unmarshal(b)
		if err != nil {
			return
		}
		again, err := Unmarshal(Marshal(id))
		if err != nil || again != id {
			t.Fatalf("re-encoding changed %+v into %+v (%v)", id, again, err)
		}
	})
}
