package spnego

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// Filter decides which requests of a daemon's web server must
// authenticate, and authenticates them.
type Filter struct {
	Auth *Authenticator
	// All is hadoop.http.authentication.type=kerberos: every endpoint
	// needs SPNEGO, not only WebHDFS.
	All bool
	// WebHDFS makes /webhdfs/v1 requests without delegation= need SPNEGO
	// (the NameNode); false leaves them to the WebHDFS handler (the
	// DataNode's, which takes delegation tokens only).
	WebHDFS bool
	// Missing, when Auth is nil, says why: requests that need SPNEGO are
	// answered 401 with it.
	Missing string
	// Exempt are path prefixes All leaves open: the daemons' own HTTP
	// transfers (the checkpoint image servlet), whose clients do not
	// negotiate.
	Exempt []string
}

// Wrap returns next behind the filter. A nil Filter lets every request
// through.
func (f *Filter) Wrap(next http.Handler) http.Handler {
	if f == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		need := f.All
		p := r.URL.Path
		for _, e := range f.Exempt {
			if p == e || strings.HasPrefix(p, e+"/") {
				need = false
			}
		}
		if p == "/webhdfs/v1" || strings.HasPrefix(p, "/webhdfs/v1/") {
			need = f.WebHDFS && !HasDelegation(r.URL.RawQuery)
		}
		if !need {
			next.ServeHTTP(w, r)
			return
		}
		if f.Auth == nil {
			unauthorized(w, f.Missing)
			return
		}
		u, ok := f.Auth.Authenticate(w, r)
		if !ok {
			return
		}
		ctx := web.WithRemoteUser(WithUser(r.Context(), u), u.Name)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// HasDelegation reports whether a query carries a delegation parameter
// (the name matched without regard to case, as WebHDFS does).
func HasDelegation(rawQuery string) bool {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return false
	}
	for k, v := range q {
		if strings.EqualFold(k, "delegation") && len(v) > 0 && v[0] != "" {
			return true
		}
	}
	return false
}

// FromConf builds the filter of a daemon whose Kerberos identity is id
// (nil: Kerberos is off, and so is the filter). roleKeytabKey is the
// role's keytab key, used when dfs.web.authentication.kerberos.keytab is
// unset; host replaces _HOST. webHDFS is Filter.WebHDFS.
func FromConf(c *conf.Conf, id *security.Identity, roleKeytabKey, host string, webHDFS bool) (*Filter, error) {
	if id == nil {
		return nil, nil
	}
	typ := strings.ToLower(strings.TrimSpace(c.String(conf.HadoopHTTPAuthenticationType)))
	if typ != "simple" && typ != "kerberos" {
		return nil, fmt.Errorf("%s: unknown type %q (want simple or kerberos; from %s)",
			conf.HadoopHTTPAuthenticationType, typ, c.Source(conf.HadoopHTTPAuthenticationType))
	}
	if typ == "simple" && !webHDFS {
		return nil, nil // nothing on this server needs SPNEGO
	}
	principalKey := conf.DFSWebAuthenticationKerberosPrincipal
	principal := c.String(principalKey)
	if principal == "" {
		principalKey = conf.HadoopHTTPAuthenticationKerberosPrincipal
		principal = c.String(principalKey)
	}
	if principal == "" {
		// No HTTP principal: the daemon still starts (its RPC does not
		// need one) and every request that needs SPNEGO is refused
		// saying why; delegation tokens still work.
		return &Filter{All: typ == "kerberos", WebHDFS: webHDFS, Missing: fmt.Sprintf(
			"SPNEGO is not configured on this server: %s is not set (the HTTP principal, HTTP/_HOST@REALM, and %s its keytab)",
			conf.DFSWebAuthenticationKerberosPrincipal, conf.DFSWebAuthenticationKerberosKeytab)}, nil
	}
	ktKey := conf.DFSWebAuthenticationKerberosKeytab
	ktPath := c.String(ktKey)
	if ktPath == "" {
		ktKey = conf.HadoopHTTPAuthenticationKerberosKeytab
		ktPath = c.String(ktKey)
	}
	if ktPath == "" {
		ktKey = roleKeytabKey
		ktPath = c.String(ktKey)
	}
	kt, err := keytab.Load(ktPath)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %v", ktKey, ktPath, err)
	}
	if err := hasPrincipal(kt, security.ReplaceHost(principal, host), id.Acceptor.DefaultRealm); err != nil {
		return nil, fmt.Errorf("%s=%s: %v (%s=%s)", ktKey, ktPath, err, principalKey, principal)
	}
	validity, err := c.Duration(conf.HadoopHTTPAuthenticationTokenValidity)
	if err != nil {
		return nil, err
	}
	if validity <= 0 {
		return nil, fmt.Errorf("%s: must be positive (from %s)", conf.HadoopHTTPAuthenticationTokenValidity,
			c.Source(conf.HadoopHTTPAuthenticationTokenValidity))
	}
	var secret []byte
	if p := c.String(conf.HadoopHTTPAuthenticationSignatureSecretFile); p != "" {
		if secret, err = os.ReadFile(p); err != nil {
			return nil, fmt.Errorf("%s: %v", conf.HadoopHTTPAuthenticationSignatureSecretFile, err)
		}
		if len(secret) == 0 {
			return nil, fmt.Errorf("%s: %s is empty", conf.HadoopHTTPAuthenticationSignatureSecretFile, p)
		}
	} else {
		secret = make([]byte, 32)
		rand.Read(secret)
	}
	signer, err := NewSigner(secret)
	if err != nil {
		return nil, err
	}
	acc := &security.Acceptor{Keytab: kt, KeytabPath: ktPath, Principal: principal, Rules: id.Acceptor.Rules,
		DefaultRealm: id.Acceptor.DefaultRealm, Protection: security.QOPAuthentication}
	return &Filter{
		Auth: &Authenticator{Acceptor: acc, Signer: signer, Validity: validity,
			CookieDomain: c.String(conf.HadoopHTTPAuthenticationCookieDomain)},
		All:     typ == "kerberos",
		WebHDFS: webHDFS,
	}, nil
}

// hasPrincipal checks that the keytab holds a key of the principal (any
// instance when it is _HOST).
func hasPrincipal(kt *keytab.Keytab, principal, defaultRealm string) error {
	want, err := security.ParsePrincipal(principal)
	if err != nil {
		return err
	}
	if want.Realm == "" {
		want.Realm = defaultRealm
	}
	for _, e := range kt.Entries {
		comps := e.Principal.Components
		if len(comps) == 0 || comps[0] != want.Primary || (want.Realm != "" && e.Principal.Realm != want.Realm) {
			continue
		}
		inst := ""
		if len(comps) > 1 {
			inst = comps[1]
		}
		if want.Instance == "_HOST" || inst == want.Instance {
			return nil
		}
	}
	return fmt.Errorf("no key of %s in the keytab", principal)
}
