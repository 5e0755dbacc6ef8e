package security

import (
	"bytes"
	"crypto/hmac"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	krbclient "github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// QOP is a set of SASL protection levels, as the GSSAPI security-layer
// bit mask of RFC 4752: 1 none (authentication), 2 integrity, 4 privacy.
type QOP byte

// The protection levels of hadoop.rpc.protection.
const (
	QOPAuthentication QOP = 1
	QOPIntegrity      QOP = 2
	QOPPrivacy        QOP = 4
)

// ParseProtection parses hadoop.rpc.protection: a comma-separated list of
// authentication, integrity and privacy.
func ParseProtection(key, s string) (QOP, error) {
	var q QOP
	for _, f := range strings.Split(s, ",") {
		switch strings.ToLower(strings.TrimSpace(f)) {
		case "authentication":
			q |= QOPAuthentication
		case "integrity":
			q |= QOPIntegrity
		case "privacy":
			q |= QOPPrivacy
		case "":
		default:
			return 0, fmt.Errorf("%s: unknown protection %q (want authentication, integrity or privacy)", key, f)
		}
	}
	if q == 0 {
		return 0, fmt.Errorf("%s: no protection level in %q", key, s)
	}
	return q, nil
}

// Highest returns the strongest level of the set.
func (q QOP) Highest() QOP {
	switch {
	case q&QOPPrivacy != 0:
		return QOPPrivacy
	case q&QOPIntegrity != 0:
		return QOPIntegrity
	case q&QOPAuthentication != 0:
		return QOPAuthentication
	}
	return 0
}

// DigestQops lists the set in DIGEST-MD5's names, strongest first
// ("auth-conf,auth-int,auth").
func (q QOP) DigestQops() string {
	var s []string
	if q&QOPPrivacy != 0 {
		s = append(s, "auth-conf")
	}
	if q&QOPIntegrity != 0 {
		s = append(s, "auth-int")
	}
	if q&QOPAuthentication != 0 {
		s = append(s, "auth")
	}
	return strings.Join(s, ",")
}

// String names the levels as hadoop.rpc.protection does.
func (q QOP) String() string {
	var s []string
	if q&QOPAuthentication != 0 {
		s = append(s, "authentication")
	}
	if q&QOPIntegrity != 0 {
		s = append(s, "integrity")
	}
	if q&QOPPrivacy != 0 {
		s = append(s, "privacy")
	}
	return strings.Join(s, ",")
}

// SecurityLayer returns the 4-byte GSSAPI security-layer message of RFC
// 4752: the levels and the largest wrapped message the sender accepts.
func SecurityLayer(q QOP, maxBuf uint32) []byte {
	b := make([]byte, 4)
	binary.BigEndian.PutUint32(b, maxBuf&0xFFFFFF)
	b[0] = byte(q)
	return b
}

// ReplaceHost substitutes host (lower-cased) for _HOST in the instance of
// a principal such as nn/_HOST@REALM.
func ReplaceHost(principal, host string) string {
	p, err := ParsePrincipal(principal)
	if err != nil || p.Instance != "_HOST" {
		return principal
	}
	p.Instance = strings.ToLower(host)
	return p.String()
}

// Acceptor is the server side of Kerberos authentication: it checks a
// client's AP-REQ against the service's keytab.
type Acceptor struct {
	// Keytab holds the service's keys (dfs.namenode.keytab.file, …).
	Keytab *keytab.Keytab
	// KeytabPath names the keytab in errors.
	KeytabPath string
	// Principal is the configured service principal, e.g. nn/_HOST@REALM.
	// A ticket is accepted for a principal of the keytab with the same
	// primary (and realm, when given) and, unless the instance is _HOST,
	// the same instance.
	Principal string
	// Rules map client principals to user names
	// (hadoop.security.auth_to_local); DefaultRealm is the realm DEFAULT
	// maps.
	Rules        Rules
	DefaultRealm string
	// Protection is the set of levels offered (hadoop.rpc.protection).
	Protection QOP
	// TokenPassword, when set, enables the TOKEN method (a delegation
	// token over SASL DIGEST-MD5): it returns the password and owner of
	// the token with this identifier, or why it is not valid (unknown,
	// cancelled, expired).
	TokenPassword func(identifier []byte) (password []byte, owner string, err error)

	replays replayCache
}

// Accepted is the outcome of a successful AP-REQ check.
type Accepted struct {
	Principal string // the client, primary[/instance]@REALM
	User      string // its local name by the auth_to_local rules
	Session   *Session
}

// ErrMutualAuth is returned for clients that ask for mutual
// authentication (an AP-REP), which this server does not send.
var ErrMutualAuth = errors.New("GSSAPI: the client asks for mutual authentication, which is not supported")

// Accept checks a GSSAPI initial context token (RFC 2743 framing around a
// Kerberos AP-REQ).
func (a *Acceptor) Accept(token []byte) (*Accepted, error) {
	acc, _, err := a.accept(token, false)
	return acc, err
}

// AcceptMutual is Accept for mechanisms where the client may ask for
// mutual authentication (SPNEGO over HTTP, as curl and browsers do): it
// returns the verified AP-REQ too, so that the caller can answer it with
// an AP-REP.
func (a *Acceptor) AcceptMutual(token []byte) (*Accepted, *messages.APReq, error) {
	acc, k, err := a.accept(token, true)
	if err != nil {
		return nil, nil, err
	}
	return acc, &k.APReq, nil
}

// MutualRequested reports whether the client asked for mutual
// authentication in the AP-REQ's GSSAPI checksum.
func MutualRequested(req *messages.APReq) bool {
	auth := req.Authenticator
	if len(auth.Cksum.Checksum) >= 24 && auth.Cksum.CksumType == 0x8003 {
		return binary.LittleEndian.Uint32(auth.Cksum.Checksum[20:24])&gssapi.ContextFlagMutual != 0
	}
	return false
}

func (a *Acceptor) accept(token []byte, mutualOK bool) (*Accepted, *spnego.KRB5Token, error) {
	var k spnego.KRB5Token
	if err := unmarshalKRB5Token(&k, token); err != nil {
		return nil, nil, fmt.Errorf("GSSAPI: bad initial token: %v", err)
	}
	if !k.IsAPReq() {
		return nil, nil, errors.New("GSSAPI: initial token is not an AP-REQ")
	}
	sname := k.APReq.Ticket.SName.PrincipalNameString() + "@" + k.APReq.Ticket.Realm
	if err := a.checkServicePrincipal(sname); err != nil {
		return nil, nil, err
	}
	ok, err := k.APReq.Verify(a.Keytab, maxClockSkew, types.HostAddress{}, nil)
	if err != nil || !ok {
		if err == nil {
			err = errors.New("not valid")
		}
		return nil, nil, fmt.Errorf("GSSAPI: ticket for %s refused (keytab %s): %v", sname, a.KeytabPath, err)
	}
	if a.replays.seen(k.APReq.Authenticator, time.Now()) {
		return nil, nil, fmt.Errorf("GSSAPI: ticket for %s refused: replay of an earlier authenticator", sname)
	}
	auth := k.APReq.Authenticator
	if !mutualOK && MutualRequested(&k.APReq) {
		return nil, nil, ErrMutualAuth
	}
	key := k.APReq.Ticket.DecryptedEncPart.Key
	if auth.SubKey.KeyType != 0 && len(auth.SubKey.KeyValue) > 0 {
		key = auth.SubKey
	}
	if _, err := crypto.GetEtype(key.KeyType); err != nil {
		return nil, nil, fmt.Errorf("GSSAPI: session key: %v", err)
	}
	client := auth.CName.PrincipalNameString() + "@" + auth.CRealm
	user, err := a.Rules.ShortName(client, a.DefaultRealm)
	if err != nil {
		return nil, nil, fmt.Errorf("GSSAPI: %s: %v", client, err)
	}
	return &Accepted{Principal: client, User: user, Session: &Session{key: key, acceptor: true}}, &k, nil
}

// unmarshalKRB5Token decodes the token, turning a panic of the ASN.1 code
// on hostile input into an error.
func unmarshalKRB5Token(k *spnego.KRB5Token, b []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed token: %v", r)
		}
	}()
	return k.Unmarshal(b)
}

func (a *Acceptor) checkServicePrincipal(sname string) error {
	want, err := ParsePrincipal(a.Principal)
	if err != nil {
		return fmt.Errorf("GSSAPI: configured principal: %v", err)
	}
	got, err := ParsePrincipal(sname)
	if err != nil {
		return fmt.Errorf("GSSAPI: ticket's principal: %v", err)
	}
	if got.Primary != want.Primary || (want.Realm != "" && got.Realm != want.Realm) ||
		(want.Instance != "_HOST" && got.Instance != want.Instance) {
		return fmt.Errorf("GSSAPI: the client has a ticket for %s, but this server is %s", sname, a.Principal)
	}
	return nil
}

// Initiator is the client side: it gets a service ticket from the KDC and
// builds the initial token.
type Initiator struct {
	Client *krbclient.Client
	// Principal is the server's principal (nn/_HOST@REALM); _HOST becomes
	// the host dialled.
	Principal string
}

// Start returns the initial context token for the server at host and the
// session that goes with it.
func (i *Initiator) Start(host string) ([]byte, *Session, error) {
	if net.ParseIP(host) != nil {
		host = HostOf(host)
	}
	p, err := ParsePrincipal(ReplaceHost(i.Principal, host))
	if err != nil {
		return nil, nil, fmt.Errorf("server principal: %v", err)
	}
	spn := p.Primary
	if p.Instance != "" {
		spn += "/" + p.Instance
	}
	tkt, key, err := i.Client.GetServiceTicket(spn)
	if err != nil {
		return nil, nil, fmt.Errorf("no Kerberos ticket for %s: %v", p, err)
	}
	tok, err := spnego.NewKRB5TokenAPREQ(i.Client, tkt, key, []int{gssapi.ContextFlagInteg, gssapi.ContextFlagConf}, []int{})
	if err != nil {
		return nil, nil, fmt.Errorf("GSSAPI: %v", err)
	}
	b, err := tok.Marshal()
	if err != nil {
		return nil, nil, fmt.Errorf("GSSAPI: %v", err)
	}
	return b, &Session{key: key}, nil
}

// UserPrincipal returns the client's principal name (user@REALM).
func (i *Initiator) UserPrincipal() string {
	c := i.Client.Credentials
	return c.UserName() + "@" + c.Domain()
}

// Session wraps and unwraps messages with the context's key, as RFC 4121
// Wrap tokens: sealed (encrypted) for privacy, with a checksum for
// integrity.
type Session struct {
	key      types.EncryptionKey
	acceptor bool
	mu       sync.Mutex
	sendSeq  uint64
	derived  wrapKeys
}

const (
	flagSentByAcceptor = 0x01
	flagSealed         = 0x02
	tokenHeaderLen     = 16
)

func (s *Session) usages() (send, recv uint32) {
	if s.acceptor {
		return keyusage.GSSAPI_ACCEPTOR_SEAL, keyusage.GSSAPI_INITIATOR_SEAL
	}
	return keyusage.GSSAPI_INITIATOR_SEAL, keyusage.GSSAPI_ACCEPTOR_SEAL
}

// Wrap protects p: encrypted when seal, else with a checksum.
func (s *Session) Wrap(p []byte, seal bool) ([]byte, error) {
	s.mu.Lock()
	seq := s.sendSeq
	s.sendSeq++
	s.mu.Unlock()
	send, _ := s.usages()
	var flags byte
	if s.acceptor {
		flags |= flagSentByAcceptor
	}
	if !seal {
		if d, ok := s.derived.keys(s.key, send); ok {
			tok := make([]byte, tokenHeaderLen+len(p)+sha1Trunc)
			tok[0], tok[1], tok[2], tok[3] = 0x05, 0x04, flags, 0xFF
			binary.BigEndian.PutUint64(tok[8:], seq)
			copy(tok[tokenHeaderLen:], p)
			// Over the message and the header with EC and RRC zero.
			d.checksum96(tok[tokenHeaderLen+len(p):], p, tok[:tokenHeaderLen])
			binary.BigEndian.PutUint16(tok[4:], sha1Trunc)
			return tok, nil
		}
		et, err := crypto.GetEtype(s.key.KeyType)
		if err != nil {
			return nil, err
		}
		wt := gssapi.WrapToken{Flags: flags, EC: uint16(et.GetHMACBitLength() / 8), SndSeqNum: seq, Payload: p}
		if err := wt.SetCheckSum(s.key, send); err != nil {
			return nil, err
		}
		return wt.Marshal()
	}
	flags |= flagSealed
	if d, ok := s.derived.keys(s.key, send); ok {
		// One allocation: the header, then confounder|message|header
		// sealed in place (EC and RRC zero).
		tok := make([]byte, tokenHeaderLen+sealedLen(len(p)+tokenHeaderLen))
		tok[0], tok[1], tok[2], tok[3] = 0x05, 0x04, flags, 0xFF
		binary.BigEndian.PutUint64(tok[8:], seq)
		d.sealParts(tok[tokenHeaderLen:], p, tok[:tokenHeaderLen])
		return tok, nil
	}
	hdr := make([]byte, tokenHeaderLen)
	hdr[0], hdr[1], hdr[2], hdr[3] = 0x05, 0x04, flags, 0xFF
	binary.BigEndian.PutUint64(hdr[8:], seq)
	plain := make([]byte, 0, len(p)+tokenHeaderLen)
	plain = append(append(plain, p...), hdr...)
	et, err := crypto.GetEtype(s.key.KeyType)
	if err != nil {
		return nil, err
	}
	_, ct, err := et.EncryptMessage(s.key.KeyValue, plain, send)
	if err != nil {
		return nil, err
	}
	return append(hdr, ct...), nil
}

// MaxTokenLen bounds the Wrap tokens Unwrap accepts.
const MaxTokenLen = 256 << 20

// Unwrap checks a Wrap token from the peer and returns its message.
// sealed reports whether it was encrypted.
func (s *Session) Unwrap(tok []byte) (msg []byte, sealed bool, err error) {
	if len(tok) < tokenHeaderLen || len(tok) > MaxTokenLen {
		return nil, false, fmt.Errorf("GSSAPI: wrap token of %d bytes", len(tok))
	}
	if tok[0] != 0x05 || tok[1] != 0x04 || tok[3] != 0xFF {
		return nil, false, errors.New("GSSAPI: not a wrap token")
	}
	flags := tok[2]
	if (flags&flagSentByAcceptor != 0) == s.acceptor {
		return nil, false, errors.New("GSSAPI: wrap token sent in the wrong direction")
	}
	_, recv := s.usages()
	ec := binary.BigEndian.Uint16(tok[4:6])
	rrc := int(binary.BigEndian.Uint16(tok[6:8]))
	data := tok[tokenHeaderLen:]
	if rrc != 0 && len(data) > 0 {
		rrc %= len(data)
		data = append(append([]byte(nil), data[rrc:]...), data[:rrc]...)
	}
	if flags&flagSealed == 0 {
		if int(ec) > len(data) {
			return nil, false, errors.New("GSSAPI: wrap token shorter than its checksum")
		}
		payload, sum := data[:len(data)-int(ec)], data[len(data)-int(ec):]
		if d, ok := s.derived.keys(s.key, recv); ok {
			var cks [sha1Trunc]byte
			d.wrapChecksum(cks[:], payload, tok[:tokenHeaderLen])
			if !hmac.Equal(cks[:], sum) {
				return nil, false, errors.New("GSSAPI: wrap token checksum does not match")
			}
			return payload, false, nil
		}
		wt := gssapi.WrapToken{Flags: flags, EC: ec, SndSeqNum: binary.BigEndian.Uint64(tok[8:16]),
			Payload: payload, CheckSum: sum}
		if ok, err := wt.Verify(s.key, recv); err != nil || !ok {
			return nil, false, errors.New("GSSAPI: wrap token checksum does not match")
		}
		return wt.Payload, false, nil
	}
	plain, err := s.decrypt(data, recv)
	if err != nil {
		return nil, true, errors.New("GSSAPI: wrap token does not decrypt")
	}
	if len(plain) < int(ec)+tokenHeaderLen {
		return nil, true, errors.New("GSSAPI: sealed wrap token too short")
	}
	inner := plain[len(plain)-tokenHeaderLen:]
	var want [tokenHeaderLen]byte
	copy(want[:], tok)
	want[6], want[7] = 0, 0
	if !bytes.Equal(inner, want[:]) {
		return nil, true, errors.New("GSSAPI: sealed wrap token's header does not match")
	}
	return plain[:len(plain)-tokenHeaderLen-int(ec)], true, nil
}

// decrypt checks the ciphertext's length before handing it to the
// Kerberos library, which does not, and turns any panic into an error.
func (s *Session) decrypt(data []byte, usage uint32) (plain []byte, err error) {
	if d, ok := s.derived.keys(s.key, usage); ok {
		return d.open(data)
	}
	key := s.key
	et, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		return nil, err
	}
	if len(data) < et.GetConfounderByteSize()+et.GetHMACBitLength()/8 {
		return nil, errors.New("ciphertext too short")
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed ciphertext: %v", r)
		}
	}()
	return crypto.DecryptMessage(data, key, usage)
}

// maxClockSkew is how far a client's clock may be from ours (Kerberos'
// usual 5 minutes); authenticators are remembered that long.
const maxClockSkew = 5 * time.Minute

// replayCache remembers the authenticators accepted within the clock skew,
// so that a captured AP-REQ cannot be sent again.
type replayCache struct {
	mu        sync.Mutex
	entries   map[string]time.Time // client, ctime and cusec -> when accepted
	lastPrune time.Time
}

func (r *replayCache) seenBefore(key string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.entries == nil {
		r.entries = make(map[string]time.Time)
	}
	if now.Sub(r.lastPrune) > maxClockSkew {
		r.lastPrune = now
		for k, t := range r.entries {
			if now.Sub(t) > 2*maxClockSkew {
				delete(r.entries, k)
			}
		}
	}
	if _, ok := r.entries[key]; ok {
		return true
	}
	r.entries[key] = now
	return false
}

func (r *replayCache) seen(a types.Authenticator, now time.Time) bool {
	key := fmt.Sprintf("%s@%s %d %d", a.CName.PrincipalNameString(), a.CRealm, a.CTime.UnixNano(), a.Cusec)
	return r.seenBefore(key, now)
}
