package namenode

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/security/dtoken"
)

// Delegation tokens (getDelegationToken, renewDelegationToken,
// cancelDelegationToken). The secret manager's state — master keys and
// live tokens — is namespace state: every change is an edit-log op
// (OP_UPDATE_MASTER_KEY, OP_GET/RENEW/CANCEL_DELEGATION_TOKEN) applied
// through the one apply path, so that it survives restarts and failovers
// and the standby holds the same tokens. A master key is made when a
// token is asked for and the current key is older than
// dfs.namenode.delegation.key.update-interval.

// classInvalidToken is Hadoop's class for a token that does not verify.
const classInvalidToken = "org.apache.hadoop.security.token.SecretManager$InvalidToken"

func registerDelegationCalls(c *clientRPC, s *ipc.Service) {
	handle(c.nn, s, "getDelegationToken", c.getDelegationToken)
	handle(c.nn, s, "renewDelegationToken", c.renewDelegationToken)
	handle(c.nn, s, "cancelDelegationToken", c.cancelDelegationToken)
}

// kerberosCaller returns the caller when it authenticated with Kerberos;
// delegation tokens are issued, renewed and cancelled only then, as in
// Hadoop.
func (c *clientRPC) kerberosCaller(ctx context.Context, what string) (ipc.Caller, error) {
	ci, _ := ipc.CallerFromContext(ctx)
	if wc, ok := ctx.Value(webCallerKey{}).(webCaller); ok {
		ci = ipc.Caller{User: wc.user, Principal: wc.principal, TokenAuth: wc.tokenAuth}
	}
	if c.nn.cfg.Kerberos == nil {
		return ci, remoteerr.New(remoteerr.ClassIOException,
			"Delegation Token can be %s only with kerberos or web authentication (hadoop.security.authentication is simple)", what)
	}
	if ci.Principal == "" || ci.TokenAuth {
		return ci, remoteerr.New(remoteerr.ClassIOException, "Delegation Token can be %s only with kerberos or web authentication", what)
	}
	return ci, nil
}

func (c *clientRPC) getDelegationToken(ctx context.Context, req *common.GetDelegationTokenRequestProto) (*common.GetDelegationTokenResponseProto, error) {
	if c.nn.cfg.Kerberos == nil {
		// Without security Hadoop runs no secret manager and answers no
		// token.
		return &common.GetDelegationTokenResponseProto{}, nil
	}
	ci, err := c.kerberosCaller(ctx, "issued")
	if err != nil {
		return nil, err
	}
	renewer := req.GetRenewer()
	if renewer != "" {
		if renewer, err = c.nn.cfg.Kerberos.Acceptor.Rules.ShortName(renewer, c.nn.cfg.Kerberos.Acceptor.DefaultRealm); err != nil {
			return nil, remoteerr.New(remoteerr.ClassIOException, "getDelegationToken: renewer %q: %v", req.GetRenewer(), err)
		}
	}
	cfg := c.nn.cfg
	interval, maxLife, renew := cfg.DelegationKeyUpdateInterval.Milliseconds(), cfg.DelegationTokenMaxLifetime.Milliseconds(),
		cfg.DelegationTokenRenewInterval.Milliseconds()
	secret := make([]byte, 64)
	rand.Read(secret)
	var id op.DelegationTokenID
	var keySecret []byte
	err = c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		var ops []op.Op
		k, ok := t.CurrentDelegationKey()
		// A key made at m expires at m + interval + maxLife; it signs new
		// tokens until m + interval.
		if !ok || now >= k.Expiry-maxLife {
			lastKey, _ := t.DelegationCounters()
			k = op.UpdateMasterKey{KeyID: lastKey + 1, Expiry: now + interval + maxLife, Secret: secret}
			ops = append(ops, &k)
		}
		_, seq := t.DelegationCounters()
		id = op.DelegationTokenID{Owner: ci.Principal, Renewer: renewer, IssueDate: now, MaxDate: now + maxLife,
			SequenceNumber: seq + 1, MasterKeyID: k.KeyID}
		keySecret = k.Secret
		return append(ops, &op.GetDelegationToken{ID: id, Expiry: min(now+renew, id.MaxDate)}), nil
	})
	if err != nil {
		return nil, toRemote(err)
	}
	ident := dtoken.Marshal(id)
	return &common.GetDelegationTokenResponseProto{Token: &common.TokenProto{Identifier: ident,
		Password: dtoken.Password(keySecret, ident), Kind: proto.String(dtoken.Kind),
		Service: proto.String(c.nn.addr.String())}}, nil
}

// tokenID decodes the identifier of a token a client sent.
func tokenID(tok *common.TokenProto) (op.DelegationTokenID, error) {
	if k := tok.GetKind(); k != dtoken.Kind {
		return op.DelegationTokenID{}, remoteerr.New(classInvalidToken, "token of kind %q is not a delegation token (%s)", k, dtoken.Kind)
	}
	id, err := dtoken.Unmarshal(tok.GetIdentifier())
	if err != nil {
		return id, remoteerr.New(classInvalidToken, "%v", err)
	}
	return id, nil
}

func (c *clientRPC) renewDelegationToken(ctx context.Context, req *common.RenewDelegationTokenRequestProto) (*common.RenewDelegationTokenResponseProto, error) {
	ci, err := c.kerberosCaller(ctx, "renewed")
	if err != nil {
		return nil, err
	}
	id, err := tokenID(req.GetToken())
	if err != nil {
		return nil, err
	}
	renew := c.nn.cfg.DelegationTokenRenewInterval.Milliseconds()
	var expiry int64
	err = c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		desc := dtoken.String(id)
		switch {
		case id.Renewer == "":
			return nil, remoteerr.AccessControl(fmt.Sprintf("%s tried to renew a token %s without a renewer", ci.User, desc))
		case id.Renewer != ci.User:
			return nil, remoteerr.AccessControl(fmt.Sprintf("%s tries to renew a token %s with non-matching renewer %s", ci.User, desc, id.Renewer))
		case id.MaxDate < now:
			return nil, remoteerr.New(classInvalidToken, "%s tried to renew an expired token %s max expiration date: %d currentTime: %d", ci.User, desc, id.MaxDate, now)
		}
		k, ok := t.DelegationKey(id.MasterKeyID)
		if !ok {
			return nil, remoteerr.New(classInvalidToken, "Unable to find master key for keyId=%d from cache. Failed to renew an unexpired token %s with sequenceNumber=%d",
				id.MasterKeyID, desc, id.SequenceNumber)
		}
		if !hmac.Equal(dtoken.Password(k.Secret, req.GetToken().GetIdentifier()), req.GetToken().GetPassword()) {
			return nil, remoteerr.AccessControl(fmt.Sprintf("%s is trying to renew a token %s with wrong password", ci.User, desc))
		}
		if _, ok := t.DelegationToken(id); !ok {
			return nil, remoteerr.New(classInvalidToken, "Renewal request for unknown token %s", desc)
		}
		expiry = min(now+renew, id.MaxDate)
		return []op.Op{&op.RenewDelegationToken{ID: id, Expiry: expiry}}, nil
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &common.RenewDelegationTokenResponseProto{NewExpiryTime: proto.Uint64(uint64(expiry))}, nil
}

func (c *clientRPC) cancelDelegationToken(ctx context.Context, req *common.CancelDelegationTokenRequestProto) (*common.CancelDelegationTokenResponseProto, error) {
	ci, err := c.kerberosCaller(ctx, "cancelled")
	if err != nil {
		return nil, err
	}
	id, err := tokenID(req.GetToken())
	if err != nil {
		return nil, err
	}
	err = c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		desc := dtoken.String(id)
		if _, ok := t.DelegationToken(id); !ok {
			return nil, remoteerr.New(classInvalidToken, "Token not found %s", desc)
		}
		if ci.Principal != id.Owner && (id.Renewer == "" || ci.User != id.Renewer) {
			return nil, remoteerr.AccessControl(fmt.Sprintf("%s is not authorized to cancel the token %s", ci.Principal, desc))
		}
		return []op.Op{&op.CancelDelegationToken{ID: id}}, nil
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &common.CancelDelegationTokenResponseProto{}, nil
}

// tokenPassword is the RPC server's TOKEN check: the password of a live
// delegation token (signed by a key still held, not cancelled, not
// expired) and its owner.
func (nn *NameNode) tokenPassword(ident []byte) ([]byte, string, error) {
	id, err := dtoken.Unmarshal(ident)
	if err != nil {
		return nil, "", err
	}
	now := nn.deps.Clock.Now().UnixMilli()
	var pw []byte
	nn.ns.read(func(t *namespace.Tree) {
		expiry, ok := t.DelegationToken(id)
		switch {
		case !ok:
			err = fmt.Errorf("token %s can't be found in cache", dtoken.String(id))
		case expiry < now:
			err = fmt.Errorf("token %s is expired, current time: %d expected renewal time: %d", dtoken.String(id), now, expiry)
		default:
			k, ok := t.DelegationKey(id.MasterKeyID)
			if !ok {
				err = fmt.Errorf("no master key %d for token %s", id.MasterKeyID, dtoken.String(id))
				return
			}
			pw = dtoken.Password(k.Secret, ident)
		}
	})
	if err != nil {
		return nil, "", err
	}
	return pw, id.Owner, nil
}
