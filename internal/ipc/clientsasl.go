package ipc

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc/wire"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// ErrNoCommonProtection: the server offers no protection level the client
// accepts (hadoop.rpc.protection differs).
var ErrNoCommonProtection = errors.New("No common protection layer between client and server")

// kerberosHandshake sends the SASL preamble and runs the GSSAPI exchange
// on a fresh connection: NEGOTIATE, INITIATE with the AP-REQ, the
// server's security-layer CHALLENGE answered with the chosen level, then
// SUCCESS. It leaves cc wrapping when integrity or privacy was chosen.
func (c *Client) kerberosHandshake(ctx context.Context, cc *clientConn) error {
	defer cc.nc.SetDeadline(time.Time{})
	krb, send, err := c.saslNegotiate(ctx, cc, "KERBEROS")
	if err != nil {
		return err
	}
	if krb == nil {
		return fmt.Errorf("ipc: %s does not offer Kerberos authentication (is hadoop.security.authentication=kerberos set on the server?)", cc.addr)
	}
	host, _, _ := net.SplitHostPort(cc.addr)
	tok, sess, err := c.cfg.Kerberos.Start(host)
	if err != nil {
		return fmt.Errorf("ipc: Kerberos authentication to %s: %w", cc.addr, err)
	}
	if err := send(&common.RpcSaslProto{State: common.RpcSaslProto_INITIATE.Enum(), Token: tok,
		Auths: []*common.RpcSaslProto_SaslAuth{krb}}); err != nil {
		return fmt.Errorf("%w: %v", ErrConnBroken, err)
	}
	ch, err := readSasl(cc, common.RpcSaslProto_CHALLENGE)
	if err != nil {
		return err
	}
	layers, _, err := sess.Unwrap(ch.GetToken())
	if err != nil || len(layers) < 4 {
		return fmt.Errorf("ipc: %s: bad GSSAPI security-layer challenge: %v", cc.addr, err)
	}
	accept := c.cfg.Protection
	if accept == 0 {
		accept = security.QOPAuthentication | security.QOPIntegrity | security.QOPPrivacy
	}
	q := (security.QOP(layers[0]) & accept).Highest()
	if q == 0 {
		return fmt.Errorf("ipc: %s: %w (server offers %v, client accepts %v)", cc.addr, ErrNoCommonProtection,
			security.QOP(layers[0]), accept)
	}
	answer, err := sess.Wrap(security.SecurityLayer(q, 0xFFFFFF), false)
	if err != nil {
		return err
	}
	if err := send(&common.RpcSaslProto{State: common.RpcSaslProto_RESPONSE.Enum(), Token: answer}); err != nil {
		return fmt.Errorf("%w: %v", ErrConnBroken, err)
	}
	if _, err := readSasl(cc, common.RpcSaslProto_SUCCESS); err != nil {
		return err
	}
	if q != security.QOPAuthentication {
		cc.wrap, cc.seal, cc.clientID = sess, q == security.QOPPrivacy, c.cfg.ClientID
	}
	return nil
}

// tokenHandshake authenticates a fresh connection with the delegation
// token: NEGOTIATE, the server's DIGEST-MD5 challenge (in its TOKEN
// method), INITIATE with the digest response, SUCCESS with the server's
// rspauth, which proves it knows the token's password.
func (c *Client) tokenHandshake(ctx context.Context, cc *clientConn) error {
	defer cc.nc.SetDeadline(time.Time{})
	tok, send, err := c.saslNegotiate(ctx, cc, "TOKEN")
	if err != nil {
		return err
	}
	if tok == nil {
		return fmt.Errorf("ipc: %s does not offer token authentication (is hadoop.security.authentication=kerberos set on the server?)", cc.addr)
	}
	user := base64.StdEncoding.EncodeToString(c.cfg.Token.GetIdentifier())
	pass := base64.StdEncoding.EncodeToString(c.cfg.Token.GetPassword())
	resp, check, err := security.DigestResponse(tok.GetChallenge(), user, pass)
	if err != nil {
		return fmt.Errorf("ipc: token authentication to %s: %w", cc.addr, err)
	}
	if err := send(&common.RpcSaslProto{State: common.RpcSaslProto_INITIATE.Enum(), Token: resp,
		Auths: []*common.RpcSaslProto_SaslAuth{tok}}); err != nil {
		return fmt.Errorf("%w: %v", ErrConnBroken, err)
	}
	done, err := readSasl(cc, common.RpcSaslProto_SUCCESS)
	if err != nil {
		return err
	}
	if err := check(done.GetToken()); err != nil {
		return fmt.Errorf("ipc: %s: %w", cc.addr, err)
	}
	return nil
}

// saslNegotiate starts a SASL handshake on a fresh connection: it sets
// the handshake's deadline (the caller clears it), sends the preamble and
// NEGOTIATE, and returns the server's offer of method (nil if it makes
// none) and the sender of the exchange's next messages.
func (c *Client) saslNegotiate(ctx context.Context, cc *clientConn, method string) (*common.RpcSaslProto_SaslAuth, func(*common.RpcSaslProto) error, error) {
	if dl, ok := ctx.Deadline(); ok {
		cc.nc.SetDeadline(dl)
	} else {
		cc.nc.SetDeadline(time.Now().Add(c.cfg.DialTimeout))
	}
	p := wire.ClientPreamble()
	p.AuthProtocol = wire.AuthSASL
	out := p.Append(nil)
	send := func(m *common.RpcSaslProto) error {
		b, err := wire.AppendRequest(out, wire.RequestHeader(wire.CallIDSASL, c.cfg.ClientID, -1), nil, m)
		out = nil
		if err != nil {
			return err
		}
		_, err = cc.nc.Write(b)
		return err
	}
	if err := send(&common.RpcSaslProto{State: common.RpcSaslProto_NEGOTIATE.Enum()}); err != nil {
		return nil, nil, &dialError{cc.addr, err}
	}
	neg, err := readSasl(cc, common.RpcSaslProto_NEGOTIATE)
	if err != nil {
		return nil, nil, err
	}
	for _, a := range neg.GetAuths() {
		if a.GetMethod() == method {
			return a, send, nil
		}
	}
	return nil, send, nil
}

// readSasl reads one SASL answer in the given state.
func readSasl(cc *clientConn, want common.RpcSaslProto_SaslState) (*common.RpcSaslProto, error) {
	frame, err := wire.ReadFrame(cc.br, wire.DefaultMaxDataLength, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: SASL: read: %v", ErrConnBroken, err)
	}
	resp, err := wire.DecodeResponse(frame)
	if err != nil {
		return nil, fmt.Errorf("%w: SASL: %v", ErrProtocol, err)
	}
	if resp.Header.GetStatus() != common.RpcResponseHeaderProto_SUCCESS {
		return nil, remoteerr.FromRemote(resp.Header.GetExceptionClassName(), resp.Header.GetErrorMsg())
	}
	var m common.RpcSaslProto
	if err := proto.Unmarshal(resp.Body, &m); err != nil {
		return nil, fmt.Errorf("%w: SASL: %v", ErrProtocol, err)
	}
	if m.GetState() != want {
		return nil, fmt.Errorf("%w: SASL: got %v, want %v", ErrProtocol, m.GetState(), want)
	}
	return &m, nil
}

// wrapFrames protects request frames as one SASL WRAP message.
func (cc *clientConn) wrapFrames(frames, clientID []byte) ([]byte, error) {
	tok, err := cc.wrap.Wrap(frames, cc.seal)
	if err != nil {
		return nil, err
	}
	// Callers take turns (the connection set-up, then one flusher at a
	// time), so the cached header needs no lock of its own.
	if cc.saslHeader == nil {
		if cc.saslHeader, err = proto.Marshal(wire.RequestHeader(wire.CallIDSASL, clientID, -1)); err != nil {
			return nil, err
		}
	}
	return wire.AppendSASLWrapFrame(make([]byte, 0, len(tok)+len(cc.saslHeader)+16), cc.saslHeader, tok), nil
}

// unwrapFrame returns the protected bytes of a SASL WRAP response, or
// wrapped=false for any other frame.
func (cc *clientConn) unwrapFrame(frame []byte) (msg []byte, wrapped bool, err error) {
	resp, err := wire.DecodeResponse(frame)
	if err != nil {
		return nil, false, err
	}
	if int32(resp.Header.GetCallId()) != wire.CallIDSASL || resp.Header.GetStatus() != common.RpcResponseHeaderProto_SUCCESS {
		return nil, false, nil
	}
	var m common.RpcSaslProto
	if err := proto.Unmarshal(resp.Body, &m); err != nil {
		return nil, false, fmt.Errorf("SASL: %v", err)
	}
	if m.GetState() != common.RpcSaslProto_WRAP {
		return nil, false, fmt.Errorf("SASL: unexpected %v", m.GetState())
	}
	msg, sealed, err := cc.wrap.Unwrap(m.GetToken())
	if err != nil {
		return nil, false, err
	}
	if sealed != cc.seal {
		return nil, false, errors.New("SASL: response protected at another level than agreed")
	}
	return msg, true, nil
}
