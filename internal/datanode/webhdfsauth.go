package datanode

import (
	"net/http"

	hdfsclient "github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/security/dtoken"
	"github.com/hdfsgo/hdfsgo/internal/security/spnego"
	"github.com/hdfsgo/hdfsgo/internal/webhdfs"
)

// httpAuth is the web server's authentication wrapper: the SPNEGO filter,
// or nothing without Kerberos.
func httpAuth(f *spnego.Filter) func(http.Handler) http.Handler {
	if f == nil {
		return nil
	}
	return f.Wrap
}

// delegationOf is the delegation token a WebHDFS request to a DataNode
// must carry with Kerberos.
func delegationOf(req *webhdfs.Request) (*hdfsclient.Token, error) {
	if req.Delegation == "" {
		return nil, remoteerr.New("java.lang.SecurityException",
			"a DataNode's WebHDFS needs a delegation token (parameter delegation) when hadoop.security.authentication=kerberos; start at the NameNode's /webhdfs/v1, whose redirect carries one")
	}
	t, err := dtoken.DecodeURLString(req.Delegation)
	if err != nil {
		return nil, remoteerr.New(classInvalidToken, "%v", err)
	}
	return &hdfsclient.Token{Identifier: t.GetIdentifier(), Password: t.GetPassword(), Kind: t.GetKind(), Service: t.GetService()}, nil
}
