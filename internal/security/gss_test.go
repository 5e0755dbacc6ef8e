package security

import (
	"bytes"
	"testing"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/keytab"
	typesKey "github.com/jcmturner/gokrb5/v8/types"

	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

func FuzzAccept(f *testing.F) {
	f.Add([]byte{0x60, 0x03, 0x06, 0x01, 0x00})
	acc := &Acceptor{Keytab: keytab.New(), Principal: "nn/_HOST@R", DefaultRealm: "R", Protection: QOPPrivacy}
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := acc.Accept(b); err == nil {
			t.Fatal("accepted a token without any key")
		}
	})
}

func FuzzUnwrap(f *testing.F) {
	f.Add([]byte{0x05, 0x04, 0x01, 0xFF, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'x'})
	f.Add([]byte{0x05, 0x04, 0x03, 0xFF, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 1, 'x', 'y'})
	// Valid tokens of the acceptor's, sealed and not, for the fuzzer to
	// mutate (the decryption and the checks behind the HMAC run on them).
	acc := &Session{key: testKey(), acceptor: true}
	for _, seal := range []bool{true, false} {
		for _, n := range []int{0, 1, 17, 100} {
			tok, err := acc.Wrap(bytes.Repeat([]byte{'m'}, n), seal)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(tok)
		}
	}
	s := &Session{key: testKey()}
	// The session derives its keys on first use, once; not per token.
	warm, _ := acc.Wrap([]byte("warm"), true)
	if _, _, err := s.Unwrap(warm); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		testtool.AllocBound(t, len(b), 4, 8<<10, func() {
			if _, _, err := s.Unwrap(b); err == nil && len(b) < 16+12 {
				t.Fatal("accepted a token too short to carry a checksum")
			}
		})
	})
}

func testKey() (k typesKey.EncryptionKey) {
	k.KeyType = 18
	k.KeyValue = bytes.Repeat([]byte{7}, 32)
	return k
}

// TestWrapMatchesLibrary checks the cached-key wrap tokens against the
// Kerberos library's own code, which the stock Go client uses to read
// them: an acceptor's integrity token verifies with gssapi.WrapToken, a
// sealed one decrypts with crypto.DecryptMessage; and the other way round.
func TestWrapMatchesLibrary(t *testing.T) {
	for _, kt := range []int32{17, 18} {
		key := testKey()
		key.KeyType = kt
		key.KeyValue = key.KeyValue[:map[int32]int{17: 16, 18: 32}[kt]]
		acc := &Session{key: key, acceptor: true}
		msg := []byte("a response frame, more or less")
		tok, err := acc.Wrap(msg, false)
		if err != nil {
			t.Fatal(err)
		}
		var wt gssapi.WrapToken
		if err := wt.Unmarshal(tok, true); err != nil {
			t.Fatal(err)
		}
		if ok, err := wt.Verify(key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok || err != nil || !bytes.Equal(wt.Payload, msg) {
			t.Fatalf("etype %d: library does not verify our integrity token: %v", kt, err)
		}
		tok, err = acc.Wrap(msg, true)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := crypto.DecryptMessage(tok[16:], key, keyusage.GSSAPI_ACCEPTOR_SEAL)
		if err != nil || !bytes.HasPrefix(plain, msg) {
			t.Fatalf("etype %d: library does not decrypt our sealed token: %v", kt, err)
		}
		// The library's initiator token is accepted by our acceptor.
		lt, err := gssapi.NewInitiatorWrapToken(msg, key)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := lt.Marshal()
		if got, _, err := acc.Unwrap(b); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("etype %d: library's initiator token: %v", kt, err)
		}
	}
}
