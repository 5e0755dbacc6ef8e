package conf

// Keys of HTTP authentication (SPNEGO on the web endpoints and WebHDFS)
// and of the Kerberos identities of the balancer.
const (
	// DFSWebAuthenticationKerberosPrincipal is the HTTP service principal
	// WebHDFS and, with hadoop.http.authentication.type=kerberos, every
	// web endpoint accept SPNEGO tickets for (HTTP/_HOST@REALM).
	DFSWebAuthenticationKerberosPrincipal = "dfs.web.authentication.kerberos.principal" // unset
	// DFSWebAuthenticationKerberosKeytab holds that principal's key; unset:
	// the role's own keytab (dfs.namenode.keytab.file, …).
	DFSWebAuthenticationKerberosKeytab = "dfs.web.authentication.kerberos.keytab" // unset
	// HadoopHTTPAuthenticationType is simple or kerberos: whether the
	// web endpoints other than WebHDFS require SPNEGO too.
	HadoopHTTPAuthenticationType = "hadoop.http.authentication.type" // simple
	// HadoopHTTPAuthenticationKerberosPrincipal and ...Keytab are read
	// when the dfs.web keys are unset.
	HadoopHTTPAuthenticationKerberosPrincipal = "hadoop.http.authentication.kerberos.principal" // unset
	HadoopHTTPAuthenticationKerberosKeytab    = "hadoop.http.authentication.kerberos.keytab"    // unset
	// HadoopHTTPAuthenticationTokenValidity is how long a hadoop.auth
	// cookie stays valid.
	HadoopHTTPAuthenticationTokenValidity = "hadoop.http.authentication.token.validity" // 36000 s
	// HadoopHTTPAuthenticationSignatureSecretFile holds the secret that
	// signs hadoop.auth cookies; unset: a random secret per process.
	HadoopHTTPAuthenticationSignatureSecretFile = "hadoop.http.authentication.signature.secret.file" // unset
	// HadoopHTTPAuthenticationCookieDomain is the cookie's Domain; unset:
	// none (the host that set it).
	HadoopHTTPAuthenticationCookieDomain = "hadoop.http.authentication.cookie.domain" // unset

	// DFSBalancerKerberosPrincipal and DFSBalancerKeytabFile are the
	// balancer's identity with Kerberos.
	// They are used when DFSBalancerKeytabEnabled is true; else the
	// balancer uses the ticket cache of whoever runs it.
	DFSBalancerKerberosPrincipal = "dfs.balancer.kerberos.principal" // unset
	DFSBalancerKeytabFile        = "dfs.balancer.keytab.file"        // unset
	DFSBalancerKeytabEnabled     = "dfs.balancer.keytab.enabled"     // false
)

func spnegoTable() []keyDef {
	return []keyDef{
		{HadoopHTTPAuthenticationType, "simple", 0},
		{HadoopHTTPAuthenticationTokenValidity, "36000", sec},
		{DFSBalancerKeytabEnabled, "false", 0},
	}
}
