package blocktoken

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/common"
)

func TestIdentifierRoundTrip(t *testing.T) {
	id := &Identifier{ExpiryDate: 1796279510586, KeyID: 123456, UserID: "alice", BlockPoolID: "BP-1-127.0.0.1-1", BlockID: 1073741825, Modes: Read | Write}
	got, err := Unmarshal(id.Marshal())
	if err != nil || !Equal(got, id) || *got != *id {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	if s := id.String(); !strings.Contains(s, "access modes=[READ, WRITE]") {
		t.Errorf("String: %s", s)
	}
}

func TestCheck(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	m := NewManager(10*time.Minute, 10*time.Minute, now)
	var v Verifier
	if err := v.Check(nil, "BP", 1, Read, now); err != nil {
		t.Fatalf("tokens off: %v", err)
	}
	v.SetKeys(m.Export())
	tok := m.Generate("alice", "BP", 7, Read, now)
	if err := v.Check(tok, "BP", 7, Read, now); err != nil {
		t.Fatal(err)
	}
	want := func(name string, err error, text string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), text) {
			t.Errorf("%s: %v, want %q", name, err, text)
		}
	}
	want("missing", v.Check(nil, "BP", 7, Read, now), "is missing")
	want("write with a read token", v.Check(tok, "BP", 7, Write, now), "doesn't have WRITE permission")
	want("other block", v.Check(tok, "BP", 8, Read, now), "doesn't apply to block BP:blk_8")
	want("expired", v.Check(tok, "BP", 7, Read, now.Add(11*time.Minute)), "is expired.")
	forged := proto.Clone(tok).(*common.TokenProto)
	forged.Password[0] ^= 1
	want("forged password", v.Check(forged, "BP", 7, Read, now), "doesn't have the correct token password")
	// An identifier rewritten to grant more keeps its old password.
	id, _ := Unmarshal(tok.GetIdentifier())
	id.Modes |= Write
	forged.Identifier, forged.Password = id.Marshal(), tok.GetPassword()
	want("widened modes", v.Check(forged, "BP", 7, Write, now), "doesn't have the correct token password")
	// A key the DataNode never got.
	other := NewManager(10*time.Minute, 10*time.Minute, now)
	want("unknown key", v.Check(other.Generate("alice", "BP", 7, Read, now), "BP", 7, Read, now), "doesn't exist")
	// A roll makes current the key the DataNodes already have: tokens of
	// the new key verify before the key update; a second roll without
	// update brings a key they never got.
	if !m.Roll(now.Add(11 * time.Minute)) {
		t.Fatal("no roll")
	}
	later := now.Add(11 * time.Minute)
	tok2 := m.Generate("alice", "BP", 7, Read, later)
	if err := v.Check(tok2, "BP", 7, Read, later); err != nil {
		t.Fatalf("token of the next key before the key update: %v", err)
	}
	if err := v.Check(tok, "BP", 7, Read, now.Add(time.Minute)); err != nil {
		t.Fatalf("token of the old key after the roll: %v", err)
	}
	m.Roll(now.Add(22 * time.Minute))
	latest := now.Add(22 * time.Minute)
	tok3 := m.Generate("alice", "BP", 7, Read, latest)
	want("two rolls without update", v.Check(tok3, "BP", 7, Read, latest), "doesn't exist")
	v.SetKeys(m.Export())
	if err := v.Check(tok3, "BP", 7, Read, latest); err != nil {
		t.Fatal(err)
	}
	// The DataNode's own tokens verify everywhere.
	if err := v.Check(v.Generate("dn", "BP", 9, Write, later), "BP", 9, Write, later); err != nil {
		t.Fatal(err)
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add((&Identifier{ExpiryDate: 1, KeyID: 2, UserID: "u", BlockPoolID: "p", BlockID: 3, Modes: Read}).Marshal())
	f.Add([]byte{0x80, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := Unmarshal(b)
		if err != nil {
			return
		}
		again, err := Unmarshal(id.Marshal())
		if err != nil || *again != *id {
			t.Fatalf("re-encoding changed %+v into %+v (%v)", id, again, err)
		}
	})
}
