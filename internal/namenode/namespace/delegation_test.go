package namespace

import (
	"bytes"
	"errors"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
)

func TestDelegationApplyAndImage(t *testing.T) {
	tr := New(Config{SuperUser: "hdfs", SuperGroup: "supergroup"})
	key := &op.UpdateMasterKey{KeyID: 1, Expiry: 10_000, Secret: []byte("k1")}
	id := op.DelegationTokenID{Owner: "alice", Renewer: "bob", IssueDate: 100, MaxDate: 5_000, SequenceNumber: 1, MasterKeyID: 1}
	id2 := id
	id2.SequenceNumber, id2.IssueDate = 2, 200
	for _, o := range []op.Op{key, &op.GetDelegationToken{ID: id, Expiry: 1_000}, &op.GetDelegationToken{ID: id2, Expiry: 1_100},
		&op.RenewDelegationToken{ID: id, Expiry: 2_000}, &op.CancelDelegationToken{ID: id2}} {
		if err := tr.Apply(o); err != nil {
			t.Fatalf("%v: %v", o.Code(), err)
		}
	}
	if exp, ok := tr.DelegationToken(id); !ok || exp != 2_000 {
		t.Fatalf("token: %d %v", exp, ok)
	}
	if _, ok := tr.DelegationToken(id2); ok {
		t.Fatal("cancelled token still there")
	}
	// Ops that do not fit are corruption and change nothing.
	for _, o := range []op.Op{&op.CancelDelegationToken{ID: id2}, &op.RenewDelegationToken{ID: id2, Expiry: 1},
		&op.GetDelegationToken{ID: op.DelegationTokenID{MasterKeyID: 9}}} {
		if err := tr.Apply(o); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%v: %v, want ErrCorrupt", o.Code(), err)
		}
	}
	// Through an image and back.
	h := tr.ImageHeader(7)
	var recs []fsimage.Inode
	tr.Export(func(in *fsimage.Inode) error {
		c := *in
		c.Name = append([]byte(nil), in.Name...)
		recs = append(recs, c)
		return nil
	})
	i := 0
	back, err := NewFromImage(tr.cfg, h, func() (*fsimage.Inode, error) {
		if i == len(recs) {
			return nil, nil
		}
		i++
		return &recs[i-1], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if exp, ok := back.DelegationToken(id); !ok || exp != 2_000 {
		t.Fatalf("token after the image: %d %v", exp, ok)
	}
	if k, ok := back.CurrentDelegationKey(); !ok || !bytes.Equal(k.Secret, key.Secret) {
		t.Fatalf("key after the image: %+v %v", k, ok)
	}
	if !bytes.Equal(back.encodeDelegation(), tr.encodeDelegation()) {
		t.Fatal("the state changed through the image")
	}
	// A later token purges what expired before it was issued.
	id3 := id
	id3.SequenceNumber, id3.IssueDate, id3.MaxDate = 3, 6_000, 9_000
	if err := tr.Apply(&op.GetDelegationToken{ID: id3, Expiry: 7_000}); err != nil {
		t.Fatal(err)
	}
	if _, ok := tr.DelegationToken(id); ok || tr.NumDelegationTokens() != 1 {
		t.Fatalf("token past its max date kept (%d tokens)", tr.NumDelegationTokens())
	}
}

func FuzzDelegationState(f *testing.F) {
	tr := New(Config{SuperUser: "hdfs", SuperGroup: "supergroup"})
	tr.Apply(&op.UpdateMasterKey{KeyID: 1, Expiry: 10, Secret: []byte("s")})
	tr.Apply(&op.GetDelegationToken{ID: op.DelegationTokenID{Owner: "a", MasterKeyID: 1, SequenceNumber: 1, MaxDate: 5}, Expiry: 3})
	f.Add(tr.encodeDelegation())
	f.Add([]byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	// Four tokens, two of them the same 12-byte one and two of the smallest
	// (8 bytes): the two left after the duplicate is dropped still decode.
	big := []byte{4, 'a', 'b', 'c', 'd', 0, 0, 0, 0, 0, 0, 0}
	small := func(seq byte) []byte { return []byte{0, 0, 0, 0, 0, seq, 0, 0} }
	dup := append([]byte{1, 0, 0, 0, 0, 4}, big...)
	dup = append(append(append(dup, big...), small(2)...), small(4)...)
	f.Add(dup)
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeDelegation(b)
		if err != nil {
			return
		}
		again := &Tree{dt: d}
		if len(b) > 0 && !bytes.Equal(again.encodeDelegation(), b) && len(d.keys)+len(d.tokens) > 0 {
			// Accepted input re-encodes the same unless it held duplicates.
			if _, err := decodeDelegation(again.encodeDelegation()); err != nil {
				t.Fatalf("re-encoding of accepted state does not decode: %v", err)
			}
		}
	})
}
