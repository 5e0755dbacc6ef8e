package namenode

import (
	"context"
	"crypto/hmac"
	"net/http"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/security/dtoken"
	"github.com/hdfsgo/hdfsgo/internal/security/spnego"
	"github.com/hdfsgo/hdfsgo/internal/webhdfs"
)

// WebHDFS with Kerberos: a request is the user its SPNEGO exchange (or
// hadoop.auth cookie) proved, which the web server's filter left in the
// request's context, or the owner of the delegation token it carries
// (delegation=), checked here as the RPC server checks a TOKEN
// connection. user.name is ignored then, as in Hadoop.

// classSecurity is the exception of a request that did not authenticate
// (WebHDFS answers it 401).
const classSecurity = "java.lang.SecurityException"

// kerberosWebCaller returns who a WebHDFS request is with Kerberos on.
func (h *webHDFS) kerberosWebCaller(r *http.Request, req *webhdfs.Request, remote string) (webCaller, error) {
	if req.Delegation != "" {
		owner, err := h.checkDelegation(req.Delegation)
		if err != nil {
			return webCaller{}, err
		}
		acc := h.nn.cfg.Kerberos.Acceptor
		user, err := acc.Rules.ShortName(owner, acc.DefaultRealm)
		if err != nil {
			return webCaller{}, remoteerr.New(classInvalidToken, "delegation token of %s: %v", owner, err)
		}
		return webCaller{user: user, remote: remote, principal: owner, tokenAuth: true}, nil
	}
	if u, ok := spnego.UserFromContext(r.Context()); ok {
		return webCaller{user: u.Name, remote: remote, principal: u.Principal}, nil
	}
	return webCaller{}, remoteerr.New(classSecurity,
		"Authentication required: WebHDFS needs Kerberos SPNEGO or a delegation token (delegation=) when hadoop.security.authentication=kerberos")
}

// checkDelegation verifies a delegation token's URL string: a live token
// of this NameNode with the right password. It returns the token's owner.
func (h *webHDFS) checkDelegation(s string) (string, error) {
	tok, err := dtoken.DecodeURLString(s)
	if err != nil {
		return "", remoteerr.New(classInvalidToken, "%v", err)
	}
	if _, err := tokenID(tok); err != nil {
		return "", err
	}
	pw, owner, err := h.nn.tokenPassword(tok.GetIdentifier())
	if err != nil {
		return "", remoteerr.New(classInvalidToken, "%v", err)
	}
	if !hmac.Equal(pw, tok.GetPassword()) {
		return "", remoteerr.New(classInvalidToken, "delegation token of %s: wrong password", owner)
	}
	return owner, nil
}

// serveTokenOp answers GETDELEGATIONTOKEN, RENEWDELEGATIONTOKEN and
// CANCELDELEGATIONTOKEN; false for other ops.
func (h *webHDFS) serveTokenOp(ctx context.Context, w http.ResponseWriter, req *webhdfs.Request) (bool, error) {
	switch req.Op {
	case "GETDELEGATIONTOKEN":
		tok, err := h.issueToken(ctx, req.Renewer)
		if err != nil {
			return true, err
		}
		if tok == nil {
			// Without security there is no secret manager: no token.
			webhdfs.WriteJSON(w, http.StatusOK, map[string]any{"Token": nil})
			return true, nil
		}
		webhdfs.WriteJSON(w, http.StatusOK, map[string]any{"Token": map[string]string{"urlString": dtoken.EncodeURLString(tok)}})
	case "RENEWDELEGATIONTOKEN", "CANCELDELEGATIONTOKEN":
		if req.Token == "" {
			return true, remoteerr.New(remoteerr.ClassIllegalArgument, "%s: the token parameter is missing", req.Op)
		}
		tok, err := dtoken.DecodeURLString(req.Token)
		if err != nil {
			return true, remoteerr.New(classInvalidToken, "%v", err)
		}
		if req.Op == "RENEWDELEGATIONTOKEN" {
			resp, err := webCall(ctx, h, "renewDelegationToken", h.c.renewDelegationToken, &common.RenewDelegationTokenRequestProto{Token: tok})
			if err != nil {
				return true, err
			}
			webhdfs.WriteJSON(w, http.StatusOK, map[string]int64{"long": int64(resp.GetNewExpiryTime())})
			return true, nil
		}
		if _, err := webCall(ctx, h, "cancelDelegationToken", h.c.cancelDelegationToken, &common.CancelDelegationTokenRequestProto{Token: tok}); err != nil {
			return true, err
		}
		webhdfs.Empty(w)
	default:
		return false, nil
	}
	return true, nil
}

// issueToken gets a delegation token for the request's caller (nil
// without Kerberos).
func (h *webHDFS) issueToken(ctx context.Context, renewer string) (*common.TokenProto, error) {
	resp, err := webCall(ctx, h, "getDelegationToken", h.c.getDelegationToken, &common.GetDelegationTokenRequestProto{Renewer: proto.String(renewer)})
	if err != nil {
		return nil, err
	}
	return resp.Token, nil
}

// redirectDelegation is the delegation= a redirect to a DataNode carries
// with Kerberos: the request's own, else a token issued for the caller
// (renewed by them), as Hadoop's NameNode does.
func (h *webHDFS) redirectDelegation(ctx context.Context, req *webhdfs.Request) (string, error) {
	if h.nn.cfg.Kerberos == nil {
		return "", nil
	}
	if req.Delegation != "" {
		return req.Delegation, nil
	}
	tok, err := h.issueToken(ctx, callerUser(ctx))
	if err != nil {
		return "", err
	}
	return dtoken.EncodeURLString(tok), nil
}

// httpAuth is the web server's authentication wrapper: the SPNEGO filter,
// or nothing without Kerberos.
func httpAuth(f *spnego.Filter) func(http.Handler) http.Handler {
	if f == nil {
		return nil
	}
	return f.Wrap
}
