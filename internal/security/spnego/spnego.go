package spnego

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/iana/msgtype"
	"github.com/jcmturner/gokrb5/v8/messages"
	gspnego "github.com/jcmturner/gokrb5/v8/spnego"

	"github.com/hdfsgo/hdfsgo/internal/security"
)

// User is who a request authenticated as.
type User struct {
	Name      string // short name (auth_to_local)
	Principal string // user@REALM
}

type userKey struct{}

// WithUser returns ctx carrying the authenticated user.
func WithUser(ctx context.Context, u User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFromContext returns the user a request authenticated as with SPNEGO
// (or its cookie); false when it did not.
func UserFromContext(ctx context.Context) (User, bool) {
	u, ok := ctx.Value(userKey{}).(User)
	return u, ok
}

// Authenticator checks SPNEGO requests and issues hadoop.auth cookies.
type Authenticator struct {
	// Acceptor verifies the Kerberos tickets (the HTTP principal's
	// keytab) and maps principals to users.
	Acceptor *security.Acceptor
	// Signer signs the cookies.
	Signer *Signer
	// Validity is how long a cookie stays valid.
	Validity time.Duration
	// CookieDomain, when set, is the cookie's Domain.
	CookieDomain string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

func (a *Authenticator) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// maxHeaderToken bounds the Negotiate tokens looked at.
const maxHeaderToken = 64 << 10

// Authenticate returns the user of r: from a valid hadoop.auth cookie, or
// by verifying its Negotiate header, in which case it sets the cookie and
// the answer's WWW-Authenticate on w. When neither works it answers 401
// with WWW-Authenticate: Negotiate itself and returns false.
func (a *Authenticator) Authenticate(w http.ResponseWriter, r *http.Request) (User, bool) {
	for _, c := range r.Cookies() {
		if c.Name != CookieName || c.Value == "" {
			continue
		}
		if t, err := a.Signer.CheckCookie(c.Value, a.now()); err == nil {
			return User{Name: t.User, Principal: t.Principal}, true
		}
	}
	scheme, b64, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Negotiate") || strings.TrimSpace(b64) == "" {
		unauthorized(w, "Authentication required: this server needs Kerberos SPNEGO (Authorization: Negotiate); get a ticket with kinit and use e.g. curl --negotiate -u :")
		return User{}, false
	}
	if len(b64) > maxHeaderToken {
		unauthorized(w, "SPNEGO: Negotiate token too large")
		return User{}, false
	}
	tok, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		unauthorized(w, "SPNEGO: Negotiate token is not base64: "+err.Error())
		return User{}, false
	}
	u, reply, err := a.Accept(tok)
	if err != nil {
		unauthorized(w, "SPNEGO: "+err.Error())
		return User{}, false
	}
	w.Header().Set("WWW-Authenticate", "Negotiate "+base64.StdEncoding.EncodeToString(reply))
	exp := a.now().Add(a.Validity)
	t := Token{User: u.Name, Principal: u.Principal, Type: AuthType, Expires: exp.UnixMilli()}
	cookie := CookieName + `="` + a.Signer.Sign(t.String()) + `"; Path=/`
	if a.CookieDomain != "" {
		cookie += "; Domain=" + a.CookieDomain
	}
	cookie += "; Expires=" + exp.UTC().Format(http.TimeFormat) + "; HttpOnly"
	w.Header().Add("Set-Cookie", cookie)
	return u, true
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", "Negotiate")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprintln(w, msg)
}

// Accept verifies a Negotiate token: an SPNEGO NegTokenInit whose first
// mechanism is Kerberos, or a bare Kerberos GSSAPI token. It returns the
// user and the token for the answer's WWW-Authenticate (a NegTokenResp
// accept-completed, with an AP-REP when the client asked for mutual
// authentication).
func (a *Authenticator) Accept(tok []byte) (User, []byte, error) {
	mech, err := mechToken(tok)
	if err != nil {
		return User{}, nil, err
	}
	acc, req, err := a.Acceptor.AcceptMutual(mech)
	if err != nil {
		return User{}, nil, err
	}
	resp := gspnego.NegTokenResp{NegState: asn1.Enumerated(0), SupportedMech: gssapi.OIDKRB5.OID()}
	if security.MutualRequested(req) {
		if resp.ResponseToken, err = apRep(req); err != nil {
			return User{}, nil, err
		}
	}
	out, err := resp.Marshal()
	if err != nil {
		return User{}, nil, fmt.Errorf("NegTokenResp: %v", err)
	}
	return User{Name: acc.User, Principal: acc.Principal}, out, nil
}

// mechToken returns the Kerberos token of a Negotiate token.
func mechToken(tok []byte) (mech []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed Negotiate token: %v", r)
		}
	}()
	if len(tok) == 0 {
		return nil, errors.New("empty Negotiate token")
	}
	var st gspnego.SPNEGOToken
	if err := st.Unmarshal(tok); err != nil {
		// A bare Kerberos token (some clients send one).
		var k gspnego.KRB5Token
		if k.Unmarshal(tok) == nil {
			return tok, nil
		}
		return nil, fmt.Errorf("Negotiate token is neither SPNEGO nor Kerberos: %v", err)
	}
	if !st.Init {
		return nil, errors.New("Negotiate token is not a NegTokenInit")
	}
	init := st.NegTokenInit
	if len(init.MechTypes) == 0 || !(init.MechTypes[0].Equal(gssapi.OIDKRB5.OID()) || init.MechTypes[0].Equal(gssapi.OIDMSLegacyKRB5.OID())) {
		return nil, errors.New("the client does not offer Kerberos first (only Kerberos is supported)")
	}
	if len(init.MechTokenBytes) == 0 {
		return nil, errors.New("NegTokenInit carries no Kerberos token")
	}
	return init.MechTokenBytes, nil
}

// apRep builds the GSSAPI Kerberos token of an AP-REP answering req
// (RFC 4120 §5.5.2, RFC 1964 §1.1 framing): its ctime and cusec, sealed
// with the ticket's session key.
func apRep(req *messages.APReq) ([]byte, error) {
	part := messages.EncAPRepPart{CTime: req.Authenticator.CTime.UTC(), Cusec: req.Authenticator.Cusec,
		SequenceNumber: req.Authenticator.SeqNumber}
	pb, err := asn1.Marshal(part)
	if err != nil {
		return nil, fmt.Errorf("AP-REP: %v", err)
	}
	pb = asn1tools.AddASNAppTag(pb, 27)
	key := req.Ticket.DecryptedEncPart.Key
	ed, err := crypto.GetEncryptedData(pb, key, keyusage.AP_REP_ENCPART, 0)
	if err != nil {
		return nil, fmt.Errorf("AP-REP: %v", err)
	}
	rb, err := asn1.Marshal(messages.APRep{PVNO: 5, MsgType: msgtype.KRB_AP_REP, EncPart: ed})
	if err != nil {
		return nil, fmt.Errorf("AP-REP: %v", err)
	}
	rb = asn1tools.AddASNAppTag(rb, 15)
	oid, err := asn1.Marshal(gssapi.OIDKRB5.OID())
	if err != nil {
		return nil, err
	}
	inner := append(append(oid, 0x02, 0x00), rb...)
	return asn1tools.AddASNAppTag(inner, 0), nil
}
