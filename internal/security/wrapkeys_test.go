package security

import (
	"bytes"
	"crypto/aes"
	"math/rand/v2"
	"testing"

	"github.com/jcmturner/aescts/v2"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	typesKey "github.com/jcmturner/gokrb5/v8/types"
)

func testKeyOf(kt int32) typesKey.EncryptionKey {
	k := testKey()
	k.KeyType = kt
	k.KeyValue = k.KeyValue[:map[int32]int{17: 16, 18: 32}[kt]]
	return k
}

// checkCTS compares our in-place AES-CTS with the library's on one
// plaintext, both ways.
func checkCTS(t *testing.T, key, plain []byte) {
	t.Helper()
	b, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	_, want, err := aescts.Encrypt(key, make([]byte, aesBlock), plain)
	if err != nil {
		t.Fatal(err)
	}
	got := append([]byte(nil), plain...)
	ctsEncrypt(b, got)
	if !bytes.Equal(got, want) {
		t.Fatalf("%d bytes: ctsEncrypt differs from the library", len(plain))
	}
	ctsDecrypt(b, got, make([]byte, ctsScratch))
	if !bytes.Equal(got, plain) {
		t.Fatalf("%d bytes: ctsDecrypt does not give the plaintext back", len(plain))
	}
}

func TestCTSMatchesLibrary(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, kl := range []int{16, 32} {
		key := make([]byte, kl)
		for n := aesBlock; n <= 200; n++ {
			plain := make([]byte, n)
			for i := range plain {
				plain[i] = byte(rnd.Uint32())
			}
			checkCTS(t, key, plain)
		}
		checkCTS(t, key, bytes.Repeat([]byte{9}, 16<<10+5))
	}
}

func FuzzCTS(f *testing.F) {
	f.Add(bytes.Repeat([]byte{1}, 17))
	f.Add(bytes.Repeat([]byte{2}, 32))
	f.Fuzz(func(t *testing.T, plain []byte) {
		if len(plain) < aesBlock || len(plain) > 4096 {
			return
		}
		checkCTS(t, bytes.Repeat([]byte{5}, 32), plain)
	})
}

// TestSealInteropLengths: for message lengths around the block
// boundaries, our sealed and integrity tokens are read by the Kerberos
// library and the library's sealed tokens by us, both directions.
func TestSealInteropLengths(t *testing.T) {
	for _, kt := range []int32{17, 18} {
		key := testKeyOf(kt)
		et, _ := crypto.GetEtype(kt)
		ini := &Session{key: key}
		acc := &Session{key: key, acceptor: true}
		for n := 0; n <= 70; n++ {
			msg := bytes.Repeat([]byte{byte(n)}, n)
			tok, err := ini.Wrap(msg, true)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := crypto.DecryptMessage(tok[16:], key, keyusage.GSSAPI_INITIATOR_SEAL)
			if err != nil || !bytes.Equal(plain[:n], msg) || !bytes.Equal(plain[n:n+4], tok[:4]) {
				t.Fatalf("etype %d, %d bytes: library does not decrypt our token: %v", kt, n, err)
			}
			if got, sealed, err := acc.Unwrap(tok); err != nil || !sealed || !bytes.Equal(got, msg) {
				t.Fatalf("etype %d, %d bytes: round trip: %v", kt, n, err)
			}
			// The library seals, we open: header, then the sealed
			// message|header.
			hdr := []byte{0x05, 0x04, flagSentByAcceptor | flagSealed, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, byte(n)}
			_, ct, err := et.EncryptMessage(key.KeyValue, append(append([]byte(nil), msg...), hdr...), keyusage.GSSAPI_ACCEPTOR_SEAL)
			if err != nil {
				t.Fatal(err)
			}
			if got, _, err := ini.Unwrap(append(append([]byte(nil), hdr...), ct...)); err != nil || !bytes.Equal(got, msg) {
				t.Fatalf("etype %d, %d bytes: library's sealed token: %v", kt, n, err)
			}
			// Integrity: ours verifies by the library's rule (checked in
			// TestWrapMatchesLibrary); a flipped sequence byte does not.
			itok, _ := acc.Wrap(msg, false)
			itok[15] ^= 1
			if _, _, err := ini.Unwrap(itok); err == nil {
				t.Fatalf("etype %d, %d bytes: tampered integrity token accepted", kt, n)
			}
		}
	}
}

// TestWrapAllocations: a message costs one allocation (its output) to
// wrap or unwrap sealed, none beyond the output for integrity.
func TestWrapAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts do not hold under the race detector (sync.Pool drops items)")
	}
	key := testKeyOf(18)
	ini, acc := &Session{key: key}, &Session{key: key, acceptor: true}
	msg := bytes.Repeat([]byte("m"), 100)
	tok, _ := ini.Wrap(msg, true)
	itok, _ := ini.Wrap(msg, false)
	for name, f := range map[string]func(){
		"wrap sealed":      func() { ini.Wrap(msg, true) },
		"unwrap sealed":    func() { acc.Unwrap(tok) },
		"wrap integrity":   func() { ini.Wrap(msg, false) },
		"unwrap integrity": func() { acc.Unwrap(itok) },
	} {
		f()
		if n := testing.AllocsPerRun(200, f); n > 1 {
			t.Errorf("%s: %.1f allocations per message, want at most 1", name, n)
		}
	}
}

// BenchmarkWrap compares a sealed 100-byte wrap and unwrap with the
// library's code for the same work.
func BenchmarkWrap(b *testing.B) {
	key := testKeyOf(18)
	msg := bytes.Repeat([]byte("m"), 100)
	b.Run("ours", func(b *testing.B) {
		ini, acc := &Session{key: key}, &Session{key: key, acceptor: true}
		for b.Loop() {
			tok, _ := ini.Wrap(msg, true)
			if _, _, err := acc.Unwrap(tok); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		et, _ := crypto.GetEtype(key.KeyType)
		plain := append(append([]byte(nil), msg...), make([]byte, 16)...)
		for b.Loop() {
			_, ct, err := et.EncryptMessage(key.KeyValue, plain, keyusage.GSSAPI_INITIATOR_SEAL)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := crypto.DecryptMessage(ct, key, keyusage.GSSAPI_INITIATOR_SEAL); err != nil {
				b.Fatal(err)
			}
		}
	})
}
