package spnego

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gspnego "github.com/jcmturner/gokrb5/v8/spnego"

	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/security/krbtest"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// testServer runs a handler that answers the authenticated user behind a
// Filter that needs SPNEGO everywhere; it returns its URL on localhost.
func testServer(t *testing.T, kdc *krbtest.KDC) (string, *Filter) {
	t.Helper()
	signer, _ := NewSigner([]byte("a secret of the test"))
	f := &Filter{All: true, Auth: &Authenticator{Signer: signer, Validity: time.Hour,
		Acceptor: kdc.Acceptor("HTTP", security.QOPAuthentication)}}
	srv := httptest.NewUnstartedServer(f.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := UserFromContext(r.Context())
		if !ok {
			http.Error(w, "no user", http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "%s %s", u.Name, u.Principal)
	})))
	srv.Start()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return "http://localhost:" + port + "/", f
}

func get(t *testing.T, hc *http.Client, url string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestSPNEGOWithKDC: no ticket is 401 with WWW-Authenticate: Negotiate; a
// ticket (gokrb5's SPNEGO) is the user, with a hadoop.auth cookie that
// alone authenticates later requests; a forged or expired cookie is 401;
// a replayed Negotiate header is refused.
func TestSPNEGOWithKDC(t *testing.T) {
	kdc := krbtest.Start(t)
	url, f := testServer(t, kdc)
	aliceKT := kdc.AddPrincipal("alice")
	alice := kdc.ClientFromKeytab("alice", aliceKT)
	hc := &http.Client{Timeout: 20 * time.Second}

	resp, body := get(t, hc, url, nil)
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != "Negotiate" {
		t.Fatalf("no ticket: %d %q %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}

	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if err := gspnego.SetSPNEGOHeader(alice, req, "HTTP/localhost"); err != nil {
		t.Fatal(err)
	}
	negotiate := req.Header.Get("Authorization")
	resp, body = get(t, hc, url, map[string]string{"Authorization": negotiate})
	if resp.StatusCode != http.StatusOK || body != "alice alice@"+krbtest.Realm {
		t.Fatalf("with a ticket: %d %q", resp.StatusCode, body)
	}
	if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Negotiate ") {
		t.Errorf("no NegTokenResp in %q", resp.Header.Get("WWW-Authenticate"))
	}
	var cookie string
	for _, c := range resp.Cookies() {
		if c.Name == CookieName {
			cookie = c.Value
		}
	}
	if !strings.HasPrefix(cookie, "u=alice&p=alice@"+krbtest.Realm+"&t=kerberos&e=") || !strings.Contains(cookie, "&s=") {
		t.Fatalf("cookie %q", cookie)
	}
	// The cookie alone, quoted as Hadoop sets it.
	resp, body = get(t, hc, url, map[string]string{"Cookie": CookieName + `="` + cookie + `"`})
	if resp.StatusCode != http.StatusOK || body != "alice alice@"+krbtest.Realm {
		t.Fatalf("with the cookie: %d %q", resp.StatusCode, body)
	}
	// The same Negotiate header again is a replay.
	if resp, body = get(t, hc, url, map[string]string{"Authorization": negotiate}); resp.StatusCode != http.StatusUnauthorized ||
		!strings.Contains(body, "replay") {
		t.Errorf("replayed header: %d %q", resp.StatusCode, body)
	}
	forged := strings.Replace(cookie, "u=alice", "u=hdfs", 1)
	expired := f.Auth.Signer.Sign(Token{User: "alice", Principal: "alice@" + krbtest.Realm, Type: AuthType,
		Expires: time.Now().Add(-time.Second).UnixMilli()}.String())
	for name, c := range map[string]string{"forged": forged, "expired": expired, "unsigned": "u=hdfs&p=hdfs&t=kerberos&e=99999999999999"} {
		if resp, body = get(t, hc, url, map[string]string{"Cookie": CookieName + "=" + c}); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s cookie: %d %q", name, resp.StatusCode, body)
		}
	}
	for name, h := range map[string]string{"not base64": "Negotiate ***", "garbage": "Negotiate " + base64.StdEncoding.EncodeToString([]byte("garbage")),
		"basic": "Basic YWxpY2U6eA=="} {
		if resp, body = get(t, hc, url, map[string]string{"Authorization": h}); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d %q", name, resp.StatusCode, body)
		}
	}
}

// TestSPNEGOCurl: curl --negotiate -u : with a ticket from kinit (MIT's
// GSSAPI, which asks for mutual authentication and checks the AP-REP),
// then the cookie jar alone; without a ticket, 401.
func TestSPNEGOCurl(t *testing.T) {
	curl := testtool.Require(t, "curl", "apt-get install curl")
	if out, _ := exec.Command(curl, "-V").Output(); !bytes.Contains(out, []byte("GSS-API")) && !bytes.Contains(out, []byte("SPNEGO")) {
		if os.Getenv("HDFSGO_REQUIRE_TOOLS") == "1" {
			t.Fatal("curl has no GSS-API support (apt-get install curl)")
		}
		t.Skip("curl has no GSS-API support (apt-get install curl)")
	}
	kdc := krbtest.Start(t)
	url, _ := testServer(t, kdc)
	cc := kdc.Kinit("alice", kdc.AddPrincipal("alice"))
	jar := filepath.Join(t.TempDir(), "cookies")
	run := func(ccache string, args ...string) (string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, curl, append([]string{"-sS", "-o", "-", "-w", "\n%{http_code}"}, args...)...)
		cmd.Env = append(os.Environ(), "KRB5_CONFIG="+kdc.Krb5Conf, "KRB5CCNAME=FILE:"+ccache)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("curl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		s := strings.TrimSpace(string(out))
		i := strings.LastIndexByte(s, '\n')
		return s[:i+1], s[i+1:]
	}
	if body, code := run(cc, "--negotiate", "-u", ":", "-c", jar, url); code != "200" || strings.TrimSpace(body) != "alice alice@"+krbtest.Realm {
		t.Fatalf("curl --negotiate: %s %q", code, body)
	}
	none := filepath.Join(t.TempDir(), "no-ccache")
	if body, code := run(none, "-b", jar, url); code != "200" || strings.TrimSpace(body) != "alice alice@"+krbtest.Realm {
		t.Fatalf("curl with the cookie jar: %s %q", code, body)
	}
	if body, code := run(none, "--negotiate", "-u", ":", url); code != "401" {
		t.Fatalf("curl without a ticket: %s %q", code, body)
	}
}
