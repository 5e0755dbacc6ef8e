// Package spnego authenticates HTTP requests with Kerberos, as Hadoop's
// AuthenticationFilter does with its Kerberos handler: SPNEGO
// (RFC 4559, "Authorization: Negotiate <base64>") verified against the
// HTTP service's keytab (dfs.web.authentication.kerberos.principal,
// HTTP/_HOST@REALM), then a signed hadoop.auth cookie so that a browser or
// curl session authenticates once.
//
// Callers: the NameNode and the DataNode put a Filter around their web
// server (web.Config.Auth); handlers read the authenticated user with
// UserFromContext (the WebHDFS caller, and whoever decides what a user may
// see). The webhdfs:// client does the other side. An Authenticator and a
// Filter are safe for concurrent use.
//
// # The exchange
//
//	GET /webhdfs/v1/?op=LISTSTATUS
//	  <- 401 Unauthorized, WWW-Authenticate: Negotiate
//	GET /webhdfs/v1/?op=LISTSTATUS, Authorization: Negotiate <SPNEGO NegTokenInit around a Kerberos AP-REQ>
//	  <- 200, WWW-Authenticate: Negotiate <NegTokenResp accept-completed [AP-REP when the client asked for mutual authentication]>
//	     Set-Cookie: hadoop.auth="u=alice&p=alice@REALM&t=kerberos&e=1700000000000&s=SIG"; Path=/; Expires=...; HttpOnly
//	GET /webhdfs/v1/?op=..., Cookie: hadoop.auth="..."
//	  <- 200 (no new Kerberos exchange until e)
//
// # The hadoop.auth cookie
//
//	u=SHORTNAME&p=PRINCIPAL&t=kerberos&e=EXPIRY_MS&s=SIGNATURE
//
// u is the user the principal maps to by hadoop.security.auth_to_local, e
// the expiry in milliseconds since 1970 (now +
// hadoop.http.authentication.token.validity), and SIGNATURE the standard
// base64 of HMAC-SHA256 over everything before "&s=", keyed with the
// secret of hadoop.http.authentication.signature.secret.file (a random
// per-process secret when unset, as Hadoop's default provider). A cookie
// whose signature, type or expiry does not check is ignored: the request
// must then negotiate again (401).
//
// # Which requests need it
//
// With hadoop.security.authentication=kerberos, /webhdfs/v1 needs SPNEGO
// unless the request carries delegation=TOKEN, which the WebHDFS handler
// verifies itself (the DataNode's WebHDFS takes only that, as in Hadoop).
// With hadoop.http.authentication.type=kerberos every other endpoint needs
// it too; with simple (the default) they stay open.
package spnego
