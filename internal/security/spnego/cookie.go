package spnego

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// CookieName is the name of Hadoop's authentication cookie.
const CookieName = "hadoop.auth"

// AuthType is the t= of the cookies this package issues (Hadoop's
// KerberosAuthenticationHandler type).
const AuthType = "kerberos"

// maxCookieLen bounds the cookie values ParseCookie looks at.
const maxCookieLen = 4096

// Errors of cookie checks.
var (
	ErrBadSignature = errors.New("spnego: hadoop.auth cookie: invalid signature")
	ErrMalformed    = errors.New("spnego: hadoop.auth cookie: malformed")
	ErrExpired      = errors.New("spnego: hadoop.auth cookie: expired")
	ErrWrongType    = errors.New("spnego: hadoop.auth cookie: not of type " + AuthType)
)

// Token is the content of a hadoop.auth cookie.
type Token struct {
	User      string // u: the short name
	Principal string // p
	Type      string // t
	Expires   int64  // e: milliseconds since 1970
}

// String is the unsigned form, u=...&p=...&t=...&e=....
func (t Token) String() string {
	return "u=" + t.User + "&p=" + t.Principal + "&t=" + t.Type + "&e=" + strconv.FormatInt(t.Expires, 10)
}

// Signer signs and checks cookie values with HMAC-SHA256, as Hadoop's
// Signer does.
type Signer struct{ secret []byte }

// NewSigner returns a signer with the secret; it must not be empty.
func NewSigner(secret []byte) (*Signer, error) {
	if len(secret) == 0 {
		return nil, errors.New("spnego: empty signature secret")
	}
	return &Signer{secret: append([]byte(nil), secret...)}, nil
}

func (s *Signer) signature(raw string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(raw))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Sign returns raw&s=SIGNATURE.
func (s *Signer) Sign(raw string) string { return raw + "&s=" + s.signature(raw) }

// Verify checks a signed value and returns the part that was signed.
func (s *Signer) Verify(signed string) (string, error) {
	i := strings.LastIndex(signed, "&s=")
	if i < 0 {
		return "", ErrBadSignature
	}
	raw, sig := signed[:i], signed[i+3:]
	if !hmac.Equal([]byte(sig), []byte(s.signature(raw))) {
		return "", ErrBadSignature
	}
	return raw, nil
}

// ParseToken decodes an unsigned cookie value (u=..&p=..&t=..&e=..); all
// four attributes are required, unknown ones are an error.
func ParseToken(raw string) (Token, error) {
	var t Token
	if len(raw) > maxCookieLen {
		return t, fmt.Errorf("%w: %d bytes", ErrMalformed, len(raw))
	}
	seen := 0
	for _, kv := range strings.Split(raw, "&") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return t, fmt.Errorf("%w: %q is not key=value", ErrMalformed, kv)
		}
		var bit int
		switch k {
		case "u":
			t.User, bit = v, 1
		case "p":
			t.Principal, bit = v, 2
		case "t":
			t.Type, bit = v, 4
		case "e":
			e, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return t, fmt.Errorf("%w: expiry %q", ErrMalformed, v)
			}
			t.Expires, bit = e, 8
		default:
			return t, fmt.Errorf("%w: unknown attribute %q", ErrMalformed, k)
		}
		if seen&bit != 0 {
			return t, fmt.Errorf("%w: attribute %q twice", ErrMalformed, k)
		}
		seen |= bit
	}
	if seen != 15 {
		return t, fmt.Errorf("%w: u, p, t and e are all required", ErrMalformed)
	}
	if t.User == "" || t.Principal == "" {
		return t, fmt.Errorf("%w: empty user or principal", ErrMalformed)
	}
	return t, nil
}

// CheckCookie verifies a hadoop.auth cookie's value (quotes around it
// allowed) and returns its token when it is signed by s, of type kerberos
// and not expired at now.
func (s *Signer) CheckCookie(value string, now time.Time) (Token, error) {
	if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
		value = value[1 : len(value)-1]
	}
	if len(value) > maxCookieLen {
		return Token{}, fmt.Errorf("%w: %d bytes", ErrMalformed, len(value))
	}
	raw, err := s.Verify(value)
	if err != nil {
		return Token{}, err
	}
	t, err := ParseToken(raw)
	if err != nil {
		return t, err
	}
	if t.Type != AuthType {
		return t, ErrWrongType
	}
	if now.UnixMilli() >= t.Expires {
		return t, ErrExpired
	}
	return t, nil
}
