package dtoken

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
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

func TestTokenFile(t *testing.T) {
	tok := &common.TokenProto{Identifier: Marshal(op.DelegationTokenID{Owner: "a", SequenceNumber: 1}), Password: []byte{1, 2},
		Kind: proto.String(Kind), Service: proto.String("127.0.0.1:8020")}
	got, err := UnmarshalTokenFile(MarshalTokenFile([]*common.TokenProto{tok}))
	if err != nil || len(got) != 1 || !proto.Equal(got[0], tok) {
		t.Fatalf("%v %v", got, err)
	}
}

func FuzzUnmarshalTokenFile(f *testing.F) {
	f.Add(MarshalTokenFile([]*common.TokenProto{{Identifier: []byte{0}, Password: []byte{1}, Kind: proto.String(Kind), Service: proto.String("s")}}))
	f.Add([]byte("HDTS\x00\x8f\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		toks, err := UnmarshalTokenFile(b)
		if err != nil {
			return
		}
		again, err := UnmarshalTokenFile(MarshalTokenFile(toks))
		if err != nil || len(again) != len(toks) {
			t.Fatalf("re-encoding: %d tokens, %v", len(again), err)
		}
	})
}
