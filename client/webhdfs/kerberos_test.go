package webhdfs_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client/webhdfs"
	"github.com/hdfsgo/hdfsgo/internal/security/krbtest"
)

// TestKerberosTokenRefetch: the client negotiates only for its delegation
// token, then sends the token; when the NameNode answers InvalidToken
// (cancelled, expired) it fetches a new token once and repeats the
// request. The NameNode here is a stand-in that checks the protocol's
// shape; the real one is in minicluster's TestWebHDFSKerberos.
func TestKerberosTokenRefetch(t *testing.T) {
	kdc := krbtest.Start(t)
	kdc.AddPrincipal("HTTP/localhost")
	alice := kdc.ClientFromKeytab("alice", kdc.AddPrincipal("alice"))
	var mu sync.Mutex
	var issued int
	var log []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		q := r.URL.Query()
		log = append(log, q.Get("op")+" "+q.Get("delegation"))
		switch {
		case q.Get("op") == "GETDELEGATIONTOKEN":
			if !strings.HasPrefix(r.Header.Get("Authorization"), "Negotiate ") {
				w.Header().Set("WWW-Authenticate", "Negotiate")
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			issued++
			fmt.Fprintf(w, `{"Token":{"urlString":"tok%d"}}`, issued)
		case q.Get("user.name") != "":
			http.Error(w, "user.name sent with Kerberos", http.StatusBadRequest)
		case q.Get("delegation") == "tok1":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"RemoteException":{"exception":"InvalidToken","javaClassName":"org.apache.hadoop.security.token.SecretManager$InvalidToken","message":"token (tok1) can't be found in cache"}}`)
		case q.Get("delegation") == "tok2":
			fmt.Fprint(w, `{"FileStatus":{"type":"DIRECTORY","pathSuffix":"","owner":"alice","group":"g","permission":"755"}}`)
		default:
			http.Error(w, "no credentials", http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	fsys, err := webhdfs.NewKerberos("webhdfs://localhost:"+port, alice, "HTTP/_HOST@"+krbtest.Realm)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := fsys.Stat(ctx, "/user/alice")
	if err != nil || !st.IsDir || st.Owner != "alice" {
		t.Fatalf("Stat: %+v %v", st, err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"GETDELEGATIONTOKEN ", "GETFILESTATUS tok1", "GETDELEGATIONTOKEN ", "GETFILESTATUS tok2"}
	if fmt.Sprint(log) != fmt.Sprint(want) {
		t.Errorf("requests %q, want %q", log, want)
	}
}
