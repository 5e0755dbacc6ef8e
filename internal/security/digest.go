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

// SASL DIGEST-MD5 (RFC 2831), the one implementation both of Hadoop's
// uses of it share:
//
//   - RPC's TOKEN method: the user name is the base64 of a delegation
//     token's identifier, the password the base64 of its password, the
//     realm "default" and the digest-uri "/default" (RPCDigest). Only the
//     authentication layer (qop=auth) is used there.
//   - DataTransferProtocol's SASL handshake: the block token (or a data
//     encryption key) as the credential, realm "0", digest-uri "hdfs/0"
//     (DataTransferDigest), with the integrity (auth-int) and privacy
//     (auth-conf, cipher rc4) layers of DigestLayer.

// DigestParams are the realm and digest-uri of one use of DIGEST-MD5.
type DigestParams struct {
	Realm string
	URI   string
}

// The two uses of DIGEST-MD5 (part of the wire formats).
var (
	RPCDigest          = DigestParams{Realm: "default", URI: "/default"}
	DataTransferDigest = DigestParams{Realm: "0", URI: "hdfs/0"}
)

// MaxDigestMessage bounds the DIGEST-MD5 messages parsed.
const MaxDigestMessage = 4096

// digestCipher is the only auth-conf cipher offered and accepted: RC4
// with a 128-bit key, which Hadoop's Java SASL and the stock Go client
// both have.
const digestCipher = "rc4"

// DigestChallenge is the server's first DIGEST-MD5 message.
type DigestChallenge struct {
	Nonce  string
	Qop    QOP
	Params DigestParams
}

// NewDigestChallenge makes an RPC challenge with a fresh nonce offering q.
func NewDigestChallenge(q QOP) *DigestChallenge {
	return NewDigestChallengeFor(RPCDigest, q)
}

// NewDigestChallengeFor makes a challenge for p with a fresh nonce
// offering q.
func NewDigestChallengeFor(p DigestParams, q QOP) *DigestChallenge {
	b := make([]byte, 24)
	rand.Read(b)
	return &DigestChallenge{Nonce: base64.StdEncoding.EncodeToString(b), Qop: q, Params: p}
}

// Bytes is the challenge as sent. Every value a client needs is quoted
// (the stock Go client reads only quoted values).
func (c *DigestChallenge) Bytes() []byte {
	s := fmt.Sprintf(`realm="%s",nonce="%s",qop="%s",charset=utf-8`, c.Params.Realm, c.Nonce, c.Qop.DigestQops())
	if c.Qop&QOPPrivacy != 0 {
		s += `,cipher="` + digestCipher + `"`
	}
	return []byte(s + ",algorithm=md5-sess")
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

// qopName is the DIGEST-MD5 name of a single level.
func qopName(q QOP) string {
	switch q {
	case QOPIntegrity:
		return "auth-int"
	case QOPPrivacy:
		return "auth-conf"
	}
	return "auth"
}

// qopOf parses one DIGEST-MD5 level name (0 for an unknown one).
func qopOf(s string) QOP {
	switch s {
	case "auth", "":
		return QOPAuthentication
	case "auth-int":
		return QOPIntegrity
	case "auth-conf":
		return QOPPrivacy
	}
	return 0
}

// digestA1 is H(A1) of RFC 2831 (md5-sess): the session key the layers'
// keys derive from.
func digestA1(p DigestParams, user, pass, nonce, cnonce, authzid string) []byte {
	h := md5.Sum([]byte(user + ":" + p.Realm + ":" + pass))
	a1 := string(h[:]) + ":" + nonce + ":" + cnonce
	if authzid != "" {
		a1 += ":" + authzid
	}
	s := md5.Sum([]byte(a1))
	return s[:]
}

// digestValue computes the response value (a2prefix "AUTHENTICATE") or
// the server's rspauth (a2prefix "") of RFC 2831, md5-sess.
func digestValue(p DigestParams, ha1 []byte, nonce, cnonce, nc, qop, a2prefix string) string {
	a2 := a2prefix + ":" + p.URI
	if qop != "auth" {
		a2 += ":00000000000000000000000000000000"
	}
	return md5hex(hex.EncodeToString(ha1), ":", nonce, ":", nc, ":", cnonce, ":", qop, ":", md5hex(a2))
}

// ErrDigestLayer: a DIGEST-MD5 client asked RPC for integrity or privacy,
// which token authentication does not offer there.
var ErrDigestLayer = errors.New("DIGEST-MD5 integrity and privacy layers are not supported: token authentication needs hadoop.rpc.protection to include authentication")

// ErrDigestMismatch: the client's digest response is not the one its
// user name's password gives.
var ErrDigestMismatch = errors.New("DIGEST-MD5: digest response does not match")

// DigestSession is the outcome of a completed exchange: the user
// name, the level agreed and, for integrity and privacy, the layer that
// wraps every message after it.
type DigestSession struct {
	User  string
	Qop   QOP
	Layer *DigestLayer // nil for authentication only
}

// VerifyDigest checks a client's RPC DIGEST-MD5 response to c, which
// must ask for the authentication layer only; password returns the
// (base64) password of a user name or an error. It returns the server's
// final message (rspauth) and the user name.
func (c *DigestChallenge) VerifyDigest(resp []byte, password func(user string) (string, error)) (rspauth []byte, user string, err error) {
	d, err := ParseDigest(resp)
	if err != nil {
		return nil, "", err
	}
	if q := d["qop"]; q != "" && q != "auth" {
		return nil, "", ErrDigestLayer
	}
	final, s, err := c.Verify(resp, password)
	if err != nil {
		return nil, "", err
	}
	return final, s.User, nil
}

// Verify checks a client's DIGEST-MD5 response to c; password returns
// the (base64) password of a user name or an error. It returns the
// server's final message (rspauth) and the session.
func (c *DigestChallenge) Verify(resp []byte, password func(user string) (string, error)) (rspauth []byte, s *DigestSession, err error) {
	d, err := ParseDigest(resp)
	if err != nil {
		return nil, nil, err
	}
	user := d["username"]
	switch {
	case user == "":
		return nil, nil, errors.New("DIGEST-MD5: no username")
	case d["nonce"] != c.Nonce:
		return nil, nil, errors.New("DIGEST-MD5: the response does not answer this server's nonce")
	case d["realm"] != "" && d["realm"] != c.Params.Realm:
		return nil, nil, fmt.Errorf("DIGEST-MD5: realm %q, want %q", d["realm"], c.Params.Realm)
	case d["digest-uri"] != c.Params.URI:
		return nil, nil, fmt.Errorf("DIGEST-MD5: digest-uri %q, want %q", d["digest-uri"], c.Params.URI)
	case d["nc"] != "00000001":
		return nil, nil, fmt.Errorf("DIGEST-MD5: nonce count %q, want 00000001", d["nc"])
	case d["cnonce"] == "":
		return nil, nil, errors.New("DIGEST-MD5: no cnonce")
	}
	qop := qopOf(d["qop"])
	if qop == 0 || qop&c.Qop == 0 {
		return nil, nil, fmt.Errorf("DIGEST-MD5: the client chose qop %q, this server offers %q", d["qop"], c.Qop.DigestQops())
	}
	if qop == QOPPrivacy && d["cipher"] != digestCipher {
		return nil, nil, fmt.Errorf("DIGEST-MD5: cipher %q is not supported (offered: %s)", d["cipher"], digestCipher)
	}
	pass, err := password(user)
	if err != nil {
		return nil, nil, err
	}
	ha1 := digestA1(c.Params, user, pass, c.Nonce, d["cnonce"], d["authzid"])
	name := qopName(qop)
	want := digestValue(c.Params, ha1, c.Nonce, d["cnonce"], d["nc"], name, "AUTHENTICATE")
	if subtle.ConstantTimeCompare([]byte(want), []byte(strings.ToLower(d["response"]))) != 1 {
		return nil, nil, fmt.Errorf("%w (wrong token password)", ErrDigestMismatch)
	}
	s = &DigestSession{User: user, Qop: qop, Layer: newDigestLayer(ha1, qop, false)}
	return []byte("rspauth=" + digestValue(c.Params, ha1, c.Nonce, d["cnonce"], d["nc"], name, "")), s, nil
}

// DigestResponse is the client's RPC answer to a server's challenge for
// user and password (qop=auth); check verifies the server's rspauth.
func DigestResponse(challenge []byte, user, pass string) (resp []byte, check func(final []byte) error, err error) {
	resp, finish, err := DigestRespond(RPCDigest, challenge, user, pass, QOPAuthentication)
	if err != nil {
		return nil, nil, err
	}
	return resp, func(final []byte) error {
		_, err := finish(final)
		return err
	}, nil
}

// DigestRespond is the client's answer to a server's challenge for p,
// user and password, choosing the strongest level both want and the
// server offers; finish verifies the server's rspauth and returns the
// session.
func DigestRespond(p DigestParams, challenge []byte, user, pass string, want QOP) (resp []byte, finish func(final []byte) (*DigestSession, error), err error) {
	ch, err := ParseDigest(challenge)
	if err != nil {
		return nil, nil, err
	}
	nonce := ch["nonce"]
	if nonce == "" {
		return nil, nil, errors.New("DIGEST-MD5: challenge without a nonce")
	}
	if r := ch["realm"]; r != "" && r != p.Realm {
		return nil, nil, fmt.Errorf("DIGEST-MD5: the server's realm is %q, want %q", r, p.Realm)
	}
	var offered QOP
	for _, q := range strings.Split(ch["qop"], ",") {
		offered |= qopOf(strings.TrimSpace(q))
	}
	qop := (offered & want).Highest()
	if qop == 0 {
		return nil, nil, fmt.Errorf("DIGEST-MD5: the server offers qop %q; this client accepts %q", ch["qop"], want.DigestQops())
	}
	name := qopName(qop)
	cipher := ""
	if qop == QOPPrivacy {
		if !strings.Contains(","+ch["cipher"]+",", ","+digestCipher+",") {
			return nil, nil, fmt.Errorf("DIGEST-MD5: the server offers ciphers %q; this client has %s", ch["cipher"], digestCipher)
		}
		cipher = ",cipher=" + digestCipher
	}
	cb := make([]byte, 24)
	rand.Read(cb)
	cnonce := base64.StdEncoding.EncodeToString(cb)
	ha1 := digestA1(p, user, pass, nonce, cnonce, "")
	v := digestValue(p, ha1, nonce, cnonce, "00000001", name, "AUTHENTICATE")
	resp = []byte(fmt.Sprintf(`charset=utf-8,username="%s",realm="%s",nonce="%s",nc=00000001,cnonce="%s",digest-uri="%s",maxbuf=65536,response=%s,qop=%s%s`,
		user, p.Realm, nonce, cnonce, p.URI, v, name, cipher))
	rsp := "rspauth=" + digestValue(p, ha1, nonce, cnonce, "00000001", name, "")
	return resp, func(final []byte) (*DigestSession, error) {
		if subtle.ConstantTimeCompare(final, []byte(rsp)) != 1 {
			return nil, errors.New("DIGEST-MD5: the server's rspauth does not match: it does not know the token's password")
		}
		return &DigestSession{User: user, Qop: qop, Layer: newDigestLayer(ha1, qop, true)}, nil
	}, nil
}
