package webhdfs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"sync"

	krbclient "github.com/jcmturner/gokrb5/v8/client"
	gspnego "github.com/jcmturner/gokrb5/v8/spnego"

	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/security"
	wh "github.com/hdfsgo/hdfsgo/internal/webhdfs"
)

// kerberos is the state of a FileSystem that authenticates with Kerberos:
// SPNEGO with the client's tickets for the NameNode's HTTP principal, then
// a delegation token, fetched once and carried by every later request
// (delegation=), as Hadoop's WebHdfsFileSystem does. The NameNode's
// redirects to DataNodes carry it too.
type kerberos struct {
	krb *krbclient.Client
	spn string // HTTP/host
	mu  sync.Mutex
	tok string // the delegation token's URL string; "" until fetched
}

// NewKerberos returns a client of the NameNode named by uri that
// authenticates with the Kerberos client cl (logged in from a ticket cache
// or a keytab). principal is the NameNode's HTTP principal
// (dfs.web.authentication.kerberos.principal, e.g. HTTP/_HOST@REALM; _HOST
// becomes the URI's host). The user is the ticket's.
func NewKerberos(uri string, cl *krbclient.Client, principal string) (*FileSystem, error) {
	if cl == nil {
		return nil, errors.New("webhdfs: no Kerberos client")
	}
	user, _, _ := strings.Cut(cl.Credentials.UserName(), "/")
	f, err := New(uri, user)
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(f.authority)
	if net.ParseIP(host) != nil {
		host = security.HostOf(host) // as the RPC client names an IP address
	}
	spn, _, _ := strings.Cut(principal, "@")
	if spn == "" {
		spn = "HTTP/_HOST"
	}
	spn = strings.Replace(spn, "/_HOST", "/"+strings.ToLower(host), 1)
	f.krb, f.spn = cl, spn
	// The jar keeps the hadoop.auth cookie: one Kerberos exchange per
	// session, not per request.
	f.hc.Jar, _ = cookiejar.New(nil)
	return f, nil
}

// delegation returns the delegation token, fetching it on first use.
func (f *FileSystem) delegation(ctx context.Context) (string, error) {
	f.kerberos.mu.Lock()
	defer f.kerberos.mu.Unlock()
	if f.tok != "" {
		return f.tok, nil
	}
	tok, err := f.GetDelegationToken(ctx, f.user)
	if err != nil {
		return "", err
	}
	f.tok = tok
	return tok, nil
}

// negotiate sends a request authenticated with SPNEGO (or the cookie of an
// earlier exchange) and returns the answer when its status is want.
func (f *FileSystem) negotiate(ctx context.Context, method, u string, want int) (*http.Response, error) {
	if f.krb == nil {
		return nil, errors.New("webhdfs: delegation tokens need Kerberos (NewKerberos)")
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	if err := gspnego.SetSPNEGOHeader(f.krb, req, f.spn); err != nil {
		return nil, fmt.Errorf("webhdfs: SPNEGO for %s: %w", f.spn, err)
	}
	resp, err := f.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if resp.StatusCode == http.StatusUnauthorized && !strings.Contains(resp.Header.Get("Content-Type"), "json") {
			return nil, fmt.Errorf("webhdfs: %s refused the Kerberos authentication: %s", f.authority, strings.TrimSpace(string(b)))
		}
		return nil, wh.DecodeError(resp.StatusCode, b)
	}
	return resp, nil
}

// GetDelegationToken is GETDELEGATIONTOKEN (authenticated with SPNEGO): a
// new delegation token of the user, renewable by renewer, in its URL-string
// form.
func (f *FileSystem) GetDelegationToken(ctx context.Context, renewer string) (string, error) {
	q := url.Values{"op": {"GETDELEGATIONTOKEN"}}
	if renewer != "" {
		q.Set("renewer", renewer)
	}
	resp, err := f.negotiate(ctx, http.MethodGet, f.base+wh.Prefix+"/?"+q.Encode(), http.StatusOK)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b struct {
		Token *struct {
			URLString string `json:"urlString"`
		}
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxErrorBody)).Decode(&b); err != nil {
		return "", fmt.Errorf("webhdfs: malformed GETDELEGATIONTOKEN answer: %w", err)
	}
	if b.Token == nil || b.Token.URLString == "" {
		return "", errors.New("webhdfs: the NameNode issued no delegation token (is hadoop.security.authentication kerberos there?)")
	}
	return b.Token.URLString, nil
}

// RenewDelegationToken is RENEWDELEGATIONTOKEN: it returns the token's new
// expiry in milliseconds since 1970.
func (f *FileSystem) RenewDelegationToken(ctx context.Context, token string) (int64, error) {
	q := url.Values{"op": {"RENEWDELEGATIONTOKEN"}, "token": {token}}
	resp, err := f.negotiate(ctx, http.MethodPut, f.base+wh.Prefix+"/?"+q.Encode(), http.StatusOK)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var b struct {
		Long *json.Number `json:"long"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxErrorBody)).Decode(&b); err != nil || b.Long == nil {
		return 0, fmt.Errorf("webhdfs: malformed RENEWDELEGATIONTOKEN answer: %v", err)
	}
	return strconv.ParseInt(b.Long.String(), 10, 64)
}

// CancelDelegationToken is CANCELDELEGATIONTOKEN. Cancelling the token
// the FileSystem itself uses makes its next request fetch a new one.
func (f *FileSystem) CancelDelegationToken(ctx context.Context, token string) error {
	q := url.Values{"op": {"CANCELDELEGATIONTOKEN"}, "token": {token}}
	resp, err := f.negotiate(ctx, http.MethodPut, f.base+wh.Prefix+"/?"+q.Encode(), http.StatusOK)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	f.kerberos.mu.Lock()
	if f.tok == token {
		f.tok = ""
	}
	f.kerberos.mu.Unlock()
	return nil
}

// doNameNode sends op on p to the NameNode. With Kerberos, a delegation
// token the NameNode no longer takes (expired, cancelled, its key gone
// after a restart) is dropped and the request made once more with a new
// one, as Hadoop's client does.
func (f *FileSystem) doNameNode(ctx context.Context, method, p, op string, q url.Values, want int) (*http.Response, error) {
	if q == nil {
		q = url.Values{} // url fills in the token it sent
	}
	for attempt := 0; ; attempt++ {
		u, err := f.url(ctx, p, op, q)
		if err != nil {
			return nil, err
		}
		resp, err := f.do(ctx, method, u, nil, want)
		var re *remoteerr.Error
		if err == nil || f.krb == nil || attempt > 0 || !errors.As(err, &re) || re.Class != classInvalidToken {
			return resp, err
		}
		f.kerberos.mu.Lock()
		if f.tok == q.Get("delegation") {
			f.tok = ""
		}
		f.kerberos.mu.Unlock()
	}
}

// classInvalidToken is Hadoop's class for a token that does not verify.
const classInvalidToken = "org.apache.hadoop.security.token.SecretManager$InvalidToken"
