package security

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// SASL DIGEST-MD5 (RFC 2831) as Hadoop's TOKEN method uses it: the user
// name is the base64 of a delegation token's identifier, the password the
// base64 of its password, the realm "default" and the digest-uri
// "/default" (an empty protocol and the server name "default"). Only the
// authentication layer (qop=auth) is offered with tokens.

const (
	digestRealm = "default"
	digestURI   = "/default"
	// MaxDigestMessage bounds the DIGEST-MD5 messages parsed.
	MaxDigestMessage = 4096
)

// DigestChallenge is the server's first DIGEST-MD5 message.
type DigestChallenge struct {
	Nonce string
	Qop   QOP
}

// NewDigestChallenge makes a challenge with a fresh nonce offering q.
func NewDigestChallenge(q QOP) *DigestChallenge {
	b := make([]byte, 24)
	rand.Read(b)
	return &DigestChallenge{Nonce: base64.StdEncoding.EncodeToString(b), Qop: q}
}

// Bytes is the challenge as sent.
func (c *DigestChallenge) Bytes() []byte {
	return []byte(fmt.Sprintf(`realm="%s",nonce="%s",qop="%s",charset=utf-8,algorithm=md5-sess`, digestRealm, c.Nonce, c.Qop.DigestQops()))
}

// ParseDigest splits a DIGEST-MD5 message into its directives
// (name=value or name="quoted value", comma-separated).
func ParseDigest(b []byte) (map[string]string, error) {
	if len(b) > MaxDigestMessage {
		return nil, fmt.Errorf("DIGEST-MD5 message of %d bytes, the limit is %d", len(b), MaxDigestMessage)
	}
	out := map[string]string{}
	s := string(b)
	for len(s) > 0 {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			break
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return nil, fmt.Errorf("DIGEST-MD5: malformed directive %q", s)
		}
		name := strings.ToLower(strings.TrimSpace(s[:eq]))
		s = s[eq+1:]
		var val string
		if strings.HasPrefix(s, `"`) {
			var sb strings.Builder
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				sb.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("DIGEST-MD5: unterminated quoted value of %s", name)
			}
			val, s = sb.String(), s[i+1:]
		} else {
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			val, s = strings.TrimSpace(s[:end]), s[end:]
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("DIGEST-MD5: directive %s given twice", name)
		}
		out[name] = val
	}
	return out, nil
}

func md5hex(parts ...string) string {
	h := md5.Sum([]byte(strings.Join(parts, "")))
	return hex.EncodeToString(h[:])
}

// digestValue computes the response value (a2prefix "AUTHENTICATE") or
// the server's rspauth (a2prefix "") of RFC 2831 for qop=auth, md5-sess.
func digestValue(user, pass, nonce, cnonce, nc, authzid, a2prefix string) string {
	h := md5.Sum([]byte(user + ":" + digestRealm + ":" + pass))
	a1 := string(h[:]) + ":" + nonce + ":" + cnonce
	if authzid != "" {
		a1 += ":" + authzid
	}
	return md5hex(md5hex(a1), ":", nonce, ":", nc, ":", cnonce, ":auth:", md5hex(a2prefix+":"+digestURI))
}

// ErrDigestLayer: a DIGEST-MD5 client asked for integrity or privacy,
// which token authentication does not offer here.
var ErrDigestLayer = errors.New("DIGEST-MD5 integrity and privacy layers are not supported: token authentication needs hadoop.rpc.protection to include authentication")

// VerifyDigest checks a client's DIGEST-MD5 response to c; password
// returns the (base64) password of a user name or an error. It returns
// the server's final message (rspauth) and the user name.
func (c *DigestChallenge) VerifyDigest(resp []byte, password func(user string) (string, error)) (rspauth []byte, user string, err error) {
	d, err := ParseDigest(resp)
	if err != nil {
		return nil, "", err
	}
	user = d["username"]
	switch {
	case user == "":
		return nil, "", errors.New("DIGEST-MD5: no username")
	case d["nonce"] != c.Nonce:
		return nil, "", errors.New("DIGEST-MD5: the response does not answer this server's nonce")
	case d["realm"] != "" && d["realm"] != digestRealm:
		return nil, "", fmt.Errorf("DIGEST-MD5: realm %q, want %q", d["realm"], digestRealm)
	case d["digest-uri"] != digestURI:
		return nil, "", fmt.Errorf("DIGEST-MD5: digest-uri %q, want %q", d["digest-uri"], digestURI)
	case d["nc"] != "00000001":
		return nil, "", fmt.Errorf("DIGEST-MD5: nonce count %q, want 00000001", d["nc"])
	case d["cnonce"] == "":
		return nil, "", errors.New("DIGEST-MD5: no cnonce")
	}
	if q := d["qop"]; q != "" && q != "auth" {
		return nil, "", ErrDigestLayer
	}
	pass, err := password(user)
	if err != nil {
		return nil, "", err
	}
	want := digestValue(user, pass, c.Nonce, d["cnonce"], d["nc"], d["authzid"], "AUTHENTICATE")
	if subtle.ConstantTimeCompare([]byte(want), []byte(strings.ToLower(d["response"]))) != 1 {
		return nil, "", errors.New("DIGEST-MD5: digest response does not match (wrong token password)")
	}
	return []byte("rspauth=" + digestValue(user, pass, c.Nonce, d["cnonce"], d["nc"], d["authzid"], "")), user, nil
}

// DigestResponse is the client's answer to a server's challenge for user
// and password (qop=auth); check verifies the server's rspauth.
func DigestResponse(challenge []byte, user, pass string) (resp []byte, check func(final []byte) error, err error) {
	ch, err := ParseDigest(challenge)
	if err != nil {
		return nil, nil, err
	}
	nonce := ch["nonce"]
	if nonce == "" {
		return nil, nil, errors.New("DIGEST-MD5: challenge without a nonce")
	}
	if !strings.Contains(","+ch["qop"]+",", ",auth,") && ch["qop"] != "" {
		return nil, nil, fmt.Errorf("DIGEST-MD5: the server offers qop %q; token authentication here does only auth", ch["qop"])
	}
	cb := make([]byte, 24)
	rand.Read(cb)
	cnonce := base64.StdEncoding.EncodeToString(cb)
	v := digestValue(user, pass, nonce, cnonce, "00000001", "", "AUTHENTICATE")
	resp = []byte(fmt.Sprintf(`charset=utf-8,username="%s",realm="%s",nonce="%s",nc=00000001,cnonce="%s",digest-uri="%s",maxbuf=65536,response=%s,qop=auth`,
		user, digestRealm, nonce, cnonce, digestURI, v))
	want := "rspauth=" + digestValue(user, pass, nonce, cnonce, "00000001", "", "")
	return resp, func(final []byte) error {
		if subtle.ConstantTimeCompare(final, []byte(want)) != 1 {
			return errors.New("DIGEST-MD5: the server's rspauth does not match: it does not know the token's password")
		}
		return nil
	}, nil
}
