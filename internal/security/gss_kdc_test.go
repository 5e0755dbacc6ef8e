package security_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/security/krbtest"
)

// TestGSSAPIWithKDC: a ticket from a real KDC is accepted once (a replay is
// refused), both sides wrap and unwrap, and a ticket for another service
// or an unknown principal gives a clear error.
func TestGSSAPIWithKDC(t *testing.T) {
	kdc := krbtest.Start(t)
	acc := kdc.Acceptor("nn", security.QOPPrivacy)
	aliceKT := kdc.AddPrincipal("alice")
	ini := &security.Initiator{Client: kdc.ClientFromCCache(kdc.Kinit("alice", aliceKT)), Principal: "nn/_HOST@" + krbtest.Realm}

	tok, cs, err := ini.Start("localhost")
	if err != nil {
		t.Fatal(err)
	}
	got, err := acc.Accept(tok)
	if err != nil {
		t.Fatal(err)
	}
	if got.User != "alice" || got.Principal != "alice@"+krbtest.Realm {
		t.Fatalf("accepted %q as %q", got.Principal, got.User)
	}
	// The same token again is a replay.
	if _, err := acc.Accept(tok); err == nil || !strings.Contains(err.Error(), "replay") {
		t.Fatalf("replayed token: %v", err)
	}
	ss := got.Session
	for _, seal := range []bool{false, true} {
		msg := []byte("the quick brown fox")
		w, err := cs.Wrap(msg, seal)
		if err != nil {
			t.Fatal(err)
		}
		if seal == bytes.Contains(w, msg) {
			t.Fatalf("seal=%v: plaintext visible=%v", seal, !seal)
		}
		back, sealed, err := ss.Unwrap(w)
		if err != nil || sealed != seal || !bytes.Equal(back, msg) {
			t.Fatalf("server unwrap: %q %v %v", back, sealed, err)
		}
		w, _ = ss.Wrap(msg, seal)
		if back, _, err = cs.Unwrap(w); err != nil || !bytes.Equal(back, msg) {
			t.Fatalf("client unwrap: %q %v", back, err)
		}
		// A flipped byte is refused; a token is not accepted back by its sender.
		w[len(w)-3] ^= 1
		if _, _, err := cs.Unwrap(w); err == nil {
			t.Fatal("tampered token accepted")
		}
		w, _ = cs.Wrap(msg, seal)
		if _, _, err := cs.Unwrap(w); err == nil {
			t.Fatal("reflected token accepted")
		}
	}

	// A ticket for another service is refused with both names.
	kdc.AddPrincipal("dn/localhost")
	other := &security.Initiator{Client: ini.Client, Principal: "dn/_HOST@" + krbtest.Realm}
	tok, _, err = other.Start("localhost")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acc.Accept(tok); err == nil || !strings.Contains(err.Error(), "ticket for dn/localhost@"+krbtest.Realm+", but this server is nn/_HOST") {
		t.Fatalf("wrong service: %v", err)
	}
	// A principal the KDC does not know: a clear client-side error.
	bad := &security.Initiator{Client: ini.Client, Principal: "nn/nohost@" + krbtest.Realm}
	if _, _, err := bad.Start("x"); err == nil || !strings.Contains(err.Error(), "no Kerberos ticket for nn/nohost@") {
		t.Fatalf("unknown principal: %v", err)
	}
}
