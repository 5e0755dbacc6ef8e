package security

import (
	"errors"
	"strings"
	"testing"
)

func TestDigestRoundTrip(t *testing.T) {
	c := NewDigestChallenge(QOPAuthentication | QOPPrivacy)
	lookup := func(user string) (string, error) {
		if user != "aWRlbnQ=" {
			return "", errors.New("unknown token")
		}
		return "cGFzcw==", nil
	}
	resp, check, err := DigestResponse(c.Bytes(), "aWRlbnQ=", "cGFzcw==")
	if err != nil {
		t.Fatal(err)
	}
	final, user, err := c.VerifyDigest(resp, lookup)
	if err != nil || user != "aWRlbnQ=" {
		t.Fatalf("%s %v", user, err)
	}
	if err := check(final); err != nil {
		t.Fatal(err)
	}
	// A wrong password, a replay against another challenge.
	bad, _, _ := DigestResponse(c.Bytes(), "aWRlbnQ=", "d3Jvbmc=")
	if _, _, err := c.VerifyDigest(bad, lookup); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("wrong password: %v", err)
	}
	if _, _, err := NewDigestChallenge(QOPAuthentication).VerifyDigest(resp, lookup); err == nil || !strings.Contains(err.Error(), "nonce") {
		t.Errorf("replay to another challenge: %v", err)
	}
	if _, _, err := DigestResponse(NewDigestChallenge(QOPPrivacy).Bytes(), "u", "p"); err == nil {
		t.Error("privacy-only challenge accepted")
	}
}

func FuzzParseDigest(f *testing.F) {
	f.Add([]byte(`realm="default",nonce="abc",qop="auth,auth-conf",charset=utf-8,algorithm=md5-sess`))
	f.Add([]byte(`username="a\"b",nc=00000001`))
	c := NewDigestChallenge(QOPAuthentication)
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseDigest(b)
		if _, _, err := c.VerifyDigest(b, func(string) (string, error) { return "p", nil }); err == nil {
			t.Fatal("an arbitrary response verified")
		}
	})
}
