package web

import "context"

type remoteUserKey struct{}

// WithRemoteUser returns ctx carrying the user the server's Auth wrapper
// authenticated (SPNEGO with Kerberos); RemoteUser then answers it
// instead of the request's user.name.
func WithRemoteUser(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, remoteUserKey{}, user)
}

// AuthenticatedUser returns the user WithRemoteUser left in ctx.
func AuthenticatedUser(ctx context.Context) (string, bool) {
	u, ok := ctx.Value(remoteUserKey{}).(string)
	return u, ok && u != ""
}
