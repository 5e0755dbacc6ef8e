package spnego

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

func TestCookieRoundTrip(t *testing.T) {
	s, _ := NewSigner([]byte("secret"))
	now := time.UnixMilli(1_700_000_000_000)
	tok := Token{User: "alice", Principal: "alice@EXAMPLE.COM", Type: AuthType, Expires: now.Add(time.Hour).UnixMilli()}
	signed := s.Sign(tok.String())
	if got, err := s.CheckCookie(`"`+signed+`"`, now); err != nil || got != tok {
		t.Fatalf("CheckCookie: %+v %v", got, err)
	}
	other, _ := NewSigner([]byte("other secret"))
	for name, c := range map[string]struct {
		s     *Signer
		value string
		now   time.Time
	}{
		"other secret": {other, signed, now},
		"expired":      {s, signed, now.Add(2 * time.Hour)},
		"tampered":     {s, strings.Replace(signed, "u=alice", "u=admin", 1), now},
		"no signature": {s, tok.String(), now},
		"wrong type":   {s, s.Sign("u=a&p=a@R&t=simple&e=" + "9999999999999"), now},
		"missing e":    {s, s.Sign("u=a&p=a@R&t=kerberos"), now},
		"extra":        {s, s.Sign(tok.String() + "&x=1"), now},
	} {
		if _, err := c.s.CheckCookie(c.value, c.now); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzCheckCookie(f *testing.F) {
	s, _ := NewSigner([]byte("secret"))
	f.Add(s.Sign("u=alice&p=alice@R&t=kerberos&e=99999999999999"))
	f.Add(`"u=a&p=b&t=kerberos&e=1&s=xyz"`)
	f.Add("&s=")
	f.Fuzz(func(t *testing.T, v string) {
		testtool.AllocBound(t, len(v), 16, 16<<10, func() {
			tok, err := s.CheckCookie(v, time.UnixMilli(0))
			if err == nil && (tok.User == "" || tok.Type != AuthType) {
				t.Fatalf("accepted %q as %+v", v, tok)
			}
		})
		ParseToken(v)
	})
}

// FuzzNegotiate feeds the Negotiate header's token to the decoder in
// front of the Kerberos check: it must answer 401, never panic, and
// allocate in proportion to the input.
func FuzzNegotiate(f *testing.F) {
	f.Add([]byte{0x60, 0x03, 0x06, 0x01, 0x00})
	f.Add([]byte{0xa1, 0x03, 0x30, 0x01, 0x00})
	f.Add([]byte("garbage"))
	signer, _ := NewSigner([]byte("s"))
	a := &Authenticator{Signer: signer, Acceptor: &security.Acceptor{Principal: "HTTP/_HOST"}}
	f.Fuzz(func(t *testing.T, b []byte) {
		testtool.AllocBound(t, len(b), 512, 256<<10, func() {
			if _, _, err := a.Accept(b); err == nil {
				t.Fatal("accepted without a keytab")
			}
		})
	})
}

func TestFilterPaths(t *testing.T) {
	signer, _ := NewSigner([]byte("s"))
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for _, c := range []struct {
		all, webhdfs bool
		target       string
		want         int
	}{
		{false, true, "/jmx", http.StatusNoContent},
		{true, true, "/jmx", http.StatusUnauthorized},
		{false, true, "/webhdfs/v1/x?op=LISTSTATUS", http.StatusUnauthorized},
		{false, true, "/webhdfs/v1/x?op=LISTSTATUS&Delegation=abc", http.StatusNoContent},
		{false, true, "/webhdfs/v1/x?op=LISTSTATUS&delegation=", http.StatusUnauthorized},
		{true, false, "/webhdfs/v1/x?op=OPEN", http.StatusNoContent},
		{true, false, "/conf", http.StatusUnauthorized},
		{true, true, "/imagetransfer?getimage=1", http.StatusNoContent},
		{true, true, "/imagetransferx", http.StatusUnauthorized},
	} {
		f := &Filter{All: c.all, WebHDFS: c.webhdfs, Auth: &Authenticator{Signer: signer, Acceptor: &security.Acceptor{}},
			Exempt: []string{"/imagetransfer"}}
		rec := httptest.NewRecorder()
		f.Wrap(ok).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.target, nil))
		if rec.Code != c.want {
			t.Errorf("all=%v webhdfs=%v %s: %d, want %d", c.all, c.webhdfs, c.target, rec.Code, c.want)
		}
		if rec.Code == http.StatusUnauthorized && rec.Header().Get("WWW-Authenticate") != "Negotiate" {
			t.Errorf("%s: 401 without WWW-Authenticate: Negotiate", c.target)
		}
	}
}
