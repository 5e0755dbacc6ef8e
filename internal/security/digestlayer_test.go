package security

import (
	"bytes"
	"errors"
	"testing"
)

// session runs a DataTransferDigest exchange at level q and returns the
// client's and the server's sessions.
func session(t *testing.T, q QOP) (cli, srv *DigestSession) {
	t.Helper()
	ch := NewDigestChallengeFor(DataTransferDigest, q)
	resp, finish, err := DigestRespond(DataTransferDigest, ch.Bytes(), "dXNlcg==", "cGFzcw==", q)
	if err != nil {
		t.Fatal(err)
	}
	final, srv, err := ch.Verify(resp, func(string) (string, error) { return "cGFzcw==", nil })
	if err != nil {
		t.Fatal(err)
	}
	if cli, err = finish(final); err != nil {
		t.Fatal(err)
	}
	return cli, srv
}

func TestDigestLayer(t *testing.T) {
	for _, q := range []QOP{QOPIntegrity, QOPPrivacy} {
		cli, srv := session(t, q)
		if cli.Qop != q || srv.Qop != q || cli.Layer == nil || srv.Layer == nil {
			t.Fatalf("%v: sessions %+v %+v", q, cli, srv)
		}
		for i, msg := range [][]byte{[]byte("first message"), {}, bytes.Repeat([]byte{7}, 70000)} {
			w := cli.Layer.Wrap(msg)
			if len(w) != len(msg)+cli.Layer.Overhead() {
				t.Fatalf("%v: wrapped %d bytes into %d", q, len(msg), len(w))
			}
			if q == QOPPrivacy && len(msg) > 8 && bytes.Contains(w, msg[:8]) {
				t.Errorf("%v: plaintext in the wrapped message", q)
			}
			got, err := srv.Layer.Unwrap(w)
			if err != nil || !bytes.Equal(got, msg) {
				t.Fatalf("%v message %d: %v", q, i, err)
			}
			// The other direction, with its own keys and sequence.
			back, err := cli.Layer.Unwrap(srv.Layer.Wrap(msg))
			if err != nil || !bytes.Equal(back, msg) {
				t.Fatalf("%v message %d back: %v", q, i, err)
			}
		}
		// A flipped bit, a replayed message, a message to oneself.
		w := cli.Layer.Wrap([]byte("payload"))
		bad := append([]byte(nil), w...)
		bad[2] ^= 1
		if _, err := srv.Layer.Unwrap(bad); !errors.Is(err, ErrDigestIntegrity) {
			t.Errorf("%v: flipped bit: %v", q, err)
		}
		cli2, srv2 := session(t, q)
		w = cli2.Layer.Wrap([]byte("once"))
		if _, err := srv2.Layer.Unwrap(append([]byte(nil), w...)); err != nil {
			t.Fatal(err)
		}
		if _, err := srv2.Layer.Unwrap(w); !errors.Is(err, ErrDigestIntegrity) {
			t.Errorf("%v: replayed message: %v", q, err)
		}
		if _, err := cli2.Layer.Unwrap(cli2.Layer.Wrap([]byte("self"))); !errors.Is(err, ErrDigestIntegrity) {
			t.Errorf("%v: own message accepted", q)
		}
		if _, err := srv2.Layer.Unwrap([]byte{1, 2}); !errors.Is(err, ErrDigestShort) {
			t.Errorf("%v: short message: %v", q, err)
		}
	}
	// Authentication only: no layer.
	if cli, srv := session(t, QOPAuthentication); cli.Layer != nil || srv.Layer != nil {
		t.Error("a layer for qop=auth")
	}
}
