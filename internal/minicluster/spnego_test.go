package minicluster

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	gspnego "github.com/jcmturner/gokrb5/v8/spnego"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/client/webhdfs"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/security/krbtest"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// TestWebHDFSKerberos runs a NameNode and a DataNode with Kerberos:
// WebHDFS authenticates with SPNEGO (our webhdfs:// client from a ticket
// cache, and curl --negotiate), the client then works with a delegation
// token it fetched, which the NameNode's redirect carries to the DataNode.
// Refused: no ticket (401, WWW-Authenticate: Negotiate), a user.name
// claim (401), a cancelled delegation token (403, RemoteException).
func TestWebHDFSKerberos(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	kdc := krbtest.Start(t)
	realm := krbtest.Realm
	site := kdc.Secure(t, krbtest.Services{Hosts: []string{dnHost(0)}, DataNodes: true, HTTP: true, Protection: "authentication"})
	hdfsKT := kdc.AddPrincipal("hdfs")
	aliceCC := kdc.Kinit("alice", kdc.AddPrincipal("alice"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: 1,
		Conf: append(site.Keys, conf.KeyValue{Key: conf.DFSNameNodeSafeModeExtension, Value: "0"})})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()},
		KerberosClient: kdc.ClientFromKeytab("hdfs", hdfsKT), KerberosServicePrincipal: "nn/_HOST@" + realm})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.MkdirAll(ctx, "/user/alice", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := admin.Chown(ctx, "/user/alice", "alice", ""); err != nil {
		t.Fatal(err)
	}

	_, port, _ := net.SplitHostPort(c.NameNode().HTTPAddr().String())
	base := "http://localhost:" + port
	alice, err := webhdfs.NewKerberos("webhdfs://localhost:"+port, kdc.ClientFromCCache(aliceCC), "HTTP/_HOST@"+realm)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("written over WebHDFS with Kerberos\n"), 5000)
	if err := alice.Create(ctx, "/user/alice/f", bytes.NewReader(data), webhdfs.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := alice.Stat(ctx, "/user/alice/f")
	if err != nil || st.Owner != "alice" || st.Length != int64(len(data)) {
		t.Fatalf("Stat: %+v %v (want owner alice)", st, err)
	}
	rc, err := alice.Open(ctx, "f", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v), wrote %d", len(got), err, len(data))
	}
	// Permissions are alice's: / is the superuser's.
	if err := alice.MkdirAll(ctx, "/not-alice", 0o755); err == nil || !strings.Contains(err.Error(), "Permission denied") {
		t.Errorf("alice making /not-alice: %v", err)
	}

	hc := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(method, u string) (int, http.Header, string) {
		req, _ := http.NewRequestWithContext(ctx, method, u, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	// No ticket, or a user.name claim: 401 and an offer to negotiate.
	for _, q := range []string{"op=LISTSTATUS", "op=LISTSTATUS&user.name=hdfs"} {
		if code, h, body := get(http.MethodGet, base+"/webhdfs/v1/?"+q); code != http.StatusUnauthorized || h.Get("WWW-Authenticate") != "Negotiate" {
			t.Errorf("%s without a ticket: %d %q %q", q, code, h.Get("WWW-Authenticate"), body)
		}
	}
	// A DataNode's WebHDFS wants a delegation token.
	dnWeb := c.DataNodes()[0].HTTPAddr().String()
	code, _, body := get(http.MethodGet, "http://"+dnWeb+"/webhdfs/v1/user/alice/f?op=OPEN&user.name=alice&namenoderpcaddress="+c.NameNodeAddr())
	if code != http.StatusUnauthorized || !strings.Contains(body, "needs a delegation token") {
		t.Errorf("DataNode OPEN without a token: %d %s", code, body)
	}

	// A token works alone; after CANCELDELEGATIONTOKEN it is refused
	// with Hadoop's RemoteException.
	tok, err := alice.GetDelegationToken(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	withTok := base + "/webhdfs/v1/user/alice?op=LISTSTATUS&delegation=" + url.QueryEscape(tok)
	if code, _, body := get(http.MethodGet, withTok); code != http.StatusOK || !strings.Contains(body, `"pathSuffix":"f"`) {
		t.Fatalf("LISTSTATUS with the token: %d %s", code, body)
	}
	if exp, err := alice.RenewDelegationToken(ctx, tok); err != nil || exp < time.Now().UnixMilli() {
		t.Errorf("renew: %d %v", exp, err)
	}
	if err := alice.CancelDelegationToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	code, h, body := get(http.MethodGet, withTok)
	var re struct {
		RemoteException struct{ Exception, JavaClassName, Message string }
	}
	if err := json.Unmarshal([]byte(body), &re); err != nil || code != http.StatusForbidden ||
		h.Get("Content-Type") != "application/json" ||
		re.RemoteException.JavaClassName != "org.apache.hadoop.security.token.SecretManager$InvalidToken" ||
		re.RemoteException.Exception != "InvalidToken" || !strings.Contains(re.RemoteException.Message, "can't be found in cache") {
		t.Errorf("cancelled token: %d %s", code, body)
	}

	// curl --negotiate with alice's ticket cache.
	curl := testtool.Require(t, "curl", "apt-get install curl")
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	defer ccancel()
	cmd := exec.CommandContext(cctx, curl, "-sS", "--negotiate", "-u", ":", base+"/webhdfs/v1/user/alice?op=LISTSTATUS")
	cmd.Env = append(os.Environ(), "KRB5_CONFIG="+kdc.Krb5Conf, "KRB5CCNAME=FILE:"+aliceCC)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"owner":"alice"`) {
		t.Errorf("curl --negotiate: %v %s", err, out)
	}
}

// TestWebKerberosAdmins: with hadoop.http.authentication.type=kerberos
// every endpoint of the NameNode negotiates, and the administrators-only
// ones (hadoop.security.authorization) judge the user SPNEGO proved, not
// user.name.
func TestWebKerberosAdmins(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	kdc := krbtest.Start(t)
	site := kdc.Secure(t, krbtest.Services{HTTP: true})
	alice := kdc.ClientFromKeytab("alice", kdc.AddPrincipal("alice"))
	hdfs := kdc.ClientFromKeytab("hdfs", kdc.AddPrincipal("hdfs"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: -1, Conf: append(site.Keys,
		conf.KeyValue{Key: conf.HadoopHTTPAuthenticationType, Value: "kerberos"},
		conf.KeyValue{Key: conf.HadoopSecurityAuthorization, Value: "true"},
	)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, port, _ := net.SplitHostPort(c.NameNode().HTTPAddr().String())
	base := "http://localhost:" + port
	get := func(hc interface {
		Do(*http.Request) (*http.Response, error)
	}, path string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	plain := &http.Client{Timeout: 20 * time.Second}
	if code, _ := get(plain, "/jmx"); code != http.StatusUnauthorized {
		t.Errorf("/jmx without a ticket: %d", code)
	}
	asAlice := gspnego.NewClient(alice, &http.Client{Timeout: 20 * time.Second}, "HTTP/localhost")
	asHDFS := gspnego.NewClient(hdfs, &http.Client{Timeout: 20 * time.Second}, "HTTP/localhost")
	if code, body := get(asAlice, "/jmx"); code != http.StatusOK {
		t.Errorf("/jmx as alice: %d %s", code, body)
	}
	for _, p := range []string{"/conf", "/conf?user.name=hdfs"} {
		if code, body := get(asAlice, p); code != http.StatusForbidden || !strings.Contains(body, "User alice is unauthorized") {
			t.Errorf("%s as alice: %d %s", p, code, body)
		}
	}
	if code, body := get(asHDFS, "/conf"); code != http.StatusOK {
		t.Errorf("/conf as hdfs: %d %s", code, body)
	}
}
